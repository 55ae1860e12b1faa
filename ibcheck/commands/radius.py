"""``ibcheck radius`` and ``ibcheck construct``: radii of the networks of a run directory.

The computations live in :mod:`ibcheck.solvers.radius` and :func:`ibcheck.api.radii`
(the API's ``radii``); this command reads the run directories, calls it, and saves the result
(per-point CSV, robust-accuracy PNG, JSON).
"""
from __future__ import annotations

import os

from ibcheck.solvers.radius.bracket import METHODS
from ibcheck.theory.argtypes import nonneg_int, pos_float, pos_int
from ibcheck.theory.outdir import check_out_dir
from ibcheck.theory.result import dumps

from .args import common


def register(sub) -> None:
    p = sub.add_parser("radius", help="l2 flip radii of a run's networks: universal, attack, certified, exact",
                       parents=[common(out_required=False, out_help="output directory (default RUN_DIR/radius)")])
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
    p.set_defaults(func=cmd_radius)

    p = sub.add_parser("construct", help="write a run directory holding a robust construction built from a run's data", parents=[common()])
    p.add_argument("which", choices=("fvbs23", "lpll25-robust"))
    p.add_argument("--from", dest="source", required=True, help="run directory whose data (cluster means) to use")
    p.add_argument("--overwrite", action="store_true")
    p.set_defaults(func=cmd_construct)


def _load(path: str):
    from ibcheck import api  # heavy: torch (loaded on first use)

    return api.load_run(path)  # a missing path, a file or a damaged run: one line naming it


def cmd_radius(args) -> int:
    from ibcheck import api  # heavy: torch (loaded on first use)

    run = _load(args.run_dir)
    overlay = [_load(p) for p in args.overlay]
    methods = METHODS if args.method == "all" else (args.method,)
    out_dir = args.out or os.path.join(args.run_dir, "radius")
    res = api.radii(run, None, None, methods, args.points, args.seed, args.direction, args.time_limit, args.flip_norm, overlay)
    files = res.save(out_dir)
    report = {**res.as_json(), "files": {"csv": files["csv"], "png": files["png"]}}
    if args.json:
        print(dumps(report, indent=2))
        return 0
    ref = report["reference"]
    print(res.text() + f"\nsqrt(d) = {ref['sqrt_d']:.3g}" + (f", sqrt(d/k) = {ref['sqrt_d_over_k']:.3g}" if ref["sqrt_d_over_k"] else ""))
    for name, u in report["universal"].items():
        rates = ", ".join(f"{fr['rate']:.0%} at {fr['norm']:.3g}" for fr in u["flip_rate"])
        print(f"  universal {name}: flip rate {rates}")
    print(f"  files: {report['files']['csv']}, {report['files']['png']}")
    return 0


def cmd_construct(args) -> int:
    from ibcheck import api  # heavy: torch (loaded on first use)

    check_out_dir(args.out, args.overwrite)
    result = api.robust_construction(_load(args.source), args.which)
    result.save(args.out, args.overwrite)
    row = result.summary[0]
    if args.json:
        print(dumps(result.as_json(), indent=2))
    else:
        print(f"{row['claim']} construction from {args.source}: test accuracy {row['test_accuracy']:.4f} -> {args.out}")
    return 0
