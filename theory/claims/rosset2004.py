"""R04: Rosset, Zhu, Hastie (2004), the regularization path of the logistic loss."""
from __future__ import annotations

import sympy as sp

from ..claim import Bound, Claim, Hypothesis
from ._common import SEED_LI_CSML, SEED_LI_ITCS, real

CLAIMS = [
    Claim(
        id="R04.thm.reg_path", title="The L2-regularized logistic minimizer approaches the SVM direction as lambda -> 0",
        paper="Rosset, Zhu, Hastie 2004 (JMLR)", seeds=(SEED_LI_ITCS, SEED_LI_CSML), status="exact", kind="theorem",
        variables=(real("lam", "L2 regularization strength", low=0, low_open=True, tends_to="0"),),
        hypotheses=(Hypothesis("H1", None, "the data are linearly separable"),),
        bounds=(Bound("direction_error", "->", sp.Integer(0), note="as lam -> 0"),),
    ),
]
