"""Margins ``q_i(theta)`` and their gradients for the trained blocks of a two-layer ReLU network.

The parameter vector is ``TwoLayerReLU.params()``: ``[W.ravel(), b, a]`` (all trained,
degree 2) or ``[W.ravel(), b]`` (LPLL25's fixed second layer, degree 1).
"""
from __future__ import annotations

import numpy as np

from ibcheck.errors import InputError

from ..networks import TwoLayerReLU


def margin_jacobian(net: TwoLayerReLU, X: np.ndarray, y: np.ndarray, sigma: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(q, J)`` with ``J[i] = d q_i / d theta``; ``sigma`` (n, m) overrides ReLU'(z) (1[z > 0] by default)."""
    Z = net.preactivations(X)
    S = (Z > 0).astype(float) if sigma is None else sigma
    q = y * (np.maximum(Z, 0.0) @ net.a)
    coef = y[:, None] * net.a[None, :] * S  # d q / d z
    blocks = [(coef[:, :, None] * X[:, None, :]).reshape(len(X), -1)]
    if "b" in net.blocks:
        blocks.append(coef)
    if "a" in net.blocks:
        blocks.append(y[:, None] * np.maximum(Z, 0.0))
    return q, np.concatenate(blocks, axis=1)


def tie_columns(net: TwoLayerReLU, X: np.ndarray, y: np.ndarray, ties: list[tuple[int, int]]) -> np.ndarray:
    """For each tie (i, j) with ``z_ij = 0``: the direction ``d q_i / d(w_j, b_j)`` at ReLU' = 1."""
    P = net.params().size
    d = net.dim
    m = net.width
    cols = np.zeros((P, len(ties)))
    for c, (i, j) in enumerate(ties):
        g = y[i] * net.a[j]
        cols[j * d:(j + 1) * d, c] = g * X[i]
        if "b" in net.blocks:
            cols[m * d + j, c] = g
    return cols


def scale_to_unit_margin(net: TwoLayerReLU, X: np.ndarray, y: np.ndarray) -> tuple[TwoLayerReLU, float]:
    """``theta / q_min^(1/L)`` so that the smallest margin is 1 (LL20.thm.kkt's normalization)."""
    q = net.margins(X, y)
    qmin = float(q.min())
    if qmin <= 0:
        raise InputError(f"the network misclassifies a training point (q_min = {qmin:.3g}): not feasible for (P)")
    return net.with_params(net.params() / qmin ** (1.0 / net.degree)), qmin
