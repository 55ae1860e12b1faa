"""Closed-form radii of linear classifiers ``f(x) = <w, x> (+ b)``, computed in normalized units (:mod:`.units`):
``||w||`` of a classifier fitted on data at 1e200 underflowed to 0 (every radius inf)."""
from __future__ import annotations

import numpy as np

from ..networks import LinearClassifier
from .units import rescaled, scaled_back


def l2_radius(net: LinearClassifier, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``max(y f(x), 0) / ||w||_2``: the exact l2 distance to the decision boundary (inf for a constant
    classifier that is right, 0 where it is wrong or 0)."""
    unit, Xs, e, _ = rescaled(net, np.atleast_2d(np.asarray(X, float)))
    return scaled_back(_ratio(np.maximum(y * unit.forward(Xs), 0.0), float(np.linalg.norm(unit.w))), e)


def linf_radius(net: LinearClassifier, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``max(y f(x), 0) / ||w||_1`` (SSTTM18): the point is robust at eps iff ``y <w, x> > eps ||w||_1``."""
    unit, Xs, e, _ = rescaled(net, np.atleast_2d(np.asarray(X, float)))
    return scaled_back(_ratio(np.maximum(y * unit.forward(Xs), 0.0), float(np.abs(unit.w).sum())), e)


def linf_robust_error(net: LinearClassifier, X: np.ndarray, y: np.ndarray, eps: float) -> float:
    """The exact l_inf-robust error at radius eps (ties count as errors)."""
    unit, Xs, e, _ = rescaled(net, np.atleast_2d(np.asarray(X, float)))
    return float(np.mean(y * unit.forward(Xs) <= np.ldexp(float(eps), -e) * np.abs(unit.w).sum()))


def _ratio(q: np.ndarray, norm: float) -> np.ndarray:
    if norm > 0:
        return q / norm
    return np.where(q > 0, np.inf, 0.0)
