"""Reproductions of the sources' experiments, side by side with their numbers.

Each reproduction returns rows ``{quantity, source_value, measured, verdict, note}``:
``source_value`` is the source's number or qualitative claim (None where it gives none),
``measured`` is ibcheck's number from this run, and the verdict compares them: a number
only where the run is at the source's size, otherwise the source's qualitative claim.
Nothing here is a test constant: the comparison with the source is the report's job.
"""
from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass, field

import numpy as np

from ibcheck.theory.atomic import atomic_file, save_figure_file
from ibcheck.theory.errors import InputError

from .reporting import save_figure


@dataclass
class Criteria:
    """A reproduction being built: its criteria rows (quantity, source value, measured, verdict, note) and figures."""

    name: str
    title: str
    rows: list[dict] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    params: dict = field(default_factory=dict)

    def row(self, quantity, source_value, measured, verdict, note=""):
        self.rows.append({"quantity": quantity, "source_value": source_value, "measured": measured, "verdict": verdict, "note": note})


def _fits_text(result: dict) -> str:
    """``d: 0.491 [0.472, 0.510] vs 0.5; ...`` for one comparison result."""
    return "; ".join(f"{f['variable']}: {f['estimate']:.3f} [{f['ci_low']:.3f}, {f['ci_high']:.3f}] vs {f['predicted']:g}" for f in result["fits"])


def _qual(ok: bool | None) -> str:
    return "inconclusive" if ok is None else ("consistent" if ok else "inconsistent")


def _in_range(x: float, lo: float, hi: float) -> str:
    return _qual(lo <= x <= hi)


# ---------------------------------------------------------------------------------------------
# LPLL25: the synthetic feature-averaging figure, and the digits experiment.


def _radii(net, X, y, v):
    """Best verified upper bound (attack or universal) and the certified lower bound, per point."""
    from ibcheck.solvers.radius.attack import attack_radius
    from ibcheck.solvers.radius.certified import certified_radius
    from ibcheck.solvers.radius.universal import universal_radius

    upper = np.minimum(attack_radius(net, X, y)["attack"], universal_radius(net, X, y, v))
    return upper, certified_radius(net, X, y, upper)


def fa_synthetic(quick: bool, out: str) -> Criteria:
    from ibcheck.solvers.radius.curves import robust_accuracy
    from ibcheck.solvers.radius.universal import universal_directions

    from .models import ModelConfig
    from .reporting import cosine_heatmap, plot_robust_accuracy
    from .trainer import TrainConfig
    from .training import DataConfig, RunConfig, run

    d, k, n, m, pts = (256, 8, 320, 5, 100) if quick else (3072, 10, 1000, 5, 400)
    R = Criteria("fa-synthetic", "LPLL25's synthetic figure: 2-class vs k-class model", params={"d": d, "k": k, "n": n, "m": m, "points": pts})
    data = DataConfig(d=d, k=k, n=n, sigma=1.0, n_test=2000)
    train = TrainConfig(steps=1500, lr=0.5, progress=False)
    two = run(RunConfig(setting="fa", data=data, model=ModelConfig("fa", m=m, init_scale=0.1), train=train))
    kc = run(RunConfig(setting="multiclass", data=data, model=ModelConfig("multiclass", m=m, init_scale=0.1), train=train))
    s2, sk = two.summary[0], kc.summary[0]
    full = not quick
    R.row("2-class cosine, same-class block (mean)", "about 0.45 (= 1/sqrt(5), d=3072, k=10)", s2["cosine_same_class_mean"],
          _in_range(s2["cosine_same_class_mean"], 0.35, 0.55) if full else _qual(abs(s2["cosine_same_class_mean"] - 1 / math.sqrt(k / 2)) < 0.1),
          "" if full else f"quick size: compared with 1/sqrt(k/2) = {1 / math.sqrt(k / 2):.3f}")
    R.row("2-class cosine, other-class block (mean)", "about 0", s2["cosine_other_class_mean"], _qual(abs(s2["cosine_other_class_mean"]) < 0.15))
    R.row("k-class cosine, diagonal (mean)", "about 0.99", sk["cosine_same_class_mean"], _qual(sk["cosine_same_class_mean"] > 0.85))
    R.row("2-class lambda within-class ratio max/min (median)", "1 +- o(1) (seed 001); O~(1) (seeds 000, 002)", s2["lambda_within_class_ratio"],
          _qual(s2["lambda_within_class_ratio"] is not None and s2["lambda_within_class_ratio"] < 1.5))
    ds = two.datasets[0]
    X, y = ds.sample(pts, 4242)
    v = universal_directions("lpll25", means=ds.means, J_plus=ds.J_plus)
    up2, lo2 = _radii(two.networks[0], X, y, v)
    ro = kc.networks[0].readout(ds.J_plus)
    upk, lok = _radii(ro, X, y, v)
    med2, medk = float(np.median(up2)), float(np.median(upk))
    R.row("2-class collapse radius (median radius)", "about 14 to 18 (sqrt(d/k) = 17.5)", med2,
          _in_range(med2, 14, 18) if full else _qual(abs(med2 / math.sqrt(d / k) - 1) < 0.25),
          "" if full else f"quick size: compared with sqrt(d/k) = {math.sqrt(d / k):.2f}")
    R.row("k-class collapse radius (median radius)", "about 34 to 44 (sqrt(d/2) = 39)", medk,
          _in_range(medk, 34, 44) if full else _qual(medk > med2),
          "" if full else "quick size: the source's range is for d=3072; checked that it exceeds the 2-class radius")
    R.row("k-class / 2-class median radius", "more robust at every radius", medk / med2, _qual(medk / med2 >= 1.5))
    R.row("certified lower bound, 2-class (median)", None, float(np.median(lo2)), "inconclusive", "a lower end of the bracket")
    grid = np.linspace(0, 1.2 * max(np.max(upk[np.isfinite(upk)]), 1), 80)
    plot_robust_accuracy({"2-class (attack/universal)": (grid, robust_accuracy(up2, grid)),
                          "2-class (certified)": (grid, robust_accuracy(lo2, grid)),
                          f"{k}-class read-out (attack/universal)": (grid, robust_accuracy(upk, grid)),
                          f"{k}-class read-out (certified)": (grid, robust_accuracy(lok, grid))},
                         os.path.join(out, "robust_accuracy.png"), {"sqrt(d/k)": math.sqrt(d / k), "sqrt(d)": math.sqrt(d)},
                         title=f"fa-synthetic: d={d}, k={k}, n={n}, m={m}; {pts} test points")
    cosine_heatmap([s2["_cosine_matrix"]], two, os.path.join(out, "cosine_2class.png"))
    cosine_heatmap([sk["_cosine_matrix"]], kc, os.path.join(out, "cosine_kclass.png"))
    R.figures += ["robust_accuracy.png", "cosine_2class.png", "cosine_kclass.png"]
    return R


def fa_digits(quick: bool, out: str, idx_dir: str | None = None) -> Criteria:
    from ibcheck.solvers.radius.curves import robust_accuracy
    from ibcheck.solvers.radius.universal import universal_directions

    from .models import ModelConfig
    from .reporting import plot_robust_accuracy
    from .trainer import TrainConfig
    from .training import DataConfig, RunConfig, run

    n, m, steps, pts = (600, 10, 400, 80) if quick else (1500, 20, 2000, 250)
    kind = "digits"
    extra = {}
    if idx_dir:
        imgs = [f for f in os.listdir(idx_dir) if "images" in f]
        labs = [f for f in os.listdir(idx_dir) if "labels" in f]
        if not imgs or not labs:
            raise InputError(f"--idx-dir {idx_dir}: no *images* and *labels* IDX files there")
        kind = "idx"
        extra = {"idx_images": os.path.join(idx_dir, sorted(imgs)[0]), "idx_labels": os.path.join(idx_dir, sorted(labs)[0])}
    R = Criteria("fa-digits", "LPLL25's real-data claim on " + ("MNIST IDX files" if idx_dir else "scikit-learn's digits (odd vs even)"),
                     params={"n": n, "m": m, "steps": steps, "points": pts, "data": kind})
    data = DataConfig(kind=kind, n=n, split="odd", n_test=500, **extra)
    train = TrainConfig(steps=steps, lr=0.5, progress=False)
    binm = run(RunConfig(setting="two-layer", data=data, model=ModelConfig("two-layer", m=m), train=train))
    mc = run(RunConfig(setting="multiclass", data=data, model=ModelConfig("multiclass", m=max(1, m // 10) + 1), train=train))
    ds_b, ds_m = binm.datasets[0], mc.datasets[0]
    X, y = ds_b.sample(pts, 777)
    v = universal_directions("vys22", X_train=ds_b.X, y_train=ds_b.y)
    up_b, lo_b = _radii(binm.networks[0], X, y, v)
    ro = mc.networks[0].readout(ds_m.J_plus)
    up_m, lo_m = _radii(ro, X, y, v)
    grid = np.linspace(0, float(np.quantile(np.concatenate([up_b, up_m]), 0.98)), 60)
    acc_b, acc_m = robust_accuracy(up_b, grid), robust_accuracy(up_m, grid)
    nontrivial = (acc_b > 0.02) | (acc_m > 0.02)
    frac = float(np.mean(acc_m[nontrivial] >= acc_b[nontrivial])) if nontrivial.any() else float("nan")
    R.row("binary model test accuracy", None, binm.summary[0]["test_accuracy"], "inconclusive")
    R.row("10-class model read-out test accuracy", None, mc.summary[0].get("readout_test_accuracy"), "inconclusive")
    R.row("median radius, binary-trained", None, float(np.median(up_b)), "inconclusive")
    R.row("median radius, 10-class-trained read-out", None, float(np.median(up_m)), "inconclusive")
    R.row("fraction of radii where the 10-class model is at least as robust", "1 (more robust at every radius)", frac,
          _qual(frac >= 0.9) if math.isfinite(frac) else "inconclusive")
    # Cosine-style diagnostic: first-layer neurons against the class-mean images.
    means = np.array([ds_m.X[ds_m.y == c].mean(0) for c in range(10) if (ds_m.y == c).any()])
    for label, net in (("binary", binm.networks[0]), ("10-class", mc.networks[0])):
        W = net.W / np.linalg.norm(net.W, axis=1, keepdims=True)
        M = means / np.linalg.norm(means, axis=1, keepdims=True)
        C = W @ M.T
        R.row(f"{label} model: mean over neurons of the largest |cos| with a digit-mean image", None, float(np.abs(C).max(1).mean()), "inconclusive",
              "higher = neurons align with single digit classes (decoupling)")
    plot_robust_accuracy({"binary-trained (attack/universal)": (grid, acc_b), "binary-trained (certified)": (grid, robust_accuracy(lo_b, grid)),
                          "10-class read-out (attack/universal)": (grid, acc_m), "10-class read-out (certified)": (grid, robust_accuracy(lo_m, grid))},
                         os.path.join(out, "robust_accuracy.png"), title=f"fa-digits ({kind}): odd vs even, n={n}")
    R.figures.append("robust_accuracy.png")
    return R


# ---------------------------------------------------------------------------------------------
# LL20 and SHNGS18: margins and directions along long runs.


def ll20_margin(quick: bool, out: str) -> Criteria:
    from ibcheck.solvers.kkt.certificate import eps_delta_kkt

    from .models import ModelConfig
    from .trainer import TrainConfig
    from .training import DataConfig, RunConfig, run

    steps, target = (3000, -800) if quick else (20000, -800)
    R = Criteria("ll20-margin", "LL20: normalized margin under a constant vs the loss-based learning rate", params={"steps": steps})
    data = DataConfig(d=20, k=4, n=40, sigma=0.5, n_test=500)
    model = ModelConfig("two-layer", m=10, bias=False, init_scale=1.0)
    const = run(RunConfig(setting="two-layer", data=data, model=model,
                          train=TrainConfig(steps=steps, lr=0.01, loss="exp", reduction="sum", progress=False)))
    lb = run(RunConfig(setting="two-layer", data=data, model=model,
                       train=TrainConfig(steps=steps, lr=0.01, loss="exp", reduction="sum", schedule="loss-based",
                                         target_log10_loss=target, checkpoints=10, progress=False)))
    lines = ["| run | step | log10 loss (sum) | normalized margin |", "|---|---|---|---|"]
    for name, res in (("constant", const), ("loss-based", lb)):
        for r in res.trajectory[:: max(1, len(res.trajectory) // 8)] + [res.trajectory[-1]]:
            lines.append(f"| {name} | {r['step']} | {r['log10_loss_sum']:.4g} | {r['normalized_margin']:.4g} |")
    R.notes.append("\n".join(lines))
    fc, fl = const.summary[0], lb.summary[0]
    R.row("lowest log10 loss reached (loss-based)", "about -881 (1e-881)", fl["train_log10_loss_sum"], _qual(fl["train_log10_loss_sum"] <= -700))
    R.row("normalized margin: loss-based / constant lr", "about 10x larger (1.18e-3 vs about 1e-4)", fl["normalized_margin"] / fc["normalized_margin"],
          _qual(fl["normalized_margin"] > fc["normalized_margin"]))
    # LL20.thm.monotone along the constant-lr run, after the loss falls below ell(0) = 1.
    sm = [r["smoothed_margin"] for r in const.trajectory if r["log10_loss_sum"] < 0]
    mono = all(b >= a - 1e-9 * abs(a) for a, b in zip(sm, sm[1:]))
    R.row("smoothed margin monotone after t0 (constant lr)", "monotone (LL20.thm.monotone)", mono, _qual(mono))
    ds = lb.datasets[0]
    eps, delta, _ = eps_delta_kkt(lb.networks[0], ds.X, ds.y)
    eps_t, delta_t, _ = eps_delta_kkt(lb.networks[0], ds.X, ds.y, tie_tol=1e-4)
    R.row("(eps, delta)-KKT of the final direction", "-> (0, 0) (LL20.thm.kkt)", [eps, delta], "inconclusive",
          f"with near-ties |z| <= 1e-4 allowed: ({eps_t:.3g}, {delta_t:.3g})")
    from .compare import compare_and_save

    s = compare_and_save("LL20.thm.rates", os.path.join(out, "rates"), quick=quick, progress=False)
    for r in s["results"]:
        f = r["fits"][0]
        R.row(f"{r['quantity']} against T: exponent after the known log offset", f"{r['kind']}({r['expr']}) (LL20.thm.rates)", f["estimate"],
              r["verdict"], f"95% CI [{f['ci_low']:.3f}, {f['ci_high']:.3f}] vs {f['predicted']:g}; see rates/report.md")
    _plot_margins({"constant lr": const.trajectory, "loss-based lr": lb.trajectory}, os.path.join(out, "margin.png"))
    R.figures.append("margin.png")
    return R


def _plot_margins(trajs: dict, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for name, tr in trajs.items():
        pts = [(r["log10_loss_sum"], r["normalized_margin"]) for r in tr if r["train_accuracy"] == 1.0]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", ms=3, label=name)
    ax.invert_xaxis()
    ax.set_xlabel("log10 training loss (sum)")
    ax.set_ylabel("normalized margin q_min / rho^L")
    save_figure(fig, ax, path, "LL20: the normalized margin keeps growing as the loss falls", grid_which="major")


def shngs18(quick: bool, out: str) -> Criteria:
    from .compare import compare_and_save

    R = Criteria("shngs18", "SHNGS18: logistic regression on separable data converges to the SVM direction")
    s = compare_and_save("SHNGS18.thm.direction", os.path.join(out, "compare"), quick=quick, progress=False)
    for r in s["results"]:
        f = r["fits"][0]
        what = "direction error to the SVM" if r["quantity"] == "direction_error" else "training loss"
        R.row(f"{what}: exponent in t after the known log offset" + (f" [{r['reading']}]" if r["reading"] else ""),
              f"{r['kind']}({r['expr']})", f["estimate"], r["verdict"],
              f"95% CI [{f['ci_low']:.3f}, {f['ci_high']:.3f}] vs {f['predicted']:g}; negative control {r['negative_control']['verdict']}")
    R.notes.append("Full comparison: compare/report.md (sweep database compare/sweep.sqlite).")
    R.figures += sorted(os.path.join("compare", f) for f in os.listdir(os.path.join(out, "compare")) if f.endswith("_loglog.png"))
    return R


# ---------------------------------------------------------------------------------------------
# SSTTM18: the Gaussian model's robust sample threshold.


def ssttm18(quick: bool, out: str) -> Criteria:

    from .claim_experiments import measure_ssttm18
    from .fit import fit_exponents

    R = Criteria("ssttm18", "SSTTM18: robust generalization needs more data (Gaussian model, l_inf)")
    ds_ = [10**4, 10**5, 10**6] if quick else [10**4, 10**5, 10**6, 10**7]
    epss = [0.25, 0.35, 0.5]
    rows = []
    for d in ds_:
        for eps in epss:
            for s in range(2):
                rows.append({"d": d, "eps": eps, "seed": s, "value": measure_ssttm18({"d": d, "eps": eps}, s)["robust_sample_threshold"]})
    fit = fit_exponents(rows, ["d", "eps"])
    fd, fe = fit.estimate["d"], fit.estimate["eps"]
    combo = [{"x": r["eps"] ** 2 * math.sqrt(r["d"]), "seed": r["seed"], "value": r["value"]} for r in rows]
    fx = fit_exponents(combo, ["x"], bootstrap=False)
    R.row("threshold n: exponent in eps^2 sqrt(d)", "1 (n ~ eps^2 sqrt(d), up to log d)", fx.estimate["x"], "inconclusive",
          f"95% CI [{fx.ci['x'][0]:.3f}, {fx.ci['x'][1]:.3f}]; finite-d corrections (d^(-1/4) terms) bend it below 1 at these sizes")
    _plot_ssttm18(rows, measure_ssttm18, os.path.join(out, "threshold.png"))
    R.figures.append("threshold.png")
    R.row("threshold n: exponent in d", "1/2 (n ~ eps^2 sqrt(d))", fd, _qual(fit.ci["d"][1] <= 0.6) if fit.ci["d"][1] > 0 else "inconclusive",
          f"95% CI [{fit.ci['d'][0]:.3f}, {fit.ci['d'][1]:.3f}]; O-bound: not above 1/2 (+0.1)")
    R.row("threshold n: exponent in eps", "2", fe, "inconclusive", f"95% CI [{fit.ci['eps'][0]:.3f}, {fit.ci['eps'][1]:.3f}]; "
          "eps also enters through 1 - c eps, so a pure power is not expected at these eps")
    # Bernoulli model: linear learner vs thresholding, one sample (SSTTM18.bernoulli).
    rng = np.random.default_rng(0)
    d, tau, eps = 2000, 0.1, 0.3
    theta = rng.choice([-1.0, 1.0], d)
    yt = rng.choice([-1.0, 1.0], 2000)
    Xt = np.where(rng.random((2000, d)) < 0.5 + tau, 1.0, -1.0) * yt[:, None] * theta
    y1 = 1.0
    x1 = np.where(rng.random(d) < 0.5 + tau, 1.0, -1.0) * y1 * theta
    w = y1 * x1
    lin = float(np.mean(yt * (Xt @ w) <= eps * np.abs(w).sum()))
    # Thresholding: an l_inf perturbation of eps < 1 cannot flip the sign of a +-1 coordinate.
    thr = float(np.mean(yt * (np.sign(Xt) @ w) <= 0))
    R.row("Bernoulli, one sample: l_inf-robust error of the linear learner", "about 1/2 or more (needs many samples)", lin, _qual(lin > 0.4))
    R.row("Bernoulli, one sample: robust error after thresholding (sign)", "small (one sample suffices)", thr, _qual(thr < 0.1))
    return R


# ---------------------------------------------------------------------------------------------
# BCGT21, VYS22, FVBS23, MV24.


def _flip_along_gradient(net, X, smooth: bool):
    """Per point: (|eta|, ||delta||) of the smallest step eta grad f(x), sign(eta) = -sign f(x), that flips f."""
    from ibcheck.solvers.networks import TwoLayerReLU
    from ibcheck.solvers.radius.ray import ray_flip_radius

    from .training import random_net_input_gradients

    f = net.forward(X)
    y = np.where(f > 0, 1.0, -1.0)
    g = random_net_input_gradients(net, X)
    gn = np.linalg.norm(g, axis=1)
    U = -y[:, None] * g / gn[:, None]
    if not smooth:
        relu = TwoLayerReLU(W=net.W, a=net.a / math.sqrt(net.W.shape[0]), b=None, trained=("W",), kind="random-net")
        t = ray_flip_radius(relu, X, y, U)
    else:  # a smooth activation: a grid along the ray, then bisection on the first sign change
        ts = np.concatenate([[0.0], np.geomspace(1e-3, 100.0, 400)])
        t = np.full(len(X), np.inf)
        for i in range(len(X)):
            vals = y[i] * net.forward(X[i] + ts[:, None] * U[i])
            j = np.argmax(vals <= 0)
            if vals[j] > 0:
                continue
            lo, hi = ts[j - 1], ts[j]
            for _ in range(50):
                mid = (lo + hi) / 2
                lo, hi = (lo, mid) if y[i] * net.forward((X[i] + mid * U[i])[None])[0] <= 0 else (mid, hi)
            t[i] = hi
    return t / gn, t


def bcgt21(quick: bool, out: str) -> Criteria:
    from .data import sphere_points
    from .fit import fit_exponents
    from .models import ModelConfig, random_networks
    from .verdict import exponent_verdict

    grid_d, grid_k, pts = ([64, 128, 256], [50, 100, 200], 100) if quick else ([64, 256, 1024], [100, 400, 1600], 300)
    R = Criteria("bcgt21", "BCGT21: one gradient step flips a random two-layer network", params={"d": grid_d, "k": grid_k, "points": pts})
    curves = {}
    for act in ("relu", "gelu"):
        rows_eta, rows_norm, within = [], [], []
        for d in grid_d:
            for k in grid_k:
                for s in range(2):
                    net = random_networks(ModelConfig("random-net", m=k, activation=act), d, [s])[0]
                    X = sphere_points(pts, d, np.random.default_rng(70_000 + s))
                    eta, norm = _flip_along_gradient(net, X, smooth=act != "relu")
                    fin = np.isfinite(eta)
                    within.append(float(np.mean(eta <= 20)))
                    rows_eta.append({"d": d, "k": k, "seed": s, "value": float(np.median(eta[fin])) if fin.any() else float("inf")})
                    rows_norm.append({"d": d, "k": k, "seed": s, "value": float(np.median(norm[fin])) if fin.any() else float("inf")})
        for label, rows in (("|eta|", rows_eta), ("||delta||", rows_norm)):
            fit = fit_exponents(rows, ["d", "k"], bootstrap=False)
            for v in ("d", "k"):
                vd = exponent_verdict("Theta", fit.estimate[v], fit.se[v], fit.df, 0.0, margin=0.15)
                R.row(f"{act}: median flipping {label}, exponent in {v}", "0 (does not grow with d or k)", fit.estimate[v],
                      vd.verdict, f"95% CI [{fit.ci[v][0]:.3f}, {fit.ci[v][1]:.3f}]; {vd.reason}")
        curves[act] = rows_eta
        R.row(f"{act}: fraction of flips within |eta| <= 20", "searched within |eta| <= 20; about 1 found", float(np.mean(within)),
              _qual(np.mean(within) > 0.9))
        R.row(f"{act}: median flipping |eta| (all cells)", "about 1", float(np.median([r["value"] for r in rows_eta])), "inconclusive",
              "the scale depends on the normalization of eta")
    _plot_series({f"{act}, k={k}": [(r["d"], r["value"]) for r in rows if r["k"] == k] for act, rows in curves.items() for k in grid_k},
                 os.path.join(out, "flip_eta.png"), "d", "median flipping |eta|", "BCGT21: the flipping step does not grow with d or k", logy=True)
    R.figures.append("flip_eta.png")
    return R


def _plot_series(series: dict, path: str, xlabel: str, ylabel: str, title: str, logy: bool = False) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for label, pts in series.items():
        pts = sorted(pts)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", ms=3, label=label)
    ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    save_figure(fig, ax, path, title, legend_fontsize=7, ncol=2)


def vys22(quick: bool, out: str) -> Criteria:
    from ibcheck.solvers.kkt.search import kkt_search, random_start
    from ibcheck.solvers.radius.universal import universal_directions, universal_radius

    from .compare import compare_and_save
    from .data import sphere

    R = Criteria("vys22", "VYS22: universal flipping perturbation of nets trained on random sphere data; which reading holds?")
    s = compare_and_save("VYS22.thm.main", os.path.join(out, "compare"), quick=quick, progress=False)
    for r in s["results"]:
        fits = _fits_text(r)
        R.row(f"{r['quantity']} [{r['reading']}]", f"O({r['expr']})", [f["estimate"] for f in r["fits"]], r["verdict"],
              fits + f"; negative control {r['negative_control']['verdict']}")
    norm_rows = {r["reading"]: r for r in s["results"] if r["quantity"] == "universal_flip_norm"}
    ok = [rd for rd, r in norm_rows.items() if r["verdict"] == "consistent" and r["negative_control"]["has_power"]]
    R.row("reading supported by the data (flip norm, with a powered negative control)", "ambiguous in the sources",
          ok[0] if len(ok) == 1 else "undecided", "consistent" if len(ok) == 1 else "inconclusive",
          "decided only when exactly one reading is consistent and its negative control is rejected")
    # Cross-check at small n: KKT points of (P) found by the search.
    ds = sphere(20, 6, seed=3)
    rng = np.random.default_rng(3)
    res = kkt_search(ds.X, ds.y, [(f"r{i}", random_start(20, 6, rng)) for i in range(4)])
    v = universal_directions("vys22", X_train=ds.X, y_train=ds.y)
    norms = [float(universal_radius(r.net, ds.X, ds.y, v).max()) for r in res if r.certificate.is_kkt(1e-5)]
    R.row("KKT points at d=20, n=6: universal norm flipping every training point (median)", "o(sqrt(d)) = o(4.47)",
          float(np.median(norms)) if norms else None, _qual(np.median(norms) < math.sqrt(20)) if norms else "inconclusive",
          f"{len(norms)} certified KKT points of {len(res)} starts")
    R.figures += sorted(os.path.join("compare", f) for f in os.listdir(os.path.join(out, "compare")) if f.endswith("_loglog.png"))
    return R


def fvbs23(quick: bool, out: str) -> Criteria:
    from ibcheck.solvers.kkt.search import kkt_search, random_start
    from ibcheck.solvers.radius.universal import flip_rate, universal_directions, universal_radius
    from ibcheck.theory import get_claim
    from ibcheck.theory.window import applicability_window

    from .compare import compare_and_save
    from .data import clusters
    from .measure import test_accuracy

    R = Criteria("fvbs23", "FVBS23: KKT points and GD limits generalize but flip at sqrt(d/k); a sqrt(d)-robust network exists")
    for cid in ("FVBS23.thm.4_2", "FVBS23.thm.4_1"):
        s = compare_and_save(cid, os.path.join(out, cid.replace(".", "_")), quick=quick, progress=False)
        r = s["results"][0]
        fits = _fits_text(r)
        R.row(f"{cid}: {r['quantity']} exponents (GD limits / construction)", f"{r['kind']}({r['expr']})", [f["estimate"] for f in r["fits"]],
              r["verdict"], fits)
    d, k, n = 10, 4, 24
    ds = clusters(d, k, n, 0.3, seed=5)
    rng = np.random.default_rng(5)
    res = [r for r in kkt_search(ds.X, ds.y, [(f"r{i}", random_start(d, 8, rng)) for i in range(5)]) if r.certificate.is_kkt(1e-5)]
    Xt, yt = ds.sample(500, 9)
    if res:
        errs = [1 - test_accuracy(r.net, Xt, yt) for r in res]
        v = universal_directions("fvbs23", means=ds.means, J_plus=ds.J_plus)
        rates = [flip_rate(universal_radius(r.net, Xt, yt, v), math.sqrt(d / k)) for r in res]
        R.row(f"KKT points (d={d}, k={k}, n={n}): test error (max)", "<= eps (FVBS23.thm.3_1)", float(max(errs)), _qual(max(errs) < 0.05),
              f"{len(res)} certified KKT points")
        R.row(f"KKT points: universal flip rate at ||z|| = sqrt(d/k) = {math.sqrt(d / k):.2f} (min)", ">= 1 - eps, for C of order 1",
              float(min(rates)), "inconclusive", "the theorem's constant C is unknown")
    claim = get_claim("FVBS23.thm.4_2")
    w = applicability_window(claim, "d", {"k": str(k), "n": str(n), "eps": "0.1", "delta": "0.1"})
    inside = any(lo <= d and (hi is None or isinstance(hi, str) or d <= hi) for lo, hi in w.intervals)
    R.row(f"Theorem 4.2 applies at the simulated point d={d}, k={k}, n={n}?", "needs d in its window", "yes" if inside else "no",
          "inconclusive", f"window of d: {w.intervals or 'empty'} ({w.empty_because or 'binding ' + str(w.binding)}); "
          "the simulation is outside it, so it tests the scaling, not the theorem's guarantee")
    for cid in ("FVBS23.thm.4_2", "FVBS23.thm.4_1"):
        sub = cid.replace(".", "_")
        R.figures += sorted(os.path.join(sub, f) for f in os.listdir(os.path.join(out, sub)) if f.endswith(("_loglog.png", "_collapse.png")))
    return R


def mv24(quick: bool, out: str) -> Criteria:
    from .models import ModelConfig
    from .trainer import TrainConfig
    from .training import DataConfig, RunConfig, run

    d, k, n, m = (64, 4, 120, 10) if quick else (256, 8, 400, 20)
    R = Criteria("mv24", "MV24.conj (p = 1): GD from small initialization converges to the two-neuron average-feature network",
                     params={"d": d, "k": k, "n": n, "m": m})
    res = run(RunConfig(setting="two-layer", data=DataConfig(d=d, k=k, n=n, sigma=0.3, n_test=10),
                        model=ModelConfig("two-layer", m=m, bias=False, init_scale=1e-3),
                        train=TrainConfig(steps=3000, lr=0.2, loss="logistic", reduction="mean", progress=False)))
    net, ds = res.networks[0], res.datasets[0]
    plus = np.isin(np.arange(k), ds.J_plus)
    mu_p = ds.means[plus].mean(0)
    mu_m = ds.means[~plus].mean(0)
    def F(X):
        return (math.sqrt(plus.sum()) * np.maximum(X @ mu_p / np.linalg.norm(mu_p), 0)
                - math.sqrt((~plus).sum()) * np.maximum(X @ mu_m / np.linalg.norm(mu_m), 0))
    X, _ = ds.sample(1000, 11)
    f, g = net.forward(X), F(X)
    dist = float(np.linalg.norm(f / np.linalg.norm(f) - g / np.linalg.norm(g)))
    R.row("distance of f/||f|| to F/||F|| on test inputs", "-> 0 (two-neuron average-feature network)", dist, _qual(dist < 0.2))
    Wn = net.W / np.maximum(np.linalg.norm(net.W, axis=1, keepdims=True), 1e-300)
    big = np.abs(net.a) * np.linalg.norm(net.W, axis=1) > 0.05 * (np.abs(net.a) * np.linalg.norm(net.W, axis=1)).max()
    cos = np.maximum(Wn @ (mu_p / np.linalg.norm(mu_p)), Wn @ (mu_m / np.linalg.norm(mu_m)))
    R.row("fraction of active neurons aligned with an average feature (cos > 0.9)", "all of them", float(np.mean(cos[big] > 0.9)),
          _qual(np.mean(cos[big] > 0.9) > 0.8), f"{int(big.sum())} neurons carry the output")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    order = np.argsort(-np.abs(net.a) * np.linalg.norm(net.W, axis=1))
    ax.bar(np.arange(len(order)), cos[order], color=["C0" if b else "lightgray" for b in big[order]])
    ax.axhline(0.9, color="gray", ls="--", lw=1)
    ax.set_xlabel("neuron (by output weight x norm; gray: carries < 5% of the largest)")
    ax.set_ylabel("max cos with the average features")
    ax.set_title("MV24.conj (p = 1): neurons collapse onto the two average features", fontsize=9)
    fig.tight_layout()
    save_figure_file(fig, os.path.join(out, "neurons.png"))
    plt.close(fig)
    R.figures.append("neurons.png")
    return R


def _plot_ssttm18(rows, measure, path):
    """The robust sample threshold against d, one line per eps (each point a seed)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for eps in sorted({r["eps"] for r in rows}):
        pts = sorted((r["d"], r["value"]) for r in rows if r["eps"] == eps)
        ax.loglog([p[0] for p in pts], [p[1] for p in pts], "o-", label=f"eps = {eps}")
    ds = sorted({r["d"] for r in rows})
    ax.loglog(ds, [20 * (d / ds[0]) ** 0.5 for d in ds], "k:", label="slope 1/2")
    ax.set_xlabel("d")
    ax.set_ylabel("smallest n with l_inf-robust error <= 1%")
    save_figure(fig, ax, path, "SSTTM18: robust sample threshold of the class-mean estimator (sigma = d^(1/4))")


REPRODUCTIONS = {"fa-synthetic": fa_synthetic, "fa-digits": fa_digits, "ll20-margin": ll20_margin, "shngs18": shngs18,
                 "vys22": vys22, "fvbs23": fvbs23, "bcgt21": bcgt21, "ssttm18": ssttm18, "mv24": mv24}


def reproduce(name: str, quick: bool, out: str, idx_dir: str | None = None) -> dict:
    """Run one reproduction and write its report section (Markdown, HTML, PNGs, JSON)."""
    from .reporting import write_html
    from .rundir import clean

    if name not in REPRODUCTIONS:
        raise InputError(f"unknown reproduction {name!r}: available are {', '.join(REPRODUCTIONS)}")
    if idx_dir is not None and name != "fa-digits":
        raise InputError("--idx-dir applies to fa-digits only")
    os.makedirs(out, exist_ok=True)
    t0 = time.perf_counter()
    fn = REPRODUCTIONS[name]
    rep = fn(quick, out, idx_dir) if name == "fa-digits" else fn(quick, out)
    secs = time.perf_counter() - t0
    md = [f"# reproduce {name}: {rep.title}", "", f"{'Quick' if quick else 'Full'} size, parameters {rep.params}; {secs:.0f} s.", "",
          "| quantity | source | ibcheck | verdict | note |", "|---|---|---|---|---|"]
    for r in rep.rows:
        mv = r["measured"]
        ms = f"{mv:.4g}" if isinstance(mv, float) else (", ".join(f"{x:.3g}" for x in mv) if isinstance(mv, list) else str(mv))
        md.append(f"| {r['quantity']} | {r['source_value'] if r['source_value'] is not None else '-'} | {ms} | **{r['verdict']}** | {r['note']} |")
    md.append("")
    for note in rep.notes:
        md += [note, ""]
    for f in rep.figures:
        md += [f"![{f}]({f})", ""]
    text = "\n".join(md) + "\n"
    with atomic_file(os.path.join(out, "reproduce.md"), "w") as f:
        f.write(text)
    html = write_html(text, out, "reproduce.html", f"reproduce {name}")
    summary = clean({"name": name, "title": rep.title, "quick": quick, "params": rep.params, "seconds": secs, "rows": rep.rows,
                     "files": {"markdown": os.path.join(out, "reproduce.md"), "html": html, "figures": [os.path.join(out, f) for f in rep.figures]}})
    with atomic_file(os.path.join(out, "reproduce.json"), "w") as f:
        json.dump(summary, f, indent=2)
    return summary
