"""One training run from a declarative config: data + model + trainer + measurements.

``run(RunConfig)`` builds the dataset(s), initializes S seeds, trains them in one batch,
measures each seed (test accuracy, margins, feature statistics) and returns a :class:`Run`;
``Run.save`` writes it as a run directory (:mod:`simulate.substrate.rundir`), and ``load_run`` reads one
back as the same type.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar, Sequence

import numpy as np
import torch

from ibcheck.simulate.substrate import data as D
from ibcheck.simulate.substrate.measure import feature_statistics, test_accuracy
from ibcheck.simulate.substrate.models import ModelConfig, init_model, random_networks
from ibcheck.simulate.substrate.one_step import input_gradients
from ibcheck.simulate.substrate.seeds import stream
from ibcheck.simulate.substrate.trainer import TrainConfig, TrainResult, resolve_device, train
from ibcheck.theory.argtypes import require_bool, require_choice, require_float, require_int
from ibcheck.theory.errors import InputError
from ibcheck.theory.result import Result

MAX_SIZE = 10**7            # d, k, n: larger is surely a typo on a CPU
MAX_ELEMENTS = 2 * 10**8    # d * (n + n_test) entries of the data (1.5 GiB of float64)
DEFAULT_DATA = {"fa": "clusters", "multiclass": "clusters", "two-layer": "clusters", "linear": "separable", "random-net": "sphere"}


@dataclass(frozen=True)
class DataConfig:
    """The data of a run. ``kind=None`` takes the setting's default (clusters for fa, ...)."""

    kind: str | None = None
    d: int = 256
    k: int = 4
    n: int = 200
    sigma: float = 1.0
    orthogonal: bool = True
    split: str = "half"
    seed: int = 0
    per_seed: bool = False
    n_test: int = 2000
    tau: float = 0.1
    gap: float = 1.0
    idx_images: str | None = None
    idx_labels: str | None = None

    def __post_init__(self):
        for name in ("d", "k", "n", "n_test"):
            object.__setattr__(self, name, require_int(name, getattr(self, name), 1, high=MAX_SIZE))
        if self.d * (self.n + self.n_test) > MAX_ELEMENTS:  # estimated before anything is allocated
            raise InputError(f"d={self.d} with n={self.n} and n_test={self.n_test} needs {self.d * (self.n + self.n_test) * 8 / 2**30:.1f} GiB "
                             f"for the data alone: d * (n + n_test) must be at most {MAX_ELEMENTS} ({MAX_ELEMENTS * 8 / 2**30:.1f} GiB)")
        for name in ("orthogonal", "per_seed"):
            require_bool(name, getattr(self, name))
        require_int("data_seed", self.seed, 0)
        if self.kind is not None and (not isinstance(self.kind, str) or self.kind not in D.DATA_KINDS):
            raise InputError(f"kind={self.kind!r} is not one of {', '.join(D.DATA_KINDS)}")
        require_float("sigma", self.sigma, 0.0, strict=False)
        if self.kind == "clusters" and self.orthogonal and self.k > self.d:
            raise InputError(f"k={self.k} is out of range: orthogonal means need k <= d={self.d}")
        if self.kind == "idx" and not (self.idx_images and self.idx_labels):
            raise InputError("--data idx needs --idx-images FILE and --idx-labels FILE")


@dataclass(frozen=True)
class RunConfig:
    setting: str = "fa"
    data: DataConfig = field(default_factory=DataConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    seeds: int = 1
    seed0: int = 0

    def __post_init__(self):
        require_int("seed0", self.seed0, 0)
        require_int("seeds", self.seeds, 1, high=10_000)
        require_choice("setting", self.setting, tuple(DEFAULT_DATA))
        for name, cls in (("data", DataConfig), ("model", ModelConfig), ("train", TrainConfig)):
            if not isinstance(getattr(self, name), cls):
                raise InputError(f"{name}={getattr(self, name)!r} is not a {cls.__name__} (build one with ibcheck.{cls.__name__}(...))")
        params = self.seeds * self.model.width * (self.data.d + 2) * (self.data.k if self.setting == "multiclass" else 1)
        if params > MAX_ELEMENTS:
            raise InputError(f"seeds={self.seeds} x width={self.model.width} x d={self.data.d} is {params} parameters: at most {MAX_ELEMENTS} "
                             f"({MAX_ELEMENTS * 8 / 2**30:.1f} GiB of float64) are trained in one batch")
        if self.model.setting != self.setting:
            raise InputError(f"setting {self.setting} and model setting {self.model.setting} differ")

    @property
    def data_kind(self) -> str:
        return self.data.kind or DEFAULT_DATA[self.setting]

    @property
    def seed_list(self) -> list[int]:
        return list(range(self.seed0, self.seed0 + self.seeds))

    def learning_rate(self) -> float:
        """The step size: ``--lr``, else ``1/sqrt(d)`` (LPLL25's eta) for fa or ``schedule=paper``, else 0.1."""
        if self.train.lr is not None:
            return float(self.train.lr)
        if self.setting == "fa" or self.train.schedule == "paper":
            return 1.0 / math.sqrt(self.data.d)
        return 0.1


def make_dataset(cfg: RunConfig, seed: int) -> D.Dataset:
    """The dataset for one data seed, built from the config alone (so a run can be re-created)."""
    dc = cfg.data
    kind = cfg.data_kind
    multiclass = cfg.setting == "multiclass"
    if kind == "clusters":
        return D.clusters(dc.d, dc.k, dc.n, dc.sigma, seed, dc.orthogonal, dc.split, multiclass)
    if multiclass and kind not in ("digits", "idx"):
        raise InputError(f"--setting multiclass needs k-class data: clusters, digits or idx, not {kind}")
    if kind == "sphere":
        return D.random_net_inputs(dc.d, dc.n, seed) if cfg.setting == "random-net" else D.sphere(dc.d, dc.n, seed)
    if kind == "gaussian":
        return D.gaussian(dc.d, dc.n, dc.sigma if dc.sigma > 0 else 1.0, seed)
    if kind == "bernoulli":
        return D.bernoulli(dc.d, dc.n, dc.tau, seed)
    if kind == "separable":
        return D.separable(dc.d, dc.n, dc.gap, seed)
    if kind == "digits":
        return D.digits(dc.n, seed, dc.split if dc.split != "half" else "odd", multiclass)
    if kind == "idx":
        return D.idx(dc.idx_images, dc.idx_labels, dc.n, seed, dc.split if dc.split != "half" else "odd", multiclass)
    raise InputError(f"kind={kind!r} is not one of {', '.join(D.DATA_KINDS)}")


@dataclass(frozen=True)
class Run(Result):
    """S trained (or drawn) networks of one config, with their per-seed measurements.

    ``summary`` has one row per seed (``seeds`` is the same list); ``datasets`` is empty for a run
    read back from disk, whose data ``dataset()`` re-creates from the config (deterministic);
    ``path`` is the run directory it was read from or saved to, if any."""

    name: ClassVar[str] = "run"
    config: RunConfig
    datasets: Sequence[D.Dataset]
    networks: Sequence
    init_W: Sequence[np.ndarray | None]
    summary: Sequence[dict]
    trajectory: Sequence[dict]
    seconds: float = 0.0
    checkpoints: Sequence = ()
    path: str | None = None

    @property
    def seeds(self) -> list[dict]:
        return list(self.summary)

    def dataset(self, seed: int | None = None) -> D.Dataset:
        """The training data of ``seed`` (default: the first), re-created from the config if not held."""
        cfg = self.config
        i = (seed or cfg.seed0) - cfg.seed0 if cfg.data.per_seed else 0
        if i < len(self.datasets):
            return self.datasets[i]
        return make_dataset(cfg, cfg.data.seed + i)

    def as_json(self) -> dict:
        from ibcheck.simulate.substrate.rundir import summary_json

        return summary_json(self)

    def heading(self) -> str:
        return f"{self.config.setting} on {self.config.data_kind}: {len(self.summary)} seed(s), {self.seconds:.1f} s"

    def table(self) -> list[dict]:
        from ibcheck.simulate.substrate.rundir import SUMMARY_KEYS

        keys = ("seed", "status", "output_abs_mean", "grad_norm_mean") if self.config.setting == "random-net" else SUMMARY_KEYS
        return [{k: r.get(k) for k in keys} for r in self.summary]

    def figure(self):
        """log10 training loss against the step, one line per seed."""
        from ibcheck.theory.result import new_figure

        key = "log10_loss_mean" if self.config.train.reduction == "mean" else "log10_loss_sum"
        rows = [r for r in self.trajectory if r.get(key) is not None]
        if not rows:
            return None
        fig, ax = new_figure()
        for s in sorted({r["seed"] for r in rows}):
            pts = [r for r in rows if r["seed"] == s]
            ax.plot([max(r["step"], 1) for r in pts], [r[key] for r in pts], label=f"seed {s}")
        ax.set_xscale("log")
        ax.set_xlabel("step")
        ax.set_ylabel("log10 training loss")
        ax.legend(fontsize=7)
        ax.set_title(self.heading(), fontsize=9)
        return fig

    def save(self, directory: str, overwrite: bool = False) -> dict[str, str]:  # type: ignore[override]
        """Write the run directory (config, summary, metrics, trajectory, weights) atomically."""
        from ibcheck.simulate.substrate.rundir import save_run

        save_run(self, directory, overwrite)
        return {"run": directory}


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
    model = init_model(cfg.model, ds0.d, seeds, n_classes=ds0.n_classes if multiclass else 2).to(device, cfg.train.torch_dtype)
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
    Xte, yte = ds.sample(cfg.data.n_test, stream("test-points", seed))
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
    nets = random_networks(cfg.model, ds.d, seeds)
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
