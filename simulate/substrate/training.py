"""One training run from a declarative config: data + model + trainer + measurements.

``run(RunConfig)`` builds the dataset(s), initializes S seeds, trains them in one batch,
measures each seed (test accuracy, margins, feature statistics) and returns a
:class:`~ibcheck.simulate.substrate.rundir.Run`; ``Run.save`` writes it as a run directory, and
``load_run`` reads one back as the same type (both in :mod:`simulate.substrate.rundir`). The configs
are in :mod:`simulate.substrate.config`.
"""
from __future__ import annotations

import numpy as np
import torch

from ibcheck.simulate.substrate import data as D
from ibcheck.simulate.substrate.config import DataConfig, RunConfig, make_dataset
from ibcheck.simulate.substrate.measure import feature_statistics, test_accuracy
from ibcheck.simulate.substrate.models import init_key, init_model, random_networks
from ibcheck.simulate.substrate.one_step import input_gradients
from ibcheck.simulate.substrate.rundir import Run
from ibcheck.simulate.substrate.seeds import stream
from ibcheck.simulate.substrate.trainer import TrainResult, resolve_device, train

__all__ = ["DataConfig", "Run", "RunConfig", "make_dataset", "run"]  # the configs and the result type, with the run that joins them


def _to_torch(ds_list, dtype, device, multiclass):
    Xs = [torch.tensor(ds.X, dtype=dtype, device=device) for ds in ds_list]
    ys = [torch.tensor(ds.y, dtype=torch.int64 if multiclass else dtype, device=device) for ds in ds_list]
    if len(ds_list) == 1:
        return Xs[0], ys[0]
    return torch.stack(Xs), torch.stack(ys)


def run(cfg: RunConfig) -> Run:
    """Train (or, for random-net, draw) S networks and measure them."""
    device = resolve_device(cfg.train.device)
    seeds = cfg.seed_list
    data_seeds = [cfg.data.seed + (s - cfg.seed0) for s in seeds] if cfg.data.per_seed else [cfg.data.seed]
    datasets = [make_dataset(cfg, s) for s in data_seeds]
    ds0 = datasets[0]
    if cfg.setting == "random-net":
        return _random_net_run(cfg, datasets[0], seeds)
    multiclass = cfg.setting == "multiclass"
    X, y = _to_torch(datasets, cfg.train.torch_dtype, device, multiclass)
    model = init_model(cfg.model, ds0.d, seeds, n_classes=ds0.n_classes if multiclass else 2, cell=ds0.key).to(device, cfg.train.torch_dtype)
    res: TrainResult = train(model, X, y, cfg.train, cfg.learning_rate(), seeds)
    nets = res.networks()
    W0 = res.init_W
    init_W = [W0[i].detach().cpu().numpy() if cfg.setting != "linear" else None for i in range(len(seeds))]
    summary = []
    for i, s in enumerate(seeds):
        ds = datasets[i if cfg.data.per_seed else 0]
        summary.append(_measure(cfg, s, nets[i], init_W[i], ds, res.final[i]))
    return Run(cfg, datasets, nets, init_W, summary, res.trajectory, res.seconds, res.checkpoints)


def _measure(cfg: RunConfig, seed: int, net, W0, ds: D.Dataset, final: dict) -> dict:
    Xte, yte = ds.sample(cfg.data.n_test, stream("test-points", seed, init_key(cfg.model, ds.d, ds.n_classes, ds.key)))
    red = "log10_loss_mean" if cfg.train.reduction == "mean" else "log10_loss_sum"
    row = {
        "seed": seed, "status": final["status"], "status_step": final["status_step"],
        "train_log10_loss": final[red], "train_log10_loss_sum": final["log10_loss_sum"],
        "train_accuracy": final["train_accuracy"], "test_accuracy": test_accuracy(net, Xte, yte),
        "q_min": final["q_min"], "rho": final["rho"], "degree": net.degree,
        "normalized_margin": final["normalized_margin"], "smoothed_margin": final["smoothed_margin"],
        "log10_T": final["log10_T"],
        "cosine_same_class_mean": None, "cosine_other_class_mean": None, "lambda_within_class_ratio": None,
    }
    if ds.means is not None and W0 is not None and hasattr(net, "W"):
        stats = feature_statistics(net, W0, ds)
        row.update({k: v for k, v in stats.items() if k != "cosine_matrix"})
        row["_cosine_matrix"] = stats["cosine_matrix"]
    if cfg.setting == "multiclass" and ds.J_plus:
        ro = net.readout(ds.J_plus)
        yb = np.where(np.isin(yte, ds.J_plus), 1.0, -1.0)
        row["readout_test_accuracy"] = test_accuracy(ro, Xte, yb)
    if "max_abs_cos_means" in ds.info:
        row["max_abs_cos_means"] = ds.info["max_abs_cos_means"]
    return row


def _random_net_run(cfg: RunConfig, ds: D.Dataset, seeds: list[int]) -> Run:
    """BCGT21: draw the networks; measure |f(x)| and ||grad f(x)|| on the inputs (BCGT21.facts)."""
    nets = random_networks(cfg.model, ds.d, seeds, cell=ds.key)
    summary = []
    for s, net in zip(seeds, nets):
        f = net.forward(ds.X)
        g = input_gradients(net, ds.X)
        summary.append({
            "seed": s, "status": "drawn", "status_step": 0, "train_log10_loss": None, "test_accuracy": None,
            "normalized_margin": None, "smoothed_margin": None, "cosine_same_class_mean": None,
            "cosine_other_class_mean": None, "lambda_within_class_ratio": None,
            "output_abs_mean": float(np.abs(f).mean()), "grad_norm_mean": float(np.linalg.norm(g, axis=1).mean()),
        })
    return Run(cfg, [ds], nets, [None] * len(seeds), summary, [])
