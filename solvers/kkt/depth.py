"""Depth stability: is a search budget deep enough for the extremum a claim about every KKT point bounds?

Per class (the data's kind, k, the d range, the n range, the claim's quantity, the budget), on instances at the cells'
own n, the budget's extremum of the quantity is compared with that of a reference search at least
:data:`DEPTH_FACTOR` times deeper (more starts, every source), each measured on the same fresh points (paired). The
measure's own resolution (the bootstrap spread of one point's value over resampled sets of its fresh points) is stated
beside it; an instance is *within* when the budget's extremum is within ``threshold`` of the reference's, the
threshold the larger of :data:`WITHIN_MIN` (2%) and twice the resolution, on either side (a budget beyond the
reference found a basin the deeper search missed). A class passes when:

* it has at least :data:`INSTANCES_MIN` instances (:data:`INSTANCES_MIN_LARGE` for the full design's classes with
  k >= 12);
* every reference's own running extremum stopped by the record rule (:func:`.records.record_stopped`) and ran at least
  DEPTH_FACTOR times the budget's starts, with GD at :data:`REFERENCE_STEPS_MIN` step counts or more (the budget's own and
  another: GD stopped at 500 and at 2000 steps ends in different basins);
* the budget is within on at least :data:`WITHIN_MIN_SHARE` (90%) of the instances, with a one-sided 95% lower bound of
  at least :data:`WITHIN_LOWER_MIN` (80%): 28 of 30 shows 80.5%, 27 of 30 76%, 15 of 15 82%. An instance whose
  threshold reaches 100% (the measure cannot resolve the comparison) is never within.

``bench/kkt_recall.py`` measures the instances and writes them, with the classes, to :data:`.recall.RECALL_FILE` under the
engine's fingerprint; :func:`depth_record_for` reads a class back for a cell. A stale or missing record reads as
unmeasured.

Pitfall avoided: a recall counted in points stays low by construction where the points multiply with depth as near
copies (k = 8: 153 of 323 known points found, while the largest flip norm was within 2% on 25 of 30 instances); the
claim bounds the extremum, so the extremum is what is judged.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..binomial import lower_confidence
from . import recall
from .recall import engine_fingerprint

DEPTH_FACTOR = 4  # the reference runs at least this many times the budget's starts on each instance
WITHIN_MIN = 0.02  # the threshold is the larger of 2% and twice the measure's resolution
WITHIN_MIN_SHARE = 0.9
WITHIN_LOWER_MIN = 0.8
INSTANCES_MIN = 30
INSTANCES_MIN_LARGE = 15  # the full design's classes with k >= 12
REFERENCE_STEPS_MIN = 2  # the reference's GD runs at this many step counts at least (the budget's own and another)


def _file(path: Path | None) -> Path:
    """``path``, or the recall file (looked up when called, so that a test may point it elsewhere)."""
    return Path(path) if path is not None else recall.RECALL_FILE


def threshold(resolution: float) -> float:
    """The largest shortfall of the budget's extremum, relative to the reference's, that counts as within."""
    return max(WITHIN_MIN, 2.0 * float(resolution)) if resolution == resolution else WITHIN_MIN


def ratio(budget_value: float, reference_value: float) -> float:
    """The budget's extremum over the reference's (1 where both are 0: a test error of 0 found by both)."""
    if reference_value == 0:
        return 1.0 if budget_value == 0 else float("inf")
    return float(budget_value) / float(reference_value)


def bootstrap_resolution(values: np.ndarray, statistic, draws: int = 200, seed: int = 0) -> float:
    """The relative bootstrap spread (standard deviation over mean) of ``statistic`` of one point's per-sample values
    (e.g. its flip radii on the fresh points), over ``draws`` resamples with replacement; 0 for a constant statistic."""
    v = np.asarray(values, float)
    rng = np.random.default_rng(seed)
    stats = np.array([statistic(v[rng.integers(0, len(v), len(v))]) for _ in range(draws)], float)
    stats = stats[np.isfinite(stats)]
    if len(stats) < 2 or stats.mean() == 0:
        return 0.0
    return float(stats.std(ddof=1) / abs(stats.mean()))


@dataclass(frozen=True)
class DepthInstance:
    """One instance: the budget's and the reference's extremum of the quantity on the same fresh points, the measure's
    resolution, both searches' starts, points, families and where their last record came from."""

    kind: str
    d: int
    k: int
    n: int
    seed: int
    quantity: str
    budget_value: float
    reference_value: float
    resolution: float
    budget_starts: int
    reference_starts: int
    reference_stopped: bool
    budget_stopped: bool = True
    budget_points: int = 0
    budget_families: int = 0
    reference_points: int = 0
    reference_families: int = 0
    budget_last_record: int | None = None
    reference_last_record: int | None = None
    reference_record_source: str = ""  # the source kind of the reference's last record
    budget_records: dict | None = None  # per source kind: records made (the budget's)
    reference_records: dict | None = None
    budget_seconds: float = 0.0
    reference_seconds: float = 0.0

    @property
    def ratio(self) -> float:
        return ratio(self.budget_value, self.reference_value)

    @property
    def threshold(self) -> float:
        return threshold(self.resolution)

    @property
    def resolved(self) -> bool:
        """The measure resolves the comparison: its threshold is below 100% (a test error of a few counts in 2000 has a
        bootstrap resolution near 1 / sqrt(count), and a threshold of twice that passes any ratio: never within)."""
        return self.threshold < 1.0

    @property
    def within(self) -> bool:
        """The extremum is stable under depth: the budget's within the threshold of the reference's, on either side (a
        budget beyond the reference shows a basin the deeper search missed: the extremum depends on the search's luck
        there, and the reference cannot vouch for the budget's depth)."""
        return self.resolved and self.ratio == self.ratio and 1 - self.threshold <= self.ratio <= 1 + self.threshold

    @property
    def deep(self) -> bool:
        """The reference ran at least DEPTH_FACTOR times the budget's starts."""
        return self.reference_starts >= DEPTH_FACTOR * self.budget_starts

    def as_json(self) -> dict:
        return {**asdict(self), "ratio": self.ratio, "threshold": self.threshold, "within": self.within, "deep": self.deep,
                "resolved": self.resolved}


@dataclass(frozen=True)
class DepthRecord:
    """One class's depth stability (see the module docstring)."""

    kind: str
    k: int
    d_min: int
    d_max: int
    n_min: int
    n_max: int
    quantity: str
    budget: dict
    reference: dict
    instances: int
    within: int
    ratio_min: float
    resolution: float  # the largest resolution over the instances
    threshold: float  # the largest threshold over the instances
    reference_stopped: int
    deep: int  # instances whose reference ran at least DEPTH_FACTOR times the budget's starts
    depth_min: float  # the smallest reference starts / budget starts
    fingerprint: str
    budget_stopped: int = 0
    above: int = 0  # instances where the budget's extremum exceeds the reference's beyond the threshold (the reference missed it)
    unresolved: int = 0  # instances whose threshold reaches 100%: never within
    lowest: dict | None = None  # the instance with the lowest ratio (d, n, seed, ratio, where its reference's record came from)

    @property
    def needed(self) -> int:
        return INSTANCES_MIN_LARGE if self.k >= 12 else INSTANCES_MIN

    @property
    def lower(self) -> float:
        """The one-sided 95% Clopper-Pearson lower bound of the share within."""
        return lower_confidence(self.within, self.instances) if self.instances else float("nan")

    def failure(self) -> str | None:
        """Why the class does not pass (None: it passes)."""
        if self.instances < self.needed:
            return f"{self.instances} instances measured, {self.needed} needed"
        if self.reference_stopped < self.instances:
            return (f"the reference's running extremum was still rising at {self.instances - self.reference_stopped} of "
                    f"{self.instances} instances")
        if self.deep < self.instances:
            return f"the reference ran fewer than {DEPTH_FACTOR}x the budget's starts at {self.instances - self.deep} instances"
        if not both_step_counts(self.reference):
            return (f"its reference ran GD at one step count ({self.reference.get('gd_steps')}): GD stopped at 500 and "
                    "at 2000 steps ends in different basins, and a search at the other found flip norms up to 22% above such a reference (k = 6)")
        share = self.within / self.instances
        if share < WITHIN_MIN_SHARE or self.lower < WITHIN_LOWER_MIN:
            return (f"within {self.threshold:.1%} on {self.within}/{self.instances} ({share:.0%}; 95% lower bound "
                    f"{self.lower:.0%}; {WITHIN_MIN_SHARE:.0%} and {WITHIN_LOWER_MIN:.0%} needed), lowest ratio {self.ratio_min:.3f}")
        return None

    @property
    def passes(self) -> bool:
        return self.failure() is None

    def text(self) -> str:
        """The class in words: "depth-stable at its class (29/30 within 2%, ...)" or why not."""
        where = (f"{'k = ' + str(self.k) if self.kind == 'clusters' else self.kind + ' data'}, d = {self.d_min}-{self.d_max}, "
                 f"n = {self.n_min}-{self.n_max}")
        what = (f"{self.within}/{self.instances} within {self.threshold:.1%} of a reference at least {self.depth_min:.1f}x "
                f"deeper (lowest ratio {self.ratio_min:.3f}; resolution {self.resolution:.1%}; {where})"
                + (f"; on {self.above} the budget exceeded the reference beyond the threshold (not within: the "
                   "reference missed a point it found, so the extremum is not stable under depth there)" if self.above else "")
                + (f"; {self.unresolved} unresolved (the measure's resolution 50% or more)" if self.unresolved else ""))
        why = self.failure()
        return f"depth-stable at its class ({what})" if why is None else f"not depth-stable at its class: {why} ({what})"

    def as_json(self) -> dict:
        return {**asdict(self), "lower": self.lower, "passes": self.passes, "text": self.text()}


def both_step_counts(reference: dict | None) -> bool:
    """Whether a recorded reference ran GD at :data:`REFERENCE_STEPS_MIN` step counts or more (``gd_steps`` a list)."""
    steps = (reference or {}).get("gd_steps")
    return isinstance(steps, list) and len(set(steps)) >= REFERENCE_STEPS_MIN


def depth_classes(rows: Sequence[dict], budget: dict, reference: dict, fingerprint: str) -> list[DepthRecord]:
    """One record per (kind, k, quantity) over the instance rows (:meth:`DepthInstance.as_json` plus ``set``)."""
    by: dict[tuple, list[dict]] = {}
    for r in rows:
        by.setdefault((r["kind"], int(r["k"]), r["quantity"], json.dumps(r.get("budget", budget), sort_keys=True)), []).append(r)
    out = []
    for (kind, k, quantity, bkey), rs in sorted(by.items()):
        inst = [_instance(r) for r in rs]
        low = min(inst, key=lambda i: i.ratio)
        out.append(DepthRecord(kind, k, min(i.d for i in inst), max(i.d for i in inst), min(i.n for i in inst),
                               max(i.n for i in inst), quantity, json.loads(bkey), dict(rs[0].get("reference", reference)),
                               len(inst), sum(i.within for i in inst), min(i.ratio for i in inst),
                               max(i.resolution for i in inst), max(i.threshold for i in inst),
                               sum(i.reference_stopped for i in inst), sum(i.deep for i in inst),
                               min(i.reference_starts / max(i.budget_starts, 1) for i in inst), fingerprint,
                               sum(i.budget_stopped for i in inst),
                               sum(i.ratio > 1 + i.threshold for i in inst), sum(not i.resolved for i in inst),
                               {"d": low.d, "n": low.n, "seed": low.seed, "ratio": low.ratio,
                                "reference_record_source": low.reference_record_source}))
    return out


_FIELDS = set(DepthInstance.__dataclass_fields__)


def _instance(r: dict) -> DepthInstance:
    return DepthInstance(**{k: v for k, v in r.items() if k in _FIELDS})


def streams_of(data: dict) -> int:
    """The version of the data streams a recall file's instances were drawn with (1 where it names none: the files
    written before the streams were per (cell, seed)). The solvers never draw data: the caller that does (simulate's
    ``seeds.STREAMS_VERSION``) passes its own version, and a file of another version reads as stale."""
    return int(data.get("streams", 1))


def _records(data: dict) -> list[DepthRecord]:
    fields = set(DepthRecord.__dataclass_fields__)
    return [DepthRecord(**{k: v for k, v in r.items() if k in fields}) for r in data.get("depth", [])]


def _read(path: Path | None) -> dict | None:
    path = _file(path)
    return json.loads(path.read_text()) if path.exists() else None


def load_depth(path: Path | None = None, streams: int | None = None) -> list[DepthRecord]:
    """Every depth record in ``path`` (default :data:`.recall.RECALL_FILE`; none when the file is missing or holds none,
    or, given ``streams``, when its instances were drawn with other data streams)."""
    data = _read(path)
    if data is None or (streams is not None and streams_of(data) != int(streams)):
        return []
    return _records(data)


def reference_values(kind: str, d: int, k: int, n: int | None, seeds, quantity: str, path: Path | None = None,
                     streams: int | None = None) -> tuple[float | None, ...]:
    """Per seed: the reference search's extremum of ``quantity`` on the instance (kind, d, k, n, seed) measured by the
    current engine (None where none is on record, or where the file's data streams are not ``streams``): what the
    report draws beside a sample's running extremum."""
    data = _read(path)
    if data is None:
        return tuple(None for _ in seeds)
    if data.get("fingerprint") != engine_fingerprint() or (streams is not None and streams_of(data) != int(streams)):
        return tuple(None for _ in seeds)
    at = {int(r["seed"]): float(r["reference_value"]) for r in data.get("depth_instances", [])
          if r.get("kind") == kind and int(r["d"]) == int(d) and int(r["k"]) == int(k) and (n is None or int(r["n"]) == int(n))
          and r.get("quantity") == quantity}
    return tuple(at.get(int(s)) for s in seeds)


def depth_record_for(d: int, k: int, n: int | None, quantity: str, budget: dict, kind: str = "clusters",
                     path: Path | None = None, streams: int | None = None) -> tuple[DepthRecord | None, str]:
    """(the depth record, how it was read) for a cell at (d, k, n) whose samples were searched under ``budget``, for a
    claim bounding ``quantity``; None with the reason where no record of the current engine (and, given ``streams``,
    of those data streams) covers it."""
    data = _read(path)  # read once: the streams' check and the records
    recs = _records(data) if data is not None else []
    what = f"k = {k}" if kind == "clusters" else f"{kind} data"
    if recs and streams is not None and streams_of(data or {}) != int(streams):
        return None, ("the depth stability on record was measured on data drawn with other random streams (stale; run "
                      "bench/kkt_recall.py --depth)")
    if not recs:
        return None, "no depth stability measured (run bench/kkt_recall.py)"
    same = [r for r in recs if r.kind == kind and (kind != "clusters" or r.k == int(k)) and r.quantity == quantity]
    if not same:
        return None, f"no depth stability measured for {quantity} at {what}"
    same = [r for r in same if r.budget == dict(budget)]
    if not same:
        return None, f"no depth stability measured for {quantity} at {what} under this budget"
    fp = engine_fingerprint()
    fresh = [r for r in same if r.fingerprint == fp]
    if not fresh:
        return None, "the depth stability on record was measured with an older engine (stale)"
    inside = [r for r in fresh if r.d_min <= int(d) <= r.d_max and (n is None or r.n_min <= int(n) <= r.n_max)]
    if not inside:
        r = fresh[0]
        return None, (f"depth stability measured at d = {r.d_min}-{r.d_max}, n = {r.n_min}-{r.n_max} only ({what}), not at "
                      f"d = {d}, n = {n}")
    return inside[0], inside[0].text()


__all__ = ["DEPTH_FACTOR", "WITHIN_MIN", "DepthInstance", "DepthRecord", "threshold", "ratio", "bootstrap_resolution",
           "both_step_counts", "depth_classes", "load_depth", "depth_record_for", "reference_values", "streams_of"]
