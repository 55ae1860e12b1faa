"""The suite: every claim with an experiment compared, sharing one budget, and judged as one family.

Takes :class:`SuiteOptions` and a folder for the sweep stores (each comparison's SQLite file, so that a rerun
resumes); returns a :class:`SuiteResult`: the comparisons, the probability claims measured on their sweeps, one
:class:`SuiteRow` per tested bound with its verdict and whether it is counted (Holm's step-down across every row,
then the counting rule of :mod:`ibcheck.simulate.verdict.rules`), and the rows of the forest plot. Nothing but the
sweep stores is written: :mod:`ibcheck.simulate.report.index` renders and saves the result.

Pitfall avoided: the index page ran the comparisons, shared the budget and applied the counting rule while it wrote
Markdown; with function-level imports counted, compare, report and the reproductions formed a cycle.
"""
from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence, cast

from ibcheck.simulate.compare import inputs
from ibcheck.simulate.compare.driver import compare_in
from ibcheck.simulate.compare.probability import PROBABILITY_CLAIMS, ProbabilityComparison, extended_comparison
from ibcheck.simulate.compare.record import BoundRecord, ComparisonRecord
from ibcheck.simulate.compare.result import ComparisonResult
from ibcheck.simulate.experiments.registry import EXPERIMENTS, experiment_for
from ibcheck.simulate.report.figures import ForestRow
from ibcheck.simulate.verdict.kkt import certified_everywhere, depth_text, every_point_searched
from ibcheck.simulate.verdict.rules import RowEvidence, Verdict, counted, holm
from ibcheck.theory import get_claim
from ibcheck.theory.argtypes import refused
from ibcheck.theory.errors import InputError
from ibcheck.theory.outdir import inside, slug


@dataclass(frozen=True)
class SuiteOptions:
    """``budget``: work (reference seconds) shared by the comparisons (None: fixed designs); ``only``: these claims
    (a probability claim brings the comparison it is measured on) and no reproductions; ``constants``: the claims'
    unknown constants, where a claim has them."""

    quick: bool = True
    budget: float | None = None
    only: tuple[str, ...] = ()
    workers: int = 1
    inside_only: bool = False
    constants: dict = field(default_factory=dict)
    spending: str = "pocock"

    def __post_init__(self):
        inputs.check_workers(self.workers)
        inputs.check_work("budget", self.budget)
        inputs.check_spending(self.spending)
        for name in ("quick", "inside_only"):
            inputs.check_bool(name, getattr(self, name))
        twice = sorted({n for n in self.only if self.only.count(n) > 1})
        if twice:
            raise refused("only", list(self.only), f"is not accepted: {', '.join(twice)} is given twice (one row per bound)")
        for name in self.only:
            if name not in EXPERIMENTS and name not in PROBABILITY_CLAIMS:
                experiment_for(name)  # the one-line error with the nearest ids

    def names(self) -> list[str]:
        """The claims whose comparisons run, in order: ``only``'s (a probability claim's base in its place), else
        every claim with an experiment."""
        if not self.only:
            return list(EXPERIMENTS)
        names = [PROBABILITY_CLAIMS[n].base if n in PROBABILITY_CLAIMS else n for n in self.only]
        return list(dict.fromkeys(names))


@dataclass(frozen=True)
class SuiteRow:
    """One tested bound of one claim, with its verdict and whether it counts as decided. The index counts from these
    fields, never from rendered text."""

    claim: str
    quantity: str
    kind: str
    predicted: str
    measured: str
    resolution: str
    attained: bool | None
    inside: str
    kkt: str
    looks: int
    verdict: Verdict
    counted: bool
    not_counted: str  # why an otherwise decided row is not counted ("-" when counted or undecided)
    why: str
    counted_how: str = ""  # a counted claim about every KKT point: its classes' depth stability, in words


@dataclass(frozen=True)
class NotRun:
    """A claim of the suite that could not be compared, and why (one line)."""

    claim: str
    why: str


@dataclass(frozen=True)
class SuiteResult:
    """Everything the index shows, typed: what ran, each row's verdict and counting, and the forest plot's rows."""

    options: SuiteOptions
    comparisons: tuple[tuple[str, ComparisonResult], ...]
    probability: tuple[tuple[ProbabilityComparison, ComparisonRecord], ...]
    rows: tuple[SuiteRow, ...]
    forest: tuple[ForestRow, ...]
    decided: frozenset[str]
    not_run: tuple[NotRun, ...]
    overruns: tuple[str, ...]
    seconds: float

    @property
    def claims(self) -> int:
        """Claims in the suite: the comparisons that ran or were refused, and the probability claims."""
        return len(self.comparisons) + len(self.not_run) + len(self.probability)

    def known(self) -> dict[str, ComparisonResult]:
        """The comparisons by claim id (the reproductions reuse them instead of sweeping again)."""
        return dict(self.comparisons)


def charged(used: float, share: float | None) -> float:
    """The work a comparison takes from the suite's shared budget: what it used, at most its share.

    Pitfall avoided: a comparison whose initial grid alone costs more than its share (FVBS23.thm.4_2's
    full design: 9126 s of work against a 71 s share of a 600 s budget) would otherwise leave the
    comparisons after it 1 s each, and their verdicts would depend on their place in the order. The overrun is the design's
    minimum, not a budget decision; the index states each comparison's work and budget."""
    return min(used, share) if share is not None else used


def _stderr(text: str) -> None:
    print(text, file=sys.stderr)


def run_suite(options: SuiteOptions, stores: str, log: Callable[[str], None] | None = _stderr) -> SuiteResult:
    """Compare every claim of ``options`` (each sweep's store under ``stores/compare/<claim id>/``), sharing the budget
    in order; then judge the rows as one family. ``log`` receives one progress line per comparison (None: silent)."""
    names = options.names()
    for name in names:
        slug(name)  # every folder name checked before anything runs
    t0 = time.perf_counter()
    used = 0.0  # work (reference seconds) of the comparisons so far: deterministic, unlike the wall clock
    done: list[tuple[str, ComparisonResult]] = []
    probability: list[tuple[ProbabilityComparison, ComparisonRecord]] = []
    not_run: list[NotRun] = []
    overruns: list[str] = []
    for i, name in enumerate(names):
        share = max((options.budget - used) / (len(names) - i), 1.0) if options.budget else None
        if log:
            log(f"[{time.perf_counter() - t0:6.1f} s] comparing {name}" + (f" (budget {share:.0f} s of work)" if share else "") + " ...")
        try:
            comparison = _compare(name, inside(stores, "compare", slug(name)), options, share)
        except InputError as err:
            not_run.append(NotRun(name, str(err)))
            continue
        rec = comparison.record
        w = rec.work.used if rec.work else 0.0
        used += charged(w, share)
        if share is not None and w > share:
            overruns.append(f"{name} {w:.0f} s (share {share:.0f} s)")
        done.append((name, comparison))
        for pid, spec in PROBABILITY_CLAIMS.items():
            if spec.base == name:
                try:
                    folder = inside(stores, "compare", slug(pid))
                    os.makedirs(folder, exist_ok=True)  # the samples its test needs beyond the base's, in a store of its own
                    pc = extended_comparison(pid, comparison, os.path.join(folder, "sweep.sqlite"), options.workers)
                    if pc.extension is not None:
                        used += pc.extension.work
                        if log:
                            log(f"[{time.perf_counter() - t0:6.1f} s] {pid}: {pc.extension.new_samples} samples added to {name}'s")
                    probability.append((pc, rec))
                except InputError as err:
                    not_run.append(NotRun(pid, str(err)))
    pending = [(name, b, c.record) for name, c in done for b in c.record.bounds]
    rows, forest, decided = judged_rows(pending, probability)
    return SuiteResult(options, tuple(done), tuple(probability), tuple(rows), tuple(forest), frozenset(decided), tuple(not_run),
                       tuple(overruns), time.perf_counter() - t0)


def _compare(name: str, folder: str, options: SuiteOptions, share: float | None) -> ComparisonResult:
    """One comparison with its store in ``folder`` (:func:`~ibcheck.simulate.compare.driver.compare_in`), its share of the
    budget and the claim's own constants."""
    cs = {k: v for k, v in options.constants.items() if k in get_claim(name).constants} or None
    return compare_in(name, folder, quick=options.quick, workers=options.workers, progress=False, budget=share,
                      inside_only=options.inside_only, constants=cs, spending=options.spending)


# -- the family: Holm across every row, then the counting rule ---------------------------------------------------
def _evidence(b: BoundRecord, rec: ComparisonRecord, family_rejected: bool | None = None) -> RowEvidence:
    """What the counting rule (:func:`~ibcheck.simulate.verdict.rules.counted`) reads of one bound of a comparison."""
    app = rec.applicability
    kkt = several = None
    depth = ""
    if rec.kkt is not None:
        keys = {tuple(sorted(c["cell"].items())) for c in (app.cells if app else []) if c.get("inside")}
        kkt = certified_everywhere(rec.kkt.cells, keys)
        several = every_point_searched(rec.kkt.cells, keys, b.quantity)
        depth = "" if several else depth_text(rec.kkt.cells, keys, b.quantity)
    return RowEvidence(b.verdict, app.inside if app else 0, app.total if app else 0, b.trivial, rec.offsets, kkt, several,
                       family_rejected, depth)


def kkt_text(rec: ComparisonRecord) -> str:
    """The KKT evidence of a comparison in one phrase (candidates certified, eps, distinct points, ties)."""
    if rec.kkt is None:
        return "-"
    k = rec.kkt.cells
    eps = max((c.max_eps for c in k if c.max_eps is not None), default=None)
    dist = [d for c in k for d in c.distinct]
    return (f"{sum(c.networks_certified for c in k)}/{sum(c.networks_trained for c in k)} candidates certified"
            + (f", eps <= {eps:.1e}" if eps is not None else "")
            + (f"; distinct points per sample {min(dist)}-{max(dist)}" if dist else "")
            + (f"; {min(c for x in k for c in x.ties)}-{max(c for x in k for c in x.ties)} ties" if any(x.ties for x in k) else ""))


def _bound_row(name: str, b: BoundRecord, rec: ComparisonRecord, holm_level: tuple[bool, float] | None = None) -> SuiteRow:
    r = b.as_json()  # the fitted terms as they are shown
    pred = ", ".join(f"{f['variable']}: {f['predicted']:g}" for f in r["fits"])
    meas = ", ".join(f"{f['variable']}: {f['estimate']:.2f} [{f['ci_low']:.2f}, {f['ci_high']:.2f}]" for f in r["fits"])
    ft = b.analysis.function
    res = "; ".join(", ".join(t.factor() for t in ft.tests if t.variables == (v,)) for v in ft.resolution) if ft else "-"
    reason = b.reason
    if b.verdict == "inconclusive":
        wd = [w for w in rec.would_decide if w.label == b.label and w.budget_seconds]
        if wd:
            worst = max(wd, key=lambda w: w.budget_seconds or 0.0)
            reason += (f". Would decide: about {worst.budget_seconds:.0f} s of budget ({worst.factor:.1f}x this sweep's work), "
                       + ("checked by simulation" if worst.plan is not None and getattr(worst.plan, "check", None) is not None
                          else "if the spread is seed noise") + "; see the comparison's report")
    app = rec.applicability
    ev = _evidence(b, rec, holm_level[0] if holm_level else None)
    is_counted, how = counted(ev)
    if holm_level is not None and b.verdict == "inconsistent":
        reason += f". Family level (Holm across the index's rows): p = {ft.p_violation if ft else 1.0:.2g} against {holm_level[1]:.2g}"
    return SuiteRow(name, b.quantity + (f" [{b.reading}]" if b.reading else ""), b.result.kind, pred, meas, res,
                    ft.attained if ft else None, f"{app.inside if app else 0}/{app.total if app else 0}", kkt_text(rec),
                    len(rec.rounds), b.verdict, is_counted, _counted_text(is_counted, how), reason, ev.kkt_depth if is_counted else "")


def _probability_row(pc: ProbabilityComparison, base: ComparisonRecord, holm_level: tuple[bool, float]) -> SuiteRow:
    """The row of a probability claim (:mod:`simulate.compare.probability`), counted by the same rule: its cells
    inside its own hypotheses, certified KKT points, and two distinct points per sample where it speaks of every one."""
    t, app = pc.test, pc.applicability
    kkt = several = None
    depth = ""
    if base.kkt is not None:
        keys = app.inside_keys()
        kkt, several = certified_everywhere(base.kkt.cells, keys), every_point_searched(base.kkt.cells, keys, t.quantity)
        if pc.extra_kkt:  # the extension's samples enter the test, so its cells are judged too
            kkt = kkt and certified_everywhere(pc.extra_kkt, keys)
            several = several or every_point_searched(pc.extra_kkt, keys, t.quantity)
        depth = "" if several else depth_text(base.kkt.cells, keys, t.quantity)
    is_counted, how = counted(RowEvidence(t.verdict, app.inside, app.total, None, "fit", kkt, several, holm_level[0], depth))
    depth = depth if is_counted else ""
    why = pc.reason
    if t.verdict == "inconsistent":
        why += f". Family level (Holm across the index's rows): p = {t.p_value:.2g} against {holm_level[1]:.2g}"
    return SuiteRow(pc.claim, t.quantity, "<= (w.p. 1 - delta)", f"eps = {t.eps:g}, delta = {t.delta:g}",
                    f"{t.exceed}/{len(t.samples)} samples above eps ({t.unresolved} unresolved)",
                    f"a failure rate above {t.rate_upper:.2f}", None, f"{app.inside}/{app.total}", kkt_text(base), 1, cast(Verdict, t.verdict),
                    is_counted, _counted_text(is_counted, how), why, depth)


def _counted_text(is_counted: bool, how: str) -> str:
    """Why a decided row does not count ("-" when it counts or is undecided)."""
    return "-" if is_counted or how == "undecided" else how


def judged_rows(pending: Sequence[tuple[str, BoundRecord, ComparisonRecord]],
                probability: Sequence[tuple[ProbabilityComparison, ComparisonRecord]] = ()) -> tuple[list[SuiteRow], list[ForestRow], set[str]]:
    """The rows, the forest plot's rows and the claims with a counted row. The family is every row (the probability
    claims' binomial tests included): an inconsistent row counts only if its violation survives Holm's step-down
    across them."""
    family = holm([b.analysis.function.p_violation if b.analysis.function else 1.0 for _, b, _ in pending]
                  + [pc.test.p_value for pc, _ in probability])
    rows: list[SuiteRow] = []
    forest: list[ForestRow] = []
    decided: set[str] = set()
    for (name, b, rec), lv in zip(pending, family):
        row = _bound_row(name, b, rec, lv)
        rows.append(row)
        if b.analysis.function is not None:
            forest.append(ForestRow(name, b.label, b.verdict, row.counted, b.analysis.function))
        if row.counted:
            decided.add(name)
    for (pc, base), lv in zip(probability, family[len(pending):]):
        rows.append(_probability_row(pc, base, lv))
        if rows[-1].counted:
            decided.add(pc.claim)
    return rows, forest, decided
