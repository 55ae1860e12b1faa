"""The KKT experiment, in one place: the KKT points of (P) on one training sample, the objects FVBS23.thm.4_2 and
VYS22.thm.main speak of, and the measures of both claims on them.

Both theorems are about *every* KKT point of the max-margin problem (P) on the sample. At one (cell, seed) this module
draws the sample once, trains several networks on it from different initializations (loss-based GD on the summed
exponential loss), and hands them to the KKT engine (:func:`ibcheck.solvers.kkt.engine.search`) as starts beside its own
pattern sources (cluster-level cones, GD from per-cluster initializations with biases at several scales and widths).
Every candidate is certified under the engine's one policy (:mod:`ibcheck.solvers.kkt.policy`: a relative residual of
1e-6 at most, ties by the Clarke rule); a near-KKT network is a candidate, never a point, and is never measured. The
distinct points (one same-point test) are what the claims' measures range over.

Pitfall avoided: absolute thresholds would certify or reject a network according to its scale, which a homogeneous
network does not fix; the policy is relative.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from ibcheck.simulate.experiments.base import TrainedNetwork, design
from ibcheck.simulate.substrate.censored import AtLeast, censored_max, encode, largest_radius, scaled
from ibcheck.simulate.substrate.seeds import stream
from ibcheck.solvers.kkt.flip import flip_norm, lower_confidence, most_robust, transfer_flip
from ibcheck.solvers.kkt.policy import POINT_TOL
from ibcheck.solvers.radius.universal import universal_directions, universal_radius
from ibcheck.theory.jsonsafe import plain

NOT_GLOBAL_TOL = 1e-3  # a dual-check lower bound above 1 + this proves a KKT point is not the global optimum


@dataclass(frozen=True)
class KKTSample:
    """The sample, the engine's search on it (:class:`ibcheck.solvers.kkt.engine.KKTSearch`), the GD networks as
    trained (the transfer test's negative control) and how many of them separated the sample."""

    dataset: Any
    search: Any  # KKTSearch
    raw: tuple = ()
    gd_separating: int = 0

    @property
    def points(self) -> tuple:
        """The distinct KKT points (unit margin), in the order the engine found them."""
        return tuple(getattr(self.search, "points"))

    @property
    def candidates(self) -> tuple:
        return tuple(getattr(self.search, "candidates"))

    @cached_property
    def dual_lbs(self) -> list[float]:
        """Per distinct point: a lower bound on the dual check (above 1: certainly not the global optimum of (P))."""
        from ibcheck.solvers.kkt.certificate import kkt_certificate  # heavy: cvxpy (loaded on first use)
        from ibcheck.solvers.kkt.global_opt import dual_lower_bound  # heavy: cvxpy (loaded on first use)

        X, y = getattr(self.dataset, "X"), getattr(self.dataset, "y")
        out = []
        for net in self.points:
            c = kkt_certificate(net, X, y)
            Wt = c.scaled.W if c.scaled.b is None else np.hstack([c.scaled.W, c.scaled.b[:, None]])
            out.append(dual_lower_bound(X, y, c.lam, bias=net.b is not None, starts=Wt, iters=30) if c.lam.size else float("nan"))
        return out

    def record(self, values: list | None = None, quantity: str | None = None) -> dict:
        """The scalars stored with the row: the engine's counts, the distinct points' values of (P), every candidate
        (origin, programs, trace, residuals, the distinct point it is) and, given ``values`` per distinct point, each
        candidate's ``quantity`` (that of its point; None when it is not a point)."""
        cands = self.candidates
        ok = [c for c in cands if c.certified]
        lbs = self.dual_lbs
        nets = []
        for c in cands:
            n = {"origin": c.origin, "trace": c.trace, "point": c.point, "programs": c.programs, "known_distance": c.known_distance,
                 "eps": c.residual, "delta": c.slackness, "feasible": c.solver_status != "not feasible", "solver_status": c.solver_status,
                 "polished": c.programs > 1, "ties": c.ties, "value": c.value}
            if quantity is not None and values is not None:
                n[quantity] = encode(values[c.point]) if c.point is not None else None
            nets.append(n)
        search = self.search
        return {"kkt_trained": len(cands), "kkt_certified": len(ok), "kkt_distinct": len(self.points),
                "kkt_n": int(len(self.dataset.X)),  # the cell's own n (the class of its depth record: solvers.kkt.depth)
                "kkt_data": str(getattr(self.dataset, "kind", "clusters")),  # ... and this kind of data (clusters, sphere)
                "kkt_values": [float(v) for v in getattr(search, "values")],
                "kkt_not_global": sum(lb > 1 + NOT_GLOBAL_TOL for lb in lbs), "kkt_dual_lb": lbs,
                "kkt_eps": max((c.residual for c in ok), default=None), "kkt_delta": None,
                "kkt_delta_note": "not reported: multipliers only on points with q_i <= 1 + 1e-6 (delta <= 1e-6 by construction)",
                "kkt_eps_threshold": POINT_TOL, "kkt_delta_threshold": POINT_TOL,
                "kkt_polished": sum(c.programs > 1 for c in cands), "kkt_ties": [c.ties for c in ok],
                "kkt_complete": bool(getattr(search, "complete")), "kkt_planned": int(getattr(search, "planned")),
                "kkt_budget": getattr(search, "budget").as_json(), "kkt_seconds": float(getattr(search, "seconds")),
                # Good-Turing: the chance one more GD start reaches a new point (GD's own reach, not the engine's recall)
                "kkt_gd_unseen": plain(float(getattr(search, "unseen", float("nan")))),
                "kkt_stop": str(getattr(search, "stop", "")), "kkt_gd_starts": int(getattr(search, "gd_starts", 0)),
                # per start, every source, in search order: the largest objective (the claim's measure) over the points
                # found so far, the point each start reached and its source (the record rule is read again from these)
                "kkt_running_max": [plain(float(x)) for x in getattr(search, "running_max", ())],
                "kkt_order": [None if p is None else int(p) for p in getattr(search, "order", ())],
                "kkt_sources": list(getattr(search, "sources", ())),
                "kkt_families": [int(f) for f in getattr(search, "families", ())],
                "kkt_records": dict(search.records()) if hasattr(search, "records") else {},
                "kkt_last_record": search.last_record() if hasattr(search, "last_record") else None,
                "kkt_skipped": int(getattr(search, "skipped", 0)),
                "kkt_gd_separating": self.gd_separating, "kkt_networks": nets}


class UncertifiedSample(RuntimeError):
    """No KKT point was found on the sample: the row fails with this reason, never fitted."""


def _two_layer_gd(cell, seed, kind, networks: int = 1, width: int | None = None, init_scale: float | None = None,
                  seed0: int | None = None):
    """``networks`` two-layer networks trained by loss-based GD from different initializations (init seeds
    ``seed * networks + i``, distinct across samples, or from ``seed0``) on the one sample of ``seed``: the Run.
    ``width`` and ``init_scale`` replace the design's (the search's GD at another width and init)."""
    from ibcheck.simulate.substrate.models import ModelConfig  # heavy: torch (loaded on first use)
    from ibcheck.simulate.substrate.trainer import TrainConfig  # heavy: torch (loaded on first use)
    from ibcheck.simulate.substrate.training import DataConfig, RunConfig, run  # heavy: torch (loaded on first use)

    p = design(TrainedNetwork, cell)
    k = int(cell.get("k", p.k))  # a grid variable where the experiment sweeps it
    n = int(cell["n"]) if "n" in cell else p.n_per_cluster * k
    cfg = RunConfig(setting="two-layer", data=DataConfig(kind=kind, d=int(cell["d"]), k=k, n=n, sigma=1.0, seed=seed, n_test=10),
                    model=ModelConfig("two-layer", width=width or p.width, init_scale=init_scale or p.init_scale),
                    train=TrainConfig(steps=p.steps, lr=p.lr, loss="exp", reduction="sum", schedule="loss-based",
                                      target_log10_loss=p.target_log10_loss, progress=False), seeds=networks,
                    seed0=seed * networks if seed0 is None else seed0)
    return run(cfg)


def search_budget(p: TrainedNetwork):
    """The engine's budget for a design: ``kkt_gd`` GD starts of ``kkt_steps`` steps, then more up to ``kkt_gd_max``
    while the Good-Turing unseen estimate is above ``kkt_saturation``, ``kkt_programs`` cone programs per pattern, every
    partition cone up to ``kkt_enumerate`` of them."""
    from ibcheck.solvers.kkt.engine import Budget  # heavy: cvxpy (loaded on first use)

    return Budget(gd=p.kkt_gd, gd_steps=p.kkt_steps, programs=p.kkt_programs, enumerate=p.kkt_enumerate,
                  gd_max=p.kkt_gd_max, saturation=p.kkt_saturation, starts_max=p.kkt_starts_max, ascent=p.kkt_ascent)


def trained_starts(cell: dict, seed: int, kind: str, networks: int):
    """(the run, its sample, the starts): ``networks`` networks trained by GD on the sample of ``seed`` at ``cell``, and
    those that separate it as the engine's given starts, named ``gd seed s`` (what a comparison's search starts from;
    ``bench/kkt_recall.py --depth`` starts its searches from the same)."""
    run = _two_layer_gd(cell, seed, kind, networks)
    ds = run.datasets[0]
    starts = tuple((f"gd seed {summ['seed']}", net) for net, summ in zip(run.networks, run.summary) if summ["train_accuracy"] >= 1.0)
    return run, ds, starts


def kkt_sample(cell: dict, seed: int, kind: str, networks: int) -> KKTSample:
    """The sample of ``seed`` at ``cell`` with ``networks`` networks trained on it by GD, and the KKT engine's search on
    it, started from those networks (the ones that separate the sample) beside its own pattern sources."""
    from ibcheck.solvers.kkt.engine import search  # heavy: cvxpy (loaded on first use)

    p = design(TrainedNetwork, cell)
    run, ds, starts = trained_starts(cell, seed, kind, networks)
    cluster = getattr(ds, "cluster", None) if getattr(ds, "means", None) is not None else None
    # the record rule and the moves watch the claim's own quantity: FVBS23's flip norm on the sample's fitting points
    # (the measure itself), VYS22's norm that flips every training point
    objective = flip_objective(ds, p.eps, seed) if cluster is not None else vys22_objective(ds)
    result = search(ds.X, ds.y, cluster, starts, search_budget(p), seed=seed, objective=objective)
    return KKTSample(ds, result, tuple(run.networks), len(starts))


def flip_objective(ds, eps: float, seed: int):
    """FVBS23.thm.4_2's flip norm of a network as the claim's measure takes it: along ``-y v``, flipping ``1 - eps`` of
    the sample's FIT_POINTS fitting points (stream ``claim-measure``) with 95% confidence (a censored norm at its bound):
    the KKT search's objective (its record rule and moves)."""
    v = universal_directions("fvbs23", means=ds.means, J_plus=ds.J_plus)
    X, y = ds.sample(FIT_POINTS, stream("claim-measure", seed, 4))

    def objective(net) -> float:
        return flip_norm(universal_radius(net, X, y, v), 1 - eps)[0]
    return objective


def vys22_objective(ds):
    """VYS22.thm.main's measure of a network: the norm along its ``v`` that flips every training point (a censored one at
    its bound): the KKT search's objective on the sphere."""
    v = universal_directions("vys22", X_train=ds.X, y_train=ds.y)

    def objective(net) -> float:
        r = largest_radius(universal_radius(net, ds.X, ds.y, v))
        return float(getattr(r, "value", r))
    return objective


FIT_POINTS = 2000  # fresh points the flip norm is chosen on
FRESH_POINTS = 2000  # independent fresh points every flip rate is measured on


def point_norms(points, X, y, v, q: float) -> list:
    """Per distinct KKT point (``points``: networks): the norm along ``-y v`` that flips at least ``q`` of the points'
    distribution with 95% confidence (:func:`ibcheck.solvers.kkt.flip.flip_norm` over (X, y); censored: ``AtLeast``)."""
    out = []
    for net in points:
        eta, censored = flip_norm(universal_radius(net, X, y, v), q)
        out.append(AtLeast(eta) if censored else eta)
    return out


def _largest(norms: list):
    if not norms:
        raise UncertifiedSample("the KKT engine found no KKT point of (P) on this sample (no candidate certified at a "
                                f"relative residual of {POINT_TOL:g})")
    return censored_max(norms)


def kkt_row(sample: KKTSample, norms: list, quantity: str) -> dict:
    """The row of a KKT claim: the largest ``quantity`` over the distinct KKT points (never a candidate), the spread of
    the points' values, and the engine's record. Raises :class:`UncertifiedSample` when there is no point."""
    value = _largest(norms)
    rec = sample.record(norms, quantity)
    exact = [float(x) for x in norms if not isinstance(x, AtLeast)]
    rec["kkt_flip_norms"] = [encode(x) for x in norms]
    rec["kkt_flip_spread"] = (max(exact) / min(exact)) if len(exact) >= 2 and min(exact) > 0 else None
    return {quantity: value, **rec}


def transfer_pairs(sample: KKTSample, X, y, v, norms: list) -> list[tuple[float, float]]:
    """FVBS23.thm.4_2, "transferable": the z of the most robust distinct point (the largest flip norm; it flips at least
    1 - eps of the distribution on that point) applied to every other distinct point: per other point, (fraction of
    (X, y) flipped, its one-sided 95% lower bound). With fewer than two distinct points there is no pair.

    Pitfall avoided: testing a less robust point's z on a more robust point fails by construction (its norm is below
    what the other point needs); the theorem's z is one norm for every KKT point."""
    top = _most_robust_point(norms)
    if top is None or len(sample.points) < 2:
        return []
    i0, eta = top
    return [transfer_flip(net, X, y, v, eta) for j, net in enumerate(sample.points) if j != i0]


def _most_robust_point(norms: list) -> tuple[int, float] | None:
    """(index, flip norm) of the most robust distinct point among the uncensored norms (:func:`most_robust`), or None."""
    known = [(i, float(x)) for i, x in enumerate(norms) if not isinstance(x, AtLeast)]
    top = most_robust([(x, False) for _, x in known])
    return None if top is None else known[top]


SHORTENED = (0.5, 0.8, 0.9, 0.95, 0.98, 0.99)  # the most robust point's own z at r eta: the transfer test's resolution


def transfer_controls(sample: KKTSample, X, y, v, norms: list, k: int) -> dict:
    """The transfer test's controls on fresh points (X, y), each under the z of the most robust distinct point, eta v:

    - ``transfer_controls``, the negative controls, which must fail the test (significantly below 1 - eps: its upper
      bound below it, :func:`ibcheck.simulate.verdict.kkt.transfer_cells`): the robust construction (FVBS23.thm.4_1;
      at k >= 4, where it is robust beyond that z);
    - ``transfer_shortened``: the most robust point itself under r eta v for r in :data:`SHORTENED` (fraction and lower
      bound per r). At r = 0.5 it is a negative control at the points' own scale; the largest r the test refutes is its
      resolution (a point that needs a z 1/r times as long, with the same profile, is refuted);
    - ``transfer_near_kkt``: the raw GD networks the points were polished from. They are not KKT points and not
      controls: GD approaches a KKT point in direction, so they may transfer as the point does, and are reported only.

    Pitfall avoided: the raw GD networks were the second negative control, and passed the test at 3 of 11 cells
    (upper bounds 0.913-0.962 against 0.90). A control that is expected to pass shows nothing about the test's power;
    the shortened z is one whose truth is known (its own z, made shorter)."""
    from ibcheck.solvers.radius.constructions import fvbs23_robust  # heavy: the radius package (loaded on first use)

    top = _most_robust_point(norms)
    if top is None:
        return {}
    i0, eta = top
    ds = sample.dataset
    controls = {}
    if k >= 4:
        labels = np.where(np.isin(np.arange(len(ds.means)), ds.J_plus), 1.0, -1.0)
        controls["robust_construction"] = transfer_flip(fvbs23_robust(ds.means, labels), X, y, v, eta)
    near = {f"raw_gd_{i}": transfer_flip(raw, X, y, v, eta) for i, raw in enumerate(sample.raw)}
    shortened = [(r, *transfer_flip(sample.points[i0], X, y, v, r * eta)) for r in SHORTENED]
    return {"transfer_controls": {name: {"fraction": f, "lcb": lcb} for name, (f, lcb) in controls.items()},
            "transfer_near_kkt": {name: {"fraction": f, "lcb": lcb} for name, (f, lcb) in near.items()},
            "transfer_shortened": [{"r": r, "fraction": f, "lcb": lcb} for r, f, lcb in shortened]}


def measure_fvbs23_4_2(cell: dict, seed: int) -> dict:
    """FVBS23.thm.4_2 on its own objects: the distinct KKT points of (P) on one sample (the engine's search); the
    largest over them of the norm of ``z = eta sum_j y^(j) mu^(j)`` that flips >= 1 - eps of the distribution (95%
    confidence), each point's own, the spread, and how the most robust point's z transfers to every other point."""
    p = design(TrainedNetwork, cell)
    sample = kkt_sample(cell, seed, "clusters", p.networks)
    ds = sample.dataset
    X, y = ds.sample(FIT_POINTS, stream("claim-measure", seed, 4))
    Xf, yf = ds.sample(FRESH_POINTS, stream("kkt-test-points", seed, 4))  # independent: every rate is measured here
    v = universal_directions("fvbs23", means=ds.means, J_plus=ds.J_plus)
    norms = point_norms(sample.points, X, y, v, 1 - p.eps)
    row = kkt_row(sample, norms, "universal_flip_norm")
    own = [transfer_flip(net, Xf, yf, v, float(x)) for net, x in zip(sample.points, norms) if not isinstance(x, AtLeast)]
    pairs = transfer_pairs(sample, Xf, yf, v, norms)
    fr = [f for f, _ in pairs]
    row.update({"transfer_min": min(fr) if fr else None, "transfer_mean": float(np.mean(fr)) if fr else None,
                "transfer_pairs": len(fr), "transfer_target": 1 - p.eps, "transfer_lcb": min((lcb for _, lcb in pairs), default=None),
                "transfer_from": "the most robust distinct point's z, on every other distinct point",
                "fresh_points": FRESH_POINTS, "flip_fresh_min": min((f for f, _ in own), default=None),
                "flip_fresh_lcb": min((lcb for _, lcb in own), default=None),
                **transfer_controls(sample, Xf, yf, v, norms, int(cell.get("k", p.k)))})
    Xe, ye = ds.sample(FRESH_POINTS, stream("kkt-test-error", seed, 4))  # FVBS23.thm.3_1: its own fresh points
    row.update(kkt_test_errors(sample, Xe, ye))
    G = ds.means @ ds.means.T
    np.fill_diagonal(G, 0.0)
    row["max_mean_ip"] = float(np.abs(G).max())  # Assumption 2.2 (A1) is decided on the sample's own means
    return row


def kkt_test_errors(sample: KKTSample, X: np.ndarray, y: np.ndarray) -> dict:
    """FVBS23.thm.3_1 on a sample: the errors of each distinct KKT point on the fresh points (X, y) (counts, so a
    binomial bound can be put on each), and the worst point's: ``test_error`` (its rate), ``test_error_count``,
    ``test_points``."""
    errs = [int(np.sum(np.sign(net.forward(X)) != y)) for net in sample.points]
    worst = max(errs, default=None)
    return {"kkt_test_errors": errs, "test_error_count": worst, "test_points": len(y),
            "test_error": None if worst is None else worst / len(y)}


def measure_vys22(cell: dict, seed: int) -> dict:
    """VYS22.thm.main on its own objects: the distinct KKT points of (P) on one sample on the sphere; the largest over
    them of the norm (and eta) of ``delta = eta sum_i y_i x_i`` that flips every training point."""
    sample = kkt_sample(cell, seed, "sphere", design(TrainedNetwork, cell).networks)
    ds = sample.dataset
    v_raw = (ds.y[:, None] * ds.X).sum(0)
    v = universal_directions("vys22", X_train=ds.X, y_train=ds.y)
    norms = [largest_radius(universal_radius(net, ds.X, ds.y, v)) for net in sample.points]
    row = kkt_row(sample, norms, "universal_flip_norm")
    scale = 1 / float(np.linalg.norm(v_raw))
    for net in row["kkt_networks"]:  # eta per network too: the verdict at other thresholds re-reads both
        net["universal_flip_eta"] = None if net["point"] is None else encode(scaled(norms[net["point"]], scale))
    G = ds.X @ ds.X.T
    np.fill_diagonal(G, 0)
    return {**row, "universal_flip_eta": scaled(row["universal_flip_norm"], scale), "max_ip": float(np.abs(G).max())}


__all__ = ["KKTSample", "UncertifiedSample", "kkt_sample", "measure_fvbs23_4_2", "measure_vys22", "lower_confidence"]
