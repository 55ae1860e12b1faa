"""The family-wise level of correlated one-sided tests (max-T).

Takes the tests' linear maps from the cells' means to their estimates (one row per test), the cell means' variances
up to a common scale (``1 / n_seeds``), and the sides each test is read on (+1: a rise, -1: a fall, or both); returns
the per-test level ``l`` at which, under the joint null, the largest standardized estimate over every test and side
passes its critical value ``z_{1 - l}`` with probability ``alpha``: the exact joint null of the directions tested,
not Bonferroni's ``alpha / m``.

The joint law is the normal one of the estimates, ``N(0, R)`` with ``R`` their correlation on this design; its
``1 - alpha`` quantile of the maximum is taken from ``DRAWS`` scrambled Sobol points (seed 0: the same design gives
the same level, run after run). The level is clipped to ``[alpha / m, alpha]``: never below Bonferroni (which max-T
cannot be, but for the draws' own error), never above one test's level.

Pitfall avoided: Bonferroni treats the ``m`` tests as if their rejections never coincided; on a geometric grid the
power and log slopes along one variable correlate about 0.99, so ``alpha / m`` spends the family's error twice on
one direction (0.0018 per test where the joint null allows 0.0026 on the calibration design).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import stats
from scipy.stats import qmc

DRAWS = 2 ** 14  # Sobol points: about 410 beyond the quantile at alpha = 0.025 (its own error a few % of alpha)


@lru_cache(maxsize=8)  # at most 8 arrays held, DRAWS x dim floats each (1 MB at dim 8)
def _normal_points(dim: int) -> np.ndarray:
    """DRAWS standard normal points in ``dim`` dimensions from scrambled Sobol (seed 0), computed once per dimension."""
    u = qmc.Sobol(d=dim, scramble=True, seed=0).random(DRAWS)
    out = stats.norm.ppf(np.clip(u, 1e-12, 1 - 1e-12))
    out.setflags(write=False)
    return out


def max_t_level(maps: np.ndarray, variances: np.ndarray, sides: list[tuple[int, ...]], alpha: float) -> float:
    """The per-test level of the ``len(sides)`` tests ``maps @ y`` (``y`` the cell means, independent with variances
    proportional to ``variances``), each read on its sides, at family-wise level ``alpha``; ``alpha / m`` (Bonferroni,
    m the signed tests) where the correlation cannot be formed (a test with no variance, non-finite maps)."""
    maps = np.asarray(maps, dtype=float)
    m = sum(len(s) for s in sides)
    bonferroni = alpha / max(m, 1)
    if m <= 1 or maps.ndim != 2 or maps.shape[0] != len(sides) or not np.all(np.isfinite(maps)):
        return bonferroni
    cov = (maps * np.asarray(variances, dtype=float)[None, :]) @ maps.T
    sd = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    if not np.all(sd > 0) or not np.all(np.isfinite(cov)):
        return bonferroni
    corr = cov / np.outer(sd, sd)
    vals, vecs = np.linalg.eigh((corr + corr.T) / 2)
    root = vecs * np.sqrt(np.clip(vals, 0.0, None))[None, :]  # corr = root @ root.T (rank-deficient rays included)
    z = _normal_points(len(sides)) @ root.T
    top = np.full(DRAWS, -np.inf)
    for j, ss in enumerate(sides):  # the largest signed estimate of each draw
        for s in ss:
            np.maximum(top, s * z[:, j], out=top)
    critical = float(np.quantile(top, 1.0 - alpha))
    return float(np.clip(stats.norm.sf(critical), bonferroni, alpha))
