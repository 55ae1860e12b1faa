"""Attack upper bounds on the l2 radius: foolbox's DeepFool (a fast first guess) and DDN.

The attacks run in float32 (three times faster at d = 3072); every perturbation they return
is then verified in float64: the exact ray radius along its direction
(:func:`.ray.ray_flip_radius`) is the upper bound used, which is at most the attack's norm
when the sign really flipped (tie rule: ``f = 0`` is a flip) and ``inf`` when it did not.
"""
from __future__ import annotations

import warnings

import numpy as np

from .linear import l2_local
from .ray import ray_local
from .units import Local, localize


def _binary_module(W: np.ndarray, a: np.ndarray, bias: np.ndarray | None, dtype):
    """``x -> (-f/2, f/2)``, ``f = relu(x W^T + bias) a`` as a torch module in evaluation mode (class 1 is y = +1): ``bias``
    one per neuron (the network's b), or one row per point (a batch of local problems, which then takes the whole batch)."""
    import torch  # heavy: torch (loaded on first use)

    Wt, at = torch.tensor(W, dtype=dtype), torch.tensor(a, dtype=dtype)
    bt = None if bias is None else torch.tensor(bias, dtype=dtype)

    class Binary(torch.nn.Module):
        def forward(self, x):
            if bt is not None and bt.ndim == 2 and x.shape[0] != bt.shape[0]:
                raise RuntimeError("the local attack model takes the whole batch of points")
            z = x @ Wt.T
            f = torch.relu(z if bt is None else z + bt) @ at
            return torch.stack([-f / 2, f / 2], dim=1)

    return Binary().eval()  # torch's evaluation mode (no Python eval)


def _torch_module(net, dtype=None):
    """The network itself as a torch module (bench/radius_speed.py's reference)."""
    import torch  # heavy: torch (loaded on first use)

    return _binary_module(net.W, net.a, net.b, dtype or torch.float64)


def _local_module(loc: Local, dtype):
    """Each point's own problem (:class:`.units.Local`) as one batch: row i of the input is point i's perturbation in
    its units, and the biases are its pre-activations."""
    return _binary_module(loc.W, loc.a, loc.H, dtype)


def attack_radius(net, X: np.ndarray, y: np.ndarray, steps: int = 100, methods=("deepfool", "ddn"),
                  float32: bool = True) -> dict[str, np.ndarray]:
    """Per-point verified upper bounds from each attack, and their minimum under ``"attack"``.

    The attacks run at each point in its own units (:class:`.units.Local`: the point at the origin, its
    pre-activations as biases) and their radii are scaled back. Pitfall avoided: at X x 1e150 foolbox's float32 bounds
    (100 max |X|) overflowed to inf and its input check failed with an AssertionError."""
    X = np.atleast_2d(np.asarray(X, float))
    y = np.asarray(y, float)
    return attack_local(localize(net, X, y), steps, methods, float32)


def attack_local(loc: Local, steps: int = 100, methods=("deepfool", "ddn"), float32: bool = True) -> dict[str, np.ndarray]:
    """:func:`attack_radius` of a :class:`.units.Local` problem, in the units of X. Only points proven correctly
    classified are attacked; a proven misclassification has radius 0, and any other point gets no bound (inf)."""
    if loc.linear:
        return {"attack": l2_local(loc)}
    base = np.where(loc.sign < 0, 0.0, np.inf)
    idx = np.flatnonzero(loc.decided)
    out: dict[str, np.ndarray] = {name: base.copy() for name in methods}
    if len(idx):
        sub = loc.take(idx)
        for name, r in _attack_points(sub, steps, methods, float32).items():
            out[name][idx] = r
    out["attack"] = np.minimum.reduce([out[m] for m in methods])
    return out


def _attack_points(loc: Local, steps: int, methods, float32: bool) -> dict[str, np.ndarray]:
    import foolbox as fb  # heavy: foolbox (loaded on first use)
    import torch  # heavy: torch (loaded on first use)

    dtype = torch.float32 if float32 else torch.float64
    scale = 101.0  # the points' units put each one's largest distance to a hyperplane in [1/2, 1)
    fmodel = fb.PyTorchModel(_local_module(loc, dtype), bounds=(-scale, scale), device="cpu")
    N, d = len(loc.H), loc.W.shape[1]
    xt = torch.zeros((N, d), dtype=dtype)
    labels = torch.tensor((loc.y > 0).astype(np.int64))
    out: dict[str, np.ndarray] = {}
    attacks = {"deepfool": fb.attacks.L2DeepFoolAttack(steps=50, overshoot=0.02), "ddn": fb.attacks.DDNAttack(steps=steps)}
    for name in methods:
        # DDN replaces a zero gradient (a point whose neurons are all off along its path) by a draw from torch's global
        # generator: seeded here, in a forked state, so that a radius depends on the network and the points alone.
        # Pitfall avoided: the bound moved with whatever an earlier call had drawn (0.418-0.434 at one point of a test
        # network), and SCIP, given one of them as its big-M radius, ran past its 20 s limit in one of two suite runs.
        with warnings.catch_warnings(), torch.random.fork_rng(devices=[]):
            warnings.simplefilter("ignore")
            torch.manual_seed(0)
            try:
                _, adv, _ = attacks[name](fmodel, xt, labels, epsilons=None)
            except (AssertionError, RuntimeError):  # foolbox's own input checks: this attack gives no bound (inf), never a crash
                out[name] = np.full(N, np.inf)
                continue
        delta = adv.numpy().astype(np.float64)
        norms = np.linalg.norm(delta, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            U = np.where(norms[:, None] > 0, delta / norms[:, None], 0.0)
        r = ray_local(loc, U)
        # A direction that flips beyond the attack's own norm still gives a valid bound.
        out[name] = np.where(norms > 0, r, np.inf)
    return out
