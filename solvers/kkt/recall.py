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

import functools
import hashlib
import io
import json
import tokenize
from dataclasses import dataclass
from pathlib import Path

from ..binomial import lower_confidence

RECALL_FILE = Path(__file__).with_name("recall.json")
ENGINE_SOURCES = ("engine.py", "polish.py", "gram.py", "gd.py", "cones.py", "certificate.py", "multipliers.py", "factor.py", "policy.py",
                  "jacobian.py", "records.py", "moves.py")
RECALL_MIN = 0.9  # a claim about every KKT point counts only where the engine's recall on its class is at least this
RECALL_LOWER_MIN = 0.8  # ... and the recall's one-sided 95% lower bound (Recall.lower) at least this
SATURATION_MAX = 0.05  # ... and every sample's search saturated: a Good-Turing unseen estimate of at most this


@functools.lru_cache(maxsize=1)
def engine_fingerprint() -> str:
    """A hash of the engine's code (what decides which points it finds): its source files without comments,
    docstrings, blank lines or trailing spaces (:func:`code_of`), so that a corrected comment keeps the recall measured.

    Pitfall avoided: a hash of the bytes stales 48 minutes of recall benches for a word changed in a comment, and a
    comment that misstates the code stays."""
    h = hashlib.sha256()
    here = Path(__file__).parent
    for name in ENGINE_SOURCES:
        h.update(name.encode())
        h.update(code_of((here / name).read_text()).encode())
    return h.hexdigest()[:16]


_OPENERS = (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING)


def code_of(source: str) -> str:
    """``source`` with its comments and docstrings (a string that is a statement by itself) cut out, each line's
    trailing spaces and every blank line dropped. The text kept is the source's own: tokens are only used to find the
    cuts, so a Python that tokenizes f-strings otherwise (3.12) finds the same cuts."""
    toks = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type != tokenize.NL]
    cuts = []
    for i, t in enumerate(toks):
        if t.type == tokenize.COMMENT:
            cuts.append((t.start, t.end))
        elif t.type == tokenize.STRING and (i == 0 or toks[i - 1].type in _OPENERS):
            after = next((u for u in toks[i + 1:] if u.type != tokenize.COMMENT), None)
            if after is None or after.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                cuts.append((t.start, t.end))
    lines = source.splitlines()
    for (r0, c0), (r1, c1) in reversed(cuts):  # rows are 1-based; a docstring may span rows
        head, tail = lines[r0 - 1][:c0], lines[r1 - 1][c1:]
        lines[r0 - 1:r1] = [head + tail]
    return "\n".join(line.rstrip() for line in lines if line.strip())


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
    reference: dict | None = None  # the reference search's budget (None: not recorded)
    reference_saturated: int = -1  # instances whose reference search saturated (-1: not recorded)
    several: int = 0  # instances with two or more known points
    kind: str = "clusters"  # the instances' data: "clusters" (k clusters) or "sphere" (VYS22's points on a sphere; k = 0)
    several_known: int = -1  # known points on the instances with several (-1: not recorded)
    several_found: int = -1  # ... and how many of them the budget found
    flip_instances: int = 0  # cluster instances where the claim's flip norm was compared (0: not recorded)
    flip_within: int = 0  # ... where the budget's largest flip norm is within 2% of the largest known
    flip_min: float | None = None  # ... and the lowest ratio of the two

    @property
    def recall(self) -> float:
        return self.found / self.known if self.known else float("nan")

    @property
    def lower(self) -> float:
        """The one-sided 95% Clopper-Pearson lower bound of the recall: what ``found / known`` shows at most (6/6 shows
        61%, 15/15 82%; 29/29 is the fewest that shows RECALL_MIN)."""
        return lower_confidence(self.found, self.known) if self.known else float("nan")

    def as_json(self) -> dict:
        return {"k": self.k, "d_min": self.d_min, "d_max": self.d_max, "budget": self.budget, "instances": self.instances,
                "known": self.known, "found": self.found, "recall": self.recall, "fingerprint": self.fingerprint,
                "n_min": self.n_min, "n_max": self.n_max, "reference": self.reference,
                "reference_saturated": self.reference_saturated, "several": self.several, "kind": self.kind,
                "several_known": self.several_known, "several_found": self.several_found,
                "flip_instances": self.flip_instances, "flip_within": self.flip_within, "flip_min": self.flip_min}

    def depth(self) -> str:
        """How deep and how saturated the reference was, in words."""
        if not self.reference:
            return "reference depth not recorded"
        r = self.reference
        sat = f"; saturated on {self.reference_saturated} of {self.instances}" if self.reference_saturated >= 0 else ""
        cones = "every partition cone" if int(r.get("enumerate") or 0) >= 10**6 else f"partition cones up to {r.get('enumerate')}"
        several = (f" (found there: {self.several_found}/{self.several_known})"
                   if self.several and self.several_known > 0 else "")
        covers = f", cover starts at {len(r['covers'])} scales" if r.get("covers") else ""
        flips = (f"; largest flip norm within 2% of the largest known on {self.flip_within} of {self.flip_instances} "
                 f"(lowest ratio {self.flip_min:.3f})" if self.flip_instances and self.flip_min is not None else "")
        return (f"reference: {r.get('gd')}-{r.get('gd_max') or r.get('gd')} GD starts to unseen <= {r.get('saturation')}{covers}, "
                f"{cones}{sat}; {self.several} instance(s) with several points{several}{flips}")


def load(path: Path = RECALL_FILE) -> list[Recall]:
    """Every recall record in ``path`` (none when the file is missing)."""
    if not path.exists():
        return []
    data = json.loads(path.read_text())
    return [Recall(int(r["k"]), int(r["d_min"]), int(r["d_max"]), dict(r["budget"]), int(r["instances"]), int(r["known"]),
                   int(r["found"]), str(r["fingerprint"]), int(r.get("n_min", 0)), int(r.get("n_max", 0)), r.get("reference"),
                   int(r.get("reference_saturated", -1)), int(r.get("several", 0)), str(r.get("kind", "clusters")),
                   int(r.get("several_known", -1)), int(r.get("several_found", -1)), int(r.get("flip_instances", 0)),
                   int(r.get("flip_within", 0)), r.get("flip_min"))
            for r in data.get("classes", [])]


def recall_for(d: int, k: int, budget: dict, path: Path = RECALL_FILE, n: int | None = None, kind: str = "clusters"
               ) -> tuple[float | None, str]:
    """(recall, how it was read) for a cell at (d, k) searched under ``budget`` on samples of ``n`` points; None with
    the reason where no record of the current engine covers that class, budget and n (:func:`recall_record_for`)."""
    rec, note = recall_record_for(d, k, budget, path, n, kind)
    return (None if rec is None else rec.recall), note


def recall_record_for(d: int, k: int, budget: dict, path: Path = RECALL_FILE, n: int | None = None, kind: str = "clusters"
                      ) -> tuple[Recall | None, str]:
    """(the recall record, how it was read) for a cell at (d, k) searched under ``budget`` on samples of ``n`` points of
    ``kind`` data (``sphere``: k = 0); None with the reason where no record of the current engine covers that class,
    budget and n.

    Pitfall avoided: a recall measured at n <= 64 read for a cell at n = 246. There the same search is another search:
    at d = 256, k = 8, n = 246 the 130 partition cones tried certified no point in 8 programs each, while at n <= 64
    they find 95% of the known points. A cell whose n lies above the measured range has no measured recall."""
    recs = load(path)
    if not recs:
        return None, "no recall measured (run bench/kkt_recall.py)"
    fp = engine_fingerprint()
    what = f"k = {k}" if kind == "clusters" else f"{kind} data"
    same = [r for r in recs if r.kind == kind and r.k == int(k) and r.budget == dict(budget)]
    if not same:
        return None, f"no recall measured at {what} under this budget"
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
        return None, (f"recall measured at n = {r.n_min}-{r.n_max} only ({what}, d = {r.d_min}-{r.d_max}), not at this "
                      f"cell's n = {n}")
    return r, (f"{r.found}/{r.known} known points on {r.instances} instances at {what}, d = {r.d_min}-{r.d_max}"
               + (f", n = {r.n_min}-{r.n_max}" if r.n_max else "") + f"; 95% lower bound {r.lower:.0%}"
               + (f"; {r.depth()}" if r.reference else ""))
