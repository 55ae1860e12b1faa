"""Closed-form radii of linear classifiers ``f(x) = <w, x> (+ b)``."""
from __future__ import annotations

import numpy as np

from ..networks import LinearClassifier


def l2_radius(net: LinearClassifier, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``max(y f(x), 0) / ||w||_2``: the exact l2 distance to the decision boundary."""
    return np.maximum(y * net.forward(X), 0.0) / np.linalg.norm(net.w)


def linf_radius(net: LinearClassifier, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``max(y f(x), 0) / ||w||_1`` (SSTTM18): the point is robust at eps iff ``y <w, x> > eps ||w||_1``."""
    return np.maximum(y * net.forward(X), 0.0) / np.abs(net.w).sum()


def linf_robust_error(net: LinearClassifier, X: np.ndarray, y: np.ndarray, eps: float) -> float:
    """The exact l_inf-robust error at radius eps (ties count as errors)."""
    return float(np.mean(y * net.forward(X) <= eps * np.abs(net.w).sum()))
