"""``ibcheck train``: one batched training run, written to a run directory."""
from __future__ import annotations

import sys

from ibcheck.theory.argtypes import finite_float, nonneg_float, nonneg_int, pos_float, pos_int
from ibcheck.theory.outdir import check_out_dir
from ibcheck.theory.result import dumps

from .args import common


def register(sub) -> None:
    p = sub.add_parser("train", help="train S seeds of a network in one batch; write a run directory",
                       parents=[common(out_help="run directory (created; must be empty unless --overwrite)")])
    p.add_argument("--setting", required=True, choices=("fa", "multiclass", "two-layer", "linear", "random-net"))
    p.add_argument("--data", default=None, choices=("clusters", "sphere", "gaussian", "bernoulli", "separable", "digits", "idx"),
                   help="default: clusters for fa/multiclass/two-layer, separable for linear, sphere for random-net")
    p.add_argument("--d", type=pos_int, default=256, help="input dimension (cluster/sphere/gaussian data)")
    p.add_argument("--k", type=pos_int, default=4, help="number of clusters")
    p.add_argument("--n", type=pos_int, default=200, help="training samples")
    p.add_argument("--width", "--m", dest="width", type=pos_int, default=5,
                   help="fa: neurons per output sign (LPLL25's m); multiclass: neurons per class; two-layer, random-net: hidden width")
    p.add_argument("--seeds", type=pos_int, default=1, help="number of seeds, trained together")
    p.add_argument("--seed0", type=nonneg_int, default=0, help="first seed")
    p.add_argument("--steps", type=nonneg_int, default=1000)
    p.add_argument("--lr", type=pos_float, default=None, help="step size (default 1/sqrt(d) for fa, else 0.1)")
    p.add_argument("--init-scale", type=pos_float, default=1.0, help="multiplies the initialization standard deviations")
    p.add_argument("--loss", default="logistic", choices=("logistic", "exp"))
    p.add_argument("--reduction", default="mean", choices=("mean", "sum"))
    p.add_argument("--schedule", default="constant", choices=("constant", "loss-based", "paper"))
    p.add_argument("--target-log10-loss", type=finite_float, default=None)
    p.add_argument("--max-seconds", type=pos_float, default=None, help="wall-time stop rule")
    p.add_argument("--sigma", type=nonneg_float, default=1.0, help="noise standard deviation")
    p.add_argument("--near-orthogonal", action="store_true", help="random means on the sphere instead of exactly orthogonal")
    p.add_argument("--split", default="half", help="J+: half | alternate | ids like 0,2 (digits: odd | even | digits)")
    p.add_argument("--no-bias", action="store_true", help="two-layer without hidden biases")
    p.add_argument("--activation", default="relu", choices=("relu", "softplus", "tanh", "gelu"), help="random-net activation")
    p.add_argument("--per-seed-data", action="store_true", help="a different dataset for every seed")
    p.add_argument("--data-seed", type=nonneg_int, default=0)
    p.add_argument("--n-test", type=pos_int, default=2000)
    p.add_argument("--idx-images", default=None)
    p.add_argument("--idx-labels", default=None)
    p.add_argument("--dtype", default="float64", choices=("float64", "float32"))
    p.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    p.add_argument("--checkpoints", type=nonneg_int, default=0, help="save the weights at N log-spaced steps (for ibcheck kkt-check)")
    p.add_argument("--dual", default="auto", choices=("auto", "on", "off"),
                   help="train W as W0 + C X through the Gram matrix (same iterates; faster when n < d)")
    p.add_argument("--overwrite", action="store_true")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_train)


def cmd_train(args) -> int:
    import ibcheck  # heavy: torch (loaded on first use)
    from ibcheck import api  # heavy: torch (loaded on first use)

    DataConfig, ModelConfig, TrainConfig, RunConfig = ibcheck.DataConfig, ibcheck.ModelConfig, ibcheck.TrainConfig, ibcheck.RunConfig

    check_out_dir(args.out, args.overwrite)
    cfg = RunConfig(
        setting=args.setting,
        data=DataConfig(kind=args.data, d=args.d, k=args.k, n=args.n, sigma=args.sigma, orthogonal=not args.near_orthogonal,
                        split=args.split, seed=args.data_seed, per_seed=args.per_seed_data, n_test=args.n_test,
                        idx_images=args.idx_images, idx_labels=args.idx_labels),
        model=ModelConfig(setting=args.setting, width=args.width, init_scale=args.init_scale, bias=not args.no_bias, activation=args.activation),
        train=TrainConfig(steps=args.steps, lr=args.lr, loss=args.loss, reduction=args.reduction, schedule=args.schedule,
                          target_log10_loss=args.target_log10_loss, max_seconds=args.max_seconds, dtype=args.dtype,
                          device=args.device, dual=args.dual, checkpoints=args.checkpoints, progress=not args.quiet and sys.stderr.isatty()),
        seeds=args.seeds, seed0=args.seed0,
    )
    result = api.train(cfg)
    result.save(args.out, args.overwrite)
    if args.json:
        print(dumps(result.as_json(), indent=2))
    else:
        print(f"{result.text()}\n-> {args.out}")
    return 0
