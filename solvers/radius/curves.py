"""Robust accuracy against eps, from the radii (never by re-attacking at each eps)."""
from __future__ import annotations

import numpy as np


def robust_accuracy(radii: np.ndarray, eps_grid: np.ndarray) -> np.ndarray:
    """``P[r(x) > eps]``: a point is robust at eps iff its radius exceeds eps (ties are errors)."""
    r = np.asarray(radii)[:, None]
    return (r > np.asarray(eps_grid)[None, :]).mean(axis=0)
