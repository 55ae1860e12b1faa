"""Every requested radius of one network at the points, each method feeding the next.

The universal direction gives a first verified upper bound; the attacks (DeepFool, DDN) tighten
it; the certified lower bounds use the best upper bound as their search range; the exact solver
closes the bracket where it can within its time limit.
"""
from __future__ import annotations

from typing import Literal

import numpy as np

from .attack import attack_local
from .certified import certified_local
from .exact import exact_local
from .ray import ray_local
from .units import localize

Method = Literal["universal", "attack", "certified", "exact"]
METHODS: tuple[Method, ...] = ("universal", "attack", "certified", "exact")


def compute_radii(net, X: np.ndarray, y: np.ndarray, v: np.ndarray, methods: tuple[str, ...], time_limit: float) -> dict[str, np.ndarray]:
    """Per-point radii: ``universal`` (along ``v``), ``attack``, ``certified``, ``exact_lower``/``exact_upper``
    (and ``exact_proven``, ``exact_status``), and ``upper``, the best verified upper bound.

    Pitfall avoided: an attack can miss a flip that the universal direction finds, so the reported
    attack bound is the minimum of both; a lower bound is never computed past a known upper one. Every method solves
    each point's problem in the point's own units (:class:`.units.Local`: the point at the origin, its pre-activations
    computed column by column with rounding bounds, lengths scaled by a power of two) and scales its radius back, so
    that the radii of ``c X`` are ``c`` times those of X and a column of X far below another keeps its digits (before:
    at X x 1e-200 the universal radius was 0 for every point, below its own certified bound; at X x 1e200 every radius
    was inf; at ``X x [1e-200, 1e200]`` every radius was an "exact" 0)."""
    X = np.atleast_2d(np.asarray(X, float))
    y = np.asarray(y, float)
    loc = localize(net, X, y)
    out: dict[str, np.ndarray] = {"universal": ray_local(loc, -y[:, None] * np.asarray(v, float)[None, :])}
    upper = out["universal"]
    if "attack" in methods or "exact" in methods:
        att = attack_local(loc)
        out.update({k: att[k] for k in att if k != "attack"})
        out["attack"] = np.minimum(att["attack"], out["universal"])
        upper = out["attack"]
    out["upper"] = upper
    if "certified" in methods or "exact" in methods:
        out["certified"] = certified_local(loc, upper)
    if "exact" in methods:
        res = exact_local(loc, upper, out["certified"], time_limit)
        out["exact_lower"] = np.array([r.lower for r in res])
        out["exact_upper"] = np.array([r.upper for r in res])
        out["exact_proven"] = np.array([r.exact for r in res])
        out["exact_status"] = np.array([r.status for r in res])
        _enforce_bracket(out)
    return out


def _enforce_bracket(out: dict[str, np.ndarray], rtol: float = 1e-6) -> None:
    """certified <= exact <= best upper bound on every point, or the point is not proven: an
    "optimal" value outside the bracket is a solver error, and the point keeps the bracket."""
    cert, up = out["certified"], out["upper"]
    lo, hi, proven = out["exact_lower"], out["exact_upper"], out["exact_proven"]
    scale = np.maximum(np.abs(up), np.abs(cert))
    bad = proven & ((hi < cert - rtol * scale) | (hi > up + rtol * scale))
    if bad.any():
        out["exact_proven"] = proven & ~bad
        out["exact_lower"] = np.where(bad, cert, np.maximum(lo, cert))
        out["exact_upper"] = np.where(bad, up, np.minimum(hi, up))
        out["exact_status"] = np.where(bad, "solver value outside [certified, attack]: not proven", out["exact_status"])
