"""Attack upper bounds on the l2 radius: foolbox's DeepFool (a fast first guess) and DDN.

The attacks run in float32 (three times faster at d = 3072); every perturbation they return
is then verified in float64: the exact ray radius along its direction
(:func:`.ray.ray_flip_radius`) is the upper bound used, which is at most the attack's norm
when the sign really flipped (tie rule: ``f = 0`` is a flip) and ``inf`` when it did not.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..networks import LinearClassifier, TwoLayerReLU
from .linear import l2_radius
from .ray import ray_flip_radius
from .units import rescaled, scaled_back


def _torch_module(net, dtype=None):
    import torch  # heavy: torch (loaded on first use)

    dtype = dtype or torch.float64
    W = torch.tensor(net.W, dtype=dtype)
    a = torch.tensor(net.a, dtype=dtype)
    b = torch.tensor(net.b, dtype=dtype) if net.b is not None else None

    class Binary(torch.nn.Module):
        """Logits (-f/2, f/2): class 1 is y = +1."""

        def forward(self, x):
            z = x @ W.T
            if b is not None:
                z = z + b
            f = torch.relu(z) @ a
            return torch.stack([-f / 2, f / 2], dim=1)

    return Binary().eval()


def attack_radius(net, X: np.ndarray, y: np.ndarray, steps: int = 100, methods=("deepfool", "ddn"),
                  float32: bool = True) -> dict[str, np.ndarray]:
    """Per-point verified upper bounds from each attack, and their minimum under ``"attack"``.

    The attacks run in normalized units (:mod:`.units`) and their radii are scaled back. Pitfall avoided: at X x 1e150
    foolbox's float32 bounds (100 max |X|) overflowed to inf and its input check failed with an AssertionError."""
    X = np.atleast_2d(np.asarray(X, float))
    y = np.asarray(y, float)
    unit, Xs, e, _ = rescaled(net, X)
    return {k: scaled_back(v, e) for k, v in _attack_unit(unit, Xs, y, steps, methods, float32).items()}


def _attack_unit(net, X: np.ndarray, y: np.ndarray, steps: int, methods, float32: bool) -> dict[str, np.ndarray]:
    if isinstance(net, LinearClassifier):
        r = l2_radius(net, X, y)
        return {"attack": r}
    if not isinstance(net, TwoLayerReLU):
        raise TypeError(f"no attack for a {net.kind} network")
    import foolbox as fb  # heavy: foolbox (loaded on first use)
    import torch  # heavy: torch (loaded on first use)

    scale = float(np.abs(X).max()) * 100 + 1.0
    dtype = torch.float32 if float32 else torch.float64
    fmodel = fb.PyTorchModel(_torch_module(net, dtype), bounds=(-scale, scale), device="cpu")
    xt = torch.tensor(X, dtype=dtype)
    labels = torch.tensor((y > 0).astype(np.int64))
    out: dict[str, np.ndarray] = {}
    attacks = {"deepfool": fb.attacks.L2DeepFoolAttack(steps=50, overshoot=0.02), "ddn": fb.attacks.DDNAttack(steps=steps)}
    for name in methods:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                _, adv, _ = attacks[name](fmodel, xt, labels, epsilons=None)
            except AssertionError:  # foolbox's own input checks: this attack gives no bound (inf), never a crash
                out[name] = np.where(y * net.forward(X) <= 0, 0.0, np.inf)
                continue
        delta = adv.numpy().astype(np.float64) - X
        norms = np.linalg.norm(delta, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            U = np.where(norms[:, None] > 0, delta / norms[:, None], 0.0)
        r = ray_flip_radius(net, X, y, U)
        # A direction that flips beyond the attack's own norm still gives a valid bound.
        out[name] = np.where(norms > 0, r, np.where(y * net.forward(X) <= 0, 0.0, np.inf))
    out["attack"] = np.minimum.reduce([out[m] for m in methods])
    return out
