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
from dataclasses import dataclass

import numpy as np

from ibcheck.simulate.experiments.terms import Term
from ibcheck.simulate.stats.estimate import LeastSquares
from ibcheck.simulate.stats.fit import Fit, fit_exponents, log_of

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
    """A multiplicative correction to scaling along one variable, ``y = A g(x) (1 + b z)`` with ``z = x^(-w)``
    (``shape="power"``) or ``(log x)^(-w)`` (``"log"``), toward the variable's limit: the ratio ``c + log(1 + b z)``
    levels off at c.

    As a fit term it is the Gauss-Newton column ``z / (1 + b z)`` at the profiled ``b`` (the rows carry
    ``log(1 + b z)`` as a known offset, :func:`corrected_rows`): its coefficient is the step in b (about 0 at the
    optimum) and its standard error b's, so the slopes fitted beside it get the local, honest covariance.
    Pitfall avoided: a correction added linearly in log space (``c + b x^(-w)``) cannot follow a large one
    (``log(1 + 3/sqrt(d))`` at d = 16) and leaves a slope that is then called a violation."""

    shape: str = "power"
    w: float = 1.0
    b: float = 0.0

    @property
    def name(self) -> str:
        v = f"(1/{self.variable})" if self.toward_zero else self.variable
        return f"{v}^-{self.w:g}" if self.shape == "power" else f"log({v})^-{self.w:g}"

    def z(self, log_x: float) -> float:
        u = -log_x if self.toward_zero else log_x
        if self.shape == "power":
            return math.exp(-self.w * u) if -self.w * u < 700 else float("nan")
        return u ** -self.w if u > 0 else float("nan")

    def regressor(self, log_x: float) -> float:
        z = self.z(log_x)
        return z / (1.0 + self.b * z) if 1.0 + self.b * z > 0 else float("nan")

    def offset(self, log_x: float) -> float:
        z = self.z(log_x)
        return math.log1p(self.b * z) if 1.0 + self.b * z > 0 else float("nan")


LAST = 0.25  # the largest |b z| a correction may have at the largest-scale cell
# the corrections tried: x^(-w) on a grid of w, and (log x)^(-w); b is profiled for each
CORRECTIONS = tuple(("power", w / 4) for w in range(1, 13)) + tuple(("log", w) for w in (0.5, 1.0, 2.0))


def profile_correction(cells: list[dict], alts: list[Term], corr: Correction) -> tuple[Correction, float]:
    """The b that minimizes the residual sum of squares of ``r - log(1 + b z)`` on the alternatives, over the fitted
    cells' means (the profile; the honest standard errors come from the refit on the rows), and that sum."""
    from scipy import optimize  # heavy: scipy (loaded on first use)

    lx = np.array([c["log_" + corr.variable] for c in cells], dtype=float)
    z = np.array([corr.z(x) for x in lx])
    r = np.array([c["mean_log"] for c in cells], dtype=float)
    X = np.hstack([np.ones((len(cells), 1)), np.array([[t.regressor(c["log_" + t.variable]) for t in alts] for c in cells])])
    if not (np.all(np.isfinite(z)) and np.all(np.isfinite(X))) or z.max() <= 0:
        return corr, math.inf
    ls = LeastSquares(X)

    def rss(b: float) -> float:
        y = r - np.log1p(b * z)
        e = y - X @ ls.coef(y)
        return float(e @ e)

    # a correction is a correction: at most a factor 1/3..3 at the smallest scale and within 1 -+ LAST at the largest
    # (unbounded, 1 + b z with a large b is the power law z itself, and would absorb the very deviation under test)
    zmax, zend = float(z.max()), float(z[np.argmax(lx if not corr.toward_zero else -lx)])
    lo = max(-(2.0 / 3.0) / zmax, -LAST / zend) if zend > 0 else -(2.0 / 3.0) / zmax
    hi = min(2.0 / zmax, LAST / zend) if zend > 0 else 2.0 / zmax
    res = optimize.minimize_scalar(rss, bounds=(lo, hi), method="bounded", options={"xatol": 1e-6 * (hi - lo)})
    return Correction(corr.variable, 0, corr.toward_zero, shape=corr.shape, w=corr.w, b=float(res.x)), float(res.fun)


def corrected_rows(rrows: list[dict], corrections: tuple[Correction, ...]) -> list[dict]:
    """The ratio rows with each correction's ``log(1 + b z)`` taken off (a known offset at the profiled b)."""
    if not corrections:
        return rrows
    out = []
    for r in rrows:
        lv = r.get("log_value")
        for c in corrections:
            lx = log_of(r, c.variable)
            lv = lv - c.offset(lx) if lv is not None and lx is not None else float("nan")
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
