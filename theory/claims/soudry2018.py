"""SHNGS18: Soudry, Hoffer, Nacson, Gunasekar, Srebro (2018), "The implicit bias of gradient
descent on separable data". Rates are second-hand (seeds 000/001)."""
from __future__ import annotations

from ..claim import Bound, Claim, Hypothesis
from ._common import SEED_LI_CSML, SEED_LI_ITCS, S, log, real

PAPER = "Soudry, Hoffer, Nacson, Gunasekar, Srebro 2018 (JMLR)"
t = S("t")
t_var = real("t", "GD iteration", low=1, low_open=True)

CLAIMS = [
    Claim(
        id="SHNGS18.thm.direction", title="Logistic regression by GD converges to the hard-margin SVM direction",
        paper=PAPER, seeds=(SEED_LI_ITCS, SEED_LI_CSML), status="exact", kind="theorem",
        variables=(t_var,),
        readings=("almost_every_dataset", "every_dataset"),
        hypotheses=(
            Hypothesis("H1", None, "the data are linearly separable"),
            Hypothesis("H2", None, "logistic loss, GD with a small enough constant step"),
        ),
        bounds=(
            Bound("direction_error", "O", 1 / log(t), reading="almost_every_dataset"),
            Bound("direction_error", "O", log(log(t)) / log(t), reading="every_dataset"),
            Bound("residual_norm", "O", log(log(t)), note="w(t) = w_svm log t + r(t)"),
            Bound("train_loss", "O", 1 / t),
            Bound("param_norm", "Theta", log(t)),
        ),
        note="Exact form, second-hand rates. w_svm: min ||w||^2 s.t. y_i <w, x_i> >= 1.",
    ),
]
