"""The KKT engine's measured recall: known points found / known points, on planted instances whose points are known.

``bench/kkt_recall.py`` measures it (each planted instance's known points come from a reference search many times the
engine's budget, cross-checked by SLSQP multi-starts certified under the same policy) and writes
:data:`RECALL_FILE`, stamped with :func:`engine_fingerprint` (a hash of the engine's sources). :func:`recall_for` reads
it back for a (d, k) class and a budget; a record whose fingerprint differs from the engine's is stale and read as
unmeasured (an engine changed since its recall was measured has no measured recall).

Pitfall avoided: a search is only as good as its recall on instances whose points are known; a recall read off a file
that an older engine wrote would claim what the current engine never showed.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

RECALL_FILE = Path(__file__).with_name("recall.json")
ENGINE_SOURCES = ("engine.py", "polish.py", "gram.py", "gd.py", "cones.py", "certificate.py", "policy.py", "jacobian.py")
RECALL_MIN = 0.9  # a claim about every KKT point counts only where the engine's recall on its class is at least this


def engine_fingerprint() -> str:
    """A hash of the engine's source files (what decides which points it finds)."""
    h = hashlib.sha256()
    here = Path(__file__).parent
    for name in ENGINE_SOURCES:
        h.update(name.encode())
        h.update((here / name).read_bytes())
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class Recall:
    """The engine's recall on one class of planted instances: ``k`` clusters, ``d`` in [d_min, d_max], under ``budget``
    (the engine's :meth:`~.engine.Budget.to_json`)."""

    k: int
    d_min: int
    d_max: int
    budget: dict
    instances: int
    known: int
    found: int
    fingerprint: str
    n_min: int = 0  # the planted instances' sample sizes (0: not recorded)
    n_max: int = 0

    @property
    def recall(self) -> float:
        return self.found / self.known if self.known else float("nan")

    def as_json(self) -> dict:
        return {"k": self.k, "d_min": self.d_min, "d_max": self.d_max, "budget": self.budget, "instances": self.instances,
                "known": self.known, "found": self.found, "recall": self.recall, "fingerprint": self.fingerprint,
                "n_min": self.n_min, "n_max": self.n_max}


def load(path: Path = RECALL_FILE) -> list[Recall]:
    """Every recall record in ``path`` (none when the file is missing)."""
    if not path.exists():
        return []
    data = json.loads(path.read_text())
    return [Recall(int(r["k"]), int(r["d_min"]), int(r["d_max"]), dict(r["budget"]), int(r["instances"]), int(r["known"]),
                   int(r["found"]), str(r["fingerprint"]), int(r.get("n_min", 0)), int(r.get("n_max", 0)))
            for r in data.get("classes", [])]


def recall_for(d: int, k: int, budget: dict, path: Path = RECALL_FILE, n: int | None = None) -> tuple[float | None, str]:
    """(recall, how it was read) for a cell at (d, k) searched under ``budget`` on samples of ``n`` points; None with
    the reason where no record of the current engine covers that class, budget and n.

    Pitfall avoided: a recall measured at n <= 64 read for a cell at n = 246. There the same search is another search:
    at d = 256, k = 8, n = 246 the 130 partition cones tried certified no point in 8 programs each, while at n <= 64
    they find 95% of the known points. A cell whose n lies above the measured range has no measured recall."""
    recs = load(path)
    if not recs:
        return None, "no recall measured (run bench/kkt_recall.py)"
    fp = engine_fingerprint()
    same = [r for r in recs if r.k == int(k) and r.budget == dict(budget)]
    if not same:
        return None, f"no recall measured at k = {k} under this budget"
    fresh = [r for r in same if r.fingerprint == fp]
    if not fresh:
        return None, "the recall on record was measured with an older engine (stale)"
    inside = [r for r in fresh if r.d_min <= int(d) <= r.d_max]
    if not inside:
        lo, hi = min(r.d_min for r in fresh), max(r.d_max for r in fresh)
        return None, f"recall measured at d = {lo}-{hi} only, not at d = {d}"
    covering = [r for r in inside if n is None or not r.n_max or r.n_min <= int(n) <= r.n_max]
    r = covering[0] if covering else inside[0]  # the record measured at this cell's n, where there is one
    if n is not None and r.n_max and not r.n_min <= int(n) <= r.n_max:
        return None, (f"recall measured at n = {r.n_min}-{r.n_max} only (k = {k}, d = {r.d_min}-{r.d_max}), not at this "
                      f"cell's n = {n}")
    return r.recall, (f"{r.found}/{r.known} known points on {r.instances} planted instances at k = {k}, d = {r.d_min}-{r.d_max}"
                      + (f", n = {r.n_min}-{r.n_max}" if r.n_max else ""))
