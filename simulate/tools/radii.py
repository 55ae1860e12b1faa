"""Robustness radii of a run's networks (or of one network) at test points: the orchestration.

The radii themselves are computed in :mod:`solvers.radius` (``compute_radii`` brackets each
point's radius from both sides); this module turns a run into binary ReLU classifiers, draws
fresh test points, picks the universal direction, and returns a :class:`Radii` result. Nothing
is written until ``Radii.save``.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace
from typing import ClassVar, Literal, Sequence

import numpy as np

from ibcheck.simulate.report.figures import robust_accuracy_figure
from ibcheck.simulate.substrate.measure import test_accuracy
from ibcheck.simulate.substrate.seeds import stream
from ibcheck.solvers.networks import LinearClassifier, MulticlassReLU, RandomNet, TwoLayerReLU
from ibcheck.solvers.radius.bracket import METHODS, Method, compute_radii
from ibcheck.solvers.radius.constructions import fvbs23_robust, lpll25_robust
from ibcheck.solvers.radius.curves import robust_accuracy
from ibcheck.solvers.radius.universal import flip_rate, universal_directions, universal_radius
from ibcheck.theory.argtypes import refused, require_float, require_int
from ibcheck.theory.errors import InputError
from ibcheck.theory.result import Result

Direction = Literal["auto", "fvbs23", "lpll25", "vys22"]


def binary_networks(run) -> list:
    """The run's networks as binary ReLU classifiers (k-class networks through their read-out)."""
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


def binary_labels(ds, y: np.ndarray) -> np.ndarray:
    """k-class labels mapped to +-1 through the J+ split; binary labels unchanged."""
    if not ds.multiclass:
        return y
    if not ds.J_plus:
        raise InputError("a k-class run without a J+ split has no binary read-out to measure")
    return np.where(np.isin(y, ds.J_plus), 1.0, -1.0)


def test_points(run, points: int, seed: int):
    """Fresh test points of the run's distribution, with binary labels (random-net: its own signs)."""
    ds = run.dataset()
    X, y = ds.sample(points, stream("radius-test-points", seed))
    y = binary_labels(ds, y)
    if run.config.setting == "random-net":
        y = np.sign(run.networks[0].forward(X))
    return ds, X, y


def universal_vector(ds, direction: Direction) -> np.ndarray:
    """The universal direction of FVBS23/LPLL25 (cluster means) or VYS22 (training data)."""
    if direction == "auto":
        direction = "fvbs23" if ds.means is not None else "vys22"
    if direction in ("fvbs23", "lpll25"):
        if ds.means is None:
            raise refused("direction", direction, f"needs cluster data; this run uses {ds.kind} (try vys22)")
        return universal_directions(direction, means=ds.means, J_plus=ds.J_plus)
    return universal_directions("vys22", X_train=ds.X, y_train=binary_labels(ds, ds.y))


def _stats(r: np.ndarray, closed: np.ndarray) -> dict:
    fin = r[np.isfinite(r)]
    f = lambda x: None if x is None or not math.isfinite(x) else float(x)  # noqa: E731
    return {
        "median": f(float(np.median(r))) if len(r) else None, "mean": f(float(fin.mean())) if len(fin) else None,
        "min": f(float(r.min())) if len(r) else None, "max": f(float(r.max())) if len(r) else None,
        "fraction_infinite": float(np.mean(~np.isfinite(r))), "fraction_certified_exact": float(np.mean(closed)),
    }


@dataclass(frozen=True)
class Radii(Result):
    """Per-point l2 flip radii of one or more networks, bracketed from both sides.

    ``per_point[method]`` holds one value per (network, point); ``methods`` the summary of each
    method (median, min, max, and the fraction where it meets the certified lower bound);
    ``robust_accuracy`` the curve ``P[r > eps]`` (upper and certified lower); ``universal`` the
    flip rates of every applicable universal direction at ``flip_norms``. Tie rule: f(x) = 0
    counts as misclassified."""

    name: ClassVar[str] = "radius"
    figure_name: ClassVar[str] = "robust_accuracy"
    label: str
    d: int
    k: int | None
    seed: int
    direction: str
    networks: int
    points: int
    network_seeds: tuple[int, ...]
    y: np.ndarray
    per_point: dict[str, np.ndarray]
    methods: dict[str, dict]
    robust_accuracy: tuple[dict, ...]
    universal: dict[str, dict]
    overlays: dict[str, np.ndarray] = field(default_factory=dict)
    source: str | None = None

    def as_json(self) -> dict:
        return {
            "run": self.source, "points": self.points, "networks": self.networks, "seed": self.seed, "direction": self.direction,
            "methods": self.methods, "robust_accuracy": list(self.robust_accuracy), "universal": self.universal,
            "reference": {"sqrt_d": math.sqrt(self.d), "sqrt_d_over_k": math.sqrt(self.d / self.k) if self.k else None},
            "tie_rule": "f(x) = 0 counts as misclassified",
        }

    def heading(self) -> str:
        return f"radii of {self.label}: {self.networks} network(s) x {self.points} points, universal direction {self.direction}"

    def table(self) -> list[dict]:
        return [{"method": m, **st} for m, st in self.methods.items()]

    def rows(self) -> list[dict]:
        """One row per (network, point): every method's value."""
        out = []
        for j in range(len(self.y)):
            i, p = divmod(j, self.points)
            out.append({"network": i, "seed": self.network_seeds[i], "point": p, "y": self.y[j],
                        **{k: (v[j].item() if hasattr(v[j], "item") else v[j]) for k, v in self.per_point.items()}})
        return out

    def figure(self):
        eps = np.array([r["eps"] for r in self.robust_accuracy])
        curves = {f"{self.label}: upper (attack/universal)": (eps, np.array([r["upper"] for r in self.robust_accuracy]))}
        if self.robust_accuracy and self.robust_accuracy[0]["lower"] is not None:
            curves[f"{self.label}: certified lower"] = (eps, np.array([r["lower"] for r in self.robust_accuracy]))

        for lab, upper in self.overlays.items():
            curves[f"{lab}: upper (attack/universal)"] = (eps, robust_accuracy(upper, eps))
        markers = {"sqrt(d)": math.sqrt(self.d)}
        if self.k:
            markers["sqrt(d/k)"] = math.sqrt(self.d / self.k)
        return robust_accuracy_figure(curves, markers, f"robust accuracy from the radii ({self.points} test points per network, d={self.d}"
                                      + (f", k={self.k})" if self.k else ")"))

    def extra_files(self, directory: str) -> dict[str, str]:
        from ibcheck.simulate.substrate.rundir import write_csv  # heavy: torch (loaded on first use)

        path = os.path.join(directory, "radii.csv")
        write_csv(path, self.rows())
        return {"csv": path}


def radii(target, X: np.ndarray | None = None, y: np.ndarray | None = None, methods: Sequence[Method] = METHODS, points: int = 200,
          seed: int = 0, direction: Direction = "auto", time_limit: float = 5.0, flip_norms: Sequence[float] | None = None,
          overlay: Sequence = ()) -> Radii:
    """The radii of a run's networks (``target`` a Run) at fresh test points, or of one network at ``X, y``."""
    from ibcheck.simulate.substrate.training import Run  # heavy: torch (loaded on first use)

    bad = [m for m in methods if m not in METHODS]
    if bad or not methods:
        raise refused("methods", list(methods), f"is out of range: must be a non-empty subset of {', '.join(METHODS)}")
    require_int("points", points, 1, high=10**6)
    require_int("seed", seed, 0)
    require_float("time_limit", time_limit, 0.0, strict=True)
    for nm in flip_norms or ():
        require_float("flip_norm", nm, 0.0, strict=True)
    if isinstance(target, Run):
        ds, X0, y0 = test_points(target, points, seed)
        if X is not None:
            X0, y0 = np.asarray(X, float), binary_labels(ds, np.asarray(y, float))
        X, y = X0, y0
        nets, label, source = binary_networks(target), _label(target), target.path
        net_seeds = tuple(r["seed"] for r in target.seeds) or tuple(range(len(nets)))
        v = universal_vector(ds, direction)
        d = ds.d
        k = ds.means.shape[0] if ds.means is not None else None
        names: list[Direction] = ["fvbs23", "lpll25", "vys22"] if ds.means is not None else ["vys22"]
        directions = {name: universal_vector(ds, name) for name in names}
    else:
        if X is None or y is None:
            raise InputError("X and y are required with a single network (a Run draws its own test points)")
        X, y = np.asarray(X, float), np.asarray(y, float)
        nets, label, source, net_seeds = [target], target.kind, None, (0,)
        if direction not in ("auto", "vys22"):
            raise InputError(f"direction={direction!r}: a single network has no cluster means; use 'vys22' (the data direction)")

        v = universal_directions("vys22", X_train=X, y_train=y)
        d, k, directions = X.shape[1], None, {"vys22": v}
    pooled: dict[str, list] = {}
    for net in nets:
        for key, val in compute_radii(net, X, y, v, tuple(methods), time_limit).items():
            pooled.setdefault(key, []).append(val)
    R = {key: np.concatenate(val) for key, val in pooled.items()}
    lower = np.maximum(R.get("certified", np.zeros_like(R["universal"])), R.get("exact_lower", 0.0))
    # relative to each point's own bound, no absolute floor: 1e-12 absolute marked every radius at X x 1e-200 exact, and one
    # relative to max |X| every radius on columns of mixed scale (1e-200 beside 1e200)
    tol = lambda a: np.isclose(a, lower, rtol=1e-6, atol=0.0) & np.isfinite(a)  # noqa: E731
    summary = {}
    for mth in methods:
        if mth == "exact":
            st = _stats(R["exact_upper"], R["exact_proven"])
            st["fraction_interval"] = float(np.mean(~R["exact_proven"]))
            st["median_gap"] = float(np.median(R["exact_upper"] - R["exact_lower"]))
            summary[mth] = st
        else:
            summary[mth] = _stats(R[mth], tol(R[mth]))
    finite = np.isfinite(R["upper"])
    top = float(np.max(R["upper"][finite])) if finite.any() else math.sqrt(d)
    grid = np.linspace(0, (top if top > 0 else 1e-12) * 1.05, 60)
    best = R["exact_upper"] if "exact" in methods and R["exact_proven"].all() else R["upper"]
    acc_up, acc_any = robust_accuracy(best, grid), robust_accuracy(R["upper"], grid)
    acc_lo = robust_accuracy(lower, grid) if ("certified" in R or "exact_lower" in R) else None
    curve = tuple({"eps": float(e), "accuracy": float(a), "upper": float(u), "lower": None if acc_lo is None else float(acc_lo[j])}
                  for j, (e, a, u) in enumerate(zip(grid, acc_up, acc_any)))
    norms = list(flip_norms or ([math.sqrt(d / k)] if k else []) + [math.sqrt(d)])
    flips = {}
    for name, vec in directions.items():
        r = np.concatenate([universal_radius(net, X, y, vec) for net in nets])
        flips[name] = {"median": None if not np.isfinite(np.median(r)) else float(np.median(r)),
                       "flip_rate": [{"norm": float(nm), "rate": flip_rate(r, nm)} for nm in norms]}
    overlays = {}
    for other in overlay:
        ods, oX, oy = test_points(other, points, seed)
        ov = universal_vector(ods, direction)
        overlays[_label(other)] = np.concatenate([compute_radii(n, oX, oy, ov, ("universal", "attack"), time_limit)["upper"]
                                                  for n in binary_networks(other)])
    direction_used = direction if direction != "auto" else ("fvbs23" if k else "vys22")
    return Radii(label, d, k, seed, direction_used, len(nets), len(X), net_seeds, np.tile(y, len(nets)), R, summary, curve, flips,
                 overlays, source)


def _label(run) -> str:
    where = f" ({os.path.basename(os.path.normpath(run.path))})" if run.path else ""
    return f"{run.config.setting}{where}"


def robust_construction(source, which: Literal["fvbs23", "lpll25-robust"]):
    """A one-network :class:`Run` holding the robust construction of FVBS23.thm.4_1 (``fvbs23``) or
    LPLL25.prop.robust_exists (``lpll25-robust``), built from the cluster means of ``source``'s data,
    with its test accuracy; ``ibcheck radius`` measures it like a trained run."""
    from ibcheck.simulate.substrate.training import Run  # heavy: torch (loaded on first use)

    if which not in ("fvbs23", "lpll25-robust"):
        raise refused("which", which, "is not one of fvbs23, lpll25-robust")
    ds = source.dataset()
    if ds.means is None:
        raise InputError(f"a construction needs cluster data with means; {source.path or 'the run'} uses {ds.kind}")
    labels = np.where(np.isin(np.arange(len(ds.means)), ds.J_plus), 1.0, -1.0)
    net = fvbs23_robust(ds.means, labels) if which == "fvbs23" else lpll25_robust(ds.means, ds.J_plus)
    cfg = replace(source.config, seeds=1)
    Xte, yte = ds.sample(2000, stream("construction-test-points", 0))
    row = {"seed": cfg.seed0, "status": "constructed", "construction": which,
           "claim": "FVBS23.thm.4_1" if which == "fvbs23" else "LPLL25.prop.robust_exists",
           "test_accuracy": test_accuracy(net, Xte, binary_labels(ds, yte)), "train_log10_loss": None, "normalized_margin": None,
           "smoothed_margin": None, "cosine_same_class_mean": None, "cosine_other_class_mean": None, "lambda_within_class_ratio": None}
    return Run(cfg, [ds], [net], [None], [row], [])
