"""MV24.conj (p = 1): GD from a small initialization converges to the two-neuron network of the
average features, F(x) = sqrt(|J+|) relu(<x, mu+>) - sqrt(|J-|) relu(<x, mu->)."""
from __future__ import annotations

import math

import numpy as np

from ibcheck.simulate.reproductions.criteria import AtLeast, AtMost, Measured
from ibcheck.simulate.substrate.seeds import stream
from ibcheck.theory.result import new_figure


def measure(quick: bool) -> Measured:
    from ibcheck.simulate.substrate.models import ModelConfig  # heavy: torch (loaded on first use)
    from ibcheck.simulate.substrate.trainer import TrainConfig  # heavy: torch (loaded on first use)
    from ibcheck.simulate.substrate.training import DataConfig, RunConfig, run  # heavy: torch (loaded on first use)

    d, k, n, m = (64, 4, 120, 10) if quick else (256, 8, 400, 20)
    R = Measured("MV24.conj (p = 1): GD from small initialization converges to the two-neuron average-feature network",
                 {"d": d, "k": k, "n": n, "m": m})
    res = run(RunConfig(setting="two-layer", data=DataConfig(d=d, k=k, n=n, sigma=0.3, n_test=10),
                        model=ModelConfig("two-layer", width=m, bias=False, init_scale=1e-3),
                        train=TrainConfig(steps=3000, lr=0.2, loss="logistic", reduction="mean", progress=False)))
    net, ds = res.networks[0], res.dataset()
    plus = np.isin(np.arange(k), ds.J_plus)
    mu_p, mu_m = ds.means[plus].mean(0), ds.means[~plus].mean(0)
    u_p, u_m = mu_p / np.linalg.norm(mu_p), mu_m / np.linalg.norm(mu_m)
    X, _ = ds.sample(1000, stream("reproduction", 4))
    f = net.forward(X)
    g = math.sqrt(plus.sum()) * np.maximum(X @ u_p, 0) - math.sqrt((~plus).sum()) * np.maximum(X @ u_m, 0)
    R.add("distance of f/||f|| to F/||F|| on test inputs", "-> 0 (two-neuron average-feature network)",
          float(np.linalg.norm(f / np.linalg.norm(f) - g / np.linalg.norm(g))), AtMost(0.2))
    Wn = net.W / np.maximum(np.linalg.norm(net.W, axis=1, keepdims=True), 1e-300)
    weight = np.abs(net.a) * np.linalg.norm(net.W, axis=1)
    big = weight > 0.05 * weight.max()
    cos = np.maximum(Wn @ u_p, Wn @ u_m)
    R.add("fraction of active neurons aligned with an average feature (cos > 0.9)", "all of them", float(np.mean(cos[big] > 0.9)),
          AtLeast(0.8, strict=True), f"{int(big.sum())} neurons carry the output")
    fig, ax = new_figure(6.4, 3.8)
    order = np.argsort(-weight)
    ax.bar(np.arange(len(order)), cos[order], color=["C0" if b else "lightgray" for b in big[order]])
    ax.axhline(0.9, color="gray", ls="--", lw=1)
    ax.set_xlabel("neuron (by output weight x norm; gray: carries < 5% of the largest)")
    ax.set_ylabel("max cos with the average features")
    ax.set_title("MV24.conj (p = 1): neurons collapse onto the two average features", fontsize=9)
    fig.tight_layout()
    R.figures["neurons.png"] = fig
    return R
