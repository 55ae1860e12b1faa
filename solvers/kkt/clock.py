"""A search's time cap (``Budget.seconds``): when the cap has passed, when the next start would pass it, and whether a
cone program can begin (and end its iterations) before it.

Kept out of :data:`.recall.ENGINE_SOURCES` (the fingerprint of the code that decides which points a search finds): a
search without a cap never stops on the clock (:meth:`Clock.passed` is False whatever the time), so how a capped search
reads its clock cannot change the recall and depth records, which are measured uncapped. The cone programs' caps
(:func:`program_fits`, :func:`capped_solve`) are read only where a search has a deadline.
"""
from __future__ import annotations

import time

import cvxpy as cp

COMPILE_SECONDS_PER_NONZERO = 1.5e-6
# cvxpy's compile of a block cone program (polish._block_program), measured 2026-12-07 on 2 cores beside no other work:
# 0.36 us a nonzero at 0.2M, 0.79 at 6M, 1.16-1.19 at 18M (n = r = 1000, 12 neurons: 21 s); 0.98 in a kkt run at 8.9M.
# Clarabel's setup (its factorization's analysis, also before the iterations and outside their limit) costs about as
# much again (4.5 s against 7 s at 64M nonzeros).


class Clock:
    """The cap of one search, counted from its construction. :meth:`passed` is asked once before each start: it is
    True once the time spent plus the longest interval between two of its readings so far (about one start: a GD run,
    its polish and certificate) exceeds the cap, so a search does not begin a start it would not finish in time.
    Measured (issue 58, item 4): at n = d = 1000 on a contended machine a start's programs ran 2.3 s past a 20 s cap."""

    def __init__(self, seconds: float | None):
        self.seconds = None if seconds is None else float(seconds)
        self.t0 = self.last = time.perf_counter()
        self.longest = 0.0

    @property
    def deadline(self) -> float | None:
        """The cap as a ``time.perf_counter()`` value (None without one): what a GD run checks inside itself."""
        return None if self.seconds is None else self.t0 + self.seconds

    def passed(self) -> bool:
        """Whether the search should stop: the cap has passed, or would pass within the longest start seen so far."""
        if self.seconds is None:
            return False
        now = time.perf_counter()
        self.longest = max(self.longest, now - self.last)
        self.last = now
        return now - self.t0 + self.longest > self.seconds


def program_fits(deadline: float, nonzeros: int) -> bool:
    """Whether a cone program with at most ``nonzeros`` constraint nonzeros can be compiled and set up before
    ``deadline`` (a ``time.perf_counter()`` value): both are estimated at :data:`COMPILE_SECONDS_PER_NONZERO` a nonzero
    each, since neither can be interrupted once begun.

    Pitfall avoided (issue 58, item 4): the compile was timed only after it had run, so a program of 8.9M nonzeros begun
    with 4.9 s of the cap left compiled for 8.8 s and ended 10 s past it (``kkt --time 20``: 28.5 s against 27 s)."""
    return deadline - time.perf_counter() > 2 * COMPILE_SECONDS_PER_NONZERO * nonzeros


def capped_solve(prob: cp.Problem, opts: dict, deadline: float) -> bool:
    """Solve ``prob`` with Clarabel's iterations ending at ``deadline``; False where no time is left to start them.

    The program is compiled first (cvxpy), and its compile time, measured, stands in for Clarabel's setup (its
    factorization's analysis, which comes before the iterations and outside their limit, and costs about as much:
    4.5 s against 7 s at 64M nonzeros), so a program that would end past the cap is not started."""
    t0 = time.perf_counter()
    data, chain, inverse = prob.get_problem_data(cp.CLARABEL, solver_opts=opts)  # as Problem.solve does it
    now = time.perf_counter()
    left = deadline - now - (now - t0)
    if left <= 0:
        return False
    prob.unpack_results(chain.solve_via_data(prob, data, False, False, {**opts, "time_limit": left}), chain, inverse)
    return True
