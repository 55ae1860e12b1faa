"""What summary.json says of KKT claims and ambiguous claims: ``kkt``, ``transfer`` and ``reading``.

* ``kkt``: per cell, the networks trained, the networks certified, and the largest eps and delta
  of the certified ones (FVBS23.thm.4_2 and VYS22.thm.main are about every KKT point of (P));
* :func:`at_thresholds`: the rows again with every network re-judged at other thresholds, the
  fitted value the largest over the networks still certified (the verdict at half thresholds);
* ``transfer``: per cell, the fraction of test points that the z of one certified KKT point
  flips on another (FVBS23.thm.4_2, "transferable"), against 1 - eps;
* ``reading``: which reading of an ambiguous claim the data support (:func:`decide_reading`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import partial
from typing import Mapping, Sequence

from ibcheck.simulate.experiments.base import Row
from ibcheck.simulate.substrate.censored import decode
from ibcheck.simulate.substrate.seeds import STREAMS_VERSION
from ibcheck.simulate.verdict.analysis import BoundAnalysis
from ibcheck.simulate.verdict.rules import UPPER, Verdict, combine
from ibcheck.solvers.binomial import upper_confidence
from ibcheck.solvers.kkt.depth import depth_record_for, reference_values
from ibcheck.solvers.kkt.records import last_record, record_stopped, running_extremum


def _by_cell(rows: list[Row], cell_vars: list[str]) -> dict[tuple, list[Row]]:
    out: dict[tuple, list[Row]] = {}
    for r in rows:
        out.setdefault(tuple(r.cell[v] for v in cell_vars), []).append(r)
    return out


@dataclass(frozen=True)
class SearchLine:
    """One origin of the KKT search in one cell, over its samples: candidates tried, certified, the samples where it
    reached a KKT point no GD network reached (a new point), and the uncertified ones whose polish reached the function
    of a point already found (they were heading there)."""

    origin: str
    tried: int
    certified: int
    new_points: int
    reached_known: int = 0
    distance: tuple[float, float] | None = None  # the uncertified ones: range of the relative distance to a known point

    def as_json(self) -> dict:
        return {"origin": self.origin, "tried": self.tried, "certified": self.certified, "new_points": self.new_points,
                "reached_known": self.reached_known, "known_distance": list(self.distance) if self.distance else None}


def search_lines(values: list[dict]) -> tuple[SearchLine, ...]:
    """Per origin kind: the search's counts over the samples' stored candidates (new points: points no start from the
    trained networks reached)."""
    acc: dict[str, list] = {}
    for v in values:
        nets = v.get("kkt_networks") or []
        gd = {n.get("point") for n in nets if str(n.get("origin", "")).startswith("start:") and n.get("point") is not None}
        for n in nets:
            a = acc.setdefault(str(n.get("origin", "gd")).split(" ")[0], [0, 0, 0, 0, []])  # the origin up to its parameters
            a[0] += 1
            a[1] += n.get("point") is not None
            a[2] += n.get("point") is not None and n.get("point") not in gd
            a[3] += n.get("point") is None and "reached a point already found" in str(n.get("trace", ""))
            x = n.get("known_distance")
            if n.get("point") is None and isinstance(x, (int, float)) and math.isfinite(x):
                a[4].append(float(x))
    return tuple(SearchLine(o, a, c, nw, r, (min(d), max(d)) if d else None) for o, (a, c, nw, r, d) in acc.items())


@dataclass(frozen=True)
class KKTCell:
    """One cell of a KKT claim: samples, networks trained, certified and polished, samples with no certified network
    (failed rows, never fitted), and the largest eps and delta over the certified networks."""

    cell: Mapping[str, float]
    samples: int
    samples_uncertified: int
    networks_trained: int
    networks_certified: int
    networks_polished: int
    max_eps: float | None
    max_delta: float | None
    eps_threshold: float | None
    delta_threshold: float | None
    distinct: tuple[int, ...] = ()  # per measured sample: the distinct certified KKT points (by function)
    ties: tuple[int, ...] = ()  # per certified network: the exact ties its certificate rests on
    flip_norms: tuple[tuple, ...] = ()  # per sample, per distinct point: its flip norm (encoded)
    not_global: tuple[int, ...] = ()  # per sample: distinct points a dual-check lower bound above 1 proves not global
    dual_lb: float | None = None  # the largest dual-check lower bound over the cell's distinct points
    search: tuple[SearchLine, ...] = ()  # per origin of the candidates (GD, each cone family, moves): what it found
    complete: bool = False  # the engine ran in full on every measured sample
    values: tuple[tuple[float, ...], ...] = ()  # per sample, per distinct point: 1/2 ||theta||^2 at unit margin
    spread: tuple[float, ...] = ()  # per sample with two or more exact flip norms: largest / smallest
    unseen: tuple[float, ...] = ()  # per sample: the Good-Turing estimate that one more GD start finds a new point
    stops: tuple[str, ...] = ()  # per sample: why its GD starts stopped ("saturated", "cap", "time", ...)
    running_max: tuple[tuple[float, ...], ...] = ()  # per sample: the engine's objective's running extremum, every start
    orders: tuple[tuple[int | None, ...], ...] = ()  # per sample: the point each start reached, in search order
    sources: tuple[tuple[str, ...], ...] = ()  # per sample: each start's source kind
    test_errors: tuple[tuple[int, ...], ...] = ()  # per sample, per distinct point: its errors on the fresh points
    families: tuple[int, ...] = ()  # per sample: the near-copy families of its points (outputs within 2%)
    seeds: tuple[int, ...] = ()  # per sample: its seed
    budget: Mapping | None = None  # the engine's budget (as recorded with the rows)
    kind: str = "clusters"  # the data: clusters or sphere
    n: int | None = None  # the samples' largest n
    references: tuple[float | None, ...] = ()  # per sample: a 4x deeper reference's largest flip norm there (None: none)
    depth_note: str = ""  # the class's depth stability for the flip norm, in words (or why it is unmeasured)

    def per_point(self, quantity: str) -> tuple[tuple[float, ...], ...]:
        """Per sample, per distinct point: the value of the claim's ``quantity`` (a censored flip norm at its bound)."""
        if quantity == "test_error":
            return tuple(tuple(float(e) for e in errs) for errs in self.test_errors)
        return tuple(tuple(float("nan") if x is None else float(decode(x)[0]) for x in fl) for fl in self.flip_norms)

    def extrema(self, quantity: str) -> tuple[tuple[float, ...], ...]:
        """Per sample: the running extremum of ``quantity`` over the starts in search order (every source)."""
        return tuple(running_extremum(o, v) for o, v in zip(self.orders, self.per_point(quantity)))

    def rising(self, quantity: str) -> list[str]:
        """The samples whose running extremum of ``quantity`` had not stopped by the record rule, each in words."""
        out = []
        for i, run in enumerate(self.extrema(quantity)):
            if not record_stopped(run):
                lr = last_record(run)
                seed = self.seeds[i] if i < len(self.seeds) else i
                out.append(f"seed {seed}: " + (f"last record at start {lr + 1} of {len(run)}" if lr is not None and len(run) >= 20
                                               else f"{len(run)} starts (at least 20 needed)" if lr is not None else "no point reached"))
        return out

    def depth(self, quantity: str):
        """(the class's depth record, how it was read) for ``quantity`` (:func:`ibcheck.solvers.kkt.depth.depth_record_for`)."""
        if self.budget is None or "d" not in self.cell or (self.kind == "clusters" and "k" not in self.cell):
            return None, "no depth stability for this cell (no budget recorded, or no d and k)"
        k = int(self.cell["k"]) if self.kind == "clusters" else 0
        return depth_record_for(int(self.cell["d"]), k, self.n, canonical(quantity), dict(self.budget), self.kind,
                                streams=STREAMS_VERSION)

    @property
    def searched(self) -> bool:
        """The counting rule for a claim about every KKT point holds at this cell for FVBS23.thm.4_2's quantity
        (:func:`every_point_searched`, its one home)."""
        return every_point_searched((self,)) is None

    def as_json(self) -> dict:
        return {"cell": dict(self.cell), "samples": self.samples, "samples_uncertified": self.samples_uncertified,
                "networks_trained": self.networks_trained, "networks_certified": self.networks_certified,
                "networks_polished": self.networks_polished, "max_eps": self.max_eps, "max_delta": self.max_delta,
                "delta_note": "not reported: multipliers only on active points (delta <= 1e-6 by construction)",
                "eps_threshold": self.eps_threshold, "delta_threshold": self.delta_threshold,
                "distinct": list(self.distinct), "global": None,
                "global_note": ("not certified either way: the exact dual check enumerates the activation patterns of the "
                                "support points (2^n of them at n <= d); a fixed-pattern ascent bounds it from below "
                                f"(largest {self.dual_lb:.4g}: above 1 proves a point not global)" if self.dual_lb is not None else
                                "not computed"),
                "not_global": list(self.not_global), "dual_lower_bound": self.dual_lb, "ties": list(self.ties),
                "flip_norms": [list(f) for f in self.flip_norms], "search": [x.as_json() for x in self.search],
                "complete": self.complete,
                "values": [list(v) for v in self.values], "spread": list(self.spread), "unseen": list(self.unseen),
                "stops": list(self.stops), "families": list(self.families),
                "running_max": [list(r) for r in self.running_max], "orders": [list(o) for o in self.orders],
                "sources": [list(x) for x in self.sources], "test_errors": [list(e) for e in self.test_errors],
                "seeds": list(self.seeds), "budget": dict(self.budget) if self.budget else None, "kind": self.kind, "n": self.n,
                "references": list(self.references), "depth_note": self.depth_note}


@dataclass(frozen=True)
class TransferCell:
    """One cell of FVBS23.thm.4_2's transfer: the smallest and mean fraction of test points the most robust KKT point's z
    flips on another, over pairs, against ``target`` (1 - eps): on fresh points through ``fraction_ucb`` (a pair
    significantly below the target refutes it), on rows from before them against the target less ``slack`` (two
    binomial SE). ``controls``: per negative control, the fraction and bounds (``lcb``, ``ucb``) of its network closest
    to passing, and whether it failed as it must; ``transferable`` is None, with ``withheld`` saying why, where one
    passed. ``near_kkt``: the raw GD networks, reported the same way but not a control. ``resolution``: the largest
    shortening r of the most robust point's own z that the test refutes (with every smaller r) at every sample."""

    cell: Mapping[str, float]
    pairs: int
    fraction_min: float | None = None
    fraction_mean: float | None = None
    target: float | None = None
    slack: float | None = None
    transferable: bool | None = None
    fraction_lcb: float | None = None  # the smallest one-sided 95% lower bound over pairs, on fresh points
    fresh_points: int | None = None
    controls: Mapping[str, Mapping[str, object]] | None = None  # per negative control: fraction, lcb, ucb, failed (as it must)
    own_lcb: float | None = None  # each point's own z on fresh points: the smallest lower bound
    fraction_ucb: float | None = None  # the smallest pair's one-sided upper bound (Bonferroni over the pairs), on fresh points
    near_kkt: Mapping[str, Mapping[str, object]] | None = None  # the raw GD networks: reported, not a control
    resolution: float | None = None  # the largest r at which the most robust point's own z at r eta is refuted
    shortenings: tuple[float, ...] = ()  # the r tried (the resolution at the largest is a bound: finer was not tried)
    withheld: str | None = None  # why no transfer reading is given: a negative control passed

    def as_json(self) -> dict:
        out = {"cell": dict(self.cell), "pairs": self.pairs, "fraction_min": self.fraction_min, "fraction_mean": self.fraction_mean,
               "target": self.target, "fraction_lcb": self.fraction_lcb, "fresh_points": self.fresh_points,
               "controls": {k: dict(v) for k, v in (self.controls or {}).items()}, "own_lcb": self.own_lcb,
               "fraction_ucb": self.fraction_ucb, "near_kkt": {k: dict(v) for k, v in (self.near_kkt or {}).items()},
               "resolution": self.resolution, "shortenings": list(self.shortenings), "withheld": self.withheld}
        if self.pairs:
            out["slack"] = self.slack
        return {**out, "tested": bool(self.pairs), "transferable": self.transferable,
                **({} if self.pairs else {"why_not": "fewer than two distinct certified KKT points per sample: no pair to transfer between"})}


@dataclass(frozen=True)
class ReadingEvidence:
    """One reading of an ambiguous claim: its overall verdict, each bound's, the decided exponents, whether every one is
    attained (pinned to its prediction), and the exponents that hold only loosely."""

    verdict: Verdict
    bounds: Mapping[str, Verdict]
    exponents: Mapping[str, Mapping[str, Mapping[str, object]]]
    attained: bool
    loose: tuple[str, ...]

    def as_json(self) -> dict:
        return {"verdict": self.verdict, "bounds": dict(self.bounds), "exponents": {k: dict(v) for k, v in self.exponents.items()},
                "attained": self.attained, "loose": list(self.loose)}


@dataclass(frozen=True)
class Reading:
    """Which reading of an ambiguous claim the data support ("neither", "cannot tell yet" included), and why."""

    reading: str
    reason: str
    evidence: Mapping[str, ReadingEvidence]

    def as_json(self) -> dict:
        return {"reading": self.reading, "reason": self.reason, "evidence": {k: v.as_json() for k, v in self.evidence.items()}}


def kkt_cells(rows: list[Row], cell_vars: list[str]) -> tuple[KKTCell, ...]:
    """Per cell: samples, candidates tried and certified, samples with no KKT point (failed rows, never fitted), the
    largest residual over the points, the distinct points per sample and their near-copy families, whether the engine ran
    in full, and each sample's running extremum in search order (the class's depth stability is read by
    :func:`every_point_searched`)."""
    out = []
    for key, rs in sorted(_by_cell(rows, cell_vars).items()):
        cell = dict(zip(cell_vars, key))
        vals = [r.value for r in rs if r.measured]
        uncertified = sum(1 for r in rs if r.status == "failed" and r.failure == "UncertifiedSample")
        eps = [v["kkt_eps"] for v in vals if v.get("kkt_eps") is not None]
        delta = [v["kkt_delta"] for v in vals if v.get("kkt_delta") is not None]
        # no recall counted in points (issue 56: the points multiply with depth as near copies); the class's depth
        # stability for the claim's quantity is what counts (depth_note)
        complete = bool(vals) and uncertified == 0 and all(bool(v.get("kkt_complete")) for v in vals)
        out.append(KKTCell(cell, len(rs), uncertified, sum(int(v.get("kkt_trained") or 0) for v in vals),
                           sum(int(v.get("kkt_certified") or 0) for v in vals), sum(int(v.get("kkt_polished") or 0) for v in vals),
                           max(eps) if eps else None, max(delta) if delta else None,
                           vals[0].get("kkt_eps_threshold") if vals else None, vals[0].get("kkt_delta_threshold") if vals else None,
                           tuple(int(v["kkt_distinct"]) for v in vals if v.get("kkt_distinct") is not None),
                           tuple(int(t) for v in vals for t in v.get("kkt_ties") or []),
                           tuple(tuple(v.get("kkt_flip_norms") or []) for v in vals),
                           tuple(int(v["kkt_not_global"]) for v in vals if v.get("kkt_not_global") is not None),
                           max((x for v in vals for x in v.get("kkt_dual_lb") or [] if x == x), default=None), search_lines(vals),
                           complete, tuple(tuple(v.get("kkt_values") or []) for v in vals),
                           tuple(float(v["kkt_flip_spread"]) for v in vals if v.get("kkt_flip_spread") is not None),
                           tuple(float(v["kkt_gd_unseen"]) if isinstance(v.get("kkt_gd_unseen"), (int, float)) else float("nan")
                                 for v in vals),
                           tuple(str(v.get("kkt_stop") or "not recorded") for v in vals),
                           tuple(tuple(float(x) if isinstance(x, (int, float)) else float("nan") for x in v.get("kkt_running_max") or [])
                                 for v in vals),
                           tuple(tuple(None if p is None else int(p) for p in v.get("kkt_order") or []) for v in vals),
                           tuple(tuple(str(x) for x in v.get("kkt_sources") or []) for v in vals),
                           tuple(tuple(int(e) for e in v.get("kkt_test_errors") or []) for v in vals),
                           tuple(len(set(v.get("kkt_families") or [])) for v in vals),
                           tuple(int(r.seed) for r in rs if r.measured),
                           vals[0].get("kkt_budget") if vals else None, str(vals[0].get("kkt_data") or "clusters") if vals else "clusters",
                           max((int(v["kkt_n"]) for v in vals if v.get("kkt_n") is not None), default=None)))
        c = out[-1]
        if c.budget is not None and "d" in cell and (c.kind != "clusters" or "k" in cell):
            refs = reference_values(c.kind, int(cell["d"]), int(cell["k"]) if c.kind == "clusters" else 0, c.n, c.seeds,
                                    "universal_flip_norm", streams=STREAMS_VERSION)
            out[-1] = replace(c, references=refs, depth_note=c.depth("universal_flip_norm")[1])
    return tuple(out)


def canonical(quantity: str) -> str:
    """The quantity whose depth record a claim's quantity reads: VYS22's eta is its flip norm over a constant per sample
    (the same extremum, the same ratio)."""
    return "universal_flip_norm" if quantity == "universal_flip_eta" else quantity


def certified_everywhere(kkt: tuple[KKTCell, ...], inside: set[tuple] | None = None) -> bool:
    """Every (inside) cell holds at least one certified KKT point in every sample that entered the fit."""
    cells = [c for c in kkt if inside is None or tuple(sorted(c.cell.items())) in inside]
    return bool(cells) and all(c.networks_certified > 0 for c in cells)


def every_point_searched(kkt: tuple[KKTCell, ...], inside: set[tuple] | None = None,
                         quantity: str = "universal_flip_norm") -> str | None:
    """The counting rule's condition for a claim about every KKT point bounding ``quantity`` (None: it holds; else why
    not), judged by the quantity the claim bounds, never by the number of points (they multiply with depth as near
    copies):

    * the engine ran in full on every sample of every (inside) cell;
    * per sample, the running extremum of ``quantity`` over the starts in search order (every source) has stopped
      (:func:`ibcheck.solvers.kkt.records.record_stopped`: no record beyond 0.5% in the last half, at least 20 starts);
    * per cell, its class (k, d, n, data) is depth-stable for ``quantity`` under the cells' budget
      (:mod:`ibcheck.solvers.kkt.depth`: a fresh record, the budget within max(2%, twice the resolution) of a reference
      at least 4x deeper on 90% of 30 instances, with a 95% lower bound of 80%, every reference stopped).

    The points, their near-copy families and the Good-Turing estimate are reported beside it, never counted."""
    cells = [c for c in kkt if inside is None or tuple(sorted(c.cell.items())) in inside]
    if not cells:
        return "no cell inside the hypotheses holds KKT points"
    partial = [c for c in cells if not c.complete]
    if partial:
        return f"the KKT engine did not run in full at {len(partial)} of {len(cells)} cells: every-KKT-point not tested"
    rising = [(c, c.rising(quantity)) for c in cells]
    rising = [(c, r) for c, r in rising if r]
    if rising:
        c, r = rising[0]
        n = sum(len(x) for _, x in rising)
        return (f"the running extremum of {quantity} was still rising at {n} sample(s) of {len(rising)} of {len(cells)} cells "
                f"(e.g. {_cell_text(c)}, {r[0]}; a sample counts once no record beyond 0.5% came in the last half of at "
                "least 20 starts): every-KKT-point not tested")
    for c in cells:
        rec, note = c.depth(quantity)
        if rec is None or not rec.passes:
            return f"{note} at {_cell_text(c)}: every-KKT-point not tested"
    return None


def depth_text(kkt: tuple[KKTCell, ...], inside: set[tuple] | None = None, quantity: str = "universal_flip_norm") -> str:
    """How a counted claim about every KKT point holds, in words: each class's depth stability, once."""
    cells = [c for c in kkt if inside is None or tuple(sorted(c.cell.items())) in inside]
    texts = []
    for c in cells:
        rec, note = c.depth(quantity)
        if rec is not None:
            short = f"{'k = ' + str(rec.k) if rec.kind == 'clusters' else rec.kind}: {rec.within}/{rec.instances} within {rec.threshold:.1%}"
            if short not in texts:
                texts.append(short)
    return "depth-stable at its classes, " + ", ".join(texts) if texts else ""


def _cell_text(c: KKTCell) -> str:
    return ", ".join(f"{k}={v:g}" for k, v in c.cell.items())


def at_thresholds(rows: list[Row], quantity: str, eps: float, delta: float) -> list[Row]:
    """The rows with each network re-judged at (eps, delta): the value is the largest ``quantity`` over the
    networks still certified; a row with none left fails (it never enters the fit)."""
    out = []
    for r in rows:
        v = r.value
        if not r.measured or "kkt_networks" not in v:
            out.append(r)
            continue
        kept = [n for n in v["kkt_networks"] if n.get(quantity) is not None and n.get("solver_status") == "optimal"
                and n.get("feasible") and n["eps"] <= eps and n["delta"] <= delta]
        if not kept:
            out.append(replace(r, status="failed", value=None, failure="UncertifiedSample",
                               error=f"UncertifiedSample: no network certifies at eps={eps:g}, delta={delta:g}"))
            continue
        decoded = [decode(n[quantity]) for n in kept]
        top = max(decoded, key=lambda x: x[0])
        out.append(replace(r, value={**v, quantity: {top[1]: top[0]} if top[1] else top[0]}))
    return out


NEGATIVE_SHORTENING = 0.5  # the shortened z at this r is a negative control: the test must refute it


def _closest(into: dict, kind: str, c: Mapping) -> None:
    """Keep, per kind, the fraction and lower bound of the network closest to passing."""
    cur = into.setdefault(kind, {"fraction": 0.0, "lcb": 0.0})
    cur["fraction"], cur["lcb"] = max(cur["fraction"], float(c["fraction"])), max(cur["lcb"], float(c["lcb"]))


def _gather_controls(measured: list[dict]) -> tuple[dict[str, dict], dict[str, dict], dict[float, list[Mapping]], int]:
    """(negative controls, near-KKT networks, the shortened z per r, the samples that measured it) over a cell's rows,
    each control kind and the near-KKT networks by the network closest to passing (raw GD among a former row's controls
    goes to the near-KKT networks)."""
    controls: dict[str, dict] = {}
    near: dict[str, dict] = {}
    short: dict[float, list[Mapping]] = {}
    for v in measured:
        for name, c in (v.get("transfer_controls") or {}).items():
            _closest(near if name.startswith("raw_gd") else controls, "raw_gd" if name.startswith("raw_gd") else name, c)
        for c in (v.get("transfer_near_kkt") or {}).values():
            _closest(near, "raw_gd", c)
    samples = [v["transfer_shortened"] for v in measured if v.get("transfer_shortened")]
    for sh in samples:
        for c in sh:
            short.setdefault(float(c["r"]), []).append(c)
    for c in short.get(NEGATIVE_SHORTENING, []):
        _closest(controls, "shortened_z", c)
    return controls, near, short, len(samples)


def transfer_cells(rows: list[Row], cell_vars: list[str], tolerance_points: int = 200) -> tuple[TransferCell, ...]:
    """Per cell: the smallest and mean fraction flipped over ordered pairs of distinct certified KKT points and samples,
    on fresh points. A pair refutes the transfer when its fraction is significantly below ``1 - eps``: the smallest
    fraction's one-sided 95% upper bound (Bonferroni over the cell's pairs) below it; the cell is transferable when no
    pair does (rows without fresh points: the fraction against ``1 - eps`` less two binomial standard errors over
    ``tolerance_points``), and only where every negative control failed as it must: a cell whose control passed is
    withheld (``transferable`` None, ``withheld`` says which), since a test that passes what it should reject is no
    evidence.

    The negative controls, each kind by its network closest to passing (its upper bound, at the pairs' own Bonferroni
    level, must lie below the target): the robust construction (k >= 4) and the most robust point's own z shortened to
    :data:`NEGATIVE_SHORTENING` of its norm. The shortened z at each r gives the test's ``resolution``: the largest r
    refuted, together with every smaller r, at every sample of the cell (a point needing a z 1/r times as long, with
    the same profile, is refuted). The raw GD networks (``near_kkt``) are reported beside them, not as controls: they
    are not KKT points, and approach one in direction. Rows of the former kind (raw GD among the controls, no shortened
    z) are read the same way: their raw GD entries go to ``near_kkt``.

    Pitfall avoided: requiring each pair's lower bound to reach ``1 - eps`` fails by construction. The flip norm is
    the smallest norm whose lower bound on the fitting points is ``1 - eps``, so on fresh points even a point's own z
    has a lower bound near 0.88 against 0.90 (FVBS23's quick cells); that test called both cells with pairs not
    transferable where every pair flipped 0.90-0.93 of the fresh points."""
    out = []
    for key, rs in sorted(_by_cell(rows, cell_vars).items()):
        measured = [r.value for r in rs if isinstance(r.value, dict)]
        vals = [v for v in measured if v.get("transfer_pairs")]
        target = float(measured[0]["transfer_target"]) if measured and measured[0].get("transfer_target") is not None else None
        fresh = measured[0].get("fresh_points") if measured else None
        pairs = sum(int(v["transfer_pairs"]) for v in vals)
        level = 0.05 / max(1, pairs)  # the pairs' own level (Bonferroni)

        def ucb_of(fraction: float) -> float | None:
            return upper_confidence(round(fraction * int(fresh)), int(fresh), level) if fresh else None

        controls, near, short, samples = _gather_controls(measured)
        for c in (*controls.values(), *near.values()):
            c["ucb"] = ucb_of(c["fraction"])
            c["failed"] = target is not None and (c["ucb"] < target if c["ucb"] is not None else c["lcb"] < target)
        resolution = None
        if target is not None and fresh and short and all(len(cs) == samples for cs in short.values()):
            for r in sorted(short):
                if not all((u := ucb_of(float(c["fraction"]))) is not None and u < target for c in short[r]):
                    break
                resolution = r
        passed = sorted(k for k, c in controls.items() if not c["failed"])
        withheld = (f"the negative control{'s' if len(passed) > 1 else ''} {', '.join(k.replace('_', ' ') for k in passed)} "
                    f"passed the test (upper bound at or above 1 - eps = {target:g})") if passed and target is not None else None
        own = [v["flip_fresh_lcb"] for v in measured if v.get("flip_fresh_lcb") is not None]
        cell = partial(TransferCell, dict(zip(cell_vars, key)), controls=controls or None, own_lcb=min(own) if own else None,
                       near_kkt=near or None, resolution=resolution, shortenings=tuple(sorted(short)), withheld=withheld,
                       fresh_points=fresh)
        if not vals:
            out.append(cell(0, target=target))
            continue
        target = float(vals[0]["transfer_target"])
        lo = min(v["transfer_min"] for v in vals)
        mean = sum(v["transfer_mean"] * v["transfer_pairs"] for v in vals) / pairs
        lcbs = [v["transfer_lcb"] for v in vals if v.get("transfer_lcb") is not None]
        ucb = None
        if lcbs and fresh:
            ucb = upper_confidence(round(lo * int(fresh)), int(fresh), 0.05 / pairs)
            ok, slack = ucb >= target, None
        else:
            slack = 2 * math.sqrt(target * (1 - target) / tolerance_points)
            ok = lo >= target - slack
        out.append(cell(pairs, lo, mean, target, slack, None if ok and withheld else ok, min(lcbs) if lcbs else None,
                        fraction_ucb=ucb))
    return tuple(out)


def _loose(r: ReadingInput) -> list[str]:
    """Why a bound holds only loosely: its function test found it consistent but not attained (the ratio to the claim's
    function moves significantly away from the bound), with the directions that move."""
    if r.attained is not False:
        return []
    return [f"the ratio to {r.expr or 'the bound'} moves away along {', '.join(r.moving) or 'the grid'}"]


@dataclass(frozen=True)
class ReadingInput:
    """What the reading rule reads of one tested bound: its reading, label, quantity, kind, verdict and fitted terms
    (each with its estimate, decision interval, prediction, margin and the direction it was tested in)."""

    label: str
    quantity: str
    reading: str | None
    kind: str
    verdict: Verdict
    fits: tuple[Mapping, ...]
    attained: bool | None = None  # the function test's: false for a loose bound, true where the ratio is flat or levels off
    expr: str = ""
    moving: tuple[str, ...] = ()  # the directions along which the ratio moves away from the bound

    @classmethod
    def of(cls, r: BoundAnalysis) -> ReadingInput:
        ft = r.analysis.function
        moving = tuple(f"{t.direction} ({t.factor(t.estimate)})" for t in (ft.tests if ft else ())
                       if t.family == "power" and len(t.variables) == 1 and (t.falls if r.kind in UPPER else t.rises)
                       and t.levels != "cannot tell")
        return cls(r.label, r.quantity, r.reading, r.kind, r.analysis.verdict, tuple(r.analysis.fits_json()),
                   ft.attained if ft else None, r.expr, moving)


def decide_reading(results: Sequence[ReadingInput]) -> Reading | None:
    """Which reading of an ambiguous claim the data support, with the evidence of each (None: no readings).

    A reading with an inconsistent bound is rejected. Of the readings left, one whose bounds are all attained
    (the function test's ``attained``: the ratio to the bound flat within its resolution, or levelling off) is
    supported over one that holds only as a loose bound (``attained`` false: the ratio moves significantly away
    from it): the loose reading states a rate the data do not follow. Anything else cannot tell yet, and the record says what would tell them apart."""
    readings: dict[str, list[ReadingInput]] = {}
    for r in results:
        if r.reading:
            readings.setdefault(r.reading, []).append(r)
    if len(readings) < 2:
        return None
    evidence: dict[str, ReadingEvidence] = {}
    for name, rs in readings.items():
        fits = {r.label: list(r.fits) for r in rs}
        loose = tuple(f"{r.quantity}: {x}" for r in rs for x in _loose(r))
        evidence[name] = ReadingEvidence(combine([r.verdict for r in rs]), {r.label: r.verdict for r in rs},
                                         {r.label: {f["variable"]: {"estimate": f["estimate"], "decision_ci": f["decision_ci"],
                                                                    "predicted": f["predicted"]} for f in fits[r.label]} for r in rs},
                                         all(r.attained is True for r in rs), loose)
    alive = [n for n, e in evidence.items() if e.verdict != "inconsistent"]
    decided = all(e.verdict != "inconclusive" for e in evidence.values())
    if not alive and decided:
        return Reading("neither", "every reading has an inconsistent bound", evidence)
    if len(alive) == 1 and decided:
        other = ", ".join(n for n in evidence if n != alive[0])
        return Reading(alive[0], f"{alive[0]} is not refuted (consistent); {other} is refuted (inconsistent)", evidence)
    attained = [n for n in alive if evidence[n].attained and evidence[n].verdict == "consistent"]
    loose_names = [n for n in alive if evidence[n].loose]
    if len(attained) == 1 and set(alive) - set(attained) <= set(loose_names):
        w = attained[0]
        why = "; ".join(f"{n} is not refuted either, but loose: it holds with room ({'; '.join(evidence[n].loose)})"
                        for n in alive if n != w)
        return Reading(w, f"{w} is not refuted and attained (the ratio to each bound flat within its resolution): the stronger "
                          f"statement the data support; {why}", evidence)
    pending = [n for n, e in evidence.items() if e.verdict == "inconclusive"]
    what = (f"a decision on {', '.join(pending)} (more seeds or a larger grid)" if pending else
            "a resolution fine enough that one reading is attained and the other is not")
    return Reading("cannot tell yet", f"the readings differ in their predicted exponents, but {what} would tell them apart", evidence)
