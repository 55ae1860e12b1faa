"""The exact l2 radius of a two-layer ReLU network at a point, or a certified interval.

Mixed-integer QP (big-M), with binaries only for the neurons that are unstable over the ball
of radius R (an upper bound from the attack):

    minimize    ||delta||^2
    subject to  sum_{active j} c_j z_j + sum_{unstable j} c_j r_j <= 0,    z_j = h_j + <w_j, delta>
                r_j >= z_j,  r_j >= 0,  r_j <= z_j - l_j (1 - s_j),  r_j <= u_j s_j,  s_j in {0, 1}
                ||delta|| <= R

with ``c_j = y a_j`` and ``[l_j, u_j] = h_j -+ R ||w_j||``. Only ``W delta`` enters the
constraints, so the optimal delta lies in the row space of W: with ``W = U S V^T`` the problem
is solved exactly in ``beta`` (``delta = V beta``, ``||delta|| = ||beta||``), rank(W) <= width
variables instead of d. SCIP solves it; ``exact`` is reported
only when SCIP proves optimality, otherwise ``[sqrt(dual bound), sqrt(best primal)]``.
For at most about 12 unstable neurons, :func:`enumerate_radius` solves one convex QP per
activation region instead (cvxpy + Clarabel), as a cross-check.
"""
from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass

import numpy as np

from ..networks import LinearClassifier, TwoLayerReLU


@dataclass
class RadiusInterval:
    """``lower <= r(x) <= upper``; ``exact`` only when a solver proved optimality."""

    lower: float
    upper: float
    exact: bool
    status: str
    seconds: float

    @property
    def value(self) -> float:
        return self.upper if self.exact else float("nan")


def _row_space(W: np.ndarray) -> np.ndarray:
    """``W V`` for an orthonormal basis V of W's row space: the reduced first layer (M x rank)."""
    U, S, Vt = np.linalg.svd(W, full_matrices=False)
    keep = S > S.max() * 1e-12 if S.size else S > 0
    return U[:, keep] * S[keep]


def _bounds(net: TwoLayerReLU, x, y, R):
    h = net.preactivations(x[None])[0]
    rn = np.linalg.norm(net.W, axis=1)
    return h, h - R * rn, h + R * rn, y * net.a


def exact_radius_miqp(net: TwoLayerReLU, x: np.ndarray, y: float, upper: float, lower: float = 0.0,
                      time_limit: float = 10.0) -> RadiusInterval:
    """The exact radius by SCIP's MIQP, within ``time_limit`` seconds."""
    from pyscipopt import Model, quicksum

    t0 = time.perf_counter()
    if y * net.forward(x[None])[0] <= 0:
        return RadiusInterval(0.0, 0.0, True, "misclassified", 0.0)
    if not math.isfinite(upper):
        return RadiusInterval(lower, math.inf, False, "no finite upper bound to build the big-M model", 0.0)
    R = upper * (1 + 1e-9) + 1e-12
    h, l, u, c = _bounds(net, x, y, R)
    WV = _row_space(net.W)
    d = WV.shape[1]
    m = Model("radius")
    m.hideOutput()
    m.setParam("limits/time", float(time_limit))
    m.setParam("numerics/feastol", 1e-9)
    delta = [m.addVar(lb=-R, ub=R, name=f"d{i}") for i in range(d)]
    tvar = m.addVar(lb=0.0, ub=R * R, name="t")
    m.addCons(quicksum(v * v for v in delta) <= tvar)
    terms = []
    for j in range(len(h)):
        if u[j] <= 0 or c[j] == 0:
            continue
        z = h[j] + quicksum(float(WV[j, i]) * delta[i] for i in range(d) if WV[j, i] != 0)
        if l[j] >= 0:
            terms.append(float(c[j]) * z)
            continue
        r = m.addVar(lb=0.0, ub=float(u[j]), name=f"r{j}")
        s = m.addVar(vtype="B", name=f"s{j}")
        m.addCons(r >= z)
        m.addCons(r <= z - float(l[j]) * (1 - s))
        m.addCons(r <= float(u[j]) * s)
        terms.append(float(c[j]) * r)
    m.addCons(quicksum(terms) <= 0)
    m.setObjective(tvar, "minimize")
    m.optimize()
    status = m.getStatus()
    secs = time.perf_counter() - t0
    dual = max(m.getDualbound(), 0.0)
    lo = max(lower, math.sqrt(dual))
    if status == "optimal" and m.getNSols() > 0:
        val = math.sqrt(max(m.getObjVal(), 0.0))
        return RadiusInterval(max(lo, 0.0) if lo <= val else val, val, True, "optimal", secs)
    if status == "infeasible":
        # No flip within the ball of radius R although the attack found one: numerical trouble.
        return RadiusInterval(lower, upper, False, "infeasible (numerics): attack bound kept", secs)
    best = math.sqrt(max(m.getObjVal(), 0.0)) if m.getNSols() > 0 else upper
    return RadiusInterval(lo, min(best, upper), False, f"{status}: interval", secs)


def unstable_count(net: TwoLayerReLU, x: np.ndarray, R: float) -> int:
    h, l, u, _ = _bounds(net, x, 1.0, R)
    return int(((l < 0) & (u > 0)).sum())


def enumerate_radius(net: TwoLayerReLU, x: np.ndarray, y: float, upper: float, max_unstable: int = 12) -> RadiusInterval:
    """Exact radius by one convex QP per activation pattern of the unstable neurons (cvxpy)."""
    import cvxpy as cp

    t0 = time.perf_counter()
    if y * net.forward(x[None])[0] <= 0:
        return RadiusInterval(0.0, 0.0, True, "misclassified", 0.0)
    R = upper * (1 + 1e-9) + 1e-12
    h, l, u, c = _bounds(net, x, y, R)
    unst = np.flatnonzero((l < 0) & (u > 0))
    act = np.flatnonzero(l >= 0)
    if len(unst) > max_unstable:
        raise ValueError(f"{len(unst)} unstable neurons: more than max_unstable={max_unstable}")
    WV = _row_space(net.W)
    delta = cp.Variable(WV.shape[1])
    sgn = cp.Parameter(len(unst))
    on = cp.Parameter(len(unst))
    Wu, Wa = WV[unst], WV[act]
    zu = h[unst] + Wu @ delta
    za = h[act] + Wa @ delta
    cons = [cp.norm(delta) <= R, cp.multiply(sgn, zu) >= 0]
    margin = c[act] @ za + (cp.multiply(on, c[unst]) @ zu if len(unst) else 0)
    cons.append(margin <= 0)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(delta)), cons)
    best = math.inf
    for pattern in itertools.product((0.0, 1.0), repeat=len(unst)):
        p = np.array(pattern)
        sgn.value = 2 * p - 1 if len(unst) else np.zeros(0)
        on.value = p
        prob.solve(solver=cp.CLARABEL)
        if prob.status == cp.OPTIMAL:
            best = min(best, math.sqrt(max(prob.value, 0.0)))
        elif prob.status not in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
            raise RuntimeError(f"QP of one activation region ended with status {prob.status}")
    return RadiusInterval(best, best, True, f"enumerated {2 ** len(unst)} regions", time.perf_counter() - t0)


def exact_radius(net, X: np.ndarray, y: np.ndarray, upper: np.ndarray, lower: np.ndarray | None = None,
                 time_limit: float = 10.0) -> list[RadiusInterval]:
    """Per point: the exact radius or an interval (linear classifiers: closed form, exact)."""
    X = np.atleast_2d(X)
    if isinstance(net, LinearClassifier):
        from .linear import l2_radius

        r = l2_radius(net, X, y)
        return [RadiusInterval(float(v), float(v), True, "closed form", 0.0) for v in r]
    lower = np.zeros(len(X)) if lower is None else lower
    return [exact_radius_miqp(net, X[i], float(y[i]), float(upper[i]), float(lower[i]), time_limit) for i in range(len(X))]
