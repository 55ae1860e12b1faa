"""Normalized units for the radius solvers: the data and the network at unit scale, and the way back.

Every radius is a length in the units of X. A classifier ``sign f`` is rewritten for ``x' = x / 2^e`` (``2^e`` about
the largest |entry| of X) as a network ``f'`` with ``sign f'(x') = sign f(2^e x')`` whose layers have largest |entry|
in [1/2, 1); the radii of ``f'`` at ``X'`` times ``2^e`` are the radii of ``f`` at X. Every scaling is by a power of
two (``np.ldexp``), so it is exact in float64 except where an entry falls below the subnormal range of its own
layer, where it is negligible against that layer's largest entry.

Pitfall avoided: at ``X x 1e-200`` ``||v||`` of the universal direction underflowed to 0 (v became inf and every
universal radius 0, below its own certified bound), and at ``X x 1e200`` ``||w||`` of a linear classifier fitted
there underflowed (every radius inf); at ``X x 1e150`` foolbox's float32 bounds overflowed (an AssertionError).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ..networks import LinearClassifier, MulticlassReLU, RandomNet, TwoLayerReLU


def exponent(v) -> int | None:
    """``e`` with ``max |v|`` in ``[2^(e-1), 2^e)``; None for an empty or all-zero array."""
    top = float(np.max(np.abs(v), initial=0.0)) if np.size(v) else 0.0
    if not (top > 0 and np.isfinite(top)):
        return None
    return int(np.frexp(top)[1])


def unit_vector(v: np.ndarray) -> np.ndarray:
    """``v / ||v||`` at any scale (divided by a power of two near its largest entry first); nan for the zero vector."""
    v = np.asarray(v, float)
    e = exponent(v)
    if e is None:
        with np.errstate(invalid="ignore", divide="ignore"):
            return v / np.linalg.norm(v)
    u = np.ldexp(v, -e)
    return u / np.linalg.norm(u)


def _row_exponents(A: np.ndarray) -> np.ndarray:
    """Per row, :func:`exponent` (0 for an all-zero row)."""
    top = np.max(np.abs(A), axis=1, initial=0.0) if A.size else np.zeros(len(A))
    return np.where(top > 0, np.frexp(top)[1], 0).astype(int)


def rescaled(net: Any, X: np.ndarray) -> tuple[Any, np.ndarray, int, int]:
    """``(net', X', e, out)``: ``X' = X / 2^e`` with largest |entry| in [1/2, 1), and a network with
    ``f(2^e x') = 2^out f'(x')`` exactly (in real arithmetic), its weights at unit scale.

    A two-layer network's neuron j has ``(w_j, b_j / 2^e)`` divided by a power of two near its largest entry (ReLU is
    positively homogeneous, so a_j takes the factor), then ``a`` is brought to unit scale. A network that is not
    positively homogeneous in x (a random network with a smooth activation) keeps ``e = 0``."""
    X = np.asarray(X, float)
    e = exponent(X) or 0
    if isinstance(net, RandomNet) and net.activation != "relu":
        e = 0
    Xs = np.ldexp(X, -e) if e else X
    if isinstance(net, LinearClassifier):
        ew = exponent(net.w)
        if ew is None:  # a constant classifier: only the sign of b matters
            eb = exponent(np.array([net.b or 0.0])) or 0
            b = None if net.b is None else float(np.ldexp(net.b, -eb))
            return replace(net, b=b), Xs, e, eb
        b = None if net.b is None else float(np.ldexp(net.b, -ew - e))
        return replace(net, w=np.ldexp(net.w, -ew), b=b), Xs, e, e + ew
    if isinstance(net, TwoLayerReLU):
        rows = _row_exponents(net.W)
        if net.b is not None:
            live_b = net.b != 0
            eb_rows = np.where(live_b, np.frexp(np.where(live_b, net.b, 1.0))[1] - e, np.iinfo(np.int32).min)
            live_w = np.any(net.W != 0, axis=1)
            r = np.where(live_w, rows, np.iinfo(np.int32).min)
            r = np.maximum(r, eb_rows)
            r = np.where(r == np.iinfo(np.int32).min, 0, r)
        else:
            r = rows
        W = np.ldexp(net.W, -r[:, None])
        b = None if net.b is None else np.ldexp(net.b, -e - r)
        live_a = net.a != 0
        ea = np.where(live_a, np.frexp(np.where(live_a, net.a, 1.0))[1] + r, np.iinfo(np.int32).min)
        top = int(ea.max(initial=np.iinfo(np.int32).min))
        if top == np.iinfo(np.int32).min:  # a = 0: the zero function
            return replace(net, W=W, b=b), Xs, e, 0
        a = np.ldexp(net.a, r - top)
        return replace(net, W=W, b=b, a=a), Xs, e, e + top
    if isinstance(net, RandomNet):
        ea = exponent(net.a)
        if ea is None:
            return net, Xs, e, 0
        if net.activation != "relu":  # W stays: a smooth activation is not homogeneous
            return replace(net, a=np.ldexp(net.a, -ea)), Xs, e, ea
        ew = exponent(net.W) or 0
        return replace(net, W=np.ldexp(net.W, -ew), a=np.ldexp(net.a, -ea)), Xs, e, e + ea + ew
    if isinstance(net, MulticlassReLU):
        return net, Xs, e, e
    return net, X, 0, 0


def scaled_back(r: np.ndarray, e: int) -> np.ndarray:
    """Lengths measured in the units of ``X'`` back in the units of X (``r 2^e``, exact; inf stays inf)."""
    r = np.asarray(r, float)
    return np.ldexp(r, e) if e else r
