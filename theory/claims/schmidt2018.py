"""SSTTM18: Schmidt, Santurkar, Tsipras, Talwar, Madry (2018), "Adversarially robust
generalization requires more data", NeurIPS 2018. Seed 003; appendix constants from a
page-cited formalization."""
from __future__ import annotations

import sympy as sp

from .. import variables as V
from ..claim import Bound, Claim, Hypothesis
from ._common import SEED_WEINBERGER, S, exp, log, real, sqrt

PAPER = "Schmidt, Santurkar, Tsipras, Talwar, Madry 2018 (NeurIPS 2018)"
d, n, eps, sigma, c = (S(x) for x in ("d", "n", "eps", "sigma", "c"))
tau, beta, gamma = S("tau"), S("beta"), S("gamma")

eps_inf = real("eps", "l_inf perturbation radius", low=0, low_open=True, tends_to="0")
c_const = real("c", "the constant in sigma = c d^(1/4)", low=0, low_open=True, tends_to="const")

CLAIMS = [
    Claim(
        id="SSTTM18.def.gaussian", title="Gaussian model x ~ N(y theta*, sigma^2 I_d), ||theta*|| = sqrt(d)",
        paper=PAPER, seeds=(SEED_WEINBERGER,), status="exact", kind="definition",
        variables=(V.d, V.n, V.sigma),
        definitions=(("theta_star_norm", sqrt(d)), ("estimator", S("sum_i_y_i_x_i") / n)),
    ),
    Claim(
        id="SSTTM18.thm.one_sample", title="One sample gives 1% classification error when sigma <= c d^(1/4)",
        paper=PAPER, seeds=(SEED_WEINBERGER,), status="order", kind="theorem",
        variables=(V.d, V.sigma, c_const),
        hypotheses=(Hypothesis("H1", sp.LessThan(sigma, c * d ** sp.Rational(1, 4)), "sigma <= c d^(1/4)"),),
        bounds=(Bound("test_error", "<=", sp.Rational(1, 100)),),
        uses=("SSTTM18.def.gaussian",),
    ),
    Claim(
        id="SSTTM18.cor.robust_upper", title="n >= 64 eps^2 sqrt(d) samples give 1% l_inf-robust error",
        paper=PAPER, seeds=(SEED_WEINBERGER,), status="exact", kind="corollary",
        variables=(V.d, V.n, V.sigma, eps_inf),
        hypotheses=(
            Hypothesis("H1", sp.LessThan(sigma, d ** sp.Rational(1, 4) / 32), "sigma <= d^(1/4)/32"),
            Hypothesis("H2", sp.LessThan(eps, sp.Rational(1, 4)), "eps <= 1/4"),
            Hypothesis("H3", sp.Or(sp.LessThan(eps, d ** sp.Rational(-1, 4) / 4), sp.GreaterThan(n, 64 * eps**2 * sqrt(d))),
                       "n >= 1 when eps <= d^(-1/4)/4; n >= 64 eps^2 sqrt(d) otherwise"),
        ),
        bounds=(
            Bound("robust_error", "<=", sp.Rational(1, 100), probability=1 - 2 * exp(-d / (8 * (sigma**2 + 1)))),
            Bound("robust_sample_threshold", "O", 64 * eps**2 * sqrt(d), note="upper side of the robust sample complexity"),
        ),
        uses=("SSTTM18.def.gaussian",),
    ),
    Claim(
        id="SSTTM18.cor.robust_lower", title="Any learner needs n > eps^2 sigma^2 / (8 log d) for robust error below ~1/2",
        paper=PAPER, seeds=(SEED_WEINBERGER,), status="exact", kind="corollary",
        variables=(V.d, V.n, V.sigma, eps_inf),
        hypotheses=(Hypothesis("H1", sp.LessThan(n, eps**2 * sigma**2 / (8 * log(d))), "n <= eps^2 sigma^2 / (8 log d)"),),
        bounds=(
            Bound("robust_error", ">=", (1 - 1 / d) / 2, note="expected, theta ~ N(0, I)"),
            Bound("robust_sample_threshold", "Omega", eps**2 * sqrt(d) / log(d), note="with sigma = c d^(1/4)"),
        ),
        uses=("SSTTM18.def.gaussian",),
    ),
    Claim(
        id="SSTTM18.bernoulli", title="Bernoulli (theta*, tau) model: linear learners need many samples, thresholding needs one",
        paper=PAPER, seeds=(SEED_WEINBERGER,), status="exact", kind="theorem",
        variables=(V.d, V.n, real("eps", "l_inf radius", low=0, high=1, low_open=True, high_open=True, tends_to="0"),
                   real("tau", "bias of each coordinate: P[x_i = y theta*_i] = 1/2 + tau", low=0, high=0.5, low_open=True, tends_to="0"),
                   real("beta", "failure probability", low=0, high=1, low_open=True, high_open=True, tends_to="0"),
                   real("gamma", "robust error margin below 1/2", low=0, high=0.5, low_open=True, tends_to="const")),
        readings=("linear", "thresholded"),
        hypotheses=(Hypothesis("H1", sp.GreaterThan(tau, (log(1 / beta) / (2 * d)) ** sp.Rational(1, 4)),
                               "tau >= (log(1/beta)/(2d))^(1/4): one sample suffices"),),
        bounds=(
            Bound("robust_sample_threshold", ">=", eps**2 * gamma**2 / (5000 * tau**4 * log(4 * d / gamma)), reading="linear",
                  note="a linear learner needs more than this to reach robust error below 1/2 - gamma"),
            Bound("robust_sample_threshold", "<=", sp.Integer(1), reading="thresholded", note="sign-thresholding the input: one sample for every eps < 1"),
        ),
        uses=("SSTTM18.def.gaussian",),
    ),
]
