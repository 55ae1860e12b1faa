"""Exact group-sequential boundaries for Lan-DeMets alpha spending.

A sweep that grows until it decides looks at its data several times. At look k, at information
fraction t_k, the test statistics of the looks are jointly normal with
``corr(Z_i, Z_j) = sqrt(t_i / t_j)`` (independent increments). The boundary c_k is the value with

    P(Z_1 < c_1, ..., Z_{k-1} < c_{k-1}, Z_k >= c_k) = alpha*(t_k) - alpha*(t_{k-1}),

so that the chance of any false decision over all looks is exactly alpha*(1) = alpha. The look is
then tested at the nominal level ``1 - Phi(c_k)``.

Pitfall avoided: testing each look at its spending increment (a Bonferroni bound over the looks)
ignores the correlation between looks and is conservative: with 4 looks under Pocock spending the
last look is tested near 0.009 where the exact boundary allows about 0.02.

The boundaries come from the Armitage-McPherson-Rowe recursion (deterministic, milliseconds);
the tests check them against scipy's multivariate normal CDF with the looks' correlation
(:func:`crossing_probability`) and against published values (gsDesign's ``sfLDOF``, Jennison &
Turnbull's Pocock-type table).
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import optimize, stats

from ibcheck.theory.argtypes import refused
from ibcheck.theory.errors import InputError

RULES = ("obrien-fleming", "pocock")
_TOL = 1e-9


def spending(rule: str, t: float, alpha: float = 0.05) -> float:
    """Cumulative alpha spent by information fraction ``t`` (Lan-DeMets); 0 at t = 0, alpha at t = 1.

    * O'Brien-Fleming type: ``2 (1 - Phi(z_{1 - alpha/2} / sqrt(t)))`` (strict early, close to alpha at the end);
    * Pocock type: ``alpha ln(1 + (e - 1) t)`` (even over the looks).
    """
    if rule not in RULES:
        raise refused("spending", rule, f"is not one of {', '.join(RULES)}")
    t = min(max(float(t), 0.0), 1.0)
    if t == 0:
        return 0.0
    if rule == "pocock":
        return alpha * math.log(1 + (math.e - 1) * t)
    z = stats.norm.ppf(1 - alpha / 2)
    return float(2 * stats.norm.sf(z / math.sqrt(t)))


def _corr(fractions: tuple[float, ...]) -> np.ndarray:
    t = np.array(fractions, dtype=float)
    return np.sqrt(np.minimum.outer(t, t) / np.maximum.outer(t, t))


def _below(bounds: tuple[float, ...], fractions: tuple[float, ...]) -> float:
    """P(Z_j < bounds_j for every look j), the looks' statistics correlated as sqrt(t_i / t_j)."""
    if len(bounds) == 1:
        return float(stats.norm.cdf(bounds[0]))
    upper = np.minimum(np.array(bounds, dtype=float), 40.0)
    mvn = stats.multivariate_normal(mean=np.zeros(len(bounds)), cov=_corr(fractions), maxpts=40_000 * len(bounds),
                                    abseps=1e-7, releps=1e-6)
    return float(mvn.cdf(upper, rng=np.random.default_rng(12345)))


def crossing_probability(bounds: list[float], fractions: list[float]) -> float:
    """P(some look's statistic reaches its bound) under the null: 1 - P(all below)."""
    return 1.0 - _below(tuple(bounds), tuple(fractions))


_GRID = 801  # Simpson points per look (odd)


def _simpson(lo: float, hi: float, n: int = _GRID) -> tuple[np.ndarray, np.ndarray]:
    x = np.linspace(lo, hi, n)
    w = np.ones(n)
    w[1:-1:2], w[2:-1:2] = 4.0, 2.0
    return x, w * (hi - lo) / (3 * (n - 1))


@lru_cache(maxsize=4096)
def _boundaries(fractions: tuple[float, ...], rule: str, alpha: float) -> tuple[float, ...]:
    """The recursion of Armitage, McPherson and Rowe on the score scale S_k = Z_k sqrt(t_k):
    the sub-density of S_k on the continuation region is carried from look to look by a
    convolution with the N(0, t_k - t_{k-1}) increment (Simpson's rule), and each boundary solves
    one smooth equation in one unknown. Deterministic, and checked against scipy's multivariate
    normal CDF (:func:`crossing_probability`) and published tables in the tests."""
    out: list[float] = []
    spent_before = 0.0
    x: np.ndarray | None = None  # grid, weights and sub-density of S at the previous look
    w: np.ndarray | None = None
    dens: np.ndarray | None = None
    t_prev = 0.0
    for t in fractions:
        target = spending(rule, t, alpha) - spent_before
        sd_t, delta = math.sqrt(t), t - t_prev
        if dens is None or x is None or w is None:
            def cross(c: float) -> float:
                return float(stats.norm.sf(c))
        else:
            sd = math.sqrt(delta)
            xs, ws, ds = x, w, dens

            def cross(c: float) -> float:
                return float(np.sum(ws * ds * stats.norm.sf((c * sd_t - xs) / sd)))
        if target <= _TOL:
            c = math.inf
        elif cross(-8.0) < target:
            c = -8.0  # even a bound crossed at once spends less than the target
        else:
            c = float(optimize.brentq(lambda c: cross(c) - target, -8.0, 40.0, xtol=1e-10))
        out.append(c)
        spent_before += target
        # the sub-density of S_k on the continuation region S_k < c sqrt(t)
        hi = min(c * sd_t, 9.0 * sd_t) if math.isfinite(c) else 9.0 * sd_t
        xn, wn = _simpson(-9.0 * sd_t, max(hi, -9.0 * sd_t + 1e-9))
        if dens is None or x is None or w is None:
            dn = stats.norm.pdf(xn / sd_t) / sd_t
        else:
            sd = math.sqrt(delta)
            dn = (stats.norm.pdf((xn[:, None] - x[None, :]) / sd) / sd) @ (w * dens)
        x, w, dens, t_prev = xn, wn, dn, t
    return tuple(out)


def boundaries(fractions: list[float], rule: str = "pocock", alpha: float = 0.05) -> list[float]:
    """The exact one-sided boundaries c_k for looks at information ``fractions`` (increasing, in (0, 1])."""
    fr = tuple(round(float(t), 12) for t in fractions)
    if not fr or any(not (0 < t <= 1) for t in fr) or any(b <= a for a, b in zip(fr, fr[1:])):
        raise InputError(f"information fractions {list(fractions)} must be increasing and in (0, 1]")
    if rule not in RULES:
        raise refused("spending", rule, f"is not one of {', '.join(RULES)}")
    return list(_boundaries(fr, rule, float(alpha)))


def nominal_levels(fractions: list[float], rule: str = "pocock", alpha: float = 0.05) -> list[float]:
    """The one-sided level each look is tested at: ``1 - Phi(c_k)`` (0 where a look spends nothing)."""
    return [float(stats.norm.sf(c)) if math.isfinite(c) else 0.0 for c in boundaries(fractions, rule, alpha)]
