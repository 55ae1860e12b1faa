"""The search for more KKT points of (P) on one cluster sample, beyond the GD networks: activation cones.

Takes a sample (clusters: its points, labels, clusters and means) and returns candidate networks, each
certified from scratch (:class:`~ibcheck.simulate.experiments.kkt.CertifiedNetwork`, ``origin`` naming
where it came from); the caller de-duplicates them by function with the GD networks
(:attr:`~ibcheck.simulate.experiments.kkt.KKTSample.distinct`).

* ``cone:<family>``: the optimum of (P) on a family's exact cone (:mod:`ibcheck.solvers.kkt.cones`:
  per-cluster, per-class, mixture, partial), solved once, never flipped. It is a KKT point when no wall
  binds beyond what the ties admit; a family whose optimum fails its certificate says so (its eps and ties
  stay in the record): that cone holds no KKT point.
* ``robust-cone``: the pattern of FVBS23.thm.4_1's network on the sample: the search aimed at large flip norms.

A cone whose own optimum does not certify (a wall binds: the exact patterns bind the biases) is polished: its walls
flipped, two programs a step, certified after each, for at most POLISH_STEPS steps, stopping early where its function
reaches a KKT point already found (``trace`` says which). Identical cones (partial = per-cluster at k = 4, every family
at k = 2) are solved once.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ibcheck.simulate.experiments.kkt_certify import DISTINCT_RTOL, CertifiedNetwork, _certify
from ibcheck.solvers.kkt.cones import family_cone

SEARCH_FAMILIES = ("per-cluster", "per-class", "mixture", "partial")


def _cone_key(D: np.ndarray, s: np.ndarray) -> bytes:
    """A cone up to the order and repetition of its neurons."""
    cols = sorted({(float(sg),) + tuple(int(v) for v in col) for sg, col in zip(s, np.asarray(D).T)})
    return repr(cols).encode()


def fixed_cone(X: np.ndarray, y: np.ndarray, D: np.ndarray, s: np.ndarray, origin: str):
    """The optimum of (P) on the cone (D, s), certified as it is (no flips): a CertifiedNetwork with ``origin``."""
    from ibcheck.solvers.kkt.polish import cone_polish  # heavy: cvxpy (loaded on first use)

    p = cone_polish(X, y, D, s, bias=True, rounds=1)
    if not p.net.width or (y * p.net.forward(X)).min() <= 0:
        return CertifiedNetwork(p.net, -1, float("nan"), float("nan"), False, p.solver_status, False, origin=origin,
                                trace=f"the cone's program ended {p.solver_status}")
    return replace(_certify(p.net, X, y, -1, False), origin=origin, trace="the cone's own optimum")


def _nearest(net, known: list, probes: np.ndarray) -> tuple[int | None, float]:
    """(index, distance) of the nearest of ``known`` networks by outputs on ``probes``, the distance relative to that
    network's largest output (None, inf: nothing known)."""
    f = net.forward(probes)
    best: tuple[int | None, float] = (None, float("inf"))
    for i, other in enumerate(known):
        ref = other.forward(probes)
        dist = float(np.max(np.abs(f - ref))) / max(float(np.max(np.abs(ref))), 1e-300)
        if dist < best[1]:
            best = (i, dist)
    return best


def polish_from(cand, X: np.ndarray, y: np.ndarray, known: list, probes: np.ndarray, steps: int, eps: float, delta: float):
    """Polish an uncertified cone optimum (two programs a step: the cone, then its walls flipped), certifying after each
    step; stop when it certifies, when its function reaches one of the ``known`` KKT points (it is heading there: the
    trace says which), or after ``steps``."""
    from ibcheck.solvers.kkt.polish import pattern_polish  # heavy: cvxpy (loaded on first use)

    net = cand.net
    for step in range(1, steps + 1):
        p = pattern_polish(net, X, y, rounds=2)
        if p.net is net:
            return replace(cand, trace=f"the polish's program failed ({p.solver_status}) at step {step}")
        net = p.net
        c = replace(_certify(net, X, y, -1, True), origin=cand.origin)
        if c.certified(eps, delta):
            return replace(c, trace=f"the cone's optimum, polished {step} step(s)")
        g, dist = _nearest(net, known, probes)
        if dist <= DISTINCT_RTOL:
            return replace(c, trace=f"polished {step} step(s) into known KKT point {g}'s function (not itself certified)")
    near = f"; nearest known KKT point {g} at relative distance {dist:.2g}" if g is not None else ""
    return replace(c, trace=f"not certified after {steps} polish steps{near}")


POLISH_STEPS = 4  # polish steps (two programs each) a family's cone optimum gets to certify


def cone_candidates(ds, eps: float, delta: float, known: tuple = ()) -> tuple:
    """Every candidate of the search on the cluster sample ``ds`` (see the module docstring), certified. ``known``: the
    KKT points found so far (networks), whose functions a polish may reach (it then stops there)."""
    from ibcheck.solvers.radius.constructions import fvbs23_robust  # heavy: the radius package (loaded on first use)

    labels = np.where(np.isin(np.arange(len(ds.means)), ds.J_plus), 1.0, -1.0)
    robust = fvbs23_robust(ds.means, labels)
    cones = [(f"cone:{name}",) + family_cone(name, ds.cluster, labels) for name in SEARCH_FAMILIES]
    cones.append(("robust-cone",) + family_cone("robust", ds.cluster, labels, robust.preactivations(ds.X)))
    probes = np.vstack([ds.X, np.random.default_rng(0).standard_normal(ds.X.shape) * float(np.sqrt(np.mean(ds.X * ds.X)))])
    found = list(known)
    seen: dict[bytes, int] = {}
    out: list = []
    for origin, D, s in cones:
        key = _cone_key(D, s)
        if key in seen:  # the same convex program: said, not solved again
            i = seen[key]
            out[i] = replace(out[i], trace=f"{out[i].trace} (also the cone of {origin})")
            continue
        seen[key] = len(out)
        c = fixed_cone(ds.X, ds.y, D, s, origin)
        if not c.certified(eps, delta) and c.net.width:
            c = polish_from(c, ds.X, ds.y, found, probes, POLISH_STEPS, eps, delta)
        if c.certified(eps, delta):
            found.append(c.net)
        out.append(c)
    return tuple(out)
