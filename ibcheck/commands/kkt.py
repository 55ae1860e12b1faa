"""``ibcheck kkt`` (KKT point search on a dataset) and ``ibcheck kkt-check`` (GD checkpoints as
(eps, delta)-KKT points). The mathematics lives in :mod:`solvers.kkt`."""
from __future__ import annotations

from ibcheck.theory.argtypes import float_list, nonneg_float, nonneg_int, pos_float, pos_int
from ibcheck.theory.outdir import check_out_dir
from ibcheck.theory.result import dumps

from .args import common


def register(sub) -> None:
    p = sub.add_parser("kkt", help="KKT points of the max-margin problem (P) on a dataset: search, certify, compare with the global optimum",
                       parents=[common()])
    p.add_argument("--data", "--setting", dest="data", default="clusters", metavar="clusters|sphere|FILE",
                   help="the dataset: k clusters, the sphere, or your own: an .npz with arrays X, y (labels -1/+1) and optionally "
                        "cluster, or a .csv with a header (a column y, optionally cluster, every other column a feature)")
    p.add_argument("--d", type=pos_int, default=5)
    p.add_argument("--k", type=pos_int, default=4)
    p.add_argument("--n", type=pos_int, default=20)
    p.add_argument("--sigma", type=nonneg_float, default=0.3)
    p.add_argument("--width", type=pos_int, default=6)
    p.add_argument("--starts", type=pos_int, default=8, help="the KKT engine's GD starts (per-cluster inits with biases; random "
                   "ones without clusters), beside a GD-trained network and the cluster-level cones")
    p.add_argument("--max-starts", type=pos_int, default=60, help="more GD starts, up to this many, while the unseen estimate is "
                   "above --saturation; with --objective, starts of every source, at most, while its running extremum rises")
    p.add_argument("--saturation", type=pos_float, default=0.02,
                   help="the Good-Turing estimate that one more GD start finds a new point at which the GD starts end without "
                        "--objective (0-1; it sees only basins reached more than once, so the points may still grow)")
    p.add_argument("--objective", choices=("margin", "flip"), default=None,
                   help="run by the record rule on this quantity: the largest normalized margin, or the largest flip norm "
                        "along --direction (default: the clusters' universal direction, or sum_i y_i x_i); the search stops "
                        "once no record beyond 0.5%% came in the last half of at least 20 starts")
    p.add_argument("--direction", default=None, metavar="FILE.npz",
                   help="with --objective flip: an .npz holding one array v of length d (the direction to flip along)")
    p.add_argument("--time", type=pos_float, default=120.0, metavar="SECONDS",
                   help="no pattern starts past this many seconds (default 120: the search then says how far it got)")
    p.add_argument("--cover-scales", dest="covers", type=float_list, default=(1.0, 2.0, 3.0), metavar="S1,S2,...",
                   help="the cover starts' scales (data with clusters: GD from every combination of each class's overlapping "
                        "leave-one-out covers of its clusters, at each scale); 'none' for no cover starts")
    p.add_argument("--programs", type=pos_int, default=8, help="cone programs per pattern (the tie-aware polish)")
    p.add_argument("--enumerate", type=nonneg_int, default=25,
                   help="polish every partition cone of the clusters where there are at most this many (225 at k = 8)")
    p.add_argument("--global", dest="global_", action="store_true", help="also solve the convex reformulation (small instances) and run the dual check")
    p.add_argument("--no-bias", action="store_true")
    p.add_argument("--seed", type=nonneg_int, default=0)
    p.add_argument("--max-patterns", type=pos_int, default=5000)
    p.add_argument("--overwrite", action="store_true")
    p.set_defaults(func=cmd_kkt)

    p = sub.add_parser("kkt-check", help="certify a training run's checkpoints as (eps, delta)-KKT points", parents=[common(out=None)])
    p.add_argument("run_dir")
    p.add_argument("--seed", type=nonneg_int, default=None, help="which seed (default: the first)")
    p.add_argument("--polish", action="store_true", help="polish the last checkpoint with SLSQP and report the cosine to the GD direction")
    p.set_defaults(func=cmd_kkt_check)


def cmd_kkt(args) -> int:
    from ibcheck import api  # heavy: torch (loaded on first use)

    cfg = dict(d=args.d, k=args.k, n=args.n, sigma=args.sigma, width=args.width, starts=args.starts, programs=args.programs,
               enumerate=args.enumerate, include_global=args.global_, bias=not args.no_bias, seed=args.seed, max_patterns=args.max_patterns,
               max_starts=args.max_starts, saturation=args.saturation, time=args.time, covers=args.covers,
               objective=args.objective)
    if args.data in ("clusters", "sphere"):
        cfg["data"] = args.data
    else:
        X, y, cluster = api.read_data(args.data)
        cfg.update(data="arrays", X=X, y=y, cluster=cluster)
    if args.direction is not None:
        cfg["direction"] = api.read_direction(args.direction)
    check_out_dir(args.out, args.overwrite)
    res = api.kkt_points(progress=not args.json, **cfg)
    res.save(args.out)
    print(res.to_json() if args.json else res.text())
    return 0


def cmd_kkt_check(args) -> int:
    from ibcheck import api  # heavy: torch (loaded on first use)

    res = api.kkt_trajectory(api.load_run(args.run_dir), args.seed, args.polish)
    files = res.save(args.run_dir)
    if args.json:
        print(dumps({**res.as_json(), "files": files}, indent=2))
        return 0
    print(res.text())
    if res.polish is not None:
        print(f"polished last checkpoint: {res.polish['solver_status']}; cosine to GD {res.polish['cosine_to_gd']:.6f}")
    print(f"plot: {files['png']}")
    return 0
