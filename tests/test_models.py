"""The batched trainer's gradients equal autograd's gradient on the unbatched model."""
import math

import numpy as np
import pytest
import torch

from ibcheck.simulate.substrate.losses import grad_log_loss_wrt_Q
from ibcheck.simulate.substrate.models import ModelConfig, init_model

pytestmark = pytest.mark.usefixtures("float64_default")


def unbatched_loss(setting, params, fixed, X, y, loss):
    """The loss of ONE seed written plainly (no batching, no log space), for autograd."""
    if setting in ("fa", "two-layer"):
        pre = X @ params["W"].T + (params["b"] if "b" in params else 0)
        a = params["a"] if "a" in params else fixed["a"]
        q = y * (torch.relu(pre) @ a)
        Q = q[:, None]
    elif setting == "linear":
        Q = (y * (X @ params["w"]))[:, None]
    else:
        k = int(y.max()) + 1
        act = torch.relu(X @ params["W"].T)
        F = act.reshape(len(X), k, -1).mean(-1)
        Fy = F.gather(1, y[:, None])
        mask = torch.nn.functional.one_hot(y, k).bool()
        Q = (Fy - F)[~mask].reshape(len(X), k - 1)
    z = torch.logsumexp(-Q, -1)
    ell = torch.exp(z) if loss == "exp" else torch.nn.functional.softplus(z)
    return ell.sum()


@pytest.mark.parametrize("setting, bias", [("fa", True), ("two-layer", True), ("two-layer", False), ("linear", False), ("multiclass", False)])
@pytest.mark.parametrize("loss", ["logistic", "exp"])
@pytest.mark.parametrize("per_seed", [False, True])
def test_batched_gradient_equals_autograd(setting, bias, loss, per_seed):
    rng = np.random.default_rng(0)
    S, N, d, k = 3, 40, 12, 3
    seeds = [0, 1, 2]
    model = init_model(ModelConfig(setting, width=4, bias=bias), d, seeds, n_classes=k)
    Xs = torch.tensor(rng.standard_normal((S, N, d)))
    if setting == "multiclass":
        ys = torch.tensor(rng.integers(0, k, (S, N)))
    else:
        ys = torch.tensor(rng.choice([-1.0, 1.0], (S, N)))
    X, y = (Xs, ys) if per_seed else (Xs[0], ys[0])
    Q = model.margins(X, y)
    logL, dQ = grad_log_loss_wrt_Q(Q, loss)
    grads = model.backward(X, y, dQ)
    for s in range(S):
        params = {k_: v[s].detach().clone().requires_grad_(True) for k_, v in model.params.items()}
        fixed = {k_: v[s] for k_, v in model.fixed.items()}
        Xi, yi = (Xs[s], ys[s]) if per_seed else (Xs[0], ys[0])
        L = unbatched_loss(setting, params, fixed, Xi, yi, loss)
        L.backward()
        assert float(logL[s]) == pytest.approx(math.log(float(L.detach())), rel=1e-12)
        for name, p in params.items():
            ours = grads[name][s] * float(L.detach())  # grad L = L * grad log L
            assert torch.allclose(ours, p.grad, rtol=1e-9, atol=1e-12), (setting, name)


def test_exported_networks_compute_the_same_margins():
    rng = np.random.default_rng(1)
    for setting in ("fa", "two-layer", "linear", "multiclass"):
        model = init_model(ModelConfig(setting, width=3), 10, [0, 1], n_classes=3)
        X = rng.standard_normal((20, 10))
        y = rng.integers(0, 3, 20) if setting == "multiclass" else rng.choice([-1.0, 1.0], 20)
        Q = model.margins(torch.tensor(X), torch.tensor(y))
        qmin = Q.reshape(2, -1).min(1).values
        for s, net in enumerate(model.networks()):
            assert net.margins(X, y).min() == pytest.approx(float(qmin[s]), rel=1e-12)
            assert np.linalg.norm(net.params()) ** 2 == pytest.approx(float(model.norm_sq()[s]), rel=1e-12)
            assert net.degree == model.degree


def test_initialization_is_the_papers():
    d, m = 400, 200
    model = init_model(ModelConfig("fa", width=m, init_scale=0.5), d, [0])
    W, b, a = model.params["W"][0], model.params["b"][0], model.fixed["a"][0]
    assert float(W.std()) == pytest.approx(0.5 / math.sqrt(d), rel=0.05)
    assert float(b.std()) == pytest.approx(0.5 / d, rel=0.15)
    assert torch.equal(a, torch.cat([torch.full((m,), 1 / m), torch.full((m,), -1 / m)]))
    # Same seed, same draw, whatever the other seeds.
    again = init_model(ModelConfig("fa", width=m, init_scale=0.5), d, [5, 0])
    assert torch.equal(again.params["W"][1], W)


@pytest.mark.parametrize("setting", ["fa", "two-layer", "multiclass", "linear"])
@pytest.mark.parametrize("per_seed", [False, True])
def test_dual_form_follows_the_same_trajectory(setting, per_seed):
    """W = W0 + C X (Gram form) and plain W give the same GD iterates, step by step."""
    from ibcheck.simulate.substrate.trainer import TrainConfig, train

    rng = np.random.default_rng(3)
    S, N, d, k = 2, 30, 50, 3
    Xs = torch.tensor(rng.standard_normal((S, N, d)))
    ys = torch.tensor(rng.integers(0, k, (S, N))) if setting == "multiclass" else torch.tensor(rng.choice([-1.0, 1.0], (S, N)))
    X, y = (Xs, ys) if per_seed else (Xs[0], ys[0])
    out = {}
    for mode in ("off", "on"):
        model = init_model(ModelConfig(setting, width=3), d, [0, 1], n_classes=k)
        cfg = TrainConfig(steps=60, loss="logistic", schedule="constant", dual=mode, progress=False)
        res = train(model, X, y, cfg, 0.3, [0, 1])
        out[mode] = (res.trajectory, model.weights(), model.norm_sq())
    for ra, rb in zip(out["off"][0], out["on"][0]):
        for key in ("log10_loss_sum", "q_min", "rho", "normalized_margin"):
            assert rb[key] == pytest.approx(ra[key], rel=1e-8, abs=1e-12), (key, ra["step"])
    assert torch.allclose(out["on"][1], out["off"][1], rtol=1e-8, atol=1e-10)
    assert torch.allclose(out["on"][2], out["off"][2], rtol=1e-9)
