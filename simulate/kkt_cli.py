"""``ibcheck kkt`` (KKT point search on a dataset) and ``ibcheck kkt-check`` (GD checkpoints as
(eps, delta)-KKT points). The mathematics lives in :mod:`solvers.kkt`."""
from __future__ import annotations

import json
import math
import os

import numpy as np

from ibcheck.theory.argtypes import nonneg_float, nonneg_int, pos_int
from ibcheck.theory.atomic import atomic_file, save_npz
from ibcheck.theory.errors import InputError

NEAR_TIE = 1e-4  # relative |z_ij| below which a pre-activation may count as a tie (relaxation, flagged)


def register(sub) -> None:
    p = sub.add_parser("kkt", help="KKT points of the max-margin problem (P) on a dataset: search, certify, compare with the global optimum")
    p.add_argument("--setting", default="clusters", choices=("clusters", "sphere"))
    p.add_argument("--d", type=pos_int, default=5)
    p.add_argument("--k", type=pos_int, default=4)
    p.add_argument("--n", type=pos_int, default=20)
    p.add_argument("--sigma", type=nonneg_float, default=0.3)
    p.add_argument("--width", type=pos_int, default=6)
    p.add_argument("--starts", type=pos_int, default=8, help="random starts (plus a GD start and, for clusters, the robust construction)")
    p.add_argument("--global", dest="global_", action="store_true", help="also solve the convex reformulation (small instances) and run the dual check")
    p.add_argument("--no-bias", action="store_true")
    p.add_argument("--seed", type=nonneg_int, default=0)
    p.add_argument("--max-patterns", type=pos_int, default=5000)
    p.add_argument("--out", required=True)
    p.add_argument("--overwrite", action="store_true")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_kkt)

    p = sub.add_parser("kkt-check", help="certify a training run's checkpoints as (eps, delta)-KKT points")
    p.add_argument("run_dir")
    p.add_argument("--seed", type=nonneg_int, default=None, help="which seed (default: the first)")
    p.add_argument("--polish", action="store_true", help="polish the last checkpoint with SLSQP and report the cosine to the GD direction")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_kkt_check)


def _dataset(args):
    from .data import clusters, sphere

    if args.setting == "clusters":
        return clusters(args.d, args.k, args.n, args.sigma, seed=args.seed)
    return sphere(args.d, args.n, seed=args.seed)


def _check_separable(X, y) -> dict:
    """Refuse data no network can fit (a point with both labels); report linear separability."""
    from ibcheck.solvers.svm import hard_margin_svm

    _, inv = np.unique(X, axis=0, return_inverse=True)
    for g in np.unique(inv):
        if len(set(y[inv == g])) > 1:
            raise InputError("the data are not separable: the same input appears with both labels, so (P) is infeasible")
    svm = hard_margin_svm(X, y, bias=True)
    return {"linearly_separable": svm.separable, "svm_status": svm.status, "svm_margin": svm.margin}


def _starts(args, ds, rng):
    from ibcheck.solvers.kkt.search import random_start
    from ibcheck.solvers.networks import TwoLayerReLU
    from ibcheck.solvers.radius.constructions import fvbs23_robust

    bias = not args.no_bias
    starts = [(f"random-{i}", random_start(args.d, args.width, rng, bias)) for i in range(args.starts)]
    starts.append(("gd", _gd_start(args, bias)))
    if ds.means is not None and args.width >= len(ds.means):
        labels = np.where(np.isin(np.arange(len(ds.means)), ds.J_plus), 1.0, -1.0)
        c = fvbs23_robust(ds.means, labels)
        extra = args.width - c.width
        W = np.vstack([c.W, 1e-3 * rng.standard_normal((extra, args.d))])
        b = np.concatenate([c.b, np.zeros(extra)]) if bias else None
        starts.append(("construction-fvbs23", TwoLayerReLU(W=W, a=np.concatenate([c.a, 1e-3 * rng.standard_normal(extra)]), b=b)))
    return starts


def _gd_start(args, bias):
    """A GD-trained direction: the two-layer network trained by the loss-based schedule on the same data."""
    from .models import ModelConfig
    from .trainer import TrainConfig
    from .training import DataConfig, RunConfig, run

    cfg = RunConfig(setting="two-layer", data=DataConfig(kind=args.setting, d=args.d, k=args.k, n=args.n, sigma=args.sigma, seed=args.seed, n_test=10),
                    model=ModelConfig("two-layer", m=args.width, bias=bias, init_scale=1.0),
                    train=TrainConfig(steps=2000, lr=0.1, loss="exp", reduction="sum", schedule="loss-based", progress=False))
    return run(cfg).networks[0]


def cmd_kkt(args) -> int:
    from ibcheck.solvers.kkt.global_opt import TooLarge, dual_check, global_max_margin
    from ibcheck.solvers.kkt.search import kkt_search
    from ibcheck.solvers.radius.attack import attack_radius
    from ibcheck.solvers.radius.universal import flip_rate, universal_directions, universal_radius

    from .rundir import check_out_dir, clean, write_csv

    for name in ("d", "n", "width", "starts", "k", "max_patterns"):
        if getattr(args, name) < 1:
            flag = name.replace("_", "-")
            raise InputError(f"--{flag} {getattr(args, name)} is out of range: {flag} must be an integer >= 1")
    check_out_dir(args.out, args.overwrite)
    ds = _dataset(args)
    X, y = ds.X, ds.y
    sep = _check_separable(X, y)
    bias = not args.no_bias
    glob = None
    rng = np.random.default_rng(args.seed)
    results = kkt_search(X, y, _starts(args, ds, rng))
    if args.global_:
        # the search's feasible end points are candidates: they seed column generation beyond the pattern
        # limit, and a candidate that beats the program's value would expose missing patterns
        cands = [r.net for r in results if np.isfinite(r.value)]
        try:
            g = global_max_margin(X, y, bias=bias, max_patterns=args.max_patterns, candidates=cands, seed=args.seed)
        except TooLarge as err:
            raise InputError(str(err)) from None
        glob = {"value": g.value, "status": g.status, "certified": g.certified, "method": g.method, "n_patterns": g.n_patterns,
                "n_blocks": g.n_blocks, "dual_check_max": g.dual_max, "note": g.note}
    Xte, yte = ds.sample(200, 99)
    if ds.means is not None:
        v = universal_directions("fvbs23", means=ds.means, J_plus=ds.J_plus)
        norm = math.sqrt(args.d / len(ds.means))
    else:
        v = universal_directions("vys22", X_train=X, y_train=y)
        norm = math.sqrt(args.d / args.n)
    points = []
    for r in results:
        c = r.certificate
        row = {"start": r.start, "solver_status": r.solver_status, **clean(c.as_json()), "value": r.value,
               "duplicate_of": r.duplicate_of, "same_function_as": r.same_function_as, "is_kkt": c.is_kkt(1e-5),
               "kkt_failures": c.failures(1e-5), "is_global": None, "dual_check_max": None, "gap": None,
               "universal_flip_rate": None, "flip_norm": norm, "radius_median": None}
        if c.solver_status == "optimal" and np.isfinite(r.value):
            uni = universal_radius(r.net, Xte, yte, v)
            row["universal_flip_rate"] = flip_rate(uni, norm)
            upper = np.minimum(attack_radius(r.net, Xte, yte)["attack"], uni)
            row["radius_median"] = float(np.median(upper))
            if glob is not None and glob["status"] == "optimal":
                row["gap"] = r.value / glob["value"] - 1
                if row["is_kkt"]:
                    try:
                        dc = dual_check(X, y, c.lam, bias=bias, max_patterns=max(args.max_patterns, 5000))
                        row["dual_check_max"] = dc
                        row["is_global"] = bool(dc <= 1 + 1e-4)
                    except TooLarge as err:  # recorded: the point's support is too large for an exact check
                        row["dual_check_note"] = f"not checked: {err}"
        points.append(clean(row))
    # distinct KKT points by function: classes of the same-function relation among the certified points
    distinct = sorted({p["same_function_as"] if p["same_function_as"] is not None else i for i, p in enumerate(points) if p["is_kkt"]})
    report = {"setting": args.setting, "d": args.d, "k": args.k, "n": args.n, "width": args.width, "seed": args.seed,
              **clean(sep), "points": points, "distinct_kkt_points_by_function": len(distinct),
              "global": clean(glob) if glob else None}
    os.makedirs(args.out, exist_ok=True)
    with atomic_file(os.path.join(args.out, "kkt.json"), "w") as f:
        json.dump(report, f, indent=2)
    write_csv(os.path.join(args.out, "points.csv"), points)
    save_npz(os.path.join(args.out, "networks.npz"), **{f"p{i}_{k}": v_ for i, r in enumerate(results) for k, v_ in r.net.to_arrays().items()})
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        if glob and glob["certified"]:
            g = f"global optimum {glob['value']:.6g} ({glob['n_blocks']} neurons, {glob['n_patterns']} patterns, {glob['method']}, certified)"
        elif glob:
            g = (f"global optimum NOT certified: {glob['status']} {glob['value']:.6g} ({glob['n_patterns']} patterns, {glob['method']}"
                 + (f"; {glob['note']}" if glob["note"] else "") + ")")
        else:
            g = "no global optimum (use --global)"
        print(f"{len(points)} starts on {args.setting} d={args.d} n={args.n}, width {args.width}; {g}; "
              f"{len(distinct)} distinct KKT point(s) by function")
        for p in points:
            tag = "KKT" if p["is_kkt"] else "not KKT"
            extra = "" if p["is_global"] is None else (" global" if p["is_global"] else f" NOT global (dual {p['dual_check_max']:.3f})")
            dup = (f" (= #{p['duplicate_of']})" if p["duplicate_of"] is not None else
                   f" (same function as #{p['same_function_as']})" if p["same_function_as"] is not None else "")
            if not p["is_kkt"] and p["kkt_failures"]:
                tag += f" ({'; '.join(p['kkt_failures'])})"
            val = "-" if p["value"] is None else f"{p['value']:.6g}"
            res = "-" if p["stationarity_residual"] is None else f"{p['stationarity_residual']:.1e}"
            print(f"  {p['start']:>22}: {tag}{extra}{dup}, value {val}, residual {res}, flip rate at {norm:.3g}: {p['universal_flip_rate']}")
    return 0


def cmd_kkt_check(args) -> int:
    from ibcheck.solvers.kkt.certificate import eps_delta_kkt, require_homogeneous
    from ibcheck.solvers.kkt.search import slsqp

    from .radius_cli import _load
    from .rundir import clean, load_checkpoints

    run = _load(args.run_dir)
    cks = load_checkpoints(args.run_dir)
    seed = args.seed if args.seed is not None else cks[0]["seed"]
    cks = [c for c in cks if c["seed"] == seed]
    if not cks:
        raise InputError(f"no checkpoints for seed {seed} in {args.run_dir}")
    try:
        require_homogeneous(cks[0]["network"])
    except ValueError as err:
        raise InputError(str(err)) from None
    ds = run.dataset(seed)
    if ds.multiclass:
        raise InputError("kkt-check needs a binary model (fa, two-layer); this run is multiclass")
    X, y = ds.X, ds.y
    rows = []
    for c in cks:
        net = c["network"]
        if net.margins(X, y).min() <= 0:
            rows.append({"step": c["step"], "log10_loss": c["log10_loss_sum"], "epsilon": None, "delta": None,
                         "solver_status": "not feasible: a training point is misclassified"})
            continue
        eps, delta, cert = eps_delta_kkt(net, X, y)
        eps_t, delta_t, cert_t = eps_delta_kkt(net, X, y, tie_tol=NEAR_TIE)
        rows.append({"step": c["step"], "log10_loss": c["log10_loss_sum"], "epsilon": eps, "delta": delta,
                     "solver_status": cert.solver_status, "n_active": cert.n_active,
                     "epsilon_near_ties": eps_t, "delta_near_ties": delta_t, "near_tie_tol": NEAR_TIE, "n_near_ties": cert_t.n_ties})
    out = {"run": args.run_dir, "seed": seed, "checkpoints": clean(rows)}
    if args.polish:
        last = cks[-1]["network"]
        end, status = slsqp(last, X, y)
        a, b = last.params(), end.params()
        out["polish"] = {"solver_status": status, "cosine_to_gd": float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))}
    png = os.path.join(args.run_dir, "kkt_check.png")
    _plot(rows, png)
    out["files"] = {"png": png}
    with atomic_file(os.path.join(args.run_dir, "kkt_check.json"), "w") as f:
        json.dump(out, f, indent=2)
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for r in rows:
            e = "-" if r["epsilon"] is None else f"{r['epsilon']:.3e}"
            dl = "-" if r["delta"] is None else f"{r['delta']:.3e}"
            lg = "-" if r["log10_loss"] is None else f"{r['log10_loss']:.4g}"
            et = "" if r.get("epsilon_near_ties") is None else (
                f"; near ties (|z| <= {NEAR_TIE:g}): eps {r['epsilon_near_ties']:.3e}, delta {r['delta_near_ties']:.3e}")
            print(f"  step {r['step']:>8}: log10 loss {lg:>10}, eps {e}, delta {dl}{et}  [{r['solver_status']}]")
        if "polish" in out:
            print(f"  polished last checkpoint: {out['polish']['solver_status']}; cosine to GD {out['polish']['cosine_to_gd']:.6f}")
        print(f"  plot: {png}")
    return 0


def _plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .plots import save_figure

    pts = [r for r in rows if r["epsilon"] is not None and r["log10_loss"] is not None]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    if pts:
        x = [r["log10_loss"] for r in pts]
        ax.semilogy(x, [max(r["epsilon"], 1e-16) for r in pts], "o-", label="eps (relative stationarity residual)")
        ax.semilogy(x, [max(r["delta"], 1e-16) for r in pts], "s-", label="delta (complementary slackness)")
        ax.semilogy(x, [max(r["epsilon_near_ties"], 1e-16) for r in pts], "o--", alpha=0.6, label=f"eps with near-ties |z| <= {NEAR_TIE:g} (relaxation)")
        ax.invert_xaxis()
    ax.set_xlabel("log10 training loss (sum)")
    ax.set_ylabel("certified value")
    save_figure(fig, ax, path, "GD iterates as (eps, delta)-KKT points of (P) (LL20.def.eps_delta_kkt)")
