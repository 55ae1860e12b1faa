"""``ibcheck kkt`` (KKT point search on a dataset) and ``ibcheck kkt-check`` (GD checkpoints as
(eps, delta)-KKT points). The mathematics lives in :mod:`solvers.kkt`."""
from __future__ import annotations

import json
import os

from ibcheck.theory.argtypes import nonneg_float, nonneg_int, pos_int
from ibcheck.theory.atomic import atomic_file


def register(sub) -> None:
    p = sub.add_parser("kkt", help="KKT points of the max-margin problem (P) on a dataset: search, certify, compare with the global optimum")
    p.add_argument("--data", "--setting", dest="data", default="clusters", choices=("clusters", "sphere"),
                   help="the dataset: k clusters or the sphere (--setting is the older name)")
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


def cmd_kkt(args) -> int:
    from ibcheck import api
    from ibcheck.simulate.rundir import check_out_dir

    cfg = dict(data=args.data, d=args.d, k=args.k, n=args.n, sigma=args.sigma, width=args.width, starts=args.starts,
               include_global=args.global_, bias=not args.no_bias, seed=args.seed, max_patterns=args.max_patterns)
    check_out_dir(args.out, args.overwrite)
    res = api.kkt_points(**cfg)
    res.save(args.out)
    report = res.as_json()
    points, glob, norm = report["points"], report["global"], res.flip_norm
    distinct = range(res.distinct)
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
        print(f"{len(points)} starts on {args.data} d={args.d} n={args.n}, width {args.width}; {g}; "
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
    from ibcheck.simulate.kkt_points import NEAR_TIE, kkt_trajectory
    from ibcheck.simulate.rundir import load_run

    run = load_run(args.run_dir)
    res = kkt_trajectory(run, args.seed, args.polish)
    png = os.path.join(args.run_dir, "kkt_check.png")
    from ibcheck.theory.atomic import save_figure_file

    save_figure_file(res.figure(), png)
    out = {**res.as_json(), "files": {"png": png}}
    rows = out["checkpoints"]
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
