"""The robust constructions, certified: LPLL25.prop.robust_exists and FVBS23.thm.4_1 (a network robust to Omega(sqrt d)).
"""
from __future__ import annotations

import numpy as np

from ibcheck.simulate.substrate.data import clusters
from ibcheck.simulate.substrate.seeds import stream
from ibcheck.solvers.radius.certified import certified_radius
from ibcheck.solvers.radius.constructions import fvbs23_robust, lpll25_robust


def _cluster_data(cell, seed):
    return clusters(int(cell["d"]), int(cell["k"]), 10, 1.0, seed=seed)


def measure_lpll25_robust_exists(cell: dict, seed: int) -> dict:
    """LPLL25.prop.robust_exists: certified radius of sum_J+ ReLU(<mu, x> + b) - sum_J- ReLU(<mu, x> + b)."""
    ds = _cluster_data(cell, seed)
    X, y = ds.sample(200, stream("claim-measure", seed, 1))
    return {"robust_radius": float(np.median(certified_radius(lpll25_robust(ds.means, ds.J_plus), X, y)))}


def measure_fvbs23_robust(cell: dict, seed: int) -> dict:
    """FVBS23.thm.4_1: certified radius of one neuron per cluster with a negative bias."""
    ds = _cluster_data(cell, seed)
    labels = np.where(np.isin(np.arange(len(ds.means)), ds.J_plus), 1.0, -1.0)
    X, y = ds.sample(200, stream("claim-measure", seed, 2))
    return {"robust_radius": float(np.median(certified_radius(fvbs23_robust(ds.means, labels), X, y)))}
