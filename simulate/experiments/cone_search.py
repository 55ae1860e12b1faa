"""The search for more KKT points of (P) on one sample, beyond the GD networks: activation cones.

Takes a sample (clusters: points, labels, clusters and means; or points without clusters) and returns candidate
networks, each certified from scratch (:class:`~ibcheck.simulate.experiments.kkt_certify.CertifiedNetwork`, ``origin``
naming where it came from); the caller de-duplicates them by function with the GD networks
(:attr:`~ibcheck.simulate.experiments.kkt.KKTSample.distinct`).

* ``cone:<family>``: a family's exact cone (:mod:`ibcheck.solvers.kkt.cones`: per-cluster, per-class, mixture, partial);
* ``robust-cone``: the pattern of FVBS23.thm.4_1's network on the sample: the search aimed at large flip norms;
* ``ascent``: local moves between adjacent cluster-level cones aimed at larger flip norms, from the most robust KKT
  point found (:func:`ascent_candidates`): the cluster nearest its wall in an averaging neuron is split off into a
  neuron of its own (less averaging), the new cone is solved and followed like a family's, and the move is kept only
  where it certifies as a new point with a larger flip norm along FVBS23's universal direction;
* data without clusters (VYS22's sphere): ``cone:per-point`` (a neuron per point: the memorizing pattern) and
  ``cone:per-class`` (no ascent: its moves are defined on clusters).

Each cone's own optimum is certified as it is: a KKT point when no wall binds beyond what the ties admit. One that does
not certify (a wall binds: the exact patterns bind the biases) is followed: the cone its binding walls point to is
solved and certified in turn, for at most PROGRAMS programs, stopping early where its function reaches a KKT point
already found (``trace`` says which, ``known_distance`` how near it came). Identical cones (partial = per-cluster at
k = 4, every family at k = 2) are solved once, and the first one's trace names the others.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ibcheck.simulate.experiments.kkt_certify import DISTINCT_RTOL, CertifiedNetwork, _certify, function_distance, function_probes
from ibcheck.solvers.kkt.cones import POINT_FAMILIES, family_cone, point_cone, split_move
from ibcheck.solvers.radius.universal import universal_directions, universal_radius

SEARCH_FAMILIES = ("per-cluster", "per-class", "mixture", "partial")


def _cone_key(D: np.ndarray, s: np.ndarray) -> bytes:
    """A cone up to the order and repetition of its neurons."""
    cols = sorted({(float(sg),) + tuple(int(v) for v in col) for sg, col in zip(s, np.asarray(D).T)})
    return repr(cols).encode()


def _nearest(net, known: list, probes: np.ndarray) -> tuple[int | None, float]:
    """(index, :func:`function_distance`) of the nearest of ``known`` networks on ``probes`` (None, inf: none known)."""
    f = net.forward(probes)
    best: tuple[int | None, float] = (None, float("inf"))
    for i, other in enumerate(known):
        dist = function_distance(f, other.forward(probes))
        if dist < best[1]:
            best = (i, dist)
    return best


def cone_point(X: np.ndarray, y: np.ndarray, D: np.ndarray, s: np.ndarray, origin: str, known: list, probes: np.ndarray,
               programs: int, eps: float, delta: float) -> CertifiedNetwork:
    """The optimum of (P) on the cone (D, s), certified as it is; where it does not certify (a wall binds), the cone its
    binding walls point to, solved and certified in turn, for at most ``programs`` programs in all. Stops when a point
    certifies, when its function reaches one of the ``known`` KKT points (it is heading there: the trace says which),
    or when no wall binds. ``trace`` says which."""
    from ibcheck.solvers.kkt.polish import cone_polish  # heavy: cvxpy (loaded on first use)

    c, g, dist = None, None, float("inf")
    for step in range(1, programs + 1):
        p = cone_polish(X, y, D, s, bias=True, rounds=1)
        if not p.net.width or (y * p.net.forward(X)).min() <= 0:
            return c or CertifiedNetwork(p.net, -1, float("nan"), float("nan"), False, p.solver_status, False, origin=origin,
                                         trace=f"the cone's program ended {p.solver_status}")
        c = replace(_certify(p.net, X, y, -1, step > 1), origin=origin)
        if c.certified(eps, delta):
            return replace(c, trace="the cone's own optimum" if step == 1 else f"the cone's optimum after {step - 1} wall flip(s)")
        g, dist = _nearest(p.net, known, probes)
        if dist <= DISTINCT_RTOL:
            return replace(c, trace=f"{step} program(s): reached known KKT point {g}'s function (not itself certified)",
                           known_distance=dist)
        if p.next_cone is None:
            return replace(c, trace=f"{step} program(s): no wall binds, yet not certified (eps {c.eps:.2g})", known_distance=dist)
        D, s = p.next_cone
    near = f"; nearest known KKT point {g} at relative distance {dist:.2g}" if g is not None else ""
    assert c is not None
    return replace(c, trace=f"not certified after {programs} programs (its walls flipped each time){near}", known_distance=dist)


PROGRAMS = 3  # cone programs (the family's own, then where its walls point) a family gets to reach a KKT point


def cone_candidates(ds, eps: float, delta: float, known: tuple = (), flip_eps: float = 0.1) -> tuple:
    """Every candidate of the search on the cluster sample ``ds`` (see the module docstring), certified at (``eps``,
    ``delta``). ``known``: the KKT points found so far (networks), whose functions a polish may reach (it then stops
    there); ``flip_eps``: the claim's eps, the flip rate 1 - eps the ascent's flip norm is taken at."""
    from ibcheck.solvers.radius.constructions import fvbs23_robust  # heavy: the radius package (loaded on first use)

    if ds.means is None:  # points without clusters (VYS22): the memorizing and the per-class patterns
        cones = [(f"cone:{name}",) + point_cone(name, ds.y) for name in POINT_FAMILIES]
    else:
        labels = np.where(np.isin(np.arange(len(ds.means)), ds.J_plus), 1.0, -1.0)
        robust = fvbs23_robust(ds.means, labels)
        cones = [(f"cone:{name}",) + family_cone(name, ds.cluster, labels) for name in SEARCH_FAMILIES]
        cones.append(("robust-cone",) + family_cone("robust", ds.cluster, labels, robust.preactivations(ds.X)))
    probes = function_probes(ds.X)
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
        c = cone_point(ds.X, ds.y, D, s, origin, found, probes, PROGRAMS, eps, delta)
        if c.certified(eps, delta):
            found.append(c.net)
        out.append(c)
    if ds.means is not None:
        out += ascent_candidates(ds, labels, found, probes, eps, delta, flip_eps)
    return tuple(out)


ASCENT_MOVES = 2  # split moves an ascent tries per sample (each up to PROGRAMS cone programs)


def stored_flip_norm(net, ds, flip_eps: float) -> float:
    """The (1 - flip_eps)-quantile of the flip radii along FVBS23's universal direction over the sample's own points: the
    ascent's objective (cheap; the verdict's flip norms are measured on fresh points, not this)."""
    v = universal_directions("fvbs23", means=ds.means, J_plus=ds.J_plus)
    return float(np.quantile(universal_radius(net, ds.X, ds.y, v), 1.0 - flip_eps))


def ascent_candidates(ds, labels: np.ndarray, found: list, probes: np.ndarray, eps: float, delta: float,
                      flip_eps: float = 0.1, moves: int = ASCENT_MOVES) -> list:
    """Local moves aimed at a larger flip norm (origin ``ascent``), from the most robust of the ``found`` KKT points
    (by :func:`stored_flip_norm`): each move splits the cluster nearest its wall off an averaging neuron
    (:func:`~ibcheck.solvers.kkt.cones.split_move`), solves and follows that cone (:func:`cone_point`), and moves the
    base there only if it certifies as a new point with a larger flip norm; otherwise the next move splits the next
    cluster off the same base. Stops after ``moves`` moves or when no neuron averages two clusters of its class.

    Pitfall avoided: the wall flips alone head to the nearest KKT point, whatever its flip norm; these moves go the
    other way (less averaging) and keep only what raises the flip norm."""
    out: list = []
    if not found:
        return out
    base = max(found, key=lambda n: stored_flip_norm(n, ds, flip_eps))
    best = stored_flip_norm(base, ds, flip_eps)
    tried: set[str] = set()
    for _ in range(moves):
        move = split_move(base.preactivations(ds.X), np.sign(base.a), ds.cluster, labels, tried)
        if move is None:
            break
        D, s, what = move
        tried.add(what)
        c = cone_point(ds.X, ds.y, D, s, "ascent", found, probes, PROGRAMS, eps, delta)
        gain = stored_flip_norm(c.net, ds, flip_eps) if c.certified(eps, delta) else float("nan")
        new = c.certified(eps, delta) and _nearest(c.net, found, probes)[1] > DISTINCT_RTOL
        c = replace(c, trace=f"{what} (flip norm {best:.3g} at the base): {c.trace}"
                    + (f"; a new point, flip norm {gain:.3g}" if new else ""))
        out.append(c)
        if new:
            found.append(c.net)
            if gain > best:
                base, best, tried = c.net, gain, set()
    return out
