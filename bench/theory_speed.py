"""Speed of the symbolic layer, as ratios against reference implementations in the same run.

* claim evaluation: every hypothesis of FVBS23.thm.4_2 at one point, ibcheck's log-space
  mpmath path against the plain sympy path (``subs`` + ``evalf`` of each side);
* window: one applicability window (warm caches) against a reference that bisects each
  hypothesis end over the integers with the same evaluator.

The last two lines are ``ms_per_claim_eval: X`` and ``ms_per_window: Y`` (targets: 10 and 100). The figures are
recorded in docs/performance.md (bench/record.py): ``theory_speed.claim_eval``, ``theory_speed.claim_eval_all`` and
``theory_speed.window``.
"""
from __future__ import annotations

import statistics
import time

import mpmath
import sympy as sp
from record import command_line, record  # run as a script: bench/ is on the path

from ibcheck.theory import all_claims, get_claim
from ibcheck.theory.evaluate import evaluate_claim, make_point, parse_assignments, relation_holds
from ibcheck.theory.scaling import default_raw
from ibcheck.theory.window import applicability_window

POINT = "d=1000000,k=10,n=100000,eps=0.1,delta=0.1,c=0.5"
WINDOW_AT = "k=10,n=100000,eps=0.1,delta=0.1"


def timeit(fn, repeat=7, number=20) -> float:
    """Median milliseconds per call."""
    fn()
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(number):
            fn()
        runs.append((time.perf_counter() - t) / number * 1000)
    return statistics.median(runs)


def reference_eval(claim, raw):
    """Plain sympy: substitute and evalf both sides (no log space)."""
    subs = {sp.Symbol(k, positive=True): sp.Float(v, 30) for k, v in raw.items()}
    return [bool(h.expr.lhs.subs(subs).evalf(30) <= h.expr.rhs.subs(subs).evalf(30)) if isinstance(h.expr, sp.LessThan)
            else bool(h.expr.lhs.subs(subs).evalf(30) >= h.expr.rhs.subs(subs).evalf(30)) for h in claim.hypotheses]


def reference_window(claim, at):
    """Integer bisection of the window [lo, hi] with the same evaluator (assumes one interval)."""
    raw = parse_assignments(at)

    def ok(d):
        with mpmath.workdps(max(40, len(str(d)) + 20)):
            vals = {k: (int(v) if v.isdigit() else mpmath.mpf(v)) for k, v in raw.items()}
            vals["d"] = mpmath.mpf(d)
            return all(relation_holds(h.expr, vals)[0] for h in claim.hypotheses)

    lo_a, lo_b = 2, 10**6  # ok(lo_b) is True for this point
    while lo_b - lo_a > 1:
        mid = (lo_a + lo_b) // 2
        lo_a, lo_b = (lo_a, mid) if ok(mid) else (mid, lo_b)
    hi_a, hi_b = 10**6, 10**60
    while hi_b - hi_a > 1:
        mid = (hi_a + hi_b) // 2
        hi_a, hi_b = (mid, hi_b) if ok(mid) else (hi_a, mid)
    return lo_b, hi_a


def main() -> None:
    claim = get_claim("FVBS23.thm.4_2")
    raw = parse_assignments(POINT)
    point = make_point(claim, raw)
    assert [h.holds for h in evaluate_claim(claim, point)] == reference_eval(claim, raw)
    ours = timeit(lambda: evaluate_claim(claim, point))
    ref = timeit(lambda: reference_eval(claim, raw), repeat=3, number=5)
    print(f"claim eval FVBS23.thm.4_2: ibcheck {ours:.3f} ms, sympy subs+evalf reference {ref:.3f} ms, ratio {ref / ours:.1f}x")

    per_claim = []
    for c in all_claims():
        if any(h.expr is not None for h in c.hypotheses):
            p = make_point(c, default_raw(c))
            per_claim.append(timeit(lambda: evaluate_claim(c, p), repeat=3, number=10))
    print(f"claim eval over {len(per_claim)} claims with numeric hypotheses: median {statistics.median(per_claim):.3f} ms, max {max(per_claim):.3f} ms")

    t = time.perf_counter()
    w = applicability_window(claim, "d", WINDOW_AT)
    cold = (time.perf_counter() - t) * 1000
    warm = timeit(lambda: applicability_window(claim, "d", WINDOW_AT), repeat=5, number=5)
    lo, hi = reference_window(claim, WINDOW_AT)
    assert w.intervals == [(lo, hi)], (w.intervals, lo, hi)
    ref_w = timeit(lambda: reference_window(claim, WINDOW_AT), repeat=3, number=1)
    print(f"window FVBS23.thm.4_2 over d: cold {cold:.1f} ms (symbolic solve, cached after), warm {warm:.2f} ms, "
          f"integer-bisection reference {ref_w:.1f} ms, ratio {ref_w / warm:.1f}x")
    print(f"ms_per_claim_eval: {ours:.3f}")
    print(f"ms_per_window: {warm:.2f}")

    cmd = command_line(__file__)
    record("theory_speed.claim_eval", f"**{ours:.3f} ms** (target 10 ms); the sympy subs+evalf reference {ref:.3f} ms ({ref / ours:.1f}x)", cmd,
           {"ms": ours, "reference_ms": ref},
           what=f"claim evaluation: every hypothesis of FVBS23.thm.4_2 at {POINT}, ibcheck's log-space mpmath path against plain "
                "sympy (subs + evalf of each side); median ms per evaluation")
    record("theory_speed.claim_eval_all", f"median {statistics.median(per_claim):.3f} ms, max {max(per_claim):.3f} ms", cmd,
           {"median_ms": statistics.median(per_claim), "max_ms": max(per_claim), "claims": len(per_claim)},
           what=f"claim evaluation over the {len(per_claim)} claims with numeric hypotheses, each at its default point")
    record("theory_speed.window", f"warm **{warm:.2f} ms** (target 100 ms), cold {cold:.1f} ms (symbolic solve, cached after); the "
           f"integer-bisection reference {ref_w:.1f} ms ({ref_w / warm:.1f}x)", cmd, {"warm_ms": warm, "cold_ms": cold, "reference_ms": ref_w},
           what=f"one applicability window of FVBS23.thm.4_2 over d at {WINDOW_AT}, against integer bisection of each hypothesis "
                "end with the same evaluator")


if __name__ == "__main__":
    main()
