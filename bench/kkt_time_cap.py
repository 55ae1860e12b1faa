"""`ibcheck kkt --time T` against its contract (issue 58, item 4): the command ends within T + 10% + 5 s and reports
what it has. Each case runs the command itself (a fresh process: imports, the separability check, the GD start, the
search, the radii and the files), and prints its wall time as a ratio to the allowance T * 1.1 + 5 (at most 1 passes).

Measured 2026-12-02 (2 cores, T = 20, allowance 27 s): n = d = 1000, k = 4: 46 s before (the imports, an SVM of 11.7 s
and the GD start ran outside the cap, and every certified network's radii after it), 23.3 s after; n = 10,000, d = 2:
28.3 s before, 23.3 s after (2.75 GB: the cone programs' n x n Gram matrix). The last pattern may still run past the cap
by its programs (the engine's code, and with it the recall records, is unchanged).

Sphere data (added after a second pass measured 100 s and "the time cap of 0 s after 0 starts" on a contended machine):
the trained GD start ran 2000 steps outside any cap (6 s alone, about 24 s contended), and the line named the seconds
left for the engine as "the time cap". Now the start gets a quarter of the cap left (``GD_START_SHARE``) and the line
names the user's cap and what was left of it. Measured 2026-12-02, T = 20: 22.9 s alone (10 starts); 31.2 s beside two
busy-looping processes on the 2 cores, where one batched GD pattern of the engine (1.5 s alone) ran past the cap.

The sphere case, 2026-12-04, alone: 71-78 s (search 66-73 s). One Clarabel cone program (64 coupled neurons, 64M
nonzeros) took 65 s inside a start begun at 12 s: 7 s cvxpy's compile, 4.5 s Clarabel's setup, 52 s its iterations.
Now its iterations end at the cap and it is not started where its compile time would take it past the cap: 21.1 s
(search 15.8 s); the other two cases 21.4 and 15.2 s.

The sphere case, 2026-12-07, alone: 28.5 s (27 s allowed), where a program of 8.9M nonzeros begun with 4.9 s left
compiled for 8.8 s. Now a program is not begun where its compile and setup, estimated from its nonzeros
(``clock.program_fits``), would not fit in the time left: 21.4 s (the other two cases 21.7 and 14.4 s); 20.0 s and
476 MB peak for the same command run alone under ``/usr/bin/time``.

Usage: ``python bench/kkt_time_cap.py [T]``.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

CASES = (("n = d = 1000, k = 4", ("--d", "1000", "--n", "1000", "--k", "4")),
         ("n = 10000, d = 2, k = 2", ("--d", "2", "--n", "10000", "--k", "2")),
         ("sphere, n = d = 1000", ("--data", "sphere", "--d", "1000", "--n", "1000")))


def main(cap: float = 20.0) -> int:
    exe = os.path.join(os.path.dirname(sys.executable), "ibcheck")
    allowance = cap * 1.1 + 5.0
    worst = 0.0
    print(f"| case | wall (s) | search (s) | stop | points | wall / (T 1.1 + 5), T = {cap:g} |")
    print("|---|---|---|---|---|---|")
    for name, args in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            t = time.perf_counter()
            out = subprocess.run([exe, "kkt", *args, "--time", str(cap), "--out", os.path.join(tmp, "k"), "--json"],
                                 capture_output=True, text=True)
            wall = time.perf_counter() - t
        if out.returncode != 0:
            print(f"| {name} | failed: {out.stderr.strip()[-200:]} |")
            return 1
        eng = json.loads(out.stdout)["engine"]
        worst = max(worst, wall / allowance)
        print(f"| {name} | {wall:.1f} | {eng['seconds']:.1f} | {eng['stop']} | {eng['distinct']} | {wall / allowance:.2f} |")
    return 0 if worst <= 1.0 else 1


if __name__ == "__main__":
    sys.exit(main(float(sys.argv[1]) if len(sys.argv) > 1 else 20.0))
