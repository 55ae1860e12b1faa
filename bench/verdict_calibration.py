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

Usage: python bench/verdict_calibration.py [TRIALS]
"""
from __future__ import annotations

import json
import sys
import time

from ibcheck.simulate.compare.calibrate import calibrate, calibration_markdown


def main() -> int:
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    t0 = time.perf_counter()
    res = calibrate(trials=trials, seed=0, progress=True)
    secs = time.perf_counter() - t0
    print(calibration_markdown(res))
    print(json.dumps({"bench": "verdict_calibration", "trials": trials, "seconds": round(secs, 1),
                      "targets": res["targets"]}, indent=2))
    return 0 if all(res["targets"]["met"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
