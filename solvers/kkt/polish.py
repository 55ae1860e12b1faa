"""Polish a network into a KKT point of (P): the max-margin program restricted to its activation cone.

Fix each neuron's sign ``s_j = sign(a_j)`` and its activation pattern ``D_j`` on the training
points. On that cone (P) is convex (Pilanci & Ergen's reformulation, one block per neuron):

    minimize    sum_j ||u_j||
    subject to  y_i sum_j s_j D_ij <x~_i, u_j> >= 1,     (2 D_ij - 1) <x~_i, u_j> >= 0,

and the balanced network ``w~_j = u_j / sqrt||u_j||``, ``a_j = s_j sqrt||u_j||`` has
``1/2 ||theta||^2 = sum_j ||u_j||``. Its optimum is a KKT point of (P) unless a pattern
constraint binds with a positive multiplier, i.e. the cone's wall, not the margin, stops it. The
polish then flips those entries of D (the old optimum stays feasible, with z_ij = 0 there, so the
value never rises) and solves again. Every end point is certified separately
(:func:`.certificate.kkt_certificate`); the polish itself certifies nothing.

Pitfalls avoided: the program lives in the span of the data (a thin QR, exact: a component of
u_j off the span only adds norm), so its size is ``width x n`` whatever d; a dead neuron (u_j = 0)
has every pattern constraint tight and is dropped, never flipped; tolerances are relative to the
largest pre-activation.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import cvxpy as cp
import numpy as np
import scipy.sparse as sparse

from ..networks import TwoLayerReLU
from .global_opt import augment


@dataclass(frozen=True)
class Polish:
    """The end point of :func:`pattern_polish`, the last solver status, the rounds run and the pattern entries flipped;
    ``next_cone``: the cone (D, s) the last program's binding walls point to (None when no wall binds), where a caller
    that certifies between programs goes on."""

    net: TwoLayerReLU
    solver_status: str
    rounds: int
    flips: int
    next_cone: tuple[np.ndarray, np.ndarray] | None = None


def _augment(net: TwoLayerReLU, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(X with a ones column, [W b]) where the network has biases: the bias is one more weight."""
    Xt = augment(X, net.b is not None)
    return Xt, net.W if net.b is None else np.concatenate([net.W, net.b[:, None]], axis=1)


def _components(D: np.ndarray) -> list[np.ndarray]:
    """The neurons of a cone in groups that no point couples: j and j' share a group when a chain of points, each
    active on two neurons, links them (a margin constraint is the only thing that ties two neurons' blocks)."""
    m = D.shape[1]
    parent = list(range(m))

    def root(j: int) -> int:
        while parent[j] != j:
            parent[j] = parent[parent[j]]
            j = parent[j]
        return j

    for row in D > 0:
        on = np.flatnonzero(row)
        for j in on[1:]:
            parent[root(int(j))] = root(int(on[0]))
    roots = np.array([root(j) for j in range(m)])
    return [np.flatnonzero(roots == r) for r in dict.fromkeys(roots.tolist())]


def _single_neuron(L: np.ndarray, y: np.ndarray, on: np.ndarray, s: float):
    """(status, v (r,), wall multipliers (n,)) of the cone program for one neuron no other neuron shares a point with:
    ``min ||v||`` subject to ``<L_i, v> >= 1`` where it fires (its sign must be y_i there, else the cone is infeasible)
    and ``<L_i, v> <= 0`` elsewhere. A least-distance program, solved exactly by Lawson and Hanson's reduction to
    non-negative least squares (an active-set method: the binding constraints come out exactly tight).

    Pitfall avoided: the interior-point program spends about 4.5 s per neuron on this dense program at n = 1107 (70 s for
    the 16 lone neurons of the per-cluster cone at d = 4096, k = 16); the active set takes 1.0 s for all 16."""
    from scipy.optimize import nnls  # heavy: scipy.optimize (loaded on first use)

    n, r = L.shape
    if np.any(y[on] * s < 0):
        return "infeasible", None, None
    g = np.where(on, 1.0, -1.0)
    h: np.ndarray = np.asarray(on, dtype=float)
    E = np.vstack([(g[:, None] * L).T, h[None, :]])
    f = np.zeros(r + 1)
    f[-1] = 1.0
    try:
        u, _ = nnls(E, f, maxiter=50 * n)
    except RuntimeError as err:
        return f"solver error: {err}", None, None
    rho = E @ u - f
    if abs(rho[-1]) <= 1e-12:  # E u reaches f: the constraints are incompatible
        return "infeasible", None, None
    v = -rho[:r] / rho[-1]
    lam = u / -rho[-1]  # v = sum_i lam_i g_i L_i: the multipliers of (1/2)||v||^2; of ||v||: lam / ||v||
    slack = g * (L @ v) - h
    ok = slack.min() >= -1e-9 * max(1.0, float(np.abs(L @ v).max()))
    return ("optimal" if ok else "optimal_inaccurate"), v, np.where(on, 0.0, lam / max(np.linalg.norm(v), 1e-300))


def _block_program(L: np.ndarray, y: np.ndarray, D: np.ndarray, s: np.ndarray, rows: np.ndarray):
    """(status, V, wall multipliers) of the cone program for one group of coupled neurons (Clarabel), with margin
    constraints on the points ``rows`` (those the group fires on) and every wall."""
    n, r = L.shape
    m = D.shape[1]
    pattern = sparse.block_diag([sparse.csr_matrix((2 * D[:, j] - 1)[:, None] * L) for j in range(m)], format="csr")
    margin = np.hstack([(y * s[j] * D[:, j])[:, None] * L for j in range(m)])[rows]
    x, t = cp.Variable(m * r), cp.Variable(m)
    walls = pattern @ x >= 0
    cons = [margin @ x >= 1, walls] + [cp.SOC(t[j], x[j * r:(j + 1) * r]) for j in range(m)]
    prob = cp.Problem(cp.Minimize(cp.sum(t)), cons)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10, max_iter=300)
        except cp.SolverError as err:
            return f"solver error: {err}", None, None
    if prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or x.value is None:
        return str(prob.status), None, None
    return str(prob.status), x.value.reshape(m, r), np.asarray(walls.dual_value, float).reshape(m, n).T


SPLIT = True  # solve uncoupled groups apart, a lone neuron exactly (bench/kkt_speed.py sets False: the joint program)


def _cone_program(L: np.ndarray, y: np.ndarray, D: np.ndarray, s: np.ndarray):
    """(status, V (m, r), multipliers of the pattern constraints (n, m)) of the program on the cone (D, s).

    Solved one group of coupled neurons at a time (:func:`_components`), a lone neuron by
    :func:`_single_neuron`: exact, since the objective is a sum over neurons and only a margin constraint couples two
    of them. Every family of :mod:`.cones` starts as lone neurons; the wall flips that follow, and GD's patterns, mostly
    couple them (24 of 28 programs of an FVBS23 sample at d = 2048, k = 8 were coupled groups). A point on which no
    neuron fires makes the cone infeasible (its margin is 0)."""
    n, r = L.shape
    if not SPLIT:
        return _block_program(L, y, D, s, np.arange(n))
    if not (D > 0).any(axis=1).all():
        return "infeasible", None, None
    V, nu, statuses = np.zeros((D.shape[1], r)), np.zeros(D.shape), []
    for group in _components(D):
        if len(group) == 1:
            status, v, wall = _single_neuron(L, y, D[:, group[0]] > 0, float(s[group[0]]))
            Vg, nug = (None, None) if v is None else (v[None, :], wall[:, None])
        else:
            status, Vg, nug = _block_program(L, y, D[:, group], s[group], np.flatnonzero((D[:, group] > 0).any(axis=1)))
        if Vg is None:
            return status, None, None
        V[group], nu[:, group] = Vg, nug
        statuses.append(status)
    return ("optimal" if all(st == cp.OPTIMAL for st in statuses) else cp.OPTIMAL_INACCURATE), V, nu


def _merged(D: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The cone with one neuron per distinct (sign, pattern): exact, since neurons sharing both are one neuron of (P) on
    the cone (their blocks' sum is feasible, with the same margins and ``||sum u_j|| <= sum ||u_j||``). Pitfall avoided:
    a family of k per-cluster neurons that the flips bring to one pattern kept k copies, k times the program's size."""
    key = np.hstack([s[:, None], D.T])
    _, first = np.unique(key, axis=0, return_index=True)
    first = np.sort(first)
    return D[:, first], s[first]


def pattern_polish(net: TwoLayerReLU, X: np.ndarray, y: np.ndarray, rounds: int = 4, tol: float = 1e-7) -> Polish:
    """Solve (P) on the activation cone of ``net`` (signs and patterns fixed), flipping the patterns where
    a wall binds, for at most ``rounds`` programs. The result is a candidate: certify it."""
    X = np.asarray(X, float)
    Xt, Wt = _augment(net, X)
    p = cone_polish(X, y, (Xt @ Wt.T > 0).astype(float), np.sign(net.a), net.b is not None, rounds, tol)
    return p if p.solver_status != "not run" and p.rounds and p.net.width else Polish(net, p.solver_status, p.rounds, p.flips)


def cone_polish(X: np.ndarray, y: np.ndarray, D: np.ndarray, s: np.ndarray, bias: bool = True, rounds: int = 4,
                tol: float = 1e-7) -> Polish:
    """(P) on the cone of the patterns ``D`` (n, m) and output signs ``s`` (m): its optimum, then (``rounds`` > 1) the
    patterns flipped where a wall binds and solved again, for at most ``rounds`` programs. ``rounds=1`` is the fixed
    cone's own optimum: a KKT point of (P) exactly when no wall binds beyond what the ties admit (certify it).
    A failed first program returns an empty network (width 0) with the solver's status."""
    X, y = np.asarray(X, float), np.asarray(y, float)
    Xt = augment(X, bias)
    Q, R = np.linalg.qr(Xt.T)  # Xt = R^T Q^T: the program in the data's span
    L = R.T
    D, s = np.asarray(D, float), np.asarray(s, float)
    keep = (D.sum(axis=0) > 0) & (s != 0)
    D, s = _merged(D[:, keep], s[keep])
    status, V, flips, done, sV, nxt = "not run", None, 0, 0, s, None
    for done in range(1, rounds + 1):
        status, Vn, nu = _cone_program(L, y, D, s)
        if Vn is None:
            break
        V = Vn
        Z = L @ V.T
        live = np.linalg.norm(V, axis=1) > tol * np.abs(V).max()
        walls = (np.abs(Z) <= tol * np.abs(Z).max()) & (nu > tol * max(nu.max(), 1.0)) & live[None, :]
        D, s, V, walls = D[:, live], s[live], V[live], walls[:, live]  # dead neurons leave the program
        sV = s  # the signs of V's rows (the flips below may merge neurons before the next program)
        nxt = _merged(np.where(walls, 1.0 - D, D), s) if walls.any() else None
        if nxt is None or done == rounds:
            break
        D, s = nxt
        flips += int(walls.sum())
    if V is None:
        return Polish(TwoLayerReLU(W=np.zeros((0, X.shape[1])), a=np.zeros(0), b=np.zeros(0) if bias else None), status, done, flips)
    U = V @ Q.T
    norms = np.linalg.norm(U, axis=1)
    ok = norms > tol * norms.max()
    Wn = U[ok] / np.sqrt(norms[ok])[:, None]
    a = sV[ok] * np.sqrt(norms[ok])
    if not bias:
        return Polish(TwoLayerReLU(W=Wn, a=a, b=None), status, done, flips, nxt)
    return Polish(TwoLayerReLU(W=Wn[:, :-1], a=a, b=Wn[:, -1]), status, done, flips, nxt)
