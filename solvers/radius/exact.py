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
only when SCIP proves optimality (to a relative gap of 1e-8, then polished by solving the
optimal activation region's QP), otherwise ``[sqrt(dual bound), sqrt(best primal)]``.
For at most about 12 unstable neurons, :func:`enumerate_radius` solves one convex QP per
activation region instead (cvxpy + Clarabel), as a cross-check.
"""
from __future__ import annotations

import itertools
import math
import os
import sys
import time
import warnings
from dataclasses import dataclass, replace

import numpy as np

from ibcheck.errors import InputError

from ..networks import TwoLayerReLU
from .linear import l2_local
from .units import Local, localize


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
                      time_limit: float = 10.0, feastol: float = 1e-9) -> RadiusInterval:
    """The exact radius by SCIP's MIQP, within ``time_limit`` seconds."""
    from pyscipopt import Model, quicksum  # heavy: pyscipopt (loaded on first use)

    t0 = time.perf_counter()
    if y * net.forward(x[None])[0] <= 0:
        return RadiusInterval(0.0, 0.0, True, "misclassified", 0.0)
    if not math.isfinite(upper):
        return RadiusInterval(lower, math.inf, False, "no finite upper bound to build the big-M model", 0.0)
    if lower >= upper * (1 - 1e-9):
        # The certified lower bound meets a verified flip: the radius is proven without a solver.
        return RadiusInterval(upper, upper, True, "bracket closed (certified = attack)", time.perf_counter() - t0)
    R = upper * (1 + 1e-9) + 1e-12
    h, l, u, c = _bounds(net, x, y, R)
    WV = _row_space(net.W)
    d = WV.shape[1]
    m = Model("radius")
    m.hideOutput()
    m.setParam("limits/time", float(time_limit))
    m.setParam("numerics/feastol", feastol)
    m.setParam("limits/gap", 1e-8)  # a relative gap of 1e-8 counts as proven (then polished)
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
    if status in ("optimal", "gaplimit") and m.getNSols() > 0:
        sol = m.getBestSol()
        beta = np.array([m.getSolVal(sol, v) for v in delta])
        val = math.sqrt(max(m.getObjVal(), 0.0))
        polished = _polish(net, x, y, R, beta)
        if math.isfinite(polished) and abs(polished - val) <= 1e-4 * max(val, 1e-12):
            val = polished  # the region QP is accurate to the conic solver's tolerance
        return RadiusInterval(val, val, True, "optimal", time.perf_counter() - t0)
    if status == "infeasible":
        # No flip within the ball of radius R although the attack found one: numerical trouble.
        return RadiusInterval(lower, upper, False, "infeasible (numerics): attack bound kept", secs)
    best = min(math.sqrt(max(m.getObjVal(), 0.0)) if m.getNSols() > 0 else upper, upper)
    return RadiusInterval(min(lo, best), best, False, f"{status}: interval", secs)


class _RegionQP:
    """``min ||beta||^2`` over one activation region of the unstable neurons (cvxpy + Clarabel)."""

    def __init__(self, net: TwoLayerReLU, x: np.ndarray, y: float, R: float):
        import cvxpy as cp  # heavy: cvxpy (loaded on first use)

        h, l, u, c = _bounds(net, x, y, R)
        self.unst = np.flatnonzero((l < 0) & (u > 0))
        act = np.flatnonzero(l >= 0)
        WV = _row_space(net.W)
        self.WV, self.h = WV, h
        self.beta = cp.Variable(WV.shape[1])
        self.sgn = cp.Parameter(len(self.unst))
        self.on = cp.Parameter(len(self.unst))
        zu = h[self.unst] + WV[self.unst] @ self.beta
        za = h[act] + WV[act] @ self.beta
        margin = c[act] @ za + (cp.multiply(self.on, c[self.unst]) @ zu if len(self.unst) else 0)
        cons = [cp.norm(self.beta) <= R, margin <= 0]
        if len(self.unst):
            cons.append(cp.multiply(self.sgn, zu) >= 0)
        self.prob = cp.Problem(cp.Minimize(cp.sum_squares(self.beta)), cons)

    def solve(self, pattern: np.ndarray, strict: bool = True) -> float:
        """The region's minimum radius (inf if the region has no flip within R).

        A status other than optimal/infeasible raises when ``strict``, else gives NaN.
        """
        import cvxpy as cp  # heavy: cvxpy (loaded on first use)

        if len(self.unst):
            self.sgn.value = 2 * pattern - 1
            self.on.value = pattern.astype(float)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an inaccurate status is handled below, not printed
            self.prob.solve(solver=cp.CLARABEL)
        if self.prob.status == cp.OPTIMAL:
            return math.sqrt(max(self.prob.value, 0.0))
        if self.prob.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
            return math.inf
        if not strict:
            return math.nan
        raise RuntimeError(f"QP of one activation region ended with status {self.prob.status}")

    def pattern_at(self, beta: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
        """The activation pattern of the unstable neurons at beta, and which are within tol of 0."""
        z = self.h[self.unst] + self.WV[self.unst] @ beta
        return (z > 0).astype(float), np.abs(z) <= tol


def _polish(net, x, y, R, beta: np.ndarray, max_ambiguous: int = 6) -> float:
    """Re-solve the region of a MIQP solution exactly (both sides of near-zero neurons)."""
    qp = _RegionQP(net, x, y, R)
    pattern, amb = qp.pattern_at(beta, tol=1e-6 * (1 + np.abs(qp.h).max()))
    idx = np.flatnonzero(amb)[:max_ambiguous]
    best = math.inf
    for flips in itertools.product((0.0, 1.0), repeat=len(idx)):
        p = pattern.copy()
        p[idx] = flips
        v = qp.solve(p, strict=False)
        if math.isnan(v):
            return math.nan  # the conic solver was not accurate: keep SCIP's value
        best = min(best, v)
    return best


def enumerate_radius(net: TwoLayerReLU, x: np.ndarray, y: float, upper: float, max_unstable: int = 12) -> RadiusInterval:
    """Exact radius by one convex QP per activation pattern of the unstable neurons (cvxpy)."""
    t0 = time.perf_counter()
    if y * net.forward(x[None])[0] <= 0:
        return RadiusInterval(0.0, 0.0, True, "misclassified", 0.0)
    R = upper * (1 + 1e-9) + 1e-12
    qp = _RegionQP(net, x, y, R)
    if len(qp.unst) > max_unstable:
        raise InputError(f"{len(qp.unst)} unstable neurons: more than max_unstable={max_unstable}")
    best = math.inf
    for pattern in itertools.product((0.0, 1.0), repeat=len(qp.unst)):
        best = min(best, qp.solve(np.array(pattern)))
    unst = qp.unst
    return RadiusInterval(best, best, True, f"enumerated {2 ** len(unst)} regions", time.perf_counter() - t0)


def exact_radius(net, X: np.ndarray, y: np.ndarray, upper: np.ndarray, lower: np.ndarray | None = None,
                 time_limit: float = 10.0) -> list[RadiusInterval]:
    """Per point: the exact radius or an interval (linear classifiers: closed form, exact), each point's problem solved
    in its own units (:class:`.units.Local`) and scaled back: a length of X, whatever the scale of X or of its columns."""
    X = np.atleast_2d(np.asarray(X, float))
    return exact_local(localize(net, X, np.asarray(y, float)), upper, lower, time_limit)


PRE_TOL = 1e-10  # pre-activations within this of the true ones (in the point's units, largest distance ~1): below SCIP's feastol


def exact_local(loc: Local, upper: np.ndarray, lower: np.ndarray | None = None, time_limit: float = 10.0) -> list[RadiusInterval]:
    """:func:`exact_radius` of a :class:`.units.Local` problem (``upper``, ``lower`` and the result in the units of X).

    "misclassified" (0, proven) only where the margin is proven <= 0 beyond its rounding; a margin within its rounding
    of 0, or pre-activations that float64 does not resolve to the solver's tolerance, keep the bracket, not proven."""
    N = len(loc.H)
    upper = np.broadcast_to(np.asarray(upper, float), (N,))
    lower = np.zeros(N) if lower is None else np.broadcast_to(np.asarray(lower, float), (N,))
    if loc.linear:
        out = []
        for i, v in enumerate(l2_local(loc).tolist()):
            if loc.sign[i] > 0 and v == math.inf and loc.W.any():
                out.append(RadiusInterval(float(np.finfo(float).max), v, False, "closed form past float64's range: an interval", 0.0))
            elif loc.sign[i] > 0 and v < 2.0 ** -1022:  # subnormal: fewer digits than the closed form has (v rounded up)
                out.append(RadiusInterval(math.nextafter(math.nextafter(v, 0.0), 0.0), v, False,
                                          "closed form in float64's subnormal range: an interval", 0.0))
            else:
                out.append(RadiusInterval(v, v, True, "closed form", 0.0))
        return out
    moving = loc.W.any(axis=1)  # neurons that depend on x (a constant one's value is no distance)
    res = []
    for i in range(N):
        up, lo = float(upper[i]), float(lower[i])
        if loc.sign[i] < 0:
            res.append(RadiusInterval(0.0, 0.0, True, "misclassified", 0.0))
        elif not loc.decided[i]:
            res.append(RadiusInterval(max(lo, 0.0), up, False, "the margin is within float64 rounding of 0: not proven", 0.0))
        elif np.max(np.where(moving, loc.E[i], 0.0), initial=0.0) > PRE_TOL:
            res.append(RadiusInterval(lo, up, False, "pre-activations not resolved by float64 to the solver's tolerance: bracket kept", 0.0))
        else:
            s = int(loc.s[i])
            one = _guarded(loc.point_network(i), np.zeros(loc.W.shape[1]), float(loc.y[i]), _ldexp(up, -s), _ldexp(lo, -s), time_limit)
            res.append(replace(one, lower=_ldexp(one.lower, s), upper=_ldexp(one.upper, s)) if s else one)
    return res


def _ldexp(v: float, e: int) -> float:
    """``v 2^e`` (inf past float64's range, inf and nan unchanged)."""
    if not math.isfinite(v):
        return v
    try:
        return math.ldexp(v, e)
    except OverflowError:
        return math.inf


def _guarded(net, x: np.ndarray, y: float, upper: float, lower: float, time_limit: float) -> RadiusInterval:
    """One point's MIQP; a solver that fails (SCIP's "error in LP solver", a cvxpy SolverError in the
    polish) is retried once with a looser feasibility tolerance, and otherwise the point keeps its
    bracket [certified, attack], reported as not proven. Never an exception, never a guess."""
    last = ""
    for attempt in range(2):
        try:
            with _quiet_fds():
                return exact_radius_miqp(net, x, y, upper, lower, time_limit, feastol=1e-9 if attempt == 0 else 1e-7)
        except Exception as err:  # noqa: BLE001 - SCIP raises plain Exception; every failure keeps the bracket
            last = f"{type(err).__name__}: {str(err).strip().splitlines()[0] if str(err).strip() else ''}"[:160]
    return RadiusInterval(lower, upper, False, f"solver failed ({last}): bracket kept", 0.0)


class _quiet_fds:
    """SCIP and its LP solver print to the process's file descriptors (not sys.stdout); silenced here
    unless IBCHECK_SOLVER_OUTPUT is set."""

    def __enter__(self):
        self.saved = []
        if os.environ.get("IBCHECK_SOLVER_OUTPUT"):
            return self

        for stream in (sys.stdout, sys.stderr):
            try:
                fd = stream.fileno()
            except (AttributeError, OSError, ValueError):
                continue
            stream.flush()
            self.saved.append((fd, os.dup(fd)))
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, fd)
            os.close(devnull)
        return self

    def __exit__(self, *exc):
        for fd, copy in self.saved:
            os.dup2(copy, fd)
            os.close(copy)
        return False
