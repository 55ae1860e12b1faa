"""Closed-form radii of linear classifiers ``f(x) = <w, x> (+ b)``, computed at each point in its own units
(:class:`.units.Local`): ``|<w, x> + b|`` is evaluated column by column at each column's scale, and in integer
arithmetic where float64's sum is not accurate, so the radius is right whatever the scales of X's columns and of w.

Pitfalls avoided: ``||w||`` of a classifier fitted on data at 1e200 underflowed to 0 (every radius inf); the small
column of ``X x [1e-200, 1e200]``, flushed to 0 by one scaling of all of X, gave "exact" radius 0 at every point."""
from __future__ import annotations

import numpy as np

from ..networks import LinearClassifier
from .units import Local, localize


def l2_radius(net: LinearClassifier, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``max(y f(x), 0) / ||w||_2``: the exact l2 distance to the decision boundary (inf for a constant
    classifier that is right, 0 where it is wrong or 0)."""
    return l2_local(localize(net, np.atleast_2d(np.asarray(X, float)), np.asarray(y, float)))


def l2_local(loc: Local) -> np.ndarray:
    """:func:`l2_radius` of a localized linear classifier, in the units of X (the margin in each point's units is its
    distance to the hyperplane); a value in float64's subnormal range is rounded up (an upper bound)."""
    return loc.back(_distance(loc, 1.0), "up")


def linf_radius(net: LinearClassifier, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``max(y f(x), 0) / ||w||_1`` (SSTTM18): the point is robust at eps iff ``y <w, x> > eps ||w||_1``."""
    loc = localize(net, np.atleast_2d(np.asarray(X, float)), np.asarray(y, float))
    return loc.back(_distance(loc, float(np.abs(loc.W).sum())))


def linf_robust_error(net: LinearClassifier, X: np.ndarray, y: np.ndarray, eps: float) -> float:
    """The exact l_inf-robust error at radius eps (ties count as errors): ``y f(x) <= eps ||w||_1``."""
    return float(np.mean(linf_radius(net, X, y) <= float(eps)))


def _distance(loc: Local, norm: float) -> np.ndarray:
    """``max(q, 0) / norm`` in the points' units, from the proven sign: 0 where misclassified (or a tie), inf for a
    constant classifier that is right."""
    if not loc.W.any():
        return np.where(loc.sign > 0, np.inf, 0.0)
    return np.where(loc.sign > 0, np.maximum(loc.q, 0.0) / norm, 0.0)
