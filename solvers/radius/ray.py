"""The exact flip radius along a direction, from the breakpoints of a piecewise-linear ray.

Along ``x + t u`` a two-layer ReLU network is piecewise linear in t, with a breakpoint where
a pre-activation crosses 0 (``t_j = -h_j / g_j``). Between breakpoints the margin
``q(t) = y f(x + t u)`` is affine, so the first t with ``q(t) <= 0`` is found exactly per
segment: no bisection, no tolerance.
"""
from __future__ import annotations

import numpy as np

from ..networks import MulticlassReLU
from .units import Local, _row_exponents, localize


def _as_binary(net):
    if isinstance(net, MulticlassReLU):
        raise TypeError("a k-class network has no binary flip radius: use net.readout(J_plus)")
    return net


def ray_flip_radius(net, X: np.ndarray, y: np.ndarray, U: np.ndarray, chunk: int = 256) -> np.ndarray:
    """``inf { t >= 0 : y f(x + t u) <= 0 }`` for each row, exactly; ``inf`` if the ray never flips.

    ``U`` is one direction (d,) for all points or one per point (N, d); it need not be unit
    length (the radius is then in units of ``||u||``... so pass unit vectors for l2 radii).
    Computed at each point in its own units (:class:`.units.Local`), so that a column of X far below another keeps its
    digits.
    """
    net = _as_binary(net)
    X = np.atleast_2d(np.asarray(X, float))
    y = np.asarray(y, float)
    return ray_local(localize(net, X, y), U, chunk)


def ray_local(loc: Local, U: np.ndarray, chunk: int = 256) -> np.ndarray:
    """:func:`ray_flip_radius` of a :class:`.units.Local` problem, in the units of X.

    With ``u = 2^k u'`` and point i's lengths in units ``2^s``, the ray is ``H + t'' W u'`` with ``t = t'' 2^(s - k)``.
    A point proven misclassified has radius 0; one proven correctly classified whose margin is lost in its units gets
    inf (no bound), never 0; at a point whose margin is within its rounding of 0 the flip must go below minus twice
    that rounding (a flip that float64 resolves)."""
    U = np.broadcast_to(np.asarray(U, float), (len(loc.H), loc.W.shape[1]))
    k = _row_exponents(U)
    G = np.ldexp(U, -k[:, None]) @ loc.W.T
    if loc.linear:
        q = loc.q
        slope = loc.y * G[:, 0]
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(slope < 0, -q / slope, np.inf)
        t = np.where(q <= 0, 0.0, t)
    else:
        t = np.empty(len(loc.H))
        c = loc.y[:, None] * loc.a[None, :]
        offset = np.where(loc.sign == 0, 2.0 * loc.qerr, 0.0)
        for s in range(0, len(t), chunk):
            t[s:s + chunk] = _ray_chunk(loc.H[s:s + chunk], G[s:s + chunk], c[s:s + chunk], offset[s:s + chunk])
    t = np.where(loc.sign < 0, 0.0, np.where((loc.sign > 0) & ~loc.decided, np.inf, t))
    with np.errstate(over="ignore", under="ignore"):
        out = np.ldexp(t, loc.s - k)
    coarse = (t > 0) & (out < 2.0 ** -1022)  # an upper bound in float64's subnormal range: one step up
    return np.where(coarse, np.nextafter(out, np.inf), out) if coarse.any() else out


def _ray_chunk(h: np.ndarray, g: np.ndarray, c: np.ndarray, offset: np.ndarray | None = None) -> np.ndarray:
    """The first zero of the margin (plus ``offset``) along each ray, in O(N M log M) time and O(N M) memory: ``h`` the
    pre-activations at t = 0, ``g`` their slopes, ``c`` each neuron's margin weight ``y a_j``.

    Pitfall avoided: evaluating every neuron on every segment holds an (N, M+1, M) array, which
    at M = 1600 and 256 rays is 5 GB per temporary. Here the breakpoints are sorted and each one
    toggles one neuron, so the margin on segment k is ``A_k + t B_k`` with ``A``, ``B`` running
    sums of the toggles. The margin is continuous, so its value at a breakpoint does not depend
    on the order in which tied breakpoints toggle their neurons.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        tb = np.where(g != 0, -h / g, np.inf)
    tb = np.where(tb > 0, tb, np.inf)
    order = np.argsort(tb, axis=1)
    tb = np.take_along_axis(tb, order, axis=1)
    active0 = (h > 0) | ((h == 0) & (g > 0))  # active just after t = 0
    A0 = np.sum(np.where(active0, c * h, 0.0), axis=1)
    if offset is not None:
        A0 = A0 + offset
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
