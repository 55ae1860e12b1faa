"""KKT points of the max-margin problem (P) on a dataset (built-in or the user's own), and GD checkpoints as (eps,
delta)-KKT points.

The mathematics lives in :mod:`solvers.kkt`: the search is the KKT engine (:func:`ibcheck.solvers.kkt.engine.search`),
the same one the comparisons and the reproductions call, with its one certificate policy and same-point test. This
module builds the dataset (clusters, the sphere, or arrays: ``X``, ``y`` and optionally each point's ``cluster``),
adds a GD-trained network as a start, compares the points with the global optimum when asked, and measures each
point's robustness. Results are :class:`KKTPoints` and :class:`KKTTrajectory`; nothing is written until ``save``.
"""
from __future__ import annotations

import math
import os
import sys
import time
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ibcheck.simulate.substrate.data import clusters, sphere
from ibcheck.simulate.substrate.rundir import clean
from ibcheck.simulate.substrate.seeds import stream
from ibcheck.simulate.substrate.userdata import INT64_MAX, CsvRows, int64, number, open_regular, read_npz
from ibcheck.solvers.kkt.policy import POINT_TOL
from ibcheck.solvers.radius.attack import attack_radius
from ibcheck.solvers.radius.universal import flip_rate, universal_directions, universal_radius
from ibcheck.solvers.validation import MAX_ELEMENTS, check_data
from ibcheck.theory.argtypes import refused, require_bool, require_float, require_int
from ibcheck.theory.atomic import save_npz
from ibcheck.theory.errors import InputError
from ibcheck.theory.result import Result, new_figure

NEAR_TIE = 1e-4  # relative |z_ij| below which a pre-activation may count as a tie (relaxation, flagged)
DATA = ("clusters", "sphere", "arrays")
MAX_N = MAX_D = 10_000  # points and features of a dataset, generated or the user's: the search solves small programs (cvxpy)


@dataclass(frozen=True)
class KKTSearchConfig:
    """The dataset (``clusters`` or ``sphere`` generated, or ``arrays``: ``X``, ``y`` in {-1, +1} and optionally
    ``cluster``, one integer per point) and the engine's budget: ``starts`` GD starts, then more up to ``max_starts``
    until the Good-Turing estimate that one more start finds a new point is at most ``saturation`` (from at least
    1 / saturation starts; it sees only basins reached more than once), or, given an ``objective`` ("margin" or "flip",
    along ``direction``), until its running extremum stops (the record rule, at most ``max_starts`` starts of every
    source), no pattern started past ``time`` seconds (default 120; None: no cap), ``programs`` cone programs per
    pattern, every partition cone up to ``enumerate``, the cover starts at the scales ``covers`` (data with clusters);
    ``width``: the GD network trained as one more start (and the width of random GD inits for data without clusters).
    The result reports points and their near-copy families (outputs within 2%), never that every point was found."""

    data: str = "clusters"
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
    programs: int = 12
    enumerate: int = 256
    max_starts: int = 60
    saturation: float = 0.02
    time: float | None = 120.0  # seconds: no pattern starts past it (None: no cap); the search then says how far it got
    covers: tuple[float, ...] = (1.0, 2.0, 3.0)  # the cover starts' scales (data with clusters; () for none)
    objective: str | None = None  # "margin" or "flip": the search runs by the record rule on it (max_starts: its cap)
    direction: np.ndarray | None = field(default=None, compare=False, repr=False)  # the flip objective's direction (d,)
    X: np.ndarray | None = field(default=None, compare=False, repr=False)
    y: np.ndarray | None = field(default=None, compare=False, repr=False)
    cluster: np.ndarray | None = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        if not isinstance(self.data, str) or self.data not in DATA:
            raise refused("data", self.data, "is out of range: must be 'clusters', 'sphere' or 'arrays' (X=..., y=...)")
        if self.data == "arrays" or self.X is not None or self.y is not None:
            if self.X is None or self.y is None:
                raise InputError("data='arrays' needs both X (n, d) and y (n,) in {-1, +1}")
            X, y = check_data(self.X, self.y)
            for axis, size, high in (("n", X.shape[0], MAX_N), ("d", X.shape[1], MAX_D)):  # the limits of generated data
                if size > high:
                    raise InputError(f"X has shape {X.shape}: {axis} = {size} is out of range: {axis} must be at most {high} "
                                     f"(the KKT search solves small programs)", "X", X.shape)
            if len(np.unique(y)) < 2:
                raise InputError(f"y has one class only (every label is {y[0]:g}): (P) needs both -1 and +1")
            object.__setattr__(self, "X", X)
            object.__setattr__(self, "y", y)
            object.__setattr__(self, "data", "arrays")
            object.__setattr__(self, "d", X.shape[1])
            object.__setattr__(self, "n", X.shape[0])
            if self.cluster is not None:
                object.__setattr__(self, "cluster", check_clusters(self.cluster, y))
        elif self.cluster is not None:
            raise InputError("cluster is given without X and y: pass the arrays (data='arrays')")
        # the search solves small programs (cvxpy): sizes beyond these are typos, not instances
        for name, high in (("d", MAX_D), ("k", 10_000), ("n", MAX_N), ("width", 10_000), ("starts", 10_000), ("max_patterns", 10**7),
                           ("programs", 1000), ("enumerate", 10**6), ("max_starts", 100_000)):
            if self.data == "arrays" and name in ("d", "n"):
                continue  # the arrays' own shape (checked against the same limits with the arrays)
            require_int(name, getattr(self, name), 0 if name == "enumerate" else 1, high=high)
        require_int("seed", self.seed, 0)
        require_float("sigma", self.sigma, 0.0, strict=False, high=1e6)
        require_float("saturation", self.saturation, 0.0, strict=True, high=1.0)
        if self.time is not None:
            require_float("time", self.time, 0.0, strict=True, high=1e7)
        if isinstance(self.covers, (str, bytes)) or not isinstance(self.covers, (tuple, list)) or len(self.covers) > 20:
            raise refused("covers", self.covers, "is out of range: must be a list of at most 20 scales, each in (0, 100] (e.g. (1, 2, 3); () for none)")
        object.__setattr__(self, "covers", tuple(require_float("covers", c, 0.0, strict=True, high=100.0) for c in self.covers))
        if self.objective is not None and (not isinstance(self.objective, str) or self.objective not in OBJECTIVES):
            raise refused("objective", self.objective, "is out of range: must be 'margin' (the largest normalized margin) or "
                          "'flip' (the flip norm along a direction), or None")
        if self.direction is not None:
            if self.objective != "flip":
                raise InputError("direction is given without objective='flip': it is the flip objective's direction")
            v = np.asarray(self.direction, dtype=float) if np.asarray(self.direction).dtype.kind in "iuf" else None
            if v is None or v.ndim != 1 or len(v) != self.d or not np.isfinite(v).all() or not np.any(v):
                raise refused("direction", np.asarray(self.direction).shape, f"is out of range: must be a finite, nonzero vector of "
                              f"length d = {self.d}")
            object.__setattr__(self, "direction", v)
        require_bool("include_global", self.include_global)
        require_bool("bias", self.bias)
        if not self.bias:
            raise refused("bias", self.bias, "is out of range: the KKT engine searches networks with hidden biases (bias=True)")


def check_clusters(cluster, y: np.ndarray) -> np.ndarray:
    """Each point's cluster: integers in [0, 2^63 - 1] (int64), one per point, every cluster of one label (a cluster holds
    one class). A refused id is quoted as given: 2^64 - 1 (uint64) and 1e300 were converted to int64 first and quoted
    as -1 and -9223372036854775808."""
    try:
        c = np.asarray(cluster)
    except (TypeError, ValueError):
        raise InputError("cluster is not an array of integers") from None
    if c.ndim != 1 or len(c) != len(y):
        raise InputError(f"cluster has shape {c.shape}: it must be 1-D with one integer per row of X ({len(y)})")
    problem = _cluster_ids_problem(c)
    if problem:
        raise InputError(problem)
    c = c.astype(np.int64)
    for g in np.unique(c):
        if len(np.unique(y[c == g])) > 1:
            raise InputError(f"cluster {g} holds both labels: each cluster must be of one class")
    return c


def _cluster_ids_problem(c: np.ndarray) -> str | None:
    """Why the ids ``c`` (an array) are not integers in [0, 2^63 - 1], quoting the first bad one as given; None if they are."""
    if c.dtype.kind not in "iuf":
        return f"cluster has dtype {c.dtype}: it must hold integers >= 0"
    if c.dtype.kind == "f":
        bad = ~np.isfinite(c) | (c < 0) | (c >= 2.0**63) | (c != np.round(c))
    elif c.dtype.kind == "u":
        bad = c > np.uint64(INT64_MAX)
    else:
        bad = c < 0
    if not bad.any():
        return None
    i = int(np.flatnonzero(bad)[0])
    return f"cluster[{i}] = {c[i]!s}: cluster ids must be integers in [0, 2^63 - 1] (int64)"


def load_data_file(path: str) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(X, y, cluster or None) from an .npz (arrays ``X``, ``y`` and optionally ``cluster``; no other array is read) or a
    .csv (a header row naming each column once: ``y``, optionally ``cluster``, every other column a feature), read by
    :mod:`ibcheck.simulate.substrate.userdata`: a regular file, sizes within n <= MAX_N points and d <= MAX_D features
    checked before the arrays are read, numbers as written (``1_000``, ``nan`` refused). Checked as data, never executed."""
    fh, _ = open_regular(path, "data")  # a missing, or not a regular, file: said before the file's kind
    fh.close()
    suffix = os.path.splitext(path)[1].lower()
    if suffix == ".npz":
        arrays = read_npz(path, "data", {"X": ("n", "d"), "y": ("n",), "cluster": ("n",)}, {"n": MAX_N, "d": MAX_D}, ("X", "y"),
                          MAX_ELEMENTS)
        problem = _cluster_ids_problem(arrays["cluster"]) if "cluster" in arrays else None
        if problem:  # said of the file: the ids as stored (2^64 - 1 in a uint64 array), before any conversion
            raise refused("data", path, f": {problem}")
        return arrays["X"], arrays["y"], arrays.get("cluster")
    if suffix == ".csv":
        return _load_csv(path)
    raise refused("data", path, "is out of range: give clusters, sphere, or a file ending in .npz or .csv")


def _load_csv(path: str) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    limit = f" (n <= {MAX_N} points: the KKT search solves small programs)"
    with CsvRows(path, "data", max_rows=MAX_N, max_columns=MAX_D + 2, what=limit) as table:
        head = table.header
        if "y" not in head:
            raise refused("data", path, f": the header needs a column named y (it has {', '.join(head)[:200]})")
        yi = head.index("y")
        ci = head.index("cluster") if "cluster" in head else None
        for h in head:  # 'Y' beside 'y' is a second label column, not a feature
            if h.lower() in ("y", "cluster") and h not in ("y", "cluster"):
                raise refused("data", path, f": the column {h!r} differs from {h.lower()!r} only in case: rename or remove it "
                              "(every column but y and cluster is a feature)")
        feats = [j for j in range(len(head)) if j not in (yi, ci)]
        if not feats:
            raise refused("data", path, f": the header has no feature column (it has {', '.join(head)}): every column but y and cluster is a feature")
        if len(feats) > MAX_D:
            raise refused("data", path, f"has {len(feats)} feature columns: d must be at most {MAX_D}")
        X, ys, cs = [], [], []
        for line, fields in table.rows():
            j = yi
            try:
                ys.append(number(fields[yi]))
                if ys[-1] not in (-1.0, 1.0):
                    raise ValueError(f"{fields[yi].strip()} is not a label: labels are -1 or +1")
                row = np.empty(len(feats))
                for i, j in enumerate(feats):
                    row[i] = number(fields[j])
                X.append(row)
                if ci is not None:
                    j = ci
                    cs.append(int64(fields[ci]))
            except ValueError as err:  # number's and int64's reason (no InputError is raised inside)
                raise refused("data", path, f": row {line}, column {head[j]!r}: {err}") from None
            if len(X) * len(feats) > MAX_ELEMENTS:
                raise refused("data", path, f"has more than {MAX_ELEMENTS} entries (at row {line}): at most {MAX_ELEMENTS} are accepted")
    if not X:
        raise refused("data", path, "has a header but no rows: a header row and at least one data row are needed")
    return np.vstack(X), np.array(ys, dtype=float), (np.array(cs, dtype=np.int64) if ci is not None else None)


def check_separable(X, y, capped: bool = False) -> dict:
    """Refuse data no network can fit (a point with both labels); report linear separability. ``capped`` (a time cap on
    a large sample, n d >= WITNESS_SIZE): where an interpolating affine map proves separability, the hard-margin SVM (a
    cone program: 11.7 s of a 20 s cap at n = d = 1000) is not solved, and the report says so."""
    from ibcheck.solvers.svm import hard_margin_svm  # heavy: cvxpy (loaded on first use)

    _, inv = np.unique(X, axis=0, return_inverse=True)
    for g in np.unique(inv):
        if len(set(y[inv == g])) > 1:
            raise InputError("the data are not separable: the same input appears with both labels, so (P) is infeasible")
    if capped and X.size >= WITNESS_SIZE and _separating_witness(X, y):
        return {"linearly_separable": True, "svm_status": "not solved (under the time cap): separability proven by an affine map "
                "that interpolates the labels", "svm_margin": None}
    svm = hard_margin_svm(X, y, bias=True)
    return {"linearly_separable": svm.separable, "svm_status": svm.status, "svm_margin": svm.margin}


WITNESS_SIZE = 100_000  # entries of X from which a capped search proves separability by a witness before solving the SVM


def _separating_witness(X: np.ndarray, y: np.ndarray) -> bool:
    """Is ``y_i (w . x_i + b) > 0`` for the least-squares solution of ``[X 1] (w, b) = y``, beyond the products' rounding
    bound ((d + 2) eps sum_j |x_ij w_j| + |b|)? A proof of linear separability where it holds (an interpolation exists
    wherever [X 1] has full row rank, n <= d + 1 in general position)."""
    A = np.hstack([X, np.ones((len(X), 1))])
    w, *_ = np.linalg.lstsq(A, y, rcond=None)
    if not np.all(np.isfinite(w)):
        return False
    m = y * (A @ w)
    bound = (A.shape[1] + 1) * np.finfo(float).eps * (np.abs(A) @ np.abs(w))
    return bool(np.all(m > bound))


@dataclass(frozen=True)
class _Data:
    X: np.ndarray
    y: np.ndarray
    cluster: np.ndarray | None
    means: np.ndarray | None = None
    J_plus: tuple = ()
    sampler: object = None


def _dataset(cfg: KKTSearchConfig) -> _Data:
    if cfg.data == "arrays":
        assert cfg.X is not None and cfg.y is not None
        return _Data(cfg.X, cfg.y, cfg.cluster)
    ds = clusters(cfg.d, cfg.k, cfg.n, cfg.sigma, seed=cfg.seed) if cfg.data == "clusters" else sphere(cfg.d, cfg.n, seed=cfg.seed)
    return _Data(ds.X, ds.y, ds.cluster if ds.means is not None else None, ds.means, tuple(ds.J_plus or ()), ds)


GD_START_SHARE = 0.25  # of the time cap left when the trained GD start begins: the most it may take


def _gd_start(cfg: KKTSearchConfig, seconds: float | None = None):
    """A GD-trained network (loss-based schedule, exponential loss, width ``cfg.width``) on the generated data: one
    more start (the user's own arrays get the engine's own GD starts only), stopped after ``seconds`` if given."""
    from ibcheck.simulate.substrate.models import ModelConfig  # heavy: torch (loaded on first use)
    from ibcheck.simulate.substrate.trainer import TrainConfig  # heavy: torch (loaded on first use)
    from ibcheck.simulate.substrate.training import DataConfig, RunConfig, run  # heavy: torch (loaded on first use)

    data = cfg.data if cfg.data in ("clusters", "sphere") else "clusters"
    rc = RunConfig(setting="two-layer", data=DataConfig(kind=data, d=cfg.d, k=cfg.k, n=cfg.n, sigma=cfg.sigma, seed=cfg.seed, n_test=10),
                   model=ModelConfig("two-layer", width=cfg.width, bias=cfg.bias, init_scale=1.0),
                   train=TrainConfig(steps=2000, lr=0.1, loss="exp", reduction="sum", schedule="loss-based", progress=False,
                                       max_seconds=seconds))
    return run(rc).networks[0]


@dataclass(frozen=True)
class KKTPoints(Result):
    """The engine's candidates on the dataset: each with its certificate residual, value, the distinct point it is,
    whether it is the global optimum (``include_global``), and its robustness (universal flip rate at ``flip_norm``,
    median attack radius).

    ``candidates``: one row per candidate (every start polished and certified: many are copies of one point, some
    are no KKT point); ``networks``: the candidates' networks, in the same order; ``points``: one network per distinct
    certified KKT point (what "the KKT points" means). In ``kkt.json`` and ``points.csv`` the rows are the candidates
    (their ``point`` says which distinct point each is)."""

    name: ClassVar[str] = "kkt"
    config: KKTSearchConfig
    separability: dict
    candidates: tuple[dict, ...]
    distinct: int
    global_optimum: object | None  # GlobalOptimum
    networks: tuple
    flip_norm: float
    search: object = None  # the engine's KKTSearch
    scale_note: str | None = None  # features far from unit scale (:func:`scale_note`)

    @property
    def points(self) -> tuple:
        """One network per distinct certified KKT point (the first candidate that reached it), in the points' order.

        Pitfall avoided: ``networks`` holds one network per candidate (70 for one point, some of width 0), and
        ``networks[0]`` read as "the first KKT point" was whatever the first start gave."""
        first: dict[int, object] = {}
        for row, net in zip(self.candidates, self.networks):
            if row.get("point") is not None and row.get("is_kkt"):
                first.setdefault(int(row["point"]), net)
        return tuple(first[i] for i in sorted(first))

    def as_json(self) -> dict:
        c = self.config
        g = self.global_optimum
        s = self.search
        own_k = c.k if c.data == "clusters" else (len(np.unique(c.cluster)) if c.cluster is not None else None)
        return {"setting": c.data, "d": c.d, "k": own_k, "n": c.n, "width": c.width if c.data != "arrays" else None,
                "gd_widths": sorted(set(getattr(s, "widths", ()))) if s is not None else [],
                "saturation": saturation_text(s, _objective_name(c), c.time) if s is not None else None, "seed": c.seed, **clean(self.separability),
                "policy": {"certified_at": POINT_TOL, "same_point_rtol": 1e-3},
                "engine": clean({k: v for k, v in s.as_json().items() if k != "candidates"}) if s is not None else None,  # type: ignore[attr-defined]
                "points": [clean(p) for p in self.candidates], "distinct_kkt_points_by_function": self.distinct,
                "families": int(getattr(s, "family_count", 0)) if s is not None else None,
                "global": clean(g.as_json()) if g is not None else None,  # type: ignore[attr-defined]
                "scale_note": self.scale_note}

    def heading(self) -> str:
        c, g = self.config, self.global_optimum
        gt = ("" if g is None else "; " + g.heading()) + (f"; {self.scale_note}" if self.scale_note else "")  # type: ignore[attr-defined]
        if self.search is not None:
            return (f"{len(self.candidates)} candidates on {c.data} d={c.d} n={c.n}, certified at a relative residual of "
                    f"{POINT_TOL:g}: {saturation_text(self.search, _objective_name(c), c.time)}{gt}")
        return (f"{len(self.candidates)} candidates on {c.data} d={c.d} n={c.n}: {self.distinct} distinct KKT point(s) "
                f"(certified at a relative residual of {POINT_TOL:g}){gt}")

    def table(self) -> list[dict]:
        return [{k: p.get(k) for k in ("start", "is_kkt", "point", "is_global", "value", "stationarity_residual", "programs",
                                       "universal_flip_rate", "radius_median", "trace")} for p in self.candidates]

    def figure(self):
        """Value of (P) against the universal flip rate, one dot per candidate."""
        pts = [p for p in self.candidates if p.get("value") is not None and p.get("universal_flip_rate") is not None]
        if not pts:
            return None
        fig, ax = new_figure()
        for p in pts:
            ax.scatter(p["value"], p["universal_flip_rate"], marker="o" if p["is_kkt"] else "x", color="tab:blue" if p["is_kkt"] else "tab:red")
        g = self.global_optimum
        if g is not None and getattr(g, "certified", False):
            ax.axvline(g.value, ls="--", color="gray", label="global optimum")  # type: ignore[attr-defined]
            ax.legend(fontsize=7)
        ax.set_xlabel("½‖θ‖² at unit margin (o: KKT point, x: candidate)")
        ax.set_ylabel(f"universal flip rate at {self.flip_norm:.3g}")
        c = self.config
        # a short title (the whole heading, with its scale note, ran past both edges of the figure; it is in kkt.json)
        ax.set_title(f"KKT engine on {c.data} d={c.d} n={c.n}: {self.distinct} distinct point(s) of {len(self.candidates)} "
                     f"candidates (certified at {POINT_TOL:g})" + ("\nfeatures far from unit scale: see scale_note" if self.scale_note else ""),
                     fontsize=8)
        return fig

    def extra_files(self, directory: str) -> dict[str, str]:
        from ibcheck.simulate.substrate.rundir import write_csv  # heavy: torch (loaded on first use)

        files = {"csv": os.path.join(directory, "points.csv"), "npz": os.path.join(directory, "networks.npz")}
        write_csv(files["csv"], [clean(p) for p in self.candidates])
        save_npz(files["npz"], **{f"p{i}_{k}": v for i, net in enumerate(self.networks) for k, v in net.to_arrays().items()})
        return files


def saturation_text(search, objective: str = "the objective", cap: float | None = None) -> str:
    """How far a search got, in words: its points and near-copy families ("more may exist": never "every KKT point was
    found", never "saturated" from the unseen estimate), its starts, the Good-Turing estimate, and why it stopped (the
    record rule of ``objective``'s running extremum, the estimate's level, a cap or the time cap)."""
    u = float(getattr(search, "unseen", float("nan")))
    n = int(getattr(search, "gd_starts", 0))
    total = len(getattr(search, "order", ()) or ()) or n
    b = getattr(search, "budget")
    stop = getattr(search, "stop", "")
    pts, fams = int(getattr(search, "distinct", 0)), int(getattr(search, "family_count", 0))
    head = f"{pts} point(s) in {fams} famil{'y' if fams == 1 else 'ies'} (outputs within 2%); more may exist"
    last = search.last_record() if hasattr(search, "last_record") else None
    running = list(getattr(search, "running_max", ()) or ())
    top = f"{running[-1]:.4g}" if running and running[-1] == running[-1] else "none"
    if stop == "stopped":
        why = (f"the running extremum of {objective} ({top}) stopped: no record beyond 0.5% in the last half of "
               f"{total} starts (its last record at start {last})")
    elif stop == "unseen":
        why = (f"the GD starts ended where the unseen estimate fell to {b.saturation:g} (it sees only basins reached more "
               "than once: the points may still grow with depth)")
    elif stop == "cap":
        why = (f"stopped at the cap of {total} starts with the running extremum of {objective} ({top}) still rising (last "
               f"record at start {last})" if running else f"stopped at the cap of {b.gd_max or b.gd} GD starts")
    elif stop == "time":
        spent = f" ({b.seconds:.3g} s of it left for the search after the imports, checks and GD start)" if cap is not None and \
            b.seconds is not None and b.seconds < cap else ""
        why = f"stopped at the time cap of {cap if cap is not None else b.seconds:g} s{spent} after {total} starts: the search is not complete"
    else:
        why = "no GD start ran" if stop == "no GD start" else "not recorded"
    return f"{head}; {total} starts ({n} GD), unseen estimate {u:.3f}: {why}" if u == u else f"{head}; {why}"


OBJECTIVES = ("margin", "flip")


def _objective_name(cfg: KKTSearchConfig) -> str:
    return {"margin": "the normalized margin", "flip": "the flip norm"}.get(cfg.objective or "", "the objective")


def user_objective(cfg: KKTSearchConfig, X: np.ndarray, y: np.ndarray, ds):
    """The search's objective (``cfg.objective``), a function of a KKT point at unit margin, or None: ``margin`` the
    normalized margin ``min_i y_i f(x_i) / ||theta||^2`` (largest: the global max-margin direction), ``flip`` the norm
    along ``-y_i v`` that flips every training point (``v``: ``cfg.direction``, else the cluster means' universal
    direction, or VYS22's ``sum_i y_i x_i`` without clusters; a ray that never flips counts at the largest finite radius)."""
    if cfg.objective is None:
        return None
    if cfg.objective == "margin":
        def margin(net) -> float:
            th = net.params()
            return float((y * net.forward(X)).min() / float(th @ th))
        return margin
    if cfg.direction is not None:
        v = np.asarray(cfg.direction, float)
    elif ds.means is not None:
        v = universal_directions("fvbs23", means=ds.means, J_plus=list(ds.J_plus))
    else:
        v = universal_directions("vys22", X_train=X, y_train=y)

    def flip(net) -> float:
        r = universal_radius(net, X, y, v)
        finite = r[np.isfinite(r)]
        return float(r.max()) if len(finite) == len(r) else float(finite.max() if len(finite) else 0.0)
    return flip


SCALE_LOW, SCALE_HIGH = -12, 30  # features below 2^-12 are searched at unit scale and continued (:func:`_engine`); above 2^30 a note


def scale_exponent(X: np.ndarray) -> int | None:
    """The exponent e of the features' largest |x| (in [2^(e-1), 2^e)), or None for data all 0 or not finite."""
    top = float(np.max(np.abs(X))) if X.size else 0.0
    return int(np.frexp(top)[1]) if top != 0.0 and math.isfinite(top) else None


def scale_note(X: np.ndarray, distinct: int) -> str | None:
    """Why the search's result may depend on the features' scale, where they lie above 2^SCALE_HIGH (largest |x|), or
    None. (Below 2^SCALE_LOW the search runs at unit scale and its points are continued to the data's scale: the note
    is :func:`ibcheck.solvers.kkt.at_scale.search_at_scale`'s.)

    (P) with hidden biases is not scale-equivariant (:mod:`ibcheck.solvers.kkt.extended`). Above 1 the points
    certified at 1e-15 up to 2^20 and at 4e-9 at 2^33, and at 2^66 every cone program failed (Clarabel's absolute
    tolerances; measured 2026-12-04)."""
    e = scale_exponent(X)
    if e is None or e <= SCALE_HIGH:
        return None
    note = (f"the features' scale is about 2^{e} (largest |x| = {float(np.max(np.abs(X))):.3g}): (P) with hidden biases is "
            "not scale-equivariant (the bias column stays at 1), and the search's cone programs have absolute tolerances "
            "(at 2^66 every one failed in a measured case)")
    if distinct == 0:
        note += (f"; that nothing certified here is likely the scale's doing, not a proof that (P) has no KKT point: X * 2^{-e} "
                 "searches (P) at unit scale, a different problem")
    return note


def _left(cap: float | None, t0: float) -> float | None:
    """Seconds left of the time cap ``cap`` counted from ``t0`` (None: no cap; 0 once it has passed)."""
    return None if cap is None else max(0.0, cap - (time.perf_counter() - t0))


def _net_key(net) -> bytes:
    """A network's exact identity: its shapes and parameters, bit for bit (the radii are deterministic in them)."""
    return repr((net.W.shape, net.b is None)).encode() + net.params().tobytes()


def _robustness_setup(ds: _Data, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(test points, their labels, the universal direction, the flip norm) each certified network is measured at: 200
    fresh points from the sampler (the user's own data: its training points), FVBS23's direction with clusters' means,
    VYS22's otherwise, at sqrt(d/k) or sqrt(d/n) (the user's own data: times its entries' root mean square)."""
    X, y = ds.X, ds.y
    if ds.sampler is not None:
        Xte, yte = ds.sampler.sample(200, stream("kkt-test-points", seed))  # type: ignore[attr-defined]
    else:
        Xte, yte = X, y  # the user's own data: robustness on the training points themselves
    # the user's own data: the norm in their units (times the entries' root mean square, taken at unit scale), so that
    # the same points at 1e-30 and 1e-150 have the same flip rate (at sqrt(d/n) itself every point at 1e-30 flipped)
    top = float(np.max(np.abs(X))) if X.size else 0.0
    unit = 1.0 if ds.sampler is not None or top == 0.0 else float(np.sqrt(np.mean(np.square(X / top)))) * top
    if ds.means is not None:
        return (Xte, yte, universal_directions("fvbs23", means=ds.means, J_plus=list(ds.J_plus)),
                math.sqrt(X.shape[1] / len(ds.means)) * unit)
    return Xte, yte, universal_directions("vys22", X_train=X, y_train=y), math.sqrt(X.shape[1] / len(X)) * unit


def _engine(X, y, cluster, starts: tuple, budget, seed: int, progress, status, objective, e: int | None):
    """The engine's search; below 2^SCALE_LOW the search at unit scale with its points continued to the data's scale and
    certified in extended precision (:mod:`ibcheck.solvers.kkt.at_scale`)."""
    if e is not None and e < SCALE_LOW:
        from ibcheck.solvers.kkt.at_scale import search_at_scale  # heavy: cvxpy and mpmath (loaded on first use)

        return search_at_scale(X, y, e, cluster, starts, budget, seed=seed, progress=progress, status=status, objective=objective)
    from ibcheck.solvers.kkt.engine import search  # heavy: cvxpy (loaded on first use)

    return search(X, y, cluster, starts, budget, seed=seed, progress=progress, status=status, objective=objective)


def kkt_points(cfg: KKTSearchConfig, progress: bool = False, started: float | None = None) -> KKTPoints:
    """The KKT engine on the dataset of ``cfg`` (a GD-trained network as one more start), each point compared with the
    global optimum when ``include_global``, and measured for robustness."""
    from ibcheck.solvers.kkt.engine import Budget  # heavy: cvxpy (loaded on first use)
    from ibcheck.solvers.kkt.global_opt import NotProven, TooLarge, dual_check, global_max_margin  # heavy: cvxpy (loaded on first use)

    t0 = time.perf_counter() if started is None else started  # the cap counts from the call: imports, checks, GD start, radii
    ds = _dataset(cfg)
    X, y = ds.X, ds.y
    sep = check_separable(X, y, capped=cfg.time is not None)
    starts = []
    left = _left(cfg.time, t0)
    if cfg.data != "arrays" and left != 0.0:
        # under a time cap the trained start gets a quarter of what is left (2000 steps took 6 s of a 20 s cap at
        # n = d = 1000, 24 s on a contended machine: the engine then had none); it stops there and counts if it separates
        gd = _gd_start(cfg, None if left is None else GD_START_SHARE * left)
        if (y * gd.forward(X)).min() > 0:
            starts.append(("gd", gd))
    budget = Budget(gd=cfg.starts, programs=cfg.programs, enumerate=cfg.enumerate, width=None if ds.cluster is not None else cfg.width,
                    gd_max=max(cfg.max_starts, cfg.starts), saturation=cfg.saturation, seconds=_left(cfg.time, t0), covers=cfg.covers,
                    starts_max=cfg.max_starts if cfg.objective else None)
    bar = None
    if progress:
        from tqdm import tqdm  # heavy: tqdm (loaded on first use)

        # a bar only on a terminal: elsewhere (a log, a pipe) its last erased line ran into the results
        bar = tqdm(desc="KKT engine: patterns", unit="pattern", leave=False, disable=not sys.stderr.isatty())

    def status(p) -> None:
        if bar is not None:
            bar.set_postfix_str(f"starts {p.starts}, points {p.points}, families {p.families}"
                                + (f", extremum {p.extremum:.4g}" if p.extremum == p.extremum else f", unseen {p.unseen:.3f}"),
                                refresh=False)
    e = scale_exponent(X)
    res = _engine(X, y, ds.cluster, tuple(starts), budget, cfg.seed, bar.update if bar is not None else None, status,
                  user_objective(cfg, X, y, ds), e)
    if bar is not None:
        bar.close()
    glob = None
    if cfg.include_global:
        cands = [c.net for c in res.candidates if c.net.width and c.solver_status != "not feasible"]
        glob = global_max_margin(X, y, bias=cfg.bias, max_patterns=cfg.max_patterns, candidates=cands, seed=cfg.seed)
    Xte, yte, v, norm = _robustness_setup(ds, cfg.seed)
    points = []
    robust: dict[bytes, tuple[float, float]] = {}  # (flip rate, median radius) per distinct network (44 certified, 15 distinct at d = 12)
    for c in res.candidates:
        feasible = bool(c.net.width) and c.solver_status != "not feasible"
        qmin = float((y * c.net.forward(X)).min()) if feasible else None
        theta = c.net.params()
        row = {"start": c.origin, "solver_status": c.solver_status, "stationarity_residual": c.residual,
               "complementary_slackness": c.slackness, "complementary_slackness_rel": c.slackness, "min_margin": qmin,
               "normalized_margin": (qmin / float(theta @ theta)) if qmin is not None and theta.size else None,
               "value": c.value, "programs": c.programs, "trace": c.trace,
               "point": c.point, "is_kkt": c.certified, "ties": c.ties, "is_global": None, "dual_check_max": None, "gap": None,
               "universal_flip_rate": None, "flip_norm": norm, "radius_median": None}
        key = _net_key(c.net) if c.certified else b""  # candidates that polished to one cone optimum: one network, bit for bit
        if c.certified and key not in robust and _left(cfg.time, t0) == 0.0:
            row["robustness_note"] = f"not measured: past the time cap ({cfg.time:g} s)"
        elif c.certified:
            if key not in robust:
                uni = universal_radius(c.net, Xte, yte, v)
                robust[key] = (flip_rate(uni, norm), float(np.median(np.minimum(attack_radius(c.net, Xte, yte)["attack"], uni))))
            row["universal_flip_rate"], row["radius_median"] = robust[key]
            if glob is not None and glob.status == "optimal":
                row["gap"] = c.value / glob.value - 1
                try:
                    from ibcheck.solvers.kkt.certificate import kkt_certificate  # heavy: cvxpy (loaded on first use)

                    lam = kkt_certificate(c.net, X, y).lam
                    row["dual_check_max"] = dc = dual_check(X, y, lam, bias=cfg.bias, max_patterns=max(cfg.max_patterns, 5000))
                    row["is_global"] = bool(dc <= 1 + 1e-4)
                except (TooLarge, NotProven) as err:  # recorded: too large to be exact, or its solver did not prove it
                    row["dual_check_note"] = f"not checked: {err}"
        points.append(clean(row))
    note = res.notes[-1] if e is not None and e < SCALE_LOW else scale_note(X, res.distinct)
    return KKTPoints(cfg, sep, tuple(points), res.distinct, glob, tuple(c.net for c in res.candidates), norm, res, note)


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


__all__ = ["KKTSearchConfig", "KKTPoints", "KKTTrajectory", "kkt_points", "kkt_trajectory", "check_separable", "load_data_file"]
