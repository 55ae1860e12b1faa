"""MV24: Min & Vidal (ICML 2024), conjecture on pReLU networks with small initialization (cited in seed 001)."""
from __future__ import annotations

import sympy as sp

from ..claim import Bound, Claim, Hypothesis
from ._common import SEED_LI_CSML, S, integer

p = S("p")

CLAIMS = [
    Claim(
        id="MV24.conj", title="GD on bias-free pReLU networks: averaging for p = 1, per-cluster for p >= 3",
        paper="Min & Vidal 2024 (ICML 2024)", seeds=(SEED_LI_CSML,), status="unverified", kind="conjecture",
        variables=(integer("p", "exponent of the pReLU activation", low=1), integer("k", "number of clusters", low=2)),
        readings=("p_eq_1", "p_ge_3"),
        hypotheses=(Hypothesis("H1", None, "bias-free pReLU network, small initialization"),),
        bounds=(
            Bound("num_effective_neurons", "->", sp.Integer(2), reading="p_eq_1",
                  note="F(x) = sqrt(K1) ReLU(<mu_bar_+, x>) - sqrt(K2) ReLU(<mu_bar_-, x>)", unverified=True),
            Bound("num_effective_neurons", "->", S("k"), reading="p_ge_3", note="the per-cluster network", unverified=True),
        ),
        note="Cited second-hand in seed 001; THEORY.md gives no status, so it is flagged unverified. LPLL25 resolves p = 1.",
    ),
]
