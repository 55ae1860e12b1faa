"""The typed record of a comparison: a tree of frozen dataclasses, made JSON only by ``to_json()``.

:class:`ComparisonRecord` holds what a comparison found: every tested bound (:class:`BoundRecord`, with its
analysis and final reason), the applicability of the hypotheses, the rounds of the sequential design
(:class:`Round`), per cell the censored and failed rows (:class:`CellCount`), the KKT certificates and transfer
(:class:`KKTRecord`), the reading of an ambiguous claim (:class:`~ibcheck.simulate.verdict.kkt.Reading`), what
would decide the open exponents (:class:`WouldDecide`), the work, the task counts and the provenance.
``to_json()`` writes the summary.json contract, whose keys do not change; nothing downstream indexes a dict to
read a result.

Pitfall avoided: a 41-key dict passed from stage to stage, whose keys each reader spells again.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Mapping

from ibcheck.simulate.experiments.applicability import Applicability
from ibcheck.simulate.experiments.base import Row
from ibcheck.simulate.substrate.censored import decode
from ibcheck.simulate.verdict.analysis import Analysis, BoundAnalysis
from ibcheck.simulate.verdict.kkt import KKTCell, Reading, TransferCell
from ibcheck.simulate.verdict.rules import Verdict, pinned
from ibcheck.simulate.verdict.sequential import Look
from ibcheck.theory.result import JsonText

EXTRAPOLATED = "extrapolated: the hypotheses fail at every simulated cell, so this tests the stated scaling beyond the theorem"
RowStatus = Literal["ok", "diverged", "failed"]


@dataclass(frozen=True)
class CellCount:
    """One cell's rows: stored, failed (or diverged), and censored per quantity (bounds, not values)."""

    cell: Mapping[str, float]
    rows: int
    failed: int
    censored: Mapping[str, int]

    def as_json(self) -> dict:
        return {"cell": dict(self.cell), "rows": self.rows, "censored": dict(self.censored), "failed": self.failed}


@dataclass(frozen=True)
class FailedRow:
    """One failed (cell, seed): the run it names, the failure's kind and its first line. Every failed row is listed,
    so that a failure is never only a count (a stored row that cannot be read is one of these: ``UnreadableRow``)."""

    cell: Mapping[str, float]
    seed: int
    kind: str
    error: str

    def as_json(self) -> dict:
        return {"cell": dict(self.cell), "seed": self.seed, "kind": self.kind, "error": self.error}


def flow_control_of(row: Row) -> dict | None:
    """The step-halving control a trajectory measure recorded on an ok row (None otherwise)."""
    fc = row.value.get("flow_control") if row.status == "ok" and isinstance(row.value, dict) else None
    return fc if isinstance(fc, dict) else None


@dataclass(frozen=True)
class FlowRun:
    """One GD run's step-halving control (a trajectory measure's ``flow_control``): at each point of the run, log10 T
    and the gap ln L(eta) - ln L(eta/2) at equal T (None where the half-step run does not reach that T), whether the
    point is kept (inside the flow), and the tolerance ``rtol`` on |gap|. The report plots it."""

    cell: Mapping[str, float]
    seed: int
    log10_T: tuple[float, ...]
    gap: tuple[float | None, ...]
    inside: tuple[bool | None, ...]
    rtol: float

    def as_json(self) -> dict:
        return {"cell": dict(self.cell), "seed": self.seed, "log10_T": list(self.log10_T), "gap": list(self.gap),
                "inside": list(self.inside), "rtol": self.rtol}


def flow_runs(rows: list[Row], cell_vars: list[str]) -> tuple[FlowRun, ...]:
    """Every ok row's step-halving control series, where its measure recorded one."""
    out = []
    for r in rows:
        fc = flow_control_of(r)
        if fc is not None and fc.get("log10_T") is not None:
            out.append(FlowRun(r.at(cell_vars), r.seed, tuple(fc["log10_T"]), tuple(fc["gap"]), tuple(fc.get("inside_flags") or ()),
                               float(fc.get("rtol") or 0.0)))
    return tuple(sorted(out, key=lambda f: (sorted(f.cell.items()), f.seed)))


def failed_rows(rows: list[Row], cell_vars: list[str]) -> tuple[FailedRow, ...]:
    """The failed rows, each with its run (cell, seed), kind and first error line."""
    out = []
    for r in rows:
        if r.status == "failed":
            kind, line = r.failure or "failed", ((r.error or "").strip().splitlines() or ["no message"])[0]
            out.append(FailedRow(r.at(cell_vars), r.seed, kind, line.removeprefix(kind + ": ")[:300]))
    return tuple(out)


def row_counts(rows: list[Row], quantities, cell_vars: list[str]) -> tuple[CellCount, ...]:
    """Per cell: rows stored, failed (or diverged), and censored per quantity."""
    cells: dict = {}
    for r in rows:
        key = tuple(sorted(r.at(cell_vars).items()))
        c = cells.setdefault(key, {"rows": 0, "failed": 0, "censored": {q: 0 for q in quantities}})
        c["rows"] += 1
        if r.status != "ok" or not isinstance(r.value, dict):
            c["failed"] += 1
            continue
        for q in quantities:
            if decode(r.value.get(q))[1] is not None:
                c["censored"][q] += 1
    return tuple(CellCount(dict(k), c["rows"], c["failed"], c["censored"]) for k, c in
                 ((k, cells[k]) for k in sorted(cells, key=lambda k: [str(x) for x in k])))


def censoring_note(counts: tuple[CellCount, ...], quantity: str, threshold: float = 0.05) -> str | None:
    """The cells where censored or failed rows pass ``threshold`` of the cell, named (None if none)."""
    parts = []
    for c in counts:
        n = c.rows
        cens, failed = c.censored.get(quantity, 0), c.failed
        if n and (cens > threshold * n or failed > threshold * n):
            where = " ".join(f"{k}={v:g}" for k, v in c.cell.items())
            what = [f"{cens} censored" if cens else "", f"{failed} failed" if failed else ""]
            parts.append(f"{where}: {' and '.join(w for w in what if w)} of {n}")
    return "; ".join(parts) if parts else None


@dataclass(frozen=True)
class NegativeControl:
    """The test of a stronger exponent on the term that carries the first variable's verdict: it must be rejected
    for the comparison to have power."""

    variable: str
    exponent_tested: float
    verdict: Verdict
    has_power: bool

    def as_json(self) -> dict:
        return {"variable": self.variable, "exponent_tested": self.exponent_tested, "verdict": self.verdict, "has_power": self.has_power}


def _deciding_term(an: Analysis) -> str:
    """The term that carries the first variable's test: its log term when its power is pinned."""
    chain = [t.name for t in an.terms if t.variable == an.variables[0]]
    for name in chain[:-1]:
        if not pinned(an.judgements[name].plain):
            return name
    return chain[-1]


@dataclass(frozen=True)
class BoundRecord(JsonText):
    """One tested bound: its analysis (fits, drift, extrapolation, power), its verdict and its final reason (the
    analysis' reason with the extrapolation and censoring notes), the negative control, and why the row tests
    nothing (``trivial``) where that is so."""

    result: BoundAnalysis
    reason: str
    negative_control: NegativeControl
    trivial: str | None = None

    @property
    def analysis(self) -> Analysis:
        return self.result.analysis

    @property
    def label(self) -> str:
        return self.result.label

    @property
    def quantity(self) -> str:
        return self.result.quantity

    @property
    def reading(self) -> str | None:
        return self.result.reading

    @property
    def verdict(self) -> Verdict:
        return self.analysis.verdict

    def as_json(self, trivial_key: bool = True) -> dict:
        an, r = self.analysis, self.result
        out = {
            "quantity": r.quantity, "kind": r.kind, "reading": r.reading, "expr": r.expr, "label": r.label,
            "verdict": an.verdict, "reason": self.reason, **an.function_json(), "fits": an.fits_json(), "cells_used": an.cells_used,
            "negative_control": self.negative_control.as_json(),
            "power": an.power, "drift": {v: d.as_json() for v, d in an.drift.items()},
            "extrapolated": {v: e.as_json() for v, e in an.extrapolated.items()},
            "df": an.fit.df, "cells": an.fit.n_cells, "dropped_rows": an.fit.dropped, "alpha": an.alpha, "notes": list(an.notes),
            "runs": an.fit.runs if an.fit.trajectory else None, "per_run": an.fit.per_run or None,
            "curvature": an.fit.curvature, "interaction": an.fit.interaction,
            "cell_table": [{**{v: c[v] for v in an.variables}, **{"log_" + v: c["log_" + v] for v in an.variables},
                            "mean_log": c["mean_log"], "sd_log": c["sd_log"], "n_seeds": c["n_seeds"], "residual": c.get("residual")}
                           for c in an.fit.cells],
        }
        if trivial_key:
            out["trivial"] = self.trivial
        return out


def bound_record(r: BoundAnalysis, app: Applicability | None, counts: tuple[CellCount, ...] | None = None,
                 trivial: str | None = None) -> BoundRecord:
    """The record of one analysed bound: its reason says when the hypotheses fail at every cell (extrapolated) and
    when censored or failed rows pass 5% of a cell."""
    an = r.analysis
    v0 = _deciding_term(an)
    j0 = an.judgements[v0]
    reason = an.reason
    if app is not None and app.total and app.inside == 0 and any(not h["qualitative"] and not h["skipped"] and h["fails"]
                                                                  for h in app.hypotheses.values()):
        reason = f"{EXTRAPOLATED}; {reason}"  # a hypothesis fails somewhere; one that is only unknown is not a failure
    elif app is not None and app.total and app.inside == 0 and any(not h["qualitative"] and not h["skipped"] and h["unknown"]
                                                                    for h in app.hypotheses.values()):
        reason = f"the hypotheses could not be evaluated at any simulated cell (a value they read is missing); {reason}"
    note = censoring_note(counts, r.quantity) if counts else None
    if note:
        reason = (f"{reason}; rows that are bounds or failed above 5% of a cell ({note}): censored rows enter the fit as bounds "
                  "(Tobit), failed rows are not measurements")
    nc = NegativeControl(v0, j0.negative_control.predicted, j0.negative_control.verdict, bool(an.power["has_power"]))
    return BoundRecord(r, reason, nc, trivial)


@dataclass(frozen=True)
class WouldDecide:
    """For one undecided exponent: the SE that would decide it, and the budget that would buy it (if seed noise)."""

    label: str
    variable: str
    se: float
    se_needed: float
    factor: float | None
    budget_seconds: float | None
    text: str
    plan: object = None  # the envelope's plan (simulate.verdict.planner.DesignPlan), where one could be computed

    def as_json(self) -> dict:
        return {"label": self.label, "variable": self.variable, "se": self.se, "se_needed": self.se_needed, "factor": self.factor,
                "budget_seconds": self.budget_seconds, "text": self.text,
                "plan": self.plan.as_json() if self.plan is not None else None}  # type: ignore[attr-defined]


def planned(label: str, plan, seconds: float | None = None) -> WouldDecide:
    """A bound's plan (simulate.verdict.planner.DesignPlan) as what would decide it: the design that decided in
    simulation, its work over this sweep's and (with ``seconds``, the sweep's work) its budget; none where the plan was
    not checked or no design decided."""
    ok = plan.check.passed if getattr(plan, "check", None) is not None else None
    return WouldDecide(label, plan.variable, math.nan, math.nan, ok.work if ok else None,
                       ok.work * seconds if ok and seconds is not None else None, plan.text(), plan)


def would_decide(bounds: tuple[BoundRecord, ...], seconds: float, tasks: int, plans: dict | None = None) -> tuple[WouldDecide, ...]:
    """For each undecided bound, the direction furthest from its target (the function test's resolution against the
    deviation a log log factor makes): the seeds that would bring the resolution there, if the spread is seed noise
    (the resolution shrinks as 1/sqrt(n)), and the budget they cost; a correction that cannot be told from a
    deviation, or a residual beside one, needs a wider range instead. ``plans``: the envelope's plan per bound label
    (:mod:`simulate.verdict.planner`); where one was checked by simulation it replaces the resolution's arithmetic
    (its design and work are the ones that decided in simulation; none where no design did)."""
    out = []
    for b in bounds:
        ft = b.analysis.function
        t = ft.weakest() if ft is not None else None
        p = (plans or {}).get(b.label)
        if p is not None and getattr(p, "check", None) is not None:  # a plan checked by simulation: it alone says what decides
            out.append(planned(b.label, p, seconds))
            continue
        if t is None:
            if (plans or {}).get(b.label) is not None:
                p = plans[b.label]  # type: ignore[index]
                out.append(WouldDecide(b.label, p.variable, math.nan, math.nan, None, None, p.text(), p))
            continue
        name = f"{t.family}:{t.direction}"
        if t.levels in ("cannot tell", "residual") or not t.target or not math.isfinite(t.resolution):
            out.append(WouldDecide(b.label, name, t.se, math.nan, None, None,
                                   f"a wider range of {t.direction}: more seeds cannot separate a correction to scaling from a "
                                   "deviation" if t.levels else f"a wider range of {t.direction} or more seeds", (plans or {}).get(b.label)))
            continue
        f = max((t.resolution / t.target) ** 2, 1.0)
        need = t.se * min(t.target / t.resolution, 1.0)
        out.append(WouldDecide(b.label, name, t.se, need, f, f * seconds,
                               f"about {f:.1f}x the measurements ({f * seconds:.0f} s of budget in reference seconds, {math.ceil(f * tasks)} "
                               f"tasks) would bring the resolution along {t.direction} from {t.factor()} to {t.factor(t.target)}, if the "
                               "spread is seed noise; a wider range also shrinks it", (plans or {}).get(b.label)))
    return tuple(out)


@dataclass(frozen=True)
class Round:
    """One round of the sequential design: what it added, the tasks it ran, its work and look, and the verdicts then."""

    round: int
    added: str
    tasks_run: int
    tasks_total: int
    seconds: float
    work: float
    look: Look
    ci_width: Mapping[str, Mapping[str, float]]
    verdicts: Mapping[str, Verdict]

    def as_json(self) -> dict:
        return {"round": self.round, "added": self.added, "tasks_run": self.tasks_run, "tasks_total": self.tasks_total,
                "seconds": self.seconds, "work": self.work, "look": self.look.as_json(), "alpha": self.look.alpha,
                "ci_width": {k: dict(v) for k, v in self.ci_width.items()}, "verdicts": dict(self.verdicts)}


@dataclass(frozen=True)
class Work:
    """The work of a sweep in reference seconds (the experiment's declared cost per task), and the wall clock."""

    used: float
    budget: float | None
    wall_seconds: float
    wall_cap: float | None
    cap_bound: bool

    def as_json(self) -> dict:
        return {"units": "reference seconds (the experiment's declared cost per task)", "used": self.used, "budget": self.budget,
                "wall_seconds": self.wall_seconds, "wall_cap": self.wall_cap, "cap_bound": self.cap_bound}


@dataclass(frozen=True)
class TaskCounts:
    tasks: int
    ran: int
    failed: int
    remeasured: tuple[str, ...] = ()  # stored rows that could not be trusted (edited, or another cell's): measured again
    ledger_discarded: tuple[str, ...] = ()  # looks of the sequential ledger that could not be trusted: discarded, recomputed

    def as_json(self) -> dict:
        return {"tasks": self.tasks, "ran": self.ran, "skipped": self.tasks - self.ran, "failed": self.failed,
                "remeasured": list(self.remeasured), "ledger_discarded": list(self.ledger_discarded)}


@dataclass(frozen=True)
class HalfThreshold:
    """A bound's verdict again with the certificate thresholds halved (or why it could not be fitted)."""

    verdict: str
    eps: float | None = None
    delta: float | None = None
    rows_left: int | None = None
    reason: str | None = None

    def as_json(self) -> dict:
        if self.reason is not None:
            return {"verdict": self.verdict, "reason": self.reason}
        return {"verdict": self.verdict, "eps": self.eps, "delta": self.delta, "rows_left": self.rows_left}


@dataclass(frozen=True)
class KKTRecord:
    """Claims about KKT points: per cell the networks trained and certified, every verdict at halved thresholds, and
    (FVBS23.thm.4_2) per cell the transfer of one KKT point's flip to another."""

    cells: tuple[KKTCell, ...]
    half: Mapping[str, HalfThreshold]
    transfer: tuple[TransferCell, ...] | None = None

    def as_json(self) -> dict:
        out = {"kkt": [c.as_json() for c in self.cells], "kkt_half": {k: v.as_json() for k, v in self.half.items()}}
        if self.transfer is not None:
            out["transfer"] = [c.as_json() for c in self.transfer]
        return out


@dataclass(frozen=True)
class ComparisonRecord(JsonText):
    """What one comparison (a sweep, ``source="sweep"``) or one CSV (``source="csv"``) found, typed; ``to_json()``
    writes the summary.json contract."""

    source: Literal["sweep", "csv"]
    claim: str
    title: str
    status: str
    flags: tuple[str, ...]
    experiment: str
    grid: Mapping[str, list]
    seeds: int
    fit_variables: tuple[str, ...]
    margin: float | None
    margin_log: float | None
    offsets: str
    fit_from: Mapping[str, float] | None
    bounds: tuple[BoundRecord, ...]
    applicability: Applicability | None
    provenance: str
    task_status: Mapping[str, int]
    constants: Mapping[str, float] = field(default_factory=dict)
    fixed: Mapping[str, object] = field(default_factory=dict)
    # a sweep's own
    initial_grid: Mapping[str, list] | None = None
    rounds: tuple[Round, ...] = ()
    budget: float | None = None
    spending: str | None = None
    alpha: float = 0.05
    work: Work | None = None
    inside_only: bool = False
    include_outside: bool = False
    would_decide: tuple[WouldDecide, ...] = ()
    censored: tuple[CellCount, ...] = ()
    failures: tuple[FailedRow, ...] = ()
    flow: tuple[FlowRun, ...] = ()  # a trajectory's step-halving control, run by run
    reading: Reading | None = None
    kkt: KKTRecord | None = None
    tasks: TaskCounts | None = None
    seconds: float | None = None
    code_version: str | None = None
    design: Mapping[str, object] | None = None
    # a CSV's own
    data: str | None = None
    rows: int | None = None
    binning: str | None = None  # a long trajectory binned in log-time (simulate.compare.binning): what was done

    @property
    def verdict(self) -> Verdict:
        return self.bounds[0].verdict

    @property
    def reason(self) -> str:
        return self.bounds[0].reason

    def with_provenance(self, text: str) -> ComparisonRecord:
        return replace(self, provenance=text)

    def _verdict_summary(self, results: list[dict]) -> dict:
        """The keys every judged comparison shares: the primary bound's fits, verdict, reason, negative control and
        power, every reading, and per bound the drift and the extrapolated exponents."""
        primary, pa = results[0], self.bounds[0].analysis
        v0 = pa.variables[0]
        return {
            "fits": [{k: f[k] for k in ("variable", "estimate", "ci_low", "ci_high", "predicted", "verdict")} for f in primary["fits"]],
            "verdict": primary["verdict"], "reason": primary["reason"],
            "negative_control": {k: primary["negative_control"][k] for k in ("exponent_tested", "verdict", "has_power")},
            "readings": {r["reading"]: r["verdict"] for r in results if r["reading"]} or None,
            "applicability": self.applicability.as_json() if self.applicability else None,
            "drift": {r["label"]: r["drift"] for r in results},
            "extrapolated": {"quantity": primary["label"], "variable": v0, "estimate": pa.extrapolated[v0].estimate,
                             "ci": list(pa.extrapolated[v0].ci) if pa.extrapolated[v0].ci else None,
                             "all": {r["label"]: r["extrapolated"] for r in results}},
            "power": {"has_power": pa.power["has_power"], "detectable_deviation": pa.power["detectable_deviation"],
                      "all": {r["label"]: r["power"] for r in results}},
        }

    def as_json(self) -> dict:
        """The summary.json contract (not yet made JSON-safe: :func:`~ibcheck.theory.result.plain` does that on saving)."""
        sweep = self.source == "sweep"
        results = [b.as_json(trivial_key=sweep) for b in self.bounds]
        head: dict[str, Any] = {"claim": self.claim, "title": self.title, "status": self.status, "flags": list(self.flags),
                                "experiment": self.experiment}
        if not sweep:
            head.update({"data": self.data, "rows": self.rows, "binning": self.binning})
        head["grid"] = {v: list(x) for v, x in self.grid.items()}
        if sweep:
            head["initial_grid"] = {v: list(x) for v, x in (self.initial_grid or {}).items()}
        head.update({"seeds": self.seeds, "fit_variables": list(self.fit_variables), "margin": self.margin, "margin_log": self.margin_log,
                     "offsets": self.offsets, "fit_from": dict(self.fit_from or {}) or None, **self._verdict_summary(results),
                     "rounds": [r.as_json() for r in self.rounds], "budget": self.budget, "spending": self.spending, "alpha": self.alpha})
        if sweep:
            head["work"] = self.work.as_json() if self.work else None
        head["inside_only"] = self.inside_only
        if sweep:
            head["include_outside"] = self.include_outside
        head.update({"constants": dict(self.constants), "would_decide": [w.as_json() for w in self.would_decide]})
        if not sweep:
            return {**head, "results": results, "fixed": dict(self.fixed), "provenance": self.provenance, "task_status": dict(self.task_status)}
        return {**head, "censored": [c.as_json() for c in self.censored], "results": results,
                "reading": self.reading.as_json() if self.reading else None, **(self.kkt.as_json() if self.kkt else {}),
                "tasks": self.tasks.as_json() if self.tasks else None, "task_status": dict(self.task_status),
                "failures": [f.as_json() for f in self.failures], "flow_control": [f.as_json() for f in self.flow], "seconds": self.seconds,
                "code_version": self.code_version, "fixed": dict(self.fixed), "design": dict(self.design or {}), "provenance": self.provenance}
