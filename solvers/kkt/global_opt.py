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
from dataclasses import dataclass

import cvxpy as cp
import numpy as np
from scipy.optimize import linprog

from ..networks import TwoLayerReLU


class TooLarge(ValueError):
    """An instance whose pattern count is too large to enumerate."""


def augment(X: np.ndarray, bias: bool) -> np.ndarray:
    return np.hstack([X, np.ones((len(X), 1))]) if bias else np.asarray(X, float)


def cover_count(n: int, p: int) -> int:
    """Cover's count of the regions of n hyperplanes through 0 in general position in R^p."""
    return 2 * sum(math.comb(n - 1, k) for k in range(p))


def _feasible(Xt: np.ndarray, signs: np.ndarray) -> bool:
    """Is the open cone {u : s_i <x~_i, u> > 0} nonempty? (LP: s_i <x~_i, u> >= 1.)"""
    res = linprog(np.zeros(Xt.shape[1]), A_ub=-(signs[:, None] * Xt), b_ub=-np.ones(len(Xt)),
                  bounds=[(None, None)] * Xt.shape[1], method="highs")
    return res.status == 0


def activation_patterns(Xt: np.ndarray, max_patterns: int = 5000, verify: bool = True) -> np.ndarray:
    """Every activation pattern of the central arrangement {x~_i^T u = 0}: an (N, n) 0/1 array.

    Each region of an essential arrangement in general position has an extreme ray where
    p - 1 hyperplanes meet; near that ray the other signs are fixed and the p - 1 free signs
    take every value. Candidates are built that way and, with ``verify``, checked by an LP.
    """
    n, p = Xt.shape
    bound = cover_count(n, p)
    if bound > max_patterns:
        raise TooLarge(f"the instance has up to {bound} activation patterns (Cover's count for n={n} points in "
                       f"dimension {p}); at most {max_patterns} can be enumerated: use fewer points or dimensions")
    if p == 1:
        cands = [np.sign(Xt[:, 0]), -np.sign(Xt[:, 0])]
    else:
        cands = []
        for S in itertools.combinations(range(n), p - 1):
            # The line where the hyperplanes of S meet: the null space of X~_S.
            _, sv, Vt = np.linalg.svd(Xt[list(S)])
            v = Vt[-1]
            base = np.sign(Xt @ v)
            for sgn in (1.0, -1.0):
                b = sgn * base
                for free in itertools.product((-1.0, 1.0), repeat=p - 1):
                    s = b.copy()
                    s[list(S)] = free
                    cands.append(s)
    pats = {tuple(s) for s in cands if not (np.asarray(s) == 0).any()}
    if verify:
        pats = {s for s in pats if _feasible(Xt, np.array(s))}
    return (np.array(sorted(pats)) > 0).astype(float)


@dataclass
class GlobalOptimum:
    value: float  # min 1/2 ||theta||^2 of (P)
    status: str
    n_patterns: int
    n_blocks: int  # nonzero blocks = the width needed
    net: TwoLayerReLU | None


def global_max_margin(X: np.ndarray, y: np.ndarray, bias: bool = True, max_patterns: int = 5000, block_tol: float = 1e-6) -> GlobalOptimum:
    """Solve the convex reformulation; recover a globally optimal network from its blocks."""
    Xt = augment(X, bias)
    D = activation_patterns(Xt, max_patterns)
    P, n = D.shape
    V = cp.Variable((P, Xt.shape[1]))
    U = cp.Variable((P, Xt.shape[1]))
    XV = Xt @ V.T  # (n, P)
    XU = Xt @ U.T
    S = 2 * D.T - 1  # (n, P)
    f = cp.sum(cp.multiply(D.T, XV - XU), axis=1)
    cons = [cp.multiply(y, f) >= 1, cp.multiply(S, XV) >= 0, cp.multiply(S, XU) >= 0]
    prob = cp.Problem(cp.Minimize(cp.sum(cp.norm(V, 2, axis=1)) + cp.sum(cp.norm(U, 2, axis=1))), cons)
    for tol in (1e-10, 1e-8, None):  # tight first; fall back to Clarabel's defaults
        opts = {} if tol is None else {"tol_gap_abs": tol, "tol_gap_rel": tol, "tol_feas": tol, "max_iter": 500}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            prob.solve(solver=cp.CLARABEL, **opts)
        if prob.status == cp.OPTIMAL:
            break
    if prob.status != cp.OPTIMAL:
        return GlobalOptimum(float("nan"), str(prob.status), P, 0, None)
    Vv, Uv = V.value, U.value
    neurons = []
    for blocks, sign in ((Vv, 1.0), (Uv, -1.0)):
        for v in blocks:
            nv = np.linalg.norm(v)
            if nv > block_tol * max(1.0, prob.value):
                neurons.append((v / np.sqrt(nv), sign * np.sqrt(nv)))
    Wt = np.array([w for w, _ in neurons])
    a = np.array([s for _, s in neurons])
    net = TwoLayerReLU(W=Wt[:, :-1] if bias else Wt, a=a, b=Wt[:, -1] if bias else None)
    return GlobalOptimum(float(prob.value), "optimal", P, len(neurons), net)


def dual_check(X: np.ndarray, y: np.ndarray, lam: np.ndarray, bias: bool = True, max_patterns: int = 5000) -> float:
    """``max_{||u|| <= 1} |sum_i lambda_i y_i ReLU(<x~_i, u>)|``: the KKT point is global iff it is <= 1."""
    Xt = augment(X, bias)
    D = activation_patterns(Xt, max_patterns)
    c = cp.Parameter(Xt.shape[1])
    sgn = cp.Parameter(len(Xt))
    u = cp.Variable(Xt.shape[1])
    prob = cp.Problem(cp.Maximize(c @ u), [cp.norm(u) <= 1, cp.multiply(sgn, Xt @ u) >= 0])
    best = 0.0
    w = lam * y
    for pat in D:
        cD = (pat * w) @ Xt
        norm = float(np.linalg.norm(cD))
        if norm <= best:
            continue  # this region cannot beat the current maximum
        s = 2 * pat - 1
        for sign in (1.0, -1.0):
            direction = sign * cD / norm
            if (s * (Xt @ direction) >= 0).all():
                best = max(best, norm)  # the unconstrained maximizer lies in the cone
                continue
            c.value, sgn.value = sign * cD, s
            prob.solve(solver=cp.CLARABEL)
            if prob.status != cp.OPTIMAL:
                raise RuntimeError(f"dual check: SOCP of one pattern ended with status {prob.status}")
            best = max(best, float(prob.value))
    return best
