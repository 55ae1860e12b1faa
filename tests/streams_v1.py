"""The cluster data of the first random streams (``seeds.STREAMS_VERSION`` 1: ``default_rng(seed)`` at every cell), for
the fixtures recorded on them: tests/data/dead_neuron_wall.npz (a cone of a GD network on these points) and
tests/data/kkt_planted.npz (known KKT points of these instances). They hold points and cones, not the data, so the data
they were found on are drawn here as data.py drew them before the streams were per (cell, seed)."""
from __future__ import annotations

import numpy as np

from ibcheck.simulate.substrate.data import Dataset, cluster_means, parse_split


def clusters_v1(d: int, k: int, n: int, sigma: float = 1.0, seed: int = 0) -> Dataset:
    """``data.clusters(d, k, n, sigma, seed)`` as it was drawn under streams version 1 (orthogonal means, split half)."""
    rng = np.random.default_rng(seed)
    means = cluster_means(d, k, rng, True)
    J = parse_split(k, "half")
    label_of = np.where(np.isin(np.arange(k), J), 1.0, -1.0)
    c = rng.integers(0, k, size=n)
    xi = sigma * rng.standard_normal((n, d))

    def sampler(m, r):
        cc = r.integers(0, k, size=m)
        return means[cc] + sigma * r.standard_normal((m, d)), label_of[cc]

    return Dataset(X=means[c] + xi, y=label_of[c], kind="clusters", means=means, noise=xi, cluster=c, J_plus=J,
                   sampler=sampler)
