"""LPLL25: Li, Pan, Lyu, Li (2025), "Feature averaging: an implicit bias of gradient descent
leading to non-robustness in neural networks", ICLR 2025, arXiv 2410.10322."""
from __future__ import annotations

import sympy as sp

from .. import variables as V
from ..claim import Bound, Claim, Hypothesis
from ._common import SEED_LI_CSML, SEED_LI_ITCS, SEED_LPLL_TALK, S, integer, real, sqrt

PAPER = "Li, Pan, Lyu, Li 2025 (ICLR 2025, arXiv 2410.10322)"
SEEDS = (SEED_LI_ITCS, SEED_LI_CSML, SEED_LPLL_TALK)

d, k, m, sigma = (S(x) for x in ("d", "k", "m", "sigma"))
ks = S("ks")

k_var = V.Variable("k", "number of orthogonal clusters (features)", integer=True, low=2)
ks_var = integer("ks", "|J_s|, the number of clusters of the neuron's class", low=1)
c_ratio = real("c", "bound on the class ratio: 1/c <= |J+|/|J-| <= c", low=1, tends_to="const")

LARGE_D = Hypothesis("H1", None, "d is sufficiently large")
POLY_T = Hypothesis("H2", None, "T = Theta(poly(d)) GD steps from the paper's initialization, eta = Theta(1/sqrt(d))")

CLAIMS = [
    Claim(
        id="LPLL25.def.data", title="k exactly orthogonal clusters, two label sets J+ and J-",
        paper=PAPER, seeds=SEEDS, status="exact", kind="definition",
        variables=(V.d, k_var, V.sigma, c_ratio),
        definitions=(("mean_norm", sqrt(d)), ("noise_std", sp.Integer(1))),
        note="mu_j orthogonal, ||mu_j|| = sqrt(d); x = mu_j + xi, xi ~ N(0, sigma^2 I_d), sigma = Theta(1) (the paper uses 1).",
    ),
    Claim(
        id="LPLL25.def.net", title="Two-layer ReLU with a fixed +-1/m second layer; first-layer weights and biases trained",
        paper=PAPER, seeds=SEEDS, status="exact", kind="definition",
        variables=(V.d, V.m),
        definitions=(("init_weight_std", 1 / sqrt(d)), ("init_bias_std", 1 / d), ("step_size_order", 1 / sqrt(d))),
        note="f(x) = (1/m) sum_r ReLU(<w_{+1,r}, x> + b_{+1,r}) - (1/m) sum_r ReLU(<w_{-1,r}, x> + b_{-1,r}); mean logistic loss.",
    ),
    Claim(
        id="LPLL25.lemma.decomposition", title="Weights decompose on the means and the training noise",
        paper=PAPER, seeds=SEEDS, status="exact", kind="lemma",
        variables=(V.d, k_var, V.n),
        definitions=(("w_sr", S("w_sr0") + S("sum_j_lambda_srj_mu_j") + S("sum_i_sigma_sri_xi_i")),),
        note="w_{s,r}(t) = w_{s,r}(0) + sum_j lambda_{s,r,j}(t) mu_j + sum_i sigma_{s,r,i}(t) xi_i; lambda and sigma by least squares.",
        uses=("LPLL25.def.data", "LPLL25.def.net"),
    ),
    Claim(
        id="LPLL25.thm.feature_averaging", title="GD converges to feature averaging",
        paper=PAPER, seeds=SEEDS, status="exact", kind="theorem",
        variables=(V.d, k_var, V.m, ks_var),
        readings=("ratio_to_one", "ratio_bounded"),
        hypotheses=(LARGE_D, POLY_T),
        bounds=(
            Bound("test_accuracy", "->", sp.Integer(1), note="(I) 1 - o(1)"),
            Bound("lambda_same_class", "Omega", sp.Integer(1), note="(II) Omega~(1) for j in J_s"),
            Bound("lambda_ratio_same_class", "->", sp.Integer(1), reading="ratio_to_one", note="seed 001: 1 +- o(1)"),
            Bound("lambda_ratio_same_class", "O", sp.Integer(1), reading="ratio_bounded", note="seeds 000, 002: <= O~(1)"),
            Bound("lambda_other_class", "->", sp.Integer(0), note="o(1) for j in J_{-s}"),
            Bound("cosine_same_class", "->", 1 / sqrt(ks), note="neuron vs each same-class mean"),
            Bound("cosine_other_class", "->", sp.Integer(0)),
        ),
        uses=("LPLL25.def.data", "LPLL25.def.net", "LPLL25.lemma.decomposition"),
        resolves=("MV24.conj",),
        note="Exact up to the tilde orders. Every neuron is close to a multiple of sum_{j in J_s} mu_j.",
    ),
    Claim(
        id="LPLL25.thm.nonrobust", title="Feature-averaging networks are not robust beyond sqrt(d/k), for any bias",
        paper=PAPER, seeds=SEEDS, status="order", kind="theorem",
        variables=(V.d, k_var),
        constants=("C",),
        readings=("omega_seed000", "Omega_seed002"),
        hypotheses=(Hypothesis("H1", None, "the network is feature-averaging (LPLL25.thm.feature_averaging)"),),
        bounds=(
            Bound("flip_radius_median", "O", S("C") * sqrt(d / k),
                  note="attack direction -y (sum_{J+} mu_j - sum_{J-} mu_j), normalized"),
            Bound("robust_accuracy", "->", sp.Integer(0), reading="omega_seed000", note="at radius omega(sqrt(d/k)) (seed 000)"),
            Bound("robust_accuracy", "->", sp.Integer(0), reading="Omega_seed002", note="at radius Omega(sqrt(d/k)) (seed 002)"),
        ),
        uses=("LPLL25.thm.feature_averaging",),
        compared_with=("LPLL25.prop.robust_exists", "LPLL25.thm.5_5"),
    ),
    Claim(
        id="LPLL25.prop.robust_exists", title="A sqrt(d)-robust network exists",
        paper=PAPER, seeds=SEEDS, status="order", kind="theorem",
        variables=(V.d, k_var),
        constants=("C",),
        bounds=(Bound("robust_radius", "Theta", S("C") * sqrt(d),
                      note="f(x) = sum_{J+} ReLU(<mu_j, x> + b) - sum_{J-} ReLU(<mu_l, x> + b), b < 0"),),
        uses=("LPLL25.def.data", "SOK17.lemma.lipschitz_radius"),
    ),
    Claim(
        id="LPLL25.thm.5_5", title="Feature-level labels give feature decoupling and a sqrt(d)-robust read-out",
        paper=PAPER, seeds=SEEDS, status="exact", kind="theorem",
        variables=(V.d, k_var),
        constants=("C",),
        hypotheses=(LARGE_D, Hypothesis("H2", None, "k-class network f_i(x) = ReLU(<w_i, x>) trained by GD on cluster labels for poly(d) steps")),
        bounds=(
            Bound("kclass_accuracy", "->", sp.Integer(1)),
            Bound("lambda_diag", "Omega", sp.Integer(1), note="lambda_{i,i} = Omega~(1)"),
            Bound("lambda_offdiag", "->", sp.Integer(0), note="lambda_{i,j} = o~(1), j != i"),
            Bound("robust_radius", "Theta", S("C") * sqrt(d), note="binary read-out sum_{J+} f_j - sum_{J-} f_j"),
        ),
        uses=("LPLL25.def.data", "LPLL25.lemma.decomposition", "SOK17.lemma.lipschitz_radius"),
        note="Exact up to the tilde orders.",
    ),
    Claim(
        id="LPLL25.exp.cosine_matrix", title="Cosine matrix neurons x features, 2-class vs k-class",
        paper=PAPER, seeds=SEEDS, status="exact", kind="experiment",
        variables=(V.d, k_var, V.n, V.m, ks_var),
        bounds=(Bound("cosine_same_class", "->", 1 / sqrt(ks)), Bound("cosine_kclass_diag", "->", sp.Integer(1))),
        uses=("LPLL25.thm.feature_averaging", "LPLL25.thm.5_5"),
        reference=(("config", "d=3072, k=10, n=1000, m=5"), ("2-class blocks", "about 1/sqrt(5) = 0.45"), ("10-class diagonal", "about 0.99")),
    ),
    Claim(
        id="LPLL25.exp.robust_accuracy", title="Robust accuracy against the l2 radius, 2-class vs k-class (synthetic)",
        paper=PAPER, seeds=SEEDS, status="exact", kind="experiment",
        variables=(V.d, k_var, V.n, V.m),
        bounds=(Bound("collapse_radius_2class", "Theta", sqrt(d / k)), Bound("collapse_radius_kclass", "Theta", sqrt(d / 2))),
        uses=("LPLL25.thm.nonrobust", "LPLL25.thm.5_5"),
        reference=(("config", "d=3072, k=10, n=1000, m=5"),
                   ("2-class collapse", "radius about 14 to 18 (sqrt(d/k) = 17.5)"),
                   ("10-class collapse", "radius about 34 to 44 (sqrt(d/2) = 39)")),
    ),
    Claim(
        id="LPLL25.exp.real_images", title="Binary tasks from a 10-class image set: the 10-class model is more robust at every radius",
        paper=PAPER, seeds=SEEDS, status="exact", kind="experiment",
        bounds=(Bound("robust_accuracy_gap", ">=", sp.Integer(0), note="10-class read-out minus 2-class model, at every radius"),),
        uses=("LPLL25.thm.5_5",),
    ),
]
