"""Full-batch gradient descent over S seeds at once, with losses kept in log space.

The update is ``theta <- theta - eta_t * grad L`` written as
``theta <- theta - (eta_t * L) * grad log L``: ``grad log L`` comes from
:func:`simulate.substrate.losses.grad_log_loss_wrt_Q` (always representable) and the scalar factor
``eta_t * L`` is formed per seed from ``log L``:

* ``constant``: ``eta_t * L = lr * exp(log L)``; it underflows to 0 only when the true step
  is below float resolution anyway;
* ``loss-based`` (LL20): ``eta_t = alpha_t / L``, so the factor is ``alpha_t`` itself;
  ``alpha`` grows by ``up`` after a step that lowered the loss and shrinks by ``down``, with
  the step rolled back, after one that raised it. This reaches losses like 1e-800.

``T = sum of step sizes`` is tracked as ``log10 T`` (it exceeds float64 under the loss-based
rate). Seeds that reach the target loss, or diverge, are frozen and reported, not dropped.
"""
from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from ibcheck.simulate.substrate.losses import LOSSES, REDUCTIONS, grad_log_loss_wrt_Q, log_loss_inverse
from ibcheck.theory.argtypes import refused, require_bool, require_float, require_int
from ibcheck.theory.errors import InputError

SCHEDULES = ("constant", "loss-based", "paper")
LN10 = math.log(10.0)


@dataclass(frozen=True)
class TrainConfig:
    """How to run GD. ``lr=None`` takes the setting's default (``1/sqrt(d)`` for ``fa``)."""

    steps: int = 1000
    lr: float | None = None
    loss: str = "logistic"
    reduction: str = "mean"
    schedule: str = "constant"
    target_log10_loss: float | None = None
    max_seconds: float | None = None
    dtype: str = "float64"
    device: str = "cpu"
    records: int = 60
    up: float = 2 ** 0.2
    down: float = 0.5
    progress: bool = True
    dual: str = "auto"
    checkpoints: int = 0
    spacing: str = "log"  # of the recorded steps and checkpoints: "log" or "linear"

    def __post_init__(self):
        require_int("steps", self.steps, 0, high=10**9)
        if self.lr is not None:
            require_float("lr", self.lr, 0.0, strict=True)
        if self.loss not in LOSSES:
            raise refused("loss", self.loss, f"is not one of {', '.join(LOSSES)}")
        if self.reduction not in REDUCTIONS:
            raise refused("reduction", self.reduction, f"is not one of {', '.join(REDUCTIONS)}")
        if self.schedule not in SCHEDULES:
            raise refused("schedule", self.schedule, f"is not one of {', '.join(SCHEDULES)}")
        if self.dtype not in ("float64", "float32"):
            raise refused("dtype", self.dtype, "is not one of float64, float32")
        if self.max_seconds is not None:
            require_float("max_seconds", self.max_seconds, 0.0, strict=True)
        if self.target_log10_loss is not None and not math.isfinite(self.target_log10_loss):
            raise InputError(f"target_log10_loss={self.target_log10_loss} must be a finite number")
        require_int("checkpoints", self.checkpoints, 0, high=10_000)
        require_int("records", self.records, 1, high=100_000)
        if not isinstance(self.device, str) or not self.device:
            raise refused("device", self.device, "is not one of cpu, cuda, cuda:N")
        require_bool("progress", self.progress)
        require_float("up", self.up, 0.0, strict=True)
        require_float("down", self.down, 0.0, strict=True)
        if self.spacing not in ("log", "linear"):
            raise InputError(f"spacing {self.spacing!r} is not one of log, linear")
        if self.dual not in ("auto", "on", "off"):
            raise refused("dual", self.dual, "is not one of auto, on, off")
        if not (self.up >= 1 and 0 < self.down < 1):
            raise InputError(f"up={self.up}, down={self.down}: need up >= 1 and 0 < down < 1")

    @property
    def torch_dtype(self):
        return {"float64": torch.float64, "float32": torch.float32}[self.dtype]


def resolve_device(name: str) -> torch.device:
    """A torch device, or a one-line error when CUDA is asked for and not there."""
    if name == "cpu":
        return torch.device("cpu")
    if name.startswith("cuda"):
        if not torch.cuda.is_available():
            raise refused("device", name, ": CUDA is not available on this machine (use cpu)")
        return torch.device(name)
    raise refused("device", name, "is not one of cpu, cuda, cuda:N")


def record_steps(steps: int, count: int, spacing: str = "log") -> list[int]:
    """A log-spaced (or, under the loss-based schedule where log T grows linearly in the step,
    linearly spaced) schedule of steps 0..steps (always both ends)."""
    if steps <= 0:
        return [0]
    grid = np.geomspace(1, steps, max(2, count)) if spacing == "log" else np.linspace(1, steps, max(2, count))
    pts = np.unique(np.round(grid).astype(int))
    return sorted({0, steps, *pts.tolist()})


def use_dual(cfg: TrainConfig, N: int, d: int) -> bool:
    """The Gram form W = W0 + C X pays off when N < d (and K = X X^T fits easily)."""
    if cfg.dual == "on":
        return True
    return cfg.dual == "auto" and N < d and N <= 8192


@dataclass
class TrainResult:
    """Per-seed outcome: final model (batched), trajectory rows, status, and timing."""

    model: Any  # a batched model of simulate.substrate.models (TwoLayer, Multiclass or Linear)
    init_W: torch.Tensor
    trajectory: list[dict]
    status: list[str]
    status_step: list[int]
    final: list[dict]
    seconds: float
    steps_done: int
    config: TrainConfig | None = field(default=None)
    checkpoints: list = field(default_factory=list)  # (step, [network per seed])

    def networks(self):
        return self.model.networks()


def _metrics(model, Q, logL_sum, cfg: TrainConfig, n: int, y_dim_mc: bool) -> dict[str, torch.Tensor]:
    """Per-seed tracked quantities at the current parameters (LL20's sum convention)."""
    S = Q.shape[0]
    qmin = Q.reshape(S, -1).min(1).values
    correct = (Q > 0).all(-1).to(Q.dtype).mean(1)  # f(x) = 0 counts as misclassified
    rho = model.norm_sq().sqrt()
    L = model.degree
    rhoL = rho ** L
    return {
        "log10_loss_sum": logL_sum / LN10,
        "log10_loss_mean": (logL_sum - math.log(n)) / LN10,
        "train_accuracy": correct,
        "q_min": qmin,
        "rho": rho,
        "normalized_margin": qmin / rhoL,
        "smoothed_margin": log_loss_inverse(logL_sum, cfg.loss) / rhoL,
    }


def train(model, X: torch.Tensor, y: torch.Tensor, cfg: TrainConfig, lr: float, seeds: list[int]) -> TrainResult:
    """Run batched GD. ``X`` is (N, d) shared or (S, N, d) per seed; ``y`` (N,) or (S, N)."""
    S = model.S
    n = X.shape[-2]
    dev, dt = X.device, X.dtype
    init_W = model.weights().detach().clone()
    if use_dual(cfg, n, X.shape[-1]):
        model.use_dual(X)
    active = torch.ones(S, dtype=torch.bool, device=dev)
    status = ["max_steps"] * S
    status_step = [cfg.steps] * S
    alpha = torch.full((S,), float(lr), dtype=dt, device=dev)
    log_T = torch.full((S,), -math.inf, dtype=dt, device=dev)
    prev = {k: v.clone() for k, v in model.params.items()}
    prev_logL = torch.full((S,), math.inf, dtype=dt, device=dev)
    ckpt = set(record_steps(cfg.steps, cfg.checkpoints, cfg.spacing)) if cfg.checkpoints else set()
    rec = set(record_steps(cfg.steps, cfg.records, cfg.spacing)) | ckpt  # every checkpoint has its losses
    saved: list = []
    traj: list[dict] = []
    t0 = time.perf_counter()
    bar = _progress(cfg)
    step = 0
    mc = y.dtype == torch.int64
    while True:
        Q = model.margins(X, y)
        logL, dQ = grad_log_loss_wrt_Q(Q, cfg.loss)
        if cfg.schedule == "loss-based" and step > 0:
            Q, logL, dQ, alpha = _roll_back(model, X, y, cfg, Q, logL, dQ, prev, prev_logL, active, alpha)
        finite = torch.isfinite(logL) | (logL == -math.inf)
        for s in torch.nonzero(active & ~finite).flatten().tolist():
            status[s], status_step[s] = "diverged", step
            active[s] = False
        logL_red = logL - (math.log(n) if cfg.reduction == "mean" else 0.0)
        if cfg.target_log10_loss is not None:
            hit = active & (logL_red / LN10 <= cfg.target_log10_loss)
            for s in torch.nonzero(hit).flatten().tolist():
                status[s], status_step[s] = "reached_target", step
            active &= ~hit
        out_of_time = cfg.max_seconds is not None and time.perf_counter() - t0 > cfg.max_seconds
        stop = step >= cfg.steps or not bool(active.any()) or out_of_time
        if cfg.checkpoints and (step in ckpt or stop):
            saved.append((step, model.networks()))
        if step in rec or stop:
            met = _metrics(model, Q, logL, cfg, n, mc)
            met["log10_T"] = log_T / LN10
            met["lr_factor"] = alpha
            for s in range(S):
                traj.append({"seed": seeds[s], "step": step, **{k: float(v[s]) for k, v in met.items()}})
        if stop:
            if out_of_time:
                for s in torch.nonzero(active).flatten().tolist():
                    status[s], status_step[s] = "max_time", step
            break
        prev_logL = torch.where(active, logL, prev_logL)
        prev, log_T = _descend(model, X, y, dQ, cfg, alpha, logL_red, active, log_T, status, status_step, step)
        step += 1
        if bar is not None:
            bar.update(1)
            if step % 50 == 0:
                bar.set_postfix(log10_loss=f"{float(logL_red.min()) / LN10:.3g}", active=int(active.sum()))
    if bar is not None:
        bar.close()
    final_rows = [r for r in traj if r["step"] == step] or traj[-S:]
    final = [next(r for r in final_rows if r["seed"] == seeds[s]) for s in range(S)]
    for s in range(S):
        final[s] = {**final[s], "status": status[s], "status_step": status_step[s]}
    return TrainResult(model, init_W, traj, status, status_step, final, time.perf_counter() - t0, step, cfg, saved)


def _roll_back(model, X, y, cfg: TrainConfig, Q, logL, dQ, prev: dict, prev_logL, active, alpha):
    """LL20's loss-based step: roll back the seeds whose last step raised the loss and shrink their alpha; grow alpha
    where the loss fell. Returns the margins, log-loss, its gradient and alpha after the roll-back."""
    rejected = active & (logL > prev_logL)
    accepted = active & ~rejected
    alpha = torch.where(rejected, alpha * cfg.down, torch.where(accepted, alpha * cfg.up, alpha))
    if bool(rejected.any()):
        for k in model.params:
            m = rejected.view(-1, *([1] * (model.params[k].dim() - 1)))
            model.params[k] = torch.where(m, prev[k], model.params[k])
        Q = model.margins(X, y)
        logL, dQ = grad_log_loss_wrt_Q(Q, cfg.loss)
    return Q, logL, dQ, alpha


def _descend(model, X, y, dQ, cfg: TrainConfig, alpha, logL_red, active, log_T, status: list, status_step: list, step: int):
    """One GD step on the active seeds, ``theta <- theta - eta_t grad L`` with ``T += eta_t`` kept in log space.

    Pitfall avoided: a seed whose parameters stop being finite would poison every later record; it keeps its
    last finite parameters and is marked diverged (``active`` and the status lists change in place).
    Returns (the parameters before the step, log T after it)."""
    S = model.S
    grads = model.backward(X, y, dQ)
    if cfg.schedule == "loss-based":
        factor = alpha  # eta_t = alpha / L
        log_eta = torch.log(alpha) - logL_red
    else:
        factor = alpha * torch.exp(logL_red)  # eta * L
        log_eta = torch.log(alpha)
    factor = torch.where(active, factor, torch.zeros_like(factor))
    log_T = torch.where(active, torch.logaddexp(log_T, log_eta), log_T)
    prev = {k: v.clone() for k, v in model.params.items()}
    for k, g in grads.items():
        p = model.params[k]
        model.params[k] = p - factor.view(-1, *([1] * (p.dim() - 1))) * g
    bad = ~torch.stack([torch.isfinite(p.reshape(S, -1)).all(1) for p in model.params.values()]).all(0)
    for s in torch.nonzero(active & bad).flatten().tolist():
        status[s], status_step[s] = "diverged", step + 1
        active[s] = False
        for k in model.params:
            model.params[k][s] = prev[k][s]  # keep the last finite parameters
    return prev, log_T


def _progress(cfg: TrainConfig):
    if not cfg.progress:
        return None
    try:
        from tqdm import tqdm  # heavy: tqdm, only with a progress bar
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return None
    # a bar only on a terminal: elsewhere (a log, a pipe) its last erased line runs into what follows
    return tqdm(total=cfg.steps, desc="GD", unit="step", leave=False, dynamic_ncols=True, disable=not sys.stderr.isatty())
