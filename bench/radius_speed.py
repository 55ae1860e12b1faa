"""Radii of a feature-averaging network against the common practice, in the same run.

Setting: fa network trained at d = 3072, k = 10, n = 1000, m = 5; 1000 fresh test points.
Ours: the universal (exact ray), certified (Lipschitz + linear relaxation) and attack
(foolbox DeepFool + DDN, verified by the ray radius) radii: a two-sided bracket per point.
Common practice: foolbox's l2 PGD, 40 steps with a random start, at each of 13 radii; it
only says at which grid radius a point was first flipped (an upper bound at grid
resolution) and certifies nothing.

The last line is ``ours_seconds: X pgd_seconds: Y``. The figure is recorded in docs/performance.md (bench/record.py) as
``radius_speed``.
"""
from __future__ import annotations

import math
import time
import warnings

import numpy as np
import torch
from record import command_line, record  # run as a script: bench/ is on the path

from ibcheck.simulate.substrate.models import ModelConfig
from ibcheck.simulate.substrate.trainer import TrainConfig
from ibcheck.simulate.substrate.training import DataConfig, RunConfig, run
from ibcheck.solvers.radius.attack import _torch_module, attack_radius
from ibcheck.solvers.radius.certified import certified_radius
from ibcheck.solvers.radius.universal import universal_directions, universal_radius


def main() -> None:
    d, k, n, m, points = 3072, 10, 1000, 5, 1000
    t = time.perf_counter()
    res = run(RunConfig(setting="fa", data=DataConfig(d=d, k=k, n=n), model=ModelConfig("fa", width=m, init_scale=0.1),
                        train=TrainConfig(steps=1500, lr=0.5, progress=False), seeds=1))
    print(f"trained fa d={d} k={k} n={n} m={m} in {time.perf_counter() - t:.1f} s; test accuracy {res.summary[0]['test_accuracy']:.4f}")
    net, ds = res.networks[0], res.datasets[0]
    X, y = ds.sample(points, 7)

    t0 = time.perf_counter()
    v = universal_directions("lpll25", means=ds.means, J_plus=ds.J_plus)
    uni = universal_radius(net, X, y, v)
    t_uni = time.perf_counter() - t0
    att = np.minimum(attack_radius(net, X, y)["attack"], uni)
    t_att = time.perf_counter() - t0 - t_uni
    cert = certified_radius(net, X, y, att)
    ours = time.perf_counter() - t0
    t_cert = ours - t_uni - t_att
    assert (cert <= att * (1 + 1e-9)).all() and (att <= uni).all()

    import foolbox as fb

    ref = math.sqrt(d / k)
    grid = np.linspace(0.25, 3.0, 13) * ref
    # float32, as our attacks and as common practice.
    fmodel = fb.PyTorchModel(_torch_module(net, torch.float32), bounds=(-1e4, 1e4), device="cpu")
    xt, lab = torch.tensor(X, dtype=torch.float32), torch.tensor((y > 0).astype(np.int64))
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, advs, success = fb.attacks.L2PGD(steps=40, random_start=True)(fmodel, xt, lab, epsilons=list(grid))
    pgd = time.perf_counter() - t0
    success = success.numpy()  # (13, points)
    # Verify PGD's flips with our tie rule, then the first grid radius that flipped each point.
    flipped = np.stack([(y * net.forward(a.numpy().astype(np.float64)) <= 0) for a in advs])
    first = np.where(flipped.any(0), grid[np.argmax(flipped, axis=0)], np.inf)

    fin = np.isfinite(att) & (att > 0)
    our_gap = np.median((att[fin] - cert[fin]) / att[fin])
    pgd_fin = np.isfinite(first)
    pgd_gap_grid = np.median(np.where(first[pgd_fin] > grid[0], (grid[1] - grid[0]) / first[pgd_fin], 1.0))
    print(f"ours: universal {t_uni:.2f} s, attack {t_att:.2f} s, certified {t_cert:.2f} s; total {ours:.2f} s for {points} points")
    print(f"median radii: certified {np.median(cert):.3f} <= attack {np.median(att):.3f} <= universal {np.median(uni):.3f}; sqrt(d/k) = {ref:.3f}")
    print(f"ours: median relative bracket width (attack - certified)/attack = {our_gap:.3f}, certified lower bound on every point")
    print(f"PGD (40 steps x 13 radii, random start): {pgd:.2f} s; flipped {pgd_fin.mean():.1%} of points within {grid[-1]:.2f}; "
          f"median first-flip radius {np.median(first[pgd_fin]):.3f}; no lower bound (bracket [0, r]); "
          f"even read as [previous grid point, r] its relative width is {pgd_gap_grid:.3f}")
    print(f"PGD's upper bound is above ours on {np.mean(first[fin] > att[fin] * (1 + 1e-9)):.1%} of points "
          f"(median ratio {np.median(first[fin & pgd_fin] / att[fin & pgd_fin]):.3f})")
    print(f"ours_seconds: {ours:.2f} pgd_seconds: {pgd:.2f}")
    record("radius_speed", f"**{ours:.1f} s** against PGD's {pgd:.1f} s ({pgd / ours:.1f}x), with a certified lower bound for every point "
           f"(median relative bracket width {our_gap:.3f}); PGD flipped {pgd_fin.mean():.1%} of the points within {grid[-1]:.2f} and "
           "certifies nothing", command_line(__file__),
           {"ours_seconds": ours, "pgd_seconds": pgd, "universal_seconds": t_uni, "attack_seconds": t_att, "certified_seconds": t_cert},
           what=f"radii: universal, certified and attack bounds on {points} points of a fa network (d = {d}, k = {k}, n = {n}, "
                f"m = {m}), against foolbox's l2 PGD (40 steps at 13 radii, random start)")


if __name__ == "__main__":
    main()
