import math

import numpy as np
import pytest
import torch

from ibcheck.simulate.substrate.data import clusters
from ibcheck.simulate.substrate.models import ModelConfig, init_model
from ibcheck.simulate.substrate.trainer import TrainConfig, record_steps, train
from ibcheck.simulate.substrate.training import DataConfig, RunConfig, run


def _fit(setting="fa", steps=300, schedule="constant", loss="logistic", reduction="mean", lr=0.5, seeds=(0, 1), target=None, m=5, d=64, k=4, n=60, init=0.1):
    ds = clusters(d, k, n, 1.0, seed=0, multiclass=setting == "multiclass")
    X = torch.tensor(ds.X)
    y = torch.tensor(ds.y)
    model = init_model(ModelConfig(setting, width=m, init_scale=init), d, list(seeds), n_classes=k)
    cfg = TrainConfig(steps=steps, loss=loss, reduction=reduction, schedule=schedule, target_log10_loss=target, progress=False)
    return train(model, X, y, cfg, lr, list(seeds))


def test_reaches_log10_loss_minus_1000_without_nan():
    res = _fit("two-layer", steps=3000, schedule="loss-based", loss="exp", reduction="sum", lr=0.5, target=-1000, m=10, init=0.5)
    assert res.status == ["reached_target", "reached_target"]
    for r in res.final:
        assert r["log10_loss_sum"] <= -1000 and math.isfinite(r["log10_loss_sum"])
        assert math.isfinite(r["normalized_margin"]) and math.isfinite(r["smoothed_margin"])
    for p in res.model.params.values():
        assert torch.isfinite(p).all()


@pytest.mark.parametrize("loss", ["exp", "logistic"])
def test_ll20_bracket_along_trajectories(loss):
    """gamma_bar - rho^-L log N <= gamma_tilde <= gamma_bar (LL20.def.smoothed_margin)."""
    res = _fit("two-layer", steps=400, schedule="loss-based", loss=loss, reduction="sum", lr=0.2, m=10, init=0.5)
    n = 60
    checked = 0
    for r in res.trajectory:
        if r["train_accuracy"] < 1:
            continue
        gb, gt, rhoL = r["normalized_margin"], r["smoothed_margin"], r["rho"] ** 2
        assert gt <= gb * (1 + 1e-12) + 1e-15
        if loss == "exp" or r["log10_loss_sum"] < -8:
            assert gt >= gb - math.log(n) / rhoL - 1e-9 * abs(gb)
        checked += 1
    assert checked > 10


def test_smoothed_margin_is_monotone_after_the_loss_falls_below_ell0():
    """LL20.thm.monotone, numerically: with small steps the smoothed margin does not decrease."""
    res = _fit("two-layer", steps=2000, schedule="constant", loss="exp", reduction="sum", lr=0.01, seeds=(0,), m=10, init=0.5)
    rows = [r for r in res.trajectory if r["log10_loss_sum"] < 0]  # Lsum < ell(0) = 1
    assert len(rows) > 5
    vals = [r["smoothed_margin"] for r in rows]
    assert all(b >= a - 1e-9 * abs(a) for a, b in zip(vals, vals[1:])), vals


def test_same_seed_same_numbers():
    a = _fit(steps=100)
    b = _fit(steps=100)
    assert a.final == b.final
    # Seed 1 alone matches seed 1 trained next to seed 0 (to rounding: different GEMM shapes).
    c = _fit(steps=100, seeds=(1,))
    for key in ("log10_loss_mean", "q_min", "rho"):
        assert c.final[0][key] == pytest.approx(a.final[1][key], rel=1e-9)


def test_divergence_is_recorded_not_dropped():
    res = _fit("two-layer", steps=50, loss="exp", reduction="sum", lr=1e8, m=10, init=3.0, seeds=(0, 1))
    assert "diverged" in res.status
    for p in res.model.params.values():
        assert torch.isfinite(p).all()  # the last finite parameters are kept


def test_record_schedule_is_log_spaced():
    pts = record_steps(10000, 30)
    assert pts[0] == 0 and pts[-1] == 10000 and len(pts) <= 32
    gaps = np.diff(pts[5:])
    assert (gaps[1:] >= gaps[:-1] - 1).all()


def test_feature_averaging_at_small_size():
    """LPLL25.thm.feature_averaging at d = 256, k = 4, small init: cos ~ 1/sqrt(k/2) and ~ 0."""
    cfg = RunConfig(setting="fa", data=DataConfig(d=256, k=4, n=200), model=ModelConfig("fa", width=5, init_scale=0.1),
                    train=TrainConfig(steps=1500, lr=0.5, progress=False), seeds=2)
    res = run(cfg)
    for r in res.summary:
        assert r["test_accuracy"] > 0.99
        assert r["cosine_same_class_mean"] == pytest.approx(1 / math.sqrt(2), abs=0.08)
        assert abs(r["cosine_other_class_mean"]) < 0.2
        assert r["lambda_within_class_ratio"] < 1.3
    # at this size the other-class cosine sits at -0.13 +- 0.01, not 0 (24 runs, data seeds 0-2: -0.117 to -0.155):
    # the seeds' mean is held below 0.15, a single run's below 0.2
    assert abs(np.mean([r["cosine_other_class_mean"] for r in res.summary])) < 0.15


def test_multiclass_model_decouples_features_along_training():
    """LPLL25.thm.5_5: after poly(d) steps each neuron aligns with its own class's feature (lambda_ii = Omega~(1)) and
    not with the others' (lambda_ij = o~(1)). Tested along the direction of that limit, training time, on the same
    draws (the optimizer's settings are not in the initialization's key): from 1,500 to 6,000 steps every neuron's
    largest cosine stays its own class's, the diagonal rises and the off-diagonal falls in magnitude, and the read-out
    classifies. A fixed band at 1,500 steps (diagonal > 0.85 and 3x the off-diagonal) failed on one seed of the version-2
    draw (0.819 beside -0.277): measured over 6 seeds at d = 256, the off-diagonal sits at -0.20 to -0.28 and shrinks like
    log t (seed 1: -0.277, -0.267, -0.257 at 1,500, 6,000, 24,000 steps; the diagonal 0.819, 0.834, 0.848)."""
    def at(steps):
        cfg = RunConfig(setting="multiclass", data=DataConfig(d=256, k=4, n=200),
                        model=ModelConfig("multiclass", width=1, init_scale=0.1),
                        train=TrainConfig(steps=steps, lr=0.5, progress=False), seeds=2)
        return run(cfg).summary

    early, late = at(1500), at(6000)
    for a, b in zip(early, late):
        for r in (a, b):
            assert (r["_cosine_matrix"].argmax(axis=1) == np.arange(4)).all()
            assert r["readout_test_accuracy"] > 0.99
        assert b["cosine_same_class_mean"] > a["cosine_same_class_mean"]
        assert abs(b["cosine_other_class_mean"]) < abs(a["cosine_other_class_mean"])
