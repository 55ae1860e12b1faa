"""KKT points of the max-margin problem (P) on a dataset, and GD checkpoints as (eps, delta)-KKT points.

The mathematics lives in :mod:`solvers.kkt`; this module builds the dataset and the starts
(random, a GD-trained direction, and for clusters the robust construction and, on request, the
optimum of (P) on the activation cones of whole families of patterns: :data:`CONES`), certifies every end
point, compares it with the global optimum when asked, and measures its robustness. Results are
:class:`KKTPoints` and :class:`KKTTrajectory`; nothing is written until ``save``.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np

from ibcheck.simulate.substrate.data import clusters, sphere
from ibcheck.simulate.substrate.rundir import clean
from ibcheck.simulate.substrate.seeds import stream
from ibcheck.solvers.networks import TwoLayerReLU
from ibcheck.solvers.radius.attack import attack_radius
from ibcheck.solvers.radius.constructions import fvbs23_robust
from ibcheck.solvers.radius.universal import flip_rate, universal_directions, universal_radius
from ibcheck.theory.argtypes import refused, require_bool, require_float, require_int
from ibcheck.theory.atomic import save_npz
from ibcheck.theory.errors import InputError
from ibcheck.theory.result import Result, new_figure

CONES = ("per-cluster", "per-class", "mixture", "robust")  # the cone families ``--cones`` accepts (clusters only)
NEAR_TIE = 1e-4  # relative |z_ij| below which a pre-activation may count as a tie (relaxation, flagged)


@dataclass(frozen=True)
class KKTSearchConfig:
    """The dataset (clusters or sphere) and the search: ``width`` neurons, ``starts`` random starts."""

    data: Literal["clusters", "sphere"] = "clusters"
    d: int = 5
    k: int = 4
    n: int = 20
    sigma: float = 0.3
    width: int = 6
    starts: int = 8
    include_global: bool = False
    bias: bool = True
    seed: int = 0
    max_patterns: int = 5000
    cones: tuple[str, ...] = ()

    def __post_init__(self):
        if not isinstance(self.data, str) or self.data not in ("clusters", "sphere"):
            raise refused("data", self.data, "is out of range: must be 'clusters' or 'sphere'")
        if not isinstance(self.cones, tuple) or any(c not in CONES for c in self.cones):
            raise refused("cones", self.cones, f"is out of range: each must be one of {', '.join(CONES)}")
        if self.cones and self.data != "clusters":
            raise refused("cones", self.cones, "needs --data clusters: the cone families are patterns of cluster means")
        # the search solves small programs (SLSQP, cvxpy): sizes beyond these are typos, not instances
        for name, high in (("d", 10_000), ("k", 10_000), ("n", 10_000), ("width", 10_000), ("starts", 10_000), ("max_patterns", 10**7)):
            require_int(name, getattr(self, name), 1, high=high)
        require_int("seed", self.seed, 0)
        require_float("sigma", self.sigma, 0.0, strict=False, high=1e6)
        require_bool("include_global", self.include_global)
        require_bool("bias", self.bias)


def check_separable(X, y) -> dict:
    """Refuse data no network can fit (a point with both labels); report linear separability."""
    from ibcheck.solvers.svm import hard_margin_svm  # heavy: cvxpy (loaded on first use)

    _, inv = np.unique(X, axis=0, return_inverse=True)
    for g in np.unique(inv):
        if len(set(y[inv == g])) > 1:
            raise InputError("the data are not separable: the same input appears with both labels, so (P) is infeasible")
    svm = hard_margin_svm(X, y, bias=True)
    return {"linearly_separable": svm.separable, "svm_status": svm.status, "svm_margin": svm.margin}


def _dataset(cfg: KKTSearchConfig):
    return clusters(cfg.d, cfg.k, cfg.n, cfg.sigma, seed=cfg.seed) if cfg.data == "clusters" else sphere(cfg.d, cfg.n, seed=cfg.seed)


def _gd_start(cfg: KKTSearchConfig):
    """A GD-trained direction: the two-layer network trained by the loss-based schedule on the same data."""
    from ibcheck.simulate.substrate.models import ModelConfig  # heavy: torch (loaded on first use)
    from ibcheck.simulate.substrate.trainer import TrainConfig  # heavy: torch (loaded on first use)
    from ibcheck.simulate.substrate.training import DataConfig, RunConfig, run  # heavy: torch (loaded on first use)

    rc = RunConfig(setting="two-layer", data=DataConfig(kind=cfg.data, d=cfg.d, k=cfg.k, n=cfg.n, sigma=cfg.sigma, seed=cfg.seed, n_test=10),
                   model=ModelConfig("two-layer", width=cfg.width, bias=cfg.bias, init_scale=1.0),
                   train=TrainConfig(steps=2000, lr=0.1, loss="exp", reduction="sum", schedule="loss-based", progress=False))
    return run(rc).networks[0]


def _starts(cfg: KKTSearchConfig, ds, rng):
    from ibcheck.solvers.kkt.search import random_start  # heavy: scipy (loaded on first use)

    starts = [(f"random-{i}", random_start(cfg.d, cfg.width, rng, cfg.bias)) for i in range(cfg.starts)]
    starts.append(("gd", _gd_start(cfg)))
    if ds.means is not None and cfg.width >= len(ds.means):
        labels = np.where(np.isin(np.arange(len(ds.means)), ds.J_plus), 1.0, -1.0)
        c = fvbs23_robust(ds.means, labels)
        extra = cfg.width - c.width
        W = np.vstack([c.W, 1e-3 * rng.standard_normal((extra, cfg.d))])
        b = np.concatenate([c.b, np.zeros(extra)]) if cfg.bias else None
        starts.append(("construction-fvbs23", TwoLayerReLU(W=W, a=np.concatenate([c.a, 1e-3 * rng.standard_normal(extra)]), b=b)))
    return starts + [(f"cone-{name}", net) for name, net in cone_starts(cfg, ds, rng)]


def _family(name: str, means: np.ndarray, labels: np.ndarray) -> TwoLayerReLU:
    """One pattern family's network: ``per-cluster`` (a neuron on each cluster mean, output weight its label),
    ``per-class`` (one averaged neuron per class: the feature-averaging pattern), ``mixture`` (the first class
    averaged, the other per cluster), ``robust`` (FVBS23.thm.4_1: per cluster, with a negative bias)."""
    if name == "robust":
        return fvbs23_robust(means, labels)
    unit = means / np.linalg.norm(means, axis=1, keepdims=True)
    pos, neg = unit[labels > 0], unit[labels < 0]
    W: np.ndarray
    a: np.ndarray
    if name == "per-cluster":
        W, a = unit, labels.astype(float)
    elif name == "per-class":
        W, a = np.vstack([pos.sum(0), neg.sum(0)]), np.array([1.0, -1.0])
    else:  # mixture
        W, a = np.vstack([pos.sum(0), neg]), np.r_[1.0, -np.ones(len(neg))]
    return TwoLayerReLU(W=W, a=a, b=np.zeros(len(W)))


def cone_starts(cfg: KKTSearchConfig, ds, rng) -> list[tuple[str, TwoLayerReLU]]:
    """Per requested family: its network polished on its activation cone ((P) restricted to the pattern, convex; the
    patterns flipped where a wall binds; up to 12 programs), padded to ``width`` with tiny neurons, as a start. A family
    whose cone program fails still gives its own network as a start: the search then says where it ends."""
    from ibcheck.simulate.experiments.kkt_certify import certify_or_polish  # heavy: cvxpy (loaded on first use)

    if not cfg.cones or ds.means is None:
        return []
    labels = np.where(np.isin(np.arange(len(ds.means)), ds.J_plus), 1.0, -1.0)
    out = []
    for name in cfg.cones:
        net = _family(name, ds.means, labels)
        if not cfg.bias:
            net = TwoLayerReLU(W=net.W, a=net.a, b=None)
        if (ds.y * net.forward(ds.X)).min() > 0:
            net = certify_or_polish(net, ds.X, ds.y, -1, attempts=12).net
        extra = max(cfg.width - net.width, 0)
        out.append((name, TwoLayerReLU(W=np.vstack([net.W, 1e-3 * rng.standard_normal((extra, cfg.d))]),
                                       a=np.concatenate([net.a, 1e-3 * rng.standard_normal(extra)]),
                                       b=np.concatenate([net.b, np.zeros(extra)]) if net.b is not None else None)))
    return out


@dataclass(frozen=True)
class KKTPoints(Result):
    """Every start's end point: its certificate, value, duplicates, whether it is the global optimum,
    and its robustness (universal flip rate at ``flip_norm``, median attack radius)."""

    name: ClassVar[str] = "kkt"
    config: KKTSearchConfig
    separability: dict
    points: tuple[dict, ...]
    distinct: int
    global_optimum: object | None  # GlobalOptimum
    networks: tuple
    flip_norm: float

    def as_json(self) -> dict:
        c = self.config
        g = self.global_optimum
        return {"setting": c.data, "d": c.d, "k": c.k, "n": c.n, "width": c.width, "seed": c.seed, **clean(self.separability),
                "points": [clean(p) for p in self.points], "distinct_kkt_points_by_function": self.distinct,
                "global": clean(g.as_json()) if g is not None else None}  # type: ignore[attr-defined]

    def heading(self) -> str:
        c, g = self.config, self.global_optimum
        gt = "" if g is None else "; " + g.heading()  # type: ignore[attr-defined]
        return f"{len(self.points)} starts on {c.data} d={c.d} n={c.n}, width {c.width}: {self.distinct} distinct KKT point(s){gt}"

    def table(self) -> list[dict]:
        return [{**{k: p.get(k) for k in ("start", "is_kkt", "is_global", "value", "stationarity_residual", "duplicate_of",
                                          "same_function_as", "universal_flip_rate", "radius_median")},
                 "why not": "; ".join(p.get("kkt_failures") or []) or None} for p in self.points]

    def figure(self):
        """Value of (P) against the universal flip rate, one dot per certified end point."""
        pts = [p for p in self.points if p.get("value") is not None and p.get("universal_flip_rate") is not None]
        if not pts:
            return None
        fig, ax = new_figure()
        for p in pts:
            ax.scatter(p["value"], p["universal_flip_rate"], marker="o" if p["is_kkt"] else "x", color="tab:blue" if p["is_kkt"] else "tab:red")
            ax.annotate(p["start"], (p["value"], p["universal_flip_rate"]), fontsize=6)
        g = self.global_optimum
        if g is not None and getattr(g, "certified", False):
            ax.axvline(g.value, ls="--", color="gray", label="global optimum")  # type: ignore[attr-defined]
            ax.legend(fontsize=7)
        ax.set_xlabel("1/2 ||theta||^2 at unit margin (o: certified KKT, x: not)")
        ax.set_ylabel(f"universal flip rate at {self.flip_norm:.3g}")
        ax.set_title(self.heading(), fontsize=8)
        return fig

    def extra_files(self, directory: str) -> dict[str, str]:
        from ibcheck.simulate.substrate.rundir import write_csv  # heavy: torch (loaded on first use)

        files = {"csv": os.path.join(directory, "points.csv"), "npz": os.path.join(directory, "networks.npz")}
        write_csv(files["csv"], [clean(p) for p in self.points])
        save_npz(files["npz"], **{f"p{i}_{k}": v for i, net in enumerate(self.networks) for k, v in net.to_arrays().items()})
        return files


def kkt_points(cfg: KKTSearchConfig) -> KKTPoints:
    """Search (P) from every start, certify each end point, and (``include_global``) compare with the global optimum."""
    from ibcheck.solvers.kkt.global_opt import NotProven, TooLarge, dual_check, global_max_margin  # heavy: cvxpy (loaded on first use)
    from ibcheck.solvers.kkt.search import kkt_search  # heavy: scipy (loaded on first use)

    ds = _dataset(cfg)
    X, y = ds.X, ds.y
    sep = check_separable(X, y)
    results = kkt_search(X, y, _starts(cfg, ds, np.random.default_rng(cfg.seed)))
    glob = None
    if cfg.include_global:
        # the search's feasible end points seed column generation beyond the pattern limit, and a
        # candidate that beats the program's value would expose missing patterns
        cands = [r.net for r in results if np.isfinite(r.value)]
        glob = global_max_margin(X, y, bias=cfg.bias, max_patterns=cfg.max_patterns, candidates=cands, seed=cfg.seed)
    Xte, yte = ds.sample(200, stream("kkt-test-points", cfg.seed))
    if ds.means is not None:
        v = universal_directions("fvbs23", means=ds.means, J_plus=ds.J_plus)
        norm = math.sqrt(cfg.d / len(ds.means))
    else:
        v = universal_directions("vys22", X_train=X, y_train=y)
        norm = math.sqrt(cfg.d / cfg.n)
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
            row["radius_median"] = float(np.median(np.minimum(attack_radius(r.net, Xte, yte)["attack"], uni)))
            if glob is not None and glob.status == "optimal":
                row["gap"] = r.value / glob.value - 1
                if row["is_kkt"]:
                    try:
                        row["dual_check_max"] = dc = dual_check(X, y, c.lam, bias=cfg.bias, max_patterns=max(cfg.max_patterns, 5000))
                        row["is_global"] = bool(dc <= 1 + 1e-4)
                    except (TooLarge, NotProven) as err:  # recorded: the check is too large to be exact, or its solver did not prove it
                        row["dual_check_note"] = f"not checked: {err}"
        points.append(clean(row))
    # distinct KKT points by function: classes of the same-function relation among the certified points
    distinct = {p["same_function_as"] if p["same_function_as"] is not None else i for i, p in enumerate(points) if p["is_kkt"]}
    return KKTPoints(cfg, sep, tuple(points), len(distinct), glob, tuple(r.net for r in results), norm)


@dataclass(frozen=True)
class KKTTrajectory(Result):
    """A run's checkpoints certified as (eps, delta)-KKT points of (P) (LL20.def.eps_delta_kkt),
    with near ties as a flagged relaxation, and optionally the SLSQP polish of the last one."""

    name: ClassVar[str] = "kkt_check"
    run: str | None
    seed: int
    checkpoints: tuple[dict, ...]
    polish: dict | None = None

    def as_json(self) -> dict:
        out: dict = {"run": self.run, "seed": self.seed, "checkpoints": [clean(r) for r in self.checkpoints]}
        if self.polish is not None:
            out["polish"] = self.polish
        return out

    def heading(self) -> str:
        return f"GD checkpoints of seed {self.seed} as (eps, delta)-KKT points"

    def table(self) -> list[dict]:
        return [{k: r.get(k) for k in ("step", "log10_loss", "epsilon", "stationarity_rel", "delta", "epsilon_near_ties", "delta_near_ties",
                                       "solver_status")}
                for r in self.checkpoints]

    def figure(self):
        pts = [r for r in self.checkpoints if r["epsilon"] is not None and r["log10_loss"] is not None]
        fig, ax = new_figure()
        if pts:
            x = [r["log10_loss"] for r in pts]
            ax.semilogy(x, [max(r["epsilon"], 1e-16) for r in pts], "o-", label="eps (LL20: ||theta - sum lambda h||, theta at unit margin)")
            ax.semilogy(x, [max(r["delta"], 1e-16) for r in pts], "s-", label="delta (complementary slackness)")
            ax.semilogy(x, [max(r["epsilon_near_ties"], 1e-16) for r in pts], "o--", alpha=0.6,
                        label=f"eps with near-ties |z| <= {NEAR_TIE:g} (relaxation)")
            ax.invert_xaxis()
            ax.legend(fontsize=8)
        ax.set_xlabel("log10 training loss (sum)")
        ax.set_ylabel("certified value")
        ax.set_title("GD iterates as (eps, delta)-KKT points of (P) (LL20.def.eps_delta_kkt)", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        return fig


def kkt_trajectory(run, seed: int | None = None, polish: bool = False) -> KKTTrajectory:
    """Certify every checkpoint of ``seed`` (default: the first) of a saved run as an (eps, delta)-KKT point."""
    from ibcheck.simulate.substrate.rundir import load_checkpoints  # heavy: torch (loaded on first use)
    from ibcheck.solvers.kkt.certificate import eps_delta_kkt, require_homogeneous  # heavy: cvxpy (loaded on first use)
    from ibcheck.solvers.kkt.search import slsqp  # heavy: scipy (loaded on first use)

    if seed is not None:
        require_int("seed", seed, 0)
    if run.path is None:
        raise InputError("the run has no checkpoints on disk: save it (Run.save) after training with checkpoints=N")
    checkpoints = load_checkpoints(run.path)
    seed = seed if seed is not None else checkpoints[0]["seed"]
    cks = [c for c in checkpoints if c["seed"] == seed]
    if not cks:
        raise InputError(f"seed={seed}: the run has no checkpoints for this seed")
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
                     "stationarity_rel": cert.stationarity_residual, "solver_status": cert.solver_status, "n_active": cert.n_active,
                     "epsilon_near_ties": eps_t, "delta_near_ties": delta_t, "near_tie_tol": NEAR_TIE, "n_near_ties": cert_t.n_ties})
    pol = None
    if polish:
        last = cks[-1]["network"]
        end, status = slsqp(last, X, y)
        a, b = last.params(), end.params()
        pol = {"solver_status": status, "cosine_to_gd": float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))}
    return KKTTrajectory(run.path, seed, tuple(clean(rows)), pol)


__all__ = ["KKTSearchConfig", "KKTPoints", "KKTTrajectory", "kkt_points", "kkt_trajectory", "check_separable"]
