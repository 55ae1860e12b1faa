"""Exponent fits: every factor a bound states, with CIs that count observations honestly.

A bound ``A x^a (log x)^b (log log x)^c`` is fitted as
``log y = c0 + a log x + b log(log x) + c log(log(log x))`` (:mod:`simulate.experiments.terms`), one
coefficient per term the bound states, each with a t-based CI.

* **Across cells** (a grid of d, k, ...): seeds are averaged in log space within each cell first,
  and the regression runs on the cell means, with (cells - parameters) degrees of freedom.
  (Clustering on a handful of seeds under-covers: with 5 seeds coverage fell to about 0.8.)
  Censored rows (``AtLeast``/``AtMost``) enter the cell means through a Tobit likelihood
  (:func:`simulate.stats.estimate.censored_cell_means`), never dropped.
* **Along trajectories** (one GD run measured at many times): each run is fitted on its own and
  the per-run coefficients are combined (:func:`simulate.stats.estimate.combine_runs`), so the CI comes
  from the spread between runs with R - 1 degrees of freedom: one run is one observation.
* A BCa bootstrap over cells is reported beside the t interval; residual curvature and the
  ``log d x log k`` interaction are reported, so that a fit outside its regime shows up.
* Known offsets (a stated log factor moved to the left-hand side) only on explicit request.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from ibcheck.simulate.experiments.terms import Term
from ibcheck.simulate.stats.estimate import Estimate, LeastSquares, censored_cell_means, censored_regression, combine_runs, ols
from ibcheck.simulate.stats.laws import t_quantile, t_sf
from ibcheck.theory.errors import InputError

SIDES = {None: 0, "at_least": 1, "at_most": -1}


@dataclass
class Fit:
    variables: list[str]  # the fitted variables (each has its power term, named like the variable)
    estimate: dict[str, float]  # keyed by term name: "T", "log(T)", "log(log(T))"
    se: dict[str, float]
    ci: dict[str, tuple[float, float]]  # 95%
    df: int
    intercept: float
    n_cells: int
    cells: list[dict]  # per cell: variable values, mean log measure (offset removed), residual, n_seeds
    bca: dict[str, tuple[float, float]] | None = None
    bca_note: str | None = None  # why there is no BCa interval (too few cells, or the bootstrap failed and how)
    curvature: dict[str, dict] = field(default_factory=dict)
    interaction: dict | None = None
    dropped: int = 0  # rows without a finite positive measure
    terms: list[Term] = field(default_factory=list)
    trajectory: bool = False
    runs: int = 0  # trajectories: the runs combined
    censored: int = 0  # rows that are bounds (AtLeast/AtMost), used through the Tobit means
    unidentified: list[dict] = field(default_factory=list)  # cells whose rows are all censored on one side (fitted by Tobit on the rows)
    excluded: int = 0  # rows left out by an explicit restriction (--from)
    restriction: dict = field(default_factory=dict)  # {variable: smallest value kept}
    per_run: list[dict] = field(default_factory=list)  # trajectories: each run's coefficients
    cov: np.ndarray | None = None  # the covariance of the term coefficients (terms' order, intercept excluded)

    @property
    def term_names(self) -> list[str]:
        return [t.name for t in self.terms] if self.terms else list(self.variables)

    def conf_int(self, term: str, alpha: float = 0.05) -> tuple[float, float]:
        """The two-sided (1 - alpha) t interval of one term's exponent."""
        if term not in self.estimate:
            raise InputError(f"{term!r} is not a fitted term; the terms are {', '.join(self.estimate)}")
        if self.df <= 0 or not math.isfinite(self.se[term]):
            return (-math.inf, math.inf)
        t = t_quantile(1 - alpha / 2, self.df)
        return (self.estimate[term] - t * self.se[term], self.estimate[term] + t * self.se[term])


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


def _as_terms(variables) -> list[Term]:
    return [v if isinstance(v, Term) else Term(str(v)) for v in variables]


def _variables(terms: list[Term]) -> list[str]:
    return list(dict.fromkeys(t.variable for t in terms))


def _before(log_x: float, x0: float, toward_zero: bool) -> bool:
    """Is this row before the asymptotic regime a restriction (``--from v=x0``) asks for: v < x0 for a variable that
    grows, v > x0 for one that tends to 0 (eps: the late rows are the small ones)."""
    return log_x > math.log(x0) + 1e-12 if toward_zero else log_x < math.log(x0) - 1e-12


def seed_rows(rows: list[dict], variables, offsets: dict[str, tuple[float, float]] | None = None,
              restriction: dict[str, float] | None = None, toward_zero: frozenset = frozenset()) -> tuple[list[dict], int]:
    """Each usable row as ``{"log_<v>": ..., "lm": log measure minus any known offsets, "side": 0/+1/-1, "seed", "run"}``.

    ``offsets[v] = (log power, loglog power)`` (only on explicit request):
    ``lm = log m - p log(log v) - q log(log(log v))``. ``side`` is +1 for a lower bound
    (``AtLeast``), -1 for an upper bound (``AtMost``). ``restriction`` ({v: x0}) keeps rows with
    v >= x0 (the others are not counted as dropped). Rows without a finite positive measure (or
    variable) are counted, not used.
    """
    names = _variables(_as_terms(variables))
    out, dropped = [], 0
    for r in rows:
        lm = log_of(r, "value")
        lx = [log_of(r, v) for v in names]
        if lm is None or any(x is None for x in lx):
            dropped += 1
            continue
        logs = [x for x in lx if x is not None]
        if restriction and any(_before(logs[names.index(v)], x0, v in toward_zero) for v, x0 in restriction.items() if v in names):
            continue
        for v, (p, q) in (offsets or {}).items():
            x = lx[names.index(v)] if v in names else log_of(r, v)
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
        out.append({**{"log_" + v: x for v, x in zip(names, lx)}, "lm": lm, "side": SIDES.get(r.get("censor"), 0),
                    "seed": r.get("seed"), "run": r.get("run", r.get("seed"))})
    return out, dropped


def cell_means(rows: list[dict], variables, offsets: dict[str, tuple[float, float]] | None = None,
               restriction: dict[str, float] | None = None, toward_zero: frozenset = frozenset()) -> tuple[list[dict], int]:
    """Mean of log(measure) over seeds per cell (Tobit means where rows are censored).

    Each cell carries ``log_<v>`` for every variable (and ``<v>`` itself when it fits a float),
    ``mean_log``, ``sd_log`` (over seeds; None for one seed), ``n_seeds``, ``seeds``,
    ``censored`` (rows that are bounds) and ``identified`` (False when every row is censored on
    one side: the mean is then not estimable, only bounded).
    """
    names = _variables(_as_terms(variables))
    srows, dropped = seed_rows(rows, names, offsets, restriction, toward_zero)
    groups: dict[tuple, list[tuple[float, int, object]]] = {}
    for r in srows:
        key = tuple(round(r["log_" + v], 12) for v in names)
        groups.setdefault(key, []).append((r["lm"], r["side"], r["seed"]))
    keys = sorted(groups)
    any_censored = any(s != 0 for vals in groups.values() for _, s, _ in vals)
    tobit = censored_cell_means([[(ly, s) for ly, s, _ in groups[k]] for k in keys]) if any_censored else None
    cells = []
    for i, key in enumerate(keys):
        vals = groups[key]
        logs = [v for v, _, _ in vals]
        n_cens = sum(1 for _, s, _ in vals if s != 0)
        cell = {}
        for v, lx in zip(names, key):
            cell["log_" + v] = lx
            cell[v] = math.exp(lx) if lx < 700 else None
        if tobit is not None and n_cens:
            mean, sd = tobit.means[i], tobit.sigma
        else:
            mean = float(np.mean(logs))
            sd = float(np.std(logs, ddof=1)) if len(logs) > 1 else None
        cell.update({"mean_log": mean, "sd_log": sd, "n_seeds": len(logs), "seeds": [s for _, _, s in vals],
                     "censored": n_cens, "identified": tobit.identified[i] if tobit is not None else True})
        cells.append(cell)
    return cells, dropped


def design(cells: list[dict], variables) -> np.ndarray:
    """The (cells x terms) matrix of regressors (log x, log log x, ...)."""
    terms = _as_terms(variables)
    return np.array([[t.regressor(c["log_" + t.variable]) for t in terms] for c in cells], dtype=float).reshape(len(cells), len(terms))


def fit_exponents(rows: list[dict], variables, offsets=None, level: float = 0.95, bootstrap: bool = True,
                  seed: int = 0, trajectory: bool = False, restriction: dict[str, float] | None = None) -> Fit:
    """Fit the exponent of every term (``variables``: names for power terms, or :class:`Term` objects)."""
    terms = _as_terms(variables)
    zero = frozenset(t.variable for t in terms if t.toward_zero)  # a restriction keeps their small values (late)
    names = _variables(terms)
    n_total = len(rows)
    if trajectory:
        return _fit_runs(rows, terms, names, offsets, level, restriction, n_total, zero)
    cells, dropped = cell_means(rows, names, offsets, restriction, zero)
    excluded = n_total - dropped - sum(c["n_seeds"] for c in cells)
    for v in names:
        distinct = {c["log_" + v] for c in cells}
        if len(distinct) < 3:
            raise InputError(f"variable {v} has {len(distinct)} grid value(s) with data: a fit needs at least 3 distinct values")
    usable = [c for c in cells if c["identified"]]
    unidentified = [c for c in cells if not c["identified"]]
    p = len(terms) + 1
    if len(usable) < 2 or len(cells) <= p:
        raise InputError(f"{len(usable)} grid cells with a finite mean ({len(cells)} in all) cannot fit {p} parameters: give a larger "
                         "grid, or raise the search limit of the censored cells")
    L = design(usable, terms)
    if not np.all(np.isfinite(L)):
        raise InputError("a log term needs log x > 0 at every cell (x > 1; x > e for log(log x)): raise the grid's smallest value")
    Xd = np.hstack([np.ones((len(usable), 1)), L])
    yv = np.array([c["mean_log"] for c in usable])
    est = ols(Xd, yv)
    if unidentified:
        # a cell whose rows are all bounds on one side: the regression itself is fitted by Tobit on the rows,
        # so that its bounds pull the fit (dropping the cell would bias it), with the cells' degrees of freedom
        srows, _ = seed_rows(rows, names, offsets, restriction, zero)
        Xr = np.hstack([np.ones((len(srows), 1)), design(srows, terms)])
        est = censored_regression(Xr, np.array([r["lm"] for r in srows]), np.array([r["side"] for r in srows]), len(cells) - p)
        est = Estimate(est.beta, est.cov, est.df, yv - Xd @ est.beta)
    fit = _fit_from(est, terms, names, usable, level)
    fit.dropped, fit.excluded, fit.restriction = dropped, excluded, dict(restriction or {})
    fit.censored = sum(c["censored"] for c in cells)
    fit.unidentified = unidentified
    for c, r in zip(usable, est.resid):
        c["residual"] = float(r)
    if bootstrap and len(usable) >= p + 3:
        fit.bca, fit.bca_note = _bca(Xd, yv, [t.name for t in terms], level, seed)
    elif bootstrap:
        fit.bca_note = f"not computed: {len(usable)} cells, the bootstrap over cells needs at least {p + 3}"
    Lv = np.array([[c["log_" + v] for v in names] for c in usable], dtype=float)
    for i, v in enumerate(names):
        if len(usable) > p + 1 and len({c["log_" + v] for c in usable}) >= 3:
            e2 = ols(np.hstack([Xd, (Lv[:, i] - Lv[:, i].mean())[:, None] ** 2]), yv)
            fit.curvature[v] = _term(e2.beta[-1], e2.se(len(e2.beta) - 1), e2.df)
    if "d" in names and "k" in names and len(usable) > p + 1:
        i, j = names.index("d"), names.index("k")
        e3 = ols(np.hstack([Xd, ((Lv[:, i] - Lv[:, i].mean()) * (Lv[:, j] - Lv[:, j].mean()))[:, None]]), yv)
        fit.interaction = _term(e3.beta[-1], e3.se(len(e3.beta) - 1), e3.df)
    return fit


def _fit_from(est: Estimate, terms: list[Term], names: list[str], cells: list[dict], level: float) -> Fit:
    keys = [t.name for t in terms]
    estimate = {k: float(est.beta[i + 1]) for i, k in enumerate(keys)}
    ses = {k: est.se(i + 1) for i, k in enumerate(keys)}
    ci = {k: est.conf_int(i + 1, 1 - level) for i, k in enumerate(keys)}
    return Fit(list(names), estimate, ses, ci, est.df, float(est.beta[0]), len(cells), cells, terms=list(terms),
               cov=np.asarray(est.cov, dtype=float)[1:, 1:])


def run_groups(srows: list[dict]) -> dict:
    """Seed rows grouped by run (trajectories: one GD run each)."""
    runs: dict = {}
    for r in srows:
        runs.setdefault(r["run"], []).append(r)
    return runs


def _past_the_runs(rows: list[dict], restriction: dict[str, float], zero: frozenset) -> str:
    """Why a --from left no point: how far the runs reach along each restricted variable (LL20's runs follow the flow
    to T of about 1e13, so --from T=1e20 leaves none; "give more seeds" would not help)."""
    parts = []
    for v, x in restriction.items():
        logs = [lx for lx in (log_of(r, v) for r in rows) if lx is not None]
        end = (min(logs) if v in zero else max(logs)) if logs else None
        parts.append(f"{v} {'<=' if v in zero else '>='} {x:.4g}" + (f" (the runs reach {v} = 1e{end / math.log(10):.3g})" if end is not None else ""))
    return "no run has a point at " + ", ".join(parts) + ": move --from toward the runs' range"


def _fit_runs(rows, terms: list[Term], names: list[str], offsets, level, restriction, n_total, zero: frozenset = frozenset()) -> Fit:
    """Per-run OLS along the trajectory, then the runs combined (see the module docstring)."""
    srows, dropped = seed_rows(rows, names, offsets, restriction, zero)
    excluded = n_total - dropped - len(srows)
    if any(r["side"] != 0 for r in srows):
        raise InputError("censored values (AtLeast/AtMost) along a trajectory are not supported: give exact values per point")
    p = len(terms) + 1
    per_run, ests, points = [], [], []
    for run, pts in sorted(run_groups(srows).items(), key=lambda kv: str(kv[0])):
        L = design(pts, terms)
        ok = np.all(np.isfinite(L), axis=1)
        pts = [q for q, good in zip(pts, ok) if good]
        if len(pts) < p + 1 or any(len({round(q["log_" + v], 12) for q in pts}) < 3 for v in names):
            per_run.append({"run": run, "points": len(pts), "used": False, "why": f"needs at least {p + 1} points at 3 distinct values"})
            continue
        X = np.hstack([np.ones((len(pts), 1)), design(pts, terms)])
        e = ols(X, np.array([q["lm"] for q in pts]))
        ests.append(e)
        per_run.append({"run": run, "points": len(pts), "used": True, **{t.name: float(e.beta[i + 1]) for i, t in enumerate(terms)}})
        for q, res in zip(pts, e.resid):
            points.append({**{"log_" + v: q["log_" + v] for v in names}, **{v: math.exp(q["log_" + v]) if q["log_" + v] < 700 else None
                                                                              for v in names},
                           "mean_log": q["lm"], "sd_log": None, "n_seeds": 1, "seeds": [q["seed"]], "run": run, "residual": float(res),
                           "censored": 0, "identified": True})
    if len(ests) < 2:
        why = _past_the_runs(rows, restriction, zero) if restriction and excluded > 0 and not srows else "give more seeds"
        raise InputError(f"{len(ests)} usable run(s): a trajectory fit combines the runs' own fits and needs at least 2 "
                         f"(one run is one observation); {why}")
    est = combine_runs(ests)
    fit = _fit_from(est, terms, names, sorted(points, key=lambda c: [c["log_" + v] for v in names]), level)
    fit.trajectory, fit.runs, fit.per_run = True, len(ests), per_run
    fit.dropped, fit.excluded, fit.restriction = dropped, excluded, dict(restriction or {})
    # curvature along each variable: the per-run squared-term coefficients, combined the same way
    for v in names:
        curv = []
        for run, pts in run_groups(srows).items():
            L = design(pts, terms)
            if len(pts) < p + 2 or not np.all(np.isfinite(L)):
                continue
            lv = np.array([q["log_" + v] for q in pts])
            X = np.hstack([np.ones((len(pts), 1)), L, ((lv - lv.mean()) ** 2)[:, None]])
            curv.append(ols(X, np.array([q["lm"] for q in pts])))
        if len(curv) >= 2:
            c = combine_runs(curv)
            j = len(c.beta) - 1
            fit.curvature[v] = _term(c.beta[j], c.se(j), c.df)
    return fit


def _term(coef, se, df) -> dict:
    tval = coef / se if se > 0 else float("inf")
    p = 2 * t_sf(abs(tval), df) if df > 0 and math.isfinite(tval) else float("nan")
    return {"coef": float(coef), "se": float(se), "p_value": p}


BCA_BATCH = 64  # resamples (and jackknife samples) per call: memory BCA_BATCH x cells, not cells^2 (10^4 cells: 0.8 GB each)


def _bca(Xd, yv, keys, level, seed) -> tuple[dict | None, str | None]:
    """BCa bootstrap over cells: (intervals, None), or (None, the reason it failed)."""
    idx = np.arange(len(yv))

    def stat(sample_idx, axis=-1):
        sample_idx = np.atleast_2d(sample_idx)
        out = []
        for row in sample_idx:
            row = row.astype(int)
            b = LeastSquares(Xd[row]).coef(yv[row])
            out.append(b[1:])
        out = np.array(out).T
        return out if out.shape[1] > 1 else out[:, 0]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on degenerate resamples; the result is checked below
        try:
            res = stats.bootstrap((idx,), stat, vectorized=True, paired=False, n_resamples=999, confidence_level=level,
                                  method="BCa", random_state=np.random.default_rng(seed), batch=BCA_BATCH)
        except (ValueError, np.linalg.LinAlgError, FloatingPointError) as err:
            return None, f"the BCa bootstrap failed: {type(err).__name__}: {err}"
    lo, hi = np.atleast_1d(res.confidence_interval.low), np.atleast_1d(res.confidence_interval.high)
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        return None, "the BCa bootstrap failed: a degenerate resample distribution (non-finite interval)"
    return {v: (float(lo[i]), float(hi[i])) for i, v in enumerate(keys)}, None
