"""What any test could decide at a design: the nearest curve of the other truth, and the Neyman-Pearson bound.

Takes a curve (``log y`` along one variable with the claim's own function divided out, one value per design point),
the design (the variable's values, the observations at each, the noise sd in log space) and the family of corrections
to scaling a true claim may carry, ``c (1 + q x^-w)`` with ``w >= w_min`` and ``q`` within the engine's cap. Returns
the family member nearest to the curve (:class:`Separation`): its distance ``delta`` in noise units, with the
intercept free, and the bounds every test obeys at that distance.

Why it holds for every test: a test that calls the nearest true curve ``inconsistent`` at most ``alpha`` of the time
is a level-``alpha`` test of that simple hypothesis, so against the curve ``delta`` away its power is at most the
Neyman-Pearson power of two Gaussian means, ``Phi(delta - z_(1-alpha))``. The bound assumes the noise sd is known, so
a test that estimates it does worse: the bound is an upper one.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import stats

from .ratio import FIRST, FORMS, LAST

W_GRID = np.linspace(0.05, 3.0, 296)  # the correction exponents w searched (step 0.01)
Q_GRID = np.geomspace(1e-3, 1e4, 701)  # |q| searched (7 decades, 100 per decade)
SLOW_W = np.round(np.arange(0.25, 3.0 + 1e-9, 0.025), 3)  # coarser grids: slowest_separable (it runs per fit), quick searches
SLOW_Q = np.geomspace(1e-3, 1e4, 281)


def np_power(delta: float, alpha: float = 0.05) -> float:
    """The most powerful level-``alpha`` test's power between two Gaussian mean vectors ``delta`` noise units apart:
    ``Phi(delta - z_(1-alpha))``.

    Pitfall avoided: quoting an engine's power without the ceiling the design sets; no test exceeds this one."""
    return float(stats.norm.cdf(delta - stats.norm.ppf(1.0 - alpha)))


def confirm_floor(delta: float, power: float) -> float:
    """The least rate at which any test that says one thing with probability ``power`` at one curve says it at
    another curve ``delta`` away: ``Phi(z_power - delta)`` (the Neyman-Pearson lemma read the other way)."""
    return float(stats.norm.cdf(stats.norm.ppf(power) - delta))


def seeds_needed(delta: float, seeds: int, alpha: float = 0.05, power: float = 0.80) -> int:
    """Seeds per cell at which the bound reaches ``power``: ``delta`` grows as the square root of the seeds."""
    need = stats.norm.ppf(1.0 - alpha) + stats.norm.ppf(power)
    return max(1, math.ceil(seeds * (need / delta) ** 2)) if delta > 0 else 0


@dataclass(frozen=True)
class Separation:
    """The family member nearest to a curve: ``c (1 + q x^-w)``, ``delta`` noise units away (intercept free)."""

    delta: float
    w: float
    q: float
    w_min: float
    form: str = "factor"
    p: float = 1.0

    @property
    def member(self) -> str:
        sign = "+" if self.q >= 0 else "-"
        if self.form == "additive":
            return f"c exp({self.q:.3g} x^-{self.w:.2f})"
        power = "" if self.p == 1 else f"^{self.p:g}"
        return f"c (1 {sign} {abs(self.q):.3g} x^-{self.w:.2f}){power}"

    def power_bound(self, alpha: float = 0.05) -> float:
        return np_power(self.delta, alpha)


def _log_factor(form: str, p: float, q: np.ndarray, z: np.ndarray) -> np.ndarray:
    """log of the correction's factor, one row per q: ``p log(1 + q z)`` (a factor form) or ``q z`` (additive, in log y);
    nan where undefined."""
    if form == "additive":
        return np.outer(q, z)
    r = 1.0 + np.outer(q, z)
    return p * np.log(np.where(r > 0, r, np.nan))


def _within_cap(form: str, f: np.ndarray) -> np.ndarray:
    """The rows whose factor stays within the engine's cap (:func:`simulate.stats.ratio._bounds`): within a factor
    ``FIRST`` either way at the smallest x (column 0) and within ``1 -+ LAST`` at the largest (the last column; in log y,
    ``+- log(1 + LAST)``, for the additive form)."""
    first, last = f[:, 0], f[:, -1]
    ok = np.isfinite(f).all(axis=1) & (np.abs(first) <= math.log(FIRST) + 1e-12)
    if form == "additive":
        return ok & (np.abs(last) <= math.log1p(LAST) + 1e-12)
    return ok & (last >= math.log1p(-LAST) - 1e-12) & (last <= math.log1p(LAST) + 1e-12)


def _nearest_by_w(log_y, x, n, ws, qs, base) -> tuple[np.ndarray, list]:
    """Per w in ``ws``: the smallest weighted residual sum of squares of ``log_y - base - log F`` (intercept profiled)
    over the engine's correction forms (FORMS: ``(1 + q x^-w)^p`` for p in 1/2, 1, 2, and ``exp(q x^-w)``) and ``q``
    in ``+-qs`` within the cap (inf where none is within it), and the member reaching it, (form, p, q).

    Per w, every (form, sign) block is formed in one array: the factor forms share one ``log(1 + q z)``, and the residuals
    of every member within the cap are reduced together (the same numbers as block by block; fewer numpy calls)."""
    wt = n / n.sum()
    out = np.full(len(ws), np.inf)
    members: list = [None] * len(ws)
    target = log_y - base
    signed = np.concatenate([qs, -qs])  # sign +1, then -1
    plus = np.arange(len(signed)) < len(qs)
    for i, w in enumerate(ws):
        z = x ** -w
        ends = z[[0, -1]]  # x ascending and w > 0: z falls along x, so 1 + q z is least at an end, and the cap reads the ends
        prod_e = np.outer(signed, ends)
        r_e = 1.0 + prod_e
        log_e = np.log(np.where(r_e > 0, r_e, np.nan))
        oks = [_within_cap(form, prod_e if form == "additive" else p * log_e) for form, p in FORMS]
        keep = np.logical_or.reduce(oks)
        if not keep.any():
            continue
        prod = np.outer(signed[keep], z)
        r = 1.0 + prod
        log_r = np.log(np.where(r > 0, r, np.nan))
        parts, spans = [], []
        for (form, p), ok in zip(FORMS, oks):
            for side in (plus, ~plus):  # the order ties are broken in: form, then sign
                block = ok & side
                if block.any():
                    rows = block[keep]  # only the members within the cap
                    parts.append(prod[rows] if form == "additive" else p * log_r[rows])
                    spans.append((form, p, signed[block]))
        resid = target - np.concatenate(parts)
        resid -= (resid * wt).sum(axis=1, keepdims=True)
        e = (n * resid ** 2).sum(axis=1)
        at = 0
        for form, p, q in spans:
            seg = e[at:at + len(q)]
            at += len(q)
            j = int(seg.argmin())
            if seg[j] < out[i]:
                out[i], members[i] = float(seg[j]), (form, p, float(q[j]))
    return out, members


def _design(log_y, x, n_obs, base):
    x = np.asarray(x, dtype=float)
    log_y = np.asarray(log_y, dtype=float)
    n = np.asarray(n_obs, dtype=float) * np.ones_like(x)
    base_v = np.zeros_like(x) if base is None else np.asarray(base, dtype=float)
    if x.ndim != 1 or len(x) < 3 or log_y.shape != x.shape or base_v.shape != x.shape:
        raise ValueError(f"a separation needs one value per design point (3 or more), got {x.shape} and {log_y.shape}")
    order = np.argsort(x)
    return log_y[order], x[order], n[order], base_v[order]


def nearest_corrected(log_y, x, n_obs, sigma: float, w_min: float, base=None, fine: bool = True) -> Separation:
    """The curve ``base + log F`` (``base`` 0 by default: a true claim's constant ratio) nearest to ``log_y`` in the
    weighted distance ``sqrt(sum_i n_i (log_y_i - a - f_i)^2) / sigma``, the intercept ``a`` profiled, where F is a
    correction the engine tries (``(1 + q x^-w)^p``, p in 1/2, 1, 2, or ``exp(q x^-w)``) with ``w >= w_min`` and q
    within the engine's cap: within a factor ``FIRST`` either way at the smallest x, within ``1 -+ LAST`` at the largest
    (corrections from above and below).

    Pitfall avoided: a grid over q that stops short of the cap; the grid spans seven decades and the cap is applied
    exactly, so the nearest member is never an artefact of the search range. The grid's steps (0.01 in w, 1% in q)
    can only miss a nearer member, which makes ``delta`` larger and the bound higher: it stays an upper bound
    (``fine=False``: the coarser grids of :func:`slowest_separable`, 0.025 in w and 6% in q, for a quick search)."""
    log_y, x, n, base_v = _design(log_y, x, n_obs, base)
    wgrid, qgrid = (W_GRID, Q_GRID) if fine else (SLOW_W, SLOW_Q)
    ws = wgrid[wgrid >= w_min - 1e-12]
    ss, members = _nearest_by_w(log_y, x, n, ws, qgrid, base_v)
    i = int(ss.argmin())
    if not math.isfinite(ss[i]):
        raise ValueError(f"no correction within the cap for w >= {w_min}")
    form, p, q = members[i]
    return Separation(math.sqrt(ss[i]) / sigma, float(ws[i]), q, w_min, form, p)


def slowest_separable(x, n_obs, sigma: float, candidates=(0.45, 0.4, 0.35, 0.3, 0.25), power: float = 0.80,
                      alpha: float = 0.05) -> tuple[float | None, float]:
    """The slowest correction exponent among ``candidates`` (descending) such that a log-log factor, ``(log log x)^1``
    or ``(log log x)^-1`` (the function test's target), stays told apart from every correction ``c (1 + q x^-w)`` with
    ``w`` at least that slow: the
    Neyman-Pearson bound at this design (values ``x > 1``, ``n_obs`` observations each, noise sd ``sigma``) at least
    ``power``. Returns (that exponent, its bound), or (None, the bound at the first candidate) where none is.

    Pitfall avoided: one fixed slowest correction for every design. Slow corrections mimic a missing log factor over a
    few decades, so allowing them everywhere makes log factors unfalsifiable; excluding them everywhere makes a true
    claim with a slow correction a violation once the range is wide (1 + 5 d^-0.3 over 2^6..2^20: 10% of trials)."""
    x = np.asarray(x, dtype=float)
    if len(x) < 3 or not np.all(x > 1.0) or not sigma > 0:
        return None, math.nan
    n = np.asarray(n_obs, dtype=float) * np.ones_like(x)
    ws, suffix = _log_factor_distances(tuple(np.round(x, 12)), tuple(n), min(candidates))
    chosen, bound = None, math.nan
    for w in sorted(candidates, reverse=True):
        b = np_power(math.sqrt(float(suffix[int(np.searchsorted(ws, w - 1e-9))])) / sigma, alpha)
        if b < power:
            return chosen, (b if chosen is None else bound)
        chosen, bound = w, b
    return chosen, bound


@lru_cache(maxsize=256)
def _log_factor_distances(x: tuple, n: tuple, floor: float) -> tuple[np.ndarray, np.ndarray]:
    """(the w of SLOW_W at or above ``floor``, per w the least squared distance (unit noise) from a log-log factor
    ``(log log x)^+-1`` to a correction decaying at least like x^-w). It does not depend on the noise, so a design seen
    before costs nothing."""
    xs, ns = np.array(x), np.array(n)
    u = np.log(xs)
    # the function test's own target: a log-log factor, log(log log x) in log y (lifted where some log x <= e). A
    # whole log factor is farther: told from it, a d^-0.25 correction levelled a log log d at 941 seeds per cell
    lx = np.log(np.log(u)) if np.all(u > math.e) else np.log1p(np.log1p(u))
    ws = SLOW_W[SLOW_W >= floor - 1e-12]
    ss = np.full(len(ws), np.inf)
    for sign in (1.0, -1.0):
        log_y, xo, no, base_v = _design(sign * lx, xs, ns, None)
        ss = np.minimum(ss, _nearest_by_w(log_y, xo, no, ws, SLOW_Q, base_v)[0])
    return ws, np.minimum.accumulate(ss[::-1])[::-1]  # the nearest member with w at least ws[i]
