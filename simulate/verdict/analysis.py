"""One bound against one set of measurements: the function test (the verdict), and the descriptive fit, drift,
extrapolation and power.

The verdict comes from :func:`simulate.verdict.function_test.function_test` (the ratio of the measure to the
claim's own function, along every direction, with its resolution and corrections to scaling); the per-term
exponents, their CIs, drift and extrapolation are fitted and reported beside it, as descriptions.

:func:`analyze` is the single pipeline behind ``ibcheck compare``, ``ibcheck verdict`` (your own
CSV) and ``ibcheck calibrate`` (synthetic truth): the same rows in, the same
:class:`Analysis` out. Rows are dicts with a value per fitted variable (or its natural log
under ``log_<v>``), the measure under ``value`` (or ``log_value``) and optionally ``seed``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ibcheck.simulate.experiments.design import BoundSpec
from ibcheck.simulate.experiments.terms import MARGINS, SHIFTS, Term, parse_term
from ibcheck.simulate.stats.drift import Drift, Extrapolated, correction_fit, drift_test, local_exponents
from ibcheck.simulate.stats.fit import Fit, fit_exponents, log_of, seed_rows
from ibcheck.simulate.verdict.exp_test import exp_intercept
from ibcheck.simulate.verdict.function_test import FunctionTest, function_test
from ibcheck.simulate.verdict.rules import Judgement, Verdict, combine, judge_exponent, judge_variable, term_kind
from ibcheck.theory.errors import InputError


@dataclass
class Analysis:
    variables: list[str]
    kind: str
    predicted: dict[str, float]  # keyed by term name: "T", "log(T)", ...
    offsets: dict[str, tuple[float, float]]
    fit: Fit
    drift: dict[str, Drift]  # keyed by variable (its power term)
    extrapolated: dict[str, Extrapolated]
    judgements: dict[str, Judgement]  # keyed by term name
    verdict: Verdict
    reason: str
    margin: float
    alpha: float
    cells_used: str = "all"  # "all" or "inside" (the hypotheses' window only)
    notes: list[str] = field(default_factory=list)
    lack_of_fit: dict = field(default_factory=dict)  # {"F", "p_value"}: is the scatter of cell means beyond seed noise?
    terms: list[Term] = field(default_factory=list)
    variable_verdicts: dict[str, tuple[str, str]] = field(default_factory=dict)  # variable -> (verdict, reason)
    margins: dict[str, float] = field(default_factory=dict)  # keyed by term name
    function: FunctionTest | None = None  # the test the verdict comes from
    call: dict = field(default_factory=dict)  # the settings analyze ran with (margins, cone, ...): :func:`reanalyze` repeats them

    @property
    def term_names(self) -> list[str]:
        return [t.name for t in self.terms]

    @property
    def power(self) -> dict:
        return {"has_power": all(j.has_power for j in self.judgements.values()),
                "detectable_deviation": {v: j.detectable_deviation for v, j in self.judgements.items()},
                "negative_control": {v: {"exponent_tested": j.negative_control.predicted, "verdict": j.negative_control.verdict}
                                     for v, j in self.judgements.items()}}

    def conf_int(self, term: str, alpha: float | None = None) -> tuple[float, float]:
        """The two-sided CI of one term's exponent at level 1 - alpha (default: the level of this look)."""
        return self.fit.conf_int(term, self.alpha if alpha is None else alpha)

    def open_exponents(self) -> list[tuple[str, bool]]:
        """The variables a growing sweep should keep working on, each with whether to extend the grid.

        Open while the function test is inconclusive: every variable with a direction that neither holds nor
        violates, or whose log resolution misses its target. The grid is extended (a wider range) where the range is
        what limits: a correction that cannot be told from a deviation, a lack of fit (seeds cannot help), or a
        resolution more than twice the target (over four times the seeds would be needed); elsewhere seeds are
        added, where the noise is what limits."""
        ft = self.function
        if ft is None:
            return []
        lof_p, lof_F = self.lack_of_fit.get("p_value"), self.lack_of_fit.get("F")
        lacking = (lof_p is not None and lof_p < 0.05) or (lof_F is not None and lof_F > 2.0)
        return [(v, wide or lacking) for v, wide in ft.open_directions(self.variables)]

    def undecided(self) -> list[tuple]:
        """What the round planner reads for each open variable: (fit cells, terms, variable, extend the grid?)."""
        return [(self.fit.cells, self.terms, v, ext) for v, ext in self.open_exponents()]

    def _outside_band(self, v: str) -> bool:
        """Does the point estimate lie on the wrong side of the prediction's margin?"""
        from ibcheck.simulate.verdict.rules import LOWER, UPPER  # heavy: scipy (loaded on first use)

        est, pred, m = self.fit.estimate[v], self.predicted[v], self.margins.get(v, self.margin)
        kind = self.judgements[v].plain.kind  # the term's own direction (mirrored where its variable tends to 0)
        if kind in UPPER:
            return est > pred + m
        if kind in LOWER:
            return est < pred - m
        return abs(est - pred) > m

    def fits_json(self) -> list[dict]:
        f = self.fit
        out = []
        for t in self.terms:
            v = t.name
            j = self.judgements[v]
            ex = self.extrapolated.get(v) if t.order == 0 else None
            lo, hi = self.conf_int(v)
            out.append({"variable": v, "term_of": t.variable, "order": t.order, "estimate": f.estimate[v], "ci_low": f.ci[v][0],
                        "ci_high": f.ci[v][1], "ci_level": 0.95, "decision_ci": [lo, hi], "decision_level": 1 - self.alpha,
                        "se": f.se[v], "predicted": self.predicted[v], "margin": self.margins.get(v, self.margin),
                        "bca_low": f.bca[v][0] if f.bca else None, "bca_high": f.bca[v][1] if f.bca else None, "bca_note": f.bca_note,
                        "log_offset": self.offsets.get(t.variable, (0.0, 0.0))[0] if t.order == 0 else None,
                        "verdict": j.verdict, "reason": j.reason, "plain_verdict": j.plain.verdict, "tested_as": j.plain.kind,
                        "extrapolated": ex.estimate if ex else None,
                        "extrapolated_ci": list(ex.ci) if ex and ex.ci else None})
        return out

    @property
    def term_verdict(self) -> str:
        """The per-term band verdict (the engine before the function test), kept as a description: consistent when
        every variable's exponents pass their bands (0.1 for a power, 0.25 for a log)."""
        return combine([vv for vv, _ in self.variable_verdicts.values()])

    def function_json(self) -> dict:
        """The function test's keys of summary.json: ``test``, ``resolution``, ``attained``, ``correction`` (and the
        descriptive per-term band verdict, ``term_verdict``)."""
        ft = self.function
        return {"test": ft.test_json() if ft else None, "resolution": ft.resolution if ft else None,
                "attained": ft.attained if ft else None, "correction": ft.correction if ft else None,
                "term_verdict": self.term_verdict}

    def as_json(self) -> dict:
        return {
            **self.function_json(),
            "variables": self.variables, "terms": self.term_names, "kind": self.kind, "predicted": self.predicted, "verdict": self.verdict,
            "reason": self.reason, "cells_used": self.cells_used, "margin": self.margin, "margins": self.margins, "alpha": self.alpha,
            "fits": self.fits_json(), "df": self.fit.df, "cells": self.fit.n_cells, "dropped_rows": self.fit.dropped,
            "censored_rows": self.fit.censored, "runs": self.fit.runs if self.fit.trajectory else None,
            "restriction": self.fit.restriction or None, "excluded_rows": self.fit.excluded,
            "curvature": self.fit.curvature, "interaction": self.fit.interaction,
            "drift": {v: d.as_json() for v, d in self.drift.items()},
            "extrapolated": {v: e.as_json() for v, e in self.extrapolated.items()},
            "lack_of_fit": self.lack_of_fit, "power": self.power, "judgements": {v: j.as_json() for v, j in self.judgements.items()},
            "variable_verdicts": {v: {"verdict": vv, "reason": r} for v, (vv, r) in self.variable_verdicts.items()}, "notes": self.notes,
        }


@dataclass(frozen=True)
class BoundAnalysis:
    """One tested bound of a design (:class:`simulate.experiments.design.BoundSpec`) with its analysis and the
    rows it was fitted on: what the typed result and the report are built from."""

    spec: BoundSpec
    analysis: Analysis
    data: tuple = ()

    @property
    def quantity(self) -> str:
        return self.spec.quantity

    @property
    def kind(self) -> str:
        return self.spec.kind

    @property
    def reading(self) -> str | None:
        return self.spec.reading

    @property
    def expr(self) -> str:
        return self.spec.expr

    @property
    def label(self) -> str:
        return self.spec.label

    @property
    def bound(self):
        return self.spec.bound


def fit_terms(variables: list[str], predicted: dict[str, float], toward_zero: frozenset[str] = frozenset()) -> list[Term]:
    """Every power term of ``variables``, and the log terms ``predicted`` names (``"log(t)"``), in order.

    ``toward_zero``: the variables that tend to 0; their log terms must be written ``log(1/eps)``."""
    terms = [Term(v, 0, v in toward_zero) for v in variables]
    for name in predicted:
        t = parse_term(name)
        if t.variable not in variables:
            continue
        if not t.order:
            t = Term(t.variable, 0, t.variable in toward_zero)  # a power term's name does not say where it tends
        elif t.toward_zero != (t.variable in toward_zero):
            raise InputError(f"{name!r}: {t.variable} " + ("tends to 0, so its log factor is written log(1/" + t.variable + ")"
                                                          if t.variable in toward_zero else "does not tend to 0: write log(" + t.variable + ")"))
        if t not in terms:
            terms.append(t)
    return sorted(terms, key=lambda t: (variables.index(t.variable), t.order))


def _descriptive_fit(rows: list[dict], variables: list[str], predicted: dict, terms, offsets, bootstrap: bool, trajectory: bool,
                     restriction, free_constant: bool):
    """The descriptive power-law fit (fit, drift): of the rows as measured, or for an exp-type bound of log(1/y) - a
    (a = -log A fitted with the claim's function, so that it describes c h), falling back to log(1/y) itself where too
    few cells keep log(1/y) - a > 0. Returns (fit, the rows it read, the note saying which)."""
    if not free_constant or trajectory:
        return fit_exponents(rows, terms, offsets, bootstrap=bootstrap, trajectory=trajectory, restriction=restriction), rows, None
    a = exp_intercept(rows, variables, {t.name: predicted.get(t.name, 0.0) for t in terms}, terms, restriction)
    shifted = [{**r, "value": r["value"] - a} if isinstance(r.get("value"), (int, float)) else r for r in rows]
    try:
        fit = fit_exponents(shifted, terms, offsets, bootstrap=bootstrap, trajectory=trajectory, restriction=restriction)
        return fit, shifted, (f"the descriptive exponents (fit, drift) are those of log(1/y) - a, a = -log A = {a:.4g} fitted with "
                              "the claim's function; the verdict is the exp-type test's")
    except InputError:
        pass
    try:
        fit = fit_exponents(rows, terms, offsets, bootstrap=bootstrap, trajectory=trajectory, restriction=restriction)
        return fit, rows, "the descriptive exponents (fit, drift) are those of log(1/y) (too few cells keep log(1/y) - a > 0)"
    except InputError:  # log(1/y) <= 0 at too many cells (y >= 1: a measure that does not decay): describe y itself
        ys = [{**r, "value": math.exp(-r["value"])} if isinstance(r.get("value"), (int, float)) and -700 < r["value"] < 700 else r
              for r in rows]
        fit = fit_exponents(ys, terms, offsets, bootstrap=bootstrap, trajectory=trajectory, restriction=restriction)
        return fit, ys, ("the descriptive exponents (fit, drift) are those of y itself: log(1/y) is <= 0 at too many cells (y >= 1, "
                         "a measure that does not decay); the verdict is the exp-type test's")


def _check_design(rows: list[dict], variables: list[str]) -> None:
    """Refuse, in one line naming the cause, a design whose fit is degenerate: two fitted variables that move together in
    every row (``k = d/8``: their exponents cannot be told apart, and each read as resolved to d^0.002)."""
    logs: dict[str, list[float]] = {v: [] for v in variables}
    for r in rows:
        lx = [log_of(r, v) for v in variables]
        if all(x is not None for x in lx):
            for v, x in zip(variables, lx):
                logs[v].append(float(x))  # type: ignore[arg-type]
    grow = [v for v in variables if len(set(round(x, 9) for x in logs[v])) >= 2]
    for i, a in enumerate(grow):
        for b in grow[i + 1:]:
            xa, xb = np.array(logs[a]), np.array(logs[b])
            slope, icpt = np.polyfit(xa, xb, 1)
            if np.max(np.abs(xb - (slope * xa + icpt))) <= 1e-9 * max(1.0, float(np.abs(xb).max())):
                rel = f"{b} = {math.exp(icpt):.4g} {a}" + ("" if abs(slope - 1) < 1e-9 else f"^{slope:.4g}")
                raise InputError(f"{a} and {b} are collinear: {rel} in every row, so their exponents cannot be told apart; vary them "
                                 f"independently, or fit one of them (the other held, or written in terms of it)", parameter=b)
    if len(grow) >= 3:  # a dependence among three or more (n = d k in every row): no pair is collinear, the design is
        X = np.column_stack([np.ones(len(logs[grow[0]]))] + [np.array(logs[v]) for v in grow])
        scale = np.abs(X).max(axis=0)
        _, sv, vt = np.linalg.svd(X / scale, full_matrices=False)
        if sv[-1] <= 1e-9 * sv[0]:
            null = vt[-1] / scale  # sum_v coef_v log v + coef_0 = 0 in every row
            coef = dict(zip(grow, null[1:]))
            used = [v for v in grow if abs(coef[v]) > 1e-6 * max(abs(x) for x in coef.values())]
            b = max(reversed(used), key=lambda v: np.ptp(logs[v]))  # written as the widest-ranging one (n = d k)
            parts = [f"{v}" + ("" if abs(-coef[v] / coef[b] - 1) < 1e-6 else f"^{-coef[v] / coef[b]:.4g}") for v in used if v != b]
            const = math.exp(-null[0] / coef[b])
            rel = f"{b} = " + ("" if abs(const - 1) < 1e-9 else f"{const:.4g} ") + " ".join(parts)
            raise InputError(f"{', '.join(used)} are collinear: {rel} in "
                             f"every row, so their exponents cannot be told apart; vary them independently, or fit fewer of them "
                             f"(one held, or written in terms of the others)", parameter=b)


def analyze(rows: list[dict], variables: list[str], kind: str, predicted: dict[str, float],
            offsets: dict[str, tuple[float, float]] | None = None, margin: float | None = None, alpha: float = 0.05,
            bootstrap: bool = True, cells_used: str = "all", extrapolate: bool = True, trajectory: bool = False,
            restriction: dict[str, float] | None = None, margin_log: float | None = None,
            toward_zero: frozenset[str] = frozenset(), cone=None, log_corrections: bool = False, free_constant: bool = False) -> Analysis:
    """Fit the exponents of ``rows`` along ``variables`` and judge them against ``predicted``.

    ``predicted`` is keyed by term: ``{"t": 0, "log(t)": -1}`` fits and tests both exponents (a
    log term is fitted wherever the prediction names it). ``alpha`` is the level of this look
    (smaller than 0.05 when a sequential design spends alpha over several looks). The verdict is the
    function test's (:mod:`simulate.verdict.function_test`). ``margin`` and ``margin_log``, when given,
    are explicit user tolerances for a power and a log factor (log-log: twice it) and replace the
    resolution there; the descriptive per-term bands use 0.1 and 0.25 when they are not given.
    ``offsets`` (a known log factor moved to the left-hand side) only on explicit request.
    ``toward_zero`` names the variables that tend to 0 (eps): their power is tested mirrored
    (:func:`simulate.verdict.rules.term_kind`), their drift toward the smallest scale. ``cone``: the window's
    asymptotic cone (:func:`theory.cone.claim_cone`); the directions it bounds are reported, not deciding.
    ``free_constant``: an exp-type bound (rows of log(1/y)), tested as log(1/y) = a + c h with a free
    (:mod:`simulate.verdict.exp_test`).
    """
    offsets = dict(offsets or {})
    _check_design(rows, list(variables))
    tolerance = {k: x for k, x in (("power", margin), ("log", margin_log),
                                   ("loglog", None if margin_log is None else 2 * margin_log)) if x is not None}
    margin = MARGINS[0] if margin is None else margin
    margin_log = MARGINS[1] if margin_log is None else margin_log
    toward_zero = frozenset(toward_zero) & set(variables)
    if toward_zero and any(offsets.get(v, (0.0, 0.0)) != (0.0, 0.0) for v in toward_zero):
        raise InputError(f"known offsets are not supported for {', '.join(sorted(toward_zero))} (tends to 0): fit its log factors")
    terms = fit_terms(list(variables), predicted, toward_zero)
    test_rows = rows
    fit, rows, exp_note = _descriptive_fit(rows, list(variables), predicted, terms, offsets, bootstrap, trajectory, restriction, free_constant)
    srows, _ = seed_rows(rows, variables, offsets, restriction, toward_zero)
    margins = {t.name: (margin if t.order == 0 else margin_log * (MARGINS[t.order] / MARGINS[1])) for t in terms}
    has_logs = any(t.order for t in terms)
    drifts, extra, judgements = {}, {}, {}
    for v in variables:
        local = local_exponents(srows, fit.cells, variables, v, trajectory=trajectory)
        drifts[v] = drift_test(fit.curvature.get(v), v, fit.estimate[v], predicted.get(v, 0.0), local, alpha, v in toward_zero)
        if v in toward_zero:
            extra[v] = Extrapolated(v, None, None, note=f"not computed ({v} tends to 0; the correction model assumes growth)")
        elif extrapolate and not trajectory and not has_logs:
            extra[v] = correction_fit(fit.cells, variables, v)
        else:
            why = "a trajectory" if trajectory else "the fit has log terms" if has_logs else "not requested"
            extra[v] = Extrapolated(v, None, None, note=f"not computed ({why})")
    for t in terms:
        judgements[t.name] = judge_exponent(t.name, term_kind(kind, t), fit.estimate[t.name], fit.se[t.name], fit.df, predicted.get(t.name, 0.0),
                                            drifts[t.variable] if t.order == 0 else None, margins[t.name], alpha, SHIFTS[t.order])
    per_var = {}
    for v in variables:
        chain = [(t.name, judgements[t.name]) for t in terms if t.variable == v]
        per_var[v] = judge_variable(kind, chain)
    ft = function_test(test_rows, list(variables), kind, {t.name: predicted.get(t.name, 0.0) for t in terms}, terms, alpha, offsets,
                       toward_zero, trajectory, restriction, tolerance or None, log_corrections=log_corrections, cone=cone,
                       free_constant=free_constant)
    verdict, reason = ft.verdict, ft.reason
    notes = list(ft.notes) + ([exp_note] if exp_note else [])
    if fit.unidentified:
        cells = ", ".join(_cell_text(c, variables) for c in fit.unidentified)
        notes.append(f"{len(fit.unidentified)} cell(s) have every row censored on one side ({cells}): their mean is only a bound, "
                     "so the exponents come from a Tobit regression on the rows (the bounds enter its likelihood)")
    if offsets and any(p or q for p, q in offsets.values()):
        notes.append("log factors entered as known offsets (by request): their exponents are assumed, not tested")
    for v in sorted(toward_zero):
        notes.append(f"{v} tends to 0: its power exponent is tested mirrored ({v}^a = O({v}^b) as {v} -> 0 iff a >= b) "
                     f"and its log factors are in log(1/{v})")
    if fit.restriction:
        notes.append("fit restricted to " + ", ".join(f"{v} {'<=' if v in toward_zero else '>='} {x:g}" for v, x in fit.restriction.items())
                     + f" ({fit.excluded} earlier rows left out: by --from, or before a trajectory's runs enter the hypotheses)")
    return Analysis(list(variables), kind, {t.name: predicted.get(t.name, 0.0) for t in terms}, offsets, fit, drifts, extra,
                    judgements, verdict, reason, margin, alpha, cells_used, notes=notes, lack_of_fit=lack_of_fit(fit),
                    terms=terms, variable_verdicts=per_var, margins=margins, function=ft,
                    call={"margin": None if "power" not in tolerance else margin, "margin_log": tolerance.get("log"),
                          "alpha": alpha, "trajectory": trajectory, "restriction": restriction, "toward_zero": toward_zero,
                          "cone": cone, "log_corrections": log_corrections, "free_constant": free_constant})


def reanalyze(an: Analysis, rows: list[dict]) -> Analysis:
    """The same analysis (kind, claim, margins, window cone, level) on other rows: the planner's simulated trials run the
    engine exactly as it ran on the data (no bootstrap, no extrapolation: descriptions the verdict does not read)."""
    return analyze(rows, an.variables, an.kind, dict(an.predicted), dict(an.offsets), bootstrap=False, extrapolate=False, **an.call)


def _cell_text(c: dict, variables: list[str]) -> str:
    return " ".join(f"{v}={c[v]:g}" if c.get(v) is not None else f"log {v}={c['log_' + v]:.3g}" for v in variables)


def lack_of_fit(fit: Fit) -> dict:
    """F test of the cell means' scatter about the fitted plane against the seed noise (pure error).

    A significant F says the spread of the fit is model error (curvature, interaction), which
    more seeds do not shrink; a larger grid does. None where no cell has two seeds.
    """
    from scipy import stats  # heavy: scipy (loaded on first use)

    pe_df = sum(c["n_seeds"] - 1 for c in fit.cells)
    if fit.trajectory or pe_df < 1 or fit.df < 1:
        return {"F": None, "p_value": None}
    s2 = sum((c["n_seeds"] - 1) * (c["sd_log"] or 0.0) ** 2 for c in fit.cells) / pe_df
    rss = sum(c["residual"] ** 2 for c in fit.cells)
    expected = s2 * sum(1.0 / c["n_seeds"] for c in fit.cells) / len(fit.cells)
    if expected <= 0:
        return {"F": float("inf"), "p_value": 0.0}
    F = (rss / fit.df) / expected
    return {"F": float(F), "p_value": float(stats.f.sf(F, fit.df, pe_df))}
