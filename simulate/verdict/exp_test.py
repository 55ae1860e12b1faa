"""The function test of an exp-type bound, ``y <= A exp(-c h(x))`` (and its Omega and Theta forms), on its own scale.

Takes the tested rows (``value`` = log(1/y) per seed, theory.exptype) and the claim's function h (its exponents per term);
returns each family's fit of the alternatives (delta per variable, its covariance), decided by the same
rule as every other bound: :mod:`~ibcheck.simulate.verdict.function_test` reads its family fits in place of the ratio's
(:func:`exp_family_fits`), with the same directions, Bonferroni split, resolution, targets and decision.

Why its own statistic: with z = log(1/y) the claim reads ``z = a + c h(x)`` with ``a = -log A`` and ``c > 0`` free.
The prefactor A is a constant of the bound, so ``a`` belongs to the claim, not to a correction to scaling: the ratio
test's capped corrections (at most a factor 3 at the smallest cell) called a true bound with A = 0.01 inconsistent
("falls along m, against every correction to scaling within its cap") and one with A = 2 "not attained". And z's noise
is additive where y's is multiplicative (log-normal seeds), so the fit is linear in z, over the seeds (each one
observation), not in log z.

The alternatives are the ratio test's: a factor ``x^delta`` (``(log x)^delta``, ``(log log x)^delta``) on h along each
variable, ``z = a + c h(x) exp(sum_v delta_v phi_v(x))``, each family fitted by nonlinear least squares over the seeds
(phi centred, c > 0): delta is the slope of the same ratio, in the same units, with the same directions (rays included),
Bonferroni split, resolution and targets as :mod:`~ibcheck.simulate.verdict.function_test`. No correction to scaling is
tried: the exact form leaves none to excuse.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import cast

import numpy as np
from scipy.optimize import least_squares

from ibcheck.simulate.experiments.terms import Term
from ibcheck.simulate.stats.fit import Fit, log_of
from ibcheck.simulate.stats.ratio import FAMILIES, FamilyFit, alternatives, log_claim
from ibcheck.theory.errors import InputError


@dataclass
class _LinearFit:
    """What the direction tests read of a family's fit (the :class:`~ibcheck.simulate.stats.fit.Fit` fields they use)."""

    estimate: dict[str, float]
    se: dict[str, float]
    cov: np.ndarray
    df: int
    cells: list[dict]
    extra: dict = field(default_factory=dict)


def exp_rows(rows: list[dict], variables: list[str], predicted: dict[str, float], terms: list[Term], restriction=None) -> tuple[list[dict], int]:
    """The rows the linear fit reads: z (finite, uncensored), h and each variable's log; and how many were left out
    (a censored row, or one whose z or h is undefined)."""
    keep, dropped = [], 0
    for r in rows:
        z, lh = r.get("value"), log_claim(r, predicted, terms)
        logs = {v: log_of(r, v) for v in variables}
        if r.get("censor") or not isinstance(z, (int, float)) or not math.isfinite(z) or lh is None or any(x is None for x in logs.values()):
            dropped += 1
            continue
        if restriction and any(logs[v] < math.log(x0) - 1e-12 for v, x0 in restriction.items() if v in logs):
            continue
        keep.append({"z": float(z), "h": math.exp(lh), **{"log_" + v: float(x) for v, x in logs.items()}})  # type: ignore[arg-type]
    return keep, dropped


def exp_intercept(rows: list[dict], variables: list[str], predicted: dict[str, float], terms: list[Term], restriction=None) -> float:
    """a in the claim's own fit z = a + c h (ordinary least squares over the seeds): -log A, the bound's prefactor."""
    xrows, _ = exp_rows(rows, variables, predicted, terms, restriction)
    if len(xrows) < 3:
        return 0.0
    X = np.column_stack([np.ones(len(xrows)), [r["h"] for r in xrows]])
    (a, _), *_ = np.linalg.lstsq(X, np.array([r["z"] for r in xrows]), rcond=None)
    return float(a)


def family_fit(rows: list[dict], order: int, variables: list[str], toward_zero: frozenset[str]) -> FamilyFit:
    """One family's fit (module docstring): ``z = a + c h exp(sum_v delta_v (phi_v - mean phi_v))`` by nonlinear least
    squares over the rows (c = exp(log c) > 0; centring phi keeps c and delta apart), started at delta = 0 from the
    claim's own fit z = a + c h; delta per variable with its covariance (s^2 (J'J)^-1 at the optimum), as a FamilyFit."""
    alts = alternatives(order, variables, rows, toward_zero)
    phi = np.array([[a.regressor(r["log_" + a.variable]) for a in alts] for r in rows], dtype=float).reshape(len(rows), len(alts))
    ok = np.all(np.isfinite(phi), axis=1)
    rows, phi = [r for r, k in zip(rows, ok) if k], phi[ok]
    h, z = np.array([r["h"] for r in rows]), np.array([r["z"] for r in rows])
    npar = 2 + len(alts)
    df = len(rows) - npar
    if df <= 0:
        raise InputError(f"an exp-type bound's fit needs more rows than its {npar} parameters (it has {len(rows)})")
    phi = phi - phi.mean(axis=0)
    scale = float(np.median(h))  # h in units of its median: c and exp(log c) stay of order one
    hs = h / scale
    (a0, c0), *_ = np.linalg.lstsq(np.column_stack([np.ones(len(rows)), hs]), z, rcond=None)
    c0 = c0 if c0 > 0 else max(float(np.ptp(z)) / max(float(np.ptp(hs)), 1e-300), 1e-12)

    def resid(p):
        return p[0] + math.exp(p[1]) * hs * np.exp(phi @ p[2:]) - z

    def jac(p):
        g = math.exp(p[1]) * hs * np.exp(phi @ p[2:])
        return np.column_stack([np.ones(len(rows)), g, g[:, None] * phi])

    sol = least_squares(resid, np.concatenate([[a0, math.log(c0)], np.zeros(len(alts))]), jac=jac, method="lm", xtol=1e-12,
                        ftol=1e-12, max_nfev=2000)
    r = sol.fun
    s2 = float(r @ r) / df
    J = jac(sol.x)
    cov_p = s2 * np.linalg.pinv(J.T @ J)
    cov = cov_p[2:, 2:]
    names = [a.name for a in alts]
    est = {n: float(x) for n, x in zip(names, sol.x[2:])}
    se = {n: math.sqrt(max(float(cov[i, i]), 0.0)) for i, n in enumerate(names)}
    cells: dict[tuple, dict] = {}
    for q in rows:
        key = tuple(round(q["log_" + v], 12) for v in variables)
        c_ = cells.setdefault(key, {**{"log_" + v: q["log_" + v] for v in variables}, "n_seeds": 0})
        c_["n_seeds"] += 1
    fit = _LinearFit(est, se, cov, df, list(cells.values()), {"a": float(sol.x[0]), "c": math.exp(sol.x[1]) / scale})
    return FamilyFit(FAMILIES[order], tuple(alts), cast(Fit, fit))


def exp_family_fits(rows: list[dict], variables: list[str], predicted: dict[str, float], terms: list[Term], toward_zero: frozenset[str],
                    restriction, orders: list[int]) -> tuple[dict[int, FamilyFit], list[str]]:
    """Each family's fit of an exp-type bound over ``rows`` (inside ``restriction``), for the function test's directions,
    and the notes the verdict carries (module docstring)."""
    xrows, dropped = exp_rows(rows, variables, predicted, terms, restriction)
    fits: dict[int, FamilyFit] = {}
    notes = ["exp-type bound: log(1/y) = a + c h(x) fitted with a = -log A and c free (the prefactor A is the bound's constant, "
             "not a correction to scaling); each alternative is a factor on h, fitted over the seeds"]
    if dropped:
        notes.append(f"{dropped} row(s) left out of the exp-type fit (censored, or y <= 0)")
    for order in orders:
        try:
            fits[order] = family_fit(xrows, order, variables, toward_zero)
        except InputError as err:
            if order == 0:
                raise
            notes.append(f"the {('log', 'loglog')[order - 1]} alternatives could not be fitted: {err}")
    return fits, notes
