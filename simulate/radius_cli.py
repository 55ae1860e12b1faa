"""``ibcheck radius`` and ``ibcheck construct``: radii of the networks of a run directory.

The computations live in :mod:`solvers.radius`; this module reads run directories, draws
fresh test points, and writes the per-point CSV, the robust-accuracy PNG and the JSON.
"""
from __future__ import annotations

import json
import math
import os
import sys
from dataclasses import replace

import numpy as np

from ibcheck.theory.argtypes import nonneg_int, pos_float, pos_int
from ibcheck.theory.atomic import atomic_file
from ibcheck.theory.errors import InputError

METHODS = ("universal", "attack", "certified", "exact")


def register(sub) -> None:
    p = sub.add_parser("radius", help="l2 flip radii of a run's networks: universal, attack, certified, exact")
    p.add_argument("run_dir")
    p.add_argument("--method", default="all", choices=METHODS + ("all",))
    p.add_argument("--points", type=pos_int, default=200, help="fresh test points per network")
    p.add_argument("--seed", type=nonneg_int, default=0, help="seed of the test points")
    p.add_argument("--direction", default="auto", choices=("auto", "fvbs23", "lpll25", "vys22"),
                   help="universal direction (auto: fvbs23 for cluster data, vys22 otherwise)")
    p.add_argument("--time-limit", type=pos_float, default=5.0, help="seconds per point for the exact MIQP")
    p.add_argument("--flip-norm", type=pos_float, action="append", default=None,
                   help="report the universal flip rate P[r <= norm] at this norm (repeatable; default sqrt(d/k) and sqrt(d))")
    p.add_argument("--overlay", nargs="*", default=[], help="more run directories drawn in the same robust-accuracy PNG")
    p.add_argument("--out", default=None, help="output directory (default RUN_DIR/radius)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_radius)

    p = sub.add_parser("construct", help="write a run directory holding a robust construction built from a run's data")
    p.add_argument("which", choices=("fvbs23", "lpll25-robust"))
    p.add_argument("--from", dest="source", required=True, help="run directory whose data (cluster means) to use")
    p.add_argument("--out", required=True)
    p.add_argument("--overwrite", action="store_true")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_construct)


def _load(path: str):
    from .rundir import load_run

    return load_run(path)  # a missing path, a file or a damaged run: one line naming it


def binary_networks(run):
    """The run's networks as binary ReLU classifiers (k-class networks through their read-out)."""
    from ibcheck.solvers.networks import LinearClassifier, MulticlassReLU, RandomNet, TwoLayerReLU

    ds = run.dataset()
    out = []
    for net in run.networks:
        if isinstance(net, MulticlassReLU):
            out.append(net.readout(ds.J_plus))
        elif isinstance(net, RandomNet):
            if net.activation != "relu":
                raise InputError(f"radius needs a ReLU network; this random network uses {net.activation}")
            out.append(TwoLayerReLU(W=net.W, a=net.a / math.sqrt(net.W.shape[0]), b=None, trained=("W",), kind="random-net"))
        elif isinstance(net, (TwoLayerReLU, LinearClassifier)):
            out.append(net)
        else:
            raise InputError(f"no radius for a {net.kind} network")
    return out


def test_points(run, points: int, seed: int):
    """Fresh test points, with binary labels (k-class labels mapped through J+)."""
    ds = run.dataset()
    X, y = ds.sample(points, 20_000 + seed)
    if ds.multiclass:
        if not ds.J_plus:
            raise InputError("a k-class run without a J+ split has no binary read-out to measure")
        y = np.where(np.isin(y, ds.J_plus), 1.0, -1.0)
    if run.config.setting == "random-net":
        y = np.sign(run.networks[0].forward(X))
    return ds, X, y


def universal_vector(run, ds, direction: str) -> np.ndarray:
    from ibcheck.solvers.radius.universal import universal_directions

    if direction == "auto":
        direction = "fvbs23" if ds.means is not None else "vys22"
    if direction in ("fvbs23", "lpll25"):
        if ds.means is None:
            raise InputError(f"--direction {direction} needs cluster data; this run uses {ds.kind} (try vys22)")
        return universal_directions(direction, means=ds.means, J_plus=ds.J_plus)
    y = ds.y if not ds.multiclass else np.where(np.isin(ds.y, ds.J_plus), 1.0, -1.0)
    return universal_directions("vys22", X_train=ds.X, y_train=y)


def compute_radii(net, X, y, v, methods: tuple[str, ...], time_limit: float) -> dict[str, np.ndarray]:
    """All requested radii of one network at the points; upper bounds feed the lower ones."""
    from ibcheck.solvers.radius.attack import attack_radius
    from ibcheck.solvers.radius.certified import certified_radius
    from ibcheck.solvers.radius.exact import exact_radius
    from ibcheck.solvers.radius.universal import universal_radius

    out: dict[str, np.ndarray] = {"universal": universal_radius(net, X, y, v)}
    upper = out["universal"]
    if "attack" in methods or "exact" in methods:
        att = attack_radius(net, X, y)
        out.update({k: att[k] for k in att if k != "attack"})
        # The reported attack bound is the best verified flip found, the universal direction included.
        out["attack"] = np.minimum(att["attack"], out["universal"])
        upper = out["attack"]
    out["upper"] = upper
    if "certified" in methods or "exact" in methods:
        out["certified"] = certified_radius(net, X, y, upper)
    if "exact" in methods:
        res = exact_radius(net, X, y, upper, out["certified"], time_limit)
        out["exact_lower"] = np.array([r.lower for r in res])
        out["exact_upper"] = np.array([r.upper for r in res])
        out["exact_proven"] = np.array([r.exact for r in res])
        out["exact_status"] = np.array([r.status for r in res])
    return out


def _stats(r: np.ndarray, closed: np.ndarray) -> dict:
    fin = r[np.isfinite(r)]
    f = lambda x: None if x is None or not math.isfinite(x) else float(x)  # noqa: E731
    return {
        "median": f(float(np.median(r))) if len(r) else None, "mean": f(float(fin.mean())) if len(fin) else None,
        "min": f(float(r.min())) if len(r) else None, "max": f(float(r.max())) if len(r) else None,
        "fraction_infinite": float(np.mean(~np.isfinite(r))), "fraction_certified_exact": float(np.mean(closed)),
    }


def universal_flip_rates(run, ds, nets, X, y, norms: list[float]) -> dict:
    """Every applicable universal direction: per-point radii summary and flip rates at the norms."""
    from ibcheck.solvers.radius.universal import flip_rate, universal_radius

    names = (["fvbs23", "lpll25"] if ds.means is not None else []) + ["vys22"]
    out = {}
    for name in names:
        v = universal_vector(run, ds, name)
        r = np.concatenate([universal_radius(net, X, y, v) for net in nets])
        out[name] = {"median": None if not np.isfinite(np.median(r)) else float(np.median(r)),
                     "flip_rate": [{"norm": float(nm), "rate": flip_rate(r, nm)} for nm in norms]}
    return out


def radius_report(run, methods: tuple[str, ...], points: int, seed: int, direction: str, time_limit: float,
                  out_dir: str, overlay: list | None = None, flip_norms: list[float] | None = None) -> dict:
    from ibcheck.solvers.radius.curves import plot_robust_accuracy, robust_accuracy

    from .rundir import write_csv

    ds, X, y = test_points(run, points, seed)
    v = universal_vector(run, ds, direction)
    nets = binary_networks(run)
    rows, pooled = [], {}
    for i, net in enumerate(nets):
        r = compute_radii(net, X, y, v, methods, time_limit)
        for key, val in r.items():
            pooled.setdefault(key, []).append(val)
        for p in range(len(X)):
            rows.append({"network": i, "seed": run.seeds[i]["seed"] if i < len(run.seeds) else i, "point": p, "y": y[p],
                         **{k: (val[p].item() if hasattr(val[p], "item") else val[p]) for k, val in r.items()}})
    R = {k: np.concatenate(v_) for k, v_ in pooled.items()}
    lower = np.maximum(R.get("certified", np.zeros_like(R["universal"])), R.get("exact_lower", 0.0))
    tol = lambda a: np.isclose(a, lower, rtol=1e-6, atol=1e-12) & np.isfinite(a)  # noqa: E731
    methods_json = {}
    for mth in methods:
        if mth == "exact":
            st = _stats(R["exact_upper"], R["exact_proven"])
            st["fraction_interval"] = float(np.mean(~R["exact_proven"]))
            st["median_gap"] = float(np.median(R["exact_upper"] - R["exact_lower"]))
            methods_json[mth] = st
        else:
            methods_json[mth] = _stats(R[mth], tol(R[mth]))
    d = ds.d
    grid_top = float(np.nanmax(np.where(np.isfinite(R["upper"]), R["upper"], np.nan))) if np.isfinite(R["upper"]).any() else math.sqrt(d)
    grid = np.linspace(0, max(grid_top, 1e-12) * 1.05, 60)
    best = R["exact_upper"] if "exact" in methods and R["exact_proven"].all() else R["upper"]
    acc_up = robust_accuracy(best, grid)
    acc_lo = robust_accuracy(lower, grid) if ("certified" in R or "exact_lower" in R) else None
    ra = [{"eps": float(e), "accuracy": float(a), "upper": float(u), "lower": None if acc_lo is None else float(acc_lo[j])}
          for j, (e, a, u) in enumerate(zip(grid, acc_up, robust_accuracy(R["upper"], grid)))]
    os.makedirs(out_dir, exist_ok=True)
    csv_path = os.path.join(out_dir, "radii.csv")
    write_csv(csv_path, rows)
    curves = {f"{_label(run)}: upper (attack/universal)": (grid, robust_accuracy(R["upper"], grid))}
    if acc_lo is not None:
        curves[f"{_label(run)}: certified lower"] = (grid, acc_lo)
    for other in overlay or []:
        ods, oX, oy = test_points(other, points, seed)
        ov = universal_vector(other, ods, direction)
        orad = [compute_radii(n, oX, oy, ov, ("universal", "attack"), time_limit)["upper"] for n in binary_networks(other)]
        curves[f"{_label(other)}: upper (attack/universal)"] = (grid, robust_accuracy(np.concatenate(orad), grid))
    k = ds.means.shape[0] if ds.means is not None else None
    norms = flip_norms or ([math.sqrt(d / k)] if k else []) + [math.sqrt(d)]
    flips = universal_flip_rates(run, ds, nets, X, y, norms)
    markers = {"sqrt(d)": math.sqrt(d)}
    if k:
        markers["sqrt(d/k)"] = math.sqrt(d / k)
    png = os.path.join(out_dir, "robust_accuracy.png")
    plot_robust_accuracy(curves, png, markers, title=f"robust accuracy from the radii ({len(X)} test points per network, d={d}" + (f", k={k})" if k else ")"))
    return {
        "run": run.path, "points": int(len(X)), "networks": len(nets), "seed": seed,
        "direction": direction if direction != "auto" else ("fvbs23" if ds.means is not None else "vys22"),
        "methods": methods_json, "robust_accuracy": ra, "universal": flips,
        "reference": {"sqrt_d": math.sqrt(d), "sqrt_d_over_k": math.sqrt(d / k) if k else None},
        "tie_rule": "f(x) = 0 counts as misclassified",
        "files": {"csv": csv_path, "png": png},
    }


def _label(run) -> str:
    c = run.config
    return f"{c.setting} ({os.path.basename(os.path.normpath(run.path))})"


def cmd_radius(args) -> int:
    if args.points <= 0:
        raise InputError(f"--points {args.points} is out of range: points must be an integer >= 1")
    if not args.time_limit > 0:
        raise InputError(f"--time-limit {args.time_limit} is out of range: must be a number > 0")
    run = _load(args.run_dir)
    overlay = [_load(p) for p in args.overlay]
    methods = METHODS if args.method == "all" else (args.method,)
    out_dir = args.out or os.path.join(args.run_dir, "radius")
    for nm in args.flip_norm or []:
        if not nm > 0:
            raise InputError(f"--flip-norm {nm} is out of range: must be a number > 0")
    report = radius_report(run, methods, args.points, args.seed, args.direction, args.time_limit, out_dir, overlay, args.flip_norm)
    with atomic_file(os.path.join(out_dir, "radius.json"), "w") as f:
        json.dump(report, f, indent=2)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"{report['networks']} network(s) x {report['points']} points; universal direction {report['direction']}; "
              f"sqrt(d) = {report['reference']['sqrt_d']:.3g}"
              + (f", sqrt(d/k) = {report['reference']['sqrt_d_over_k']:.3g}" if report['reference']['sqrt_d_over_k'] else ""))
        for m, st in report["methods"].items():
            med = "inf" if st["median"] is None else f"{st['median']:.4g}"
            print(f"  {m:>10}: median {med}, min {st['min']}, max {st['max']}, certified exact {st['fraction_certified_exact']:.0%}")
        for name, u in report["universal"].items():
            rates = ", ".join(f"{fr['rate']:.0%} at {fr['norm']:.3g}" for fr in u["flip_rate"])
            print(f"  universal {name}: flip rate {rates}")
        print(f"  files: {report['files']['csv']}, {report['files']['png']}")
    return 0


def cmd_construct(args) -> int:
    from ibcheck.solvers.radius.constructions import fvbs23_robust, lpll25_robust

    from .measure import test_accuracy
    from .rundir import check_out_dir, save_run, summary_json
    from .training import Run

    check_out_dir(args.out, args.overwrite)
    src = _load(args.source)
    ds = src.dataset()
    if ds.means is None:
        raise InputError(f"construct needs cluster data with means; {args.source} uses {ds.kind}")
    labels = np.where(np.isin(np.arange(len(ds.means)), ds.J_plus), 1.0, -1.0)
    net = fvbs23_robust(ds.means, labels) if args.which == "fvbs23" else lpll25_robust(ds.means, ds.J_plus)
    cfg = replace(src.config, seeds=1)
    Xte, yte = ds.sample(2000, 12345)
    if ds.multiclass:
        yte = np.where(np.isin(yte, ds.J_plus), 1.0, -1.0)
    row = {"seed": cfg.seed0, "status": "constructed", "construction": args.which,
           "claim": "FVBS23.thm.4_1" if args.which == "fvbs23" else "LPLL25.prop.robust_exists",
           "test_accuracy": test_accuracy(net, Xte, yte), "train_log10_loss": None, "normalized_margin": None,
           "smoothed_margin": None, "cosine_same_class_mean": None, "cosine_other_class_mean": None,
           "lambda_within_class_ratio": None}
    result = Run(cfg, [ds], [net], [None], [row], [])
    save_run(result, args.out, args.overwrite)
    if args.json:
        print(json.dumps(summary_json(result), indent=2))
    else:
        print(f"{row['claim']} construction from {args.source}: test accuracy {row['test_accuracy']:.4f} -> {args.out}", file=sys.stdout)
    return 0
