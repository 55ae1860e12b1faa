"""Experiments bound to claims: each measures a claim's quantity, under the bound's own name.

An :class:`Experiment` names the claim, the measured quantity, the setting (data, model,
trainer, measurement), the grid and the seeds. Its ``measure(cell, seed)`` runs one grid
cell for one seed and returns ``{quantity: value, ...}``; trajectory experiments return
``{"trajectory": [{"T": ..., quantity: ...}, ...]}`` and are fitted against T. The predicted
exponents are read from ``theory`` at comparison time, never retyped here.
"""
from __future__ import annotations

import math
from collections.abc import MutableMapping
from dataclasses import dataclass, field, fields
from typing import Callable

import numpy as np

from ibcheck.simulate.experiments.window import FreeSetting
from ibcheck.simulate.stats.censored import AtLeast, AtMost, censored_quantile
from ibcheck.simulate.substrate.seeds import rng, stream


# -- the fixed parameters of each family of experiments, with their defaults declared once ------------
# (an Experiment's ``fixed`` overrides them; a measure function reads them through ``design``)
@dataclass(frozen=True)
class TrainedNetwork:
    """A network trained by GD on k clusters (n = n_per_cluster k) or on the sphere. The defaults are
    LPLL25's fa network; an experiment's ``fixed`` sets the rest (FVBS23 and VYS22: a two-layer
    network with the loss-based step and, for FVBS23, the fraction ``eps`` of points allowed to resist)."""

    width: int = 5
    init_scale: float = 0.1
    steps: int = 800
    lr: float = 0.5
    n_per_cluster: int = 40
    points: int = 200
    target_log10_loss: float | None = None
    k: int = 2
    eps: float = 0.1
    networks: int = 3  # KKT claims: networks trained on each sample, from different initializations


@dataclass(frozen=True)
class LongRun:
    """One long GD run measured along its trajectory (LL20, SHNGS18)."""

    steps: int = 2000
    lr: float = 0.05
    schedule: str = "loss-based"
    target_log10_loss: float = -800.0
    records: int = 400
    up: float = 2 ** 0.2  # the loss-based step's growth factor after a step that lowered the loss (1: a fixed alpha)


@dataclass(frozen=True)
class GaussianModel:
    """SSTTM18's Gaussian model at a fixed l_inf radius."""

    eps: float = 0.25
    sigma_scale: float = 1.0  # sigma = sigma_scale d^(1/4): 1/32 is the edge of SSTTM18.cor.robust_upper's H1, 1 is c = 1


def design(cls, cell: dict):
    """The design ``cls`` at one cell: its declared defaults, overridden by the cell's fixed values."""
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in cell.items() if k in names})


@dataclass(frozen=True)
class Experiment:
    name: str
    claim: str
    quantities: tuple[str, ...]  # bound quantities this experiment measures
    description: str  # what is trained or built, on which data
    measure: Callable[[dict, int], dict]
    grid: dict
    quick_grid: dict
    fixed: dict = field(default_factory=dict)
    seeds: int = 3
    quick_seeds: int = 2
    trajectory: bool = False  # fit against T along each run instead of across cells
    quick_fixed: dict | None = None  # fixed settings for --quick (default: fixed)
    # The claim's variables at a cell beyond the cell itself (e.g. FVBS23's n = 20 k, eps, delta),
    # for evaluating its hypotheses; scalars the measure returns (VYS22's max_ip) are added too.
    hypothesis_values: Callable[[dict], dict] | None = None
    skip_hypotheses: dict = field(default_factory=dict)  # hypothesis -> why this design cannot evaluate it
    max_grid: dict = field(default_factory=dict)  # the largest value a budgeted sweep may extend each variable to
    design: type | None = None  # the dataclass of the fixed parameters the measure reads (their defaults)
    user: bool = False  # a user's experiment (ibcheck.experiment): its fixed values are its own, its results checked
    time_variable: str | None = None  # trajectories: the variable the series run along (default: T or t, or the one not swept)
    cost: Callable[[dict], float] | None = None  # relative work of one task at a cell (reference seconds; default 1)
    # built-ins: (seconds, {variable: exponent}) of one task on the reference machine (2 cores, one worker),
    # fitted to the timings stored by `make report`; budgets count this, never the wall clock
    cost_model: tuple[float, dict] | None = None
    # a free variable of the claim (FVBS23: n) picked inside the applicability window at each cell (window_design)
    free: FreeSetting | None = None
    kkt: bool = False  # the claim speaks of KKT points: rows carry certificates (kkt_sample) and only certified networks are measured

    def settings_at(self, cell: dict) -> dict:
        """The free settings the window design picks at ``cell`` (``{}`` without a window design, or where the
        window is empty: the experiment's own default then applies and the cell is outside)."""
        if self.free is None:
            return {}
        base = dict(cell)
        if self.hypothesis_values is not None:
            base.update(self.hypothesis_values(cell))
        value, _ = self.free.window(self.claim, base)
        return {} if value is None else {self.free.variable: value}

    def cost_of(self, cell: dict) -> float:
        """The declared work of one task at ``cell`` (reference seconds): deterministic, so a budget
        gives the same rounds and verdicts under any machine load."""
        if self.cost is not None:
            c = float(self.cost(dict(cell)))
            if not (math.isfinite(c) and c > 0):
                from ibcheck.theory.errors import InputError

                raise InputError(f"experiment {self.name}: cost({cell}) = {c!r}, not a finite number > 0")
            return c
        if self.cost_model is None:
            return 1.0
        cell = {**cell, **self.settings_at(cell)}
        scale, exps = self.cost_model
        return scale * math.prod(float(cell[v]) ** e for v, e in exps.items() if v in cell)

    def __post_init__(self):
        if self.user:
            return
        allowed = {f.name for f in fields(self.design)} if self.design is not None else set()
        for fixed in (self.fixed, self.quick_fixed or {}):
            unknown = set(fixed) - allowed
            if unknown:
                raise ValueError(f"{self.name}: fixed {sorted(unknown)} are not parameters of {getattr(self.design, '__name__', 'its design')}")

    def fixed_at(self, quick: bool) -> dict:
        return dict(self.quick_fixed if quick and self.quick_fixed is not None else self.fixed)

    def claim_values(self, cell: dict, value: dict) -> dict:
        """The claim's variables at one (cell, seed) row: the cell and fixed settings, the scalars
        the measure returned, and :attr:`hypothesis_values`."""
        out = dict(cell)
        out.update({k: v for k, v in (value or {}).items() if isinstance(v, (int, float)) and not isinstance(v, bool)})
        if self.hypothesis_values is not None:
            out.update(self.hypothesis_values(cell))
        out.update(self.settings_at(cell))
        return out


def _fa_run(cell: dict, seed: int, setting: str = "fa"):
    from ibcheck.simulate.substrate.models import ModelConfig
    from ibcheck.simulate.substrate.trainer import TrainConfig
    from ibcheck.simulate.substrate.training import DataConfig, RunConfig, run

    d, k, p = int(cell["d"]), int(cell["k"]), design(TrainedNetwork, cell)
    cfg = RunConfig(setting=setting, data=DataConfig(d=d, k=k, n=p.n_per_cluster * k, sigma=1.0, seed=seed, n_test=10),
                    model=ModelConfig(setting, width=p.width, init_scale=p.init_scale),
                    train=TrainConfig(steps=p.steps, lr=p.lr, progress=False), seeds=1, seed0=seed)
    res = run(cfg)
    return res.networks[0], res.datasets[0], res.summary[0]


def measure_lpll25_nonrobust(cell: dict, seed: int) -> dict:
    """LPLL25.thm.nonrobust: median flip radius of a GD-trained fa network along -y(sum_J+ mu - sum_J- mu)."""
    from ibcheck.solvers.radius.universal import universal_directions, universal_radius

    net, ds, summ = _fa_run(cell, seed)
    X, y = ds.sample(design(TrainedNetwork, cell).points, stream("claim-measure", seed, 0))
    r = universal_radius(net, X, y, universal_directions("lpll25", means=ds.means, J_plus=ds.J_plus))
    return {"flip_radius_median": censored_quantile(r, 0.5), "test_accuracy": summ["test_accuracy"], "status": summ["status"]}


def _cluster_data(cell, seed):
    from ibcheck.simulate.substrate.data import clusters

    return clusters(int(cell["d"]), int(cell["k"]), 10, 1.0, seed=seed)


def measure_lpll25_robust_exists(cell: dict, seed: int) -> dict:
    """LPLL25.prop.robust_exists: certified radius of sum_J+ ReLU(<mu, x> + b) - sum_J- ReLU(<mu, x> + b)."""
    from ibcheck.solvers.radius.certified import certified_radius
    from ibcheck.solvers.radius.constructions import lpll25_robust

    ds = _cluster_data(cell, seed)
    X, y = ds.sample(200, stream("claim-measure", seed, 1))
    return {"robust_radius": float(np.median(certified_radius(lpll25_robust(ds.means, ds.J_plus), X, y)))}


def measure_fvbs23_robust(cell: dict, seed: int) -> dict:
    """FVBS23.thm.4_1: certified radius of one neuron per cluster with a negative bias."""
    from ibcheck.solvers.radius.certified import certified_radius
    from ibcheck.solvers.radius.constructions import fvbs23_robust

    ds = _cluster_data(cell, seed)
    labels = np.where(np.isin(np.arange(len(ds.means)), ds.J_plus), 1.0, -1.0)
    X, y = ds.sample(200, stream("claim-measure", seed, 2))
    return {"robust_radius": float(np.median(certified_radius(fvbs23_robust(ds.means, labels), X, y)))}


def measure_lpll25_5_5(cell: dict, seed: int) -> dict:
    """LPLL25.thm.5_5: radius of the k-class network's binary read-out (best verified flip, attack or universal)."""
    from ibcheck.solvers.radius.attack import attack_radius
    from ibcheck.solvers.radius.universal import universal_directions, universal_radius

    net, ds, summ = _fa_run(cell, seed, setting="multiclass")
    ro = net.readout(ds.J_plus)
    X, yc = ds.sample(design(TrainedNetwork, cell).points, stream("claim-measure", seed, 3))
    y = np.where(np.isin(yc, ds.J_plus), 1.0, -1.0)
    uni = universal_radius(ro, X, y, universal_directions("lpll25", means=ds.means, J_plus=ds.J_plus))
    best = np.minimum(attack_radius(ro, X, y)["attack"], uni)
    return {"robust_radius": float(np.median(best)), "status": summ["status"]}


def _two_layer_gd(cell, seed, kind, networks: int = 1):
    """``networks`` two-layer networks trained by loss-based GD from different initializations (init seeds
    ``seed * networks + i``, distinct across samples) on the one sample of ``seed``: the Run."""
    from ibcheck.simulate.substrate.models import ModelConfig
    from ibcheck.simulate.substrate.trainer import TrainConfig
    from ibcheck.simulate.substrate.training import DataConfig, RunConfig, run

    p = design(TrainedNetwork, cell)
    k = int(cell.get("k", p.k))  # a grid variable where the experiment sweeps it
    n = int(cell["n"]) if "n" in cell else p.n_per_cluster * k
    cfg = RunConfig(setting="two-layer", data=DataConfig(kind=kind, d=int(cell["d"]), k=k, n=n, sigma=1.0, seed=seed, n_test=10),
                    model=ModelConfig("two-layer", width=p.width, init_scale=p.init_scale),
                    train=TrainConfig(steps=p.steps, lr=p.lr, loss="exp", reduction="sum", schedule="loss-based",
                                      target_log10_loss=p.target_log10_loss, progress=False), seeds=networks, seed0=seed * networks)
    return run(cfg)


def kkt_sample(cell: dict, seed: int, kind: str, networks: int):
    """The sample of ``seed`` at ``cell`` with ``networks`` networks trained on it, each certified as a KKT point of (P)
    (polished where needed): a :class:`~simulate.experiments.kkt_sample.KKTSample`."""
    from ibcheck.simulate.experiments.kkt_sample import certify_run

    return certify_run(_two_layer_gd(cell, seed, kind, networks))


def _flip_norms(sample, X, y, v, q: float) -> list:
    """Per network of ``sample`` (None where uncertified): the q-quantile over (X, y) of the flip radius along ``-y v``."""
    from ibcheck.solvers.radius.universal import universal_radius

    out = []
    for c in sample.networks:
        out.append(censored_quantile(universal_radius(c.net, X, y, v), q) if c.certified() else None)
    return out


def kkt_row(sample, norms: list, quantity: str) -> dict:
    """The row of a KKT claim: the largest ``quantity`` over the certified networks (never an uncertified one),
    each network's value and residuals (so the verdict can be recomputed at other thresholds)."""
    from ibcheck.simulate.experiments.kkt_sample import largest_over_certified
    from ibcheck.simulate.stats.censored import encode

    value = largest_over_certified(norms, sample)  # raises UncertifiedSample: the row fails, with the reason
    rec = sample.record()
    for net, x in zip(rec["kkt_networks"], norms):
        net[quantity] = encode(x)
    return {quantity: value, **rec}


def transfer_fractions(sample, X, y, v, norms: list) -> list[float]:
    """FVBS23.thm.4_2, "transferable": for every ordered pair (i, j) of certified networks, the fraction of the
    points (X, y) that ``z_i = eta_i v`` (the flip found for network i) flips on network j: sign N_j(x - y z_i) != sign N_j(x)."""
    ok = [(c, x) for c, x in zip(sample.networks, norms) if x is not None and c.certified() and not isinstance(x, AtLeast)]
    out = []
    for i, (ci, eta) in enumerate(ok):
        Xz = X - y[:, None] * (eta * v)[None, :]
        for j, (cj, _) in enumerate(ok):
            if i != j:
                out.append(float(np.mean(np.sign(cj.net.forward(Xz)) != np.sign(cj.net.forward(X)))))
    return out


def measure_fvbs23_4_2(cell: dict, seed: int) -> dict:
    """FVBS23.thm.4_2 on its own objects: certified KKT points of (P) on one sample (several initializations,
    polished where needed); the largest over them of the norm of ``z = eta sum_j y^(j) mu^(j)`` that flips
    >= 1 - eps of the test points, and how the z of one KKT point transfers to the others."""
    from ibcheck.solvers.radius.universal import universal_directions

    p = design(TrainedNetwork, cell)
    sample = kkt_sample(cell, seed, "clusters", p.networks)
    ds = sample.dataset
    X, y = ds.sample(200, stream("claim-measure", seed, 4))
    v = universal_directions("fvbs23", means=ds.means, J_plus=ds.J_plus)
    norms = _flip_norms(sample, X, y, v, 1 - p.eps)
    row = kkt_row(sample, norms, "universal_flip_norm")
    fr = transfer_fractions(sample, X, y, v, norms)
    row.update({"transfer_min": min(fr) if fr else None, "transfer_mean": float(np.mean(fr)) if fr else None,
                "transfer_pairs": len(fr), "transfer_target": 1 - p.eps})
    return row


def measure_vys22(cell: dict, seed: int) -> dict:
    """VYS22.thm.main on its own objects: certified KKT points of (P) on one sample on the sphere; the largest over
    them of the norm (and eta) of ``delta = eta sum_i y_i x_i`` that flips every training point."""
    from ibcheck.simulate.stats.censored import encode
    from ibcheck.solvers.radius.universal import universal_directions, universal_radius

    sample = kkt_sample(cell, seed, "sphere", design(TrainedNetwork, cell).networks)
    ds = sample.dataset
    v_raw = (ds.y[:, None] * ds.X).sum(0)
    v = universal_directions("vys22", X_train=ds.X, y_train=ds.y)
    norms = [_all_flipped(universal_radius(c.net, ds.X, ds.y, v)) if c.certified() else None for c in sample.networks]
    row = kkt_row(sample, norms, "universal_flip_norm")
    scale = 1 / float(np.linalg.norm(v_raw))
    for net, x in zip(row["kkt_networks"], norms):  # eta per network too: the verdict at other thresholds re-reads both
        net["universal_flip_eta"] = None if x is None else encode(_scaled(x, scale))
    G = ds.X @ ds.X.T
    np.fill_diagonal(G, 0)
    return {**row, "universal_flip_eta": _scaled(row["universal_flip_norm"], scale), "max_ip": float(np.abs(G).max())}


def _all_flipped(r: np.ndarray) -> float | AtLeast:
    """The radius that flips every point: the largest radius, or at least the largest finite one if some never flips."""
    finite = r[np.isfinite(r)]
    return float(r.max()) if len(finite) == len(r) else AtLeast(float(finite.max()) if len(finite) else 1.0)


def _scaled(x, c: float):
    return AtLeast(x.value * c) if isinstance(x, AtLeast) else float(x) * c


def measure_bcgt21(cell: dict, seed: int) -> dict:
    """BCGT21.thm.one_step: the norm of the gradient step that flips a random ReLU network (median over inputs)."""
    from ibcheck.simulate.substrate.data import sphere_points
    from ibcheck.simulate.substrate.models import ModelConfig, random_networks
    from ibcheck.simulate.substrate.one_step import flip_along_gradient

    d, k = int(cell["d"]), int(cell["k"])
    net = random_networks(ModelConfig("random-net", width=k), d, [seed])[0]
    t_max = 100.0
    _, r = flip_along_gradient(net, sphere_points(200, d, rng("claim-measure", seed, 5)), t_max=t_max)
    return {"flip_norm": censored_quantile(r, 0.5, limit=t_max)}  # no flip within t_max: at least t_max, never dropped


def _traj_row(log10_T: float, **values) -> dict:
    """One trajectory point; T itself only where float64 holds it (log10 T is always given)."""
    return {"log10_T": float(log10_T), "T": 10 ** log10_T if log10_T < 300 else None, **values}


def measure_ll20_rates(cell: dict, seed: int) -> dict:
    """LL20.thm.rates: Lsum and rho along one GD run (exponential loss, summed), against T = sum of step sizes.

    The loss-based schedule (eta_t = alpha_t / L) takes the loss to 1e-800 in a few hundred steps,
    so T covers hundreds of decades; losses and T are reported as log10 (they leave float64).
    Kept: points after t0 (every sample fitted, loss below ell(0) = 1) with T >= 100.
    """
    from ibcheck.simulate.substrate.models import ModelConfig
    from ibcheck.simulate.substrate.trainer import TrainConfig
    from ibcheck.simulate.substrate.training import DataConfig, RunConfig, run

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
    from ibcheck.simulate.substrate.models import ModelConfig
    from ibcheck.simulate.substrate.trainer import TrainConfig
    from ibcheck.simulate.substrate.training import DataConfig, RunConfig, run
    from ibcheck.solvers.svm import direction_error, hard_margin_svm

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


def measure_ssttm18(cell: dict, seed: int) -> dict:
    """SSTTM18.cor.robust_upper / robust_lower: the smallest n at which the class-mean estimator's l_inf-robust error is <= 1%.

    Gaussian model with sigma = sigma_scale d^(1/4) and a fixed eps. The estimator is exactly
    ``w = theta + (sigma / sqrt(n)) xi`` with ``xi ~ N(0, I)``, and its robust error is exactly
    ``Phi((eps ||w||_1 - <w, theta>) / (sigma ||w||))`` (the point is robust iff
    ``y <w, x> > eps ||w||_1``), so the threshold is found by bisection over n with one xi per seed.
    ``trivial`` says the threshold is n = 1, the smallest sample there is: a bound "n >= ..." then holds
    whatever it states, and the row tests nothing.
    """
    from scipy.stats import norm

    d = int(cell["d"])
    p = design(GaussianModel, cell)
    eps, sigma = p.eps, p.sigma_scale * d ** 0.25
    gen = rng("claim-measure", seed, 6)
    theta = gen.standard_normal(d)
    theta *= math.sqrt(d) / np.linalg.norm(theta)
    xi = gen.standard_normal(d)

    def robust_error(n: int) -> float:
        w = theta + sigma / math.sqrt(n) * xi
        return float(norm.cdf((eps * np.abs(w).sum() - w @ theta) / (sigma * np.linalg.norm(w))))

    lo, hi = 0, 1
    while robust_error(hi) > 0.01:
        lo, hi = hi, hi * 2
        if hi > 1 << 40:
            return {"robust_sample_threshold": AtLeast(float(1 << 40)), "trivial": False}
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if robust_error(mid) > 0.01 else (lo, mid)
    return {"robust_sample_threshold": float(hi), "trivial": hi == 1}


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
               measure_fvbs23_4_2, grid={"d": [256, 512, 1024], "k": [2, 4, 6]}, quick_grid={"d": [256, 512, 1024], "k": [2, 4, 6]},
               design=TrainedNetwork, seeds=3, quick_seeds=2,
               fixed={**_FVBS23_GD, "networks": 3}, quick_fixed={**_FVBS23_GD, "networks": 2},
               hypothesis_values=lambda cell: {"n": design(TrainedNetwork, cell).n_per_cluster * int(cell["k"]),
                                               "eps": design(TrainedNetwork, cell).eps, "delta": 0.1},
               max_grid={"d": 1024, "k": 6}, free=FreeSetting("n"), kkt=True, cost_model=(3.0e-6, {"n": 2.7})),
    Experiment("VYS22.thm.main", "VYS22.thm.main", ("universal_flip_norm", "universal_flip_eta"),
               "certified KKT points of (P): two-layer networks from several initializations on one sample on the sphere "
               "(loss-based GD, then polished on their activation cone); n <= sqrt(d)/9 keeps H1",
               measure_vys22, grid={"d": [2048, 4096, 8192, 16384], "n": [2, 4, 8]}, quick_grid={"d": [2048, 4096, 8192, 16384], "n": [2, 4, 8]},
               design=TrainedNetwork,
               # width 20 and a deep target: narrower networks stall on the sphere (train accuracy < 1, no point of (P))
               fixed={**_VYS22_GD, "networks": 3}, quick_fixed={**_VYS22_GD, "networks": 2}, seeds=3,
               quick_seeds=2, kkt=True, max_grid={"d": 65536, "n": 8}, cost_model=(1.3, {})),
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
               "linear model, GD with the loss-based step on separable data (logistic loss); T = sum of step sizes",
               measure_shngs18, design=LongRun, grid={"run": [0]}, quick_grid={"run": [0]}, fixed={"steps": 6000, "lr": 0.5, "records": 120},
               quick_fixed={"steps": 3000, "lr": 0.5, "records": 120},
               trajectory=True, seeds=6, quick_seeds=4, cost_model=(3.0, {})),
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


class _Experiments(MutableMapping):
    """The experiments of the current registry (:func:`ibcheck.theory.registry.current`): a user's
    (registered there by :func:`experiment`) over the built-in ones. A test's own registry sees
    the built-ins and only its own user experiments."""

    def _own(self) -> dict:
        from ibcheck.theory.registry import current

        return current().experiments

    def __getitem__(self, name: str) -> Experiment:
        own = self._own()
        return own[name] if name in own else BUILTIN[name]

    def __setitem__(self, name: str, exp: Experiment) -> None:
        self._own()[name] = exp

    def __delitem__(self, name: str) -> None:
        del self._own()[name]

    def __iter__(self):
        return iter(dict.fromkeys([*BUILTIN, *self._own()]))

    def __len__(self) -> int:
        return len(dict.fromkeys([*BUILTIN, *self._own()]))


EXPERIMENTS = _Experiments()


def experiment(claim: str, grid: dict, seeds: int = 3, quick_grid: dict | None = None, quick_seeds: int | None = None,
               fixed: dict | None = None, max_grid: dict | None = None, description: str = "", quantities: tuple[str, ...] = (),
               trajectory: bool | str = False, cost=None):
    """Decorator: bind ``measure(cell, seed) -> {quantity: value}`` to ``claim`` (a user's experiment).

    The quantities default to the claim's bounds; every one must come back finite (or a bound:
    ``AtLeast(r)``/``AtMost(r)``), or the row is recorded as failed with the reason. ``grid`` maps
    swept variables to values, ``fixed`` adds settings every cell sees; ``quick_grid``/``quick_seeds``
    are used with ``quick=True``.

    ``trajectory=True``: ``measure(cell, seed)`` returns one run as series, e.g.
    ``{"t": [...], "margin_gap": [...]}``; it runs once per seed, is stored once, and the fit runs
    along the time variable (the claim's one variable that is not swept; ``trajectory="t"`` names it)
    with each run fitted on its own and the runs combined. ``cost(cell)`` is the relative work of one
    task (default 1), which ``budget`` counts."""
    from ibcheck.theory.argtypes import require_int
    from ibcheck.theory.errors import InputError

    require_int("seeds", seeds, 1)
    if not isinstance(grid, dict) or not grid:
        raise InputError(f"experiment {claim}: grid={grid!r} must map each swept variable to its values, e.g. {{'d': [64, 128, 256]}}")

    if not isinstance(trajectory, (bool, str)) or trajectory == "":
        raise InputError(f"experiment {claim}: trajectory={trajectory!r} must be True, False or the name of the time variable")
    if cost is not None and not callable(cost):
        raise InputError(f"experiment {claim}: cost={cost!r} must be a function of the cell (its relative work)")

    def register(measure: Callable[[dict, int], dict]) -> Callable[[dict, int], dict]:
        if claim in BUILTIN:
            raise InputError(f"experiment {claim}: the claim already has a built-in experiment")
        EXPERIMENTS[claim] = Experiment(claim, claim, tuple(quantities), description or f"your measure {measure.__name__}", measure,
                                        dict(grid), dict(quick_grid or grid), dict(fixed or {}), seeds, quick_seeds or seeds,
                                        trajectory=bool(trajectory), max_grid=dict(max_grid or {}), user=True,
                                        time_variable=trajectory if isinstance(trajectory, str) else None, cost=cost)
        return measure

    return register


def user_quantities(exp: Experiment) -> tuple[str, ...]:
    """The quantities a user's experiment must return: its own, else the claim's bounds' quantities."""
    if exp.quantities:
        return exp.quantities
    from ibcheck.theory import get_claim

    return tuple(dict.fromkeys(b.quantity for b in get_claim(exp.claim).bounds if b.kind != "->"))


def check_user_value(exp: Experiment, value) -> str | None:
    """Why a user's measurement cannot be used (not a dict, a quantity missing or not finite), or None."""
    if not isinstance(value, dict):
        return f"the measure returned a {type(value).__name__}, not a dict of quantities"
    for q in user_quantities(exp):
        x = value.get(q)
        if x is None:
            return f"quantity {q!r} missing from the measure's result (it returned {', '.join(value) or 'nothing'})"
        if isinstance(x, (AtLeast, AtMost)):
            continue  # a censored value: checked when built (a finite bound > 0)
        if exp.trajectory and isinstance(x, (list, tuple)):
            continue  # checked with the series (check_series)
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
            return f"quantity {q!r} is {x!r}, not a finite number (a bound is ibcheck.AtLeast(r) or ibcheck.AtMost(r))"
    return None


def as_trajectory(exp: Experiment, value: dict) -> tuple[dict | None, str | None]:
    """A user's series ``{"t": [...], "q": [...]}`` as trajectory points ``{"trajectory": [{"t": .., "q": ..}, ...]}``,
    or (None, why it cannot be used)."""
    tv = exp.time_variable
    if tv is None or tv not in value:
        return None, (f"a trajectory measure returns series keyed by the time variable ({tv or 't'}) and each quantity, "
                      f"e.g. {{'t': [...], 'gap': [...]}}; it returned {', '.join(value) or 'nothing'}")
    qs = user_quantities(exp)
    series = {k: value[k] for k in (tv, *qs)}
    n = None
    for k, xs in series.items():
        if not isinstance(xs, (list, tuple, np.ndarray)):
            return None, f"{k!r} is {type(xs).__name__}, not a series (a list of numbers, one per time)"
        if n is None:
            n = len(xs)
        if len(xs) != n:
            return None, f"the series have different lengths ({tv}: {len(series[tv])}, {k}: {len(xs)})"
        for i, x in enumerate(xs):
            if isinstance(x, bool) or not isinstance(x, (int, float, np.floating, np.integer)) or not (math.isfinite(float(x)) and x > 0):
                return None, f"{k}[{i}] is {x!r}, not a finite number > 0"
    if not n or n < 3:
        return None, f"a trajectory needs at least 3 points; it has {n or 0}"
    points = [{k: float(series[k][i]) for k in series} for i in range(n)]
    return {"trajectory": points, **{k: v for k, v in value.items() if k not in series}}, None


def experiment_for(claim_id: str) -> Experiment:
    from dataclasses import replace

    from ibcheck.theory.errors import InputError

    if claim_id in EXPERIMENTS:
        exp = EXPERIMENTS[claim_id]
        if not exp.user:
            return exp
        exp = replace(exp, quantities=user_quantities(exp))
        if exp.trajectory and exp.time_variable is None:
            from ibcheck.theory import get_claim

            claim = get_claim(claim_id)
            free = [v.name for v in claim.variables if v.name not in exp.grid and v.name not in exp.fixed and v.tends_to != "const"]
            if len(free) != 1:
                raise InputError(f"experiment {claim_id}: trajectory=True, but the time variable is ambiguous among "
                                 f"{', '.join(free) or 'none'}: name it, e.g. trajectory='t'")
            exp = replace(exp, time_variable=free[0])
        return exp
    from ibcheck.theory import get_claim

    get_claim(claim_id)  # unknown ids get the nearest-id suggestion
    raise InputError(f"{claim_id} has no experiment (nothing measurable is bound to it); claims that can be compared: {', '.join(EXPERIMENTS)}")
