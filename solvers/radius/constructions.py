"""The robust networks whose existence the theorems assert, built from a dataset's means.

* FVBS23.thm.4_1: one neuron per cluster, ``w_j = mu_j / ||mu_j||``, bias ``-beta`` (the neuron
  fires only near its own cluster), output weight ``y^(j)``;
* LPLL25.prop.robust_exists: ``sum_{J+} ReLU(<mu_j, x> + b) - sum_{J-} ReLU(<mu_l, x> + b)``
  with a negative bias b.

With ``||mu_j|| = sqrt(d)`` and orthogonal means, a point of cluster j has ``<mu_j, x>/sqrt(d)
~ sqrt(d)``; with beta = sqrt(d)/2 the certified radius is of order sqrt(d).
"""
from __future__ import annotations

import numpy as np

from ..networks import TwoLayerReLU


def fvbs23_robust(means: np.ndarray, cluster_labels: np.ndarray, beta: float | None = None) -> TwoLayerReLU:
    """FVBS23.thm.4_1's network: ``f(x) = sum_j y^(j) ReLU(<mu_j, x>/||mu_j|| - beta)``, beta = sqrt(d)/2."""
    norms = np.linalg.norm(means, axis=1)
    beta = float(np.median(norms)) / 2 if beta is None else beta
    W = means / norms[:, None]
    return TwoLayerReLU(W=W, a=np.asarray(cluster_labels, float), b=np.full(len(means), -beta), trained=("W", "b", "a"), kind="two-layer")


def lpll25_robust(means: np.ndarray, J_plus, bias: float | None = None) -> TwoLayerReLU:
    """LPLL25.prop.robust_exists: ``sum_{J+} ReLU(<mu_j, x> + b) - sum_{J-} ReLU(<mu_l, x> + b)``, b = -d/2."""
    d2 = float(np.median(np.sum(means**2, axis=1)))
    b = -d2 / 2 if bias is None else bias
    sign = np.where(np.isin(np.arange(len(means)), list(J_plus)), 1.0, -1.0)
    return TwoLayerReLU(W=means.copy(), a=sign, b=np.full(len(means), b), trained=("W", "b", "a"), kind="two-layer")
