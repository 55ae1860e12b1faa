"""The declarative config of a run: its data (:class:`DataConfig`) and the whole run (:class:`RunConfig`).

Checked once, when built (sizes, memory, choices), so that nothing is allocated for a config that
cannot run; :func:`make_dataset` re-creates a run's data from its config alone.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ibcheck.simulate.substrate import data as D
from ibcheck.simulate.substrate.models import ModelConfig
from ibcheck.simulate.substrate.trainer import TrainConfig
from ibcheck.theory.argtypes import refused, require_bool, require_choice, require_float, require_int
from ibcheck.theory.errors import InputError

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
            raise refused("kind", self.kind, f"is not one of {', '.join(D.DATA_KINDS)}")
        require_float("sigma", self.sigma, 0.0, strict=False)
        if self.split not in D.SPLIT_WORDS:
            D.split_items(self.split)  # ids are checked against k (or the digits) when the data are drawn
        if self.kind == "clusters" and self.orthogonal and self.k > self.d:
            raise refused("k", self.k, f"is out of range: orthogonal means need k <= d={self.d}")
        if self.kind == "idx" and not (self.idx_images and self.idx_labels):
            raise refused("kind", "idx", "needs idx_images and idx_labels (--idx-images FILE, --idx-labels FILE)")


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
        raise refused("setting", "multiclass", f"needs k-class data: clusters, digits or idx, not {kind}")
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
    raise refused("kind", kind, f"is not one of {', '.join(D.DATA_KINDS)}")
