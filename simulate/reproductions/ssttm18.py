"""SSTTM18: robust generalization needs more data. Gaussian model: the sample size for 1% l_inf-robust
error grows like eps^2 sqrt(d); Bernoulli model: one sample suffices after thresholding, while the
linear learner stays near chance (SSTTM18.cor.robust_upper, SSTTM18.bernoulli)."""
from __future__ import annotations

import math

import numpy as np

from ibcheck.simulate.experiments.ssttm18 import measure_ssttm18
from ibcheck.simulate.report.figures import finish
from ibcheck.simulate.reproductions.criteria import AtLeast, AtMost, Measured, Reported
from ibcheck.simulate.substrate.seeds import rng
from ibcheck.theory.result import new_figure


def _threshold_figure(rows):
    """The robust sample threshold against d, one line per eps (each point a seed)."""
    fig, ax = new_figure()
    for eps in sorted({r["eps"] for r in rows}):
        pts = sorted((r["d"], r["value"]) for r in rows if r["eps"] == eps)
        ax.loglog([p[0] for p in pts], [p[1] for p in pts], "o-", label=f"eps = {eps}")
    ds = sorted({r["d"] for r in rows})
    ax.loglog(ds, [20 * (d / ds[0]) ** 0.5 for d in ds], "k:", label="slope 1/2")
    ax.set_xlabel("d")
    ax.set_ylabel("smallest n with l_inf-robust error <= 1%")
    return finish(fig, ax, "SSTTM18: robust sample threshold of the class-mean estimator (sigma = d^(1/4))")


def measure(quick: bool) -> Measured:
    from ibcheck.simulate.stats.fit import fit_exponents  # heavy: scipy (loaded on first use)

    R = Measured("SSTTM18: robust generalization needs more data (Gaussian model, l_inf)")
    rows = [{"d": d, "eps": eps, "seed": s, "value": measure_ssttm18({"d": d, "eps": eps}, s)["robust_sample_threshold"]}
            for d in ([10**4, 10**5, 10**6] if quick else [10**4, 10**5, 10**6, 10**7]) for eps in (0.25, 0.35, 0.5) for s in range(2)]
    fit = fit_exponents(rows, ["d", "eps"])
    combo = [{"x": r["eps"] ** 2 * math.sqrt(r["d"]), "seed": r["seed"], "value": r["value"]} for r in rows]
    fx = fit_exponents(combo, ["x"], bootstrap=False)
    R.add("threshold n: exponent in eps^2 sqrt(d)", "1 (n ~ eps^2 sqrt(d), up to log d)", fx.estimate["x"], Reported(),
          f"95% CI [{fx.ci['x'][0]:.3f}, {fx.ci['x'][1]:.3f}]; finite-d corrections (d^(-1/4) terms) bend it below 1 at these sizes")
    R.figures["threshold.png"] = _threshold_figure(rows)
    # an O-bound: the CI's upper end must not exceed 1/2 + 0.1 (only meaningful when the CI reaches above 0)
    hi = fit.ci["d"][1]
    R.add("threshold n: exponent in d, upper end of the 95% CI", "1/2 (n ~ eps^2 sqrt(d))", hi, AtMost(0.6) if hi > 0 else Reported(),
          f"estimate {fit.estimate['d']:.3f}, 95% CI [{fit.ci['d'][0]:.3f}, {hi:.3f}]; O-bound: not above 1/2 (+0.1)")
    R.add("threshold n: exponent in eps", "2", fit.estimate["eps"], Reported(), f"95% CI [{fit.ci['eps'][0]:.3f}, {fit.ci['eps'][1]:.3f}]; "
          "eps also enters through 1 - c eps, so a pure power is not expected at these eps")
    # Bernoulli model: linear learner vs thresholding, one sample (SSTTM18.bernoulli)
    g = rng("reproduction", 2)
    d, tau, eps = 2000, 0.1, 0.3
    theta = g.choice([-1.0, 1.0], d)
    yt = g.choice([-1.0, 1.0], 2000)
    Xt = np.where(g.random((2000, d)) < 0.5 + tau, 1.0, -1.0) * yt[:, None] * theta
    x1 = np.where(g.random(d) < 0.5 + tau, 1.0, -1.0) * theta  # one sample, label +1
    lin = float(np.mean(yt * (Xt @ x1) <= eps * np.abs(x1).sum()))
    # thresholding: an l_inf perturbation of eps < 1 cannot flip the sign of a +-1 coordinate
    thr = float(np.mean(yt * (np.sign(Xt) @ x1) <= 0))
    R.add("Bernoulli, one sample: l_inf-robust error of the linear learner", "about 1/2 or more (needs many samples)", lin, AtLeast(0.4, strict=True))
    R.add("Bernoulli, one sample: robust error after thresholding (sign)", "small (one sample suffices)", thr, AtMost(0.1))
    return R
