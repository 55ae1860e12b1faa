"""LPLL25's real-data claim: a network trained on the 10-class task, read out as odd vs even, is
more robust than one trained on the binary task (scikit-learn's digits, or MNIST IDX files)."""
from __future__ import annotations

import os

import numpy as np

from ibcheck.simulate.report.figures import robust_accuracy_figure
from ibcheck.simulate.reproductions.criteria import AtLeast, Measured, Reported
from ibcheck.simulate.reproductions.fa_synthetic import bracket
from ibcheck.simulate.substrate.seeds import stream
from ibcheck.solvers.radius.curves import robust_accuracy
from ibcheck.solvers.radius.universal import universal_directions
from ibcheck.theory.errors import InputError


def measure(quick: bool, idx_dir: str | None = None) -> Measured:
    from ibcheck.simulate.substrate.models import ModelConfig  # heavy: torch (loaded on first use)
    from ibcheck.simulate.substrate.trainer import TrainConfig  # heavy: torch (loaded on first use)
    from ibcheck.simulate.substrate.training import DataConfig, RunConfig, run  # heavy: torch (loaded on first use)

    n, m, steps, pts = (600, 10, 400, 80) if quick else (1500, 20, 2000, 250)
    kind, extra = "digits", {}
    if idx_dir:
        imgs = [f for f in os.listdir(idx_dir) if "images" in f]
        labs = [f for f in os.listdir(idx_dir) if "labels" in f]
        if not imgs or not labs:
            raise InputError(f"--idx-dir {idx_dir}: no *images* and *labels* IDX files there")
        kind = "idx"
        extra = {"idx_images": os.path.join(idx_dir, sorted(imgs)[0]), "idx_labels": os.path.join(idx_dir, sorted(labs)[0])}
    R = Measured("LPLL25's real-data claim on " + ("MNIST IDX files" if idx_dir else "scikit-learn's digits (odd vs even)"),
                 {"n": n, "m": m, "steps": steps, "points": pts, "data": kind})
    data = DataConfig(kind=kind, n=n, split="odd", n_test=500, **extra)
    train = TrainConfig(steps=steps, lr=0.5, progress=False)
    binm = run(RunConfig(setting="two-layer", data=data, model=ModelConfig("two-layer", width=m), train=train))
    mc = run(RunConfig(setting="multiclass", data=data, model=ModelConfig("multiclass", width=max(1, m // 10) + 1), train=train))
    ds_b, ds_m = binm.dataset(), mc.dataset()
    X, y = ds_b.sample(pts, stream("reproduction", 1))
    v = universal_directions("vys22", X_train=ds_b.X, y_train=ds_b.y)
    up_b, lo_b = bracket(binm.networks[0], X, y, v)
    up_m, lo_m = bracket(mc.networks[0].readout(ds_m.J_plus), X, y, v)
    grid = np.linspace(0, float(np.quantile(np.concatenate([up_b, up_m]), 0.98)), 60)
    acc_b, acc_m = robust_accuracy(up_b, grid), robust_accuracy(up_m, grid)
    nontrivial = (acc_b > 0.02) | (acc_m > 0.02)
    frac = float(np.mean(acc_m[nontrivial] >= acc_b[nontrivial])) if nontrivial.any() else float("nan")
    R.add("binary model test accuracy", None, binm.summary[0]["test_accuracy"])
    R.add("10-class model read-out test accuracy", None, mc.summary[0].get("readout_test_accuracy"))
    R.add("median radius, binary-trained", None, float(np.median(up_b)))
    R.add("median radius, 10-class-trained read-out", None, float(np.median(up_m)))
    R.add("fraction of radii where the 10-class model is at least as robust", "1 (more robust at every radius)", frac, AtLeast(0.9))
    # cosine-style diagnostic: first-layer neurons against the class-mean images
    means = np.array([ds_m.X[ds_m.y == c].mean(0) for c in range(10) if (ds_m.y == c).any()])
    M = means / np.linalg.norm(means, axis=1, keepdims=True)
    for label, net in (("binary", binm.networks[0]), ("10-class", mc.networks[0])):
        W = net.W / np.linalg.norm(net.W, axis=1, keepdims=True)
        R.add(f"{label} model: mean over neurons of the largest |cos| with a digit-mean image", None, float(np.abs(W @ M.T).max(1).mean()),
              Reported(), "higher = neurons align with single digit classes (decoupling)")
    R.figures["robust_accuracy.png"] = robust_accuracy_figure(
        {"binary-trained (attack/universal)": (grid, acc_b), "binary-trained (certified)": (grid, robust_accuracy(lo_b, grid)),
         "10-class read-out (attack/universal)": (grid, acc_m), "10-class read-out (certified)": (grid, robust_accuracy(lo_m, grid))},
        title=f"fa-digits ({kind}): odd vs even, n={n}")
    return R
