"""Calibration of the verdict engine at full size (ibcheck calibrate --trials 200).

Synthetic scaling data with known truth go through the same pipeline as a budgeted
``ibcheck compare`` (the function test, rounds, Pocock alpha spending). Prints the rate of
each verdict per scenario, with the band rule's (the engine before the function test) on the
same final data, and whether the three targets hold:

* a true claim called ``inconsistent`` in at most 5% of trials, in every scenario (corrections to
  scaling from above and below, loose bounds, windows, censoring included);
* a false claim called ``consistent`` in at most 5%, in every scenario (wrong powers, missing and
  extra log and log-log factors, a two-variable ray, a violated upper bound, trajectories);
* exact power laws decided in at least 80% within the default budget.

Usage: python bench/verdict_calibration.py [TRIALS] [--scenarios NAME,NAME...]

``--scenarios``: only those, each on its own stream of the full run (``calibrate(full_streams=True)``), so their rows
are the full run's; only their rows are recorded (the run's time, the targets and the power limits are a full run's).

The figures are recorded in docs/performance.md (bench/record.py): ``verdict_calibration.SCENARIO`` per scenario,
``verdict_calibration.run`` (the run's time), ``.targets`` and ``.power_limits``. A run of fewer than
:data:`FULL_TRIALS` trials per scenario records under ``verdict_calibration[trials=N]...`` instead, so that a trial run
never replaces a full run's rows.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

from record import command_line, record  # run as a script: bench/ is on the path

from ibcheck.simulate.compare.calibrate import calibrate, calibration_markdown

FULL_TRIALS = 100  # the size docs/verdict.md's table is measured at: a run this large or larger is a full one
VERDICTS = ("consistent", "inconsistent", "inconclusive")


def main() -> int:
    parser = argparse.ArgumentParser(description="The verdict engine's calibration at full size.")
    parser.add_argument("trials", nargs="?", type=int, default=200, help="trials per scenario (default 200)")
    parser.add_argument("--scenarios", type=lambda text: text.split(","), default=None,
                        help="only these (comma-separated), each on its own stream of the full run")
    args = parser.parse_args()
    trials, only = args.trials, args.scenarios
    t0 = time.perf_counter()
    res = calibrate(trials=trials, seed=0, progress=True, scenarios=only, full_streams=True)
    secs = time.perf_counter() - t0
    print(calibration_markdown(res))
    print(json.dumps({"bench": "verdict_calibration", "trials": trials, "seconds": round(secs, 1),
                      "targets": res["targets"]}, indent=2))
    record_figures(res, trials, secs, whole=only is None)
    return 0 if all(res["targets"]["met"].values()) else 1


def record_figures(res: dict, trials: int, secs: float, whole: bool = True) -> None:
    """One row per scenario, and for a whole run its time, the targets and the power limits."""
    base = "verdict_calibration" if trials >= FULL_TRIALS else f"verdict_calibration[trials={trials}]"
    cmd = command_line(__file__)
    table = res["scenarios"]
    for name, r in table.items():
        rt, ob = r["rates"], r.get("band_rule_rates", {})
        right = "consistent" if r["truth"] == "true" else "inconsistent"
        record(f"{base}.{name}", ", ".join(f"{v} {rt[v]:.0%} ({ob.get(v, 0):.0%})" for v in VERDICTS)
               + f"; right {rt[right]:.0%} ({ob.get(right, 0):.0%}); mean looks {r['mean_looks']:.1f}", cmd,
               {"counts": r["counts"], "trials": trials},
               what=f"calibration `{name}` ({r['note']}; truth: {r['truth']})")
    if not whole:
        return
    record(f"{base}.run", f"{secs:.0f} s ({trials} trials per scenario, {len(table)} scenarios)", cmd, {"seconds": secs},
           what="the verdict engine's calibration, whole run")
    t = res["targets"]

    def worst(truth: str, verdict: str) -> str:
        """The scenario with that truth called ``verdict`` most often, named where it ever was."""
        names = [n for n, r in table.items() if r["truth"] == truth]
        top = max(names, key=lambda n: table[n]["rates"][verdict]) if names else None
        return f" ({top})" if top and table[top]["rates"][verdict] > 0 else ""

    def pct(x) -> str:
        return "n/a" if x is None else f"{x:.0%}"

    met = "; ".join(f"{k}: {'met' if ok else 'NOT MET'}" for k, ok in t["met"].items())
    record(f"{base}.targets", f"a true claim called `inconsistent`: at most {pct(t['false_inconsistent_max'])}"
           f"{worst('true', 'inconsistent')}, target at most 5%; a false claim called `consistent`: at most "
           f"{pct(t['false_consistent_max'])}{worst('false', 'consistent')}, target at most 5%; exact power laws decided: "
           f"{pct(t['exact_decided'])}, target at least 80% ({met})", cmd, {"targets": t},
           what="calibration targets")
    if res.get("limits"):
        parts = []
        for lim in res["limits"]:
            top = f"d up to 2^{lim['top_for_80']}" if lim["top_for_80"] is not None else "d beyond 2^40"
            need = "met by the design" if lim["bound"] >= 0.80 else f"80% needs {lim['seeds_for_80']} seeds per cell, or {top} with 3"
            parts.append(f"{lim['scenario']} {lim['verdict']} {lim['engine']:.0%} (any test at most {lim['bound']:.0%}; {need})")
        record(f"{base}.power_limits", "; ".join(parts), cmd, {"limits": res["limits"]},
               what="power targets against any test's bound (3 seeds, d = 2^6..2^16)")


if __name__ == "__main__":
    sys.exit(main())
