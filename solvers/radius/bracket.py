"""Every requested radius of one network at the points, each method feeding the next.

The universal direction gives a first verified upper bound; the attacks (DeepFool, DDN) tighten
it; the certified lower bounds use the best upper bound as their search range; the exact solver
closes the bracket where it can within its time limit.
"""
from __future__ import annotations

from typing import Literal

import numpy as np

from ..networks import classifier_normalized
from .attack import attack_radius
from .certified import certified_radius
from .exact import exact_radius
from .units import rescaled, scaled_back
from .universal import universal_radius

Method = Literal["universal", "attack", "certified", "exact"]
METHODS: tuple[Method, ...] = ("universal", "attack", "certified", "exact")


def compute_radii(net, X: np.ndarray, y: np.ndarray, v: np.ndarray, methods: tuple[str, ...], time_limit: float) -> dict[str, np.ndarray]:
    """Per-point radii: ``universal`` (along ``v``), ``attack``, ``certified``, ``exact_lower``/``exact_upper``
    (and ``exact_proven``, ``exact_status``), and ``upper``, the best verified upper bound.

    Pitfall avoided: an attack can miss a flip that the universal direction finds, so the reported
    attack bound is the minimum of both; a lower bound is never computed past a known upper one. Every method runs
    in normalized units (:mod:`.units`: X at unit scale, the network rewritten for it) and every radius is scaled back,
    so that the radii of ``c X`` are ``c`` times those of X (before: at X x 1e-200 the universal radius was 0 for every
    point, below its own certified bound; at X x 1e200 every radius was inf)."""
    net, Xs, e, _ = rescaled(net, np.atleast_2d(np.asarray(X, float)))
    out = _compute_unit(classifier_normalized(net), Xs, np.asarray(y, float), v, methods, time_limit)
    return {k: (scaled_back(val, e) if k not in ("exact_proven", "exact_status") else val) for k, val in out.items()}


def _compute_unit(net, X: np.ndarray, y: np.ndarray, v: np.ndarray, methods: tuple[str, ...], time_limit: float) -> dict[str, np.ndarray]:
    """:func:`compute_radii` at unit scale (radii depend on sign(f) only: the solvers see a scale-free network)."""
    out: dict[str, np.ndarray] = {"universal": universal_radius(net, X, y, v)}
    upper = out["universal"]
    if "attack" in methods or "exact" in methods:
        att = attack_radius(net, X, y)
        out.update({k: att[k] for k in att if k != "attack"})
        out["attack"] = np.minimum(att["attack"], out["universal"])
        upper = out["attack"]
    out["upper"] = upper
    if "certified" in methods or "exact" in methods:
        out["certified"] = certified_radius(net, X, y, upper)
    if "exact" in methods:
        res = exact_radius(net, X, y, upper, out["certified"], time_limit)
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
