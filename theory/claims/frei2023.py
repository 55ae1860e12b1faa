"""FVBS23: Frei, Vardi, Bartlett, Srebro (2023), "The double-edged sword of implicit bias:
generalization vs. robustness in ReLU networks", arXiv 2303.01456.

Theorem 4.2 is read from its slide in seed 000 (the paper text in seed 004 has its formulas
stripped). Assumption 2.2's exact inequalities were not read: they carry the unverified flag.
"""
from __future__ import annotations

import sympy as sp

from .. import variables as V
from ..claim import Bound, Claim, Hypothesis
from ._common import SEED_FVBS_PAPER, SEED_LI_ITCS, S, exp, log, real, sqrt

PAPER = "Frei, Vardi, Bartlett, Srebro 2023 (arXiv 2303.01456)"

d, k, n, eps, delta, sigma = (S(x) for x in ("d", "k", "n", "eps", "delta", "sigma"))
c, C, C1, C2, C3 = (S(x) for x in ("c", "C", "C1", "C2", "C3"))
max_mean_ip, kappa = S("max_mean_ip"), S("kappa")

c_var = real("c", "min(|Q+|/k, |Q-|/k), the smaller class fraction of the clusters", low=0, high=0.5, low_open=True, tends_to="const")
k_var = V.Variable("k", "number of clusters", integer=True, low=2)
max_ip_var = real("max_mean_ip", "max_{i != j} |<mu^(i), mu^(j)>|, near-orthogonality of the means", low=0, tends_to="const")
kappa_var = real("kappa", "power of d that bounds k in Assumption 2.2 (unverified)", low=0, high=1, low_open=True, tends_to="const")


def side_conditions() -> tuple[Hypothesis, ...]:
    """FVBS23.thm.4_2 H1..H5 (seed 000, Theorem 4.2 slide), shared with FVBS23.thm.3_1.

    H1: n >= k ln^2(d)
    H2: 1/delta <= (1/3) d^(ln(d) - 1)
    H3: n <= sqrt(delta/3) * exp(d/32)
    H4: n <= (sqrt(delta)/3) * d^(ln(d)/4)
    H5: n <= (eps/4) * d^(ln(d)/2)
    """
    return (
        Hypothesis("H1", sp.GreaterThan(n, k * log(d) ** 2), "n >= k ln^2(d)"),
        Hypothesis("H2", sp.LessThan(1 / delta, sp.Rational(1, 3) * d ** (log(d) - 1)), "1/delta <= (1/3) d^(ln(d) - 1)"),
        Hypothesis("H3", sp.LessThan(n, sqrt(delta / 3) * exp(d / 32)), "n <= sqrt(delta/3) exp(d/32)"),
        Hypothesis("H4", sp.LessThan(n, sqrt(delta) / 3 * d ** (log(d) / 4)), "n <= (sqrt(delta)/3) d^(ln(d)/4)"),
        Hypothesis("H5", sp.LessThan(n, eps / 4 * d ** (log(d) / 2)), "n <= (eps/4) d^(ln(d)/2)"),
    )


CLAIMS = [
    Claim(
        id="FVBS23.def.D_clusters",
        title="Cluster distribution D_clusters",
        paper=PAPER, seeds=(SEED_FVBS_PAPER, SEED_LI_ITCS), status="exact", kind="definition",
        variables=(V.d, k_var, V.sigma),
        definitions=(("mean_norm", sqrt(d)), ("x", S("mu_j") + S("xi")), ("noise_std", sigma)),
        note="k clusters with means of norm sqrt(d) and labels y^(j) in {-1,+1}; j uniform on [k]; "
        "x = mu^(j) + xi, xi ~ N(0, sigma^2 I_d), y = y^(j).",
    ),
    Claim(
        id="FVBS23.asm.2_2",
        title="Nearly orthogonal cluster means; sigma and k bounded relative to d",
        paper=PAPER, seeds=(SEED_FVBS_PAPER,), status="unverified", kind="assumption",
        variables=(V.d, k_var, V.sigma, max_ip_var, kappa_var),
        constants=("C1", "C2", "C3"),
        hypotheses=(
            Hypothesis("H1", sp.LessThan(max_mean_ip, d / (C1 * k)), "max |<mu_i, mu_j>| small relative to d/k", unverified=True),
            Hypothesis("H2", sp.LessThan(sigma, C2), "sigma = O(1)", unverified=True),
            Hypothesis("H3", sp.LessThan(k, C3 * d ** kappa), "k at most a small power of d", unverified=True),
        ),
        note="The exact inequalities were not read (recalled). Example 1: exactly orthogonal means with "
        "sigma = Theta(1) satisfy it for k up to a small power of d. Reports always show the measured "
        "near-orthogonality of the sampled means.",
    ),
    Claim(
        id="FVBS23.lemma.2_1",
        title="The training set is linearly separable w.h.p.",
        paper=PAPER, seeds=(SEED_FVBS_PAPER,), status="order", kind="lemma",
        variables=(V.d, k_var, V.n, V.delta),
        bounds=(Bound("separable", ">=", sp.Integer(1), probability=1 - delta,
                      note="checked numerically with the hard-margin SVM"),),
        uses=("FVBS23.asm.2_2", "FVBS23.def.D_clusters"),
    ),
    Claim(
        id="FVBS23.thm.3_1",
        title="Every KKT point of (P) generalizes",
        paper=PAPER, seeds=(SEED_FVBS_PAPER,), status="order", kind="theorem",
        variables=(V.d, k_var, V.n, V.eps, V.delta),
        hypotheses=side_conditions(),
        bounds=(Bound("test_error", "<=", eps, probability=1 - delta),),
        uses=("FVBS23.def.D_clusters", "FVBS23.asm.2_2", "LL20.def.kkt", "LL20.def.P"),
        note="Side conditions in the same forms as Theorem 4.2 (THEORY.md).",
    ),
    Claim(
        id="FVBS23.thm.4_1",
        title="A robust network exists: one neuron per cluster",
        paper=PAPER, seeds=(SEED_FVBS_PAPER,), status="order", kind="theorem",
        variables=(V.d, k_var, V.n, V.sigma),
        constants=("C",),
        bounds=(
            Bound("robust_radius", "Omega", sqrt(d), note="construction: w_j = mu^(j) scaled, negative bias, output y^(j)"),
            Bound("test_error", "->", sp.Integer(0)),
        ),
        uses=("FVBS23.def.D_clusters", "FVBS23.asm.2_2", "SOK17.lemma.lipschitz_radius"),
    ),
    Claim(
        id="FVBS23.thm.4_2",
        title="Every KKT point has a universal, transferable flipping perturbation of norm O(sqrt(d/(c^2 k)))",
        paper=PAPER, seeds=(SEED_LI_ITCS, SEED_FVBS_PAPER), status="order", kind="theorem",
        variables=(V.d, k_var, V.n, V.eps, V.delta, c_var),
        constants=("C",),
        hypotheses=side_conditions(),
        bounds=(
            Bound("universal_flip_norm", "O", C * sqrt(d / (c**2 * k)), probability=1 - delta,
                  note="z = eta sum_j y^(j) mu^(j), eta > 0; universal and transferable"),
            Bound("flip_rate", ">=", 1 - eps, probability=1 - delta,
                  note="P[sign N(x) != sign N(x - y z)] at that norm"),
        ),
        uses=("FVBS23.def.D_clusters", "LL20.def.kkt", "LL20.def.P"),
        generalizes=("VYS22.thm.main",),
        note="For fixed n, k, eps, delta, H1 bounds d from above and H3..H5 from below: the theorem "
        "applies on a window of d, possibly empty.",
    ),
    Claim(
        id="FVBS23.cor.nonrobust_gf",
        title="Gradient flow generalizes but is not robust, although a robust network exists",
        paper=PAPER, seeds=(SEED_FVBS_PAPER,), status="order", kind="corollary",
        variables=(V.d, k_var, V.n, V.eps, V.delta, c_var),
        constants=("C",),
        hypotheses=side_conditions() + (
            Hypothesis("H6", None, "gradient flow reaches a loss below ell(0)"),
        ),
        bounds=(
            Bound("test_error", "<=", eps, probability=1 - delta),
            Bound("universal_flip_norm", "O", C * sqrt(d / (c**2 * k)), probability=1 - delta),
            Bound("robust_radius", "Omega", sqrt(d), note="of the FVBS23.thm.4_1 construction"),
        ),
        uses=("LL20.thm.kkt", "FVBS23.thm.3_1", "FVBS23.thm.4_1", "FVBS23.thm.4_2"),
    ),
    Claim(
        id="FVBS23.rem.generalizes_VYS22",
        title="As sigma -> 0, Theorem 4.2 recovers the nearly-orthogonal points result",
        paper=PAPER, seeds=(SEED_FVBS_PAPER,), status="exact", kind="remark",
        variables=(V.d, k_var, V.sigma),
        bounds=(Bound("sigma", "->", sp.Integer(0), note="limit in which FVBS23.thm.4_2 becomes VYS22.thm.main"),),
        uses=("FVBS23.thm.4_2",),
        generalizes=("VYS22.thm.main",),
    ),
]
