"""The default report (``ibcheck report``, what ``make report`` runs): the bound scaling report, a
theory-against-simulation comparison for every claim with an experiment (their sweeps share one
budget), the reproductions, and an index page: a forest plot of every row's tested deviations (the ratio of the
measure to the claim's function, per variable and family, against the row's resolution, coloured by verdict) and a
table that gives per claim and bound the predicted and (descriptive) measured exponents, the cells inside the
hypotheses, the resolution, whether the bound is attained, the looks and the verdict.
"""
from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence, cast

from ibcheck.simulate.compare import inputs
from ibcheck.simulate.compare.probability import PROBABILITY_CLAIMS, ProbabilityComparison, probability_comparison
from ibcheck.simulate.compare.record import BoundRecord, ComparisonRecord
from ibcheck.simulate.experiments.registry import EXPERIMENTS, experiment_for
from ibcheck.simulate.report.figures import ForestRow, forest_figure, scaling_report, write_html
from ibcheck.simulate.verdict.kkt import certified_everywhere, every_point_searched
from ibcheck.simulate.verdict.rules import MIN_INSIDE, RowEvidence, Verdict, counted, holm
from ibcheck.theory import get_claim
from ibcheck.theory.atomic import save_figure_file, write_text
from ibcheck.theory.errors import InputError
from ibcheck.theory.outdir import check_out, inside, slug
from ibcheck.theory.result import markdown_table

if TYPE_CHECKING:
    from ibcheck.simulate.compare.result import ComparisonResult


@dataclass(frozen=True)
class ReportOptions:
    """``budget``: work (reference seconds) shared by the comparisons (None: fixed designs); ``only``: these claims
    and no reproductions; ``constants``: the claims' unknown constants, where a claim has them."""

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

        for name in self.only:
            if name not in EXPERIMENTS:
                experiment_for(name)  # the one-line error with the nearest ids


def _evidence(b: BoundRecord, rec: ComparisonRecord, family_rejected: bool | None = None) -> RowEvidence:
    """What the counting rule (:func:`~ibcheck.simulate.verdict.rules.counted`) reads of one bound of a comparison."""
    app = rec.applicability
    kkt = several = None
    if rec.kkt is not None:
        keys = {tuple(sorted(c["cell"].items())) for c in (app.cells if app else []) if c.get("inside")}
        kkt = certified_everywhere(rec.kkt.cells, keys)
        several = every_point_searched(rec.kkt.cells, keys)
    return RowEvidence(b.verdict, app.inside if app else 0, app.total if app else 0, b.trivial, rec.offsets, kkt, several,
                       family_rejected)


@dataclass(frozen=True)
class IndexRow:
    """One row of the index: a tested bound of one claim, with its verdict and whether it counts as decided.
    The index counts from these fields, never from the rendered text."""

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

    def markdown(self) -> dict:
        att = {True: "yes", False: "no (loose)", None: "-"}[self.attained]
        return {"claim": f"[{self.claim}](compare/{slug(self.claim)}/report.md)", "quantity": self.quantity, "kind": self.kind,
                "predicted": self.predicted, "exponents (95% CI, descriptive)": self.measured, "resolution": self.resolution,
                "attained": att if self.kind not in ("Theta",) else "-", "inside": self.inside, "KKT": self.kkt, "looks": self.looks,
                "verdict": f"**{self.verdict}**", "counted": "yes" if self.counted else "no",
                "extrapolated / trivial (not counted)": self.not_counted, "why": self.why}


def _kkt_text(rec: ComparisonRecord) -> str:
    if rec.kkt is None:
        return "-"
    k = rec.kkt.cells
    eps = max((c.max_eps for c in k if c.max_eps is not None), default=None)
    dist = [d for c in k for d in c.distinct]
    return (f"{sum(c.networks_certified for c in k)}/{sum(c.networks_trained for c in k)} candidates certified"
            + (f", eps <= {eps:.1e}" if eps is not None else "")
            + (f"; distinct points per sample {min(dist)}-{max(dist)}" if dist else "")
            + (f"; {min(c for x in k for c in x.ties)}-{max(c for x in k for c in x.ties)} ties" if any(x.ties for x in k) else ""))


def _index_row(name: str, b: BoundRecord, rec: ComparisonRecord, holm_level: tuple[bool, float] | None = None) -> IndexRow:
    r = b.to_json()  # the index is written from here on: the fitted terms as they are shown
    pred = ", ".join(f"{f['variable']}: {f['predicted']:g}" for f in r["fits"])
    meas = ", ".join(f"{f['variable']}: {f['estimate']:.2f} [{f['ci_low']:.2f}, {f['ci_high']:.2f}]" for f in r["fits"])
    ft = b.analysis.function
    res = "; ".join(", ".join(t.factor() for t in ft.tests if t.variables == (v,)) for v in ft.resolution) if ft else "-"
    reason = b.reason.replace("|", "/")
    if b.verdict == "inconclusive":
        wd = [w for w in rec.would_decide if w.label == b.label and w.budget_seconds]
        if wd:
            worst = max(wd, key=lambda w: w.budget_seconds or 0.0)
            reason += (f". Would decide: about {worst.budget_seconds:.0f} s of budget ({worst.factor:.1f}x the measurements) "
                       f"if the spread is seed noise; see the comparison's report")
    app = rec.applicability
    is_counted, how = counted(_evidence(b, rec, holm_level[0] if holm_level else None))
    if holm_level is not None and b.verdict == "inconsistent":
        ft = b.analysis.function
        reason += f". Family level (Holm across the index's rows): p = {ft.p_violation if ft else 1.0:.2g} against {holm_level[1]:.2g}"
    return IndexRow(name, b.quantity + (f" [{b.reading}]" if b.reading else ""), b.result.kind, pred, meas, res,
                    ft.attained if ft else None, f"{app.inside if app else 0}/{app.total if app else 0}", _kkt_text(rec),
                    len(rec.rounds), b.verdict, is_counted, "-" if is_counted or how == "undecided" else how, reason)


def _fresh_text(cells) -> str:
    """What the fresh points showed: each point's own z, and the negative controls (which must fail)."""
    own = [c.own_lcb for c in cells if c.own_lcb is not None]
    ctl: dict[str, list] = {}
    for c in cells:
        for k, v in (c.controls or {}).items():
            ctl.setdefault(k, []).append(v)
    parts = []
    if own:
        parts.append(f"each point's own z flips at least {min(own):.3f} of {cells[0].fresh_points} fresh points (one-sided 95% bound)")
    for k, vs in ctl.items():
        parts.append(f"control {k.replace('_', ' ')}: bound {min(v['lcb'] for v in vs):.3f}, failed as it must at "
                     f"{sum(bool(v['failed']) for v in vs)} of {len(vs)} cells")
    return (" On fresh points: " + "; ".join(parts) + ".") if parts else ""


def _claim_notes(name: str, rec: ComparisonRecord) -> list[str]:
    """The index's lines on a claim's reading (ambiguous claims), transferability and halved KKT thresholds."""
    out = []
    if rec.reading is not None:
        out.append(f"- **{name}, reading the data support: {rec.reading.reading}.** {rec.reading.reason}.")
    if rec.kkt is not None and rec.kkt.transfer:
        t = [c for c in rec.kkt.transfer if c.pairs]
        if not t:
            out.append(f"- **{name}, transferability: not tested.** Every sample holds one distinct certified KKT point (the networks "
                       "trained from different initializations, and the cone search's points, agree as functions), so there is no "
                       "second point to transfer to."
                       + _fresh_text(rec.kkt.transfer))
        if t:
            ok = sum(bool(c.transferable) for c in t)
            lo = min(c.fraction_min for c in t if c.fraction_min is not None)
            lcb = [c.fraction_lcb for c in t if c.fraction_lcb is not None]
            out.append(f"- **{name}, transferability:** the z found for one distinct certified KKT point flips at least {lo:.2f} of the "
                       f"fresh points on another of the same sample" + (f" (one-sided 95% bound {min(lcb):.3f})" if lcb else "")
                       + f", against 1 - eps = {t[0].target:.2f}; transferable at {ok} of {len(t)} cells." + _fresh_text(rec.kkt.transfer))
    if rec.kkt is not None and rec.kkt.half:
        out.append(f"- **{name}, KKT thresholds halved:** " + "; ".join(f"{k}: {v.verdict}" for k, v in rec.kkt.half.items()) + ".")
    return out + ([""] if out else [])


def _probability_row(pc: ProbabilityComparison, base: ComparisonRecord, holm_level: tuple[bool, float]) -> IndexRow:
    """The index row of a probability claim (:mod:`simulate.compare.probability`), counted by the same rule: its cells
    inside its own hypotheses, certified KKT points, and two distinct points per sample where it speaks of every one."""
    t, app = pc.test, pc.applicability
    kkt = several = None
    if base.kkt is not None:
        keys = app.inside_keys()
        kkt, several = certified_everywhere(base.kkt.cells, keys), every_point_searched(base.kkt.cells, keys)
    is_counted, how = counted(RowEvidence(t.verdict, app.inside, app.total, None, "fit", kkt, several, holm_level[0]))
    why = t.reason.replace("|", "/")
    if t.verdict == "inconsistent":
        why += f". Family level (Holm across the index's rows): p = {t.p_value:.2g} against {holm_level[1]:.2g}"
    return IndexRow(pc.claim, t.quantity, "<= (w.p. 1 - delta)", f"eps = {t.eps:g}, delta = {t.delta:g}",
                    f"{t.exceed}/{len(t.samples)} samples above eps ({t.unresolved} unresolved)",
                    f"a failure rate above {t.rate_upper:.2f}", None, f"{app.inside}/{app.total}", _kkt_text(base), 1, cast(Verdict, t.verdict),
                    is_counted, "-" if is_counted or how == "undecided" else how, why)


def _judged_rows(pending: list[tuple[str, BoundRecord, ComparisonRecord]],
                 probability: Sequence[tuple[ProbabilityComparison, ComparisonRecord]] = ()) -> tuple[list[IndexRow], list[ForestRow], set[str]]:
    """The index rows, the forest plot's rows and the claims with a counted row. The family is every row of the
    index (the probability claims' binomial tests included): an inconsistent row counts only if its violation survives
    Holm's step-down across them."""
    family = holm([b.analysis.function.p_violation if b.analysis.function else 1.0 for _, b, _ in pending]
                  + [pc.test.p_value for pc, _ in probability])
    rows: list[IndexRow] = []
    forest: list[ForestRow] = []
    decided: set[str] = set()
    for (name, b, rec), lv in zip(pending, family):
        row = _index_row(name, b, rec, lv)
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


def _index_head(options: ReportOptions, rows: list[IndexRow], decided: set[str], n_claims: int, t_cmp: float) -> list[str]:
    """The index's opening: how it was made, what is decided, and what a row's verdict and counting mean."""
    counts = {v: sum(r.verdict == v and r.counted for r in rows) for v in ("consistent", "inconsistent")}
    counts["inconclusive"] = sum(r.verdict == "inconclusive" for r in rows)
    uncounted = sum(not r.counted and r.verdict != "inconclusive" for r in rows)
    return ["# ibcheck report", "",
            f"Generated by `ibcheck report{' --quick' if options.quick else ''}" + (f" --budget {options.budget:g}" if options.budget else "")
            + f"` in {{total}} s (comparisons {t_cmp:.0f} s). Bound scaling report: [scaling/scaling.md](scaling/scaling.md). "
            "Each row links to its comparison; every number there names its sweep database, cells and seeds.", "",
            f"**Decided: {counts['consistent'] + counts['inconsistent']} of {len(rows)} rows** "
            f"({counts['consistent']} consistent, {counts['inconsistent']} inconsistent, {counts['inconclusive']} inconclusive, "
            f"{uncounted} decided but not counted: extrapolated, trivial, one KKT point per sample, or not at the family level); "
            f"{len(decided)} of {n_claims} claims have at least one counted row. A row counts as decided only when its verdict is "
            f"consistent or inconsistent, at least {MIN_INSIDE:.0%} of its cells are inside the claim's hypotheses, its cells hold "
            "certified KKT points where the claim speaks of KKT points, and it tests the claim's own exponents (log exponents "
            "included). Each verdict tests the claim's own function: the ratio of the measure to it must not rise (O), fall "
            "(Omega) or either (Theta) along any variable or ray of the window; `resolution` is the smallest deviation the sweep "
            "detects (95% power), which must reach a factor of log log x for a decision; `attained: no (loose)` is an O or Omega "
            "bound that holds with room. The exponents are fitted per term as a description. `inside` counts the cells where every "
            "hypothesis of the claim holds (constants 1 unless --constants sets them). Across the rows, the family-wise error of "
            f"the inconsistent rows is at most 0.05 (Holm's step-down over all {len(rows)} rows; each inconsistent row gives its "
            "adjusted level); a claim about every KKT point counts only where two or more distinct certified KKT points were "
            "found per sample.", ""]


def _probability_claims(name: str, comparison, out: str, errors: list[dict]) -> list[tuple[ProbabilityComparison, ComparisonRecord]]:
    """The probability claims measured on ``name``'s sweep (FVBS23.thm.3_1 on FVBS23.thm.4_2's), each saved under
    compare/<claim>/; one that cannot be tested gets an error row."""
    out_rows = []
    for pid, spec in PROBABILITY_CLAIMS.items():
        if spec.base != name:
            continue
        try:
            pc = probability_comparison(pid, comparison)
            pc.save(inside(out, "compare", slug(pid)))
            out_rows.append((pc, comparison.record))
        except InputError as err:
            errors.append({"claim": pid, "verdict": "not run", "why": str(err)})
    return out_rows


def charged(used: float, share: float | None) -> float:
    """The work a comparison takes from the report's shared budget: what it used, at most its share.

    Pitfall avoided: a comparison whose initial grid alone costs more than its share (FVBS23.thm.4_2's
    full design: 9126 s of work against a 71 s share of a 600 s budget) would otherwise leave the
    comparisons after it 1 s each, and their verdicts would depend on their place in the order. The overrun is the design's
    minimum, not a budget decision; the index states each comparison's work and budget."""
    return min(used, share) if share is not None else used


def write_full_report(out: str, options: ReportOptions) -> str:
    """Run everything and write it under ``out``; returns the path of index.html."""
    from ibcheck.simulate.compare.driver import compare_and_save  # heavy: scipy (loaded on first use)
    from ibcheck.simulate.reproductions import REPRODUCTIONS, run_reproduction  # heavy: scipy (loaded on first use)

    names = list(options.only) or list(EXPERIMENTS)
    check_out(out)
    for name in names:
        slug(name)  # every folder name checked before anything is written
    os.makedirs(out, exist_ok=True)
    t0 = time.perf_counter()
    scaling_report(None, inside(out, "scaling"))
    pending: list[tuple[str, BoundRecord, ComparisonRecord]] = []
    errors: list[dict] = []
    notes: list[str] = []
    probability: list[tuple[ProbabilityComparison, ComparisonRecord]] = []
    t_cmp = time.perf_counter()
    used = 0.0  # work (reference seconds) of the comparisons so far: deterministic, unlike the wall clock
    known: dict[str, ComparisonResult] = {}  # the reproductions reuse these instead of sweeping them again
    overruns: list[str] = []
    for i, name in enumerate(names):
        share = max((options.budget - used) / (len(names) - i), 1.0) if options.budget else None
        print(f"[{time.perf_counter() - t0:6.1f} s] comparing {name}" + (f" (budget {share:.0f} s of work)" if share else "") + " ...",
              file=sys.stderr)
        try:
            cs = {k: v for k, v in options.constants.items() if k in get_claim(name).constants} or None
            comparison, _ = compare_and_save(name, inside(out, "compare", slug(name)), quick=options.quick, workers=options.workers,
                                             progress=False, budget=share, inside_only=options.inside_only, constants=cs,
                                             spending=options.spending)
            rec = comparison.record
            w = rec.work.used if rec.work else 0.0
            used += charged(w, share)
            if share is not None and w > share:
                overruns.append(f"{name} {w:.0f} s (share {share:.0f} s)")
            known[name] = comparison
            pending += [(name, b, rec) for b in rec.bounds]
            notes += _claim_notes(name, rec)
            probability += _probability_claims(name, comparison, out, errors)
        except InputError as err:
            errors.append({"claim": f"[{name}](compare/{slug(name)}/report.md)", "verdict": "not run", "why": str(err)})
    t_cmp = time.perf_counter() - t_cmp
    if overruns:
        notes.append(f"Work over its share of the budget ({options.budget:g} reference s, shared in order): {'; '.join(overruns)}. "
                     "A comparison's initial grid runs whole even where it costs more than its share; only the share is charged "
                     "against the budget, so the overrun does not shrink the shares of the comparisons after it.")
    rows, forest, decided = _judged_rows(pending, probability)
    md = _index_head(options, rows, decided, len(names) + len(probability), t_cmp) + [
        *(["![the tested deviations of every row](index_forest.png)", ""] if forest else []),
        markdown_table([r.markdown() for r in rows] + errors), "", *notes]
    if not options.only:
        reps = []
        for name in REPRODUCTIONS:
            print(f"[{time.perf_counter() - t0:6.1f} s] reproducing {name} ...", file=sys.stderr)
            try:
                rep = run_reproduction(name, options.quick, known=known)
                rep.save(inside(out, "reproduce", name))
                c = [sum(r["verdict"] == v for r in rep.rows) for v in ("consistent", "inconsistent", "inconclusive")]
                reps.append({"reproduction": f"[{name}](reproduce/{name}/reproduce.md)",
                             "consistent / inconsistent / inconclusive rows": f"{c[0]} / {c[1]} / {c[2]}"})
            except InputError as err:
                reps.append({"reproduction": name, "consistent / inconsistent / inconclusive rows": f"not run: {err}"})
        md += ["## Reproductions of the sources' experiments", "", markdown_table(reps), ""]
    text = "\n".join(md).replace("{total}", f"{time.perf_counter() - t0:.0f}") + "\n"

    images = []
    if forest:
        save_figure_file(forest_figure(forest), os.path.join(out, "index_forest.png"))
        images.append("index_forest.png")
    write_text(os.path.join(out, "index.md"), text)
    return write_html(text, out, "index.html", "ibcheck report", images)
