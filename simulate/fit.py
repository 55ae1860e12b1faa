"""Exponent fits: OLS on cell means of log(measure) against log d, log k, log n, ...

* Seeds are averaged in log space within each grid cell first; the regression runs on the
  cell means, with a t-based CI on (cells - parameters) degrees of freedom. (Clustering on a
  handful of seeds under-covers: with 5 seeds coverage fell to about 0.8.)
* A BCa bootstrap over cells (``scipy.stats.bootstrap``) is reported beside it.
* Polylog factors the claim states enter as known offsets: a bound ``sqrt(d) log(d)^2`` is
  fitted as ``log m - 2 log log d = c + b log d`` (ignoring the offset moved a true 0.5 to
  about 0.86 in simulation).
* Residual curvature (a squared term per variable) and the ``log d x log k`` interaction are
  reported, so that a fit outside its regime shows up.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from ibcheck.theory.errors import InputError


@dataclass
class Fit:
    variables: list[str]
    estimate: dict[str, float]
    se: dict[str, float]
    ci: dict[str, tuple[float, float]]
    df: int
    intercept: float
    n_cells: int
    cells: list[dict]  # per cell: variable values, mean log measure (offset removed), residual, n_seeds
    bca: dict[str, tuple[float, float]] | None = None
    bca_note: str | None = None  # why there is no BCa interval (too few cells, or the bootstrap failed and how)
    curvature: dict[str, dict] = field(default_factory=dict)
    interaction: dict | None = None
    dropped: int = 0  # seed rows without a finite positive measure


def log_of(row: dict, name: str) -> float | None:
    """Natural log of ``row[name]``, read from ``row["log_" + name]`` when present.

    Pitfall avoided: T (the sum of step sizes) and the loss reach 1e800 and 1e-800 under the
    loss-based schedule, past float64; such rows carry the logarithm instead of the value.
    Returns None for a missing, non-finite or non-positive value.
    """
    lg = row.get("log_" + name)
    if lg is not None:
        lg = float(lg)
        return lg if math.isfinite(lg) else None
    x = row.get(name)
    if x is None or isinstance(x, bool):
        return None
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(x) or x <= 0:
        return None
    return math.log(x)


def _loglog(lx: float) -> float:
    """log(log x) from log x; nan where log x <= 0 (the polylog offset is undefined there)."""
    return math.log(lx) if lx > 0 else float("nan")


def seed_rows(rows: list[dict], variables: list[str], offsets: dict[str, tuple[float, float]] | None = None) -> tuple[list[dict], int]:
    """Each usable row as ``{"log_<v>": ..., "lm": log measure minus the polylog offsets, "seed": ...}``.

    ``offsets[v] = (log power, loglog power)``: ``lm = log m - p log(log v) - q log(log(log v))``.
    Rows without a finite positive measure (or variable) are counted, not used.
    """
    out, dropped = [], 0
    for r in rows:
        lm = log_of(r, "value")
        lx = [log_of(r, v) for v in variables]
        if lm is None or any(x is None for x in lx):
            dropped += 1
            continue
        for v, (p, q) in (offsets or {}).items():
            x = lx[variables.index(v)] if v in variables else log_of(r, v)
            if x is None:
                lm = float("nan")
                break
            if p:
                lm -= p * _loglog(x)
            if q:
                lm -= q * _loglog(_loglog(x))
        if not math.isfinite(lm):
            dropped += 1
            continue
        out.append({**{"log_" + v: x for v, x in zip(variables, lx)}, "lm": lm, "seed": r.get("seed")})
    return out, dropped


def cell_means(rows: list[dict], variables: list[str], offsets: dict[str, tuple[float, float]] | None = None) -> tuple[list[dict], int]:
    """Mean of log(measure) over seeds per cell, minus the known polylog offsets (see :func:`seed_rows`).

    Each cell carries ``log_<v>`` for every variable (and ``<v>`` itself when it fits a float),
    ``mean_log``, ``sd_log`` (over seeds; None for one seed), ``n_seeds`` and ``seeds``.
    """
    srows, dropped = seed_rows(rows, variables, offsets)
    groups: dict[tuple, list[tuple[float, object]]] = {}
    for r in srows:
        key = tuple(round(r["log_" + v], 12) for v in variables)
        groups.setdefault(key, []).append((r["lm"], r["seed"]))
    cells = []
    for key, vals in sorted(groups.items()):
        logs = [v for v, _ in vals]
        cell = {}
        for v, lx in zip(variables, key):
            cell["log_" + v] = lx
            cell[v] = math.exp(lx) if lx < 700 else None
        cell.update({"mean_log": float(np.mean(logs)), "sd_log": float(np.std(logs, ddof=1)) if len(logs) > 1 else None,
                     "n_seeds": len(logs), "seeds": [s for _, s in vals]})
        cells.append(cell)
    return cells, dropped


def design(cells: list[dict], variables: list[str]) -> np.ndarray:
    """The (cells x variables) matrix of log values."""
    return np.array([[c["log_" + v] for v in variables] for c in cells], dtype=float).reshape(len(cells), len(variables))


def _ols(Xd: np.ndarray, yv: np.ndarray):
    beta, *_ = np.linalg.lstsq(Xd, yv, rcond=None)
    resid = yv - Xd @ beta
    df = len(yv) - Xd.shape[1]
    s2 = float(resid @ resid) / df if df > 0 else float("nan")
    cov = s2 * np.linalg.pinv(Xd.T @ Xd)
    return beta, resid, df, np.sqrt(np.maximum(np.diag(cov), 0.0))


def fit_exponents(rows: list[dict], variables: list[str], offsets=None, level: float = 0.95, bootstrap: bool = True,
                  seed: int = 0) -> Fit:
    """OLS of mean log(measure) on log(variables) over the grid cells."""
    cells, dropped = cell_means(rows, variables, offsets)
    for v in variables:
        distinct = {c["log_" + v] for c in cells}
        if len(distinct) < 3:
            raise InputError(f"variable {v} has {len(distinct)} grid value(s) with data: a fit needs at least 3 distinct values")
    p = len(variables) + 1
    if len(cells) <= p:
        raise InputError(f"{len(cells)} grid cells cannot fit {p} parameters: give a larger grid")
    L = design(cells, variables)
    Xd = np.hstack([np.ones((len(cells), 1)), L])
    yv = np.array([c["mean_log"] for c in cells])
    beta, resid, df, se = _ols(Xd, yv)
    t = stats.t.ppf(0.5 + level / 2, df)
    est = {v: float(beta[i + 1]) for i, v in enumerate(variables)}
    ses = {v: float(se[i + 1]) for i, v in enumerate(variables)}
    ci = {v: (est[v] - t * ses[v], est[v] + t * ses[v]) for v in variables}
    for c, r in zip(cells, resid):
        c["residual"] = float(r)
    fit = Fit(list(variables), est, ses, ci, df, float(beta[0]), len(cells), cells, dropped=dropped)
    if bootstrap and len(cells) >= p + 3:
        fit.bca, fit.bca_note = _bca(Xd, yv, variables, level, seed)
    elif bootstrap:
        fit.bca_note = f"not computed: {len(cells)} cells, the bootstrap over cells needs at least {p + 3}"
    for i, v in enumerate(variables):
        if len(cells) > p + 1 and len({c["log_" + v] for c in cells}) >= 3:
            X2 = np.hstack([Xd, (L[:, i] - L[:, i].mean())[:, None] ** 2])
            b2, _, df2, se2 = _ols(X2, yv)
            fit.curvature[v] = _term(b2[-1], se2[-1], df2)
    if "d" in variables and "k" in variables and len(cells) > p + 1:
        i, j = variables.index("d"), variables.index("k")
        X3 = np.hstack([Xd, ((L[:, i] - L[:, i].mean()) * (L[:, j] - L[:, j].mean()))[:, None]])
        b3, _, df3, se3 = _ols(X3, yv)
        fit.interaction = _term(b3[-1], se3[-1], df3)
    return fit


def _term(coef, se, df) -> dict:
    tval = coef / se if se > 0 else float("inf")
    p = float(2 * stats.t.sf(abs(tval), df)) if df > 0 and math.isfinite(tval) else float("nan")
    return {"coef": float(coef), "se": float(se), "p_value": p}


def _bca(Xd, yv, variables, level, seed) -> tuple[dict | None, str | None]:
    """BCa bootstrap over cells: (intervals, None), or (None, the reason it failed)."""
    idx = np.arange(len(yv))

    def stat(sample_idx, axis=-1):
        sample_idx = np.atleast_2d(sample_idx)
        out = []
        for row in sample_idx:
            row = row.astype(int)
            b, *_ = np.linalg.lstsq(Xd[row], yv[row], rcond=None)
            out.append(b[1:])
        out = np.array(out).T
        return out if out.shape[1] > 1 else out[:, 0]

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on degenerate resamples; the result is checked below
        try:
            res = stats.bootstrap((idx,), stat, vectorized=True, paired=False, n_resamples=999, confidence_level=level,
                                  method="BCa", random_state=np.random.default_rng(seed))
        except (ValueError, np.linalg.LinAlgError, FloatingPointError) as err:
            return None, f"the BCa bootstrap failed: {type(err).__name__}: {err}"
    lo, hi = np.atleast_1d(res.confidence_interval.low), np.atleast_1d(res.confidence_interval.high)
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        return None, "the BCa bootstrap failed: a degenerate resample distribution (non-finite interval)"
    return {v: (float(lo[i]), float(hi[i])) for i, v in enumerate(variables)}, None
