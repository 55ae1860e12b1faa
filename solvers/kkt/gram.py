"""The cone program of a group of coupled neurons, solved exactly in the Gram space of the data's points.

The program (:mod:`.polish`), for neurons j with patterns ``D_j`` and signs ``s_j``, ``L`` the data's rows in their span:

    minimize    sum_j ||v_j||
    subject to  sum_j c_ij <L_i, v_j> >= 1  (i in rows; c_ij = y_i s_j D_ij),    g_ij <L_i, v_j> >= 0  (g = 2D - 1).

Every constraint is a point i and a coefficient per neuron, so its optimum has the form ``v_j = t_j L^T beta_j`` with
``t_j = ||v_j||`` and ``beta_j = sum_p mu_p a_pj e_(i_p)`` over the constraints' multipliers ``mu >= 0``; the
pre-activations are ``z_j = t_j K beta_j`` with ``K = L L^T``. Nothing of size d is ever touched, and only the
constraints that bind (about a hundred of the n (m + 1) here) enter a linear system.

The method, each step exact:

* for fixed weights ``rho`` the least-distance program ``min sum_j ||v_j||^2 / (2 rho_j)`` is a non-negative quadratic
  program in ``mu`` with Hessian ``H_pq = K_(i_p i_q) sum_j rho_j a_pj a_qj``: Lawson and Hanson's active set solves it
  exactly and starts from the previous working set, so a second solve costs a few columns;
* ``rho_j = ||v_j||`` is the fixed point that makes it the sum-of-norms program (the variational form of a norm);
* once the working set repeats, Newton's method on the norms ``t`` (an m-dimensional equation, ``||L^T beta_j(t)|| = 1``)
  lands on that fixed point to rounding, and the result is accepted only when it is verified: every margin and wall
  holds, every multiplier is non-negative, every live neuron has ``||L^T beta_j|| = 1``, and a dead neuron's
  ``min_(nu >= 0) ||L^T beta_j||`` is at most 1 (a non-negative least squares).

Pitfalls avoided: the interior-point program on the same cone (Clarabel, in weight variables) costs 0.5-2.2 s at n = 240
because every neuron's block of L is dense; an unverified answer is never returned (None: the caller solves it the
reference way); tolerances are relative to the constraints' scale (right-hand side 1) and to K's.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from .factor import BorderedCholesky

FEAS_TOL = 1e-9  # a constraint holds when its value is at least its right-hand side minus this (relative)
NORM_TOL = 1e-10  # a live neuron's ||L^T beta_j|| is 1 to this


@dataclass(frozen=True)
class Constraints:
    """The group's constraints: point ``pt[p]``, coefficients ``A[p]`` (one per neuron), right-hand side ``h[p]``;
    the first ``n_margin`` are margins, the rest walls (wall ``p`` belongs to neuron ``wall_neuron[p - n_margin]``)."""

    pt: np.ndarray
    A: np.ndarray
    h: np.ndarray
    n_margin: int


def constraints(y: np.ndarray, D: np.ndarray, s: np.ndarray, rows: np.ndarray) -> Constraints:
    """The margins on ``rows`` and every wall of the cone (D, s), as (point, coefficients) rows."""
    n, m = D.shape
    C = (y[:, None] * s[None, :] * D)[rows]
    G: np.ndarray = 2 * D - 1
    pt_w: np.ndarray = np.repeat(np.arange(n), m)
    A_w = np.zeros((n * m, m))
    A_w[np.arange(n * m), np.tile(np.arange(m), n)] = G.ravel()
    return Constraints(np.concatenate([rows, pt_w]), np.vstack([C, A_w]), np.concatenate([np.ones(len(rows)), np.zeros(n * m)]), len(rows))


def _beta(c: Constraints, mu: np.ndarray, n: int) -> np.ndarray:
    """beta (n, m): ``beta_j = sum_p mu_p a_pj e_(i_p)`` (the margins' points are distinct, the walls are one per
    (point, neuron) in order)."""
    m = c.A.shape[1]
    k = c.n_margin
    B = mu[k:].reshape(n, m) * c.A[k:].sum(axis=1).reshape(n, m)
    B[c.pt[:k]] += mu[:k, None] * c.A[:k]
    return B


def _values(c: Constraints, Z: np.ndarray) -> np.ndarray:
    """Each constraint's left-hand side at pre-activations Z (n, m)."""
    return np.einsum("pj,pj->p", c.A, Z[c.pt])


def _block(K: np.ndarray, c: Constraints, F: np.ndarray, P: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """``H_FP``: ``K_(i_p i_q) sum_j rho_j a_pj a_qj`` over the constraints p in F, q in P."""
    return K[np.ix_(c.pt[F], c.pt[P])] * ((c.A[F] * rho) @ c.A[P].T)


BATCH = 64  # the most violated constraints added to the working set at once


def _nnqp(K: np.ndarray, c: Constraints, rho: np.ndarray, passive: np.ndarray, max_iter: int):
    """(mu, passive, status) of ``min_(mu >= 0) 1/2 mu^T H mu - h^T mu`` (H of weights rho) by Lawson and Hanson's
    active set, started from the working set ``passive`` and adding the most violated constraints, one at a time (Lawson
    and Hanson's own step) and, while every added one stays in the working set, twice as many the next time (up to
    BATCH); None when the factor breaks
    down or the iterations run out."""
    n = K.shape[0]
    mu = np.zeros(len(c.h))
    f = BorderedCholesky(lambda F, P: _block(K, c, F, P, rho), None, np.flatnonzero(passive), rel=1e-12, strict=False)
    while len(f.F):  # the start: the working set's solution, its non-positive entries dropped until none is left
        if not f.ok:
            return None
        sF = f.solve(c.h[f.F])
        if (sF > 0).all():
            mu[f.F] = sF
            break
        f.refactor(f.F[sF > 0])
    batch = 1
    for _ in range(max_iter):
        if mu.max(initial=0.0) > 1e12:  # the dual runs off: the cone is infeasible (or nearly so); not this method's call
            return None
        w = c.h - _values(c, (K @ _beta(c, mu, n)) * rho)
        w[f.F] = -np.inf
        order = np.argsort(-w)[:batch]
        order = order[w[order] > FEAS_TOL]
        if not len(order):
            out: np.ndarray = np.zeros(len(c.h), bool)
            out[f.F] = True
            return mu, out, "optimal"
        added = f.add([int(p) for p in order])
        if not added:
            return None
        before = mu.copy()
        while len(f.F):  # the inner loop: solve on F, step back to feasibility where the solution goes non-positive
            sF = f.solve(c.h[f.F])
            if (sF > 0).all():
                mu[:] = 0.0
                mu[f.F] = sF
                break
            muF = mu[f.F]
            neg = sF <= 0
            alpha = float(np.min(muF[neg] / np.maximum(muF[neg] - sF[neg], 1e-300)))
            muF = muF + alpha * (sF - muF)
            keep = (muF > 1e-15 * max(1.0, float(muF.max()))) & ~(neg & (muF <= 0))
            mu[:] = 0.0
            mu[f.F[keep]] = muF[keep]
            f.refactor(f.F[keep])
            if not f.ok:
                return None
        kept = np.isin(added, f.F)
        batch = min(2 * batch, BATCH) if kept.all() else max(1, batch // 2)  # grow while every added column stays
        if not kept.any() and np.abs(mu - before).max() == 0:
            batch = 1
    return None


def _newton_norms(K: np.ndarray, c: Constraints, F: np.ndarray, t: np.ndarray, live: np.ndarray, iters: int = 40):
    """(t, mu_F, live, F): the norms at which the working set F's least-distance solution has ``||L^T beta_j|| = 1`` for
    every live neuron (Newton's method on t). A neuron whose norm Newton drives through 0 is dead: it leaves, with its
    walls, and Newton goes on. None when it fails to converge or a system is singular."""
    n, m = K.shape[0], c.A.shape[1]
    live = live & (t > 0)
    wall_of = np.concatenate([np.full(c.n_margin, -1), np.tile(np.arange(m), n)])
    for _ in range(iters):
        F = F[(wall_of[F] < 0) | live[np.maximum(wall_of[F], 0)]]
        idx = np.flatnonzero(live)
        if not len(idx):  # every neuron dead: no margin can hold
            return None
        AF, ptF = c.A[F], c.pt[F]
        KF = K[np.ix_(ptF, ptF)]
        try:
            fac = sla.cho_factor(_block(K, c, F, F, t), check_finite=False)
        except (np.linalg.LinAlgError, ValueError):
            return None
        x = sla.cho_solve(fac, c.h[F], check_finite=False)
        mu = np.zeros(len(c.h))
        mu[F] = x
        B = _beta(c, mu, n)
        KB = K @ B
        phi = np.einsum("ij,ij->j", B, KB)[idx] - 1.0
        if np.abs(phi).max() <= NORM_TOL:
            return np.where(live, t, 0.0), x, live, F
        dx = -sla.cho_solve(fac, ((KF @ (AF[:, idx] * x[:, None])) * AF[:, idx]), check_finite=False)  # H_j x: (|F|, |idx|)
        J = np.empty((len(idx), len(idx)))
        for a, k in enumerate(idx):
            J[a] = 2 * (KB[ptF, k] @ (AF[:, k][:, None] * dx))  # d phi_k / d t_j
        try:
            step = np.linalg.solve(J, -phi)
        except np.linalg.LinAlgError:
            return None
        tj = t[idx]
        through = tj + step <= 0
        if through.any():
            j = idx[np.argmin((tj + step) / tj)]
            live[j] = False  # Newton takes this norm through 0: the neuron is dead at the solution
            t = np.where(live, t, 0.0)
            continue
        t = t.copy()
        t[idx] = tj + step
    return None


def _dead_ok(L: np.ndarray, beta: np.ndarray, g: np.ndarray) -> bool:
    """A dead neuron's dual feasibility: ``min_(nu >= 0) ||L^T (beta + g nu)|| <= 1`` (its walls are all tight)."""
    from scipy.optimize import nnls  # heavy: scipy.optimize (loaded on first use)

    try:
        _, res = nnls(L.T * g[None, :], -(L.T @ beta), maxiter=50 * len(g))
    except RuntimeError:
        return False
    return bool(res <= 1 + 1e-9)


def gram_cone_program(L: np.ndarray, y: np.ndarray, D: np.ndarray, s: np.ndarray, rows: np.ndarray, max_outer: int = 60):
    """(status, V (m, r), wall multipliers (n, m), margin multipliers (n,)) of the group's cone program (the multipliers
    of ``min sum_j ||v_j||``), verified as above; None when it is not verified (the caller solves it another way)."""
    n, m = D.shape
    K = L @ L.T
    c = constraints(y, D, s, rows)
    rho = np.ones(m)
    passive = np.arange(len(c.h)) < c.n_margin  # a cold start from every margin (most bind at the optimum)
    live = np.ones(m, bool)
    for _ in range(max_outer):
        out = _nnqp(K, c, np.where(live, rho, 0.0), passive, max_iter=4 * len(c.h))
        if out is None:
            return None
        mu, passive, _status = out
        B = _beta(c, mu, n)
        norms = np.sqrt(np.maximum(np.einsum("ij,ij->j", B, K @ B), 0.0))
        rho = np.where(live, rho * norms, 0.0)  # the fixed-point step
        live = live & (rho > 1e-9 * rho.max())
        passive[c.n_margin:] &= np.tile(live, n)  # a dead neuron's walls hold at z = 0 and leave the working set
        got = _newton_norms(K, c, np.flatnonzero(passive), rho, live)
        first = got
        for _ in range(8):  # Newton's working set corrected: the constraints its point violates join (a wall that binds once a
            # neuron dies), those with a negative multiplier leave (a degenerate constraint, multiplier -1e-9 where K's diagonal
            # is 8e3, whose clipping moves the margins by 6e-8), and Newton runs again
            if got is None:
                break
            bad, neg = _violated(K, c, got[3], got[0], got[1], got[2]), got[3][got[1] < 0]
            if not len(bad) and not len(neg):
                break
            got = _newton_norms(K, c, np.union1d(np.setdiff1d(got[3], neg), bad[:BATCH]), got[0], got[2])
        if got is not first and first is not None:  # the corrected point where it verifies, else the first one
            done = _verified(L, K, c, got[3], got[0], got[1], got[2], D) if got is not None else None
            if done is not None:
                return done
            got = first
        if got is None:
            continue
        done = _verified(L, K, c, got[3], got[0], got[1], got[2], D)
        if done is not None:
            return done
        # Newton's norms for this working set are a better next weight than the fixed-point step; a neuron it found
        # dead keeps a small weight, so the next working set can still revive it
        rho = np.where(got[2], got[0], 1e-3 * got[0].max())
    return None


def _violated(K, c: Constraints, F, t, xF, live) -> np.ndarray:
    """The constraints a working set's Newton point violates (beyond FEAS_TOL, relative to its pre-activations), the most
    violated first."""
    mu = np.zeros(len(c.h))
    mu[F] = np.maximum(xF, 0.0)
    Z = (K @ _beta(c, mu, K.shape[0])) * np.where(live, t, 0.0)
    gap = c.h - _values(c, Z)
    bad = np.flatnonzero(gap > FEAS_TOL * max(1.0, float(np.abs(Z).max())))
    return bad[np.argsort(-gap[bad], kind="stable")]  # the most violated first


def _verified(L, K, c: Constraints, F, t, xF, live, D):
    """The program's solution from a working set's Newton point, when every optimality condition holds; else None."""
    n, m = D.shape
    if (xF < -FEAS_TOL * max(1.0, np.abs(xF).max())).any():
        return None
    mu = np.zeros(len(c.h))
    mu[F] = np.maximum(xF, 0.0)
    B = _beta(c, mu, n)
    tt = np.where(live, t, 0.0)
    Z = (K @ B) * tt
    vals = _values(c, Z)
    zs = max(1.0, float(np.abs(Z).max()))
    if (vals < c.h - FEAS_TOL * zs).any():
        return None
    if (~live).any():
        Bm = _beta(c, np.where(np.arange(len(mu)) < c.n_margin, mu, 0.0), n)  # the margins' part of beta
        G = 2 * D - 1
        if not all(_dead_ok(L, Bm[:, j], G[:, j]) for j in np.flatnonzero(~live)):
            return None
    V = (B * tt).T @ L  # v_j = t_j L^T beta_j
    lam = np.zeros(n)
    lam[c.pt[:c.n_margin]] = mu[:c.n_margin]  # one margin per point
    nu = mu[c.n_margin:].reshape(n, m)
    return "optimal", V, np.where(live[None, :], nu, 0.0), lam
