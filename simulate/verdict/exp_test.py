"""The function test of an exp-type bound, ``y <= A exp(-c h(x))`` (and its Omega and Theta forms), on its own scale.

Takes the tested rows (``value`` = log(1/y) per seed, theory.exptype) and the claim's function h (its exponents per term);
returns each family's fit of the alternatives (delta per variable, its covariance), decided by the same
rule as every other bound: :mod:`~ibcheck.simulate.verdict.function_test` reads its family fits in place of the ratio's
(:func:`exp_family_fits`), with the same directions, resolution, targets and decision; its m tests are split by
Bonferroni (alpha / m), not the ratio's max-T level: its fits are nonlinear, fitted over the seeds, no linear map of
the cells' means.

Why its own statistic: with z = log(1/y) the claim reads ``z = a + c h(x)`` with ``a = -log A`` and ``c > 0`` free.
The prefactor A is a constant of the bound, so ``a`` belongs to the claim, not to a correction to scaling: the ratio
test's capped corrections (at most a factor 3 at the smallest cell) called a true bound with A = 0.01 inconsistent
("falls along m, against every correction to scaling within its cap") and one with A = 2 "not attained". And z's noise
is additive where y's is multiplicative (log-normal seeds), so the fit is linear in z, over the seeds (each one
observation), not in log z.

The alternatives are the ratio test's: a factor ``x^delta`` (``(log x)^delta``, ``(log log x)^delta``) on h along each
variable, ``z = a + c h(x) exp(sum_v delta_v phi_v(x))``, each family fitted by nonlinear least squares over the seeds
(phi centred, c > 0): delta is the slope of the same ratio, in the same units, with the same directions (rays included),
resolution and targets as :mod:`~ibcheck.simulate.verdict.function_test`, at Bonferroni's alpha / m. No correction to scaling is
tried: the exact form leaves none to excuse.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import cast

import numpy as np
from scipy.optimize import least_squares

from ibcheck.simulate.experiments.terms import Term
from ibcheck.simulate.stats.fit import Fit, _before, log_of
from ibcheck.simulate.stats.laws import t_quantile
from ibcheck.simulate.stats.ratio import FAMILIES, FamilyFit, alternatives, log_claim
from ibcheck.theory.errors import InputError


@dataclass
class _ExpFitData:
    """What the direction tests read of a family's fit (the :class:`~ibcheck.simulate.stats.fit.Fit` fields they use)."""

    estimate: dict[str, float]
    se: dict[str, float]
    cov: np.ndarray
    df: int
    cells: list[dict]
    extra: dict = field(default_factory=dict)


def exp_rows(rows: list[dict], variables: list[str], predicted: dict[str, float], terms: list[Term], restriction=None,
             toward_zero: frozenset[str] = frozenset()) -> tuple[list[dict], int, int]:
    """The rows the fit reads: z (finite, uncensored), h and each variable's log; how many were left out (censored, or
    z or h undefined), and how many of those were censored."""
    zero = toward_zero | frozenset(t.variable for t in terms if t.toward_zero)  # a restriction keeps their small values
    keep, dropped, censored = [], 0, 0
    for r in rows:
        z, lh = r.get("value"), log_claim(r, predicted, terms)
        logs = {v: log_of(r, v) for v in variables}
        if r.get("censor"):
            dropped, censored = dropped + 1, censored + 1
            continue
        if not isinstance(z, (int, float)) or not math.isfinite(z) or lh is None or any(x is None for x in logs.values()):
            dropped += 1
            continue
        if restriction and any(_before(logs[v], x0, v in zero) for v, x0 in restriction.items() if v in logs):
            continue
        row = {"z": float(z), "h": math.exp(lh), **{"log_" + v: float(x) for v, x in logs.items()}}
        if r.get("trials") is not None:  # y is a proportion of this many trials (binomial counts: :func:`binomial_weights`)
            row["trials"] = float(r["trials"])
        keep.append(row)  # type: ignore[arg-type]
    return keep, dropped, censored


def _cells(rows: list[dict], variables: list[str]) -> list[dict]:
    """Cell means of z (each seed one observation; the cell's mean is what the fit reads, weighted by its seeds)."""
    cells: dict[tuple, dict] = {}
    for q in rows:
        key = tuple(round(q["log_" + v], 12) for v in variables)
        c = cells.setdefault(key, {**{"log_" + v: q["log_" + v] for v in variables}, "h": q["h"], "z_sum": 0.0, "n_seeds": 0})
        c["z_sum"] += q["z"]
        c["n_seeds"] += 1
        if "trials" in q:
            c.setdefault("trials", []).append(q["trials"])
    out = list(cells.values())
    for c in out:
        c["z"] = c["z_sum"] / c["n_seeds"]
    for q in rows:  # each cell's sum of squares about its mean (the seeds' own spread, a floor on the fit's noise)
        c = cells[tuple(round(q["log_" + v], 12) for v in variables)]
        c["z_ss"] = c.get("z_ss", 0.0) + (q["z"] - c["z"]) ** 2
    return out


def _weights(cells: list[dict]) -> np.ndarray:
    """Each cell mean's weight, the inverse of its variance in the fit's units: its seeds (each one observation), or where
    its rows carry their trials, :func:`binomial_weights`'."""
    return np.array([c.get("weight", c["n_seeds"]) for c in cells], dtype=float)


BINOMIAL_ROUNDS = 3  # the binomial weights are evaluated at the claim's own fit, refitted this many times (IRLS)


def binomial_weights(cells: list[dict]) -> bool:
    """Binomial counts (rows carrying ``trials``: y = k/N of N trials), weighted by their own variance: a quasi-binomial
    fit. The delta method gives ``Var log(1/p_hat) = v(p, N) = (1 - p)/(N p)`` for one seed's count; the seeds' own
    variation of the true rate (another training run, another rate) adds a variance ``s0`` of its own, the same at every
    cell, estimated from the spread within cells beyond the binomial's (a moment estimate, at least 0). So a cell mean of
    n seeds has variance ``phi sum_s (s0 + v(p, N_s)) / n^2``, with ``p`` from the claim's own fit ``z = a + c h``
    (refitted BINOMIAL_ROUNDS times: weights read off each cell's own noisy mean would favour the cells whose draws fell
    low) and the dispersion phi free (quasi-binomial). Each cell's ``weight`` is ``n^2 / sum_s (s0 + v_s)`` and its spread
    within ``z_ss_unit = z_ss / mean_s (s0 + v_s)`` (the same units).
    Returns whether the cells were weighted (every cell's every row carries its trials).

    Pitfall avoided: one noise variance pooled over cells whose binomial noise differs twentyfold (a rate of 0.95 and one of
    0.003) called true bounds inconsistent in 7.5% of trials; the noisy cells' residuals set a variance the precise cells'
    means then violated."""
    if not cells or not all(len(c.get("trials", ())) == c["n_seeds"] for c in cells):
        return False
    within_df = sum(c["n_seeds"] - 1 for c in cells)
    for _ in range(BINOMIAL_ROUNDS):
        fit = _claim_fit(cells)
        vs = []
        for c in cells:
            N = np.array(c["trials"], dtype=float)
            p = np.clip(math.exp(-(fit.a + fit.c * c["h"])), 0.5 / N, 1.0 - 0.5 / N)
            vs.append((1.0 - p) / (N * p))
        # the seeds' own variance beyond the binomial's (a moment estimate from the spread within cells)
        extra = max(0.0, sum(c.get("z_ss", 0.0) - (c["n_seeds"] - 1) * float(v.mean()) for c, v in zip(cells, vs)) / within_df) if within_df > 0 else 0.0
        for c, v in zip(cells, vs):
            u = extra + v
            c["weight"] = c["n_seeds"] ** 2 / float(u.sum())
            c["z_ss_unit"] = c.get("z_ss", 0.0) / float(u.mean())
    return True


@dataclass(frozen=True)
class ClaimFit:
    """The claim's own fit over the cell means, z = a + c h (least squares weighted by seeds): a = -log A, c with its
    standard error (in h's own units), c's t statistic (+-inf where the residuals and the seeds' spread are both zero),
    the degrees of freedom and h's range."""

    a: float
    c: float
    se: float
    t: float
    df: int
    h_range: tuple[float, float]

    def c_upper(self, alpha: float = 0.05) -> float:
        """c's one-sided 1 - alpha upper confidence bound: the fastest decay exp(-c h) the data leave possible."""
        return self.c + t_quantile(1 - alpha, self.df) * self.se if self.df > 0 else math.inf


ROUNDING = 1e-12  # relative to the size of log(1/y): residuals and slopes below it are float64's rounding, not noise


def _claim_fit(cells: list[dict]) -> ClaimFit:
    """:class:`ClaimFit` (h in units of its median inside, for conditioning). The residual variance is at least the
    seeds' own pooled spread within cells: cell means that agree more closely than their seeds allow (the same values at
    every cell) are not a noise-free fit, and their c is not resolved by rounding. Residuals within :data:`ROUNDING` of
    z's own size are no noise, and a slope at that level no slope: y = 2 in every row was fitted as c = -2.8e-18 +- 2.5e-18
    from rounding alone and called inconclusive, where y = 1 exactly (z = 0) was inconsistent."""
    df = len(cells) - 2
    hs = np.array([c["h"] for c in cells], dtype=float)
    if df <= 0:
        return ClaimFit(0.0, 0.0, math.inf, 0.0, max(df, 0), (float(hs.min(initial=math.nan)), float(hs.max(initial=math.nan))))
    unit = float(np.median(hs))
    w = np.sqrt(_weights(cells))
    X = np.column_stack([np.ones(len(cells)), hs / unit]) * w[:, None]
    y = np.array([c["z"] for c in cells]) * w
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    r = y - X @ beta
    within_df = sum(c["n_seeds"] - 1 for c in cells)
    within = sum(c.get("z_ss_unit", c.get("z_ss", 0.0)) for c in cells) / within_df if within_df > 0 else 0.0
    s2 = max(float(r @ r) / df, within)
    floor = ROUNDING * float(np.max(np.abs(y), initial=0.0))  # float64's rounding of z's own size: no noise below it
    if s2 <= floor ** 2:
        s2 = 0.0
        if abs(beta[1]) * float(np.max(np.abs(X[:, 1]))) <= floor:  # a slope at rounding level is no slope (y = 2 everywhere)
            beta[1] = 0.0
    se = math.sqrt(max(s2 * float(np.linalg.pinv(X.T @ X)[1, 1]), 0.0))
    t = float(beta[1] / se) if se > 0 else (math.inf if beta[1] > 0 else -math.inf)
    return ClaimFit(float(beta[0]), float(beta[1]) / unit, se / unit, t, df, (float(hs.min()), float(hs.max())))


def exp_intercept(rows: list[dict], variables: list[str], predicted: dict[str, float], terms: list[Term], restriction=None) -> float:
    """a in the claim's own fit z = a + c h (least squares over the cell means): -log A, the bound's prefactor."""
    xrows, _, _ = exp_rows(rows, variables, predicted, terms, restriction)
    cells = _cells(xrows, variables)
    binomial_weights(cells)
    return _claim_fit(cells).a


LOWER_ORDER = (("log h", lambda h: np.log(h)), ("h^1/2", lambda h: np.sqrt(h)))  # terms of log(1/y) below h (a prefactor h^-p, ...)
LOWER_CAP = 0.25  # the most a lower-order term may be of c h at the largest h (the ratio test's LAST)
RESOLVED_T = 3.0  # z must grow with h at this t in the claim's own fit, or the exp-type test cannot decide


def family_fit(cells: list[dict], order: int, variables: list[str], toward_zero: frozenset[str], lower: str | None = None) -> FamilyFit:
    """One family's fit (module docstring) over the cell means, weighted by seeds: ``z = a + c h exp(sum_v delta_v (phi_v -
    mean phi_v)) [+ b g(h)]`` by nonlinear least squares (c = exp(log c) > 0; centring phi keeps c and delta apart; h in
    units of its median). ``lower``: a lower-order term g of LOWER_ORDER, with b at most LOWER_CAP of c h at the largest h
    either way. delta per variable with its covariance, s^2 (J'WJ)^-1 with s^2 from the cell means' residuals
    (cells - parameters degrees of freedom: a cell-level deviation widens it, as in the ratio test), as a FamilyFit."""
    alts = alternatives(order, variables, cells, toward_zero)
    phi = np.array([[a.regressor(c["log_" + a.variable]) for a in alts] for c in cells], dtype=float).reshape(len(cells), len(alts))
    ok = np.all(np.isfinite(phi), axis=1)
    cells, phi = [c for c, k in zip(cells, ok) if k], phi[ok]
    h, z = np.array([c["h"] for c in cells]), np.array([c["z"] for c in cells])
    w = np.sqrt(_weights(cells))
    g = dict(LOWER_ORDER)[lower](h) if lower else None
    npar = 2 + len(alts) + (lower is not None)
    df = len(cells) - npar
    if df <= 0:
        raise InputError(f"an exp-type bound's fit needs more cells than its {npar} parameters (it has {len(cells)})")
    phi = phi - phi.mean(axis=0)
    scale = float(np.median(h))
    hs = h / scale
    X0 = np.column_stack([np.ones(len(cells)), hs])
    (a0, c0), *_ = np.linalg.lstsq(X0 * w[:, None], z * w, rcond=None)
    c0 = c0 if c0 > 0 else max(float(np.ptp(z)) / max(float(np.ptp(hs)), 1e-300), 1e-12)
    gmax = float(abs(g[np.argmax(h)])) if g is not None else 1.0
    k = len(alts)

    def model(p):
        c = math.exp(p[1])
        f = c * hs * np.exp(phi @ p[2:2 + k])
        if g is not None:
            f = f + p[-1] * c * hs.max() / (gmax or 1.0) * g
        return p[0] + f

    def resid(p):
        return (model(p) - z) * w

    def jac(p):
        """d resid / d p, exactly: a enters as 1, log c as c h e^(phi delta) (+ the lower term), delta_j as that times
        phi_j, b as its term (a numerical Jacobian took 4/5 of the fit's time)."""
        c = math.exp(p[1])
        e = c * hs * np.exp(phi @ p[2:2 + k])
        cols = [np.ones(len(hs)), e.copy(), *(e[:, None] * phi).T]
        if g is not None:
            low = c * hs.max() / (gmax or 1.0) * g
            cols[1] = cols[1] + p[-1] * low
            cols.append(low)
        return np.column_stack(cols) * w[:, None]

    x0 = np.concatenate([[a0, math.log(c0)], np.zeros(k), [0.0] if g is not None else []])
    lo = np.full(len(x0), -np.inf)
    hi = np.full(len(x0), np.inf)
    if g is not None:
        lo[-1], hi[-1] = -LOWER_CAP, LOWER_CAP
    sol = least_squares(resid, x0, jac=jac, bounds=(lo, hi), method="trf", xtol=1e-12, ftol=1e-12, max_nfev=800)
    r = sol.fun
    s2 = float(r @ r) / df
    J = sol.jac
    JtJ = J.T @ J
    if not np.all(np.isfinite(JtJ)) or np.linalg.cond(JtJ) > 1e12:
        raise InputError("the exp-type fit is singular here (log(1/y) does not resolve c, delta and a apart)")
    cov = (s2 * np.linalg.inv(JtJ))[2:2 + k, 2:2 + k]
    names = [a.name for a in alts]
    est = {n: float(x) for n, x in zip(names, sol.x[2:2 + k])}
    se = {n: math.sqrt(max(float(cov[i, i]), 0.0)) for i, n in enumerate(names)}
    extra = {"a": float(sol.x[0]), "c": math.exp(sol.x[1]) / scale, "lower": lower,
             "lower_at_cap": bool(g is not None and abs(abs(sol.x[-1]) - LOWER_CAP) < 1e-6)}
    fit = _ExpFitData(est, se, cov, df, [{k_: c[k_] for k_ in c if k_.startswith("log_") or k_ == "n_seeds"} for c in cells], extra)
    return FamilyFit(FAMILIES[order], tuple(alts), cast(Fit, fit))


@dataclass(frozen=True)
class ExpFits:
    """What the function test reads: each family's plain fit, its fits with each lower-order term (a violation must
    survive every one), the notes, and whether the test can decide (z resolves its growth with h; no censored row)."""

    fits: dict
    lower: dict
    notes: tuple[str, ...]
    can_refute: bool
    can_decide: bool
    growth: ClaimFit  # the claim's own fit z = a + c h (c, its standard error and t, h's range)

    @property
    def growth_t(self) -> float:
        """The t statistic of c in the claim's own fit (-inf: c <= 0 with no noise)."""
        return self.growth.t

    @property
    def growth_df(self) -> int:
        return self.growth.df


def exp_family_fits(rows: list[dict], variables: list[str], predicted: dict[str, float], terms: list[Term], toward_zero: frozenset[str],
                    restriction, orders: list[int]) -> ExpFits:
    """Each family's fits of an exp-type bound over ``rows`` (inside ``restriction``), for the function test's directions,
    and the notes the verdict carries (module docstring)."""
    xrows, dropped, censored = exp_rows(rows, variables, predicted, terms, restriction, toward_zero)
    cells = _cells(xrows, variables)
    weighted = binomial_weights(cells)
    fits: dict[int, FamilyFit] = {}
    lower: dict[int, list[FamilyFit]] = {}
    notes = ["exp-type bound: log(1/y) = a + c h(x) fitted over the cell means with a = -log A and c free (the prefactor A is "
             "the bound's constant, not a correction to scaling); each alternative is a factor on h; a move counts only if it "
             f"survives a lower-order term of log(1/y) (b log h or b h^1/2, at most {LOWER_CAP:g} of c h at the largest h)"]
    if weighted:
        notes.append("binomial counts: each cell mean of log(1/y) is weighted by its own variance, (1 - p)/(N p) per seed at the "
                     "claim's fitted p for N trials plus the seeds' own variance beyond it (estimated from the spread within "
                     "cells), with a dispersion fitted beside it (quasi-binomial)")
    elif any("trials" in c for c in cells):
        notes.append("some rows carry no trials: the cells are weighted by their seeds, not by a binomial variance")
    if dropped:
        notes.append(f"{dropped} row(s) left out of the exp-type fit ({censored} censored, the others with y <= 0)")
    can_refute = dropped == 0
    if dropped:
        notes.append("rows the exp-type fit cannot read (censored bounds, y <= 0 such as a zero error count) sit where log(1/y) is "
                     "largest, and leaving them out biases their cells downward, so no move refutes the bound here")
    claim = _claim_fit(cells)
    t = claim.t
    can_decide = t >= RESOLVED_T
    if not can_decide:
        notes.append(f"log(1/y) does not resolve its growth with h here (t = {t:.2g} for c in z = a + c h, below {RESOLVED_T:g}): "
                     "the exp-type test cannot decide")
    for order in orders:
        try:
            fits[order] = family_fit(cells, order, variables, toward_zero)
            lower[order] = []
            for name, _ in LOWER_ORDER:
                try:
                    lower[order].append(family_fit(cells, order, variables, toward_zero, name))
                except InputError:
                    continue
        except InputError as err:
            if order == 0:
                can_decide = False
                notes.append(f"the exp-type fit failed: {err}")
                break
            notes.append(f"the {('log', 'loglog')[order - 1]} alternatives could not be fitted: {err}")
    return ExpFits(fits, lower, tuple(notes), can_refute, can_decide, claim)
