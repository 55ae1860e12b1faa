"""Certified lower bounds on the l2 radius.

* SOK17.lemma.lipschitz_radius: ``r(x) >= q(x) / beta`` with beta a Lipschitz constant of
  ``f`` in x: ``min(sum_j |a_j| ||w_j||, ||W||_2 ||a||_2)`` for a two-layer ReLU network.
* A tighter bound for two layers: over the ball ``||delta|| <= eps`` the pre-activations lie
  exactly in ``[h_j - eps ||w_j||, h_j + eps ||w_j||]``. Each unstable ReLU is replaced by a
  linear lower (``alpha z``) or upper (``u (z - l) / (u - l)``) bound according to the sign
  of its output weight, which makes ``q`` bounded below by an affine function of delta,
  minimized in closed form over the ball. The largest certified eps is found by bisection,
  vectorised over points.

Every radius is computed in normalized units (:mod:`.units`) and scaled back, so that it scales with X.
"""
from __future__ import annotations

import numpy as np

from ..networks import LinearClassifier, TwoLayerReLU
from .units import rescaled, scaled_back


def lipschitz_constant(net) -> float:
    """An l2 Lipschitz constant of ``x -> f(x)``."""
    if isinstance(net, LinearClassifier):
        return float(np.linalg.norm(net.w))
    if isinstance(net, TwoLayerReLU):
        rows = np.linalg.norm(net.W, axis=1)
        return float(min(np.abs(net.a) @ rows, np.linalg.norm(net.W, 2) * np.linalg.norm(net.a)))
    raise TypeError(f"no Lipschitz constant for a {net.kind} network")


def lipschitz_radius(net, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """SOK17.lemma.lipschitz_radius: ``max(q, 0) / beta``, the certified lower bound.

    Pitfall avoided: a constant classifier (beta = 0, an identically zero network) gave 0/0 = nan; its margin is
    0 everywhere, so every point is a tie and its radius is 0 (where q > 0 with beta = 0, no perturbation flips it:
    inf)."""
    unit, Xs, e, _ = rescaled(net, np.atleast_2d(np.asarray(X, float)))
    return scaled_back(_lipschitz_unit(unit, Xs, y), e)


def _lipschitz_unit(net, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    q = np.maximum(y * net.forward(X), 0.0)
    beta = lipschitz_constant(net)
    if beta > 0:
        return q / beta
    return np.where(q > 0, np.inf, 0.0)


def relaxation_lower_bound(net: TwoLayerReLU, X: np.ndarray, y: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """A lower bound on ``min_{||delta|| <= eps} y f(x + delta)`` per point (eps per point)."""
    h = net.preactivations(X)
    rn = np.linalg.norm(net.W, axis=1)
    lo = h - eps[:, None] * rn[None, :]
    hi = h + eps[:, None] * rn[None, :]
    c = y[:, None] * net.a[None, :]
    active = lo >= 0
    unstable = (lo < 0) & (hi > 0)
    lam = np.where(active, c, 0.0)
    const = np.zeros(len(X))
    # c > 0 needs a lower bound of ReLU: alpha z with alpha = 1 if u >= -l (adaptive, as in CROWN).
    pos = unstable & (c > 0)
    lam = np.where(pos & (hi >= -lo), c, lam)
    # c < 0 needs an upper bound of ReLU: the chord u (z - l) / (u - l).
    neg = unstable & (c < 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = np.where(neg, hi / (hi - lo), 0.0)
    lam = np.where(neg, c * slope, lam)
    const = (np.where(neg, -c * slope * lo, 0.0)).sum(1)
    lin = (lam * h).sum(1) + const
    return lin - eps * np.linalg.norm(lam @ net.W, axis=1)


def relaxation_radius(net, X: np.ndarray, y: np.ndarray, upper: np.ndarray | None = None, iters: int = 50) -> np.ndarray:
    """The largest eps (to bisection accuracy, rounded down) that the relaxation certifies.

    ``upper`` is any upper bound on the true radius (e.g. an attack's); the search stays
    below it. Points with ``y f(x) <= 0`` get 0.
    """
    unit, Xs, e, _ = rescaled(net, np.atleast_2d(np.asarray(X, float)))
    up = None if upper is None else np.ldexp(np.asarray(upper, float), -e)
    return scaled_back(_relaxation_unit(unit, Xs, y, up, iters), e)


def _relaxation_unit(net, X: np.ndarray, y: np.ndarray, upper: np.ndarray | None, iters: int = 50) -> np.ndarray:
    if isinstance(net, LinearClassifier):
        return _lipschitz_unit(net, X, y)
    q = y * net.forward(X)
    lo = _lipschitz_unit(net, X, y)
    hi = np.where(np.isfinite(upper), upper, 1e6 * (1 + lo)) if upper is not None else np.full(len(X), 1e6) * (1 + lo)
    hi = np.maximum(hi, lo)
    for _ in range(iters):
        mid = (lo + hi) / 2
        ok = relaxation_lower_bound(net, X, y, mid) > 0
        lo = np.where(ok, mid, lo)
        hi = np.where(ok, hi, mid)
    return np.where(q > 0, lo, 0.0)


def certified_radius(net, X: np.ndarray, y: np.ndarray, upper: np.ndarray | None = None) -> np.ndarray:
    """The best certified lower bound: max of the Lipschitz and the relaxation bounds."""
    unit, Xs, e, _ = rescaled(net, np.atleast_2d(np.asarray(X, float)))
    up = None if upper is None else np.ldexp(np.asarray(upper, float), -e)
    return scaled_back(np.maximum(_lipschitz_unit(unit, Xs, y), _relaxation_unit(unit, Xs, y, up)), e)
