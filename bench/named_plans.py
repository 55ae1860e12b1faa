"""Named plans, run, at full size: one calibration scenario's trials on the full calibration's own draws.

Each trial is ``run_trial`` on the stream ``("calibration", 0, i, t)``, where ``i`` is the scenario's place in
``SCENARIOS``, so the trials are the same draws as ``python bench/verdict_calibration.py 100`` (``calibrate`` numbers
a subset's scenarios by their place in the subset unless ``full_streams=True``, so ``calibrate(scenarios=[...])``
alone draws others). Every inconclusive trial's plan is checked with 20 simulated trials per story (``compare``'s
default) and, where one is named, its design is swept from the scenario's own truth and judged
(:mod:`ibcheck.simulate.compare.plan_runs`).

Prints, per scenario: the verdicts at the fixed design; the plans named; the named plans' verdicts when run; and the
trials decided the right way at the fixed design or at their named plan (issue 57's targets: exp_power_08 refuted and
exp_gaussian_tail confirmed in at least 80% at the design the plan names). Records the figures (bench/record.py).

Usage: python bench/named_plans.py SCENARIO [TRIALS] [JOBS]   (10-60 s per inconclusive trial; JOBS processes)
"""
from __future__ import annotations

import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor

from record import command_line, record  # run as a script: bench/ is on the path

PLAN_TRIALS = 20  # simulated trials per story for each plan's check: compare's default


def one(args: tuple[str, int]) -> dict:
    """One trial of the scenario, its plan run where named."""
    from ibcheck.simulate.compare.calibrate import DEFAULT_BUDGET, SCENARIOS, full_run_stream, run_trial

    name, t = args
    sc = SCENARIOS[name]
    r = run_trial(sc, full_run_stream(name, 0, t), sc.budget or DEFAULT_BUDGET, plan_trials=PLAN_TRIALS)
    p = r.plan
    return {"t": t, "verdict": r.verdict, "plan": None if p is None else {"named": p.named, "verdict": p.verdict, "design": p.design}}


def main() -> int:
    from ibcheck.simulate.compare.calibrate import SCENARIOS

    name = sys.argv[1] if len(sys.argv) > 1 else "exp_power_08"
    if name not in SCENARIOS:
        print(f"bench/named_plans.py: scenario {name!r} is not one of {', '.join(SCENARIOS)}", file=sys.stderr)
        return 2
    counts = []
    for pos, what, default, top in ((2, "TRIALS", 100, 10_000), (3, "JOBS", 2, 64)):
        raw = sys.argv[pos] if len(sys.argv) > pos else str(default)
        if not (raw.isdigit() and 1 <= int(raw) <= top):
            print(f"bench/named_plans.py: {what} {raw[:200]!r} is not an integer in 1..{top}", file=sys.stderr)
            return 2
        counts.append(int(raw))
    trials, jobs = counts
    right = "consistent" if SCENARIOS[name].truth_holds else "inconsistent"
    t0 = time.perf_counter()
    with ProcessPoolExecutor(jobs) as pool:
        rows = list(pool.map(one, [(name, t) for t in range(trials)]))
    secs = time.perf_counter() - t0
    fixed = {v: sum(r["verdict"] == v for r in rows) for v in ("consistent", "inconsistent", "inconclusive")}
    named = [r["plan"] for r in rows if r["verdict"] == "inconclusive" and r["plan"] and r["plan"]["named"]]
    ran = {v: sum(p["verdict"] == v for p in named) for v in ("consistent", "inconsistent", "inconclusive")}
    decided = fixed[right] + ran[right]
    wrong = "inconsistent" if right == "consistent" else "consistent"
    figure = (f"fixed design: right {fixed[right]}, wrong {fixed[wrong]}, inconclusive {fixed['inconclusive']}; plans named "
              f"{len(named)} of {fixed['inconclusive']}; named plans run: right {ran[right]}, wrong {ran[wrong]}, inconclusive "
              f"{ran['inconclusive']}; right at the fixed design or at its named plan {decided} of {trials}")
    print(f"{name} ({trials} trials, {secs:.0f} s): {figure}")
    print(json.dumps({"bench": "named_plans", "scenario": name, "trials": trials, "seconds": round(secs, 1), "fixed": fixed,
                      "named": len(named), "ran": ran, "decided": decided}, indent=2))
    base = "named_plans" if trials >= 100 else f"named_plans[trials={trials}]"
    record(f"{base}.{name}", figure, command_line(__file__), {"fixed": fixed, "ran": ran, "trials": trials, "seconds": secs},
           what=f"calibration `{name}`: its named plans run on its own truth (20 simulated trials per story)",
           group="verdict_calibration")
    return 0


if __name__ == "__main__":
    sys.exit(main())
