"""Batched models: S seeds advance in one tensor computation, with explicit backward passes.

Parameters carry a leading seed axis ``S``. When all seeds share one dataset, the seeds'
neurons are stacked into one ``(S*m, d)`` matrix, so the forward pass is one GEMM
``X @ W^T`` and the weight gradient one GEMM ``D^T X``: X is read once per step for all
seeds instead of once per seed. Per-seed datasets ``(S, N, d)`` use batched matmuls.

Each model maps inputs to the margin tensor ``Q`` of :mod:`simulate.substrate.losses` and back-
propagates ``dQ`` to its trained parameters; ``networks()`` exports the plain numpy
objects of :mod:`solvers.networks`, one per seed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch

from ibcheck.simulate.substrate.seeds import cell_key, rng, stream
from ibcheck.solvers.networks import LinearClassifier, MulticlassReLU, RandomNet, TwoLayerReLU
from ibcheck.theory.argtypes import refused, require_bool, require_float, require_int

Setting = Literal["fa", "two-layer", "multiclass", "linear", "random-net"]
SETTINGS: tuple[str, ...] = Setting.__args__  # type: ignore[attr-defined]
ACTIVATIONS = ("relu", "softplus", "tanh", "gelu")


@dataclass(frozen=True)
class ModelConfig:
    """Which network, how wide, how initialized.

    ``width``: for ``fa`` the neurons per output sign (LPLL25's m; 2m in all); for ``multiclass``
    the neurons per class; for ``two-layer`` and ``random-net`` the hidden width (BCGT21's k);
    unused for ``linear``.
    """

    setting: Setting = "fa"
    width: int = 5
    init_scale: float = 1.0
    bias: bool = True
    activation: str = "relu"

    def __post_init__(self):
        if not isinstance(self.setting, str) or self.setting not in SETTINGS:
            raise refused("setting", self.setting, f"is not one of {', '.join(SETTINGS)}")
        require_int("width", self.width, 1, high=10**6)
        require_float("init_scale", self.init_scale, 0.0, strict=True)
        require_bool("bias", self.bias)
        if not isinstance(self.activation, str) or self.activation not in ACTIVATIONS:
            raise refused("activation", self.activation, f"is not one of {', '.join(ACTIVATIONS)}")

    @property
    def degree(self) -> int | None:
        return {"fa": 1, "two-layer": 2, "multiclass": 1, "linear": 1}.get(self.setting, 1 if self.activation == "relu" else None)


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(int(seed))


def init_key(cfg: ModelConfig, d: int, n_classes: int = 2, cell: int = 0) -> int:
    """The cell key of an initialization: the model's own arguments, the input dimension and ``cell`` (the key of
    the data it is trained on, :attr:`Dataset.key`). The optimizer's settings (step, steps) are not in it: a run
    with half the step starts from the same draws, so the halving check compares like with like."""
    return cell_key("init", cfg.setting, cfg.width, cfg.init_scale, cfg.bias, cfg.activation, d, n_classes, cell)


def _normal(shape, std: float, seeds, offset: int, key: int) -> torch.Tensor:
    """Per-seed normal draws (float64, CPU), reproducible whatever the number of seeds, from the stream
    ``("model-init", seed, offset, key)``: independent per (cell, seed) and per tensor."""
    return torch.stack([torch.randn(shape, generator=_gen(stream("model-init", s, offset, key)), dtype=torch.float64) * std
                        for s in seeds])


class _Base:
    degree: int = 1

    def __init__(self, params: dict[str, torch.Tensor], fixed: dict[str, torch.Tensor]):
        self.params = params
        self.fixed = fixed

    @property
    def S(self) -> int:
        return next(iter(self.params.values())).shape[0]

    dual: DualWeights | None = None

    def norm_sq(self) -> torch.Tensor:
        """``||theta||^2`` per seed over the trained parameters (W itself in the dual form)."""
        total = sum(p.reshape(self.S, -1).pow(2).sum(1) for k, p in self.params.items() if k != "C")
        return total + (self.dual.norm_sq(self.params["C"]) if self.dual is not None else 0)

    def to(self, device, dtype):
        self.params = {k: v.to(device=device, dtype=dtype) for k, v in self.params.items()}
        self.fixed = {k: v.to(device=device, dtype=dtype) for k, v in self.fixed.items()}
        return self

    def use_dual(self, X: torch.Tensor) -> "_Base":
        """Switch the first layer to ``W = W0 + C X`` on these training inputs (see DualWeights)."""
        key = "w" if "w" in self.params else "W"
        W0 = self.params.pop(key)
        squeeze = W0.dim() == 2
        self.dual = DualWeights(W0[:, None, :] if squeeze else W0, X)
        self._dual_key, self._dual_squeeze = key, squeeze
        self.params = {"C": torch.zeros(W0.shape[0], 1 if squeeze else W0.shape[1], X.shape[-2], dtype=W0.dtype, device=W0.device), **self.params}
        return self

    def weights(self) -> torch.Tensor:
        """The first-layer weights W (S, M, d), materialized from C in the dual form."""
        if self.dual is None:
            return self.params["w"][:, None, :] if "w" in self.params else self.params["W"]
        return self.dual.materialize(self.params["C"])

    def _pre(self, X, key="W"):
        return self.dual.pre(self.params["C"]) if self.dual is not None else _matmul_x(X, self.params[key])

    def _wgrad(self, D, X, out: dict, key="W") -> None:
        if self.dual is not None:
            out["C"] = D.transpose(1, 2)
        else:
            out[key] = _grad_w(D, X)


def _matmul_x(X: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    """``X W^T`` for all seeds: (S, N, m) from X (N, d) or (S, N, d) and W (S, m, d)."""
    S, m, d = W.shape
    if X.dim() == 2:
        return (X @ W.reshape(S * m, d).T).reshape(X.shape[0], S, m).permute(1, 0, 2)
    return torch.bmm(X, W.transpose(1, 2))


def _grad_w(D: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
    """``D^T X`` for all seeds: (S, m, d) from D (S, N, m)."""
    S, N, m = D.shape
    if X.dim() == 2:
        return (D.permute(1, 0, 2).reshape(N, S * m).T @ X).reshape(S, m, X.shape[1])
    return torch.bmm(D.transpose(1, 2), X)


class DualWeights:
    """First-layer weights kept as ``W = W0 + C X`` (the same GD trajectory, fewer FLOPs).

    GD only ever adds combinations of the training inputs to W: ``grad_W = D^T X``. Writing
    ``W = W0 + C X`` with ``C`` of shape (S, M, N), the pre-activations are
    ``X W^T = P0 + K C^T`` with the Gram matrix ``K = X X^T`` and ``P0 = X W0^T`` computed
    once, and the GD step on W is the step ``C <- C - eta D^T`` on C. When N < d this costs
    one (N x N x S M) product per step instead of two (N x d x S M) ones.
    """

    def __init__(self, W0: torch.Tensor, X: torch.Tensor):
        self.W0 = W0
        self.X = X
        self.K = X @ X.transpose(-1, -2)
        self.P0 = _matmul_x(X, W0)  # (S, N, M)
        self.W0_sq = W0.reshape(W0.shape[0], -1).pow(2).sum(1)

    def pre(self, C: torch.Tensor) -> torch.Tensor:
        S, M, N = C.shape
        if self.K.dim() == 2:
            KC = (C.reshape(S * M, N) @ self.K).reshape(S, M, N)
        else:
            KC = torch.bmm(C, self.K)
        return self.P0 + KC.transpose(1, 2)

    def norm_sq(self, C: torch.Tensor) -> torch.Tensor:
        """``||W0 + C X||^2 = ||W0||^2 + 2 <C, P0^T> + <C K, C>`` without forming W."""
        S, M, N = C.shape
        KC = (C.reshape(S * M, N) @ self.K).reshape(S, M, N) if self.K.dim() == 2 else torch.bmm(C, self.K)
        return self.W0_sq + 2 * (C * self.P0.transpose(1, 2)).reshape(S, -1).sum(1) + (KC * C).reshape(S, -1).sum(1)

    def materialize(self, C: torch.Tensor) -> torch.Tensor:
        if self.X.dim() == 2:
            S, M, N = C.shape
            return self.W0 + (C.reshape(S * M, N) @ self.X).reshape(S, M, -1)
        return self.W0 + torch.bmm(C, self.X)


class TwoLayer(_Base):
    """``f(x) = sum_j a_j ReLU(<w_j, x> + b_j)``; ``a`` trained (degree 2) or fixed (degree 1)."""

    def __init__(self, W, b, a, train_a: bool, kind: str):
        params = {"W": W}
        if b is not None:
            params["b"] = b
        fixed: dict[str, torch.Tensor] = {}
        (params if train_a else fixed)["a"] = a
        super().__init__(params, fixed)
        self.train_a = train_a
        self.kind = kind
        self.degree = 2 if train_a else 1

    @property
    def a(self):
        return self.params["a"] if self.train_a else self.fixed["a"]

    def output(self, X):
        pre = self._pre(X)
        if "b" in self.params:
            pre = pre + self.params["b"][:, None, :]
        act = torch.relu(pre)
        return torch.einsum("snm,sm->sn", act, self.a), (pre, act)

    def margins(self, X, y):
        f, cache = self.output(X)
        self._cache = cache
        return (f * y)[..., None]

    def backward(self, X, y, dQ):
        pre, act = self._cache
        G = dQ[..., 0] * y  # d/df
        out = {}
        if self.train_a:
            out["a"] = torch.einsum("sn,snm->sm", G, act)
        D = G[:, :, None] * (pre > 0).to(G.dtype) * self.a[:, None, :]
        self._wgrad(D, X, out)
        if "b" in self.params:
            out["b"] = D.sum(1)
        return out

    def networks(self) -> list[TwoLayerReLU]:
        W = self.weights().detach().cpu().numpy()
        a = self.a.detach().cpu().numpy()
        b = self.params["b"].detach().cpu().numpy() if "b" in self.params else None
        trained = ("W", "b", "a") if self.train_a else ("W", "b")
        return [TwoLayerReLU(W=W[s].copy(), a=a[s].copy(), b=None if b is None else b[s].copy(), trained=trained, kind=self.kind)
                for s in range(W.shape[0])]


class Multiclass(_Base):
    """k outputs, h neurons per class: ``f_j = (1/h) sum_r ReLU(<w_{j,r}, x>)``; degree 1."""

    def __init__(self, W, k: int):
        super().__init__({"W": W}, {})
        self.k = k
        self.h = W.shape[1] // k
        self.kind = "multiclass"

    def output(self, X):
        pre = self._pre(X)
        act = torch.relu(pre)
        S, N, _ = act.shape
        return act.reshape(S, N, self.k, self.h).mean(-1), pre

    def margins(self, X, y):
        F, pre = self.output(X)
        self._pre_cache = pre
        Fy = F.gather(-1, y.expand(F.shape[0], -1)[..., None] if y.dim() == 1 else y[..., None])
        Q = Fy - F
        mask = torch.zeros_like(Q, dtype=torch.bool)
        idx = (y.expand(F.shape[0], -1) if y.dim() == 1 else y)[..., None]
        mask.scatter_(-1, idx, True)
        self._mask, self._idx = mask, idx
        return Q.masked_fill(mask, float("inf"))

    def backward(self, X, y, dQ):
        dQ = dQ.masked_fill(self._mask, 0.0)
        dF = -dQ
        dF.scatter_add_(-1, self._idx, dQ.sum(-1, keepdim=True))
        S, N, _ = dF.shape
        dact = dF.repeat_interleave(self.h, dim=-1) / self.h
        D = dact * (self._pre_cache > 0).to(dact.dtype)
        out: dict[str, torch.Tensor] = {}
        self._wgrad(D, X, out)
        return out

    def networks(self) -> list[MulticlassReLU]:
        W = self.weights().detach().cpu().numpy()
        return [MulticlassReLU(W=W[s].copy(), k=self.k) for s in range(W.shape[0])]


class Linear(_Base):
    """``f(x) = <w, x>``; degree 1."""

    kind = "linear"

    def __init__(self, w):
        super().__init__({"w": w}, {})

    def margins(self, X, y):
        if self.dual is not None:
            f = self.dual.pre(self.params["C"])[..., 0]
        else:
            f = (X @ self.params["w"].T).T if X.dim() == 2 else torch.einsum("snd,sd->sn", X, self.params["w"])
        return (f * y)[..., None]

    def backward(self, X, y, dQ):
        G = dQ[..., 0] * y
        if self.dual is not None:
            return {"C": G[:, None, :]}
        return {"w": G @ X if X.dim() == 2 else torch.einsum("sn,snd->sd", G, X)}

    def networks(self) -> list[LinearClassifier]:
        w = self.weights()[:, 0, :].detach().cpu().numpy()
        return [LinearClassifier(w=w[s].copy()) for s in range(w.shape[0])]


def init_model(cfg: ModelConfig, d: int, seeds: list[int], n_classes: int = 2, cell: int = 0):
    """The paper initializations, per seed (reproducible whatever S is).

    * ``fa`` (LPLL25.def.net): ``w ~ N(0, s^2 I/d)``, ``b ~ N(0, s^2/d^2)``, ``a = +-1/m`` fixed;
    * ``two-layer``: ``w ~ N(0, s^2 I/d)``, ``b ~ N(0, s^2/d^2)`` (if biases), ``a ~ N(0, s^2/m)``;
    * ``multiclass``: ``w ~ N(0, s^2 I/d)``, ``h = m`` neurons per class;
    * ``linear``: ``w ~ N(0, s^2 I/d)``;
    * ``random-net`` (BCGT21.def.net): ``w ~ N(0, I/d)``, ``a`` uniform on {-1, +1}.

    The draws are per (cell, seed): :func:`init_key` of the model, ``d`` and ``cell`` (the data's key).
    """
    s = cfg.init_scale
    key = init_key(cfg, d, n_classes, cell)
    if cfg.setting == "fa":
        W = _normal((2 * cfg.width, d), s / np.sqrt(d), seeds, 1, key)
        b = _normal((2 * cfg.width,), s / d, seeds, 2, key)
        a = torch.cat([torch.full((cfg.width,), 1.0 / cfg.width, dtype=torch.float64), torch.full((cfg.width,), -1.0 / cfg.width, dtype=torch.float64)])
        return TwoLayer(W, b, a.expand(len(seeds), -1).clone(), train_a=False, kind="fa")
    if cfg.setting == "two-layer":
        W = _normal((cfg.width, d), s / np.sqrt(d), seeds, 1, key)
        b = _normal((cfg.width,), s / d, seeds, 2, key) if cfg.bias else None
        a = _normal((cfg.width,), s / np.sqrt(cfg.width), seeds, 3, key)
        return TwoLayer(W, b, a, train_a=True, kind="two-layer")
    if cfg.setting == "multiclass":
        if n_classes < 2:
            raise refused("setting", "multiclass", "needs a k-class task (k >= 2)")
        return Multiclass(_normal((n_classes * cfg.width, d), s / np.sqrt(d), seeds, 1, key), n_classes)
    if cfg.setting == "linear":
        return Linear(_normal((d,), s / np.sqrt(d), seeds, 1, key))
    raise refused("setting", cfg.setting, "is not trainable")


def random_networks(cfg: ModelConfig, d: int, seeds: list[int], cell: int = 0) -> list[RandomNet]:
    """BCGT21.def.net: one random network of width m per seed, per (cell, seed) as :func:`init_model`'s draws."""
    key = init_key(cfg, d, 2, cell)
    W = _normal((cfg.width, d), 1 / np.sqrt(d), seeds, 1, key).numpy()
    out = []
    for i, s in enumerate(seeds):
        g = rng("model-init", s, 4, key)
        out.append(RandomNet(W=W[i], a=g.choice([-1.0, 1.0], size=cfg.width), activation=cfg.activation))
    return out
