"""SSTTM18's Gaussian model: the robust sample threshold of the class-mean estimator.
"""
from __future__ import annotations

import math

import numpy as np

from ibcheck.simulate.experiments.base import GaussianModel, design
from ibcheck.simulate.substrate.censored import AtLeast
from ibcheck.simulate.substrate.seeds import cell_key, rng


def measure_ssttm18(cell: dict, seed: int) -> dict:
    """SSTTM18.cor.robust_upper / robust_lower: the smallest n at which the class-mean estimator's l_inf-robust error is <= 1%.

    Gaussian model with sigma = sigma_scale d^(1/4) and a fixed eps. The estimator is exactly
    ``w = theta + (sigma / sqrt(n)) xi`` with ``xi ~ N(0, I)``, and its robust error is exactly
    ``Phi((eps ||w||_1 - <w, theta>) / (sigma ||w||))`` (the point is robust iff
    ``y <w, x> > eps ||w||_1``), so the threshold is found by bisection over n with one xi per seed.
    ``trivial`` says the threshold is n = 1, the smallest sample there is: a bound "n >= ..." then holds
    whatever it states, and the row tests nothing.
    """
    from scipy.stats import norm  # heavy: scipy (loaded on first use)

    d = int(cell["d"])
    p = design(GaussianModel, cell)
    eps, sigma = p.eps, p.sigma_scale * d ** 0.25
    gen = rng("claim-measure", seed, 6, cell_key("ssttm18", tuple(sorted(cell.items()))))  # per (cell, seed)
    theta = gen.standard_normal(d)
    theta *= math.sqrt(d) / np.linalg.norm(theta)
    xi = gen.standard_normal(d)

    def robust_error(n: int) -> float:
        w = theta + sigma / math.sqrt(n) * xi
        return float(norm.cdf((eps * np.abs(w).sum() - w @ theta) / (sigma * np.linalg.norm(w))))

    lo, hi = 0, 1
    while robust_error(hi) > 0.01:
        lo, hi = hi, hi * 2
        if hi > 1 << 40:
            return {"robust_sample_threshold": AtLeast(float(1 << 40)), "trivial": False}
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if robust_error(mid) > 0.01 else (lo, mid)
    return {"robust_sample_threshold": float(hi), "trivial": hi == 1}
