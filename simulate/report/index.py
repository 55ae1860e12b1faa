"""The index page of the default report (``ibcheck report``, what ``make report`` runs): it renders a
:class:`~ibcheck.simulate.compare.suite.SuiteResult` and the reproductions, and saves every part.

Takes the suite (its comparisons, rows, counting and forest rows, computed in :mod:`ibcheck.simulate.compare.suite`)
and the reproductions' outcomes; writes, under ``out``: the bound scaling report, each comparison's report
(``compare/<claim id>/``), each reproduction's, ``index.md``/``index.html`` (read at a glance: one line per row with
a verdict badge, counted or not and one sentence of reason; then the forest plot of every tested deviation) and
``table.md``/``table.html`` (the wide table). Nothing here computes a verdict or counts a row.
"""
from __future__ import annotations

import os
import re
import time
from typing import TYPE_CHECKING, Sequence

from ibcheck.simulate.report.figures import forest_figure, scaling_report, write_html
from ibcheck.simulate.verdict.rules import MIN_INSIDE
from ibcheck.solvers.kkt.depth import DEPTH_FACTOR, INSTANCES_MIN, WITHIN_MIN
from ibcheck.theory.atomic import save_figure_file, write_text
from ibcheck.theory.outdir import check_out, inside, slug
from ibcheck.theory.result import markdown_table, markdown_text, report_markdown

if TYPE_CHECKING:
    from ibcheck.simulate.compare.record import ComparisonRecord
    from ibcheck.simulate.compare.suite import SuiteResult, SuiteRow
    from ibcheck.simulate.reproductions import ReproductionOutcome


def _link(claim: str, page: str = "report.md") -> str:
    return f"[{markdown_text(claim)}](compare/{slug(claim)}/{page})"


def _wide_row(row: SuiteRow) -> dict:
    """A row of the wide table (table.md)."""
    att = {True: "yes", False: "no (loose)", None: "-"}[row.attained]
    return {"claim": _link(row.claim), "quantity": row.quantity, "kind": row.kind,
            "predicted": row.predicted, "exponents (95% CI, descriptive)": row.measured, "resolution": row.resolution,
            "attained": att if row.kind not in ("Theta",) else "-", "inside": row.inside, "KKT": row.kkt, "looks": row.looks,
            "verdict": f"**{row.verdict}**", "counted": ("yes: " + row.counted_how if row.counted_how else "yes") if row.counted else "no",
            "extrapolated / trivial (not counted)": row.not_counted, "why": row.why}


def one_sentence(reason: str, most: int = 160, colon: bool = False) -> str:
    """The first clause of a reason, read at a glance: parenthetical details dropped (the claim's report keeps them),
    then the text up to the first top-level '; ' or '. ' (or ': ' with ``colon``), at most ``most`` characters.

    Pitfall avoided: cutting at the first '; ' split "(d: d^0.047, (log d)^0.23; k: ...)" inside its parentheses."""
    src = reason.strip()
    groups, depth, start = [], 0, 0  # the top-level parenthetical groups, (start, end)
    for i, ch in enumerate(src):
        if ch == "(":
            start = i if depth == 0 else start
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
            if depth == 0:
                groups.append((start, i + 1))
    # an aside is dropped; a group that is part of a formula ((log T)^-0.45, g(x)) is kept
    keep = [(a, b) for a, b in groups if (b < len(src) and (src[b] == "^" or src[b].isalnum())) or (a and src[a - 1].isalnum())]
    out, at = [], 0
    for a, b in groups:
        if (a, b) not in keep:
            out.append(src[at:a])
            at = b
    flat = re.sub(r"\s+", " ", "".join(out) + src[at:])
    flat = re.sub(r" ([,.:;])", r"\1", flat).strip()
    head = re.split(r"; |\. (?=[A-Z])" + ("|: " if colon else ""), flat, maxsplit=1)[0].rstrip(".: ")
    return head if len(head) <= most else head[:most - 4].rsplit(" ", 1)[0] + " ..."


def _glance_row(row: SuiteRow) -> dict:
    """A row of the at-a-glance table: the claim and quantity, a verdict badge, counted or not (and why not), and one
    sentence of the reason."""
    counted = (("yes: " + one_sentence(row.counted_how, 80) if row.counted_how else "yes") if row.counted else
               ("no" if row.not_counted == "-" else f"no: {one_sentence(row.not_counted, 80, colon=True)}"))
    return {"claim": _link(row.claim), "quantity": row.quantity, "verdict": f"**{row.verdict}**", "counted": counted,
            "why (first clause; the claim's report has all of it)": one_sentence(row.why)}


def _fresh_text(cells) -> str:
    """What the fresh points showed: each point's own z, the negative controls (which must fail), the test's resolution
    (the shortened z) and the raw GD networks (reported, not a control)."""
    own = [c.own_lcb for c in cells if c.own_lcb is not None]
    ctl: dict[str, list] = {}
    near: list = []
    for c in cells:
        for k, v in (c.controls or {}).items():
            ctl.setdefault(k, []).append(v)
        near += list((c.near_kkt or {}).values())
    parts = []
    if own:
        parts.append(f"each point's own z flips at least {min(own):.3f} of {cells[0].fresh_points} fresh points (one-sided 95% bound)")
    for k, vs in ctl.items():
        ucb = [v["ucb"] for v in vs if v.get("ucb") is not None]
        name = "the most robust point's own z at half its norm" if k == "shortened_z" else k.replace("_", " ")
        parts.append(f"negative control {name}: " + (f"upper bound at most {max(ucb):.3f}" if ucb else f"bound {min(v['lcb'] for v in vs):.3f}")
                     + f", failed as it must (significantly below 1 - eps) at {sum(bool(v['failed']) for v in vs)} of {len(vs)} cells")
    res = [c.resolution for c in cells if c.controls and "shortened_z" in c.controls]
    if res:
        worst = None if None in res else min(res)
        finest = worst is not None and all(worst >= max(c.shortenings) for c in cells if c.shortenings)
        parts.append("the test refutes the most robust point's own z shortened to r times its norm for every r up to "
                     + (f"{worst:g}{' (the finest r tried)' if finest else ''} at every cell (a point that needs a z "
                        f"{1 / worst:.3g} times as long, with the same profile, is refuted)" if worst is not None else
                        f"a value at {sum(r is not None for r in res)} of {len(res)} cells (not even r = 0.5 at the others)"))
    if near:
        ucb = [v["ucb"] for v in near if v.get("ucb") is not None]
        passed = sum(not v["failed"] for v in near)
        parts.append("the raw GD networks the points were polished from (not KKT points, so not a control: GD approaches a KKT "
                     f"point in direction) pass the same test at {passed} of {len(near)} cells"
                     + (f" (upper bounds up to {max(ucb):.3f})" if ucb else ""))
    return (" On fresh points: " + "; ".join(parts) + ".") if parts else ""


def _claim_notes(name: str, rec: ComparisonRecord) -> list[str]:
    """The index's lines on a claim's reading (ambiguous claims), transferability and halved KKT thresholds."""
    out = []
    if rec.reading is not None:
        out.append(f"- **{name}, reading the data support: {rec.reading.reading}.** {rec.reading.reason}.")
    if rec.kkt is not None and rec.kkt.transfer:
        t = [c for c in rec.kkt.transfer if c.pairs]
        if not t:
            out.append(f"- **{name}, transferability: not tested.** The search found one distinct certified KKT point on every sample "
                       "(the networks trained from different initializations, and the search's points, agree as functions), so there "
                       "was no second point to transfer to. Finding one is not evidence that a sample holds one: the engine's recall "
                       "on the cells' class, in the claim's report, says how far to trust it."
                       + _fresh_text(rec.kkt.transfer))
        if t:
            ok = sum(bool(c.transferable) for c in t)
            held = sum(c.withheld is not None for c in t)
            lo = min(c.fraction_min for c in t if c.fraction_min is not None)
            ucb = [c.fraction_ucb for c in t if c.fraction_ucb is not None]
            out.append(f"- **{name}, transferability:** the most robust point's z flips at least {lo:.3f} of the fresh points on "
                       f"every other distinct certified KKT point of the same sample ({sum(c.pairs for c in t)} pairs)"
                       + (f" (one-sided 95% upper bound, Bonferroni over the pairs: {min(ucb):.3f})" if ucb else "")
                       + f", against 1 - eps = {t[0].target:.2f}; no pair significantly below it at {ok} of {len(t)} cells"
                       + (f"; {held} cell{'s' if held > 1 else ''} withheld, where a negative control passed" if held else "")
                       + "." + _fresh_text(rec.kkt.transfer))
    if rec.kkt is not None and rec.kkt.half:
        out.append(f"- **{name}, KKT thresholds halved:** " + "; ".join(f"{k}: {v.verdict}" for k, v in rec.kkt.half.items()) + ".")
    return out + ([""] if out else [])


def _summary_line(suite: SuiteResult) -> str:
    rows = suite.rows
    counts = {v: sum(r.verdict == v and r.counted for r in rows) for v in ("consistent", "inconsistent")}
    undecided = sum(r.verdict == "inconclusive" for r in rows)
    uncounted = sum(not r.counted and r.verdict != "inconclusive" for r in rows)
    return (f"**{counts['consistent'] + counts['inconsistent']} of {len(rows)} rows decided and counted** ({counts['consistent']} "
            f"consistent, {counts['inconsistent']} inconsistent); {uncounted} more decided but not counted (their badge shows the "
            f"verdict, the counted column why not); {undecided} inconclusive; "
            f"{len(suite.decided)} of {suite.claims} claims have at least one counted row.")


def _how_to_read(suite: SuiteResult) -> list[str]:
    """What a row's verdict and counting mean (below the at-a-glance part)."""
    return ["## How to read a row", "",
            "Each verdict tests the claim's own function: the ratio of the measure to it must not rise (O), fall (Omega) or "
            "either (Theta) along the directions in which the claim's window lets the scale grow (a variable the window holds "
            "bounded is reported, never decisive), with corrections in the claim's own scale. `resolution` is the smallest "
            "deviation the sweep detects (95% power). `attained: no (loose)` is an O or Omega bound that holds with room.", "",
            f"A row counts as decided only when its verdict is consistent or inconsistent, at least {MIN_INSIDE:.0%} of its "
            "cells are inside the claim's hypotheses (constants 1 unless --constants sets them), its cells hold certified "
            "KKT points where the claim speaks of KKT points (where it speaks of every KKT point, it is judged by the quantity "
            "the claim bounds, never by the number of points: the KKT engine ran in full at every inside cell, on every sample "
            "the running extremum of that quantity stopped (no record beyond 0.5% in the last half of at least 20 starts), and "
            f"the cell's class is depth-stable: on {INSTANCES_MIN} instances at the cells' own n, the budget's extremum within "
            f"max({WITHIN_MIN:.0%}, twice the measure's resolution) of a reference at least {DEPTH_FACTOR}x deeper on 90% of "
            "them, with a 95% lower bound of 80%), it is not trivial, and it tests "
            "the claim's own exponents, log factors included. Across the rows, the family-wise error of the "
            f"inconsistent rows is at most 0.05 (Holm's step-down over all {len(suite.rows)} rows).", ""]


def write_index(out: str, suite: SuiteResult, reproductions: Sequence[ReproductionOutcome] = (), seconds: float | None = None) -> str:
    """Render and save the report under ``out`` (see the module docstring); returns the path of index.html."""
    check_out(out)
    t_write = time.perf_counter()
    os.makedirs(out, exist_ok=True)
    only = [name for name, _ in suite.comparisons] + [pc.claim for pc, _ in suite.probability] if suite.options.only else None
    scaling_report(only, inside(out, "scaling"))  # with --only, the scaling of those claims alone
    for name, comparison in suite.comparisons:
        comparison.save(inside(out, "compare", slug(name)))
    for pc, _ in suite.probability:
        pc.save(inside(out, "compare", slug(pc.claim)))
    for rep in reproductions:
        if rep.reproduction is not None:
            rep.reproduction.save(inside(out, "reproduce", rep.name))
    o = suite.options  # claim ids hold no backtick (their pattern), so the command is a literal code span
    command = "ibcheck report" + (" --quick" if o.quick else "") + (f" --budget {o.budget:g}" if o.budget else "") \
        + (" --only " + " ".join(o.only) if o.only else "")
    writing = time.perf_counter() - t_write  # the reports and figures saved above: part of the command's time too
    took = f" in {seconds + writing:.0f} s (computing {seconds:.0f} s, writing {writing:.0f} s)" if seconds is not None else ""
    not_run = [{"claim": _link(n.claim), "quantity": "-", "verdict": "not run", "counted": "no",
                "why (first clause; the claim's report has all of it)": one_sentence(n.why)} for n in suite.not_run]
    md = ["# ibcheck report", "",
          f"`{command}`{took}; comparisons {suite.seconds:.0f} s. " + _summary_line(suite), "",
          markdown_table([_glance_row(r) for r in suite.rows] + not_run), ""]
    images = []
    if suite.forest:
        save_figure_file(forest_figure(list(suite.forest)), os.path.join(out, "index_forest.png"))
        images.append("index_forest.png")
        md += ["## Every tested deviation", "", "![the tested deviations of every row](index_forest.png)", ""]
    md += ["The wide table (predicted and fitted exponents, resolution, cells inside, KKT evidence, looks, the full reason): "
           "[table.md](table.md) ([table.html](table.html)). The bound scaling report: [scaling/scaling.md](scaling/scaling.md). "
           "Every number in a claim's report names its sweep database, cells and seeds.", ""]
    notes = [line for name, c in suite.comparisons for line in _claim_notes(name, c.record)]
    if suite.overruns:
        notes.append(f"- Work over its share of the budget ({o.budget:g} reference s, shared in order): {'; '.join(suite.overruns)}. "
                     "A comparison's initial grid runs whole even where it costs more than its share; only the share is charged "
                     "against the budget, so the overrun does not shrink the shares of the comparisons after it.")
    if notes:
        md += ["## Notes on the rows", "", *notes, ""]
    if reproductions:
        reps = []
        for rep in reproductions:
            c = rep.counts()
            reps.append({"reproduction": f"[{rep.name}](reproduce/{rep.name}/reproduce.md)" if c else rep.name,
                         "consistent / inconsistent / inconclusive rows": f"{c[0]} / {c[1]} / {c[2]}" if c else f"not run: {rep.error}"})
        md += ["## Reproductions of the sources' experiments", "", markdown_table(reps), ""]
    md += _how_to_read(suite)
    table = ["# ibcheck report: the wide table", "", "[Back to the index](index.md)", "", _summary_line(suite), "",
             markdown_table([_wide_row(r) for r in suite.rows] + [{"claim": _link(n.claim), "verdict": "not run", "why": n.why}
                                                                   for n in suite.not_run]), ""]
    write_text(os.path.join(out, "table.md"), report_markdown("\n".join(table) + "\n"))
    write_html("\n".join(table) + "\n", out, "table.html", "ibcheck report: the wide table", wide=True)
    write_text(os.path.join(out, "index.md"), report_markdown("\n".join(md) + "\n"))
    return write_html("\n".join(md) + "\n", out, "index.html", "ibcheck report", images)
