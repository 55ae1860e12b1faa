"""The KKT engine's recall on planted instances: known points found / known points, and seconds per instance.

Planted instances: FVBS23 cluster samples (orthogonal means of norm sqrt(d), sigma = 1) at small n (3-5 points per
cluster), where a reference search can afford every partition cone and many GD starts. Each instance's known points
are the union of two searches, both certified under the engine's one policy (relative residual <= 1e-6) and grouped
by the one same-point test:

* the engine at a reference budget (``REFERENCE``: the cover starts at 10 scales, at least 160 random GD starts, on to an
  unseen estimate of 0.01 or 320, every partition cone where there are at most 30, 8 programs each);
* an independent method: SLSQP multi-starts on (P) itself (scipy, random inits at width 2k), each end point certified
  (the cross-check: how many known points SLSQP reaches on its own is printed).

Then each budget the comparisons use (FVBS23.thm.4_2's quick and full designs, and the engine's default) runs on the
same instance, and its recall is the fraction of the known points it finds. The per-class records (k, d range,
budget) go to ``solvers/kkt/recall.json``, stamped with the engine's fingerprint: the report reads them back and a
claim about every KKT point counts only where the recall on its class is at least 90%. Every instance the same engine
measured is kept, and the classes are recomputed from all of them: runs add up (seeds may be run one at a time), and
an instance measured again counts once, at its newest measurement.

``--fixture`` also writes ``tests/data/kkt_planted.npz``: the known points of the first k = 4 and the first k = 8
instance with three or more, which a test checks the engine still finds.

``--cells 2,4,6`` measures instead at FVBS23.thm.4_2's quick cells themselves (their own n, 62-289), under the quick
budget only: a class record per k over that n range, kept beside the small-n records.

Usage: ``python bench/kkt_recall.py [--quick] [--fixture] [--cells 2,4,6 [--seeds S] [--first-seed F]]``.

The run's figures (recall per class, on the instances with 3 or more known points, seconds per search) are recorded in
docs/performance.md (bench/record.py) as ``kkt_recall``, or ``kkt_recall[OPTION=VALUE;...]`` naming the options that
change the instances or the cross-check (``--fixture`` does not), so that a partial run never replaces the full one's row.
"""
from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np

from ibcheck.simulate.experiments.base import TrainedNetwork, design
from ibcheck.simulate.experiments.kkt import flip_objective, search_budget
from ibcheck.simulate.experiments.registry import EXPERIMENTS
from ibcheck.simulate.substrate.data import clusters, sphere
from ibcheck.simulate.substrate.seeds import STREAMS_VERSION
from ibcheck.solvers.kkt.certificate import kkt_certificate
from ibcheck.solvers.kkt.depth import streams_of
from ibcheck.solvers.kkt.engine import Budget, search
from ibcheck.solvers.kkt.policy import SAME_POINT_RTOL, distinct_groups, function_distance, function_probes, is_point
from ibcheck.solvers.kkt.recall import RECALL_FILE, engine_fingerprint
from ibcheck.solvers.kkt.search import random_start, slsqp

REFERENCE = Budget(gd=160, gd_max=320, saturation=0.01, programs=8, enumerate=30, probe=10**6,
                   covers=(0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 2.75, 3.0))
# at least 8x the random GD starts of the deepest budget measured (the quick designs' cap of 20) in starts actually run,
# on until its own Good-Turing estimate is at most 0.01 (or 320 starts), whether it got there recorded per instance;
# the cover starts at 10 scales where the budgets run 3 (360 cover starts at k = 8 against 108): in all at least 4x the
# starts of the budgets measured. Every partition cone where there are at most 30 (k <= 6); at k = 8 the 225 partition
# cones cost 80 s an instance and certified one point (the full averaging, which the cover starts reach first) at
# d = 512, n = 312. Pitfalls avoided: a reference of 48-192 random starts stopped at 50 (its estimate 0.02 or less) and
# knew 2 and 1 points at d = 256, k = 6, n = 185, seeds 6 and 12, where 192 more starts from another seed found 4 and 2;
# one of 80 starts (estimate 0.0125) knew 3 on seed 6, where one of 320 knew 5 (bench/kkt_depth.py); 600 random starts
# knew 13 points at d = 512, k = 8, n = 312, seed 7, where the 108 cover starts alone found 15
# the issue's own instances: k = 4 and k = 8 at d = 64-256, each with 3 or more known points (found by probing seeds and
# n with the reference search: at k = 4 most samples hold one or two points)
SEVERAL = [(64, 4, 40, 3), (64, 4, 48, 0), (64, 4, 48, 2), (128, 8, 48, 0), (128, 8, 64, 0)]
INSTANCES = SEVERAL + [(d, k, n, seed) for k, ns in ((4, (12, 20)), (8, (24, 32))) for d in (64, 256, 1024, 4096) for n in ns
                       for seed in (0, 1)]
QUICK = SEVERAL + [(64, 4, 12, 0), (64, 4, 20, 0), (1024, 4, 12, 0), (1024, 4, 20, 0), (64, 8, 24, 0), (64, 8, 24, 1),
                   (64, 8, 32, 0), (1024, 8, 24, 0)]
FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "data" / "kkt_planted.npz"


def cell_instances(ks: str, seeds: int, first: int = 0) -> list[tuple[int, int, int, int]]:
    """(d, k, n, seed) at FVBS23.thm.4_2's quick cells with these k: the smallest and largest d of the quick grid inside the window, n the
    cell's own (the smallest inside the window, as the sweep picks it), so a recall class covers the n that make
    report's cells have.

    Pitfall avoided: the design's default n (n_per_cluster k = 160 at k = 4) is not the cells' n (123-193 at k = 4,
    picked from the window at each cell); a recall measured there covers no cell."""
    exp = EXPERIMENTS["FVBS23.thm.4_2"]
    ds_ = exp.quick_grid["d"]
    out = []
    for k in [int(x) for x in ks.split(",") if x]:
        inside = [(d, n) for d in ds_ if (n := exp.settings_at({**exp.fixed_at(True), "d": d, "k": k}).get("n"))]
        for d, n in sorted({inside[0], inside[-1]}):  # the smallest and largest d inside the window (k = 8: 512, 1024)
            out += [(d, k, int(n), seed) for seed in range(first, first + seeds)]
    return out


def sphere_instances(seeds: int, first: int = 0) -> list[tuple[int, int, int, int]]:
    """(d, 0, n, seed) at VYS22.thm.main's quick cells: every d and n of its quick grid (n points on the sphere of
    radius sqrt(d), n <= 8), the cells' own sizes."""
    exp = EXPERIMENTS["VYS22.thm.main"]
    return [(int(d), 0, int(n), seed) for d in exp.quick_grid["d"] for n in exp.quick_grid["n"] for seed in range(first, first + seeds)]


def budgets() -> dict[str, Budget]:
    """The budgets to measure: each KKT claim design's (quick and full) and the engine's default."""
    out = {"default": Budget()}
    for claim, tag in (("FVBS23.thm.4_2", "FVBS23"), ("VYS22.thm.main", "VYS22")):
        exp = EXPERIMENTS[claim]
        for quick in (True, False):
            p = design(TrainedNetwork, exp.fixed_at(quick))
            out[f"{tag} " + ("quick" if quick else "full")] = search_budget(p)
    return out


def slsqp_points(X, y, k: int, starts: int, seed: int) -> list:
    """The independent method: SLSQP on (P) from random starts (width 2k), each end point a point only if it certifies.
    Solved in the span of ``[X 1]`` (a bias-free network on ``L`` with ``[X 1] = L Q^T``: exact, since a weight off the
    span only adds norm), so its size is 2k (n + 2) whatever d; mapped back to ``[w, b] = c Q^T``."""
    from ibcheck.solvers.kkt.polish import data_span
    from ibcheck.solvers.networks import TwoLayerReLU

    Q, L = data_span(X)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(starts):
        end, _ = slsqp(random_start(L.shape[1], 2 * k, rng, bias=False), L, y, maxiter=500)
        Wt = end.W @ Q.T
        net = TwoLayerReLU(W=Wt[:, :-1], a=end.a, b=Wt[:, -1])
        if (y * net.forward(X)).min() <= 0:
            continue
        c = kkt_certificate(net, X, y)
        if is_point(c):
            out.append(c.scaled)
    return out


def flip_norms(nets, ds, eps: float, seed: int) -> list[float]:
    """FVBS23.thm.4_2's flip norm of each network as its measure takes it (:func:`point_norms` on the sample's fitting
    points; a censored norm at its bound)."""
    from ibcheck.simulate.experiments.kkt import FIT_POINTS, point_norms
    from ibcheck.simulate.substrate.seeds import stream
    from ibcheck.solvers.radius.universal import universal_directions

    X, y = ds.sample(FIT_POINTS, stream("claim-measure", seed, 4))
    v = universal_directions("fvbs23", means=ds.means, J_plus=ds.J_plus)
    return [float(getattr(x, "value", x)) for x in point_norms(nets, X, y, v, 1 - eps)]


FLIP_WITHIN = 0.98  # issue 48: the budget's largest flip norm within 2% of the largest known


def cell_eps(d: int, k: int) -> float:
    """The eps of FVBS23.thm.4_2's quick design at (d, k) (its flip norm flips 1 - eps of the distribution)."""
    exp = EXPERIMENTS["FVBS23.thm.4_2"]
    return float(design(TrainedNetwork, {**exp.fixed_at(True), "d": d, "k": k}).eps)


def union(groups: list[list], probes) -> list:
    """The distinct points of several lists of points (the one same-point test)."""
    nets = [net for group in groups for net in group]
    return [nets[g[0]] for g in distinct_groups(nets, probes)]


def found_fraction(known: list, points: list, probes) -> int:
    fs = [p.forward(probes) for p in points]
    return sum(any(function_distance(k.forward(probes), f) <= SAME_POINT_RTOL for f in fs) for k in known)


def _key(row: dict) -> tuple:
    """An instance's identity: its set ("planted" or "cells": a record written before sets were kept is "cells" where it
    measured the quick budget alone, as --cells does), d, k, n and seed."""
    return (row.get("set") or ("cells" if "default found" not in row else "planted"), row["d"], row["k"], row["n"], row["seed"])


def merged_rows(old: list[dict], new: list[dict]) -> list[dict]:
    """The instances on record (measured by the same engine) with this run's added; an instance measured again is this
    run's. Each row keeps its set.

    Pitfall avoided: a run replaced every recorded class of its k over an overlapping n range, so three seeds run one at a
    time left the last seed's record alone; now every instance measured stays and the classes are recomputed."""
    fresh = {_key(r) for r in new}
    return [{**r, "set": _key(r)[0]} for r in old if _key(r) not in fresh] + [{**r, "set": _key(r)[0]} for r in new]


def recall_classes(rows: list[dict], bs: dict[str, Budget], fingerprint: str) -> list[dict]:
    """One recall class per (set, k, budget measured): its d and n ranges, instances, known and found points."""
    return list(classes_by_key(rows, bs, fingerprint).values())


def classes_by_key(rows: list[dict], bs: dict[str, Budget], fingerprint: str) -> dict[tuple, dict]:
    """:func:`recall_classes` keyed by (set, k, budget name)."""
    out: dict[tuple, dict] = {}
    for r in rows:
        for name, b in bs.items():
            if f"{name} found" not in r:
                continue
            acc = out.setdefault((_key(r)[0], r["k"], name), {"k": r["k"], "d_min": r["d"], "d_max": r["d"], "budget": b.as_json(),
                                                              "instances": 0, "known": 0, "found": 0, "fingerprint": fingerprint,
                                                              "n_min": r["n"], "n_max": r["n"], "reference": REFERENCE.as_json(),
                                                              "reference_saturated": 0, "several": 0,
                                                              "several_known": 0, "several_found": 0,
                                                              "flip_instances": 0, "flip_within": 0, "flip_min": None,
                                                              "kind": "sphere" if _key(r)[0] == "sphere" else "clusters"})
            acc["d_min"], acc["d_max"] = min(acc["d_min"], r["d"]), max(acc["d_max"], r["d"])
            acc["n_min"], acc["n_max"] = min(acc["n_min"], r["n"]), max(acc["n_max"], r["n"])
            acc["instances"] += 1
            acc["known"] += r["known"]
            acc["found"] += r[f"{name} found"]
            acc["reference_saturated"] += r.get("reference_stop") == "saturated"
            rb = r.get("reference_budget")  # the class states its shallowest instance's reference
            if rb is None or acc["reference"] is None or int(rb.get("gd", 0)) < int(acc["reference"].get("gd", 0)):
                acc["reference"] = rb
            acc["several"] += r["known"] >= 2
            if r["known"] >= 2:  # the samples where a search can miss a point: their own recall
                acc["several_known"] += r["known"]
                acc["several_found"] += r[f"{name} found"]
            ratio = r.get(f"{name} largest flip over known")
            if ratio is not None:  # the claim's own measure: the largest flip norm found against the largest known
                acc["flip_instances"] += 1
                acc["flip_within"] += ratio >= FLIP_WITHIN
                acc["flip_min"] = ratio if acc["flip_min"] is None else min(acc["flip_min"], ratio)
    return out


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="8 instances: k = 4 at d = 64 and 1024, k = 8 mostly at d = 64")
    ap.add_argument("--fixture", action="store_true", help="also write tests/data/kkt_planted.npz")
    ap.add_argument("--slsqp", type=int, default=12, help="SLSQP starts per instance (the independent cross-check)")
    ap.add_argument("--k", default="", help="only these k (comma-separated); the other classes on record are kept")
    ap.add_argument("--extra-k", default="", help="also planted instances at these k (e.g. 2,6: the quick grid's), d = 64 and 1024")
    ap.add_argument("--cells", default="", help="instead: instances at FVBS23.thm.4_2's quick cells with these k (e.g. 2,4,6), "
                    "at the cells' own n, smallest and largest d of the quick grid; the FVBS23 quick budget only")
    ap.add_argument("--sphere-cells", action="store_true", help="instead: instances at VYS22.thm.main's quick cells (points on "
                    "the sphere, every d and n of its quick grid), under VYS22's quick budget only")
    ap.add_argument("--depth", default="", help="instead: depth stability (bench/kkt_depth_stability.py) on these classes, "
                    "';'-separated: quick:2,4,6,8 (FVBS23.thm.4_2's quick cells at these k; FVBS23.thm.3_1's test error on the "
                    "same searches), full:12,16 (the full design's cells), sphere (VYS22.thm.main's quick cells)")
    ap.add_argument("--redo", action="store_true", help="with --depth: measure again instances already on record for "
                    "this engine and budget (by default they are kept and skipped, so a long measurement resumes)")
    ap.add_argument("--jobs", type=int, default=1, help="instances measured at once with --depth (one process and one BLAS "
                    "thread each)")
    ap.add_argument("--seeds", type=int, default=1, help="samples per cell with --cells or --sphere-cells; instances per class "
                    "with --depth")
    ap.add_argument("--first-seed", type=int, default=0, help="the first sample's seed with --cells (the runs add up)")
    return ap


def main() -> None:
    from record import commit_id  # run as a script: bench/ is on the path (tests load this file without it)

    commit = commit_id()  # before this run writes recall.json (and the fixture)
    ap = parser()
    args = ap.parse_args()
    if args.depth:
        depth_main(args, ap, commit)
        return
    bs = budgets()
    if args.cells:
        bs = {"FVBS23 quick": bs["FVBS23 quick"]}
    if args.sphere_cells:
        bs = {"VYS22 quick": bs["VYS22 quick"]}
    fp = engine_fingerprint()
    fixture: dict[str, np.ndarray] = {}
    rows = []
    several: dict[str, list[int]] = {}
    seconds: dict[str, list[float]] = {}
    print(f"engine fingerprint {fp}; budgets: " + "; ".join(f"{k}: {json.dumps(b.as_json())}" for k, b in bs.items()))
    todo = list(QUICK if args.quick else INSTANCES) if not args.cells else cell_instances(args.cells, args.seeds, args.first_seed)
    if args.sphere_cells:
        todo = sphere_instances(args.seeds, args.first_seed)
    for k in [int(x) for x in args.extra_k.split(",") if x]:
        todo += [(d, k, n, 0) for d in (64, 1024) for n in (3 * k, 5 * k)]
    if args.k:
        keep = {int(x) for x in args.k.split(",")}
        todo = [t for t in todo if t[1] in keep]
    for d, k, n, seed in todo:
        ds = clusters(d, k, n, 1.0, seed=seed) if k else sphere(d, n, seed=seed)
        cluster = ds.cluster if k else None
        probes = function_probes(ds.X)
        t = time.perf_counter()
        ref = search(ds.X, ds.y, cluster, (), REFERENCE, seed=seed)
        t_ref = time.perf_counter() - t
        sq = slsqp_points(ds.X, ds.y, max(k, n), args.slsqp, seed)
        known = union([list(ref.points), sq], probes)
        sq_alone = found_fraction(known, sq, probes)
        line = {"set": "sphere" if args.sphere_cells else ("cells" if args.cells else "planted"), "d": d, "k": k, "n": n, "seed": seed,
                "known": len(known),
                "reference": ref.distinct, "slsqp": sq_alone, "slsqp_starts": args.slsqp,
                "reference_seconds": round(t_ref, 1), "reference_starts": ref.gd_starts, "reference_budget": REFERENCE.as_json(),
                "reference_unseen": round(float(ref.unseen), 4), "reference_stop": ref.stop}
        # on cluster samples the claim's own measure too: the largest flip norm over the points found against the known
        top = max(flip_norms(known, ds, cell_eps(d, k), seed), default=float("nan")) if k and known else float("nan")
        if top == top:
            line["known_largest_flip"] = round(top, 4)
        for name, b in bs.items():
            t = time.perf_counter()
            objective = flip_objective(ds, cell_eps(d, k)) if k and name.startswith("FVBS23") else None  # as the comparison runs it
            got = search(ds.X, ds.y, cluster, (), b, seed=seed + 1000, objective=objective)  # another seed than the reference's
            sec = time.perf_counter() - t
            hit = found_fraction(known, list(got.points), probes)
            line[name] = f"{hit}/{len(known)} in {sec:.1f}s"
            seconds.setdefault(name, []).append(sec)
            line[f"{name} found"] = hit
            line[f"{name} slsqp first"] = got.by_origin().get("slsqp:random", (0, 0, 0))[2]  # points no earlier source reached
            if top == top:  # a search that found no point is a miss (ratio 0), never left out
                found = flip_norms(list(got.points), ds, cell_eps(d, k), seed) if got.points else [0.0]
                line[f"{name} largest flip over known"] = round(max(found) / top, 4)
        rows.append(line)
        print(json.dumps(line), flush=True)
        if len(known) >= 3:
            for name in bs:
                several.setdefault(name, [0, 0])
                several[name][0] += line[f"{name} found"]
                several[name][1] += len(known)
        tag = {4: "i0", 8: "i1"}.get(k, "")  # the first k = 4 and the first k = 8 instance with 3 or more known points
        if args.fixture and len(known) >= 3 and tag and f"{tag}_meta" not in fixture:
            fixture[f"{tag}_meta"] = np.array([d, k, n, seed, line["FVBS23 full found"]])
            for j, net in enumerate(known):
                fixture[f"{tag}_p{j}_W"], fixture[f"{tag}_p{j}_a"], fixture[f"{tag}_p{j}_b"] = net.W, net.a, net.b
    print("\nrecall per class (known points found / known points):")
    per_class = []
    for (_, k, name), acc in sorted(classes_by_key(rows, bs, fp).items()):  # this run's instances
        r = acc["found"] / acc["known"] if acc["known"] else math.nan
        print(f"  k = {k}, d = {acc['d_min']}-{acc['d_max']}, budget {name}: {acc['found']}/{acc['known']} = {r:.0%} "
              f"on {acc['instances']} instances")
        per_class.append(f"k = {k}, d = {acc['d_min']}-{acc['d_max']}, {name}: {acc['found']}/{acc['known']} = {r:.0%} "
                         f"({acc['instances']} instances)")
    several_text = "; ".join(f"{name}: {f}/{t} = {f / t:.0%}" for name, (f, t) in several.items() if t)
    print("instances with 3 or more known points (the issue's done-when): " + several_text)
    _record_run(args, ap, todo, per_class, several_text, seconds, fp, commit)
    # merge with the instances on record measured by this same engine; every class is recomputed from all of them
    old = json.loads(RECALL_FILE.read_text()) if RECALL_FILE.exists() else {}
    kept = old.get("instances", []) if old.get("fingerprint") == fp else []
    rows = merged_rows(kept, rows)
    same = old.get("fingerprint") == fp and streams_of(old) == STREAMS_VERSION
    depth = {k: old[k] for k in ("depth_instances", "depth") if k in old and same}  # kept as they are
    RECALL_FILE.write_text(json.dumps({"fingerprint": fp, "streams": STREAMS_VERSION, "instances": rows,
                                       "classes": recall_classes(rows, budgets(), fp), **depth},
                                      indent=1) + "\n")
    print(f"written {RECALL_FILE}")
    if args.fixture and fixture:
        FIXTURE.parent.mkdir(parents=True, exist_ok=True)
        np.savez(FIXTURE, streams=np.array(STREAMS_VERSION), **fixture)  # the data streams its instances were drawn with
        print(f"written {FIXTURE}")


def depth_tasks(spec: str, seeds: int, first: int) -> list[tuple]:
    """The --depth spec as tasks (set, d, k, n, seed, quick)."""
    from kkt_depth_stability import cell_instances, sphere_instances

    tasks: list[tuple] = []
    for part in [p.strip() for p in spec.split(";") if p.strip()]:
        name, _, ks = part.partition(":")
        if name == "sphere":
            tasks += [("sphere", d, k, n, s, True) for d, k, n, s in sphere_instances(seeds, first)]
        elif name in ("quick", "full"):
            ks_ = [int(x) for x in ks.split(",") if x]
            tasks += [(name, d, k, n, s, name == "quick")
                      for d, k, n, s in cell_instances("FVBS23.thm.4_2", ks_, seeds, first, name == "quick")]
        else:
            raise SystemExit(f"--depth: {part!r} is not one of quick:K,..., full:K,..., sphere")
    return tasks


def depth_main(args, ap, commit: str) -> None:
    """Depth stability per class (bench/kkt_depth_stability.py): measure, merge into recall.json, print and record."""
    from kkt_depth_stability import claim_budget, measured, on_record, reference_json, run_depth, write
    from record import command_line, record, variant_id

    tasks = depth_tasks(args.depth, args.seeds, args.first_seed)
    if not args.redo:  # resume: an instance this engine measured under the same budget is kept, not measured again
        have = on_record()
        budgets = {t: claim_budget("VYS22.thm.main" if t[2] == 0 else "FVBS23.thm.4_2", t[5]) for t in tasks}
        todo = [t for t in tasks if not measured(t, budgets[t].as_json(), have, reference_json(budgets[t]))]
        if len(todo) < len(tasks):
            print(f"{len(tasks) - len(todo)} of {len(tasks)} instances already on record for this engine and budget "
                  "(kept; --redo measures them again)", flush=True)
        tasks = todo
    print(f"engine fingerprint {engine_fingerprint()}; {len(tasks)} instances, {args.jobs} at a time", flush=True)
    t = time.perf_counter()
    rows = run_depth(tasks, args.jobs, on_rows=write)  # each instance written as it finishes
    classes = write(rows)
    lines = []
    for c in classes:
        lines.append(f"{c.kind} k = {c.k} {c.quantity}: {c.text()}")
        print(lines[-1])
    secs = [r["budget_seconds"] for r in rows if r["quantity"] == "universal_flip_norm"]
    refs = [r["reference_seconds"] for r in rows if r["quantity"] == "universal_flip_norm"]
    figure = "; ".join(lines) + (f"; seconds per search: budget {min(secs):.1f}-{max(secs):.1f} s, reference "
                                 f"{min(refs):.1f}-{max(refs):.1f} s" if secs else "")
    record(variant_id("kkt_recall", args, ap, ignore=("fixture", "jobs", "redo")), figure, command_line(__file__),
           {"fingerprint": engine_fingerprint(), "instances": len(tasks), "seconds": round(time.perf_counter() - t)},
           commit=commit, what=f"KKT depth stability per class ({args.depth}, {args.seeds} instances a class from seed "
                               f"{args.first_seed}): the budget's extremum of the claim's quantity within max(2%, 2x its "
                               "resolution) of a reference at least 4x deeper")


def _record_run(args, ap, todo, per_class: list[str], several_text: str, seconds: dict[str, list[float]], fp: str,
                commit: str) -> None:
    """This run's figures in docs/performance.md, under an id naming the options that change what it measures."""
    from record import command_line, record, variant_id

    if args.cells:
        where = f"FVBS23.thm.4_2's quick cells at k = {args.cells} (their own n, {args.seeds} seeds from {args.first_seed})"
    elif args.sphere_cells:
        where = f"VYS22.thm.main's quick cells (points on the sphere, {args.seeds} seeds from {args.first_seed})"
    else:
        where = "planted instances" + (" (--quick's set)" if args.quick else "") + (f", also k = {args.extra_k}" if args.extra_k else "")
    if args.k:
        where += f", k = {args.k} only"
    secs = "; ".join(f"{name} {min(v):.1f}-{max(v):.1f} s" for name, v in seconds.items() if v)
    figure = "; ".join(per_class) + (f"; on the instances with 3 or more known points: {several_text}" if several_text else "") \
        + (f"; seconds per search: {secs}" if secs else "")
    record(variant_id("kkt_recall", args, ap, ignore=("fixture",)), figure or "no instance measured", command_line(__file__),
           {"fingerprint": fp, "instances": len(todo)}, commit=commit,
           what=f"KKT recall by budget (known points found / known, against the reference search and an SLSQP cross-check of "
                f"{args.slsqp} starts) and seconds per search, {len(todo)} {where}, engine fingerprint {fp}")


if __name__ == "__main__":
    main()
