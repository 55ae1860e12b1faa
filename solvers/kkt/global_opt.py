"""The global optimum of (P) on small instances, and the dual check of global optimality.

Convex reformulation (Pilanci & Ergen) for ``f(x) = sum_j a_j ReLU(<w~_j, x~>)`` with the
augmented inputs ``x~ = [x, 1]`` (hidden biases) or ``x~ = x``: over the activation patterns
``D = diag(1[X~ u >= 0])`` of the data,

    minimize    sum_D ||v_D|| + ||u_D||
    subject to  y_i sum_D D_ii <x~_i, v_D - u_D> >= 1,     (2D - I) X~ v_D >= 0,  (2D - I) X~ u_D >= 0,

one SOCP (Clarabel). Its optimum equals min (P) = min 1/2 ||theta||^2 (balanced neurons have
1/2 (a^2 + ||w~||^2) = |a| ||w~||) when the width is at least the number of nonzero blocks.
Dual check: a KKT point with multipliers lambda is globally optimal iff
``max_{||u|| <= 1} |sum_i lambda_i y_i ReLU(<x~_i, u>)| <= 1``, one small SOCP per pattern.
"""
from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import ClassVar

import cvxpy as cp
import numpy as np
from scipy.optimize import linprog

from ibcheck.errors import InputError
from ibcheck.theory.result import Result

from ..networks import TwoLayerReLU

DUAL_PATTERNS = 5000  # the dual check enumerates the support points' arrangement up to this many patterns


class TooLarge(InputError):
    """An instance whose pattern count is too large to enumerate."""


class NotProven(RuntimeError):
    """A step of a proof whose solver did not end ``optimal`` (e.g. ``optimal_inaccurate``): what rests on it is not
    certified, and the result says so instead of failing."""


def augment(X: np.ndarray, bias: bool) -> np.ndarray:
    return np.hstack([X, np.ones((len(X), 1))]) if bias else np.asarray(X, float)


def cover_count(n: int, p: int) -> int:
    """Cover's count of the regions of n hyperplanes through 0 in general position in R^p."""
    return 2 * sum(math.comb(n - 1, k) for k in range(p))


def _hyperplanes(Xt: np.ndarray, tol: float = 1e-12) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct hyperplanes of the rows: (R, index, sign) with ``x~_i = c_i sign_i R[index_i]``, c_i > 0.

    Zero rows get index -1 (ReLU(0) = 0 whatever the pattern says). Duplicate, positively or
    negatively parallel rows share one hyperplane: their signs are tied, which is exactly what a
    pattern enumeration that assumes general position gets wrong.
    """
    norms = np.linalg.norm(Xt, axis=1)
    reps: list[np.ndarray] = []
    index = np.full(len(Xt), -1)
    sign = np.ones(len(Xt))
    for i, (x, nx) in enumerate(zip(Xt, norms)):
        if nx <= tol * max(1.0, float(norms.max())):
            continue
        u = x / nx
        for h, r in enumerate(reps):
            c = float(u @ r)
            if abs(abs(c) - 1.0) <= 1e-10:
                index[i], sign[i] = h, (1.0 if c > 0 else -1.0)
                break
        else:
            index[i] = len(reps)
            reps.append(u)
    R = np.array(reps) if reps else np.zeros((0, Xt.shape[1]))
    return R, index, sign


def _strict_witness(A: np.ndarray) -> np.ndarray | None:
    """A point u with A u >= 1 (rows: signed normals), or None when the open cone {A u > 0} is empty."""
    res = linprog(np.zeros(A.shape[1]), A_ub=-A, b_ub=-np.ones(len(A)), bounds=[(None, None)] * A.shape[1], method="highs")
    return res.x if res.status == 0 else None


def _regions_incremental(R: np.ndarray, max_patterns: int) -> list[tuple[float, ...]]:
    """Every full-dimensional region of the central arrangement of R's rows, exact in any position.

    Hyperplanes are added one at a time; each region splits in two, or keeps one side. A region
    keeps an interior witness, so one side is known from the witness and only the other needs an
    LP. Degenerate arrangements (three lines through a point, ...) are handled like any other.
    """
    m, p = R.shape
    regions: list[tuple[list[float], np.ndarray | None]] = [([], None)]
    for h in range(m):
        r = R[h]
        nxt: list[tuple[list[float], np.ndarray | None]] = []
        for signs, u in regions:
            A = np.array([sg * R[i] for i, sg in enumerate(signs)]) if signs else np.zeros((0, p))
            t = float(r @ u) if u is not None else 0.0
            for sg in (1.0, -1.0):
                if u is not None and sg * t > 1e-12 * max(1.0, float(np.linalg.norm(u))):
                    nxt.append((signs + [sg], u))
                    continue
                w = _strict_witness(np.vstack([A, sg * r])) if len(A) else sg * r
                if w is not None:
                    nxt.append((signs + [sg], w))
        regions = nxt
        if len(regions) > max_patterns:
            raise TooLarge(f"the instance has more than {max_patterns} activation patterns (found {len(regions)} with "
                           f"{h + 1} of {m} distinct hyperplanes in dimension {p}): use fewer points or dimensions, or a larger --max-patterns")
    return [tuple(sg) for sg, _ in regions]


def _regions_general_position(R: np.ndarray) -> set[tuple[float, ...]]:
    """Candidate regions from the extreme rays where p - 1 hyperplanes meet (complete in general position)."""
    m, p = R.shape
    if p == 1:
        return {tuple(np.sign(R[:, 0])), tuple(-np.sign(R[:, 0]))}
    cands = set()
    for S in itertools.combinations(range(m), p - 1):
        _, sv, Vt = np.linalg.svd(R[list(S)])
        if sv[-1] <= 1e-10 * sv[0]:
            continue  # the hyperplanes of S do not meet in a line: not general position
        base = np.sign(R @ Vt[-1])
        for sgn in (1.0, -1.0):
            b = sgn * base
            for free in itertools.product((-1.0, 1.0), repeat=p - 1):
                sv_ = b.copy()
                sv_[list(S)] = free
                if not (sv_ == 0).any():
                    cands.add(tuple(sv_))
    return cands


def activation_patterns(Xt: np.ndarray, max_patterns: int = 5000, verify: bool = True) -> np.ndarray:
    """Every activation pattern of the central arrangement {x~_i^T u = 0}: an (N, n) 0/1 array.

    Exact in any position. Rows are first reduced to distinct hyperplanes (zero rows dropped,
    duplicate and parallel rows tied). In general position each region has an extreme ray where
    p - 1 hyperplanes meet, and Cover's count C(m, p) says when that construction found them all;
    otherwise (a degenerate arrangement, or m < p where every sign vector is a region) the regions
    are built one hyperplane at a time with an LP per new side (:func:`_regions_incremental`).
    """
    n, p = Xt.shape
    R, index, sign = _hyperplanes(Xt)
    m = len(R)
    if m == 0:
        return np.zeros((1, n))
    bound = cover_count(m, p)
    rank = int(np.linalg.matrix_rank(R))
    if bound > max_patterns and rank == p:
        raise TooLarge(f"the instance has up to {bound} activation patterns (Cover's count for {m} distinct hyperplanes in "
                       f"dimension {p}); at most {max_patterns} can be enumerated: use fewer points or dimensions, "
                       "or a larger --max-patterns")
    regions = None
    if rank == m:
        # linearly independent hyperplanes: every sign vector is a region (n <= d + 1 points in general position)
        if 2 ** m > max_patterns:
            raise TooLarge(f"the instance has {2 ** m} activation patterns ({m} independent hyperplanes: every sign pattern "
                           f"is realizable); at most {max_patterns} can be enumerated: use fewer points, or a larger --max-patterns")
        regions = [tuple(1.0 if (k >> i) & 1 else -1.0 for i in range(m)) for k in range(2 ** m)]
    elif m >= p and rank == p:
        cands = _regions_general_position(R)
        if verify:
            cands = {s for s in cands if _strict_witness(np.array(s)[:, None] * R) is not None}
        if len(cands) == bound:
            regions = sorted(cands)  # Cover's count reached: nothing is missing
    if regions is None:
        regions = _regions_incremental(R, max_patterns)
    out = np.zeros((len(regions), n))
    for r, sg in enumerate(regions):
        sg = np.asarray(sg)
        live = index >= 0
        out[r, live] = (sign[live] * sg[index[live]] > 0).astype(float)
    return np.unique(out, axis=0)


@dataclass(frozen=True)
class GlobalOptimum(Result):
    value: float  # min 1/2 ||theta||^2 of (P) when certified; else the value of a feasible network (an upper bound)
    status: str  # "optimal" only when certified; "upper bound (not certified)"; a solver status otherwise
    n_patterns: int
    n_blocks: int  # nonzero blocks = the width needed
    net: TwoLayerReLU | None
    certified: bool = False
    method: str = "enumeration"  # or "column generation"
    dual_max: float | None = None  # the dual check of the program's own multipliers (<= 1: certified)
    note: str = ""
    lam: np.ndarray | None = None

    name: ClassVar[str] = "global_max_margin"

    def as_json(self) -> dict:
        return {"value": self.value, "status": self.status, "certified": self.certified, "method": self.method,
                "n_patterns": self.n_patterns, "n_blocks": self.n_blocks, "dual_check_max": self.dual_max, "note": self.note}

    def heading(self) -> str:
        what = "certified global optimum" if self.certified else f"NOT certified ({self.status})"
        return f"global max margin of (P): {what}, value {self.value:.6g}"

    def table(self) -> list[dict]:
        return [self.as_json()]


def _solve_patterns(Xt: np.ndarray, y: np.ndarray, D: np.ndarray):
    """The convex program over the patterns D: (status, value, V, U, multipliers of the margin constraints)."""
    P, n = D.shape
    V = cp.Variable((P, Xt.shape[1]))
    U = cp.Variable((P, Xt.shape[1]))
    XV = Xt @ V.T  # (n, P)
    XU = Xt @ U.T
    S: np.ndarray = 2 * D.T - 1  # (n, P)
    f = cp.sum(cp.multiply(D.T, XV - XU), axis=1)
    margin = cp.multiply(y, f) >= 1
    cons = [margin, cp.multiply(S, XV) >= 0, cp.multiply(S, XU) >= 0]
    prob = cp.Problem(cp.Minimize(cp.sum(cp.norm(V, 2, axis=1)) + cp.sum(cp.norm(U, 2, axis=1))), cons)
    for tol in (1e-10, 1e-8, None):  # tight first; fall back to Clarabel's defaults
        opts = {} if tol is None else {"tol_gap_abs": tol, "tol_gap_rel": tol, "tol_feas": tol, "max_iter": 500}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                prob.solve(solver=cp.CLARABEL, **opts)
            except cp.SolverError:
                continue
        if prob.status == cp.OPTIMAL:
            break
    if prob.status != cp.OPTIMAL:
        return str(prob.status), float("nan"), None, None, None
    return "optimal", float(prob.value), V.value, U.value, np.maximum(np.asarray(margin.dual_value, float), 0.0)


def _network(Vv, Uv, value, bias, block_tol) -> TwoLayerReLU:
    neurons = []
    for blocks, sign in ((Vv, 1.0), (Uv, -1.0)):
        for v in blocks:
            nv = np.linalg.norm(v)
            if nv > block_tol * max(1.0, value):
                neurons.append((v / np.sqrt(nv), sign * np.sqrt(nv)))
    Wt = np.array([w for w, _ in neurons])
    a = np.array([s for _, s in neurons])
    return TwoLayerReLU(W=Wt[:, :-1] if bias else Wt, a=a, b=Wt[:, -1] if bias else None)


def _seed_patterns(Xt: np.ndarray, y: np.ndarray, candidates, rng: np.random.Generator, extra: int) -> np.ndarray:
    """Starting patterns for column generation: the candidates' neurons, each point's own direction, random directions."""
    rows = []
    for net in candidates:
        Wt = np.concatenate([net.W, net.b[:, None]], axis=1) if net.b is not None else net.W
        if Wt.shape[1] == Xt.shape[1]:
            rows += [(Xt @ w >= 0).astype(float) for w in Wt]
    rows += [(Xt @ x >= 0).astype(float) for x in Xt]
    rows += [(Xt @ u >= 0).astype(float) for u in rng.standard_normal((extra, Xt.shape[1]))]
    return np.unique(np.array(rows), axis=0)


def global_max_margin(X: np.ndarray, y: np.ndarray, bias: bool = True, max_patterns: int = 5000, block_tol: float = 1e-6,
                      candidates=(), generation: bool = True, max_rounds: int = 40, seed: int = 0) -> GlobalOptimum:
    """The global optimum of (P): the convex program over every activation pattern, certified by the dual check.

    * When the patterns can be enumerated (:func:`activation_patterns`, exact in any position),
      the program is solved once over all of them and its own multipliers pass the dual check.
    * Beyond ``max_patterns`` (column generation): the program is solved on a subset of patterns
      (the candidates' neurons, each point's direction, random ones); the dual check of its
      multipliers, exact over the arrangement of the support points only (the others have
      lambda = 0; up to max(max_patterns, 5000) patterns), finds the most violated dual constraints, whose patterns are added, until the
      check certifies (max <= 1) or ``max_rounds`` pass. A restricted program's value is that of a
      feasible network: an upper bound, reported as such unless certified.
    * A feasible candidate network (scaled to unit margin) with a smaller value than the program's
      means the patterns were incomplete: never reported as optimal.
    """
    Xt_raw = augment(X, bias)
    y = np.asarray(y, float)
    # (P) on the rows x~ (bias-free in x~, degree 2 in theta) is exactly covariant under x~ -> x~/s:
    # value(X~) = value(X~/s)/s and theta = theta_s/sqrt(s). The solver's tolerances are absolute, so
    # it works on rows of largest norm 1 and the answer is scaled back (pitfall: X*1e-10 or X*1e7).
    scale = float(np.linalg.norm(Xt_raw, axis=1).max(initial=0.0))
    if scale == 0.0:
        return GlobalOptimum(float("nan"), "infeasible", 0, 0, None, False, "enumeration", None,
                             "every input is 0: f(0) = 0 for a network without biases, so no margin reaches 1")
    Xt = Xt_raw / scale
    rng = np.random.default_rng(seed)
    try:
        D = activation_patterns(Xt, max_patterns)
        method = "enumeration"
    except TooLarge:
        if not generation:
            raise
        D = _seed_patterns(Xt, y, candidates, rng, extra=4 * Xt.shape[1])
        method = "column generation"
    status, value, Vv, Uv, lam = _solve_patterns(Xt, y, D)
    rounds, dmax, note = 0, None, ""
    while status == "optimal":
        try:
            dmax, cuts = _dual_max(Xt, y, lam, max(max_patterns, DUAL_PATTERNS), return_cuts=True)
        except (TooLarge, NotProven) as err:
            note = f"the dual check cannot be made exact: {err}"
            dmax = None
            break
        if dmax <= 1 + 1e-6 or method == "enumeration":
            break
        new = np.unique(np.vstack([D] + [(Xt @ u >= 0).astype(float)[None, :] for u in cuts]), axis=0)
        rounds += 1
        if len(new) == len(D) or rounds > max_rounds:
            note = f"column generation stopped after {rounds} rounds with the dual check at {dmax:.6g} > 1"
            break
        D = new
        status, value, Vv, Uv, lam = _solve_patterns(Xt, y, D)
    if status != "optimal":
        note = "the convex program over the patterns found so far did not solve" if method != "enumeration" else ""
        if status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE) and not _provably_infeasible(Xt_raw, y):
            status, note = "not proven", ("the solver reported infeasible, but no two inputs of opposite labels are parallel "
                                          "(and none is 0), so (P) is feasible: the inputs differ by less than the solver "
                                          "resolves relative to their norm; rescale or center X")
        return GlobalOptimum(float("nan"), status, len(D), 0, None, False, method, None, note)
    net = _network(Vv, Uv, value, bias, block_tol)  # on the unit-norm rows; scaled back below
    value, lam = value / scale, lam / scale  # back to the units of X (see above)
    shrink = 1.0 / math.sqrt(scale)
    net = replace(net, W=net.W * shrink, a=net.a * shrink, b=None if net.b is None else net.b * shrink)
    certified = dmax is not None and dmax <= 1 + 1e-4
    if method == "enumeration" and not certified and dmax is not None:
        note = f"the program's multipliers give a dual check of {dmax:.6g} > 1: solver inaccuracy"
    for c in candidates:
        q = c.margins(X, y)
        if q.min() > 0 and c.degree:
            cv = 0.5 * float(np.sum(c.params() ** 2)) / q.min() ** (2.0 / c.degree)
            if cv < value * (1 - 1e-6) - 1e-9:
                certified = False
                note = (f"a feasible network has value {cv:.8g} < {value:.8g}: the patterns are incomplete, so this is not "
                        "the optimum")
    st = "optimal" if certified else "upper bound (not certified)"
    if method != "enumeration":
        note = (note + "; " if note else "") + f"{len(D)} patterns used after {rounds} round(s) of column generation"
    return GlobalOptimum(value, st, len(D), net.W.shape[0], net, certified, method, dmax, note, lam)


def _provably_infeasible(Xt: np.ndarray, y: np.ndarray) -> bool:
    """(P) is infeasible exactly when some row is 0 or two rows of opposite labels are positively parallel
    (f(c x~) = c f(x~) for c > 0). Decided in exact rational arithmetic on the given floats, not to a
    tolerance: rows [1e-10 x, 1] that float64 rounds to parallel are not, and (P) is feasible there."""
    rows = [[Fraction(float(v)) for v in r] for r in Xt]
    if any(all(v == 0 for v in r) for r in rows):
        return True
    for i in np.flatnonzero(y > 0):
        ri = rows[i]
        a = next(t for t, v in enumerate(ri) if v != 0)
        for j in np.flatnonzero(y < 0):
            c = rows[j][a] / ri[a]
            if c > 0 and all(vj == c * vi for vi, vj in zip(ri, rows[j])):
                return True
    return False


def _dual_max(Xt: np.ndarray, y: np.ndarray, lam: np.ndarray, max_patterns: int, return_cuts: bool = False,
              solver_opts: dict | None = None):
    """``max_{||u|| <= 1} |sum_i lambda_i y_i ReLU(<x~_i, u>)|``, exact: patterns of the support points only
    (rows with lambda_i = 0 contribute nothing). With ``return_cuts``, also every maximizer u of a
    pattern whose value exceeds 1 (the most violated dual constraints)."""
    lam = np.asarray(lam, float)
    support = np.flatnonzero(lam > 1e-9 * max(1.0, float(lam.max(initial=0.0))))
    if len(support) == 0:
        return (0.0, []) if return_cuts else 0.0
    Xs = Xt[support]
    w = lam[support] * y[support]
    D = activation_patterns(Xs, max_patterns)
    c = cp.Parameter(Xt.shape[1])
    sgn = cp.Parameter(len(Xs))
    u = cp.Variable(Xt.shape[1])
    prob = cp.Problem(cp.Maximize(c @ u), [cp.norm(u) <= 1, cp.multiply(sgn, Xs @ u) >= 0])
    best, cuts = 0.0, []
    for pat in D:
        cD = (pat * w) @ Xs
        norm = float(np.linalg.norm(cD))
        if norm <= (1.0 if return_cuts else best) and norm <= best:
            continue  # this region cannot beat the current maximum (nor exceed 1)
        s = 2 * pat - 1
        for sign in (1.0, -1.0):
            direction = sign * cD / norm if norm > 0 else np.zeros_like(cD)
            if norm > 0 and (s * (Xs @ direction) >= 0).all():
                val, arg = norm, direction  # the unconstrained maximizer lies in the cone
            else:
                c.value, sgn.value = sign * cD, s
                prob.solve(solver=cp.CLARABEL, **(solver_opts or {}))
                if prob.status != cp.OPTIMAL:
                    raise NotProven(f"the dual check's SOCP of one pattern ended with status {prob.status}")
                val, arg = float(prob.value), np.asarray(u.value, float)
            best = max(best, val)
            if return_cuts and val > 1 + 1e-6:
                cuts.append(arg)
    return (best, cuts) if return_cuts else best


def dual_check(X: np.ndarray, y: np.ndarray, lam: np.ndarray, bias: bool = True, max_patterns: int = 5000) -> float:
    """``max_{||u|| <= 1} |sum_i lambda_i y_i ReLU(<x~_i, u>)|``: the KKT point is global iff it is <= 1.

    Exact in any position: the maximization runs over the activation patterns of the support
    points (lambda_i > 0) only, enumerated by :func:`activation_patterns`.
    """
    return _dual_max(augment(X, bias), np.asarray(y, float), lam, max_patterns)


def dual_lower_bound(X: np.ndarray, y: np.ndarray, lam: np.ndarray, bias: bool = True, starts: np.ndarray | None = None,
                     iters: int = 50, seed: int = 0) -> float:
    """A lower bound on the dual check ``max_{||u|| <= 1} |sum_i lambda_i y_i ReLU(<x~_i, u>)|`` where the exact check
    (:func:`dual_check`, an enumeration of the support points' patterns) is out of reach: the largest value at the
    points a fixed-pattern ascent visits (u <- the normalized sum over the points u activates, for both signs) from
    the 16 inputs of largest lambda, 16 to 128 Gaussian directions and ``starts`` (rows in the augmented space: a KKT point's
    own neurons reach 1 there, so the bound of a KKT point is about 1 at least). Every visited u is feasible, so a value
    above 1 proves the KKT point is not the global optimum; a value at most 1 proves nothing (a bound, not the max)."""
    Xt = augment(np.asarray(X, float), bias)
    w = np.asarray(lam, float) * np.asarray(y, float)
    rng = np.random.default_rng(seed)
    if Xt.shape[1] > Xt.shape[0]:  # u off the rows' span only adds norm: work in the span's coordinates (exact)
        Q, R = np.linalg.qr(Xt.T)
        Xt = R.T
        starts = None if starts is None else np.asarray(starts, float) @ Q
    top = np.argsort(-np.asarray(lam, float))[:16]
    n_random = int(min(128, max(16, 2048 // Xt.shape[1])))  # many where a start is cheap (small p), 16 beyond
    U = np.vstack([Xt[top], rng.standard_normal((n_random, Xt.shape[1]))] + ([] if starts is None else [np.asarray(starts, float)]))
    best = 0.0
    for sign in (1.0, -1.0):
        Z = U / np.maximum(np.linalg.norm(U, axis=1, keepdims=True), 1e-300)
        for _ in range(iters):
            act = (Xt @ Z.T > 0)  # (n, starts)
            best = max(best, float(np.max(sign * (w @ np.maximum(Xt @ Z.T, 0.0)), initial=0.0)))
            G = sign * ((act * w[:, None]).T @ Xt)  # the gradient on each start's current pattern
            nz = np.linalg.norm(G, axis=1, keepdims=True)
            if not np.any(nz > 0):
                break
            Z = np.where(nz > 0, G / np.maximum(nz, 1e-300), Z)
        best = max(best, float(np.max(sign * (w @ np.maximum(Xt @ Z.T, 0.0)), initial=0.0)))
    return best
