"""Gradient descent as a pattern source for the KKT engine (numpy, in the data's span).

GD on ``F(theta) = log sum_i exp(-q_i(theta))`` (the exponential loss in log space: a fixed step on F is the
loss-based step ``eta / L`` on the summed loss) from a chosen initialization. Its end point is not a KKT point; its
activation pattern and output signs are where the engine's tie-aware polish starts (:mod:`.engine`).

Inits (:func:`inits`): per cluster (one neuron along each cluster mean, output sign the cluster's label, at scale 1-3,
bias 0 or -0.5, optionally twice as wide), and random Gaussian ones (data without clusters).

Pitfalls avoided: the loss is never exponentiated (log-sum-exp, so a margin of 1e3 is no overflow); the network lives
in the span of ``[X 1]`` (its outputs on the sample depend on nothing else), so a step costs ``n x min(n, d) x width``
whatever d; GD at one width and scale from small random inits finds the same point again and again (at d = 64, k = 8:
per-cluster inits at scales 1-3 with bias 0 or -0.5 found 30 distinct points in 48 runs).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cones import cluster_labels


@dataclass(frozen=True)
class Init:
    """One GD initialization, in the coordinates of the data's span: ``C`` (m, r) the rows ``Q^T [w_j, b_j]``, ``a`` (m,)."""

    name: str
    C: np.ndarray
    a: np.ndarray


def _softmax_neg(q: np.ndarray) -> np.ndarray:
    e = np.exp(-(q - q.min()))
    return e / e.sum()


def gd_pattern(L: np.ndarray, y: np.ndarray, init: Init, steps: int = 2000, lr: float = 2.5,
               lr_out: float = 0.02) -> tuple[np.ndarray, np.ndarray]:
    """(D, s): the activation pattern (n, m) and output signs (m) where GD on ``log sum exp(-q)`` from ``init`` ends.
    ``L`` (n, r): the data in span coordinates (``[X 1] = L Q^T``). The first layer's step ``lr`` is taken on the data
    rescaled to unit RMS row norm (the pattern does not depend on the scale; the init's pre-activations are kept), so one
    step size serves every d: at d = 64 it is 0.02 on the raw FVBS23 data, and a raw 0.02 diverged at d = 1024 (rows of
    norm 45); the output layer's gradient does not grow with d (pre-activations of order the init's scale): ``lr_out``.
    A run whose loss stops being finite ends where it is."""
    scale = float(np.sqrt(np.mean(np.sum(L * L, axis=1)))) or 1.0
    Ln = L / scale
    C, a = np.array(init.C, float) * scale, np.array(init.a, float)
    for _ in range(steps):
        Z = Ln @ C.T
        H = np.maximum(Z, 0.0)
        q = y * (H @ a)
        if not np.isfinite(q).all():
            break
        p = _softmax_neg(q)
        g = -(p * y)  # dF / d output_i
        G = (g[:, None] * a[None, :]) * (Z > 0)
        C -= lr * (G.T @ Ln)
        a -= lr_out * (H.T @ g)
    return (Ln @ C.T > 0).astype(float), np.sign(a)


def inits(Q: np.ndarray, X: np.ndarray, cluster: np.ndarray | None, y: np.ndarray, count: int,
          rng: np.random.Generator, bias: bool = True, width: int | None = None) -> list[Init]:
    """``count`` initializations in span coordinates (``Q`` from :func:`.polish.data_span`): cycling over scale 1, 2, 3,
    bias 0 and -0.5, and width one or two neurons per cluster (per-cluster inits: neuron j along the mean of cluster j
    with a little noise, output weight its label times 0.3 scale; pre-activations on its own cluster of order the scale);
    without clusters, Gaussian inits of width ``width`` (default 2 sqrt(n)), or twice that, at the same scales."""
    X, y = np.asarray(X, float), np.asarray(y, float)
    n, d = X.shape
    out = []
    for t in range(count):
        scale = (1.0, 2.0, 3.0)[t % 3]
        b0 = (0.0, -0.5)[(t // 3) % 2] if bias else 0.0
        twice = (t // 6) % 2 == 1
        if cluster is not None:
            remap, labels = cluster_labels(y, cluster)
            means = np.stack([X[remap == c].mean(axis=0) for c in range(len(labels))])
            reps = 2 if twice else 1
            M = np.repeat(means, reps, axis=0)
            lab: np.ndarray = np.repeat(labels, reps)
            norms = np.maximum(np.linalg.norm(M, axis=1, keepdims=True), 1e-300)
            W = scale * (M / norms + 0.3 * rng.standard_normal(M.shape) / np.sqrt(d)) / norms  # <w_j, mean_j> = scale
            a = lab * 0.3 * scale
            name = f"gd:per-cluster x{reps} scale {scale:g} bias {b0:g}"
        else:
            m = (width or 2 * max(int(np.sqrt(n)), 2)) * (2 if twice else 1)
            size = float(np.sqrt(np.mean(np.sum(X * X, axis=1))))
            W = scale * rng.standard_normal((m, d)) / max(size, 1e-300)
            a = 0.3 * scale * np.where(np.arange(m) % 2 == 0, 1.0, -1.0)
            name = f"gd:random width {m} scale {scale:g} bias {b0:g}"
        Wt = np.hstack([W, np.full((len(W), 1), b0)]) if bias else W
        out.append(Init(name, Wt @ Q, a))
    return out
