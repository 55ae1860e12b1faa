"""Binomial counts against an exp-type bound (issue 57, item 5): the rates of each verdict with the cells weighted by
their seeds (the pooled fit, as before) and by their binomial variance (rows carrying their trials,
simulate.verdict.exp_test.binomial_weights). The table in docs/verdict.md ("Binomial counts") is this script's output.

Design: y = exp(-0.3 h^power), h = n/100, n = 2^4..2^11 (h = 0.16..20.5), 3 seeds, k ~ Binomial(N, p) per seed (a zero
count drawn again), optionally a seed-level variation of the rate (log-normal, sd ``sd``); tested against O(exp(-c h)).
The truth is power 1 (true) or 0.8 (false).

Measured 2026-12-03 (400 trials): see docs/verdict.md. Usage: ``python bench/binomial_counts.py [trials]``.
"""
from __future__ import annotations

import math
import sys

import numpy as np

from ibcheck.simulate.verdict.analysis import analyze

NS = [2 ** e for e in range(4, 12)]
CASES = (("N = 2000", 2000, 0.0), ("N = 10,000", 10_000, 0.0), ("N = 2000, seed sd 0.1 in the rate", 2000, 0.1),
         ("N = 2000, seed sd 0.3 in the rate", 2000, 0.3))


def rows(rng, N: int, power: float, sd: float, trials: bool, seeds: int = 3) -> list[dict]:
    out = []
    for n in NS:
        for s in range(seeds):
            p = min(math.exp(-0.3 * (n / 100) ** power) * math.exp(sd * rng.standard_normal()), 1.0)
            k = 0
            while k == 0:
                k = int(rng.binomial(N, p))
            out.append({"n": float(n), "log_n": math.log(n), "seed": s, "run": f"{n}/{s}", "value": -math.log(k / N),
                        **({"trials": N} if trials else {})})
    return out


def rates(trials: int, seed: int, N: int, power: float, sd: float, weighted: bool) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    out = {"consistent": 0, "inconsistent": 0, "inconclusive": 0}
    for _ in range(trials):
        an = analyze(rows(rng, N, power, sd, weighted), ["n"], "Omega", {"n": 1.0}, bootstrap=False, extrapolate=False, free_constant=True)
        out[an.verdict] += 1
    return {k: v / trials for k, v in out.items()}


def main(trials: int = 400) -> None:
    print("| counts | weights | true (power 1): inconsistent | consistent | false (power 0.8): inconsistent | consistent |")
    print("|---|---|---|---|---|---|")
    for label, N, sd in CASES:
        for weighted in (False, True):
            a, b = rates(trials, 11, N, 1.0, sd, weighted), rates(trials, 12, N, 0.8, sd, weighted)
            print(f"| {label} | {'binomial' if weighted else 'seeds (pooled, before)'} | {a['inconsistent']:.1%} | {a['consistent']:.1%} | "
                  f"{b['inconsistent']:.1%} | {b['consistent']:.1%} |", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 400)
