"""BCGT21.thm.one_step: the gradient step ``x + eta grad f(x)`` that flips a random two-layer network.

Shared by the claim's experiment (:mod:`simulate.experiments.bcgt21`) and its reproduction.
"""
from __future__ import annotations

import math

import numpy as np

from ibcheck.solvers.networks import TwoLayerReLU
from ibcheck.solvers.radius.ray import ray_flip_radius


def input_gradients(net, X: np.ndarray) -> np.ndarray:
    """``grad_x f(x)`` of a random network (BCGT21.def.net), analytic for every activation: (N, d)."""
    from scipy.special import erf, expit  # heavy: scipy (loaded on first use)

    Z = X @ net.W.T
    deriv = {
        "relu": lambda z: (z > 0).astype(float),
        "softplus": expit,
        "tanh": lambda z: 1 - np.tanh(z) ** 2,
        "gelu": lambda z: 0.5 * (1 + erf(z / np.sqrt(2))) + z * np.exp(-z * z / 2) / np.sqrt(2 * np.pi),
    }[net.activation](Z)
    return (deriv * net.a) @ net.W / np.sqrt(net.W.shape[0])


def flip_along_gradient(net, X: np.ndarray, t_max: float = 100.0) -> tuple[np.ndarray, np.ndarray]:
    """Per point: ``(|eta|, ||delta||)`` of the smallest step ``eta grad f(x)`` with ``sign(eta) = -sign f(x)``
    that flips f (inf when none within ``||delta|| <= t_max``).

    ReLU: exact, from the breakpoints along the ray (:func:`solvers.radius.ray.ray_flip_radius`). A
    smooth activation: a log-spaced scan brackets the first sign change, and ``scipy.optimize.brentq``
    finds it. Pitfall avoided: a root finder started without a bracket can return a later crossing;
    the scan guarantees the bracket holds the first one seen at its resolution."""
    from scipy.optimize import brentq  # heavy: scipy (loaded on first use)

    f = net.forward(X)
    y = np.where(f > 0, 1.0, -1.0)
    g = input_gradients(net, X)
    gn = np.linalg.norm(g, axis=1)
    U = -y[:, None] * g / gn[:, None]
    if net.activation == "relu":
        relu = TwoLayerReLU(W=net.W, a=net.a / math.sqrt(net.W.shape[0]), b=None, trained=("W",), kind="random-net")
        t = ray_flip_radius(relu, X, y, U)
    else:
        ts = np.concatenate([[0.0], np.geomspace(1e-3, t_max, 400)])
        t = np.full(len(X), np.inf)
        for i in range(len(X)):
            vals = y[i] * net.forward(X[i] + ts[:, None] * U[i])
            j = int(np.argmax(vals <= 0))
            if vals[j] > 0:
                continue
            if vals[j] == 0:
                t[i] = ts[j]
                continue
            t[i] = brentq(lambda s: y[i] * net.forward((X[i] + s * U[i])[None])[0], ts[j - 1], ts[j], xtol=1e-12 * ts[j])
    return t / gn, t
