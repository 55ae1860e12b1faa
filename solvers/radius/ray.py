"""The exact flip radius along a direction, from the breakpoints of a piecewise-linear ray.

Along ``x + t u`` a two-layer ReLU network is piecewise linear in t, with a breakpoint where
a pre-activation crosses 0 (``t_j = -h_j / g_j``). Between breakpoints the margin
``q(t) = y f(x + t u)`` is affine, so the first t with ``q(t) <= 0`` is found exactly per
segment: no bisection, no tolerance.
"""
from __future__ import annotations

import numpy as np

from ..networks import LinearClassifier, MulticlassReLU, TwoLayerReLU
from .units import _row_exponents, rescaled


def _as_binary(net):
    if isinstance(net, MulticlassReLU):
        raise TypeError("a k-class network has no binary flip radius: use net.readout(J_plus)")
    return net


def ray_flip_radius(net, X: np.ndarray, y: np.ndarray, U: np.ndarray, chunk: int = 256) -> np.ndarray:
    """``inf { t >= 0 : y f(x + t u) <= 0 }`` for each row, exactly; ``inf`` if the ray never flips.

    ``U`` is one direction (d,) for all points or one per point (N, d); it need not be unit
    length (the radius is then in units of ``||u||``... so pass unit vectors for l2 radii).
    """
    net = _as_binary(net)
    X = np.atleast_2d(np.asarray(X, float))
    y = np.asarray(y, float)
    U = np.broadcast_to(np.asarray(U, float), X.shape)
    # normalized units (:mod:`.units`): x = 2^e x' and u = 2^k u', so x + t u = 2^e (x' + t 2^(k-e) u'), t = t' 2^(e-k)
    net, X, e, _ = rescaled(net, X)
    k = _row_exponents(U)
    t = _ray_unit(net, X, y, np.ldexp(U, -k[:, None]), chunk)
    return np.ldexp(t, e - k)


def _ray_unit(net, X: np.ndarray, y: np.ndarray, U: np.ndarray, chunk: int) -> np.ndarray:
    """:func:`ray_flip_radius` in normalized units."""
    if isinstance(net, LinearClassifier):
        q = y * net.forward(X)
        slope = y * (U @ net.w)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(slope < 0, -q / slope, np.inf)
        return np.where(q <= 0, 0.0, t)
    if not isinstance(net, TwoLayerReLU):
        raise TypeError(f"no exact ray radius for a {getattr(net, 'kind', type(net).__name__)} network")
    out = np.empty(len(X))
    for s in range(0, len(X), chunk):
        out[s:s + chunk] = _ray_chunk(net, X[s:s + chunk], y[s:s + chunk], U[s:s + chunk])
    return out


def _ray_chunk(net: TwoLayerReLU, X, y, U) -> np.ndarray:
    """The first zero of the margin along each ray, in O(N M log M) time and O(N M) memory.

    Pitfall avoided: evaluating every neuron on every segment holds an (N, M+1, M) array, which
    at M = 1600 and 256 rays is 5 GB per temporary. Here the breakpoints are sorted and each one
    toggles one neuron, so the margin on segment k is ``A_k + t B_k`` with ``A``, ``B`` running
    sums of the toggles. The margin is continuous, so its value at a breakpoint does not depend
    on the order in which tied breakpoints toggle their neurons.
    """
    h = net.preactivations(X)  # (N, M)
    g = U @ net.W.T  # (N, M): d h / d t
    c = y[:, None] * net.a[None, :]  # margin weight of each neuron
    with np.errstate(divide="ignore", invalid="ignore"):
        tb = np.where(g != 0, -h / g, np.inf)
    tb = np.where(tb > 0, tb, np.inf)
    order = np.argsort(tb, axis=1)
    tb = np.take_along_axis(tb, order, axis=1)
    active0 = (h > 0) | ((h == 0) & (g > 0))  # active just after t = 0
    A0 = np.sum(np.where(active0, c * h, 0.0), axis=1)
    B0 = np.sum(np.where(active0, c * g, 0.0), axis=1)
    # A finite breakpoint switches its neuron on when g > 0 (it was below 0) and off when g < 0.
    sign = np.where(np.isfinite(tb), np.sign(np.take_along_axis(g, order, axis=1)), 0.0)
    dA = sign * np.take_along_axis(c * h, order, axis=1)
    dB = sign * np.take_along_axis(c * g, order, axis=1)
    A = np.concatenate([A0[:, None], A0[:, None] + np.cumsum(dA, axis=1)], axis=1)  # (N, M+1)
    B = np.concatenate([B0[:, None], B0[:, None] + np.cumsum(dB, axis=1)], axis=1)
    N = len(h)
    starts = np.concatenate([np.zeros((N, 1)), tb], axis=1)  # (N, M+1)
    ends = np.concatenate([tb, np.full((N, 1), np.inf)], axis=1)
    finite_start = np.isfinite(starts)
    s_eval = np.where(finite_start, starts, 0.0)
    value = A + s_eval * B
    value[:, 0] = A0  # exactly the margin at x
    with np.errstate(divide="ignore", invalid="ignore"):
        t_cross = s_eval - value / B
    cand = np.where(value <= 0, s_eval, np.where((B < 0) & (t_cross <= ends), t_cross, np.inf))
    cand = np.where(finite_start, cand, np.inf)
    return cand.min(axis=1)
