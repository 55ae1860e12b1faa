"""How fast this machine's core is today: a fixed pure-Python loop (30 million additions) and, where numpy is importable,
a 1000 x 1000 matrix product on one thread (GFLOP/s), each the best of 3.

The project's 2-core machine is not always the same speed. Late on 2026-12-07 (11 pm) the suite took 546-617 s where it
took 250-272 s at 3-6 pm that day (the same tests), with the Python loop at 1.7 s but the matrix product at 19 GFLOP/s
on one thread (an AVX2 core at 2 GHz gives about 50 with OpenBLAS) and one KKT engine start 3x slower than its recorded
figure (`kkt_speed.start`, 0.57 s against 0.17 s). bench/fresh_clone.sh runs this before `make test` and records the
figures beside the suite's wall time, so that timings from different days can be compared. The standard library and
numpy only (it runs before the install, with the system's python3).

Usage: ``python3 bench/cpu_probe.py`` prints ``cpu probe: 1.70 s (30M additions, best of 3); matmul 18.8 GFLOP/s (one
thread, 1000 x 1000, best of 3)``; bench/fresh_clone_parse.py reads that line.
"""
from __future__ import annotations

import os
import time

N = 30_000_000
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads: one thread, as each test process runs
os.environ.setdefault("OMP_NUM_THREADS", "1")


def python_loop(repeats: int = 3) -> float:
    """The fastest of ``repeats`` timings of ``N`` integer additions in a Python loop (seconds)."""
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        s = 0
        for i in range(N):
            s += i
        best = min(best, time.perf_counter() - t)
    return best


def matmul_gflops(n: int = 1000, repeats: int = 3) -> float | None:
    """GFLOP/s of the fastest of ``repeats`` n x n float64 products (2 n^3 flops each); None without numpy."""
    try:
        import numpy as np
    except ImportError:
        return None
    a = np.random.default_rng(0).random((n, n))
    a @ a  # warm: the first product loads the kernel
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        a @ a
        best = min(best, time.perf_counter() - t)
    return 2 * n ** 3 / best / 1e9


def line() -> str:
    gf = matmul_gflops()
    tail = f"; matmul {gf:.1f} GFLOP/s (one thread, 1000 x 1000, best of 3)" if gf is not None else "; matmul not measured (no numpy)"
    return f"cpu probe: {python_loop():.2f} s (30M additions, best of 3){tail}"


if __name__ == "__main__":
    print(line(), flush=True)
