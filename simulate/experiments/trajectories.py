"""Long GD runs measured along their trajectory: LL20.thm.rates and SHNGS18.thm.direction.
"""
from __future__ import annotations

import numpy as np

from ibcheck.simulate.experiments.base import LongRun, design


def _traj_row(log10_T: float, **values) -> dict:
    """One trajectory point; T itself only where float64 holds it (log10 T is always given)."""
    return {"log10_T": float(log10_T), "T": 10 ** log10_T if log10_T < 300 else None, **values}


def measure_ll20_rates(cell: dict, seed: int) -> dict:
    """LL20.thm.rates: Lsum and rho along one GD run (exponential loss, summed), against T = sum of step sizes.

    The loss-based schedule (eta_t = alpha_t / L) takes the loss to 1e-800 in a few hundred steps,
    so T covers hundreds of decades; losses and T are reported as log10 (they leave float64).
    Kept: points after t0 (every sample fitted, loss below ell(0) = 1) with T >= 100.
    """
    from ibcheck.simulate.substrate.models import ModelConfig  # heavy: torch (loaded on first use)
    from ibcheck.simulate.substrate.trainer import TrainConfig  # heavy: torch (loaded on first use)
    from ibcheck.simulate.substrate.training import DataConfig, RunConfig, run  # heavy: torch (loaded on first use)

    p = design(LongRun, cell)
    cfg = RunConfig(setting="two-layer", data=DataConfig(d=20, k=4, n=40, sigma=0.5, seed=seed, n_test=10),
                    model=ModelConfig("two-layer", width=10, init_scale=1.0),
                    train=TrainConfig(steps=p.steps, lr=p.lr, loss="exp", reduction="sum", schedule=p.schedule, up=p.up,
                                      target_log10_loss=p.target_log10_loss, records=p.records, spacing="linear", progress=False),
                    seeds=1, seed0=seed)
    res = run(cfg)
    rows = [_traj_row(r["log10_T"], log10_train_loss=r["log10_loss_sum"], param_norm=r["rho"])
            for r in res.trajectory if r["step"] > 0 and r["train_accuracy"] == 1.0 and r["log10_loss_sum"] < 0 and r["log10_T"] >= 2]
    return {"trajectory": rows, "status": res.summary[0]["status"]}


def measure_shngs18(cell: dict, seed: int) -> dict:
    """SHNGS18.thm.direction: ||w(t)/||w(t)|| - w_svm/||w_svm|||| (the theorem's direction error), the
    training loss and ||w|| along GD on separable data (logistic loss), against T = sum of step sizes.

    The loss-based schedule reaches losses near 1e-700, T near 1e700 (kept as log10); points with T >= 100.
    """
    from ibcheck.simulate.substrate.models import ModelConfig  # heavy: torch (loaded on first use)
    from ibcheck.simulate.substrate.trainer import TrainConfig  # heavy: torch (loaded on first use)
    from ibcheck.simulate.substrate.training import DataConfig, RunConfig, run  # heavy: torch (loaded on first use)
    from ibcheck.solvers.svm import direction_error, hard_margin_svm  # heavy: cvxpy (loaded on first use)

    p = design(LongRun, cell)
    cfg = RunConfig(setting="linear", data=DataConfig(kind="separable", d=10, n=60, seed=seed, n_test=10),
                    model=ModelConfig("linear", width=1, init_scale=1e-3),
                    train=TrainConfig(steps=p.steps, lr=p.lr, loss="logistic", reduction="mean", schedule=p.schedule,
                                      target_log10_loss=p.target_log10_loss, checkpoints=p.records, records=p.records,
                                      spacing="linear" if p.schedule == "loss-based" else "log", progress=False), seeds=1, seed0=seed)
    res = run(cfg)
    ds = res.datasets[0]
    svm = hard_margin_svm(ds.X, ds.y, bias=False)
    by_step = {r["step"]: r for r in res.trajectory}
    rows = []
    for step, nets in res.checkpoints:
        r = by_step.get(step)
        if r is None or step < 1 or r["log10_T"] < 2:
            continue
        w = nets[0].w
        norm = float(np.linalg.norm(w))
        rows.append(_traj_row(r["log10_T"], direction_error=direction_error(w, svm.w),
                              log10_train_loss=r["log10_loss_mean"], param_norm=norm))
    return {"trajectory": rows, "status": res.summary[0]["status"]}
