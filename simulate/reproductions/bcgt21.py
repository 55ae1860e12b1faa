"""BCGT21: a single gradient step of size O(1) flips a random two-layer network, whatever d and the
width k (BCGT21.thm.one_step), for ReLU and for a smooth activation (GELU)."""
from __future__ import annotations

import numpy as np

from ibcheck.simulate.report.figures import series_figure
from ibcheck.simulate.reproductions.criteria import AtLeast, Judged, Measured, Reported
from ibcheck.simulate.substrate.data import sphere_points
from ibcheck.simulate.substrate.one_step import flip_along_gradient
from ibcheck.simulate.substrate.seeds import cell_key, rng


def measure(quick: bool) -> Measured:
    from ibcheck.simulate.stats.fit import fit_exponents  # heavy: scipy (loaded on first use)
    from ibcheck.simulate.substrate.models import ModelConfig, random_networks  # heavy: torch (loaded on first use)
    from ibcheck.simulate.verdict.rules import exponent_verdict  # heavy: scipy (loaded on first use)

    grid_d, grid_k, pts = ([64, 128, 256], [50, 100, 200], 100) if quick else ([64, 256, 1024], [100, 400, 1600], 300)
    R = Measured("BCGT21: one gradient step flips a random two-layer network", {"d": grid_d, "k": grid_k, "points": pts})
    curves = {}
    for act in ("relu", "gelu"):
        rows_eta, rows_norm, within = [], [], []
        for d in grid_d:
            for k in grid_k:
                for s in range(2):
                    net = random_networks(ModelConfig("random-net", width=k, activation=act), d, [s])[0]
                    eta, norm = flip_along_gradient(net, sphere_points(pts, d, rng("reproduction", s, 3, cell_key("bcgt21", d, k))))
                    fin = np.isfinite(eta)
                    within.append(float(np.mean(eta <= 20)))
                    rows_eta.append({"d": d, "k": k, "seed": s, "value": float(np.median(eta[fin])) if fin.any() else float("inf")})
                    rows_norm.append({"d": d, "k": k, "seed": s, "value": float(np.median(norm[fin])) if fin.any() else float("inf")})
        for label, rows in (("|eta|", rows_eta), ("||delta||", rows_norm)):
            fit = fit_exponents(rows, ["d", "k"], bootstrap=False)
            for v in ("d", "k"):
                vd = exponent_verdict("Theta", fit.estimate[v], fit.se[v], fit.df, 0.0, margin=0.15)
                R.add(f"{act}: median flipping {label}, exponent in {v}", "0 (does not grow with d or k)", fit.estimate[v],
                      Judged(vd.verdict, "the Theta(1) exponent test, margin 0.15"), f"95% CI [{fit.ci[v][0]:.3f}, {fit.ci[v][1]:.3f}]; {vd.reason}")
        curves[act] = rows_eta
        R.add(f"{act}: fraction of flips within |eta| <= 20", "searched within |eta| <= 20; about 1 found", float(np.mean(within)),
              AtLeast(0.9, strict=True))
        R.add(f"{act}: median flipping |eta| (all cells)", "about 1", float(np.median([r["value"] for r in rows_eta])), Reported(),
              "the scale depends on the normalization of eta")
    R.figures["flip_eta.png"] = series_figure(
        {f"{act}, k={k}": [(r["d"], r["value"]) for r in rows if r["k"] == k] for act, rows in curves.items() for k in grid_k},
        "d", "median flipping |eta|", "BCGT21: the flipping step does not grow with d or k", logy=True)
    return R
