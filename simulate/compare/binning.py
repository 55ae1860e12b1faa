"""Log-time binning of a long trajectory CSV (``ibcheck verdict --data F --trajectory``).

Takes a validated :class:`~ibcheck.simulate.compare.from_csv.Table` and its time column; returns the table with each
run's points averaged within bins of equal width in log-time, and a :class:`Binning` that says what was done.

A trajectory of more than :data:`MAX_POINTS` points is binned; a shorter one is fitted point by point, as before. The
bins are [2^(i/b), 2^((i+1)/b)) on the time axis, the same edges for every run, with b bins per octave: the largest b
in :data:`PER_OCTAVE` that leaves at most :data:`MAX_POINTS` points. A bin's point is the geometric mean of its times
and of its values (the fit is in log space; a bin of one point keeps it exactly), in its own run: runs are never pooled, so one run stays one observation
and the trajectory fit's interval (from the spread between runs) keeps its meaning. What changes is the weight within a
run: each bin counts once, so a run sampled densely at late times no longer fits its late times alone.

Pitfall: the hypotheses are judged at a bin's mean time. A bin that straddles a hypothesis's start (t >= n) holds
points up to one bin width (2^(1/b), 4.4% at b = 16) outside it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ibcheck.theory.argtypes import refused

MAX_POINTS = 20_000  # a trajectory CSV fitted point by point up to this many rows (about 40 s here); longer ones are binned
PER_OCTAVE = (16, 8, 4, 2, 1)  # bins per factor 2 in time, the finest that fits MAX_POINTS is used


@dataclass(frozen=True)
class Binning:
    """What binning did: ``rows`` read, ``points`` left, ``per_octave`` bins per factor 2 of ``time``."""

    time: str
    rows: int
    points: int
    per_octave: int

    def text(self) -> str:
        width = 2 ** (1 / self.per_octave) - 1
        return (f"binned in log-time: {self.rows} rows -> {self.points} points, {self.per_octave} bin(s) per octave of {self.time} "
                f"(width {width:.1%}), each the geometric mean of its times and values within one run (more than "
                f"{MAX_POINTS} points are not fitted one by one)")


def _bin_key(row: dict, time: str, cell_vars: list[str], b: int) -> tuple:
    return (row["seed"], *(row[v] for v in cell_vars), math.floor(math.log2(row[time]) * b))


def log_time_bins(table, time: str):
    """The table binned in log-time along ``time`` where it has more than MAX_POINTS rows (see the module docstring),
    with its :class:`Binning`; the table unchanged and None otherwise. Censored values along a trajectory are refused
    here, as the trajectory fit refuses them."""
    if len(table.rows) <= MAX_POINTS:
        return table, None
    if any(r.get("censor") for r in table.rows):
        raise refused("data", table.path, "has censored values (>=x, <=x) along a trajectory; a trajectory fit needs exact "
                      "values per point")
    cell_vars = [v for v in table.variables if v != time]
    for b in PER_OCTAVE:
        groups: dict[tuple, list[dict]] = {}
        for r in table.rows:
            groups.setdefault(_bin_key(r, time, cell_vars, b), []).append(r)
        if len(groups) <= MAX_POINTS:
            break
    else:
        raise refused("data", table.path, f"has {len(table.rows)} rows along {time}; at one bin per octave they are still "
                      f"{len(groups)} points, over the {MAX_POINTS} a trajectory fit takes (about linear time: 2 x 10^4 points "
                      "take about 40 s); give fewer runs or fewer cells")
    rows = []
    for members in groups.values():
        first = members[0]
        mean = {c: math.exp(math.fsum(math.log(r[c]) for r in members) / len(members)) for c in (time, "value")} if members[1:] else {}
        rows.append({**first, **mean, "binned": len(members)})  # "row": the bin's first line
    rows.sort(key=lambda r: r["row"])
    return replace(table, rows=rows), Binning(time, len(table.rows), len(rows), b)
