"""The built-in experiments: one per claim that ibcheck can measure, with its grids, seeds, fixed settings and cost.
"""
from __future__ import annotations

from ibcheck.simulate.experiments.base import Experiment, FreeSetting, GaussianModel, LongRun, TrainedNetwork, design
from ibcheck.simulate.experiments.bcgt21 import measure_bcgt21
from ibcheck.simulate.experiments.constructions import measure_fvbs23_robust, measure_lpll25_robust_exists
from ibcheck.simulate.experiments.kkt import measure_fvbs23_4_2, measure_vys22
from ibcheck.simulate.experiments.lpll25 import measure_lpll25_5_5, measure_lpll25_nonrobust
from ibcheck.simulate.experiments.ssttm18 import measure_ssttm18
from ibcheck.simulate.experiments.trajectories import measure_ll20_rates, measure_shngs18

# the GD settings of the KKT claims' networks (before polishing); quick and full differ only in networks per sample
_FVBS23_GD = {"width": 6, "init_scale": 0.5, "steps": 2000, "lr": 0.05, "target_log10_loss": -30}


_VYS22_GD = {"width": 20, "init_scale": 0.5, "steps": 4000, "lr": 0.05, "target_log10_loss": -800}


BUILTIN: dict[str, Experiment] = {e.name: e for e in [
    Experiment("LPLL25.thm.nonrobust", "LPLL25.thm.nonrobust", ("flip_radius_median",), "fa network, GD from small init, clusters",
               measure_lpll25_nonrobust, grid={"d": [128, 256, 512, 1024], "k": [2, 4, 8]}, quick_grid={"d": [64, 128, 256], "k": [2, 4, 8]},
               design=TrainedNetwork,
               max_grid={"d": 2048, "k": 16}, cost_model=(0.46, {'d': 0.064, 'k': 0.105})),
    Experiment("LPLL25.prop.robust_exists", "LPLL25.prop.robust_exists", ("robust_radius",), "construction, certified radius",
               measure_lpll25_robust_exists, grid={"d": [128, 256, 512, 1024], "k": [2, 4, 8]}, quick_grid={"d": [64, 128, 256], "k": [2, 4, 8]},
               max_grid={"d": 2048, "k": 16}, cost_model=(0.0031, {'d': 0.32})),
    Experiment("FVBS23.thm.4_1", "FVBS23.thm.4_1", ("robust_radius",), "construction, certified radius",
               measure_fvbs23_robust, grid={"d": [128, 256, 512, 1024], "k": [2, 4, 8]}, quick_grid={"d": [64, 128, 256], "k": [2, 4, 8]},
               max_grid={"d": 2048, "k": 16}, cost_model=(0.0025, {'d': 0.375})),
    Experiment("LPLL25.thm.5_5", "LPLL25.thm.5_5", ("robust_radius",), "k-class network's binary read-out, attack/universal radius",
               measure_lpll25_5_5, grid={"d": [128, 256, 512], "k": [2, 4, 8]}, quick_grid={"d": [64, 128, 256], "k": [2, 4, 6]}, quick_seeds=1,
               design=TrainedNetwork,
               fixed={"width": 1, "points": 60}, cost_model=(0.54, {'d': 0.074, 'k': 0.139})),
    Experiment("FVBS23.thm.4_2", "FVBS23.thm.4_2", ("universal_flip_norm",),
               "certified KKT points of (P): two-layer networks from several initializations on one sample (loss-based GD, "
               "then polished on their activation cone), clusters; n is the smallest inside the window at each (d, k)",
               # the full grid: d over x16 (5 values) and k = 4-16, where the robust network and the KKT points separate;
               # the window leaves 13 of its 15 cells (none at d = 256 for k >= 8), n = k ln^2 d up to 1107
               measure_fvbs23_4_2, grid={"d": [256, 512, 1024, 2048, 4096], "k": [4, 8, 16]},
               quick_grid={"d": [256, 512, 1024], "k": [2, 4, 6, 8]},  # k = 8 inside at d = 512, 1024 (n = 312, 385)
               # 3 seeds x 13 inside cells = 39 samples: FVBS23.thm.3_1's binomial test (measured on these samples) needs
               # 36 to bound the rate of samples above eps below delta = 0.1
               design=TrainedNetwork, seeds=3, quick_seeds=2,
               # the KKT engine's budget per sample (its recall under each budget: bench/kkt_recall.py, solvers/kkt/recall.json)
               # the record rule (issue 56): starts of every source until the largest flip norm stops rising, at most
               # kkt_starts_max (the depth of each budget is measured against a 4x deeper reference: solvers/kkt/depth.py)
               # kkt_steps 500: GD stopped at 500 steps reaches the robust basins 2000 steps rarely does (one k = 8 sample:
               # 23 of 360 cover starts against 2; on 40 quick instances it matched or beat a 2000-step search on 38)
               # kkt_starts_max 480: the hill-climb's records come at starts 120-135, so the rule needs about 270
               fixed={**_FVBS23_GD, "networks": 3, "kkt_gd": 8, "kkt_steps": 500, "kkt_programs": 8, "kkt_enumerate": 225,
                      "kkt_gd_max": 40, "kkt_starts_max": 480, "kkt_ascent": 24},
               quick_fixed={**_FVBS23_GD, "networks": 2, "kkt_gd": 4, "kkt_steps": 500, "kkt_programs": 8, "kkt_enumerate": 4,
                            "kkt_gd_max": 20, "kkt_starts_max": 480, "kkt_ascent": 12},
               # Assumption 2.2 (its recalled, unverified forms) is part of "inside": sigma = 1 (the data), max_mean_ip
               # measured on each sample's means, kappa = 1/2 stated here (the exponent was not read: "a small power of d")
               hypothesis_values=lambda cell: {"n": design(TrainedNetwork, cell).n_per_cluster * int(cell["k"]),
                                               "eps": design(TrainedNetwork, cell).eps, "delta": 0.1, "sigma": 1.0, "kappa": 0.5},
               assumptions=("FVBS23.asm.2_2",), design_values={"max_mean_ip": 0.0},
               max_grid={"d": 4096, "k": 16}, free=FreeSetting("n"), kkt=True,
               # fitted to the 39 tasks of make report-full at 806babe (seconds = 4.6e-5 n^2.42, 9486 s in all; the
               # earlier 3.0e-6 n^2.7 predicted 3890); it predicts the quick grid's 193 s as 231 s
               cost_model=(4.6e-5, {"n": 2.42})),
    Experiment("VYS22.thm.main", "VYS22.thm.main", ("universal_flip_norm", "universal_flip_eta"),
               "certified KKT points of (P): two-layer networks from several initializations on one sample on the sphere "
               "(loss-based GD, then polished on their activation cone); n <= sqrt(d)/9 keeps H1",
               measure_vys22, grid={"d": [2048, 4096, 8192, 16384], "n": [2, 4, 8]}, quick_grid={"d": [2048, 4096, 8192, 16384], "n": [2, 4, 8]},
               design=TrainedNetwork,
               # width 20 and a deep target: narrower networks stall on the sphere (train accuracy < 1, no point of (P))
               # starts until the largest norm stops rising (the record rule), at most kkt_starts_max (cheap at n <= 8)
               # 40 GD starts at least (issue 56: at 20, the largest norm was within 2% of a 4x deeper reference on 27 of
               # 30 samples, lowest ratio 0.926; at 80 without the climb, 26 of 30, lowest 0.902)
               # a hill-climb of split, leave-one-out, drop and merge moves from the best point: in a 4x deeper reference
               # the last record came from a split move on 3 of the 4 samples where an 80-start budget fell short
               # (with the climb after 40 GD starts, all four reached the reference's value and stopped by the rule)
               fixed={**_VYS22_GD, "networks": 3, "kkt_gd": 80, "kkt_gd_max": 80, "kkt_starts_max": 320, "kkt_ascent": 48},
               quick_fixed={**_VYS22_GD, "networks": 2, "kkt_gd": 40, "kkt_gd_max": 40, "kkt_starts_max": 160, "kkt_ascent": 24},
               seeds=3,
               quick_seeds=2, kkt=True, max_grid={"d": 65536, "n": 8}, cost_model=(5.0, {})),
    Experiment("BCGT21.thm.one_step", "BCGT21.thm.one_step", ("flip_norm",), "random ReLU network, one gradient step",
               measure_bcgt21, grid={"d": [64, 256, 1024], "k": [100, 400, 1600]}, quick_grid={"d": [64, 128, 256], "k": [50, 100, 200]},
               hypothesis_values=lambda cell: {"gamma": 0.5}, max_grid={"d": 4096, "k": 3200}, cost_model=(1.13e-5, {'d': 0.517, 'k': 0.835})),
    Experiment("LL20.thm.rates", "LL20.thm.rates", ("train_loss", "param_norm"),
               "two-layer network, GD with the loss-based step (LL20) to loss 1e-800, exponential loss; T = sum of step sizes",
               measure_ll20_rates, design=LongRun, grid={"run": [0]}, quick_grid={"run": [0]},
               # eta_t = alpha / L with a fixed alpha: a growing alpha shifts log L against log T at every change and
               # swamps the log T factor the theorem states
               fixed={"target_log10_loss": -800, "lr": 0.002, "up": 1.0, "steps": 6000}, trajectory=True, seeds=8, quick_seeds=6, cost_model=(1.0, {})),
    Experiment("SHNGS18.thm.direction", "SHNGS18.thm.direction", ("direction_error", "train_loss", "param_norm"),
               "linear model, GD with the loss-based step (eta = 0.2 / L, alpha held fixed) on separable data (logistic loss); T = sum of step sizes",
               measure_shngs18, design=LongRun, grid={"run": [0]}, quick_grid={"run": [0]}, fixed={"steps": 6000, "lr": 0.2, "up": 1.0, "records": 120},
               quick_fixed={"steps": 3000, "lr": 0.2, "up": 1.0, "records": 120},
               # cost: the half-step control runs twice the steps (1.5x the work of one task before 2026-11-26: 3.0)
               trajectory=True, seeds=6, quick_seeds=4, cost_model=(4.5, {})),
    Experiment("SSTTM18.cor.robust_upper", "SSTTM18.cor.robust_upper", ("robust_sample_threshold",),
               "Gaussian model, class-mean estimator, sigma = 0.0312 d^(1/4) (inside H1: sigma <= d^(1/4)/32)",
               measure_ssttm18, design=GaussianModel, grid={"d": [10**3, 10**4, 10**5, 10**6, 10**7]}, quick_grid={"d": [10**4, 10**5, 10**6]},
               fixed={"eps": 0.25, "sigma_scale": 0.0312}, seeds=3, quick_seeds=2,
               hypothesis_values=lambda cell: {"sigma": design(GaussianModel, cell).sigma_scale * float(cell["d"]) ** 0.25,
                                               "eps": design(GaussianModel, cell).eps},
               skip_hypotheses={"H3": "n is the quantity measured (the sample threshold), not a setting of the design"},
               max_grid={"d": 10**7}, cost_model=(8.4e-09, {'d': 1.215})),
    Experiment("SSTTM18.cor.robust_lower", "SSTTM18.cor.robust_lower", ("robust_sample_threshold",),
               "Gaussian model, class-mean estimator, sigma = d^(1/4) (c = 1): the robust sample complexity over d and eps",
               # eps is swept so that its stated exponent (eps^2, as eps -> 0) is tested, not only d and log d. The
               # class-mean threshold is about (a eps d^(1/4) + z_0.99)^2 sqrt(d)/d^(1/2)...: eps^2 sqrt(d) only where
               # a eps d^(1/4) >> z = 2.33, so eps stays >= 1/4 (a eps d^(1/4) >= 3.5 at d = 1e5); below it the 1%
               # error's z term dominates and the local eps exponent falls toward 0 (pre-asymptotic at these d)
               measure_ssttm18, design=GaussianModel,
               grid={"d": [10**5, 3 * 10**5, 10**6, 3 * 10**6, 10**7, 3 * 10**7], "eps": [0.25, 0.35, 0.5]},
               quick_grid={"d": [10**5, 3 * 10**5, 10**6, 3 * 10**6, 10**7], "eps": [0.25, 0.35, 0.5]},
               fixed={"sigma_scale": 1.0}, seeds=3, quick_seeds=2,
               hypothesis_values=lambda cell: {"sigma": design(GaussianModel, cell).sigma_scale * float(cell["d"]) ** 0.25,
                                               "eps": design(GaussianModel, cell).eps},
               skip_hypotheses={"H1": "n is the quantity measured (the robust sample threshold); H1 read at n is the theorem's "
                                      "conclusion, not a setting of the design"},
               max_grid={"d": 3 * 10**7}, cost_model=(8.4e-09, {'d': 1.215})),
]}
