"""BCGT21: Bubeck, Cherapanamjeri, Gidel, Tachet des Combes (2021), "A single gradient step
finds adversarial examples on random two-layers neural networks", NeurIPS 2021. Seed 003."""
from __future__ import annotations

import sympy as sp

from .. import variables as V
from ..claim import Bound, Claim, Hypothesis
from ._common import SEED_WEINBERGER, S, log, sqrt

PAPER = "Bubeck, Cherapanamjeri, Gidel, Tachet des Combes 2021 (NeurIPS 2021, arXiv 2104.03863)"
d, k, gamma = S("d"), S("k"), S("gamma")
C1, C2, C3, C4 = (S(x) for x in ("C1", "C2", "C3", "C4"))

k_width = V.Variable("k", "width of the random network", integer=True, low=1)

CLAIMS = [
    Claim(
        id="BCGT21.def.net", title="Random two-layer network f(x) = k^(-1/2) sum_l a_l sigma(<w_l, x>)",
        paper=PAPER, seeds=(SEED_WEINBERGER,), status="exact", kind="definition",
        variables=(V.d, k_width),
        definitions=(("init_weight_std", 1 / sqrt(d)), ("output_scale", 1 / sqrt(k)), ("input_norm", sqrt(d))),
    ),
    Claim(
        id="BCGT21.thm.one_step", title="One gradient step flips the sign of a random network",
        paper=PAPER, seeds=(SEED_WEINBERGER,), status="exact", kind="theorem",
        variables=(V.d, k_width, V.gamma),
        constants=("C1", "C2", "C3", "C4"),
        hypotheses=(
            Hypothesis("H1", sp.GreaterThan(k, C1 * log(1 / gamma) ** 3), "k >= C1 log^3(1/gamma)"),
            Hypothesis("H2", sp.GreaterThan(d, C2 * log(k / gamma) * log(1 / gamma)), "d >= C2 log(k/gamma) log(1/gamma)"),
            Hypothesis("H3", None, "sigma non-constant, Lipschitz, with a Lipschitz derivative (also holds for ReLU)"),
        ),
        bounds=(
            Bound("flip_norm", "<=", C4 * sqrt(log(1 / gamma)), probability=1 - gamma,
                  note="||eta grad f(x)|| with |eta| = C3 sqrt(log(1/gamma)) / ||grad f(x)||^2, sign(eta) = -sign f(x)"),
            Bound("flip_probability", ">=", 1 - gamma),
        ),
        uses=("BCGT21.def.net",),
        note="Exact up to C1..C4, which depend only on the activation.",
    ),
    Claim(
        id="BCGT21.facts", title="|f(x)| = Theta(1) and ||grad f(x)|| = Omega(1)",
        paper=PAPER, seeds=(SEED_WEINBERGER,), status="order", kind="lemma",
        variables=(V.d, k_width),
        bounds=(Bound("output_abs", "Theta", sp.Integer(1)), Bound("grad_norm", "Omega", sp.Integer(1))),
        uses=("BCGT21.def.net",),
    ),
    Claim(
        id="BCGT21.exp", title="Empirically the flipping |eta| is about 1 (searched within |eta| <= 20)",
        paper=PAPER, seeds=(SEED_WEINBERGER,), status="order", kind="experiment",
        variables=(V.d, k_width),
        constants=("C",),
        bounds=(Bound("flip_norm", "Theta", S("C"), note="must not grow with d or k: exponents 0 and 0"),),
        uses=("BCGT21.thm.one_step",),
        reference=(("flip_eta", "about 1, searched within |eta| <= 20"),),
    ),
]
