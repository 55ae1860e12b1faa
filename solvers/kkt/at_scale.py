"""The KKT engine on features far below unit scale: the search at unit scale, each point it finds continued to the
user's scale and certified there in extended precision (:mod:`.extended`).

Takes the data (X, y, optionally each point's cluster) at scale about 2^e (e < 0), the engine's starts, budget, seed,
progress callbacks and objective; returns the engine's :class:`.engine.KKTSearch` whose candidates and points are the
continued ones (on the user's data, each certified or not), its notes saying how they were found.

Why: (P) with hidden biases on ``X 2^e`` is (P) on ``X`` with the bias's cost weighted by 4^e (:mod:`.extended`), a
different problem from (P) on ``X`` for each e; the engine's cone programs at 2^-98 all ended infeasible, and float64
cannot show a certificate below about 2^-32. The search's sources (GD, cover starts, cones, the record rule) run on
``X`` (the problem at lam = 1), and its points are carried to lam = 4^e along their faces: points of (P) at 2^e that
no unit point continues to are not found, so the result says "more may exist" as every search does.
"""
from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from ..networks import TwoLayerReLU
from .engine import Budget, Candidate, KKTSearch, search
from .extended import EXTENDED, continue_to_scale, digits_for
from .policy import POINT_TOL, distinct_groups, function_probes
from .records import families


class ContinuedCandidate(Candidate):
    """A unit point continued to the data's scale: certified by the extended certificate (status EXTENDED) under the
    policy's tolerance. (The engine's own Candidate, whose code the recall's fingerprint covers, is left as it is.)"""

    @property
    def certified(self) -> bool:
        return self.solver_status == EXTENDED and self.residual <= POINT_TOL and self.slackness <= POINT_TOL


def _to_unit(net: TwoLayerReLU, e: int) -> TwoLayerReLU:
    """A network on ``X 2^e`` as the same function on ``X``: W times 2^e (exact)."""
    return TwoLayerReLU(W=np.ldexp(net.W, e), a=net.a, b=net.b, trained=net.trained)


def _from_unit(net: TwoLayerReLU, e: int) -> TwoLayerReLU:
    """A network on ``X`` as the same function on ``X 2^e``: W times 2^-e (exact)."""
    return TwoLayerReLU(W=np.ldexp(net.W, -e), a=net.a, b=net.b, trained=net.trained)


def search_at_scale(X: np.ndarray, y: np.ndarray, e: int, cluster: np.ndarray | None = None, starts: tuple = (),
                    budget: Budget = Budget(), seed: int = 0, progress=None, objective=None, status=None) -> KKTSearch:
    """(P)'s KKT points on ``X`` (features at about 2^e, e < 0) by the engine at unit scale and the continuation (the
    module docstring). ``objective`` is a function of a network on ``X`` (the record rule ranks each unit point by the
    same function's objective on ``X``). The budget's time cap bounds the search and the continuations together."""
    X = np.asarray(X, float)
    t0 = time.perf_counter()
    deadline = None if budget.seconds is None else t0 + budget.seconds
    Xu = np.ldexp(X, -e)
    obj = None if objective is None else (lambda net: objective(_from_unit(net, e)))
    res = search(Xu, y, cluster, tuple((name, _to_unit(net, e)) for name, net in starts), budget, seed=seed,
                 progress=progress, objective=obj, status=status)
    cands: list[ContinuedCandidate] = []
    for p, net in enumerate(res.points):
        sp = continue_to_scale(net, Xu, y, X, e, deadline)
        shown = sp.net if sp.net is not None else _from_unit(net, e)
        cands.append(ContinuedCandidate(origin=f"continued unit point {p}", net=shown, residual=sp.residual, slackness=sp.slackness,
                               solver_status=EXTENDED if sp.certified else ("not certified (extended precision)" if sp.net is not None
                                                                           else "not continued"), programs=0,
                               trace=sp.trace, value=sp.value, ties=sp.ties))
    ok = [i for i, c in enumerate(cands) if c.certified]
    probes = function_probes(X, seed)
    groups = distinct_groups([cands[i].net for i in ok], probes)
    point_of: dict[int, int] = {}
    for g, members in enumerate(groups):
        for i in members:
            point_of[ok[i]] = g
    cands = [replace(c, point=point_of.get(i)) for i, c in enumerate(cands)]
    points = tuple(cands[ok[g[0]]].net for g in groups)
    note = (f"the features' scale is about 2^{e}: the search ran on X 2^{-e} ((P) with the bias's cost weighted by 1 instead "
            f"of 4^{e}: a different problem), and each of its {len(res.points)} point(s) was followed to 4^{e} on its face and "
            f"certified in (P)'s own units on the data as given, in {digits_for(e)}-digit arithmetic: {len(ok)} certified, "
            f"{len(points)} distinct; the networks are their float64 roundings (float64 cannot itself show a certificate "
            "below about 2^-32)")
    order = tuple(None if p is None or p not in point_of else point_of[p] for p in res.order)
    return replace(res, candidates=tuple(cands), points=points, values=tuple(cands[ok[g[0]]].value for g in groups),
                   families=tuple(families(points, X)) if points else (), order=order, notes=res.notes + (note,))
