"""``ibcheck compare CLAIM`` (theory against simulation) and ``ibcheck report`` (the main job)."""
from __future__ import annotations

import json
import os
import re
import time
from dataclasses import replace

from ibcheck import api
from ibcheck.errors import InputError
from ibcheck.theory import get_claim
from ibcheck.theory.argtypes import nonneg_int, pos_float, pos_int
from ibcheck.theory.outdir import CLAIM_ID_PATTERN, inside
from ibcheck.theory.result import dumps, held_text, markdown_table

from .args import claim_out, common, parse_constants, parse_from, parse_grid


def register(sub) -> None:
    p = sub.add_parser("compare", help="theory against simulation: sweep, fit exponents, verdict, report", parents=[common(workers=1)])
    p.add_argument("claim")
    p.add_argument("--grid", nargs="*", default=None, help="e.g. d=64,128,256 k=2,4,8 (default: the experiment's grid)")
    p.add_argument("--seeds", type=pos_int, default=None)
    p.add_argument("--quick", action="store_true", help="the small grid (seconds to a minute)")
    p.add_argument("--dask", action="store_true", help="run on a Dask LocalCluster of --workers workers")
    p.add_argument("--scheduler", default=None, help="address of a running Dask scheduler, e.g. tcp://10.0.0.5:8786")
    p.add_argument("--margin", type=pos_float, default=None,
                   help="an explicit tolerance for a power factor (x^delta, delta <= MARGIN is accepted); by default the sweep's own resolution decides")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the report of another claim that --out holds (by default refused; the same claim again resumes)")
    _fit_options(p)
    _design_options(p)
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("design", help="the grid a comparison would run: cells, inside the window or not, what binds, cost per cell",
                       parents=[common(out=None)])
    p.add_argument("claim")
    p.add_argument("--budget", type=pos_float, default=None, help="work in reference seconds: how many seeds per cell it affords")
    p.add_argument("--full", action="store_true", help="the full design (default: the quick one, as `ibcheck report` runs)")
    p.set_defaults(func=cmd_design)

    p = sub.add_parser("verdict", help="your own measurements (CSV) against a claim or a stated prediction: fit, drift, power, verdict",
                       parents=[common()])
    p.add_argument("--data", required=True, help="CSV: a column per variable, a value column (> 0), optional seed column")
    p.add_argument("--claim", default=None, help="a claim of the registry (see `ibcheck claims`)")
    p.add_argument("--quantity", default=None, help="which bounded quantity of the claim the values measure")
    p.add_argument("--reading", default=None, help="one reading of an ambiguous claim (default: every reading)")
    p.add_argument("--predict", default=None, help="for a claim not in the registry: exponents per term, e.g. 'd=1/2,k=-1/2' "
                                                     "or 't=0,log(t)=-1'")
    p.add_argument("--kind", default=None, help="with --predict: O, Omega or Theta")
    p.add_argument("--margin", type=pos_float, default=None,
                   help="an explicit tolerance for a power factor (x^delta, delta <= MARGIN is accepted); by default the sweep's own resolution decides")
    p.add_argument("--constants", default=None, help="values of the claim's symbolic constants, e.g. C=0.5 (default 1)")
    p.add_argument("--trajectory", action="store_true", help="each seed is one run measured along the (single) fitted variable: "
                                                              "fit each run, combine the runs")
    p.add_argument("--include-outside", action="store_true", help="also fit the rows outside the claim's hypotheses (by default, "
                                                                   "as in compare, only the inside cells are fitted where enough lie inside)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the report of another claim that --out holds (by default refused; the same claim again replaces its own)")
    _fit_options(p)
    p.set_defaults(func=cmd_verdict)

    p = sub.add_parser("calibrate", help="the verdict engine on synthetic data with known truth: rate of each verdict per scenario",
                       parents=[common()])
    p.add_argument("--trials", type=pos_int, default=100, help="trials per scenario")
    p.add_argument("--budget", type=pos_float, default=None, help="synthetic seconds per trial (default 20)")
    p.add_argument("--seed", type=nonneg_int, default=0)
    p.add_argument("--plan-trials", type=nonneg_int, default=0, metavar="N",
                   help="also check each inconclusive trial's plan with N simulated runs per story and run the plan named, "
                        "reporting how often it decided (default 0: not run; 10-60 s per inconclusive trial; 0..200)")
    p.set_defaults(func=cmd_calibrate)

    p = sub.add_parser("reproduce", help="rerun a source's experiment: source number, ibcheck's measurement, verdict", parents=[common()])
    p.add_argument("name", help="fa-synthetic, fa-digits, ll20-margin, shngs18, vys22, fvbs23, bcgt21, ssttm18, mv24")
    p.add_argument("--quick", action="store_true", help="a size that runs in about a minute")
    p.add_argument("--idx-dir", default=None, help="fa-digits: a directory with MNIST-format *images* and *labels* IDX files")
    p.set_defaults(func=cmd_reproduce)

    p = sub.add_parser("report", help="the main job: bound scaling report + quick comparisons of every claim + an index page",
                       parents=[common(json=False, workers=2)])
    p.add_argument("--quick", action="store_true",
                   help="small grids (about 16 minutes on 2 cores with --budget 200, most of it FVBS23.thm.4_2's KKT search)")
    p.add_argument("--only", nargs="+", default=None, metavar="CLAIM", help="only these claims (at least one; no reproductions)")
    _design_options(p, report=True)
    p.set_defaults(func=cmd_report)


def _fit_options(p) -> None:
    p.add_argument("--margin-log", type=pos_float, default=None,
                   help="an explicit tolerance for a log factor ((log x)^delta; log-log: twice it); by default the resolution decides")
    p.add_argument("--offsets", choices=("fit", "known"), default="fit",
                   help="fit (default): every stated exponent is fitted, log factors included; known: stated log factors are "
                        "taken as known offsets and not tested (the report says so)")
    p.add_argument("--from", dest="fit_from", default=None, metavar="VAR=VALUE",
                   help="fit only rows with VAR >= VALUE, e.g. T=1e3 (late times); the report says so")
    p.add_argument("--log-corrections", action="store_true",
                   help="also try logarithmic corrections to scaling (1 + b/log x) where the claim states no log factor; by "
                        "default only powers of the claim's own scale are tried, since a log correction mimics a missing log factor")
    p.add_argument("--plan-trials", type=nonneg_int, default=20, metavar="N",
                   help="an inconclusive verdict's plan (the design that would decide) is named only once N simulated runs of "
                        "the engine per truth the data leave open decide it the right way in 80%% of them (default 20; 0: "
                        "no plan is checked or named; 0..200)")


def _design_options(p, report: bool = False) -> None:
    what = "for all comparisons together (shared out in turn; leftovers pass on)" if report else "for this comparison"
    p.add_argument("--budget", type=pos_float, default=None,
                   help=f"work {what}, in reference seconds (seed-runs weighted by the experiment's declared cost per cell, "
                        "the same under any machine load): after the initial grid, add seeds and scale in rounds until every "
                        "exponent verdict is decisive or the budget is spent (alpha spent over the looks)")
    if not report:
        p.add_argument("--max-seconds", type=pos_float, default=None,
                       help="a wall-clock cap: the sweep stops after the round that passes it (reported, since the verdict then "
                            "depends on the machine's speed)")
    p.add_argument("--spending", default="pocock", help="alpha-spending rule over the looks: pocock (default) or obrien-fleming")
    p.add_argument("--inside-only", action="store_true", help="fit only the cells where every hypothesis of the claim holds, and "
                                                               "refuse a grid with too few of them")
    if not report:
        p.add_argument("--include-outside", action="store_true", help="also fit the cells outside the claim's hypotheses (by "
                                                                       "default they run but are not fitted, and no round adds one)")
        p.add_argument("--no-extend", dest="extend", action="store_false",
                       help="a probability claim (FVBS23.thm.3_1): test the base sweep's samples alone; by default, where they "
                            "are too few to decide, the cheapest slice of inside cells gets more seeds (in --out/base/extension.sqlite)")
    p.add_argument("--constants", default=None, help="values of the claim's symbolic constants, e.g. C=0.5,C1=2 (default 1)")


def cmd_design(args) -> int:
    d = api.design(args.claim, quick=not args.full, budget=args.budget)
    if args.json:
        print(dumps(d.as_json(), indent=2))
        return 0
    print(d.heading())
    print(markdown_table(d.table()))
    for note in d.notes:
        print(f"note: {note}")
    return 0


REPORT_SUFFIXES = (".png", ".md", ".html", ".parquet", ".json")
REPORT_FILES = ("report.md", "report.html", "results.parquet")  # a claim's report beside its summary.json


def _read_summary(out: str) -> tuple[bool, object]:
    """(whether ``out`` has a summary.json, what it holds: None where it cannot be read as JSON)."""
    summary = os.path.join(out, "summary.json")
    if not os.path.lexists(summary):
        return False, None
    try:
        with open(summary, encoding="utf-8") as f:
            return True, json.load(f)
    except (OSError, ValueError, RecursionError):
        return True, None


def _held_report(out: str, claim: str) -> str | None:
    """What ``out`` holds when it is a report this claim's may not replace without --overwrite, or None: no report, or
    this claim's own (a rerun resumes). A folder with a store and no report (an interrupted comparison) holds no report
    to replace; one with a report's files (report.md, report.html, results.parquet) and no summary.json holds a report
    whose claim cannot be read."""
    present, held = _read_summary(out)
    if not present:
        found = [n for n in REPORT_FILES if os.path.lexists(os.path.join(out, n))]
        return f"a report whose claim cannot be read ({', '.join(found)}, no summary.json)" if found else None
    other = held.get("claim") if isinstance(held, dict) else None
    if other == claim:
        return None
    return f"the report of {_shown_id(other)} (its summary.json)" if isinstance(other, str) else "a summary.json that is no claim's report"


def _shown_id(claim: str) -> str:
    """A claim id read from a file, as one safe piece of a line (a stray newline never splits the message)."""
    return claim if CLAIM_ID_PATTERN.fullmatch(claim) else repr(claim[:40])


def guard_out(out: str, claim: str, overwrite: bool) -> list[str]:
    """The one guard of every command that writes a claim's report into --out (``compare``, ``verdict``): refuse (one
    line, exit 2) an --out that holds another claim's report, or a report whose claim cannot be read, unless
    ``overwrite``; otherwise the names of the report's files that --out holds (those its summary.json lists, else the
    report.md's images, directly in --out), which :func:`_remove_replaced` removes where the new report does not write
    them again: the folder then holds one report, never a mix.

    Pitfalls avoided: ``compare CLAIM2 --out DIR`` replaced the report CLAIM1 had written there, without a word; then
    ``verdict --claim CLAIM2`` still did (``verdict`` had no guard), ``verdict --predict`` left CLAIM1's plots beside its
    report, and a DIR whose summary.json was deleted had its report.md replaced silently."""
    held = _held_report(out, claim)
    if held is not None and not overwrite:
        raise InputError(f"--out {out} holds {held}; pass --overwrite to write the report of {_shown_id(claim)} there all the same, "
                         "or give another --out")
    _, summary = _read_summary(out)
    files = summary.get("files") if isinstance(summary, dict) else None
    if isinstance(files, dict):
        names = {os.path.basename(v) for v in files.values() if isinstance(v, str)}
    else:  # no readable list: the report's own files, and the images its report.md shows
        names = set(REPORT_FILES) | _report_images(out)
    return sorted(n for n in names if n.endswith(REPORT_SUFFIXES) and n not in ("", ".", "..") and not n.startswith("sweep.sqlite"))


def _report_images(out: str) -> set[str]:
    """The images ``out``/report.md shows from ``out`` itself (``![...](name.png)``)."""
    try:
        with open(os.path.join(out, "report.md"), encoding="utf-8", errors="replace") as f:
            text = f.read(1_000_000)
    except OSError:
        return set()
    return {m for m in re.findall(r"!\[[^\]]*\]\(([^()\s/]+\.png)\)", text)}


def _replaced_files(args) -> list[str]:
    """:func:`guard_out` for ``compare`` (an unknown claim is left to the API, which refuses it in its own words)."""
    try:
        get_claim(args.claim)
    except InputError:
        return []
    return guard_out(args.out, args.claim, args.overwrite)


def _remove_replaced(out: str, names: list[str], written: dict) -> None:
    """Remove the old report's files the new one did not write (plain files directly in ``out``, never a link or the store)."""
    kept = {os.path.basename(v) for v in written.values() if isinstance(v, str)}
    for name in names:
        path = inside(out, name)
        if name not in kept and os.path.isfile(path) and not os.path.islink(path):
            os.remove(path)


def cmd_compare(args) -> int:
    claim_out(args)  # the store lives there (a rerun resumes)
    replaced = _replaced_files(args)  # another claim's report is never replaced without --overwrite
    if args.claim in api.probability_claims():
        return _compare_probability(args, replaced)
    result = api.compare(args.claim, grid=parse_grid(args.grid), seeds=args.seeds, budget=args.budget, quick=args.quick,
                         store=os.path.join(args.out, "sweep.sqlite"), workers=args.workers, margin=args.margin,
                         inside_only=args.inside_only, constants=parse_constants(args.constants), spending=args.spending,
                         progress=not args.json, margin_log=args.margin_log, offsets=args.offsets, fit_from=parse_from(args.fit_from),
                         scheduler=args.scheduler, dask=args.dask, max_seconds=args.max_seconds, include_outside=args.include_outside,
                         log_corrections=args.log_corrections, plan_trials=args.plan_trials)
    summary = {**result.as_json(), "files": result.save(args.out)}
    _remove_replaced(args.out, replaced, summary["files"])
    if args.json:
        print(dumps(summary, indent=2))
        return 0
    app = summary["applicability"]
    again = len(summary["tasks"].get("remeasured", ()))
    redone = len(summary["tasks"].get("ledger_discarded", ()))
    looks = f"{len(summary['rounds'])} look(s){f' ({redone} of the ledger not trusted, recomputed)' if redone else ''}"
    print(f"{summary['claim']}: {summary['verdict']}  ({summary['tasks']['ran']} tasks run"
          f"{f' ({again} of them stored rows not trusted, measured again)' if again else ''}, {summary['tasks']['skipped']} reused, "
          f"{looks}, {summary['seconds']:.1f} s; {app['cells_inside']}/{app['cells_total']} cells inside the "
          f"hypotheses) -> {summary['files']['html']}")
    _print_results(summary)
    return 0


def _compare_probability(args, replaced: list[str]) -> int:
    """A probability claim (FVBS23.thm.3_1): its base claim's sweep in --out/base (resumable), the test beside it."""
    base = os.path.join(args.out, "base")
    os.makedirs(base, exist_ok=True)  # inside --out (removed with it if the input is refused)
    pc = api.compare_probability(args.claim, extend=args.extend, grid=parse_grid(args.grid), seeds=args.seeds, budget=args.budget, quick=args.quick,
                                 store=os.path.join(base, "sweep.sqlite"), workers=args.workers, constants=parse_constants(args.constants),
                                 progress=not args.json, scheduler=args.scheduler, dask=args.dask, max_seconds=args.max_seconds,
                                 margin=args.margin, margin_log=args.margin_log, offsets=args.offsets, fit_from=parse_from(args.fit_from),
                                 spending=args.spending, inside_only=args.inside_only, include_outside=args.include_outside,
                                 log_corrections=args.log_corrections, plan_trials=args.plan_trials)
    pc.base_result.save(base)
    summary = {**pc.as_json(), "files": replace(pc, base_link="base/report.md").save(args.out)}
    _remove_replaced(args.out, replaced, summary["files"])
    if args.json:
        print(dumps(summary, indent=2))
        return 0
    added = f", {pc.extension.new_samples} of them added seeds" if pc.extension is not None else ""
    print(f"{pc.claim}: {pc.verdict}  (measured on {pc.base}'s samples: {len(pc.test.samples)} inside its hypotheses{added}) -> "
          f"{summary['files']['report']}")
    print(f"    why: {pc.reason}")
    return 0


def _print_results(summary: dict) -> None:
    for r in summary["results"]:
        fits = "; ".join(f"{f['variable']}: {f['estimate']:.3f} [{f['ci_low']:.3f}, {f['ci_high']:.3f}] vs {f['predicted']:g}" for f in r["fits"])
        rd = f" [{r['reading']}]" if r["reading"] else ""
        res = "; ".join(f"{v}: " + ", ".join(f"{fam} {x:.2g}" if x is not None else f"{fam} none" for fam, x in per.items())
                        for v, per in (r.get("resolution") or {}).items())
        att = "" if r.get("attained") is None or r["kind"] == "Theta" else f"; attained: {'yes' if r['attained'] else 'no (loose)'}"
        print(f"  {r['quantity']} {r['kind']}({r['expr']}){rd}: {r['verdict']}  (resolution {res}{att}; exponents {fits})")
        print(f"    why: {r['reason']}")
        held = held_text(summary.get("grid"), r["expr"], [f["variable"] for f in r["fits"]])
        if held:
            print(f"    untested: {held}")


def cmd_verdict(args) -> int:
    claim_out(args)
    result = api.verdict(args.data, args.claim, args.quantity, args.reading, args.predict, args.kind, args.margin,
                         parse_constants(args.constants), args.margin_log, args.offsets, parse_from(args.fit_from), args.trajectory,
                         args.log_corrections, args.include_outside, args.plan_trials)
    replaced = guard_out(args.out, result.record.claim, args.overwrite)  # another claim's report: refused unless --overwrite
    s = {**result.as_json(), "files": result.save(args.out)}
    _remove_replaced(args.out, replaced, s["files"])
    if args.json:
        print(dumps(s, indent=2))
        return 0
    app = s["applicability"]
    inside = f"; {app['cells_inside']}/{app['cells_total']} cells inside the hypotheses" if app else ""
    binned = f", {s['binning']}" if s.get("binning") else ""
    print(f"{s['claim']}: {s['verdict']}  ({s['rows']} rows{binned}{inside}) -> {s['files']['html']}")
    _print_results(s)
    return 0


def cmd_calibrate(args) -> int:
    claim_out(args)
    res = api.calibrate(args.trials, args.budget, seed=args.seed, progress=not args.json, plan_trials=args.plan_trials)
    res.save(args.out)
    print(res.to_json() + "\n" if args.json else res.markdown(), end="")
    return 0


def cmd_reproduce(args) -> int:
    claim_out(args)
    r = api.reproduce(args.name, args.quick, args.idx_dir)
    s = {**r.as_json(), "files": r.save(args.out)}
    if args.json:
        print(dumps(s, indent=2))
        return 0
    print(f"reproduce {s['name']}: {s['title']} ({s['seconds']:.0f} s) -> {s['files']['html']}")
    for r in s["rows"]:
        m = r["measured"]
        ms = f"{m:.4g}" if isinstance(m, float) else str(m)
        print(f"  {r['quantity']}: source {r['source_value']}; ibcheck {ms}; {r['verdict']}")
    return 0


def cmd_report(args) -> int:
    t0 = time.perf_counter()
    html = api.report(args.out, quick=args.quick, budget=args.budget, only=tuple(args.only or ()), workers=args.workers,
                      inside_only=args.inside_only, constants=parse_constants(args.constants), spending=args.spending)
    print(f"wrote {os.path.join(args.out, 'index.md')} and {html} in {time.perf_counter() - t0:.0f} s")
    return 0
