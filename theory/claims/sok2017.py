"""SOK17: the Lipschitz certificate of the robustness radius (seed 001)."""
from __future__ import annotations

from ..claim import Bound, Claim, Hypothesis
from ._common import SEED_LI_CSML, S, real

CLAIMS = [
    Claim(
        id="SOK17.lemma.lipschitz_radius", title="Certified radius: margin over Lipschitz constant",
        paper="SOK17 (cited in seed 001)", seeds=(SEED_LI_CSML,), status="exact", kind="lemma",
        variables=(real("q", "margin y f(z) at the point", low=0, low_open=True, tends_to="const"),
                   real("beta", "Lipschitz constant of q in x", low=0, low_open=True, tends_to="const")),
        hypotheses=(Hypothesis("H1", None, "q is beta-Lipschitz in x"),),
        bounds=(Bound("robust_radius", ">=", S("q") / S("beta"), note="R(z) >= q(z)/beta: the certified lower bound"),),
    ),
]
