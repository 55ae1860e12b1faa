"""VYS22: Vardi, Yehudai, Shamir (2022), "Gradient methods provably converge to non-robust
networks", NeurIPS 2022, arXiv 2202.04347. Source: seed 003."""
from __future__ import annotations

import sympy as sp

from .. import variables as V
from ..claim import Bound, Claim, Hypothesis
from ._common import SEED_WEINBERGER, S, log, real, sqrt

PAPER = "Vardi, Yehudai, Shamir 2022 (NeurIPS 2022, arXiv 2202.04347)"
d, n, c, C = S("d"), S("n"), S("c"), S("C")
max_ip, cp = S("max_ip"), S("cp")

max_ip_var = real("max_ip", "max_{i != j} |<x_i, x_j>| over the training points", low=0, tends_to="const")
c_var = real("c", "smaller class fraction of the samples", low=0, high=0.5, low_open=True, tends_to="const")
cp_var = real("cp", "c' in (0, 1): |<x_i, x_j>| <= c' d", low=0, high=1, low_open=True, high_open=True, tends_to="const")
n_var = V.Variable("n", "number of training samples", integer=True, low=2)

CLAIMS = [
    Claim(
        id="VYS22.def.setting", title="Two-layer ReLU with hidden biases on points of the sphere of radius sqrt(d)",
        paper=PAPER, seeds=(SEED_WEINBERGER,), status="exact", kind="definition",
        variables=(V.d, n_var, c_var),
        definitions=(("input_norm", sqrt(d)), ("homogeneity_degree", sp.Integer(2))),
        note="f(x) = sum_l a_l ReLU(<w_l, x> + b_l), all trained; exponential or logistic loss, summed.",
    ),
    Claim(
        id="VYS22.thm.robust_exists", title="A network robust to Omega(sqrt(d)) exists on nearly orthogonal data",
        paper=PAPER, seeds=(SEED_WEINBERGER,), status="order", kind="theorem",
        variables=(V.d, n_var, max_ip_var, cp_var),
        constants=("C",),
        hypotheses=(Hypothesis("H1", sp.LessThan(max_ip, cp * d), "|<x_i, x_j>| <= c' d for all i != j"),),
        bounds=(Bound("robust_radius", "Omega", sqrt(d)),),
        uses=("VYS22.def.setting", "SOK17.lemma.lipschitz_radius"),
    ),
    Claim(
        id="VYS22.thm.main", title="Every KKT point has a universal flipping perturbation eta * sum_i y_i x_i",
        paper=PAPER, seeds=(SEED_WEINBERGER,), status="ambiguous", kind="theorem",
        variables=(V.d, n_var, max_ip_var, c_var),
        constants=("C",),
        readings=("eta_bound", "norm_bound"),
        hypotheses=(Hypothesis("H1", sp.LessThan(n, (d + 1) / (3 * (max_ip + 1))), "n <= (d+1) / (3 (max|<x_i,x_j>| + 1))"),),
        bounds=(
            Bound("universal_flip_eta", "O", C * sqrt(d / (c**2 * n)), reading="eta_bound",
                  note="the seed's reading: |eta| = O(sqrt(d/(c^2 n)))"),
            Bound("universal_flip_norm", "O", C * d / c, reading="eta_bound",
                  note="eta_bound times ||sum_i y_i x_i|| ~ sqrt(n d); contradicts the seed's own o(sqrt d) corollary"),
            Bound("universal_flip_norm", "O", C * sqrt(d / (c**2 * n)), reading="norm_bound",
                  note="the other reading: ||delta|| = O(sqrt(d/(c^2 n)))"),
        ),
        uses=("VYS22.def.setting", "LL20.def.kkt", "LL20.thm.kkt"),
        note="Sources disagree on whether the bound is on |eta| or on ||delta||; the simulation decides.",
    ),
    Claim(
        id="VYS22.cor.random_sphere", title="Random points on the sphere: o(sqrt(d)) universal perturbation for n = Theta(sqrt(d)/log d)",
        paper=PAPER, seeds=(SEED_WEINBERGER,), status="exact", kind="corollary",
        variables=(V.d, n_var),
        constants=("C",),
        hypotheses=(Hypothesis("H1", None, "x_i uniform on sqrt(d) S^{d-1}; n = Theta(sqrt(d)/log(d))"),),
        bounds=(
            Bound("max_ip", "O", sqrt(d) * log(d), note="w.h.p."),
            Bound("universal_flip_norm", "o", sqrt(d), note="independent of the width"),
        ),
        uses=("VYS22.thm.main",),
    ),
    Claim(
        id="VYS22.exp", title="SGD on random sphere data to L <= 1e-30; the largest smallest flipping eta",
        paper=PAPER, seeds=(SEED_WEINBERGER,), status="exact", kind="experiment",
        variables=(V.d, n_var),
        bounds=(Bound("universal_flip_eta_max", "O", sqrt(d / n), note="max over samples of the smallest flipping eta, mean of 5 networks"),),
        uses=("VYS22.thm.main",),
        reference=(("protocol", "random x_i on the sphere, random labels, exponential loss until L <= 1e-30, 5 networks"),),
    ),
]
