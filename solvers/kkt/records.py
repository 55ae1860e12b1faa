"""The record rule: when has a search for the KKT points of (P) found the extremum of the quantity a claim bounds?

A claim about *every* KKT point bounds a quantity over them (FVBS23.thm.4_2: the largest flip norm; FVBS23.thm.3_1: the
largest test error; VYS22.thm.main: the largest flip norm of its reading). Per sample, the statistic is that quantity's
extremum over the distinct certified points the search found. The search does not count its points (they multiply with
depth as near copies: 7, 17, 34 and 38 points at 36, 108, 360 and 680 starts on one k = 8 sample, outputs 0.2-1% apart);
it watches the running extremum.

* :func:`running_extremum`: per start, in search order (every source: given networks, cones, cover starts, GD starts,
  SLSQP, moves), the largest value over the points reached so far;
* :func:`record_stopped`: the running extremum has stopped: at least :data:`RECORD_MIN_STARTS` starts, and no new
  record beyond :data:`RECORD_RTOL` (0.5%) in the last half of the starts;
* :func:`last_record`: the start that made the last record beyond that tolerance, and its source (where records come
  from: the engine spends its continuation there);
* :func:`families`: points whose outputs on the sample lie within :data:`FAMILY_RTOL` (2%) of one another, grouped
  into near-copy families (reported, never counted).

Pitfalls avoided: the Good-Turing unseen estimate said "saturated" where deeper searches kept finding points (it only
sees basins hit more than once); a running maximum drawn over the random GD starts alone (after the cones and the cover
starts) was flat by construction and could not show that a search stopped too early.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .policy import distinct_groups

RECORD_RTOL = 0.005  # a record is a rise of the running extremum beyond 0.5% of its value
RECORD_MIN_STARTS = 20  # the record rule reads at least this many starts
FAMILY_RTOL = 0.02  # points whose outputs on the sample lie within 2% are one near-copy family


def running_extremum(order: Sequence[int | None], values: Sequence[float]) -> tuple[float, ...]:
    """Per start (``order``: the point each start reached, None for none), the largest of ``values`` (per point) over
    the points reached so far; nan until a start reaches a point (and where a point's value is not finite)."""
    out: list[float] = []
    best = -math.inf
    for p in order:
        if p is not None and 0 <= p < len(values) and math.isfinite(float(values[p])):
            best = max(best, float(values[p]))
        out.append(best if best > -math.inf else float("nan"))
    return tuple(out)


def _rose(before: float, after: float, rtol: float) -> bool:
    """Whether ``after`` is a record over ``before`` beyond ``rtol`` of its size (nan: nothing yet; an infinite value is
    never a record: it is not a measurement)."""
    if not math.isfinite(after):
        return False
    if not math.isfinite(before):
        return True
    return after - before > rtol * abs(before)


def record_stopped(running: Sequence[float], rtol: float = RECORD_RTOL, min_starts: int = RECORD_MIN_STARTS) -> bool:
    """The record rule: at least ``min_starts`` starts, and the last record (:func:`last_record`: a rise beyond ``rtol``
    over the previous record, the first point included) came before the last half of the starts (starts
    ``n - n // 2 + 1`` to ``n``, 1-based, form the last half). Rises below ``rtol`` that add up beyond it make a record
    (they are measured from the last record, not from the previous start)."""
    n = len(running)
    if n < min_starts:
        return False
    last = last_record(running, rtol)
    return last is not None and last < n - n // 2


def last_record(running: Sequence[float], rtol: float = RECORD_RTOL) -> int | None:
    """The index of the start that made the last record beyond ``rtol`` (the first point counts as a record); None
    where no start reached a point."""
    last, ref = None, float("nan")
    for i, v in enumerate(running):
        if _rose(ref, float(v), rtol):
            last, ref = i, float(v)
    return last


def records_by_source(running: Sequence[float], sources: Sequence[str], rtol: float = RECORD_RTOL) -> dict[str, int]:
    """Per source kind: how many records beyond ``rtol`` its starts made (the first point included)."""
    out: dict[str, int] = {}
    ref = float("nan")
    for v, s in zip(running, sources):
        if _rose(ref, float(v), rtol):
            out[s] = out.get(s, 0) + 1
            ref = float(v)
    return out


def families(nets: Sequence, X: np.ndarray, rtol: float = FAMILY_RTOL) -> list[int]:
    """Each point's near-copy family (an index, in the order families are first met): points whose outputs on the
    sample ``X`` lie within ``rtol`` of one another (the engine's relative output distance) share one."""
    out = [0] * len(nets)
    for f, group in enumerate(distinct_groups(list(nets), np.asarray(X, float), rtol)):
        for i in group:
            out[i] = f
    return out


def running_count(order: Sequence[int | None], label: Sequence[int] | None = None) -> tuple[int, ...]:
    """Per start, how many distinct points (or, given each point's ``label``, distinct families) were reached so far."""
    seen: set[int] = set()
    out = []
    for p in order:
        if p is not None:
            seen.add(p if label is None else int(label[p]))
        out.append(len(seen))
    return tuple(out)


__all__ = ["RECORD_RTOL", "RECORD_MIN_STARTS", "FAMILY_RTOL", "running_extremum", "record_stopped", "last_record",
           "records_by_source", "families", "running_count"]
