"""The ratio of a measure to the claim's own function, and how it moves with scale.

Takes the rows of one bound (``value`` or ``log_value`` per row, the fitted variables, ``seed``, ``censor``) and
the claim's function ``log g(x) = sum_t p_t * regressor_t(x)`` (its power, log and log-log exponents, the
constant left free); returns the fits the function test (:mod:`simulate.verdict.function_test`) reads:

* :func:`ratio_rows`: every row with ``r = log y - log g(x)`` in place of its measure (a censored row stays a
  bound of the same side: dividing by g moves the bound, not its direction).
* :func:`alternative_fit`: ``r = c + sum_v delta_v * phi(u_v)`` for one family of alternative factors (``phi(u) = u``
  for ``x^delta``, ``log u`` for ``(log x)^delta``, ``log log u`` for ``(log log x)^delta``, ``u`` the log of the
  variable toward its limit), through :func:`simulate.stats.fit.fit_exponents`, so the ratio is fitted on the same
  cell means, Tobit means, and per-run combination (one GD run is one observation) as every exponent.
* :func:`correction_fit`: the same with one correction to scaling added, ``b * x^(-w)`` or ``b / log x``.

Pitfall avoided: fitting x, log x and log log x jointly and testing each against a band lets a missing log factor
hide in the power (``sqrt(d)/log d`` fits a power 0.42, inside 0.5 +- 0.1) and makes a true log-factor claim
undecidable (the power and the log are nearly collinear over two decades). One alternative family at a time on
the ratio has neither problem.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ibcheck.simulate.experiments.terms import Term
from ibcheck.simulate.stats.fit import Fit, fit_exponents, log_of
from ibcheck.simulate.stats.laws import t_cdf, t_sf

FAMILIES = {0: "power", 1: "log", 2: "loglog"}
ORDER_OF = {v: k for k, v in FAMILIES.items()}


@dataclass(frozen=True, order=True)
class Alternative(Term):
    """The factor ``x^delta`` (order 0), ``(log x)^delta`` (1) or ``(log log x)^delta`` (2) along one variable, as a fit
    regressor in ``u``, the log of the variable toward its limit (``log x``; ``log(1/x)`` where x tends to 0), so that
    a positive coefficient always means the ratio grows toward the limit.

    ``lift``: the log family uses ``log(1 + u)`` (log-log: ``log(1 + log(1 + u))``) where some cell has u < 1 (k = 2,
    eps = 0.5), so that the alternative is defined at every cell; it differs from ``log u`` by o(1)."""

    lift: bool = False

    @property
    def name(self) -> str:
        return f"{FAMILIES[self.order]}:{self.variable}"

    def regressor(self, log_x: float) -> float:
        u = -log_x if self.toward_zero else log_x
        for _ in range(self.order):
            if self.lift:
                u = math.log1p(max(u, 0.0))
            elif u > 0 and math.isfinite(u):
                u = math.log(u)
            else:
                return float("nan")
        return u


@dataclass(frozen=True, order=True)
class Correction(Term):
    """A correction to scaling along one variable, with ``z = x^(-w)`` (``shape="power"``), ``(log x)^(-w)``
    (``"log"``) or ``log log x / log x`` (``"loglog"``) toward the variable's limit: a factor ``y = A g(x) (1 + b z)`` (``form="factor"``, the ratio
    ``c + log(1 + b z)``) or a term of the ratio itself (``form="additive"``, ``c + b z``, as a power of a sum
    gives: ``sqrt(c0 + c log T)``). Either way the ratio levels off at c.

    As a fit term it is the Gauss-Newton column (``z / (1 + b z)``, or ``z``) at the profiled ``b`` (the rows carry
    the correction as a known offset, :func:`corrected_rows`): its coefficient is the step in b (about 0 at the
    optimum) and its standard error b's, so the slopes fitted beside it get the local, honest covariance.
    Pitfall avoided: one form alone leaves a slope where the data follow the other (a large factor,
    ``1 + 3/sqrt(d)`` at d = 16, is not linear in the ratio), and that slope is then called a violation."""

    shape: str = "power"
    w: float = 1.0
    b: float = 0.0
    form: str = "factor"
    p: float = 1.0  # a factor raised to a power: (1 + b z)^p (a power of a sum: sqrt(c0 + c log T) has p = 1/2)
    runs: tuple = ()  # trajectories: (run, b) per run, each run levelling off at its own b (b is then their median)

    @property
    def name(self) -> str:
        v = f"(1/{self.variable})" if self.toward_zero else self.variable
        z = {"power": f"{v}^-{self.w:g}", "log": f"log({v})^-{self.w:g}", "loglog": f"log(log({v}))/log({v})"}[self.shape]
        if self.form == "additive":
            return f"+{z}"
        return f"(1+b {z})" + (f"^{self.p:g}" if self.p != 1 else "")

    def correct(self, b, z):
        """The correction's value in the ratio at b (numbers or arrays)."""
        return self.p * np.log1p(b * z) if self.form == "factor" else b * z

    def z(self, log_x: float) -> float:
        u = -log_x if self.toward_zero else log_x
        if self.shape == "power":
            return math.exp(-self.w * u) if -self.w * u < 700 else float("nan")
        if self.shape == "loglog":  # log log x / log x: the correction a log log term inside a log leaves
            return math.log(u) / u if u > 1 else float("nan")
        return u ** -self.w if u > 0 else float("nan")

    def regressor(self, log_x: float) -> float:
        z = self.z(log_x)
        if self.form == "additive":
            return z
        return self.p * z / (1.0 + self.b * z) if 1.0 + self.b * z > 0 else float("nan")

    def offset(self, log_x: float, run=None) -> float:
        """The correction's value at one row (its run's own b along a trajectory)."""
        b = dict(self.runs).get(run, self.b) if self.runs else self.b
        z = self.z(log_x)
        if self.form == "additive":
            return b * z
        return self.p * math.log1p(b * z) if 1.0 + b * z > 0 else float("nan")


# the slowest decay a correction always has: v^-0.3, the slowest a true claim is held to carry (the calibration's
# correction_03, 1 + 5 d^-0.3, and its mirror from below); read by the function test and the confirmation test
MIN_DECAY = 0.3
FIRST = 3.0  # the largest factor (and 1/FIRST the smallest) a correction may make at the smallest-scale cell
LAST = 0.25  # the largest |b z| a correction may have at the largest-scale cell
GRID = 129  # the b values profiled at once
FORMS = (("factor", 1.0), ("factor", 0.5), ("factor", 2.0), ("additive", 1.0))
# the corrections tried along one variable: x^(-w) on a grid of w; b is profiled for each. Every one down to x^-0.3 is
# tried (function_test.MIN_DECAY); x^-1/4 only where the design tells it from a log factor (function_test.slowest_decay)
SLOW_DECAYS = (0.45, 0.4, 0.35, 0.3, 0.25)  # the decays slower than x^-1/2 on the grid, fastest first
POWER_CORRECTIONS = tuple((form, p, "power", w) for form, p in FORMS for w in (*SLOW_DECAYS[::-1], *(i / 4 for i in range(2, 13))))
# logarithmic corrections, (log x)^(-w) and log log x / log x: only where the claim states a log factor or the user asks
LOG_CORRECTIONS = tuple((form, p, shape, w) for form, p in FORMS for shape, w in (("log", 0.5), ("log", 1.0), ("log", 2.0), ("loglog", 1.0)))
# corrections in the claim's own scale g: y = g (c + b g^-omega) (an additive constant beside g is omega = 1, beside
# sqrt(d/k) too); omega over [1/4, 3], of which those that decay along the direction at least as fast as the per-variable
# family's slowest are tried (function_test.slowest_decay: v^-0.3, or v^-1/4 where the design tells it from a log factor)
SCALE = "g(x)"  # the rows' key (log_g(x)) holding log g, the claim's own function
OMEGAS = (0.25, 1 / 3, 0.5, 2 / 3, 0.75, 1.0, 1.5, 2.0, 3.0)
SCALE_CORRECTIONS = tuple((form, 1.0, "power", w) for form in ("factor", "additive") for w in OMEGAS)


@dataclass(frozen=True)
class LevelAgainstTrend:
    """One correction's profile: the levelled model ``c + log(1 + b z)`` (no slope along its variable) against the
    moving one ``c + delta * phi``, with the other variables' alternatives in both (:class:`LevelProfile`).
    ``statistic``: the chi^2 difference across cells, or the runs' t along trajectories. ``p_moving``: the one-sided p
    that the moving model fits better; ``p_level``: that the levelled one does."""

    correction: Correction
    wrss_level: float
    wrss_trend: float
    statistic: float
    p_moving: float
    p_level: float
    capped: bool = False  # b sits at an end of its bounds (_bounds): the data ask for a larger correction than is allowed
    p_trend_fit: float = 1.0  # lack of fit of the moving model against the seeds' own variance (F test); 1 where unknown


def _design(cells: list[dict], terms: list[Term]) -> np.ndarray:
    cols = [[t.regressor(c["log_" + t.variable]) for t in terms] for c in cells]
    return np.hstack([np.ones((len(cells), 1)), np.array(cols, dtype=float).reshape(len(cells), len(terms))])


def _bounds(z: np.ndarray, end: int, corr: Correction) -> tuple[float, float]:
    """The b a correction may take: at most a factor 1/3..3 at the smallest scale and within 1 -+ LAST at the largest
    (the cell ``end``, nearest the direction's limit; unbounded, 1 + b z with a large b is the power law z itself, and
    would absorb the very deviation under test); an additive one the same in the ratio (log 3, log(1 + LAST))."""
    zmax, zend = float(z.max()), float(z[end])
    if corr.form == "additive":
        a, e = math.log(FIRST), math.log1p(LAST)
        return (max(-a / zmax, -e / zend), min(a / zmax, e / zend)) if zend > 0 else (-a / zmax, a / zmax)
    q = 1.0 / corr.p  # (1 + b z)^p within [1/3, 3] at the smallest scale, within 1 -+ LAST at the largest
    lo, hi = (FIRST ** -q - 1.0) / zmax, (FIRST ** q - 1.0) / zmax
    if zend > 0:
        lo, hi = max(lo, ((1.0 - LAST) ** q - 1.0) / zend), min(hi, ((1.0 + LAST) ** q - 1.0) / zend)
    return lo, hi


def _residualizer(X: np.ndarray, sw: np.ndarray):
    """The map from a weighted response (a vector, or one column per candidate) to its residuals on the weighted
    columns of X, by a thin QR: ``Y - Q (Q' Y)``.

    Pitfall avoided: forming ``I - P`` is an n x n matrix per fit; along a trajectory of 3000 points that was 70 MB and
    most of the time of a comparison."""
    Xw = sw[:, None] * X
    q, r = np.linalg.qr(Xw)
    keep = np.abs(np.diag(r)) > max(Xw.shape) * np.finfo(float).eps * (np.abs(r).max() if r.size else 0.0)
    q = q[:, keep]

    def resid(Y: np.ndarray) -> np.ndarray:
        return Y - q @ (q.T @ Y)

    return resid


def _profile(M0, y: np.ndarray, z: np.ndarray, sw: np.ndarray, lo: float, hi: float, corr: Correction) -> tuple[float, float]:
    """(b, weighted RSS of the levelled model at b): ``M0`` residualizes on the levelled model's columns.

    b on a grid of GRID values over [lo, hi] at once (one matrix product), then refined by a parabola through the
    best point and its neighbours; an additive correction is linear in b, so its b is exact (clipped)."""
    if corr.form == "additive":
        mz, my = M0(sw * z), M0(y)
        den = float(mz @ mz)
        b = float(np.clip(float(mz @ my) / den, lo, hi)) if den > 0 else 0.0
        e0 = my - b * mz
        return b, float(e0 @ e0)
    bs = np.linspace(lo, hi, GRID)
    E = M0(y[:, None] - sw[:, None] * corr.correct(bs[None, :], z[:, None]))
    f = np.einsum("ij,ij->j", E, E)
    i = int(np.argmin(f))
    b = float(bs[i])
    if 0 < i < GRID - 1:
        d1, d2 = f[i + 1] - f[i - 1], f[i + 1] - 2 * f[i] + f[i - 1]
        if d2 > 0:
            cand = b - 0.5 * (bs[1] - bs[0]) * d1 / d2
            e = M0(y - sw * corr.correct(cand, z))
            if float(e @ e) < f[i]:
                return cand, float(e @ e)
    return b, float(f[i])


class LevelProfile:
    """The levelled model against the moving one along one variable, for every correction shape tried: the designs,
    weights and residualizers are built once (per run along a trajectory), each :meth:`against` only profiles b.

    Across cells: both weighted by each cell's seeds; the statistic is (WRSS_level - WRSS_trend) / s^2 (s^2 the
    larger of the seed variance and the better model's residual variance), read against chi^2(1). Along
    trajectories: each run fitted on its own (its own level and b), the statistic the t of the runs' differences
    RSS_level - RSS_trend, with runs - 1 degrees of freedom (one run is one observation).

    Pitfall avoided: unweighted residual sums over cells of 2 and of 59 seeds let the noisiest cells decide, and
    ``n log(RSS ratio)`` reads their scatter as evidence (a true correction called a steady deviation); pooling the
    points of several runs reads the runs' own levels as misfit."""

    def __init__(self, cells: list[dict], others: list[Term], alt: Term):
        self.variable = alt.variable
        self.cells = cells
        lx = np.array([c["log_" + alt.variable] for c in cells], dtype=float)
        self.end = int(np.argmax(-lx if alt.toward_zero else lx)) if len(cells) else 0
        r = np.array([c["mean_log"] for c in cells], dtype=float)
        X0, X1 = _design(cells, others), _design(cells, others + [alt])
        self.ok = bool(np.all(np.isfinite(X1))) and len(cells) > X1.shape[1]
        runs: dict = {}
        for i, c in enumerate(cells):
            if "run" in c:
                runs.setdefault(c["run"], []).append(i)
        self.by_run = len(runs) >= 2
        groups = ([(run, np.array(ix)) for run, ix in runs.items() if len(ix) > X1.shape[1] + 1] if self.by_run
                  else [(None, np.arange(len(cells)))])
        n = np.array([max(int(c.get("n_seeds") or 1), 1) for c in cells], dtype=float)
        self.parts = []
        for run, ix in groups if self.ok else []:
            sw = np.ones(len(ix)) if self.by_run else np.sqrt(n[ix])
            M1 = _residualizer(X1[ix], sw)
            e1 = M1(sw * r[ix])
            self.parts.append((run, ix, _residualizer(X0[ix], sw), sw, sw * r[ix], float(e1 @ e1)))
        pure_df = sum(int(c.get("n_seeds") or 1) - 1 for c in cells if c.get("sd_log") is not None)
        self.pure = (sum((int(c["n_seeds"]) - 1) * c["sd_log"] ** 2 for c in cells if c.get("sd_log") is not None) / pure_df
                     if pure_df >= 2 else 0.0)
        self.pure_df = pure_df
        self.n, self.p0, self.p1 = len(cells), X0.shape[1], X1.shape[1]

    def against(self, corr: Correction) -> LevelAgainstTrend | None:
        """Profile b for one correction shape and w (within its bounds, :func:`_bounds`); None where undefined."""
        from scipy import stats  # heavy: scipy (loaded on first use)

        z = np.array([corr.z(c.get("log_" + corr.variable, math.nan)) for c in self.cells])
        if not self.parts or not np.all(np.isfinite(z)) or z.max() <= 0:
            return None
        lo, hi = _bounds(z, self.end, corr)
        fits = [(run, *_profile(M0, y, z[ix], sw, lo, hi, corr), wt) for run, ix, M0, sw, y, wt in self.parts]
        tot_l, tot_t = sum(f[2] for f in fits), sum(f[3] for f in fits)
        if self.by_run:
            if len(fits) < 2:
                return None
            diffs = [wl - wt for _, _, wl, wt in fits]
            m, sd = float(np.mean(diffs)), float(np.std(diffs, ddof=1))
            t = m / (sd / math.sqrt(len(diffs))) if sd > 0 else (math.inf if m > 0 else -math.inf if m < 0 else 0.0)
            df = len(diffs) - 1
            c_out = replace(corr, b=float(np.median([b for _, b, _, _ in fits])), runs=tuple((run, b) for run, b, _, _ in fits))
            capped = 2 * sum(_at_cap(b, lo, hi) for _, b, _, _ in fits) > len(fits)
            return LevelAgainstTrend(c_out, tot_l, tot_t, t, t_sf(t, df), t_cdf(t, df), capped)
        # the noise: the seeds' own variance, or the better-fitting model's residual variance where that is larger
        s2 = max(self.pure, min(tot_l / max(self.n - self.p0 - 2, 1), tot_t / (self.n - self.p1)), 1e-300)
        chi = (tot_l - tot_t) / s2
        lof = (float(stats.f.sf((tot_t / (self.n - self.p1)) / self.pure, self.n - self.p1, self.pure_df))
               if self.pure > 0 and self.pure_df >= 2 and self.n > self.p1 else 1.0)
        return LevelAgainstTrend(replace(corr, b=fits[0][1]), tot_l, tot_t, chi,
                                 float(stats.chi2.sf(chi, 1)) if chi > 0 else 1.0, float(stats.chi2.sf(-chi, 1)) if chi < 0 else 1.0,
                                 _at_cap(fits[0][1], lo, hi), lof)


def _at_cap(b: float, lo: float, hi: float) -> bool:
    """Is the profiled b at an end of its bounds (within 1e-6 of their width)?"""
    tol = 1e-6 * (hi - lo)
    return b <= lo + tol or b >= hi - tol


def corrected_rows(rrows: list[dict], corrections: tuple[Correction, ...]) -> list[dict]:
    """The ratio rows with each correction's ``log(1 + b z)`` taken off (a known offset at the profiled b)."""
    if not corrections:
        return rrows
    out = []
    for r in rrows:
        lv = r.get("log_value")
        for c in corrections:
            lx = log_of(r, c.variable)
            lv = lv - c.offset(lx, r.get("run", r.get("seed"))) if lv is not None and lx is not None else float("nan")
        out.append({**r, "log_value": lv})
    return out


def log_claim(row: dict, predicted: dict[str, float], terms: list[Term]) -> float | None:
    """``log g(x)`` at one row: the sum of each stated exponent times its term's regressor; None where a term is
    undefined (log log x at x <= e)."""
    total = 0.0
    for t in terms:
        p = predicted.get(t.name, 0.0)
        if not p:
            continue
        lx = log_of(row, t.variable)
        z = t.regressor(lx) if lx is not None else float("nan")
        if not math.isfinite(z):
            return None
        total += p * z
    return total


def ratio_rows(rows: list[dict], predicted: dict[str, float], terms: list[Term]) -> list[dict]:
    """Each row with its measure replaced by ``log y - log g(x)`` (``log_value``); a row where either is undefined
    gets a nan there, and the fit counts it as dropped."""
    out = []
    for r in rows:
        ly, lg = log_of(r, "value"), log_claim(r, predicted, terms)
        lr = ly - lg if ly is not None and lg is not None else float("nan")
        q = {k: v for k, v in r.items() if k not in ("value", "log_value")}
        q["log_value"] = lr
        q["log_" + SCALE] = lg if lg is not None else float("nan")
        out.append(q)
    return out


def alternatives(order: int, variables: list[str], rows: list[dict], toward_zero: frozenset[str]) -> list[Alternative]:
    """One family's alternatives along every variable, lifted where some row has ``u <= 1`` (or ``u <= e`` for the
    log-log family)."""
    out = []
    for v in variables:
        tz = v in toward_zero
        logs = [lx for lx in (log_of(r, v) for r in rows) if lx is not None]
        us = [-lx if tz else lx for lx in logs] or [0.0]
        floor = 1.0 if order == 1 else math.e
        out.append(Alternative(v, order, tz, lift=bool(order) and min(us) <= floor))
    return out


@dataclass(frozen=True)
class FamilyFit:
    """One family's fit of the ratio: the coefficient per variable, their covariance and degrees of freedom."""

    family: str
    terms: tuple[Term, ...]
    fit: Fit

    def estimate(self, weights: dict[str, float]) -> tuple[float, float]:
        """(estimate, se) of ``sum_v weights[v] * delta_v`` (a direction: one variable, or a ray)."""
        names = [t.name for t in self.terms]
        a = np.zeros(len(names))
        for v, w in weights.items():
            a[names.index(f"{self.family}:{v}")] = w
        beta = np.array([self.fit.estimate[n] for n in names])
        cov = self.fit.cov if self.fit.cov is not None else np.diag([self.fit.se[n] ** 2 for n in names])
        with np.errstate(invalid="ignore", over="ignore"):  # an unresolved coefficient (infinite variance): an infinite se below
            var = float(a @ cov @ a)
        return float(a @ beta), math.sqrt(var) if var >= 0 and math.isfinite(var) else math.inf

    @property
    def rss(self) -> float:
        """The residual sum of squares over the fitted cells (points, for trajectories)."""
        return float(sum(c.get("residual", 0.0) ** 2 for c in self.fit.cells))

    def correction(self) -> tuple[str, float, float] | None:
        """(name, coefficient, se) of the correction term, if this fit has one."""
        for t in self.terms:
            if isinstance(t, Correction):
                return t.name, self.fit.estimate[t.name], self.fit.se[t.name]
        return None


def alternative_fit(rrows: list[dict], order: int, variables: list[str], toward_zero: frozenset[str], offsets=None,
                    trajectory: bool = False, restriction=None, corrections: tuple[Correction, ...] = ()) -> FamilyFit:
    """Fit the ratio rows on one family of alternatives (and corrections to scaling, if given); see the module docstring."""
    alts: list[Term] = list(alternatives(order, variables, rrows, toward_zero))
    alts += list(corrections)
    fit = fit_exponents(corrected_rows(rrows, corrections), alts, offsets, bootstrap=False, trajectory=trajectory, restriction=restriction)
    return FamilyFit(FAMILIES[order], tuple(alts), fit)


def rays(variables: list[str], cells: list[dict], toward_zero: frozenset[str]) -> list[tuple[str, dict[str, float]]]:
    """The window's extreme rays for every pair of growing variables (a, b): ``u_b = beta * u_a`` for the smallest and
    the largest ``beta = u_b / u_a`` over the cells (k = d^beta), as weights ``{a: 1, b: beta}`` on the power
    coefficients (the ratio's slope per unit of ``u_a`` along the ray)."""
    out = []
    grow = [v for v in variables if v not in toward_zero]
    for i, a in enumerate(grow):
        for b in grow[i + 1:]:
            betas = sorted(c["log_" + b] / c["log_" + a] for c in cells if c["log_" + a] > 0)
            if not betas:
                continue
            for beta in dict.fromkeys((round(betas[0], 6), round(betas[-1], 6))):
                out.append((f"{b} = {a}^{beta:.3g}", {a: 1.0, b: float(beta)}))
    return out
