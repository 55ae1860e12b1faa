"""LL20: Lyu & Li (2020), "Gradient descent maximizes the margin of homogeneous neural
networks", ICLR 2020, arXiv 1906.05890. Seeds 000 and 001 state the results on slides."""
from __future__ import annotations

import sympy as sp

from .. import variables as V
from ..claim import Bound, Claim, Hypothesis
from ._common import SEED_LI_CSML, SEED_LI_ITCS, S, log, real

PAPER = "Lyu & Li 2020 (ICLR 2020, arXiv 1906.05890)"
SEEDS = (SEED_LI_ITCS, SEED_LI_CSML)

n, L, T, eps, delta = (S(x) for x in ("n", "L", "T", "eps", "delta"))
q_min, rho, Lsum, Lsum_t0, ell_0 = (S(x) for x in ("q_min", "rho", "Lsum", "Lsum_t0", "ell_0"))

q_min_var = real("q_min", "smallest margin min_i y_i f(x_i)", tends_to="const")
rho_var = real("rho", "parameter norm ||theta||_2", low=0, low_open=True)
Lsum_var = real("Lsum", "summed training loss", low=0, low_open=True, tends_to="0")
Lsum_t0_var = real("Lsum_t0", "summed training loss at time t0", low=0, low_open=True, tends_to="const")
ell_0_var = real("ell_0", "ell(0): 1 for the exponential loss, log 2 for the logistic loss", low=0, low_open=True, tends_to="const")

HOMOGENEOUS = Hypothesis("H1", None, "the model is L-homogeneous")
LOSS = Hypothesis("H2", None, "the loss is exponential or logistic")
FITTED = Hypothesis("H3", sp.StrictLessThan(Lsum_t0, ell_0), "at some t0 the summed loss is below ell(0): every sample is fitted")

CLAIMS = [
    Claim(
        id="LL20.def.normalized_margin", title="Normalized margin",
        paper=PAPER, seeds=SEEDS, status="exact", kind="definition",
        variables=(q_min_var, rho_var, V.L),
        definitions=(("normalized_margin", q_min / rho**L),),
        note="gamma_bar(theta) = min_i q_i(theta) / ||theta||^L",
    ),
    Claim(
        id="LL20.def.smoothed_margin", title="Smoothed normalized margin (summed loss)",
        paper=PAPER, seeds=SEEDS, status="exact", kind="definition",
        variables=(V.n, rho_var, V.L, Lsum_var, real("normalized_margin", "gamma_bar", tends_to="const")),
        definitions=(
            ("smoothed_margin_exponential", log(1 / Lsum) / rho**L),
            ("smoothed_margin_logistic", -log(sp.exp(Lsum) - 1) / rho**L),
        ),
        bounds=(
            Bound("smoothed_margin", ">=", S("normalized_margin") - log(n) / rho**L, note="bracket, lower side"),
            Bound("smoothed_margin", "<=", S("normalized_margin"), note="bracket, upper side"),
        ),
        note="The loss is a SUM over samples; a simulation on the mean loss converts Lsum = n * Lmean first.",
    ),
    Claim(
        id="LL20.thm.monotone", title="The smoothed margin increases after the loss falls below ell(0)",
        paper=PAPER, seeds=SEEDS, status="exact", kind="theorem",
        variables=(Lsum_t0_var, ell_0_var, V.L),
        hypotheses=(HOMOGENEOUS, LOSS, FITTED),
        bounds=(
            Bound("smoothed_margin_increment", ">=", sp.Integer(0), note="d gamma_tilde/dt >= 0 for a.e. t > t0 (gradient flow)"),
            Bound("train_loss", "->", sp.Integer(0)),
            Bound("param_norm", "->", sp.oo),
        ),
        uses=("LL20.def.smoothed_margin",),
    ),
    Claim(
        id="LL20.thm.rates", title="Loss and norm rates after t0",
        paper=PAPER, seeds=SEEDS, status="exact", kind="theorem",
        variables=(V.T, V.L),
        hypotheses=(HOMOGENEOUS, LOSS, Hypothesis("H3", None, "t > t0, with the loss below ell(0) at t0")),
        bounds=(
            Bound("train_loss", "Theta", 1 / (T * log(T) ** (2 - 2 / L)), note="Lsum(t); T = t (flow) or the sum of step sizes (GD)"),
            Bound("param_norm", "Theta", log(T) ** (1 / L), note="rho(t)"),
        ),
        uses=("LL20.thm.monotone",),
    ),
    Claim(
        id="LL20.thm.kkt", title="The limit direction, rescaled, is a KKT point of (P)",
        paper=PAPER, seeds=SEEDS, status="exact", kind="theorem",
        variables=(V.L,),
        hypotheses=(HOMOGENEOUS, LOSS, Hypothesis("H3", None, "the loss falls below ell(0) at some t0")),
        bounds=(Bound("kkt_stationarity_residual", "->", sp.Integer(0), note="theta_hat / q_min(theta_hat)^(1/L) of the limit direction"),),
        uses=("LL20.def.P", "LL20.def.kkt", "LL20.thm.monotone"),
    ),
    Claim(
        id="LL20.def.P", title="Problem (P): min 1/2 ||theta||^2 s.t. q_i(theta) >= 1",
        paper=PAPER, seeds=SEEDS, status="exact", kind="definition",
        variables=(rho_var,),
        definitions=(("objective", rho**2 / 2), ("constraint", sp.GreaterThan(q_min, 1))),
    ),
    Claim(
        id="LL20.def.kkt", title="KKT point of (P) with Clarke subdifferentials",
        paper=PAPER, seeds=SEEDS, status="exact", kind="definition",
        bounds=(
            Bound("kkt_stationarity_residual", "<=", sp.Integer(0), note="theta = sum_i lambda_i h_i, h_i in the Clarke subdifferential of q_i"),
            Bound("complementary_slackness", "<=", sp.Integer(0), note="lambda_i (q_i(theta) - 1) = 0, lambda_i >= 0"),
        ),
        uses=("LL20.def.P",),
        note="For a ReLU unit with pre-activation exactly 0, the Clarke subdifferential is [0, 1].",
    ),
    Claim(
        id="LL20.def.eps_delta_kkt", title="(eps, delta)-approximate KKT point",
        paper=PAPER, seeds=SEEDS, status="exact", kind="definition",
        variables=(real("eps", "stationarity tolerance", low=0, low_open=True, tends_to="0"),
                   real("delta", "complementary-slackness tolerance", low=0, low_open=True, tends_to="0")),
        bounds=(
            Bound("kkt_stationarity_residual", "<=", eps, note="||theta - sum_i lambda_i h_i|| <= eps"),
            Bound("complementary_slackness", "<=", delta, note="lambda_i (q_i - 1) <= delta"),
        ),
        uses=("LL20.def.kkt",),
        note="Exact wording, inequalities rebuilt (THEORY.md).",
    ),
    Claim(
        id="LL20.exp.margin_growth", title="Longer training gives a larger normalized margin (seed table)",
        paper=PAPER, seeds=SEEDS, status="exact", kind="experiment",
        bounds=(Bound("normalized_margin_increment", ">=", sp.Integer(0), note="margin grows with training; a loss-based step reaches ~1e-800"),),
        uses=("LL20.thm.monotone",),
        reference=(
            ("epochs", "38, 75, 107, 935, 10000"),
            ("loss", "1e-10, 1e-15, 1e-20, 1e-120, 1e-881"),
            ("normalized_margin", "5.65e-5, 9.50e-5, 1.30e-4, 4.61e-4, 1.18e-3"),
        ),
    ),
]
