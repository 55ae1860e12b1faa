"""LPLL25's trained networks: the non-robust flip radius (thm.nonrobust) and the k-class read-out (thm.5_5).
"""
from __future__ import annotations

import numpy as np

from ibcheck.simulate.experiments.base import TrainedNetwork, design
from ibcheck.simulate.substrate.censored import censored_quantile
from ibcheck.simulate.substrate.seeds import stream
from ibcheck.solvers.radius.attack import attack_radius
from ibcheck.solvers.radius.universal import universal_directions, universal_radius


def _fa_run(cell: dict, seed: int, setting: str = "fa"):
    from ibcheck.simulate.substrate.models import ModelConfig  # heavy: torch (loaded on first use)
    from ibcheck.simulate.substrate.trainer import TrainConfig  # heavy: torch (loaded on first use)
    from ibcheck.simulate.substrate.training import DataConfig, RunConfig, run  # heavy: torch (loaded on first use)

    d, k, p = int(cell["d"]), int(cell["k"]), design(TrainedNetwork, cell)
    cfg = RunConfig(setting=setting, data=DataConfig(d=d, k=k, n=p.n_per_cluster * k, sigma=1.0, seed=seed, n_test=10),
                    model=ModelConfig(setting, width=p.width, init_scale=p.init_scale),
                    train=TrainConfig(steps=p.steps, lr=p.lr, progress=False), seeds=1, seed0=seed)
    res = run(cfg)
    return res.networks[0], res.datasets[0], res.summary[0]


def measure_lpll25_nonrobust(cell: dict, seed: int) -> dict:
    """LPLL25.thm.nonrobust: median flip radius of a GD-trained fa network along -y(sum_J+ mu - sum_J- mu)."""
    net, ds, summ = _fa_run(cell, seed)
    X, y = ds.sample(design(TrainedNetwork, cell).points, stream("claim-measure", seed, 0))
    r = universal_radius(net, X, y, universal_directions("lpll25", means=ds.means, J_plus=ds.J_plus))
    return {"flip_radius_median": censored_quantile(r, 0.5), "test_accuracy": summ["test_accuracy"], "status": summ["status"]}


def measure_lpll25_5_5(cell: dict, seed: int) -> dict:
    """LPLL25.thm.5_5: radius of the k-class network's binary read-out (best verified flip, attack or universal)."""
    net, ds, summ = _fa_run(cell, seed, setting="multiclass")
    ro = net.readout(ds.J_plus)
    X, yc = ds.sample(design(TrainedNetwork, cell).points, stream("claim-measure", seed, 3))
    y = np.where(np.isin(yc, ds.J_plus), 1.0, -1.0)
    uni = universal_radius(ro, X, y, universal_directions("lpll25", means=ds.means, J_plus=ds.J_plus))
    best = np.minimum(attack_radius(ro, X, y)["attack"], uni)
    return {"robust_radius": float(np.median(best)), "status": summ["status"]}
