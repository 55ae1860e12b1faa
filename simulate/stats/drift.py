"""Pre-asymptotic drift: local (effective) exponents and a correction-to-scaling fit.

A theorem's exponent is a statement about x -> infinity; a simulation sees a finite range.
Finite-size-scaling practice separates the two:

* **local exponents**: the slope of log y against log x over sliding windows of adjacent
  scales, each with a t-based CI. An exponent that still moves across the range has not
  reached its regime.
* **drift test**: the squared term of ``log y = c + a log x + b (log x - mean)^2`` is the
  derivative of the local exponent, ``d a_local / d log x = 2 b``; its t-test is the drift
  test, and its sign relative to ``prediction - a`` gives the direction (toward / away).
* **correction to scaling**: ``y = A x^a (1 + B x^-w)``, fitted in log space. For fixed a, w and
  B the rest is linear (closed form); B is found by a bounded scalar search (``1 + B x^-w > 0``)
  and w on a grid. The profile of the residual sum of squares over a gives the extrapolated
  exponent and its profile-likelihood CI (F test on 1 and df degrees of freedom).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from ibcheck.simulate.stats.estimate import LeastSquares, combine_runs, ols
from ibcheck.simulate.stats.fit import design, run_groups

OMEGAS = tuple(float(w) for w in np.geomspace(0.05, 2.0, 16))  # correction exponents w tried
MIN_LEVELS_EXTRAPOLATION = 5


@dataclass
class LocalExponent:
    """The slope along one variable over a window of adjacent scales [lo, hi] (log values)."""

    variable: str
    log_lo: float
    log_hi: float
    estimate: float
    se: float | None
    df: int
    ci: tuple[float, float] | None
    cells: int

    @property
    def log_center(self) -> float:
        return 0.5 * (self.log_lo + self.log_hi)

    def as_json(self) -> dict:
        return {"log_lo": self.log_lo, "log_hi": self.log_hi, "log_center": self.log_center, "estimate": self.estimate,
                "se": self.se, "df": self.df, "ci": list(self.ci) if self.ci else None, "cells": self.cells}


@dataclass
class Drift:
    """Does the local exponent along ``variable`` move across the range, and which way?"""

    variable: str
    local: list[LocalExponent]
    slope: float | None  # d(local exponent) / d(log x)
    p_value: float | None
    direction: str  # "toward" or "away" from the prediction, "flat" when there is no drift estimate
    predicted: float
    alpha: float = 0.05
    toward_zero: bool = False  # the variable tends to 0: its asymptotic end is the smallest scale

    @property
    def significant(self) -> bool:
        return self.p_value is not None and self.p_value < self.alpha

    @property
    def asymptotic_window(self) -> LocalExponent | None:
        """The window nearest the theorem's limit: the largest scales, or the smallest where x -> 0."""
        if not self.local:
            return None
        return self.local[0] if self.toward_zero else self.local[-1]

    def describe(self) -> str:
        if len(self.local) >= 2:
            seq = self.local[::-1] if self.toward_zero else self.local
            a, b = seq[0].estimate, seq[-1].estimate
            along = f" as {self.variable} decreases" if self.toward_zero else ""
            return f"local exponent {a:.2f} -> {b:.2f}{along}, moving {self.direction} {self.predicted:g}"
        return "no local exponents (too few scales)"

    def as_json(self) -> dict:
        return {"variable": self.variable, "local": [le.as_json() for le in self.local], "slope": self.slope,
                "p_value": self.p_value, "direction": self.direction, "significant": self.significant,
                "predicted": self.predicted}


@dataclass
class Extrapolated:
    """The exponent of ``y = A x^a (1 + B x^-w)`` along ``variable``, with its profile CI."""

    variable: str
    estimate: float | None
    ci: tuple[float, float] | None
    omega: float | None = None
    B: float | None = None
    df: int = 0
    note: str = ""

    def as_json(self) -> dict:
        return {"variable": self.variable, "estimate": self.estimate, "ci": list(self.ci) if self.ci else None,
                "omega": self.omega, "B": self.B, "df": self.df, "note": self.note}


def _slope(X: np.ndarray, y: np.ndarray, j: int, level: float):
    """Coefficient j of OLS y ~ X (X has the intercept column), its SE, df and t-CI."""
    e = ols(X, y)
    if e.df <= 0:
        return float(e.beta[j]), None, e.df, None
    return float(e.beta[j]), e.se(j), e.df, e.conf_int(j, 1 - level)


def windows(levels: list[float]) -> list[tuple[int, int]]:
    """Index ranges [i, j] of adjacent distinct scales: 2 or 3 levels each for short grids,
    about a third of the range (sliding by half a window) for long ones such as trajectories."""
    m = len(levels)
    if m < 3:
        return []
    size = 2 if m <= 4 else 3 if m <= 8 else max(3, round(m / 3))
    step = max(1, size // 2) if m > 8 else 1
    out = []
    i = 0
    while i + size <= m:
        out.append((i, i + size - 1))
        i += step
    if out[-1][1] != m - 1:
        out.append((m - size, m - 1))
    return out


def local_exponents(rows: list[dict], cells: list[dict], variables: list[str], v: str, level: float = 0.95,
                    trajectory: bool = False) -> list[LocalExponent]:
    """Slopes along ``v`` over sliding windows of adjacent scales.

    Within a window the regression runs on the seed-level rows (``rows``: dicts with ``log_<v>``
    for every variable and ``lm``, the offset-corrected log measure), with the other variables
    that vary inside the window as covariates, so that the window's own replication gives its
    CI. ``cells`` fixes the distinct scales. Along trajectories each run is fitted inside the
    window and the runs are combined (one run is one observation).
    """
    levels = sorted({c["log_" + v] for c in cells})
    if trajectory:
        return _local_runs(rows, levels, v, level)
    out = []
    for i, j in windows(levels):
        lo, hi = levels[i], levels[j]
        sub = [r for r in rows if lo - 1e-12 <= r["log_" + v] <= hi + 1e-12]
        varying = [u for u in variables if len({round(r["log_" + u], 12) for r in sub}) > 1]
        X = np.hstack([np.ones((len(sub), 1)), np.array([[r["log_" + u] for u in varying] for r in sub]).reshape(len(sub), len(varying))])
        y = np.array([r["lm"] for r in sub])
        est, se, df, ci = _slope(X, y, 1 + varying.index(v), level)
        n_cells = len({tuple(round(r["log_" + u], 12) for u in variables) for r in sub})
        out.append(LocalExponent(v, lo, hi, est, se, df, ci, n_cells))
    return out


def _local_runs(rows: list[dict], levels: list[float], v: str, level: float) -> list[LocalExponent]:
    """Local exponents along trajectories: per window, each run's slope, combined across runs."""
    out = []
    runs = run_groups(rows)
    for i, j in windows(levels):
        lo, hi = levels[i], levels[j]
        ests = []
        for pts in runs.values():
            sub = [r for r in pts if lo - 1e-12 <= r["log_" + v] <= hi + 1e-12]
            if len({round(r["log_" + v], 12) for r in sub}) >= 3:
                X = np.column_stack([np.ones(len(sub)), [r["log_" + v] for r in sub]])
                ests.append(ols(X, np.array([r["lm"] for r in sub])))
        if len(ests) < 2:
            continue
        c = combine_runs(ests)
        ci = c.conf_int(1, 1 - level)
        out.append(LocalExponent(v, lo, hi, float(c.beta[1]), c.se(1), c.df, ci, len(ests)))
    return out


def drift_test(curvature: dict | None, v: str, estimate: float, predicted: float, local: list[LocalExponent],
               alpha: float = 0.05, toward_zero: bool = False) -> Drift:
    """The squared-term test and its direction (see the module docstring).

    ``curvature`` is the fit's squared-term coefficient along ``v`` (:attr:`Fit.curvature`: the
    regression is run once, by the fit); None where the design has too few scales. ``toward_zero``:
    ``v`` tends to 0, so "toward the prediction" is judged as ``v`` decreases."""
    if not curvature or not math.isfinite(curvature.get("se", float("nan"))):
        return Drift(v, local, None, None, "flat", predicted, alpha, toward_zero)
    b2, se2 = curvature["coef"], curvature["se"]
    slope = 2.0 * b2
    p = curvature["p_value"] if se2 > 0 else (0.0 if b2 != 0 else None)
    if p is not None and not math.isfinite(p):
        p = None
    gap = predicted - estimate
    along = -slope if toward_zero else slope  # the change of the local exponent toward the theorem's limit
    if slope == 0:
        direction = "flat"
    elif gap == 0:
        direction = "away"
    else:
        direction = "toward" if (along > 0) == (gap > 0) else "away"
    return Drift(v, local, slope, p, direction, predicted, alpha, toward_zero)


def _linear(L: np.ndarray, i: int, free: bool) -> tuple[np.ndarray, np.ndarray]:
    """(X, its least-squares projector) of the linear part: an intercept and every ``log x_u`` (``log x_i`` too where
    its exponent is ``free``). It does not depend on w or B, so a search over them forms it once."""
    X = np.column_stack([np.ones(L.shape[0])] + [L[:, u] for u in range(L.shape[1]) if free or u != i])
    return X, LeastSquares(X).projector()


def _rss_fixed(L: np.ndarray, y: np.ndarray, i: int, a: float | None, w: float,
               linear: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[float, np.ndarray, float]:
    """RSS of ``log y = c + sum_u a_u log x_u + log(1 + B z)``, ``z = (x_i / min x_i)^-w``, with a_i fixed to
    ``a`` (None: free), minimized over B (bounded scalar search; 1 + B z > 0) and the linear
    coefficients (closed form). Returns (rss, coefficients, B). ``linear``: :func:`_linear`'s, where the caller has it."""
    z = np.exp(-w * (L[:, i] - L[:, i].min()))
    X, pinv = _linear(L, i, a is None) if linear is None else linear
    base = y - (a * L[:, i] if a is not None else 0.0)

    def rss(B: float) -> float:
        t = base - np.log1p(B * z)
        r = t - X @ (pinv @ t)
        return float(r @ r)

    lo = -0.999 / float(z.max())
    res = optimize.minimize_scalar(rss, bounds=(lo, 1e3), method="bounded", options={"xatol": 1e-6})
    B = float(res.x)
    t = base - np.log1p(B * z)
    return rss(B), pinv @ t, B


def _best_w(L, y, i, a) -> tuple[float, float]:
    """(rss, w): w on the grid, then refined between the grid neighbours of the best one."""
    linear = _linear(L, i, a is None)
    vals = [_rss_fixed(L, y, i, a, w, linear)[0] for w in OMEGAS]
    j = int(np.argmin(vals))
    lo, hi = OMEGAS[max(j - 1, 0)], OMEGAS[min(j + 1, len(OMEGAS) - 1)]
    res = optimize.minimize_scalar(lambda w: _rss_fixed(L, y, i, a, w, linear)[0], bounds=(lo, hi), method="bounded",
                                   options={"xatol": 1e-4})
    return (float(res.fun), float(res.x)) if res.fun < vals[j] else (vals[j], OMEGAS[j])


def _profile(L, y, i, a):
    return _best_w(L, y, i, a)[0]


def correction_fit(cells: list[dict], variables: list[str], v: str, level: float = 0.95, span: float = 4.0) -> Extrapolated:
    """Extrapolated exponent along ``v`` from ``y = A x^a (1 + B x^-w)`` (see the module docstring).

    Needs at least 5 distinct scales of ``v`` (intercept, a, B and w along it, plus one degree
    of freedom); otherwise the fit is reported as not identifiable, never guessed.
    """
    L = design(cells, variables)
    y = np.array([c["mean_log"] for c in cells])
    i = variables.index(v)
    levels = len({round(x, 12) for x in L[:, i]})
    df = len(cells) - (len(variables) + 1) - 2
    if levels < MIN_LEVELS_EXTRAPOLATION or df < 1:
        return Extrapolated(v, None, None, df=max(df, 0),
                            note=f"not identifiable: needs >= {MIN_LEVELS_EXTRAPOLATION} distinct values of {v} and 1 residual degree "
                                 f"of freedom (has {levels} values, {len(cells)} cells)")
    _, w0 = _best_w(L, y, i, None)
    rss0, beta0, B0 = _rss_fixed(L, y, i, None, w0)
    a0 = float(beta0[1 + i])
    scale = max(float(np.ptp(L[:, i])), 1e-12)
    if rss0 <= 1e-24 * max(1.0, float(y @ y)):
        return Extrapolated(v, a0, (a0, a0), w0, B0, df, note="exact fit (no residual)")
    crit = rss0 * (1 + stats.f.ppf(level, 1, df) / df)

    seen: dict[float, float] = {}

    def excess(a):  # memoized: brentq starts from the bracket's ends, whose values the loop below has already formed
        if a not in seen:
            seen[a] = _profile(L, y, i, a) - crit
        return seen[a]

    lo_edge, hi_edge = a0 - span, a0 + span
    ends = []
    for edge in (lo_edge, hi_edge):
        if excess(edge) < 0:
            ends.append(-math.inf if edge < a0 else math.inf)
        elif excess(a0) >= 0:  # rounding: the optimum's own profile at the criterion (near-exact data); no bracket
            ends.append(a0)
        else:
            ends.append(float(optimize.brentq(excess, min(a0, edge), max(a0, edge), xtol=1e-6)))
    note = f"w = {w0:.3g} (searched in {OMEGAS[0]:g}..{OMEGAS[-1]:g}), range of log {v}: {scale:.3g}"
    if not all(math.isfinite(e) for e in ends):
        note += "; the profile stays flat past +-" + f"{span:g}: the correction and the exponent are confounded"
    return Extrapolated(v, a0, (ends[0], ends[1]), w0, B0, df, note=note)
