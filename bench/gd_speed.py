"""Batched GD against the per-seed loop a researcher would write, in the same run.

Configuration: the feature-averaging figure's d = 3072, n = 1000, m = 5 (fa: 10 neurons),
k = 10 clusters, 8 seeds, float64, CPU (or --device cuda). The reference trains the same
seeds one at a time with autograd and ``torch.optim.SGD``. Both take the same number of
steps from the same initialization; their final losses are checked to agree.

Prints ms per seed-step for both, the ratio, and the achieved GFLOP/s against a plain
float64 matmul measured in this run. The last line is ``speedup_per_seed_step: X``. The figure is recorded in
docs/performance.md (bench/record.py) as ``gd_speed``, or ``gd_speed[OPTION=VALUE;...]`` when options change the
configuration.
"""
from __future__ import annotations

import argparse
import math
import time

import torch
from record import command_line, record, variant_id  # run as a script: bench/ is on the path

from ibcheck.simulate.substrate.data import clusters
from ibcheck.simulate.substrate.models import ModelConfig, init_model
from ibcheck.simulate.substrate.trainer import TrainConfig, train


def reference_loop(W0, b0, a, X, y, lr, steps):
    """One seed at a time: autograd + torch.optim.SGD on the mean logistic loss."""
    finals = []
    for s in range(W0.shape[0]):
        W = W0[s].clone().requires_grad_(True)
        b = b0[s].clone().requires_grad_(True)
        opt = torch.optim.SGD([W, b], lr=lr)
        for _ in range(steps):
            opt.zero_grad()
            f = torch.relu(X @ W.T + b) @ a[s]
            loss = torch.nn.functional.softplus(-y * f).mean()
            loss.backward()
            opt.step()
        finals.append(float(loss.detach()))
    return finals


def matmul_gflops(dtype, device, n=1024, reps=10) -> float:
    A = torch.randn(n, n, dtype=dtype, device=device)
    B = torch.randn(n, n, dtype=dtype, device=device)
    A @ B
    _sync(device)
    t = time.perf_counter()
    for _ in range(reps):
        A @ B
    _sync(device)
    return 2 * n**3 * reps / (time.perf_counter() - t) / 1e9


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--d", type=int, default=3072)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--m", type=int, default=5)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    device = torch.device(args.device)
    dtype = torch.float64
    ds = clusters(args.d, args.k, args.n, 1.0, seed=0)
    X = torch.tensor(ds.X, dtype=dtype, device=device)
    y = torch.tensor(ds.y, dtype=dtype, device=device)
    seeds = list(range(args.seeds))
    lr = 1 / math.sqrt(args.d)
    model = init_model(ModelConfig("fa", width=args.m, init_scale=1.0), args.d, seeds).to(device, dtype)
    W0, b0, a = (model.params["W"].clone(), model.params["b"].clone(), model.fixed["a"].clone())

    cfg = TrainConfig(steps=args.steps, lr=lr, loss="logistic", reduction="mean", progress=False, records=10, device=args.device)
    train(init_model(ModelConfig("fa", width=args.m), args.d, seeds).to(device, dtype), X, y, TrainConfig(steps=2, progress=False), lr, seeds)  # warm-up
    _sync(device)
    t = time.perf_counter()
    res = train(model, X, y, cfg, lr, seeds)
    _sync(device)
    t_batched = time.perf_counter() - t

    reference_loop(W0[:1], b0[:1], a[:1], X, y, lr, 2)  # warm-up
    _sync(device)
    t = time.perf_counter()
    ref_final = reference_loop(W0, b0, a, X, y, lr, args.steps)
    _sync(device)
    t_ref = time.perf_counter() - t

    ours_final = [10 ** r["log10_loss_mean"] for r in res.final]
    for o, r in zip(ours_final, ref_final):
        # The reference's loss is read before its last update; compare loosely.
        assert abs(math.log(o) - math.log(r)) < 0.05, (o, r)

    seed_steps = args.seeds * args.steps
    ms_b = t_batched / seed_steps * 1000
    ms_r = t_ref / seed_steps * 1000
    M = 2 * args.m
    N, d = args.n, args.d
    primal = 4 * N * d * M * seed_steps  # forward X W^T and backward D^T X, per seed-step
    dual = model.dual is not None
    # Gram form: K C^T per step, plus K = X X^T and P0 = X W0^T once.
    actual = (2 * N * N * M * seed_steps + 2 * N * N * d + 2 * N * d * M * args.seeds) if dual else primal
    peak = matmul_gflops(dtype, device)
    print(f"config: fa, d={d}, n={N}, m={args.m} (width {M}), k={args.k}, seeds={args.seeds}, steps={args.steps}, float64, {device}, "
          f"torch threads={torch.get_num_threads()}")
    print(f"batched trainer ({'Gram form W = W0 + C X' if dual else 'primal'}): {ms_b:.3f} ms per seed-step, "
          f"{actual / t_batched / 1e9:.2f} GFLOP/s actual ({actual / t_batched / 1e9 / peak:.1%} of matmul), "
          f"{primal / t_batched / 1e9:.2f} GFLOP/s primal-equivalent")
    print(f"per-seed autograd + SGD reference: {ms_r:.3f} ms per seed-step, {primal / t_ref / 1e9:.2f} GFLOP/s ({primal / t_ref / 1e9 / peak:.1%} of matmul)")
    print(f"plain float64 matmul 1024^3 in this run: {peak:.2f} GFLOP/s")
    print(f"speedup_per_seed_step: {ms_r / ms_b:.2f}")
    record(variant_id("gd_speed", args, ap),
           f"**{ms_r / ms_b:.1f}x** per seed-step: batched {ms_b:.3f} ms against the reference's {ms_r:.3f} ms "
           f"({actual / t_batched / 1e9:.2f} GFLOP/s actual, {actual / t_batched / 1e9 / peak:.1%} of a plain float64 matmul's "
           f"{peak:.2f} GFLOP/s in the same run)",
           command_line(__file__), {"ms_batched": ms_b, "ms_reference": ms_r, "matmul_gflops": peak},
           what=f"batched GD ({'dual form through the Gram matrix' if dual else 'primal'}) against the per-seed autograd + SGD loop, "
                f"fa d = {d}, n = {N}, m = {args.m}, k = {args.k}, {args.seeds} seeds, {args.steps} steps, float64, {device}, "
                f"{torch.get_num_threads()} torch threads")


if __name__ == "__main__":
    main()
