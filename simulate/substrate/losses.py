"""Log-space losses and the gradient of log L, exact far below float64's 1e-308.

All losses are written on a margin tensor ``Q`` of shape ``(S, N, K)``: ``K = 1`` with
``Q = y f(x)`` for binary tasks, ``K = k - 1`` with ``Q_ij = f_{y_i} - f_j`` (j != y_i)
for k classes. With ``z_i = log sum_j exp(-Q_ij)``:

* exponential: ``ell_i = exp(z_i)``, so ``log ell_i = z_i``;
* logistic (cross-entropy for k classes): ``ell_i = log(1 + exp(z_i))``, so
  ``log ell_i = log softplus(z_i)``, computed without forming ``softplus(z_i)`` when it
  would underflow.

The trainer never forms L itself: it works with ``log L`` and with ``grad log L = grad L / L``
(whose weights are softmaxes in [0, 1]), so a loss of 1e-1000 keeps an exact logarithm and
an exact gradient direction. The step of GD is ``lr * L * grad log L``, with the factor L
applied last, where an underflow to 0 is the true answer.
"""
from __future__ import annotations

import math

import torch

LOSSES = ("logistic", "exp")
REDUCTIONS = ("mean", "sum")
_SWITCH = -30.0  # below this z, softplus(z) = e^z (1 - e^z/2 + ...) in closed form


def log_softplus(z: torch.Tensor) -> torch.Tensor:
    """``log(log(1 + e^z))`` without underflow: for z << 0 it is ``z + log1p(-e^z/2 + e^2z/3)``.

    Pitfall avoided: ``log(softplus(z))`` is ``log(0) = -inf`` once ``e^z`` underflows
    (z < -745), and its gradient is NaN there. Both branches are evaluated on clamped inputs
    so that the unused one cannot poison the gradient.
    """
    small = z < _SWITCH
    zs = torch.where(small, z, torch.full_like(z, _SWITCH))
    zl = torch.where(small, torch.full_like(z, _SWITCH), z)
    ez = torch.exp(zs)
    series = zs + torch.log1p(-ez / 2 + ez * ez / 3)
    direct = torch.log(torch.nn.functional.softplus(zl))
    return torch.where(small, series, direct)


def dlog_softplus(z: torch.Tensor) -> torch.Tensor:
    """``d/dz log softplus(z) = sigmoid(z) / softplus(z)``, in (0, 1], computed as an exp of a difference."""
    return torch.exp(torch.nn.functional.logsigmoid(z) - log_softplus(z))


def log_losses(Q: torch.Tensor, loss: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-sample ``log ell_i`` (S, N) and ``z_i`` (S, N) from margins ``Q`` (S, N, K)."""
    z = torch.logsumexp(-Q, dim=-1)
    if loss == "exp":
        return z, z
    if loss == "logistic":
        return log_softplus(z), z
    raise ValueError(f"unknown loss {loss!r}")


def log_total_loss(Q: torch.Tensor, loss: str, reduction: str = "sum") -> torch.Tensor:
    """``log L`` per seed (S,): log of the summed (or mean) loss, exact when L underflows."""
    ll, _ = log_losses(Q, loss)
    out = torch.logsumexp(ll, dim=-1)
    return out - math.log(Q.shape[1]) if reduction == "mean" else out


def grad_log_loss_wrt_Q(Q: torch.Tensor, loss: str) -> tuple[torch.Tensor, torch.Tensor]:
    """``(log Lsum, d log Lsum / dQ)``; the weights are products of softmaxes, all in [-1, 0].

    ``d log L / dQ_ij = -p_i r_i s_ij`` with ``p = softmax_i(log ell)``,
    ``r_i = d log ell_i / d z_i`` and ``s_ij = softmax_j(-Q_ij)``. The mean and the sum
    reductions have the same ``grad log L``.
    """
    ll, z = log_losses(Q, loss)
    logL = torch.logsumexp(ll, dim=-1)
    p = torch.exp(ll - logL[:, None])
    r = torch.ones_like(z) if loss == "exp" else dlog_softplus(z)
    s = torch.softmax(-Q, dim=-1)
    return logL, -(p * r)[..., None] * s


def log_loss_inverse(logL: torch.Tensor, loss: str) -> torch.Tensor:
    """``ell^{-1}(Lsum)`` from ``log Lsum``: ``-log Lsum`` (exp) or ``-log(expm1(Lsum))`` (logistic).

    Pitfall avoided: for tiny Lsum, ``expm1(Lsum)`` is Lsum to first order, so
    ``-log(expm1(exp(logL))) = -logL - log1p(Lsum/2 + ...)``, used below ``logL < -20``.
    """
    if loss == "exp":
        return -logL
    L = torch.exp(torch.clamp(logL, max=700.0))
    small = logL < -20
    series = -logL - torch.log1p(L / 2)
    direct = -torch.log(torch.expm1(torch.where(small, torch.ones_like(L), L)))
    return torch.where(small, series, direct)
