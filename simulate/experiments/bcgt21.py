"""BCGT21.thm.one_step: the gradient step that flips a random two-layer network, measured by its norm.
"""
from __future__ import annotations

from ibcheck.simulate.substrate.censored import censored_quantile
from ibcheck.simulate.substrate.data import sphere_points
from ibcheck.simulate.substrate.one_step import flip_along_gradient
from ibcheck.simulate.substrate.seeds import cell_key, rng


def measure_bcgt21(cell: dict, seed: int) -> dict:
    """BCGT21.thm.one_step: the norm of the gradient step that flips a random ReLU network (median over inputs)."""
    from ibcheck.simulate.substrate.models import ModelConfig, random_networks  # heavy: torch (loaded on first use)

    d, k = int(cell["d"]), int(cell["k"])
    net = random_networks(ModelConfig("random-net", width=k), d, [seed])[0]
    t_max = 100.0
    _, r = flip_along_gradient(net, sphere_points(200, d, rng("claim-measure", seed, 5, cell_key("bcgt21", d, k))), t_max=t_max)
    return {"flip_norm": censored_quantile(r, 0.5, limit=t_max)}  # no flip within t_max: at least t_max, never dropped
