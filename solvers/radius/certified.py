"""Certified lower bounds on the l2 radius.

* SOK17.lemma.lipschitz_radius: ``r(x) >= q(x) / beta`` with beta a Lipschitz constant of
  ``f`` in x: ``min(sum_j |a_j| ||w_j||, ||W||_2 ||a||_2)`` for a two-layer ReLU network.
* A tighter bound for two layers: over the ball ``||delta|| <= eps`` the pre-activations lie
  exactly in ``[h_j - eps ||w_j||, h_j + eps ||w_j||]``. Each unstable ReLU is replaced by a
  linear lower (``alpha z``) or upper (``u (z - l) / (u - l)``) bound according to the sign
  of its output weight, which makes ``q`` bounded below by an affine function of delta,
  minimized in closed form over the ball. The largest certified eps is found by bisection,
  vectorised over points.

Every radius is computed at each point in its own units (:class:`.units.Local`) and scaled back, so that it scales
with X and with each of its columns; the rounding of the margins and pre-activations is subtracted, so that a bound
is a bound (0 where the margin is not proven positive).
"""
from __future__ import annotations

import numpy as np

from ..networks import LinearClassifier, TwoLayerReLU
from .units import ULP, Local, localize


def lipschitz_constant(net) -> float:
    """An l2 Lipschitz constant of ``x -> f(x)``."""
    if isinstance(net, LinearClassifier):
        return float(np.linalg.norm(net.w))
    if isinstance(net, TwoLayerReLU):
        rows = np.linalg.norm(net.W, axis=1)
        return float(min(np.abs(net.a) @ rows, np.linalg.norm(net.W, 2) * np.linalg.norm(net.a)))
    raise TypeError(f"no Lipschitz constant for a {net.kind} network")


def _beta(loc: Local) -> float:
    """The Lipschitz constant of the localized network (rows of unit norm, or 0), rounded up."""
    if loc.linear:
        return float(np.linalg.norm(loc.W)) * (1 + 8 * ULP)
    if not len(loc.a):
        return 0.0
    rows = np.linalg.norm(loc.W, axis=1)
    return float(min(np.abs(loc.a) @ rows, np.linalg.norm(loc.W, 2) * np.linalg.norm(loc.a))) * (1 + 8 * (len(loc.a) + 4) * ULP)


def lipschitz_radius(net, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """SOK17.lemma.lipschitz_radius: ``max(q, 0) / beta``, the certified lower bound.

    Pitfall avoided: a constant classifier (beta = 0, an identically zero network) gave 0/0 = nan; its margin is
    0 everywhere, so every point is a tie and its radius is 0 (where q > 0 with beta = 0, no perturbation flips it:
    inf)."""
    loc = localize(net, np.atleast_2d(np.asarray(X, float)), np.asarray(y, float))
    return loc.back(_lipschitz_local(loc), "down")


def _lipschitz_local(loc: Local) -> np.ndarray:
    """``(q - qerr) / beta`` in the points' units, 0 where the margin is not proven positive there."""
    q = np.where(loc.decided, loc.q - loc.qerr, 0.0)
    beta = _beta(loc)
    if beta > 0:
        return q / beta
    return np.where(q > 0, np.inf, 0.0)


def relaxation_lower_bound(net: TwoLayerReLU, X: np.ndarray, y: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """A lower bound on ``min_{||delta|| <= eps} y f(x + delta)`` per point (eps per point)."""
    return _relaxation_bound(net.preactivations(X), np.zeros((len(X), net.width)), net.W, net.a, np.asarray(y, float), eps)


def _relaxation_bound(h: np.ndarray, E: np.ndarray, W: np.ndarray, a: np.ndarray, y: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """:func:`relaxation_lower_bound` from the pre-activations ``h``, each within ``E`` of the true one (the intervals are
    widened by E and the affine bound lowered by ``|lambda| E``), less the rounding of its own evaluation."""
    rn = np.linalg.norm(W, axis=1)
    lo = h - E - eps[:, None] * rn[None, :]
    hi = h + E + eps[:, None] * rn[None, :]
    c = y[:, None] * a[None, :]
    active = lo >= 0
    unstable = (lo < 0) & (hi > 0)
    lam = np.where(active, c, 0.0)
    # c > 0 needs a lower bound of ReLU: alpha z with alpha = 1 if u >= -l (adaptive, as in CROWN).
    pos = unstable & (c > 0)
    lam = np.where(pos & (hi >= -lo), c, lam)
    # c < 0 needs an upper bound of ReLU: the chord u (z - l) / (u - l).
    neg = unstable & (c < 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = np.where(neg, hi / (hi - lo), 0.0)
    lam = np.where(neg, c * slope, lam)
    const = (np.where(neg, -c * slope * lo, 0.0)).sum(1)
    lin = (lam * h).sum(1) - (np.abs(lam) * E).sum(1) + const
    g = np.linalg.norm(lam @ W, axis=1)
    rounding = 4.0 * (len(a) + 4) * ULP * ((np.abs(lam) * (np.abs(h) + E)).sum(1) + np.abs(np.where(neg, -c * slope * lo, 0.0)).sum(1) + eps * g)
    return lin - eps * g - rounding


def relaxation_radius(net, X: np.ndarray, y: np.ndarray, upper: np.ndarray | None = None, iters: int = 50) -> np.ndarray:
    """The largest eps (to bisection accuracy, rounded down) that the relaxation certifies.

    ``upper`` is any upper bound on the true radius (e.g. an attack's); the search stays
    below it. Points with ``y f(x) <= 0`` get 0.
    """
    loc = localize(net, np.atleast_2d(np.asarray(X, float)), np.asarray(y, float))
    return loc.back(_relaxation_local(loc, None if upper is None else loc.to_units(upper), iters), "down")


def _relaxation_local(loc: Local, upper: np.ndarray | None, iters: int = 50) -> np.ndarray:
    lo = _lipschitz_local(loc)
    if loc.linear:
        return lo
    hi = np.where(np.isfinite(upper), upper, 1e6 * (1 + lo)) if upper is not None else np.full(len(lo), 1e6) * (1 + lo)
    hi = np.maximum(hi, lo)
    live = loc.decided & np.isfinite(lo)
    for _ in range(iters):
        mid = (lo + hi) / 2
        ok = _relaxation_bound(loc.H, loc.E, loc.W, loc.a, loc.y, np.where(live, mid, 0.0)) > 0
        lo = np.where(ok & live, mid, lo)
        hi = np.where(ok | ~live, hi, mid)
    return np.where(loc.decided, lo, 0.0)


def certified_radius(net, X: np.ndarray, y: np.ndarray, upper: np.ndarray | None = None) -> np.ndarray:
    """The best certified lower bound: max of the Lipschitz and the relaxation bounds."""
    loc = localize(net, np.atleast_2d(np.asarray(X, float)), np.asarray(y, float))
    return certified_local(loc, None if upper is None else np.asarray(upper, float))


def certified_local(loc: Local, upper: np.ndarray | None = None) -> np.ndarray:
    """:func:`certified_radius` of a :class:`.units.Local` problem (``upper`` in the units of X), in the units of X."""
    up = None if upper is None else loc.to_units(upper)
    return loc.back(_relaxation_local(loc, up), "down")  # it starts from the Lipschitz bound and only raises it
