"""The statistics kernels: one least-squares routine, one way to combine runs, one censored mean.

Every fit in the verdict engine (exponents, drift, local exponents, the next round's variance
gains) goes through :func:`ols`; trajectories go through :func:`combine_runs`; censored
measurements through :func:`censored_cell_means`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from ibcheck.simulate.stats.laws import t_quantile


@dataclass(frozen=True)
class Estimate:
    """Coefficients, their covariance and the residual degrees of freedom of one linear fit."""

    beta: np.ndarray
    cov: np.ndarray
    df: int
    resid: np.ndarray

    def se(self, j: int) -> float:
        return float(math.sqrt(max(float(self.cov[j, j]), 0.0)))

    def conf_int(self, j: int, alpha: float = 0.05) -> tuple[float, float]:
        """The two-sided (1 - alpha) t interval of coefficient j (infinite without degrees of freedom)."""
        if self.df <= 0:
            return (-math.inf, math.inf)
        t = t_quantile(1 - alpha / 2, self.df)
        b, s = float(self.beta[j]), self.se(j)
        return (b - t * s, b + t * s)


class LeastSquares:
    """Least squares on one design ``X`` (columns: the regressors, the intercept given by the caller): the one place
    every fit of the verdict engine solves a linear least-squares problem (exponent fits, bootstrap resamples, the
    next round's variance gains, the correction-to-scaling profile).

    Each method says which solve it is: ``coef`` (LAPACK's minimum-norm ``lstsq``), ``projector`` (the
    Moore-Penrose pseudo-inverse of X, for many right-hand sides), ``cov_unscaled`` ((X'X)^-1 from the SVD of X,
    rank-revealing), ``unidentified`` (the coefficients the design cannot separate) and ``gain_rows`` ((X'X)^+ X').
    Pitfall avoided: ``pinv(X'X)`` squares the condition number and drops the nearly collinear direction, so the
    standard error of log x beside log log x over d = 1000..1100 collapsed (22 where the SVD of X gives 11,000)
    instead of growing; four copies of the same algebra also drift apart in how they treat such a design."""

    def __init__(self, X: np.ndarray):
        self.X = np.asarray(X, dtype=float)
        self._gram_pinv: np.ndarray | None = None
        self._pinv: np.ndarray | None = None
        self._svd: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    @property
    def df(self) -> int:
        return self.X.shape[0] - self.X.shape[1]

    def coef(self, y: np.ndarray) -> np.ndarray:
        beta, *_ = np.linalg.lstsq(self.X, np.asarray(y, dtype=float), rcond=None)
        return beta

    def projector(self) -> np.ndarray:
        if self._pinv is None:
            self._pinv = np.linalg.pinv(self.X)
        return self._pinv

    def _singular(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(singular values, right singular vectors, kept): a direction is kept when its singular value is above
        machine precision relative to the largest (LAPACK's own rank rule)."""
        if self._svd is None:
            _, s, vt = np.linalg.svd(self.X, full_matrices=False)
            tol = (float(s.max()) if s.size else 0.0) * max(self.X.shape) * np.finfo(float).eps
            self._svd = (s, vt, s > tol)
        return self._svd

    def unidentified(self) -> list[int]:
        """The coefficients with weight on a direction the design cannot resolve (exactly collinear columns)."""
        s, vt, keep = self._singular()
        if keep.all():
            return []
        weight = np.abs(vt[~keep]).max(axis=0)
        return [j for j in range(vt.shape[1]) if weight[j] > 1e-6]

    def cov_unscaled(self) -> np.ndarray:
        """(X'X)^-1 as V diag(1/s^2) V' over the resolved directions; a coefficient the design cannot separate gets
        an infinite variance (never a small one)."""
        s, vt, keep = self._singular()
        cov = (vt[keep].T / s[keep] ** 2) @ vt[keep]
        for j in self.unidentified():
            cov[j, j] = np.inf
        return cov

    def gain_rows(self) -> np.ndarray:
        """(X'X)^+ X': how one more observation at each row moves each coefficient (the next round's gains)."""
        if self._gram_pinv is None:
            self._gram_pinv = np.linalg.pinv(self.X.T @ self.X)
        return self._gram_pinv @ self.X.T


def ols(X: np.ndarray, y: np.ndarray) -> Estimate:
    """Ordinary least squares of y on the columns of X (give the intercept column yourself).

    Pitfall avoided: ``inv(X'X)`` on a nearly collinear design (log x beside log log x over a
    short range) loses every digit; the pseudo-inverse keeps the estimate and lets the
    covariance show the collinearity as a large SE. With no residual degree of freedom the
    covariance is nan, never 0."""
    ls = LeastSquares(X)
    y = np.asarray(y, dtype=float)
    beta = ls.coef(y)
    resid = y - ls.X @ beta
    df = ls.df
    s2 = float(resid @ resid) / df if df > 0 else float("nan")
    cov = s2 * ls.cov_unscaled()
    return Estimate(beta, cov, df, resid)


def combine_runs(estimates: list[Estimate]) -> Estimate:
    """One estimate from independent runs: the mean of the per-run coefficients, with the
    covariance of that mean from their spread across runs and R - 1 degrees of freedom.

    Pitfall avoided: the points along one GD run are not independent observations; pooling
    them in one regression reports a CI from hundreds of points where there are R runs. The
    spread between runs is the honest error (a run is one observation)."""
    B = np.array([e.beta for e in estimates], dtype=float)
    R = B.shape[0]
    mean = B.mean(axis=0)
    if R < 2:
        return Estimate(mean, np.full((B.shape[1], B.shape[1]), np.nan), 0, np.zeros(0))
    cov = np.cov(B, rowvar=False, ddof=1).reshape(B.shape[1], B.shape[1]) / R
    return Estimate(mean, cov, R - 1, B - mean)


def tobit_terms(y: np.ndarray, mu: np.ndarray, log_s, side: np.ndarray) -> tuple[float, np.ndarray, float]:
    """The Tobit log-likelihood of rows y (side 0 exact, +1 a lower bound, -1 an upper bound) around
    means mu with sd exp(log_s): (log-likelihood, its gradient per row in mu, its derivative in log s).

    Pitfall avoided: ``log(1 - Phi(z))`` underflows for a bound far below the mean; logsf/logcdf
    and the ratios phi/(1 - Phi), phi/Phi are taken in log space."""
    s = math.exp(log_s)
    z = (y - mu) / s
    logpdf = stats.norm.logpdf(z)
    ll = np.where(side == 0, logpdf - log_s, np.where(side > 0, stats.norm.logsf(z), stats.norm.logcdf(z)))
    # d ll / d z: -z (exact), -phi/(1 - Phi) (a lower bound), phi/Phi (an upper bound)
    dz = np.where(side == 0, -z, np.where(side > 0, -np.exp(logpdf - stats.norm.logsf(z)), np.exp(logpdf - stats.norm.logcdf(z))))
    g_mu = -dz / s  # dz/dmu = -1/s
    g_ls = np.where(side == 0, z * z - 1.0, -dz * z)  # dz/dlog s = -z, plus -1 from log s for exact values
    return float(ll.sum()), g_mu, float(g_ls.sum())


@dataclass(frozen=True)
class CensoredMeans:
    """Per cell: the maximum-likelihood mean of log y under censoring, with a pooled sd."""

    means: list[float]
    identified: list[bool]  # False: every row of the cell is censored on one side (the mean is only a bound)
    sigma: float


def censored_cell_means(cells: list[list[tuple[float, int]]]) -> CensoredMeans:
    """Tobit means of log y per cell, with one noise sd shared by the cells.

    ``cells[c]`` lists (log y, side) per seed: side 0 is an exact value, +1 a lower bound
    (``AtLeast``: the value is at least y), -1 an upper bound (``AtMost``).

    Pitfall avoided: dropping the censored rows (a radius search that found no flip up to its
    limit) biases a cell's mean toward the seeds that did flip, and so the fitted exponent.
    The Tobit likelihood uses each bound for what it is: P(y >= bound) or P(y <= bound).
    A cell whose rows are all censored on one side has no finite maximum; its mean is reported
    as not identified (capped 10 sd beyond its bounds), never as the bound itself."""
    flat = [(c, ly, side) for c, rows in enumerate(cells) for ly, side in rows]
    ys = np.array([ly for _, ly, _ in flat])
    exact = [ly for _, ly, s in flat if s == 0]
    spread = float(np.std(exact, ddof=1)) if len(exact) > 2 else 0.0
    sd0 = max(spread, 0.05 * max(1.0, float(np.ptp(ys)) if len(ys) > 1 else 1.0), 1e-3)
    identified = [any(s == 0 for _, s in rows) or len({s for _, s in rows}) > 1 for rows in cells]
    lo, hi = float(ys.min()) - 10 * (sd0 + 1.0), float(ys.max()) + 10 * (sd0 + 1.0)
    idx = np.array([c for c, _, _ in flat])
    side = np.array([s for _, _, s in flat])

    def nll(p: np.ndarray) -> tuple[float, np.ndarray]:
        ll, g_mu, g_ls = tobit_terms(ys, p[:-1][idx], p[-1], side)
        grad = np.zeros_like(p)
        np.add.at(grad, idx, g_mu)
        grad[-1] = g_ls
        return -ll, -grad

    start = []
    for rows in cells:
        vals = [ly for ly, _ in rows]
        start.append(float(np.mean(vals)))
    x0 = np.array(start + [math.log(sd0)])
    bounds = [(lo, hi)] * len(cells) + [(math.log(1e-6), math.log(1e3))]
    res = optimize.minimize(nll, x0, method="L-BFGS-B", jac=True, bounds=bounds)
    means = [float(m) for m in res.x[:-1]]
    return CensoredMeans(means, identified, float(math.exp(res.x[-1])))


def censored_regression(X: np.ndarray, y: np.ndarray, side: np.ndarray, df: int) -> Estimate:
    """Tobit regression of y on X (rows: exact values, lower bounds (+1) or upper bounds (-1)),
    by maximum likelihood; the covariance from the observed information, with ``df`` degrees of
    freedom given by the caller (the cells, not the rows, for a fit across cells).

    Used where a cell's rows are all censored on one side: its mean has no finite estimate, but
    its bounds still pull the regression through the likelihood."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    side = np.asarray(side)
    b0 = LeastSquares(X).coef(y)
    r0 = y - X @ b0
    s0 = max(float(np.std(r0)), 1e-3)

    def nll(p: np.ndarray) -> tuple[float, np.ndarray]:
        ll, g_mu, g_ls = tobit_terms(y, X @ p[:-1], p[-1], side)
        return -ll, -np.concatenate([X.T @ g_mu, [g_ls]])

    res = optimize.minimize(nll, np.concatenate([b0, [math.log(s0)]]), method="L-BFGS-B", jac=True)
    p = res.x
    # observed information by central differences of the analytic gradient
    k = len(p)
    H = np.zeros((k, k))
    for j in range(k):
        h = 1e-5 * max(1.0, abs(p[j]))
        e = np.zeros(k)
        e[j] = h
        H[:, j] = (nll(p + e)[1] - nll(p - e)[1]) / (2 * h)
    H = 0.5 * (H + H.T)
    cov = np.linalg.pinv(H)[:-1, :-1]
    resid = y - X @ p[:-1]
    return Estimate(p[:-1], cov, df, resid)
