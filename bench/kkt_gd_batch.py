"""Batched GD for the KKT engine's pattern source, against the engine's own per-start GD, in the same run.

Issue 56 asks for the engine's GD starts batched in one tensor (torch, device-agnostic). Before wiring a batched
source into the engine (any edit to its sources stales every depth record: solvers/kkt/recall.py's fingerprint), this
bench measures what batching buys on the machine it runs on:

* the reference: :func:`ibcheck.solvers.kkt.gd.gd_pattern`, one start at a time (numpy, float64), as the engine runs it;
* the same GD (the same step on ``log sum exp(-q)`` through the Gram matrix, the same rescaling) on B starts at once, one
  tensor of shape (B, n, m), in numpy float64 and float32 and in torch float64 and float32 (``--device cuda`` where a
  GPU is lent); starts of different widths are padded with zero neurons, which stay zero under the step (exact);
* on the cover starts of one FVBS23 sample (every combination of covers at scale 1, :func:`.gd.cover_inits`) at
  (1024, 8, n = 385) and (4096, 16, n = 1107), the quick and full designs' largest cells.

Prints seconds per start for each, the ratio to the reference, and the fraction of pattern entries (n x m per start)
that agree with the reference's end pattern (float32 and summation order change the low bits; the GD's margins grow
geometrically, so a few entries near zero may differ). Recorded in docs/performance.md as ``kkt_gd_batch``.

Why it matters: a start's GD is FLOP-bound on a CPU (2 n^2 m flops a step through the Gram matrix), so batching only
removes Python overhead there; float32 halves the flops' cost; a GPU runs the batch at once.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from record import command_line, record  # run as a script: bench/ is on the path

from ibcheck.simulate.substrate.data import clusters
from ibcheck.solvers.kkt.gd import cover_inits, gd_pattern
from ibcheck.solvers.kkt.polish import data_span


def batched_numpy(L, y, inits, steps, dtype, lr=2.5, lr_out=0.02):
    """The engine's GD (:func:`gd_pattern`, the Gram-matrix step) on every init at once: (B, n, m) in ``dtype``."""
    scale = float(np.sqrt(np.mean(np.sum(L * L, axis=1)))) or 1.0
    Ln = (L / scale).astype(dtype)
    n, m = len(Ln), max(len(i.a) for i in inits)
    K = Ln @ Ln.T
    Z = np.zeros((len(inits), n, m), dtype)
    a = np.zeros((len(inits), m), dtype)
    for b, i in enumerate(inits):
        Z[b, :, :len(i.a)] = Ln @ (np.asarray(i.C, float) * scale).astype(dtype).T
        a[b, :len(i.a)] = i.a
    yy = y.astype(dtype)
    alive = np.ones(len(inits), bool)
    for _ in range(steps):
        H = np.maximum(Z, 0)
        q = yy * np.einsum("bnm,bm->bn", H, a)
        alive &= np.isfinite(q).all(axis=1)
        if not alive.any():
            break
        e = np.exp(-(q - q.min(axis=1, keepdims=True)))
        g = -(e / e.sum(axis=1, keepdims=True)) * yy * alive[:, None]  # a run whose loss stops being finite stays where it is
        G = (g[:, :, None] * a[:, None, :]) * (Z > 0)
        Z -= lr * np.matmul(K, G)
        a -= lr_out * np.einsum("bnm,bn->bm", H, g)
    return [((Z[b, :, :len(i.a)] > 0).astype(float), np.sign(a[b, :len(i.a)])) for b, i in enumerate(inits)]


def batched_torch(L, y, inits, steps, dtype, device, lr=2.5, lr_out=0.02):
    """The same in torch, on ``device``."""
    import torch

    scale = float(np.sqrt(np.mean(np.sum(L * L, axis=1)))) or 1.0
    Ln = torch.tensor(L / scale, dtype=dtype, device=device)
    n, m = Ln.shape[0], max(len(i.a) for i in inits)
    K = Ln @ Ln.T
    Z = torch.zeros((len(inits), n, m), dtype=dtype, device=device)
    a = torch.zeros((len(inits), m), dtype=dtype, device=device)
    for b, i in enumerate(inits):
        C = torch.tensor(np.asarray(i.C, float) * scale, dtype=dtype, device=device)
        Z[b, :, :len(i.a)] = Ln @ C.T
        a[b, :len(i.a)] = torch.tensor(i.a, dtype=dtype, device=device)
    yy = torch.tensor(y, dtype=dtype, device=device)
    for _ in range(steps):
        H = Z.clamp_min(0)
        q = yy * torch.einsum("bnm,bm->bn", H, a)
        g = -torch.softmax(-q, dim=1) * yy
        g = torch.where(torch.isfinite(g), g, torch.zeros_like(g))
        G = (g[:, :, None] * a[:, None, :]) * (Z > 0)
        Z -= lr * torch.matmul(K, G)
        a -= lr_out * torch.einsum("bnm,bn->bm", H, g)
    if device != "cpu":
        torch.cuda.synchronize()
    Zc, ac = Z.cpu().numpy(), a.cpu().numpy()
    return [((Zc[b, :, :len(i.a)] > 0).astype(float), np.sign(ac[b, :len(i.a)])) for b, i in enumerate(inits)]


def agreement(ref, got) -> float:
    """The fraction of pattern entries (and output signs) equal to the reference's."""
    same = sum(int((D0 == D1).sum() + (s0 == s1).sum()) for (D0, s0), (D1, s1) in zip(ref, got))
    return same / sum(D0.size + s0.size for D0, s0 in ref)


def measure(d: int, k: int, n: int, steps: int, starts: int, device: str) -> dict:
    import torch

    torch.set_num_threads(1)
    ds = clusters(d, k, n, sigma=1.0, seed=0)
    Q, L = data_span(ds.X, True)
    rng = np.random.default_rng(0)
    inits = cover_inits(Q, ds.X, ds.cluster, ds.y, (1.0,), rng)[:starts]
    t = time.perf_counter()
    ref = [gd_pattern(L, ds.y, i, steps=steps) for i in inits]
    t_ref = (time.perf_counter() - t) / len(inits)
    out = {"d": d, "k": k, "n": n, "starts": len(inits), "steps": steps, "reference_s": t_ref}
    variants = [("numpy float64", lambda: batched_numpy(L, ds.y, inits, steps, np.float64)),
                ("numpy float32", lambda: batched_numpy(L, ds.y, inits, steps, np.float32)),
                ("torch float64", lambda: batched_torch(L, ds.y, inits, steps, torch.float64, device)),
                ("torch float32", lambda: batched_torch(L, ds.y, inits, steps, torch.float32, device))]
    for name, f in variants:
        t = time.perf_counter()
        got = f()
        per = (time.perf_counter() - t) / len(inits)
        out[name] = {"s": per, "ratio": t_ref / per, "agree": agreement(ref, got)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=2000, help="GD steps per start (the engine's default: 2000)")
    ap.add_argument("--starts", type=int, default=36, help="cover starts batched per sample (at most the sample's combinations)")
    ap.add_argument("--device", default="cpu", help="torch's device: cpu or cuda")
    args = ap.parse_args()
    parts = []
    for d, k, n in ((1024, 8, 385), (4096, 16, 1107)):
        r = measure(d, k, n, args.steps, args.starts, args.device)
        line = (f"({d}, {k}, n = {n}), {r['starts']} starts x {r['steps']} steps: per start {r['reference_s']:.3f} s one at a time; "
                + ", ".join(f"{v} {r[v]['s']:.3f} s ({r[v]['ratio']:.2f}x, patterns {100 * r[v]['agree']:.1f}% equal)"
                            for v in ("numpy float64", "numpy float32", "torch float64", "torch float32")))
        print(line, flush=True)
        parts.append(line)
    record("kkt_gd_batch" + ("" if args.device == "cpu" else f"[device={args.device}]"), "; ".join(parts), command_line(__file__),
           what="the KKT engine's GD pattern source batched (one (B, n, m) tensor) against its per-start GD, same starts, "
                f"same run, torch on {args.device}, one thread")


if __name__ == "__main__":
    main()
