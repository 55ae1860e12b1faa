"""The KKT engine: one search for the KKT points of (P) on a sample, used by ``ibcheck kkt``, ``ibcheck.kkt_points``,
the comparisons and the reproductions alike.

Takes the data (X, y, optionally each point's cluster), networks to start from (e.g. the trained networks a claim
speaks of) and a :class:`Budget`; returns a :class:`KKTSearch`: every candidate with its origin, programs, certificate
residuals and the distinct point it is, and the distinct KKT points (at unit margin).

The search (every candidate goes through the same tie-aware polish and the same policy, :mod:`.policy`):

1. pattern sources: the given networks' activation patterns; cluster-level cones (every partition of each class's
   clusters among that class's neurons where their count is at most ``Budget.enumerate``: 225 at k = 8; the named
   families and leave-one-out cones beyond); GD in the data's span from the cover starts (every combination of each
   class's overlapping covers of its clusters, at ``Budget.covers`` scales: where the points at FVBS23's n are), then
   from per-cluster initializations with biases, at scales 1-3 and widths k and 2k (:mod:`.gd`), or random ones
   without clusters (the Good-Turing estimate counts these random starts alone); SLSQP on (P) from random starts
   (small instances: at most SLSQP_MAX parameters);
2. from each pattern the tie-aware polish (:func:`.polish.cone_optimum`): the cone's optimum, certified
   (:func:`.certificate.kkt_certificate`, the Clarke rule at ties); where it does not certify, only the walls (P) does
   not admit are flipped, and the next cone is solved and certified, for at most ``Budget.programs`` programs. It stops
   at a certified point, when no wall (P) does not admit binds, or when its function reaches a point already found;
3. the certified candidates grouped into distinct points (:func:`.policy.distinct_groups`), and the points into
   near-copy families (outputs on the sample within 2%);
4. given an objective (the quantity a claim bounds), a hill-climb over activation patterns from the point where it is
   largest (:meth:`_Run.climb`, :mod:`.moves`), then the continuation by the record rule (:mod:`.records`): more
   starts from GD, cover starts at random scales and moves over activation patterns (:mod:`.moves`), each source in
   proportion to the records it made, until the running extremum of the objective over the starts in search order
   has stopped (no record beyond 0.5% in the last half of at least 20 starts) or the cap.

Pitfalls avoided: the polish before issue 35 flipped legitimate ties and left the cone of a real KKT point; a search
that stops at the first point it finds reports one point where (P) has several (3-10 per sample at k = 8, d = 64-256);
a near-KKT network (residual 1e-5 to 1e-3) is a candidate, never a point.
"""
from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import numpy as np

from ..networks import TwoLayerReLU
from .certificate import kkt_certificate
from .clock import Clock
from .cones import cluster_labels, partition_cones, partition_count, sub_averaging_cones
from .gd import cover_inits, gd_pattern, inits, random_covers
from .moves import pattern_moves
from .policy import POINT_TOL, SAME_POINT_RTOL, distinct_groups, function_distance, function_probes
from .records import FAMILY_RTOL, last_record, record_stopped, records_by_source


@dataclass(frozen=True)
class Budget:
    """What the engine runs: ``gd`` GD starts (numpy, in the data's span), ``gd_steps`` steps each, ``programs`` cone
    programs per pattern, every partition cone where there are at most ``enumerate`` of them (else the named families
    and leave-one-out cones), ``per_program`` walls flipped per program (None: every wall (P) does not admit)."""

    gd: int = 12
    gd_steps: int = 2000
    programs: int = 8
    enumerate: int = 25
    per_program: int | None = None
    cones: bool = True
    width: int | None = None  # random GD inits' width (data without clusters; None: 2 sqrt(n))
    ascent: int = 2  # with an objective: moves tried from each best point in the hill-climb, and per record in the continuation (:mod:`.moves`); 0: none
    slsqp: int = 4  # SLSQP on (P) itself from random starts (width 2 x the GD width), where the parameters are at most SLSQP_MAX
    gd_max: int | None = None  # more GD starts, up to this many (the cap), while the unseen mass is above ``saturation`` (None: gd)
    saturation: float = 0.02  # Good-Turing estimate of the chance that one more GD start finds a new point
    seconds: float | None = None  # a time cap: no pattern starts past it (the search is then not complete)
    probe: int = 4  # cones of one kind (leave-one-out, partition) tried before the rest run only where one certified
    covers: tuple[float, ...] = (1.0, 2.0, 3.0)  # the cover starts' scales (clusters only; every combination at each, :func:`.gd.cover_inits`)
    starts_max: int | None = None  # with an objective: starts of every source, at most, while the record rule has not stopped (None: 4 x the planned)
    starts_min: int = 0  # with an objective: starts of every source, at least, before the record rule may stop (a reference's depth)

    def as_json(self) -> dict:
        return {"gd": self.gd, "gd_steps": self.gd_steps, "programs": self.programs, "enumerate": self.enumerate,
                "per_program": self.per_program, "cones": self.cones, "width": self.width, "ascent": self.ascent,
                "slsqp": self.slsqp, **({"covers": list(self.covers)} if self.covers else {}), **({"gd_max": self.gd_max, "saturation": self.saturation} if self.gd_max else {}),  # noqa: E501
                **({"seconds": self.seconds} if self.seconds is not None else {}),
                **({"starts_max": self.starts_max} if self.starts_max is not None else {}),
                **({"starts_min": self.starts_min} if self.starts_min else {})}


@dataclass(frozen=True)
class Candidate:
    """One pattern's end point: its origin, the programs run, its certificate at unit margin, and the distinct point it
    is (``point``: an index into :attr:`KKTSearch.points`; None when it is not a KKT point under the policy)."""

    origin: str
    net: TwoLayerReLU
    residual: float  # relative stationarity residual (nan: no certificate)
    slackness: float  # relative complementary slackness
    solver_status: str
    programs: int
    trace: str
    value: float = float("nan")  # 1/2 ||theta||^2 at unit margin
    ties: int = 0
    point: int | None = None
    known_distance: float = float("nan")  # relative output distance to the nearest point found before it

    @property
    def certified(self) -> bool:
        """A KKT point of (P) under the engine's policy (:data:`.policy.POINT_TOL`)."""
        return self.solver_status == "optimal" and self.residual <= POINT_TOL and self.slackness <= POINT_TOL

    def as_json(self) -> dict:
        return {"origin": self.origin, "programs": self.programs, "trace": self.trace, "residual": self.residual,
                "slackness": self.slackness, "solver_status": self.solver_status, "value": self.value, "ties": self.ties,
                "point": self.point, "certified": self.certified, "known_distance": self.known_distance}


@dataclass(frozen=True)
class KKTSearch:
    """The engine's result on one sample: every candidate, the distinct KKT points (unit margin, in the order found),
    their values, whether the search ran in full (every planned pattern solved), the budget and the seconds spent."""

    candidates: tuple[Candidate, ...]
    points: tuple[TwoLayerReLU, ...]
    values: tuple[float, ...]
    complete: bool
    budget: Budget
    seconds: float
    planned: int
    notes: tuple[str, ...] = field(default=())
    unseen: float = float("nan")  # Good-Turing: points reached once by GD starts / GD starts (nan: no GD start)
    stop: str = ""  # why the starts stopped: "stopped" (the record rule, given an objective), "unseen" (the Good-Turing
    # estimate reached the budget's level, without an objective: points may still grow with depth), "cap", "time",
    # "exhausted" (every source of the continuation spent before the cap, the extremum still rising)
    gd_starts: int = 0
    running_max: tuple[float, ...] = ()  # per start, every source, in search order: the largest objective so far (given one)
    skipped: int = 0  # cones left out because their kind certified nothing in its first Budget.probe
    widths: tuple[int, ...] = ()  # per GD start: its width (neurons)
    order: tuple[int | None, ...] = ()  # per start, every source, in search order: the point it reached (None: none)
    sources: tuple[str, ...] = ()  # ... and its source kind (the origin up to its first space)
    families: tuple[int, ...] = ()  # per point: its near-copy family (outputs on the sample within 2%, :func:`.records.families`)

    @property
    def distinct(self) -> int:
        return len(self.points)

    @property
    def family_count(self) -> int:
        return len(set(self.families))

    @property
    def stopped(self) -> bool:
        """The record rule held: the running extremum of the objective stopped rising (:func:`.records.record_stopped`)."""
        return self.stop == "stopped"

    def records(self) -> dict[str, int]:
        """Per source kind: the records of the objective its starts made (beyond 0.5%; the first point included)."""
        return records_by_source(self.running_max, self.sources)

    def last_record(self) -> int | None:
        """The start (1-based, in search order) that made the last record of the objective (None: no objective)."""
        i = last_record(self.running_max)
        return None if i is None else i + 1

    def by_origin(self) -> dict[str, tuple[int, int, int]]:
        """Per origin kind (the origin up to its first space): (candidates, certified, points first found there)."""
        out: dict[str, list[int]] = {}
        seen: set[int] = set()
        for c in self.candidates:
            kind = c.origin.split(" ")[0]
            acc = out.setdefault(kind, [0, 0, 0])
            acc[0] += 1
            acc[1] += c.certified
            if c.point is not None and c.point not in seen:
                seen.add(c.point)
                acc[2] += 1
        return {k: (v[0], v[1], v[2]) for k, v in out.items()}

    def as_json(self) -> dict:
        return {"distinct": self.distinct, "families": self.family_count, "values": list(self.values), "complete": self.complete,
                "planned": self.planned, "unseen": self.unseen, "stop": self.stop, "stopped": self.stopped, "gd_starts": self.gd_starts,
                "starts": len(self.order), "running_max": list(self.running_max), "records": self.records(),
                "last_record": self.last_record(), "order": list(self.order), "sources": list(self.sources),
                "point_families": list(self.families), "skipped": self.skipped, "gd_widths": sorted(set(self.widths)),
                "by_origin": {k: list(v) for k, v in self.by_origin().items()},
                "seconds": self.seconds, "budget": self.budget.as_json(), "notes": list(self.notes),
                "candidates": [c.as_json() for c in self.candidates]}


def _certified(net: TwoLayerReLU, X, y) -> tuple:
    """(scaled net, residual, slackness, status, value, ties) of ``net``'s certificate (nan where it cannot be read)."""
    if not net.width or (y * net.forward(X)).min() <= 0:
        return net, float("nan"), float("nan"), "not feasible", float("nan"), 0
    c = kkt_certificate(net, X, y)
    th = c.scaled.params()
    return c.scaled, float(c.stationarity_residual), float(c.complementary_slackness_rel), c.solver_status, 0.5 * float(th @ th), int(c.n_ties)


def polish_and_certify(X: np.ndarray, y: np.ndarray, D: np.ndarray, s: np.ndarray, origin: str, budget: Budget,
                       span, probes: np.ndarray, found: list, bias: bool = True, deadline: float | None = None) -> Candidate:
    """The tie-aware polish from the cone (D, s), certifying between programs (see the module docstring). ``deadline``
    (the search's time cap, a ``time.perf_counter()`` value; None: none): no program begins past it, and it ends a
    Clarabel program's iterations."""
    from .polish import TIME_CAP, cone_optimum  # heavy: cvxpy (loaded on first use)

    last: Candidate | None = None
    for step in range(1, budget.programs + 1):
        if last is not None and deadline is not None and time.perf_counter() >= deadline:
            return _with_trace(last, f"stopped at the time cap after {step - 1} program(s) (not certified)")
        o = cone_optimum(X, y, D, s, bias, per_program=budget.per_program, span=span, deadline=deadline)
        if not o.net.width:
            trace = "the time cap ended the cone's program" if o.solver_status == TIME_CAP else f"the cone's program ended {o.solver_status}"
            return last if last is not None else Candidate(origin, o.net, float("nan"), float("nan"), o.solver_status, step, trace)
        net, res, cs, status, value, ties = _certified(o.net, X, y)
        near = float("inf")
        if found:
            f = net.forward(probes)
            near = min(function_distance(f, g) for g in found)
        cand = Candidate(origin, net, res, cs, status, step, "", value, ties, known_distance=near)
        if cand.certified:
            return _with_trace(cand, "the cone's own optimum" if step == 1 else f"certified after {step - 1} program(s) of wall flips")
        if near <= SAME_POINT_RTOL:
            return _with_trace(cand, f"{step} program(s): reached a point already found (not itself certified)")
        if o.next_cone is None:
            return _with_trace(cand, f"{step} program(s): no wall (P) does not admit binds, yet not certified "
                                     f"(residual {res:.2g}: a multiplier the cone program did not find)")
        last = _with_trace(cand, f"not certified after {step} program(s) ({o.illegitimate} walls (P) does not admit)")
        D, s = o.next_cone
    assert last is not None
    return last


def _with_trace(c: Candidate, trace: str) -> Candidate:
    return replace(c, trace=trace)


def _patterns(X, y, cluster, starts, budget: Budget, span, rng, gd_inits: list, deadline: float | None = None
              ) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    """Every pattern the search starts from: the given networks', the cluster-level cones, GD's from the cover starts,
    then GD's from the first ``budget.gd`` of ``gd_inits``, then SLSQP's (in that order), each computed when it is
    reached (a time cap stops the GD runs too: a run past ``deadline`` is abandoned and the patterns end there)."""
    Q, L = span
    for name, net in starts:
        Xt = np.hstack([X, np.ones((len(X), 1))]) if net.b is not None else X
        Wt = net.W if net.b is None else np.hstack([net.W, net.b[:, None]])
        yield f"start:{name}", (Xt @ Wt.T > 0).astype(float), np.sign(net.a)
    labels = None
    if cluster is not None:
        remap, labels = cluster_labels(y, cluster)
        if budget.cones:
            if partition_count(labels) <= budget.enumerate:
                yield from ((f"cone:{n}", D, s) for n, D, s in partition_cones(remap, labels))
            else:
                yield from ((f"cone:{n}", D, s) for n, D, s in sub_averaging_cones(remap, labels))
    if labels is not None and budget.covers:
        for init in cover_inits(Q, X, cluster, y, budget.covers, rng):
            if (got := gd_pattern(L, y, init, steps=budget.gd_steps, deadline=deadline)) is None:
                return
            yield init.name, *got
    for init in gd_inits[:budget.gd]:
        if (got := gd_pattern(L, y, init, steps=budget.gd_steps, deadline=deadline)) is None:
            return
        yield init.name, *got
    m = 2 * (len(np.unique(cluster)) if cluster is not None else (budget.width or 2 * max(int(np.sqrt(len(X))), 2)))
    if budget.slsqp and m * (L.shape[1] + 1) <= SLSQP_MAX:
        from .search import random_start, slsqp  # heavy: scipy.optimize (loaded on first use)

        for i in range(budget.slsqp):  # in the data's span: a bias-free network on L ([X 1] = L Q^T), exact
            end, _ = slsqp(random_start(L.shape[1], m, rng, bias=False), L, y, maxiter=300)
            Z = end.preactivations(L)
            yield f"slsqp:random width {m} #{i}", (Z > 0).astype(float), np.sign(end.a)


SLSQP_MAX = 1000  # parameters (in the data's span: width x (rank + 1)) beyond which SLSQP (dense quasi-Newton) is not a
# pattern source. Pitfall avoided: SLSQP on the raw weights cost 11 s of a 16 s sample at d = 256 (width x (d + 2)); at
# 2000, SLSQP in the span was 59% of FVBS23.thm.4_2's quick sweep (203 of 345 s: about 160 s at k = 4, d = 512-1024,
# n = 156-193, 1256-1552 parameters, where it no longer runs; the rest at d = 256, k = 4, 992 parameters, and at k = 2),
# and on the six k = 4 samples it reached no point the other sources missed


def search(X: np.ndarray, y: np.ndarray, cluster: np.ndarray | None = None, starts: tuple = (), budget: Budget = Budget(),
           seed: int = 0, progress=None, objective=None, status=None) -> KKTSearch:
    """The KKT points of (P) on ``(X, y)`` (a two-layer ReLU network with biases, all layers trained): see the module
    docstring. ``starts``: (name, network) pairs whose patterns are polished first; ``progress``: called with 1 per
    pattern done; ``status``: called after each pattern with a :class:`Progress`; ``objective``: the quantity a claim
    bounds, a function of a point (e.g. a flip norm): the search then runs by the record rule (:mod:`.records`), its
    continuation split between GD starts, cover starts at random scales and moves over activation patterns from the
    point where the objective is largest (:mod:`.moves`), each in proportion to the records it made, until the running
    extremum has stopped (after at least ``budget.starts_min`` starts) or ``budget.starts_max`` starts ran. Without
    one, more GD starts run while the Good-Turing unseen estimate is above ``budget.saturation``, up to
    ``budget.gd_max``. Inputs are checked by the caller (the API's boundary)."""
    from .polish import data_span  # heavy: cvxpy (loaded on first use)

    X, y = np.asarray(X, float), np.asarray(y, float)
    cluster = None if cluster is None else np.asarray(cluster)
    rng = np.random.default_rng(seed)
    run = _Run(X, y, budget, data_span(X, True), objective, progress, status)
    more = max(budget.gd, budget.gd_max or 0, budget.starts_max or 0) if objective is not None else max(budget.gd, budget.gd_max or 0)
    gd_inits = inits(run.span[0], X, cluster, y, more, rng, True, budget.width)
    run.planned(_patterns(X, y, cluster, tuple(starts), budget, run.span, rng, gd_inits, run.deadline))
    if run.complete and objective is not None:
        run.climb(cluster, rng)
        run.to_records(gd_inits[budget.gd:], cluster, rng)
    elif run.complete:
        run.more_starts(gd_inits[budget.gd:])
    return run.result(run.n_planned)


@dataclass(frozen=True)
class Progress:
    """Where a search stands, for a progress bar: starts run (every source), GD starts, distinct points, near-copy
    families, the Good-Turing unseen estimate, and the running extremum of the objective (nan: none)."""

    starts: int
    gd_starts: int
    points: int
    families: int
    unseen: float
    extremum: float


class _Run:
    """One search's state: the points found (functions on the probes, networks, values), the candidates, each start's
    point and source (``order``, ``sources``; GD starts' in ``hits``) and width, the cones solved, the running extremum
    of the objective, and why it stopped."""

    def __init__(self, X, y, budget: Budget, span, objective, progress, status):
        self.X, self.y, self.budget, self.span, self.objective = X, y, budget, span, objective
        self.progress, self.status = progress, status
        self.clock = Clock(budget.seconds)  # the time cap (not fingerprinted: an uncapped search never reads it)
        self.t0, self.deadline = self.clock.t0, self.clock.deadline
        self.probes = function_probes(X)
        self.found_f: list[np.ndarray] = []
        self.points: list[TwoLayerReLU] = []
        self.values: list[float] = []
        self.cands: list[Candidate] = []
        self.notes: list[str] = []
        self.hits: list[int | None] = []  # per GD start: the point it reached (None: none)
        self.widths: list[int] = []  # per GD start: its width
        self.order: list[int | None] = []  # per start, every source: the point it reached
        self.sources: list[str] = []  # per start: its source kind
        self.origins: list[str] = []  # per start: its origin in full
        self.reached: dict[bytes, int | None] = {}  # per cone solved: the point its polish reached
        self.running: list[float] = []
        self.scores: list[float] = []  # the objective of each point found (in order)
        self.fams: list[int] = []  # each point's near-copy family (its outputs on the sample within 2% of a family's first)
        self.fam_f: list[np.ndarray] = []
        self.skipped, self.extra, self.stop, self.complete, self.n_planned = 0, 0, "", True, 0
        self.climbed = 0  # moves of the hill-climb (:meth:`climb`)

    def run(self, origin: str, D: np.ndarray, s: np.ndarray) -> int | None:
        """Polish and certify from the cone (D, s) (once per cone), record the start; the point it reached."""
        key = _cone_key(D, s)
        if key not in self.reached:  # the same convex program is solved once; a start that repeats it reaches the same point
            c = _placed(polish_and_certify(self.X, self.y, D, s, origin, self.budget, self.span, self.probes, self.found_f,
                                           deadline=self.deadline),
                        self.probes, self.points, self.values, self.found_f)
            self.cands.append(c)
            self.reached[key] = c.point if c.point is not None else _reached(c, self.probes, self.found_f)
        point = self.reached[key]
        self.order.append(point)
        self.sources.append(origin.split(" ")[0])
        self.origins.append(origin)
        self._families()
        if origin.startswith("gd:"):
            self.hits.append(point)
            self.widths.append(D.shape[1])
        if self.objective is not None:  # the running extremum of the objective over the points found so far, every source
            self.scores.extend(float(self.objective(p)) for p in self.points[len(self.scores):])
            self.running.append(max((x for x in self.scores if math.isfinite(x)), default=float("nan")))
        if self.progress is not None:
            self.progress(1)
        if self.status is not None:
            self.status(Progress(len(self.order), len(self.hits), len(self.points), len(self.fam_f), good_turing(self.hits),
                                 self.running[-1] if self.running else float("nan")))
        return point

    def _families(self) -> None:
        """Each new point's near-copy family (:data:`.records.FAMILY_RTOL` on the sample's outputs)."""
        for net in self.points[len(self.fams):]:
            f = net.forward(self.X)
            g = next((i for i, ref in enumerate(self.fam_f) if function_distance(f, ref) <= FAMILY_RTOL), None)
            if g is None:
                g = len(self.fam_f)
                self.fam_f.append(f)
            self.fams.append(g)

    def out_of_time(self) -> bool:
        if self.clock.passed():
            self.complete, self.stop = False, "time"
        return not self.complete

    def planned(self, patterns) -> None:
        """The planned patterns in order (an iterator, each computed when reached; ``n_planned`` counts those reached); a
        cone kind in PROBED that certified nothing in its first ``probe`` is left out."""
        tried: dict[str, list[int]] = {}  # per cone kind: (tried, certified)
        for origin, D, s in patterns:
            self.n_planned += 1
            if self.out_of_time():
                break
            kind = origin.split(" ")[0]
            acc = tried.setdefault(kind, [0, 0])
            if kind in PROBED and acc[0] >= self.budget.probe and not acc[1]:
                self.skipped += 1  # this kind certified nothing in its first probe cones at this sample's n: it does not pay here
                continue
            before = len(self.cands)
            self.run(origin, D, s)
            acc[0] += 1
            acc[1] += int(len(self.cands) > before and self.cands[-1].certified)
        self.out_of_time()  # the patterns may have ended at the cap, inside a GD run
        if self.skipped:
            self.notes.append(f"{self.skipped} cone(s) left out: their kind ({', '.join(k for k in PROBED if k in tried and not tried[k][1])}) "
                              f"certified nothing in its first {self.budget.probe}")

    def more_starts(self, more: list) -> None:
        """Without an objective: more GD starts while the unseen estimate is above the level, up to the cap (``more``:
        the inits past ``budget.gd``)."""
        for init in more:
            if saturated(self.hits, self.budget.saturation) or self.out_of_time():
                break
            if (got := gd_pattern(self.span[1], self.y, init, steps=self.budget.gd_steps, deadline=self.deadline)) is None:
                self.out_of_time()  # the cap passed inside the run
                break
            self.run(init.name, *got)
            self.extra += 1

    def climb(self, cluster, rng: np.random.Generator) -> None:
        """With an objective, after the planned sources: a hill-climb over activation patterns (:mod:`.moves`) from the
        point where the objective is largest, at most ``budget.ascent`` moves from each base (split moves first, then
        the kinds in the order of the records they made); a move that makes a record becomes the base, and its own moves
        follow (combinations of moves). It runs whether or not the record rule already holds, so the rare robust basins
        next to the best point are looked for on every sample; every move is a start in search order.

        Why: on VYS22's sphere samples (n = 8) the largest norm a 4x deeper reference found came from a split move on 3
        of the 4 samples where an 80-start budget fell short (ratios 0.90-0.96): the budget's rule had stopped before
        its continuation ran a move."""
        if not self.budget.ascent:
            return
        groups, labels = _groups(self.y, cluster)
        base = _argmax(self.scores)
        while base is not None and not self.out_of_time():
            w = {k.split(":")[1]: float(v) for k, v in self.records_made().items() if k.startswith("move:")}
            net = self.points[base]
            tried, moved = 0, False
            for nxt in pattern_moves(net.preactivations(self.X), np.sign(net.a), groups, labels, w, rng):
                if tried >= self.budget.ascent or self.out_of_time():
                    break
                self.run(*nxt)
                tried += 1
                best = _argmax(self.scores)
                if best is not None and best != base and self.scores[best] > self.scores[base]:
                    base, moved = best, True
                    break
            self.climbed += tried
            if not moved:
                break

    def to_records(self, more: list, cluster, rng: np.random.Generator) -> None:
        """With an objective: the continuation, until the record rule stops (:func:`.records.record_stopped`, after at
        least ``budget.starts_min`` starts) or ``budget.starts_max`` starts ran. Each next start comes from one of three
        sources: a GD start (``more``), a cover start at a random scale (clusters only; :func:`.gd.random_covers`, half
        of them the combination that made the last record), or a move from the point where the objective is largest
        (:mod:`.moves`; at most ``budget.ascent`` per record made by moves, plus ``budget.ascent``), whichever has run
        the fewest starts per record it made (a source counts 1 + its records), so the budget goes where records come
        from. Which source made each record is kept (:meth:`KKTSearch.records`)."""
        b = self.budget
        cap = max(b.starts_max if b.starts_max is not None else 4 * max(len(self.order), 1), b.starts_min)
        groups, labels = _groups(self.y, cluster)
        feeds: dict[str, Iterator] = {"gd": iter(more)}
        if cluster is not None and b.covers:
            feeds["cover"] = random_covers(self.span[0], self.X, cluster, self.y, rng, self._record_combo)
        moves: Iterator | None = None
        base: int | None = None
        since = 0  # moves tried from the current base
        tried = {"gd": 0, "cover": 0, "move": 0}
        while len(self.order) < cap and not self._stopped() and not self.out_of_time():
            best = _argmax(self.scores)
            if b.ascent and best is not None and best != base:  # a new best point: moves from it
                base, since = best, 0
                w = {k.split(":")[1]: float(v) for k, v in self.records_made().items() if k.startswith("move:")}
                net = self.points[best]
                moves = pattern_moves(net.preactivations(self.X), np.sign(net.a), groups, labels, w, rng)
            made = _by_feed(self.records_made())
            open_ = [f for f in ("move", "cover", "gd") if f in feeds or (f == "move" and moves is not None)]
            if moves is not None and since >= b.ascent * (1 + made.get("move", 0)):
                open_ = [f for f in open_ if f != "move"]
            pick = min(open_, key=lambda f: (tried[f] / (1 + made.get(f, 0)), open_.index(f)), default=None)
            if pick is None:
                self.stop = "exhausted"  # every source spent before the cap, the extremum still rising
                break
            if pick == "move":
                assert moves is not None
                nxt = next(moves, None)
                if nxt is None:
                    moves = None
                    continue
                self.run(*nxt)
                since += 1
            else:
                init = next(feeds[pick], None)
                if init is None:
                    del feeds[pick]
                    continue
                if (got := gd_pattern(self.span[1], self.y, init, steps=b.gd_steps, deadline=self.deadline)) is None:
                    self.out_of_time()  # the cap passed inside the run
                    break
                self.run(init.name, *got)
            tried[pick] += 1
        self.extra = sum(tried.values()) + self.climbed
        if not self.stop:
            self.stop = "stopped" if self._stopped() else "cap"
        lr = last_record(self.running)
        self.notes.append(f"{len(self.order)} starts ({self.climbed} hill-climb moves, {tried['gd']} more GD starts, "
                          f"{tried['cover']} more cover starts, {tried['move']} moves): the running extremum "
                          + ("stopped" if self.stop == "stopped" else "was still rising when every source was spent"
                             if self.stop == "exhausted" else f"was still rising at the {'time cap' if self.stop == 'time' else 'cap'}")
                          + (f"; its last record at start {lr + 1}" if lr is not None else "; no point reached"))

    def records_made(self) -> dict[str, int]:
        return records_by_source(self.running, self.sources)

    def _record_combo(self) -> str | None:
        """The cover combination whose start made the last record (None: a record from another source)."""
        i = last_record(self.running)
        if i is None or not self.origins[i].startswith("cover "):
            return None
        return self.origins[i].split(" ")[1]

    def _stopped(self) -> bool:
        """The record rule, after at least ``budget.starts_min`` starts."""
        return len(self.order) >= self.budget.starts_min and record_stopped(self.running)

    def result(self, planned: int) -> KKTSearch:
        b, unseen = self.budget, good_turing(self.hits)
        if not self.stop:
            self.stop = "unseen" if saturated(self.hits, b.saturation) else ("cap" if self.hits else "no GD start")
        if self.extra and self.objective is None:
            self.notes.append(f"{self.extra} more GD start(s): the unseen mass {'fell to' if self.stop == 'unseen' else 'stood at'} "
                              f"{unseen:.2f} after {len(self.hits)} (cap {b.gd_max}, level {b.saturation:g}); the points may "
                              "still grow with depth (the estimate sees only basins hit more than once)")
        dup = len(self.order) - len(self.cands)
        if dup > 0:
            self.notes.append(f"{dup} pattern(s) repeated a cone already solved (solved once)")
        return KKTSearch(tuple(self.cands), tuple(self.points), tuple(self.values), self.complete, b, time.perf_counter() - self.t0,
                         planned + self.extra, tuple(self.notes), unseen, self.stop, len(self.hits), tuple(self.running),
                         self.skipped, tuple(self.widths), tuple(self.order), tuple(self.sources), tuple(self.fams))


def _by_feed(records: dict[str, int]) -> dict[str, int]:
    """Records per continuation source: moves, cover starts, and every other source as GD."""
    out: dict[str, int] = {}
    for kind, v in records.items():
        f = "move" if kind.startswith("move:") else "cover" if kind == "cover" else "gd"
        out[f] = out.get(f, 0) + v
    return out


def _argmax(scores: list[float]) -> int | None:
    ok = [(v, i) for i, v in enumerate(scores) if math.isfinite(v)]
    return max(ok)[1] if ok else None


def _groups(y: np.ndarray, cluster) -> tuple[np.ndarray, np.ndarray]:
    """The groups the moves work on: the clusters (0..k-1, each with its label), or each point its own group."""
    if cluster is not None:
        return cluster_labels(y, cluster)
    return np.arange(len(y)), np.asarray(y, float)


PROBED = ("cone:leave-one-out", "cone:partition")  # cone kinds that run only where their first Budget.probe certified


def saturated(hits: list[int | None], level: float) -> bool:
    """Whether the GD starts' Good-Turing unseen estimate is at most ``level`` from at least ``ceil(1 / level)`` starts
    (fewer cannot resolve the level: from 4 starts that all reach one point the estimate reads 0, while one start in 4
    reaching a new point is 0.25). Without an objective this ends the GD starts; it never says the points were all
    found (the estimate only sees basins hit more than once)."""
    return len(hits) >= math.ceil(1 / level - 1e-9) and good_turing(hits) <= level


def good_turing(hits: list[int | None]) -> float:
    """Good and Turing's estimate of the chance that one more GD start reaches a point not yet found: the number of points
    reached by exactly one start over the number of starts (``hits``: the point each start reached, None for none);
    nan with no start, and 1 where no start reached a point (nothing is known yet of the points there are).

    Pitfalls avoided: a fixed number of starts reports 14 points where 49 exist (d = 64, k = 8, n = 24); four starts
    that certified nothing read 0/4 = 0 on a sample holding 3 points (d = 256, k = 6, n = 185). It is reported beside
    the points, never as a stop that says they were all found: deeper searches keep finding near copies it does not see."""
    if not hits:
        return float("nan")
    counts: dict[int, int] = {}
    for h in hits:
        if h is not None:
            counts[h] = counts.get(h, 0) + 1
    if not counts:
        return 1.0
    return sum(1 for v in counts.values() if v == 1) / len(hits)


def _placed(c: Candidate, probes, points: list, values: list, found_f: list) -> Candidate:
    """``c`` with the distinct point it is (a new one joins ``points``), where it certifies."""
    if not c.certified:
        return c
    f = c.net.forward(probes)
    group = next((g for g, ref in enumerate(found_f) if function_distance(f, ref) <= SAME_POINT_RTOL), None)
    if group is None:
        group = len(points)
        points.append(c.net)
        values.append(c.value)
        found_f.append(f)
    return replace(c, point=group)


def _reached(c: Candidate, probes, found_f: list) -> int | None:
    """The point an uncertified candidate stopped at (its function within the same-point test of one), else None."""
    if not found_f or not c.net.width or not c.known_distance <= SAME_POINT_RTOL:
        return None
    f = c.net.forward(probes)
    return int(np.argmin([function_distance(f, g) for g in found_f]))


def _cone_key(D: np.ndarray, s: np.ndarray) -> bytes:
    """A cone up to the order and repetition of its neurons."""
    cols = sorted({(float(sg),) + tuple(int(v) for v in col) for sg, col in zip(s, np.asarray(D).T)})
    return repr(cols).encode()


__all__ = ["Budget", "Candidate", "KKTSearch", "Progress", "search", "polish_and_certify", "distinct_groups"]
