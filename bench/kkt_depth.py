"""How deep must a search go on a sample with several KKT points? Recall and largest flip norm against the cap.

Issue 48's done-when: on samples at FVBS23.thm.4_2's cells' own n that hold several known points (k = 6 and 8, d = 256
to 1024), the comparison's budget finds >= 90% of the known points and its largest flip norm is within 2% of the
largest known one. This bench takes such instances (``--instances d,k,n,seed;...``, or the several-point instances of
``solvers/kkt/recall.json``), runs the deep reference search of ``bench/kkt_recall.py`` once (the known points), then
the quick design's budget with its cap on GD starts raised step by step (``--caps 20,40,80,160``; another seed than the
reference's), and prints per instance and cap: points found / known, the largest flip norm found / the largest known
(FVBS23.thm.4_2's own flip norm: along ``-y v``, flipping 1 - eps of 2000 fitting points with 95% confidence) and the
seconds. The flip norm of every known point is printed too (the spread the search must cover).

Usage: ``python bench/kkt_depth.py [--instances "256,6,185,6;256,6,185,12"] [--caps 20,40,80,160]``.

The run's figure (per cap, over the instances: points found / known, flip norms within 2%, seconds) is recorded in
docs/performance.md (bench/record.py) as ``kkt_depth``, or ``kkt_depth[OPTION=VALUE;...]`` naming the options given.
"""
from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace

import numpy as np
from kkt_recall import REFERENCE, cell_eps, flip_norms  # run as a script: bench/ is on the path
from record import command_line, record, variant_id

from ibcheck.simulate.experiments.base import TrainedNetwork, design
from ibcheck.simulate.experiments.kkt import flip_objective, search_budget
from ibcheck.simulate.experiments.registry import EXPERIMENTS
from ibcheck.simulate.substrate.data import clusters, sphere
from ibcheck.solvers.kkt.engine import search
from ibcheck.solvers.kkt.policy import SAME_POINT_RTOL, function_distance, function_probes
from ibcheck.solvers.kkt.recall import RECALL_FILE


def several_point_instances() -> list[tuple[int, int, int, int]]:
    """The cells instances on record with two or more known points."""
    rows = json.loads(RECALL_FILE.read_text()).get("instances", [])
    return [(r["d"], r["k"], r["n"], r["seed"]) for r in rows if r.get("set") in ("cells", "sphere") and r["known"] >= 2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--instances", default="", help="d,k,n,seed;... (default: recall.json's several-point instances)")
    ap.add_argument("--caps", default="20,40,80,160", help="caps on GD starts for the quick budget (each with a saturation "
                    "level of at most 1/cap, so that the search runs to its cap unless it saturates there)")
    ap.add_argument("--reference", default="", help="the reference's GD starts: at least,at most,saturation (default: "
                    "bench/kkt_recall.py's 80,320,0.02)")
    args = ap.parse_args()
    reference = REFERENCE
    if args.reference:
        lo, hi, level = args.reference.split(",")
        reference = replace(REFERENCE, gd=int(lo), gd_max=int(hi), saturation=float(level))
    todo = [tuple(int(x) for x in t.split(",")) for t in args.instances.split(";") if t] or several_point_instances()
    exp, sph = EXPERIMENTS["FVBS23.thm.4_2"], EXPERIMENTS["VYS22.thm.main"]
    per_cap: dict[int, dict] = {}
    for d, k, n, seed in todo:
        # k = 0: VYS22's points on a sphere, under its quick budget (no flip norm here: its own is another quantity)
        quick = search_budget(design(TrainedNetwork, (exp if k else sph).fixed_at(True)))
        ds = clusters(d, k, n, 1.0, seed=seed) if k else sphere(d, n, seed=seed)
        cluster = ds.cluster if k else None
        eps = cell_eps(d, k) if k else 0.0
        probes = function_probes(ds.X)
        objective = flip_objective(ds, eps) if k else None  # the comparison's own ascent objective
        t = time.perf_counter()
        ref = search(ds.X, ds.y, cluster, (), reference, seed=seed)
        known = list(ref.points)
        kf = [p.forward(probes) for p in known]
        norms = flip_norms(known, ds, eps, seed) if k else []
        print(json.dumps({"d": d, "k": k, "n": n, "seed": seed, "known": len(known), "reference_starts": ref.gd_starts,
                          "reference_unseen": round(float(ref.unseen), 4), "reference_seconds": round(time.perf_counter() - t, 1), "reference_stop": ref.stop,
                          "known_flip_norms": [round(x, 4) for x in sorted(norms)]}), flush=True)
        for cap in [int(c) for c in args.caps.split(",")]:
            b = replace(quick, gd_max=cap, saturation=min(quick.saturation, 1 / cap))  # runs to the cap unless saturated at 1/cap
            t = time.perf_counter()
            got = search(ds.X, ds.y, cluster, (), b, seed=seed + 1000, objective=objective)
            sec = time.perf_counter() - t
            hit = [any(function_distance(f, g.forward(probes)) <= SAME_POINT_RTOL for g in got.points) for f in kf]
            top = max(flip_norms(list(got.points), ds, eps, seed), default=float("nan")) if k else float("nan")
            acc = per_cap.setdefault(cap, {"found": 0, "known": 0, "instances": 0, "flip": 0, "flip_within": 0, "seconds": []})
            acc["found"] += int(sum(hit))
            acc["known"] += len(known)
            acc["instances"] += 1
            acc["seconds"].append(sec)
            if norms:
                acc["flip"] += 1
                acc["flip_within"] += top / max(norms) >= 0.98
            print(json.dumps({"d": d, "k": k, "n": n, "seed": seed, "cap": cap, "starts": got.gd_starts, "stop": got.stop,
                              "unseen": round(float(got.unseen), 4), "found": int(sum(hit)), "known": len(known),
                              "largest_flip_found_over_known": round(top / max(norms), 4) if norms else None,
                              "seconds": round(sec, 1)}), flush=True)
    figure = "; ".join(f"cap {cap}: {a['found']}/{a['known']} known points found"
                       + (f", largest flip norm within 2% on {a['flip_within']} of {a['flip']}" if a["flip"] else "")
                       + f", {min(a['seconds']):.1f}-{max(a['seconds']):.1f} s a search" for cap, a in per_cap.items())
    record(variant_id("kkt_depth", args, ap), figure or "no instance measured", command_line(__file__),
           {"instances": len(todo)},
           what=f"the quick budget against its cap on GD starts, on {len(todo)} instances with several known points (the deep "
                "reference search's): points found / known, the largest flip norm found within 2% of the largest known, seconds")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
