"""A search's time cap (``Budget.seconds``): when the cap has passed, and when the next start would pass it.

Kept out of :data:`.recall.ENGINE_SOURCES` (the fingerprint of the code that decides which points a search finds): a
search without a cap never stops on the clock (:meth:`Clock.passed` is False whatever the time), so how a capped search
reads its clock cannot change the recall and depth records, which are measured uncapped.
"""
from __future__ import annotations

import time


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
