"""LPLL25's synthetic figure: the 2-class model averages the features and flips at sqrt(d/k); the
k-class model decouples them and is more robust (LPLL25.exp.synthetic)."""
from __future__ import annotations

import math

import numpy as np

from ibcheck.simulate.report.figures import robust_accuracy_figure
from ibcheck.simulate.reproductions.criteria import AtLeast, AtMost, Measured, Reported, Within
from ibcheck.simulate.substrate.rundir import cosine_figure
from ibcheck.simulate.substrate.seeds import stream
from ibcheck.solvers.radius.bracket import compute_radii
from ibcheck.solvers.radius.curves import robust_accuracy
from ibcheck.solvers.radius.universal import universal_directions


def bracket(net, X, y, v) -> tuple[np.ndarray, np.ndarray]:
    """Best verified upper bound (attack or universal direction) and the certified lower bound, per point."""
    r = compute_radii(net, X, y, v, ("universal", "attack", "certified"), 5.0)
    return r["upper"], r["certified"]


def measure(quick: bool) -> Measured:
    from ibcheck.simulate.substrate.models import ModelConfig  # heavy: torch (loaded on first use)
    from ibcheck.simulate.substrate.trainer import TrainConfig  # heavy: torch (loaded on first use)
    from ibcheck.simulate.substrate.training import DataConfig, RunConfig, run  # heavy: torch (loaded on first use)

    d, k, n, m, pts = (256, 8, 320, 5, 100) if quick else (3072, 10, 1000, 5, 400)
    R = Measured("LPLL25's synthetic figure: 2-class vs k-class model", {"d": d, "k": k, "n": n, "m": m, "points": pts})
    data = DataConfig(d=d, k=k, n=n, sigma=1.0, n_test=2000)
    train = TrainConfig(steps=1500, lr=0.5, progress=False)
    two = run(RunConfig(setting="fa", data=data, model=ModelConfig("fa", width=m, init_scale=0.1), train=train))
    kc = run(RunConfig(setting="multiclass", data=data, model=ModelConfig("multiclass", width=m, init_scale=0.1), train=train))
    s2, sk = two.summary[0], kc.summary[0]
    avg = 1 / math.sqrt(k / 2)
    R.add("2-class cosine, same-class block (mean)", "about 0.45 (= 1/sqrt(5), d=3072, k=10)", s2["cosine_same_class_mean"],
          Within(0.35, 0.55) if not quick else Within(avg - 0.1, avg + 0.1), "" if not quick else f"quick size: compared with 1/sqrt(k/2) = {avg:.3f}")
    R.add("2-class cosine, other-class block (mean)", "about 0", s2["cosine_other_class_mean"], Within(-0.15, 0.15))
    R.add("k-class cosine, diagonal (mean)", "about 0.99", sk["cosine_same_class_mean"], AtLeast(0.85, strict=True))
    R.add("2-class lambda within-class ratio max/min (median)", "1 +- o(1) (seed 001); O~(1) (seeds 000, 002)", s2["lambda_within_class_ratio"],
          AtMost(1.5))
    ds = two.dataset()
    X, y = ds.sample(pts, stream("reproduction", 0))
    v = universal_directions("lpll25", means=ds.means, J_plus=ds.J_plus)
    up2, lo2 = bracket(two.networks[0], X, y, v)
    upk, lok = bracket(kc.networks[0].readout(ds.J_plus), X, y, v)
    med2, medk = float(np.median(up2)), float(np.median(upk))
    root = math.sqrt(d / k)
    R.add("2-class collapse radius (median radius)", "about 14 to 18 (sqrt(d/k) = 17.5)", med2,
          Within(14, 18) if not quick else Within(0.75 * root, 1.25 * root), "" if not quick else f"quick size: compared with sqrt(d/k) = {root:.2f}")
    R.add("k-class collapse radius (median radius)", "about 34 to 44 (sqrt(d/2) = 39)", medk, Within(34, 44) if not quick else AtLeast(med2, strict=True),
          "" if not quick else "quick size: the source's range is for d=3072; checked that it exceeds the 2-class radius")
    R.add("k-class / 2-class median radius", "more robust at every radius", medk / med2, AtLeast(1.5))
    R.add("certified lower bound, 2-class (median)", None, float(np.median(lo2)), Reported(), "a lower end of the bracket")
    grid = np.linspace(0, 1.2 * max(np.max(upk[np.isfinite(upk)]), 1), 80)
    R.figures["robust_accuracy.png"] = robust_accuracy_figure(
        {"2-class (attack/universal)": (grid, robust_accuracy(up2, grid)), "2-class (certified)": (grid, robust_accuracy(lo2, grid)),
         f"{k}-class read-out (attack/universal)": (grid, robust_accuracy(upk, grid)),
         f"{k}-class read-out (certified)": (grid, robust_accuracy(lok, grid))},
        {"sqrt(d/k)": root, "sqrt(d)": math.sqrt(d)}, title=f"fa-synthetic: d={d}, k={k}, n={n}, m={m}; {pts} test points")
    R.figures["cosine_2class.png"] = cosine_figure([s2["_cosine_matrix"]], two)
    R.figures["cosine_kclass.png"] = cosine_figure([sk["_cosine_matrix"]], kc)
    return R
