"""The KKT certificate's multiplier program, solved in the Gram space of the data (no parameters x n array).

At a network scaled to unit margin, (P)'s stationarity asks for multipliers on the active points whose combination of
margin gradients is theta. At a tie (an active point i with ``z_ij = 0``) the Clarke subdifferential lets ReLU'(0) be
anything in [0, 1], so the program (:mod:`.certificate`) is

    minimize ||theta - sum_i lambda_i h_i - sum_(i,j) tie mu_ij t_ij||   subject to   lambda >= 0,  0 <= mu_ij <= lambda_i.

Its feasible combinations form the conic hull of the *generators*: one per active point i and per choice of ReLU'(0) in
{0, 1} at each of its ties, the gradient of q_i with that choice (``lambda_i = sum of its generators' weights``,
``mu_ij`` = the weights of those with ReLU'(0) = 1 at j). So the program is a non-negative least squares over
generators, and each generator is a point ``p`` and a row ``sigma in {0, 1}^m`` of ReLU' values. Two generators' inner
product is

    <g, g'> = G~_(p p') sum_j (y_p a_j sigma_j)(y_p' a_j sigma'_j) + [a trained] y_p y_p' sum_j ReLU(z_pj) ReLU(z_p'j),

with ``G~ = X~ X~^T`` (X~ the data with a ones column where the bias is trained), and ``<g, theta> = sum_j y_p a_j
sigma_j z~_pj + [a trained] q_p``. The number of generators is exponential in a point's ties, so they are generated as
needed (column generation): solve over the current set (Lawson and Hanson's active set on the Gram matrix, warm
started), then price every point's best generator exactly. Its reduced cost is ``-<h_p, r> - sum_(j tie) max(<t_pj, r>,
0)`` (ReLU'(0) = 1 exactly where that lowers the objective), with ``<t_pj, r> = y_p a_j (z~_pj - (G~ beta)_pj)``, all
in O(n^2 m). None improving proves the optimum over the whole Clarke cone.

The residual is then computed as a vector of theta's size (``W~ - beta^T X~`` and the output layer's part, O(m n d),
the cost of one forward pass), never through the expansion ``||theta||^2 - 2 <g, u> + u^T S u``, which cancels to
about 1e-8 relative where the residual is 1e-9.

Pitfall avoided: the parameter-space program formed the parameters x n Jacobian (131,000 x 3,300 with the tie columns
at d = 4096, k = 16, n = 1107), a QR of it and an interior-point program on the dense triangle: 30-100 s per
certificate.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg.lapack import dpstrf

from .factor import BorderedCholesky

PRICE_TOL = 1e-12  # a generator enters when its reduced cost is below -PRICE_TOL ||theta|| ||generator||


@dataclass(frozen=True)
class Generators:
    """Generators of the Clarke cone at a network: point ``pt[g]`` and ReLU' row ``sigma[g]`` (m,)."""

    pt: np.ndarray
    sigma: np.ndarray


@dataclass(frozen=True)
class GramData:
    """What the program needs of a network at unit margin, all of size n x m or n x n: the Gram ``K`` of the active
    points (X~ X~^T), ``coef`` = y_i a_j (n_A, m), ``Z`` the pre-activations z~ (the trained blocks'), ``relu`` =
    y_i ReLU(z_ij) where the output layer is trained (else zeros), ``q`` the margins."""

    K: np.ndarray
    coef: np.ndarray
    Z: np.ndarray
    relu: np.ndarray
    q: np.ndarray
    a_trained: bool

    def gram(self, g: Generators) -> np.ndarray:
        """The generators' Gram matrix, from K and the ReLU' rows (O(G^2 m))."""
        C = self.coef[g.pt] * g.sigma
        Rl = self.relu[g.pt]
        return self.K[np.ix_(g.pt, g.pt)] * (C @ C.T) + Rl @ Rl.T

    def target(self, g: Generators) -> np.ndarray:
        """<g, theta>: the W~ block's sum_j y_p a_j sigma_j z~_pj, plus the output layer's y_p sum_j a_j ReLU(z_pj) =
        q_p where it is trained."""
        w = np.einsum("gj,gj->g", self.coef[g.pt] * g.sigma, self.Z[g.pt])
        return w + self.q[g.pt] if self.a_trained else w

    def beta(self, g: Generators, u: np.ndarray) -> np.ndarray:
        """beta (n_A, m): the W~ block of sum_g u_g g is ``sum_i beta_ij x~_i`` per neuron j."""
        B = np.zeros_like(self.coef)
        np.add.at(B, g.pt, u[:, None] * self.coef[g.pt] * g.sigma)
        return B

    def out_weights(self, g: Generators, u: np.ndarray) -> np.ndarray:
        """The output layer's part of sum_g u_g g (m,): sum_g u_g y_p ReLU(z_p)."""
        return (u[:, None] * self.relu[g.pt]).sum(axis=0)


def _nnqp(S: np.ndarray, b: np.ndarray, start: np.ndarray | None = None, max_iter: int | None = None):
    """(u, converged): ``min_(u >= 0) 1/2 u^T S u - b^T u`` by Lawson and Hanson's active set on the Gram matrix,
    started from the working set ``start`` (default: every column), adding the most violated column at a time (a
    bordered Cholesky update) and stepping back where the solution leaves the orthant (a refactor)."""
    N = len(b)
    u = np.zeros(N)
    scale = np.sqrt(np.maximum(np.diag(S), 1e-300))
    tol = PRICE_TOL * float(np.max(np.abs(b) / scale, initial=0.0))  # w / ||g||: in the units of ||theta||
    F0 = np.flatnonzero(np.ones(N, bool) if start is None else start)
    f = BorderedCholesky(lambda F, P: S[np.ix_(F, P)], np.diag(S), np.zeros(0, int), rel=1e-13, strict=True)
    while len(F0):  # the warm start: the working set's solution, non-positive entries dropped until none is left
        if not f.refactor(F0):  # dependent columns: keep the independent ones (pivoted Cholesky order)
            piv, rank = _independent(S[np.ix_(F0, F0)])
            # the set always shrinks (LAPACK's rank test and the factor's pivot test can disagree at the margin)
            F0 = F0[np.sort(piv[:min(rank, len(F0) - 1)])]
            continue
        s = f.solve(b[f.F])
        if (s > 0).all():
            u[F0] = s
            break
        F0 = F0[s > 0]
    if not len(F0):
        f.refactor(F0)
    banned: np.ndarray = np.zeros(N, bool)
    for _ in range(max_iter or 10 * N + 100):
        w = b - S @ u
        w[f.F] = -np.inf
        w[banned] = -np.inf
        p = int(np.argmax(w / scale))
        if not w[p] / scale[p] > tol:
            return u, True
        if not f.add([p]):
            banned[p] = True
            continue
        s = f.solve(b[f.F])
        while not (s > 0).all():  # step back to the orthant: the entries that reach 0 leave
            uF = u[f.F]
            neg = s <= 0
            alpha = float(np.min(uF[neg] / np.maximum(uF[neg] - s[neg], 1e-300)))
            uF = uF + alpha * (s - uF)
            keep = uF > 1e-15 * max(1.0, float(uF.max()))
            u[:] = 0.0
            u[f.F[keep]] = uF[keep]
            if not f.refactor(f.F[keep]):
                return u, False
            if not len(f.F):
                break
            s = f.solve(b[f.F])
        u[:] = 0.0
        if len(f.F):
            u[f.F] = s
        if p in f.F:
            banned[:] = False
        else:  # it left again at once: rounding, not progress; not tried again until the working set changes
            banned[p] = True
    return u, False


def _independent(S: np.ndarray) -> tuple[np.ndarray, int]:
    """(pivot order, rank) of the positive semi-definite S by LAPACK's pivoted Cholesky (rank at 1e-12 relative)."""
    _, piv, rank, _ = dpstrf(np.array(S, dtype=float, order="F"), tol=1e-12 * max(float(np.max(np.diag(S))), 1e-300))
    return piv - 1, int(rank)


@dataclass(frozen=True)
class Multipliers:
    """The program's solution: ``lam`` (n_A,), ``mu`` per tie, the residual vector's norm ``residual`` (absolute, in
    theta's units), ``converged`` (the active set and the pricing both finished: the optimum over the Clarke cone) and
    the generators used."""

    lam: np.ndarray
    mu: np.ndarray
    residual: float
    converged: bool
    generators: int
    rounds: int


def clarke_multipliers(data: GramData, ties: list[tuple[int, int]], Xt: np.ndarray, Wt: np.ndarray, a: np.ndarray | None,
                       sigma0: np.ndarray, max_rounds: int = 50, fixed: str | None = None) -> Multipliers:
    """The multiplier program over the Clarke cone (module docstring). ``ties``: (row in the active set, neuron);
    ``Xt`` the active points (n_A, d~), ``Wt`` (m, d~) the trained first-layer weights, ``a`` the output weights where
    trained (None where fixed), ``sigma0`` (n_A, m) ReLU' with ties at 0. ``fixed``: "relu0" or "relu1" solves over one
    generator per point (every tie at ReLU'(0) = 0, or = 1) without pricing (what a certificate rests on)."""
    nA, m = sigma0.shape
    tie_of: list[list[int]] = [[] for _ in range(nA)]
    for i, j in ties:
        tie_of[i].append(j)
    sig = sigma0.copy()
    if fixed == "relu1":
        for i, j in ties:
            sig[i, j] = 1.0
    gens = Generators(np.arange(nA), sig)
    tn = float(np.sqrt(np.sum(Wt * Wt) + (float(a @ a) if a is not None else 0.0)))
    u = np.zeros(nA)
    converged, rounds = False, 0
    tie_pts = np.array([i for i in range(nA) if tie_of[i]], int)
    for rounds in range(1, max_rounds + 1):
        S = data.gram(gens)
        b = data.target(gens)
        u, ok = _nnqp(S, b, np.concatenate([u > 0, np.ones(len(b) - len(u), bool)]) if rounds > 1 else None)
        if not ok:
            converged = False
            break
        if fixed is not None or not len(tie_pts):
            converged = True
            break
        beta = data.beta(gens, u)
        rho = data.Z - data.K @ beta  # <x~_p, r_Wj>: the W~ block's residual against each active point
        ra = (a - data.out_weights(gens, u)) if a is not None else None
        tie_gain = data.coef * rho  # <t_pj, r>
        new_pt, new_sig = [], []
        for p in tie_pts:
            on = [j for j in tie_of[p] if tie_gain[p, j] > 0]
            if not on:
                continue
            s = sigma0[p].copy()
            s[on] = 1.0
            h_r = float(np.sum(data.coef[p] * s * rho[p])) + (float(data.relu[p] @ ra) if ra is not None else 0.0)
            norm = float(np.sqrt(max(data.K[p, p] * np.sum((data.coef[p] * s) ** 2) + data.relu[p] @ data.relu[p], 1e-300)))
            if h_r > PRICE_TOL * tn * norm and not _has(gens, p, s):
                new_pt.append(p)
                new_sig.append(s)
        if not new_pt:
            converged = True
            break
        gens = Generators(np.concatenate([gens.pt, new_pt]), np.vstack([gens.sigma, np.array(new_sig)]))
    lam = np.zeros(nA)
    np.add.at(lam, gens.pt, u)
    mu = np.array([sum(u[g] for g in np.flatnonzero(gens.pt == i) if gens.sigma[g, j] > sigma0[i, j]) for i, j in ties]) if ties else np.zeros(0)
    beta = data.beta(gens, u)
    rW = Wt - beta.T @ Xt  # the residual as a vector: no cancellation
    res2 = float(np.sum(rW * rW))
    if a is not None:
        ra = a - data.out_weights(gens, u)
        res2 += float(ra @ ra)
    return Multipliers(lam, mu, float(np.sqrt(res2)), converged, len(gens.pt), rounds)


def _has(g: Generators, p: int, s: np.ndarray) -> bool:
    idx = np.flatnonzero(g.pt == p)
    return bool(len(idx)) and bool(np.any(np.all(g.sigma[idx] == s, axis=1)))
