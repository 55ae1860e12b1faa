"""Universal perturbations: one direction for all points (up to the sign y), and flip rates.

* FVBS23.thm.4_2: ``x - y z`` with ``z = eta sum_j y^(j) mu^(j)``;
* LPLL25.thm.nonrobust: ``-y (sum_{J+} mu_j - sum_{J-} mu_j)``, normalized (the same
  direction as FVBS23's when the cluster labels are the J+/J- split);
* VYS22.thm.main: ``x - y delta`` with ``delta = eta sum_i y_i x_i`` over the training set.
"""
from __future__ import annotations

import numpy as np

from ibcheck.errors import InputError

from .ray import ray_flip_radius
from .units import unit_vector

KINDS = ("fvbs23", "lpll25", "vys22")


def universal_directions(kind: str, *, means=None, cluster_labels=None, J_plus=None, X_train=None, y_train=None) -> np.ndarray:
    """The unit vector v; point i moves along ``-y_i v``."""
    if kind in ("fvbs23", "lpll25"):
        if means is None:
            raise InputError(f"the {kind} direction needs the cluster means")
        if cluster_labels is None:
            k = len(means)
            cluster_labels = np.where(np.isin(np.arange(k), J_plus), 1.0, -1.0)
        v = (np.asarray(cluster_labels, float)[:, None] * means).sum(0)
    elif kind == "vys22":
        v = (np.asarray(y_train, float)[:, None] * X_train).sum(0)
    else:
        raise InputError(f"unknown universal direction {kind!r}: one of {', '.join(KINDS)}")
    return unit_vector(v)  # at any scale: ||v|| of data at 1e-200 underflowed to 0 (v inf, every radius 0)


def universal_radius(net, X: np.ndarray, y: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Per-point flip radius along ``-y_i v`` (exact, from the ray breakpoints), in the units of ``||v||``."""
    U = -np.asarray(y, float)[:, None] * np.asarray(v, float)[None, :]
    return ray_flip_radius(net, X, y, U)


def flip_rate(radii: np.ndarray, norm: float) -> float:
    """Fraction of points flipped by a perturbation of norm ``norm``: ``P[r <= norm]`` (FVBS23.thm.4_2)."""
    return float(np.mean(np.asarray(radii) <= norm))
