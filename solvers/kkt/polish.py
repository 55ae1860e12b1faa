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

import time
import warnings
from dataclasses import dataclass

import cvxpy as cp
import numpy as np
import scipy.sparse as sparse

from ..networks import TwoLayerReLU
from .clock import capped_solve, program_fits
from .global_opt import augment
from .gram import gram_cone_program


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
    """(status, v (r,), wall multipliers (n,), margin multipliers (n,)) of the cone program for one neuron no other neuron shares a point with:
    ``min ||v||`` subject to ``<L_i, v> >= 1`` where it fires (its sign must be y_i there, else the cone is infeasible)
    and ``<L_i, v> <= 0`` elsewhere. A least-distance program, solved exactly by Lawson and Hanson's reduction to
    non-negative least squares (an active-set method: the binding constraints come out exactly tight).

    Pitfall avoided: the interior-point program spends about 4.5 s per neuron on this dense program at n = 1107 (70 s for
    the 16 lone neurons of the per-cluster cone at d = 4096, k = 16); the active set takes 1.0 s for all 16."""
    from scipy.optimize import nnls  # heavy: scipy.optimize (loaded on first use)

    n, r = L.shape
    if np.any(y[on] * s < 0):
        return "infeasible", None, None, None
    g = np.where(on, 1.0, -1.0)
    h: np.ndarray = np.asarray(on, dtype=float)
    E = np.vstack([(g[:, None] * L).T, h[None, :]])
    f = np.zeros(r + 1)
    f[-1] = 1.0
    try:
        u, _ = nnls(E, f, maxiter=50 * n)
    except RuntimeError as err:
        return f"solver error: {err}", None, None, None
    rho = E @ u - f
    if abs(rho[-1]) <= 1e-12:  # E u reaches f: the constraints are incompatible
        return "infeasible", None, None, None
    v = -rho[:r] / rho[-1]
    lam = u / -rho[-1]  # v = sum_i lam_i g_i L_i: the multipliers of (1/2)||v||^2; of ||v||: lam / ||v||
    slack = g * (L @ v) - h
    ok = slack.min() >= -1e-9 * max(1.0, float(np.abs(L @ v).max()))
    lam = lam / max(np.linalg.norm(v), 1e-300)
    return ("optimal" if ok else "optimal_inaccurate"), v, np.where(on, 0.0, lam), np.where(on, lam, 0.0)


def _block_program(L: np.ndarray, y: np.ndarray, D: np.ndarray, s: np.ndarray, rows: np.ndarray, deadline: float | None = None):
    """(status, V, wall multipliers, margin multipliers (n,)) of the cone program for one group of coupled neurons (Clarabel), with margin
    constraints on the points ``rows`` (those the group fires on) and every wall. ``deadline`` (a ``time.perf_counter()``
    value, or None): Clarabel's iterations stop there, and a program that cannot begin them before it is not solved
    (status :data:`TIME_CAP`, both).

    Pitfall avoided: at n = d = 1000 on the sphere one such program (64 coupled neurons, 64M nonzeros) took 65 s, and
    ``kkt --time 20`` answered after 78 s; and a program of 8.9M nonzeros begun with 4.9 s left ran 10 s past the cap
    (its compile, 8.8 s, cannot be interrupted): one that would not compile in the time left is not begun
    (:func:`.clock.program_fits`)."""
    n, r = L.shape
    m = D.shape[1]
    if deadline is not None and not program_fits(deadline, r * (m * n + int(np.count_nonzero(D[rows])))):
        return TIME_CAP, None, None, None
    pattern = sparse.block_diag([sparse.csr_matrix((2 * D[:, j] - 1)[:, None] * L) for j in range(m)], format="csr")
    margin = np.hstack([(y * s[j] * D[:, j])[:, None] * L for j in range(m)])[rows]
    x, t = cp.Variable(m * r), cp.Variable(m)
    walls, margins = pattern @ x >= 0, margin @ x >= 1
    cons = [margins, walls] + [cp.SOC(t[j], x[j * r:(j + 1) * r]) for j in range(m)]
    prob = cp.Problem(cp.Minimize(cp.sum(t)), cons)
    opts = {"tol_gap_abs": 1e-13, "tol_gap_rel": 1e-13, "tol_feas": 1e-13, "tol_ktratio": 1e-10, "max_iter": 400}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if deadline is None:
                prob.solve(solver=cp.CLARABEL, **opts)
            elif not capped_solve(prob, opts, deadline):
                return TIME_CAP, None, None, None
        except cp.SolverError as err:
            return f"solver error: {err}", None, None, None
    if prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or x.value is None:
        capped = prob.status == cp.USER_LIMIT and deadline is not None and time.perf_counter() >= deadline
        return (TIME_CAP if capped else str(prob.status)), None, None, None
    lam = np.zeros(n)
    lam[rows] = np.maximum(np.asarray(margins.dual_value, float), 0.0)
    return str(prob.status), x.value.reshape(m, r), np.asarray(walls.dual_value, float).reshape(m, n).T, lam


TIME_CAP = "stopped at the time cap"  # a program's status where the search's cap ended it (or came before it)
SPLIT = True  # solve uncoupled groups apart, a lone neuron exactly (bench/kkt_speed.py sets False: the joint program)


def _cone_program(L: np.ndarray, y: np.ndarray, D: np.ndarray, s: np.ndarray, deadline: float | None = None):
    """(status, V (m, r), multipliers of the pattern constraints (n, m), margin multipliers (n,)) of the program on the
    cone (D, s), the multipliers those of ``min sum_j ||v_j||`` (one set shared by every neuron).

    Solved one group of coupled neurons at a time (:func:`_components`), a lone neuron by
    :func:`_single_neuron`, a group by :func:`.gram.gram_cone_program` (exact and verified; Clarabel,
    :func:`_block_program`, where it cannot verify its answer): exact, since the objective is a sum over neurons and only a margin constraint couples two
    of them (the joint program's multipliers are then the groups' own). A point on which no neuron fires makes the cone
    infeasible (its margin is 0). ``deadline``: the search's cap, for the Clarabel programs (:func:`_block_program`)."""
    n, r = L.shape
    if not SPLIT:
        return _block_program(L, y, D, s, np.arange(n), deadline)
    if not (D > 0).any(axis=1).all():
        return "infeasible", None, None, None
    V, nu, lam, statuses = np.zeros((D.shape[1], r)), np.zeros(D.shape), np.zeros(n), []
    for group in _components(D):
        if len(group) == 1:
            status, v, wall, lg = _single_neuron(L, y, D[:, group[0]] > 0, float(s[group[0]]))
            Vg, nug = (None, None) if v is None else (v[None, :], wall[:, None])
        else:
            rows = np.flatnonzero((D[:, group] > 0).any(axis=1))
            out = gram_cone_program(L, y, D[:, group], s[group], rows)
            status, Vg, nug, lg = out if out is not None else _block_program(L, y, D[:, group], s[group], rows, deadline)
        if Vg is None:
            return status, None, None, None
        V[group], nu[:, group] = Vg, nug
        lam += lg
        statuses.append(status)
    return ("optimal" if all(st == cp.OPTIMAL for st in statuses) else cp.OPTIMAL_INACCURATE), V, nu, lam


def illegitimate_walls(Z: np.ndarray, nu: np.ndarray, lam: np.ndarray, y: np.ndarray, s: np.ndarray,
                       tol: float = 1e-7) -> tuple[np.ndarray, np.ndarray]:
    """(walls (P) does not admit, legitimate ties), both (n, m) masks over the binding walls of a cone optimum.

    A wall of neuron j at point i binds when ``z_ij = 0`` and its multiplier ``nu_ij > 0``. It is a tie that (P) admits
    (the Clarke subdifferential of ReLU at 0 is [0, 1]) exactly when the neuron's output sign is opposite the point's
    label (``y_i s_j < 0``) and ``nu_ij <= lambda_i``, the point's margin multiplier: then the wall's force is a
    ReLU'(0) in [0, 1] of the point's own gradient. Any other binding wall is the cone's, not (P)'s.

    Pitfall avoided: flipping every binding wall (the polish before issue 35) also flipped these legitimate ties, and
    left the cone of a real KKT point for a neighbour; the tolerances are relative to the largest |z| and nu."""
    Z, nu, lam = np.asarray(Z, float), np.asarray(nu, float), np.asarray(lam, float)
    zs = float(np.abs(Z).max()) if Z.size else 1.0
    ns = float(max(nu.max(initial=0.0), lam.max(initial=0.0), 1e-300))
    bind = (np.abs(Z) <= tol * zs) & (nu > 1e-12 * ns)
    legit = bind & ((y[:, None] * s[None, :]) < 0) & (nu <= lam[:, None] * (1 - tol))
    return bind & ~legit, legit


def _merged(D: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The cone with one neuron per distinct (sign, pattern): exact, since neurons sharing both are one neuron of (P) on
    the cone (their blocks' sum is feasible, with the same margins and ``||sum u_j|| <= sum ||u_j||``). Pitfall avoided:
    a family of k per-cluster neurons that the flips bring to one pattern kept k copies, k times the program's size."""
    key = np.hstack([s[:, None], D.T])
    _, first = np.unique(key, axis=0, return_index=True)
    first = np.sort(first)
    return D[:, first], s[first]


@dataclass(frozen=True)
class ConeOptimum:
    """One cone program's optimum: the balanced network, the solver status, and the walls it flips next."""

    net: TwoLayerReLU
    solver_status: str
    illegitimate: int  # binding walls (P) does not admit
    legitimate: int  # binding walls that are ties (P) admits
    next_cone: tuple[np.ndarray, np.ndarray] | None


def _network(V: np.ndarray, Q: np.ndarray, s: np.ndarray, bias: bool, tol: float) -> TwoLayerReLU:
    """The balanced network ``w~_j = u_j / sqrt||u_j||``, ``a_j = s_j sqrt||u_j||`` of the program's blocks ``V`` (in the
    span ``Q``): ``1/2 ||theta||^2 = sum_j ||u_j||``."""
    U = V @ Q.T
    norms = np.linalg.norm(U, axis=1)
    ok = norms > tol * max(float(norms.max(initial=0.0)), 1e-300)
    Wn = U[ok] / np.sqrt(norms[ok])[:, None]
    a = s[ok] * np.sqrt(norms[ok])
    if not bias:
        return TwoLayerReLU(W=Wn, a=a, b=None)
    return TwoLayerReLU(W=Wn[:, :-1], a=a, b=Wn[:, -1])


def data_span(X: np.ndarray, bias: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(Q, L) with ``[X 1] = L Q^T``: the cone programs live in the data's span (computed once per sample)."""
    Q, R = np.linalg.qr(augment(np.asarray(X, float), bias).T)
    return Q, R.T


def cone_optimum(X: np.ndarray, y: np.ndarray, D: np.ndarray, s: np.ndarray, bias: bool = True, tol: float = 1e-7,
                 per_program: int | None = None, span: tuple[np.ndarray, np.ndarray] | None = None,
                 deadline: float | None = None) -> ConeOptimum:
    """(P) on the cone of the patterns ``D`` (n, m) and output signs ``s`` (m): its optimum (a KKT point of (P) exactly
    when no wall binds beyond what the ties admit: certify it) and the next cone, where only the walls (P) does not
    admit are flipped (:func:`illegitimate_walls`; at most ``per_program`` of them, the largest multipliers first).
    A failed program returns an empty network (width 0) with the solver's status. ``deadline``: the search's time cap
    (a ``time.perf_counter()`` value; None: none), which ends a Clarabel program's iterations (:func:`_block_program`)."""
    X, y = np.asarray(X, float), np.asarray(y, float)
    Q, L = span if span is not None else data_span(X, bias)
    D, s = np.asarray(D, float), np.asarray(s, float)
    keep = (D.sum(axis=0) > 0) & (s != 0)
    D, s = _merged(D[:, keep], s[keep])
    status, V, nu, lam = _cone_program(L, y, D, s, deadline)
    if V is None:
        empty = TwoLayerReLU(W=np.zeros((0, X.shape[1])), a=np.zeros(0), b=np.zeros(0) if bias else None)
        return ConeOptimum(empty, status, 0, 0, None)
    live = np.linalg.norm(V, axis=1) > tol * np.abs(V).max()
    D, s, V, nu = D[:, live], s[live], V[live], nu[:, live]  # dead neurons leave the program
    bad, legit = illegitimate_walls(L @ V.T, nu, lam, y, s, tol)
    nxt = None
    if bad.any():
        if per_program is not None and bad.sum() > per_program:
            order = np.argsort(-np.where(bad, nu, -np.inf), axis=None)[:per_program]
            bad = np.zeros(bad.size, bool)
            bad[order] = True
            bad = bad.reshape(nu.shape)
        nxt = _merged(np.where(bad, 1.0 - D, D), s)
    return ConeOptimum(_network(V, Q, s, bias, tol), status, int(bad.sum()), int(legit.sum()), nxt)


def cone_polish(X: np.ndarray, y: np.ndarray, D: np.ndarray, s: np.ndarray, bias: bool = True, rounds: int = 4,
                tol: float = 1e-7, per_program: int | None = None) -> Polish:
    """(P) on the cone of the patterns ``D`` (n, m) and output signs ``s`` (m): its optimum, then (``rounds`` > 1) the
    walls (P) does not admit flipped (:func:`cone_optimum`) and solved again, for at most ``rounds`` programs. The old
    optimum stays feasible in the flipped cone (with z_ij = 0 there), so the value never rises. The result is a
    candidate: certify it (:mod:`.engine` certifies between programs). A failed first program returns an empty network
    (width 0) with the solver's status."""
    flips, done, last = 0, 0, None
    nxt: tuple[np.ndarray, np.ndarray] | None = (np.asarray(D, float), np.asarray(s, float))
    span = data_span(X, bias)
    for done in range(1, rounds + 1):
        assert nxt is not None
        o = cone_optimum(X, y, nxt[0], nxt[1], bias, tol, per_program, span)
        if not o.net.width:
            if last is None:
                return Polish(o.net, o.solver_status, done, flips)
            break
        last, nxt = o, o.next_cone
        if nxt is None or done == rounds:
            break
        flips += o.illegitimate
    assert last is not None
    return Polish(last.net, last.solver_status, done, flips, last.next_cone)


def pattern_polish(net: TwoLayerReLU, X: np.ndarray, y: np.ndarray, rounds: int = 4, tol: float = 1e-7) -> Polish:
    """Solve (P) on the activation cone of ``net`` (signs and patterns fixed), flipping the walls (P) does not admit,
    for at most ``rounds`` programs. The result is a candidate: certify it."""
    X = np.asarray(X, float)
    Xt, Wt = _augment(net, X)
    p = cone_polish(X, y, (Xt @ Wt.T > 0).astype(float), np.sign(net.a), net.b is not None, rounds, tol)
    return p if p.solver_status != "not run" and p.rounds and p.net.width else Polish(net, p.solver_status, p.rounds, p.flips)
