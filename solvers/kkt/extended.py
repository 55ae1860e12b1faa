"""KKT points of (P) with hidden biases at a feature scale far below 1, continued from unit scale and certified in
extended precision.

Takes a KKT point of (P) on data at unit scale ``X`` (the engine's, :mod:`.engine`), the labels and the exponent ``e``
of the user's scale (their data are ``X 2^e``); returns a :class:`ScaledPoint`: the point of (P) on ``X 2^e`` that
the unit point continues to, its float64 rounding as a network, and its certificate, evaluated in ``mpmath`` at as
many digits as the scale needs (or why there is none).

The mathematics. On data ``s X`` (s = 2^e) the substitution ``W = W'/sqrt(s), b = sqrt(s) b', a = a'/sqrt(s)`` (the
multipliers ``mu = mu'/s``) maps (P) to the problem on ``X`` with the bias's cost weighted by ``lam = s^2``:

    (Q_lam)   minimize 1/2 (||W'||^2 + lam ||b'||^2 + ||a'||^2)   s.t.   y_i sum_j a'_j ReLU(w'_j.x_i + b'_j) >= 1,

one problem for each s, not one up to scale (hidden biases make (P) not scale-equivariant); lam = 1 is (P) at unit
scale. The point is followed along lam = 1, 1/4, ... on its face (the active points, the pattern of signs at them and
the ties z_ij = 0 with Clarke multipliers nu_ij in [0, mu_i]) by Newton's method on the face's KKT equations, the step
shortened where the face would change (a multiplier leaving its range, an inactive margin reaching 1, a sign
crossing) and the face changed there. Below lam = 2^-100 the float64 path has converged (the bias's cost is below
float64's resolution of the others); the last step, to lam = s^2 exactly, is Newton's method with the residual
evaluated in mpmath and the float64 Jacobian (iterative refinement: about 13 digits a step), neurons that are one
neuron split solved as one (:func:`_groups`).

Why extended precision. In (P)'s own units the bias rows of the stationarity residual are 1/s times Q's, so a
relative residual of 1e-6 needs Q's bias rows cancelled to s 1e-6, and float64 rounding alone leaves 2^-52: below
s = 2^-32 no float64 evaluation certifies, whatever the network. The certificate (:func:`_certificate`) is evaluated
in (P)'s own coordinates on the user's data (exactly: each float64 is an mpf), independently of the substitution: the
relative stationarity residual ``||theta - sum_i mu_i grad q_i - sum nu_ij t_ij|| / ||theta||``, the margins (active
ones 1, inactive ones above 1), the multipliers' ranges and the signs of the pre-activations. The network returned is
that point rounded to float64; its own float64 residual is about 2^-52 / s (the rounding of a alone), so it is shown as
the point's rounding, the certificate being the extended one's.

Pitfalls avoided: the engine at s = 2^-98 certified nothing (every cone program ended infeasible: Clarabel's
absolute tolerances), and the same search on ``X 2^98`` finds the points of a different problem (lam = 1).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np

from ..networks import TwoLayerReLU
from .policy import POINT_TOL

EXTENDED = "optimal (extended precision)"  # a certificate's status when evaluated in mpmath here, not by a cone program
LAM_FLOAT = -100  # log2 lam below which the float64 path stops (the bias's cost beneath float64's resolution)
MAX_UNKNOWNS = 2000  # the face's unknowns beyond which no continuation is tried (a dense float64 Jacobian, mpmath residuals)
TIE_TOL = 1e-9  # |z_ij| relative to (1 + max |z|) at which an active point's pre-activation is a tie (the certificate's)
ACTIVE_TOL = 1e-6  # margins within this of 1 are active (the certificate's)
MAX_EVENTS = 40  # face changes along one path
PIVOTS = 6  # rounds of face changes at one lam (:func:`_next_face`)
NEWTON_TOL = 1e-13  # float64 Newton: residual norm relative to the parameters' norm


@dataclass(frozen=True)
class Face:
    """Where a point sits: its active points (indices into X), the signs of their pre-activations off the ties
    (``sigma``: active x neurons, True for z > 0) and the ties (pairs (row in active, neuron))."""

    active: tuple[int, ...]
    sigma: np.ndarray
    ties: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class ScaledPoint:
    """A unit-scale KKT point continued to (P) on ``X 2^e`` (or a given network's nearby point, :func:`certify_near`):
    the network there (float64 rounding), whether the extended certificate holds (relative residual and slackness at
    most 1e-6 in (P)'s own coordinates, the bias rows on their own scale too, evaluated at ``digits``), that residual,
    the face's size, the face changes along the path and why it failed (or "")."""

    net: TwoLayerReLU | None
    certified: bool
    residual: float
    slackness: float
    digits: int
    exponent: int
    active: int
    ties: int
    events: int
    reason: str
    value: float = float("nan")  # 1/2 ||theta||^2 at unit margin, in (P)'s coordinates (float64 range permitting)
    distance: float = float("nan")  # (certify_near) the given network's relative distance from the point, in (P)'s units
    multipliers: np.ndarray | None = None  # (P)'s multipliers at the active points (float64), in the face's order
    face: Face | None = None

    @property
    def trace(self) -> str:
        if not self.certified:
            return f"continued from unit scale: {self.reason}"
        return (f"continued from unit scale ({self.events} face change(s)); certified in {self.digits}-digit arithmetic "
                f"(relative residual {self.residual:.2g} in (P)'s units at 2^{self.exponent}); the network is its float64 rounding")


def _split(v: np.ndarray, m: int, d: int, k: int):
    """(W, b, a, mu, nu) from the unknowns' vector (float64 or object)."""
    o = m * d
    return v[:o].reshape(m, d), v[o:o + m], v[o + m:o + 2 * m], v[o + 2 * m:o + 2 * m + k], v[o + 2 * m + k:]


def _coefficients(face: Face, y: np.ndarray, mu, nu, m: int):
    """``C_ij = y_i (mu_i sigma_ij + nu_ij)`` over the active points (the stationarity's weights), any dtype."""
    yA = y[list(face.active)]
    C = face.sigma * (yA * mu)[:, None] if face.sigma.size else np.zeros((len(face.active), m))
    C = C.astype(object) if isinstance(mu, np.ndarray) and mu.dtype == object else C
    for r, (i, j) in enumerate(face.ties):
        C[i, j] = C[i, j] + yA[i] * nu[r]
    return C


def face_equations(v: np.ndarray, X: np.ndarray, y: np.ndarray, face: Face, lam, m: int, d: int) -> np.ndarray:
    """Q_lam's KKT equations on the face (float64, or mpmath objects for ``v`` and ``X`` of dtype object):
    ``W_j - a_j sum_i C_ij x_i``, ``lam b_j - a_j sum_i C_ij``, ``a_j - sum_i C_ij z_ij``, ``q_i - 1`` (active i) and
    ``z_ij`` (ties)."""
    k = len(face.active)
    W, b, a, mu, nu = _split(v, m, d, k)
    XA = X[list(face.active)]
    Z = XA @ W.T + b
    C = _coefficients(face, y, mu, nu, m)
    g = C.T @ XA
    s = C.sum(axis=0)
    yA = y[list(face.active)]
    q = yA * ((face.sigma * Z) @ a) if k else np.zeros(0)
    tie = np.array([Z[i, j] for i, j in face.ties], dtype=Z.dtype)
    return np.concatenate([(W - a[:, None] * g).ravel(), lam * b - a * s, a - (C * Z).sum(axis=0), q - 1, tie])


def face_jacobian(v: np.ndarray, X: np.ndarray, y: np.ndarray, face: Face, lam: float, m: int, d: int) -> np.ndarray:
    """The float64 Jacobian of :func:`face_equations` in the unknowns (W, b, a, mu, nu)."""
    k, t = len(face.active), len(face.ties)
    W, b, a, mu, nu = _split(v, m, d, k)
    XA, yA = X[list(face.active)], y[list(face.active)]
    Z = XA @ W.T + b
    C = _coefficients(face, y, mu, nu, m)
    S: np.ndarray = face.sigma.astype(float)
    N = m * d + 2 * m + k + t
    J = np.zeros((N, N))
    rW, rb, ra, rq, rt = 0, m * d, m * d + m, m * d + 2 * m, m * d + 2 * m + k
    cW, cb, ca, cmu, cnu = rW, rb, ra, rq, rt
    g = C.T @ XA  # m x d
    s = C.sum(axis=0)
    for j in range(m):
        rows = slice(rW + j * d, rW + (j + 1) * d)
        J[rows, cW + j * d:cW + (j + 1) * d] += np.eye(d)
        J[rows, ca + j] -= g[j]
        J[rows, cmu:cmu + k] -= a[j] * (yA * S[:, j])[None, :] * XA.T
        J[rb + j, cb + j] += lam
        J[rb + j, ca + j] -= s[j]
        J[rb + j, cmu:cmu + k] -= a[j] * yA * S[:, j]
        J[ra + j, ca + j] += 1
        J[ra + j, cW + j * d:cW + (j + 1) * d] -= g[j]
        J[ra + j, cb + j] -= s[j]
        J[ra + j, cmu:cmu + k] -= yA * S[:, j] * Z[:, j]
    for r, (i, j) in enumerate(face.ties):
        J[rW + j * d:rW + (j + 1) * d, cnu + r] -= a[j] * yA[i] * XA[i]
        J[rb + j, cnu + r] -= a[j] * yA[i]
        J[ra + j, cnu + r] -= yA[i] * Z[i, j]
        J[rt + r, cW + j * d:cW + (j + 1) * d] += XA[i]
        J[rt + r, cb + j] += 1
    for i in range(k):
        on = S[i] * yA[i]
        for j in (int(u) for u in np.flatnonzero(on)):
            J[rq + i, cW + j * d:cW + (j + 1) * d] += on[j] * a[j] * XA[i]
            J[rq + i, cb + j] += on[j] * a[j]
            J[rq + i, ca + j] += on[j] * Z[i, j]
    return J


def _newton(v: np.ndarray, X, y, face: Face, lam: float, m: int, d: int, iters: int = 30) -> tuple[np.ndarray, float]:
    """Newton's method (least-squares steps: a face with copies of a neuron has a manifold of solutions) in float64;
    returns (v, the final residual norm relative to the unknowns' norm)."""
    rel = float("inf")
    for _ in range(iters):
        F = face_equations(v, X, y, face, lam, m, d)
        rel = float(np.linalg.norm(F)) / max(float(np.linalg.norm(v)), 1e-300)
        if not math.isfinite(rel):
            return v, rel
        if rel <= NEWTON_TOL:
            break
        step = np.linalg.lstsq(face_jacobian(v, X, y, face, lam, m, d), -F, rcond=None)[0]
        v = v + step
    return v, rel


def _violations(v: np.ndarray, X, y, face: Face, m: int, d: int) -> tuple[list, list, list, list, list]:
    """Where the face no longer holds its point: (active rows with mu < 0, ties with nu < 0, ties with nu > mu,
    inactive points with margin below 1, active (row, neuron) off the ties whose sign crossed)."""
    k = len(face.active)
    W, b, a, mu, nu = _split(v, m, d, k)
    Z = X @ W.T + b
    q = y * (np.maximum(Z, 0.0) @ a)
    scale = 1 + float(np.abs(Z).max(initial=0.0))
    neg = [r for r in range(k) if mu[r] < -1e-12 * (1 + float(np.abs(mu).max()))]
    low = [r for r, (i, _) in enumerate(face.ties) if nu[r] < -1e-12 * (1 + abs(float(mu[i])))]
    high = [r for r, (i, _) in enumerate(face.ties) if nu[r] > mu[i] + 1e-12 * (1 + abs(float(mu[i])))]
    act = set(face.active)
    enter = [i for i in range(len(y)) if i not in act and q[i] < 1 - 1e-12]
    tied = set(face.ties)
    ZA = Z[list(face.active)]
    tol = 1e-12 * scale
    cross = [(r, j) for r in range(k) for j in range(m) if (r, j) not in tied
             and ((face.sigma[r, j] and ZA[r, j] < -tol) or (not face.sigma[r, j] and ZA[r, j] > tol))]
    return neg, low, high, enter, cross


def initial_face(net: TwoLayerReLU, X: np.ndarray, y: np.ndarray) -> Face:
    """The face of a unit-margin network: the certificate's active set and ties."""
    Z = net.preactivations(X)
    q = y * (np.maximum(Z, 0.0) @ net.a)
    active = np.flatnonzero(q <= 1 + ACTIVE_TOL)
    ZA = Z[active]
    tie = np.abs(ZA) <= TIE_TOL * (1 + float(np.abs(Z).max()))
    return Face(tuple(int(i) for i in active), (ZA > 0) & ~tie, tuple((int(r), int(j)) for r, j in zip(*np.nonzero(tie))))


def _multipliers(net: TwoLayerReLU, X, y, face: Face, lam: float) -> np.ndarray:
    """Least-squares (mu, nu) of the face's stationarity rows at ``net`` (linear in them once theta is fixed)."""
    m, d, k = net.width, net.dim, len(face.active)
    v0 = np.concatenate([net.W.ravel(), net.b, net.a, np.zeros(k + len(face.ties))])  # type: ignore[arg-type]
    F0 = face_equations(v0, X, y, face, lam, m, d)[:m * d + 2 * m]
    J = face_jacobian(v0, X, y, face, lam, m, d)[:m * d + 2 * m, m * d + 2 * m:]
    return np.linalg.lstsq(J, -F0, rcond=None)[0]


def _changed(face: Face, v: np.ndarray, X, y, viol, m: int, d: int, through: bool = False) -> Face:
    """The face after its violations: negative multipliers leave the active set, ties leave to the side their
    multiplier reached, inactive points below margin 1 join (their signs as they are), crossed signs become ties (or,
    ``through``, flip: the point passes the wall without staying on it)."""
    neg, low, high, enter, cross = viol
    k = len(face.active)
    W, b, _, _, _ = _split(v, m, d, k)
    Z = X @ W.T + b
    sigma = face.sigma.copy()
    for r in high:
        i, j = face.ties[r]
        sigma[i, j] = True
    drop_ties = set(low) | set(high)
    ties = [t for r, t in enumerate(face.ties) if r not in drop_ties] + ([] if through else [t for t in cross if t not in face.ties])
    for r, j in cross:
        sigma[r, j] = not sigma[r, j] if through else False
    keep = [r for r in range(k) if r not in set(neg)]
    new_active = [face.active[r] for r in keep] + list(enter)
    rows = [sigma[r] for r in keep] + [Z[i] > 0 for i in enter]
    remap = {r: n for n, r in enumerate(keep)}
    ties2 = tuple((remap[r], j) for r, j in ties if r in remap)
    sig = np.array(rows, dtype=bool).reshape(len(new_active), m)
    for r, j in ties2:
        sig[r, j] = False
    return Face(tuple(new_active), sig, ties2)


def _resize(v: np.ndarray, old: Face, new: Face, m: int, d: int) -> np.ndarray:
    """The unknowns carried to a new face: theta kept, mu and nu of rows and ties that stay, 0 for new ones."""
    k = len(old.active)
    W, b, a, mu, nu = _split(v, m, d, k)
    pos = {i: r for r, i in enumerate(old.active)}
    mu2 = np.array([mu[pos[i]] if i in pos else 0.0 for i in new.active])
    tie_old = {(old.active[r], j): nu[n] for n, (r, j) in enumerate(old.ties)}
    nu2 = np.array([tie_old.get((new.active[r], j), 0.0) for r, j in new.ties])
    return np.concatenate([W.ravel(), b, a, mu2, nu2])


def _drop_zero_neurons(net: TwoLayerReLU) -> TwoLayerReLU:
    """The network without neurons of zero norm (they are in every face and make its equations singular)."""
    norms = np.sqrt((net.W ** 2).sum(axis=1) + net.b ** 2 + net.a ** 2)  # type: ignore[operator]
    keep = norms > 1e-9 * float(norms.max(initial=0.0))
    return TwoLayerReLU(W=net.W[keep], a=net.a[keep], b=net.b[keep], trained=net.trained)  # type: ignore[index]


def follow(net: TwoLayerReLU, X: np.ndarray, y: np.ndarray, end: float, deadline: float | None = None) -> tuple[np.ndarray, Face, int, str]:
    """The point ``net`` of (Q_1) followed to (Q_lam), lam = 2^end (end <= 0), in float64 on its face, the face changed
    where the point leaves it: (unknowns, face, face changes, why it failed or ""). ``deadline``: a
    ``time.perf_counter()`` value past which no step begins."""
    m, d = net.width, net.dim
    face = initial_face(net, X, y)
    v = np.concatenate([net.W.ravel(), net.b, net.a, _multipliers(net, X, y, face, 1.0)])  # type: ignore[arg-type]
    v, rel = _newton(v, X, y, face, 1.0, m, d)
    if not rel <= 1e-10 or any(_violations(v, X, y, face, m, d)):
        return v, face, 0, f"the unit point does not solve its face's KKT equations (relative residual {rel:.2g})"
    t, step, events = 0.0, 2.0, 0
    while t > end:
        if deadline is not None and time.perf_counter() > deadline:
            return v, face, events, f"the path stopped at lam = 2^{t:.2f}: past the time cap"
        t1 = max(t - step, end)
        v1, rel = _newton(v, X, y, face, 2.0 ** t1, m, d)
        viol = _violations(v1, X, y, face, m, d)
        if rel <= 1e-10 and not any(viol):
            v, t, step = v1, t1, min(2 * step, 16.0)
            continue
        if step > 1 / 64:
            step /= 2
            continue
        if events >= MAX_EVENTS or not any(viol):
            why = f"{MAX_EVENTS} face changes" if any(viol) else f"Newton's method did not converge (relative residual {rel:.2g})"
            return v, face, events, f"the path stops at lam = 2^{t:.2f}: {why}"
        moved = _next_face(face, v1, X, y, viol, 2.0 ** t1, m, d)
        if moved is None:
            return v, face, events, f"the face changes at lam = 2^{t1:.2f} in a way the path does not follow"
        face, v = moved
        t, step, events = t1, 1 / 16, events + 1
    return v, face, events, ""


def _next_face(face: Face, v1: np.ndarray, X, y, viol, lam: float, m: int, d: int) -> tuple[Face, np.ndarray] | None:
    """The face the point enters where ``viol`` (:func:`_violations`) says it leaves ``face``, and its solution there:
    every violation changed at once, else each one alone (two events met in one short step, or one that undoes
    another), then with crossed signs passing their walls instead of staying on them; each followed by the violations
    it sets off at the same lam, in turn (at most PIVOTS rounds); the first whose solution holds its face; None where
    none does."""
    singles = [tuple([x] if n == kind else [] for n in range(5)) for kind, items in enumerate(viol) for x in items][:12]
    tried = [(viol, False)] + [(c, False) for c in singles] + ([(viol, True)] + [(c, True) for c in singles if c[4]] if viol[4] else [])
    for change, through in tried:
        old, v2 = face, v1
        for _ in range(PIVOTS):  # the events one change sets off at the same lam (walls meeting at a kink), in turn
            new = _changed(old, v2, X, y, change, m, d, through)
            v2, rel = _newton(_resize(v2, old, new, m, d), X, y, new, lam, m, d)
            if not rel <= 1e-10:
                break
            change = _violations(v2, X, y, new, m, d)
            if not any(change):
                return new, v2
            old = new
    return None


def digits_for(e: int) -> int:
    """Decimal digits for a certificate at 2^e: in Q's units the bias rows' own term, lam b = 4^e b, must be resolved
    beside terms of order 1 that cancel, to 1e-6 of itself with room (20 digits beyond 4^-e).

    Pitfall avoided: 20 + |e| log10 2 digits (enough for (P)'s global relative residual, in which the bias block weighs
    s times the rest) left two parallel neurons' biases 1.8e-4 apart from the exact point's (a referee's check)."""
    return 20 + math.ceil(2 * max(0, -e) * math.log10(2.0))


def _groups(v: np.ndarray, face: Face, m: int, d: int) -> list[list[int]]:
    """Neurons that are one neuron split: the same sign of a, the same signs and ties at the active points and
    w parallel (cosine within 1e-9 of 1). At a KKT point their (w_j, b_j) / a_j are equal (each neuron's
    stationarity with the same weights C), but the face's equations see how their bias is shared only through the bias
    cost, lam = 4^e: a direction float64 cannot resolve, so they are solved as one."""
    W, b, a, _, _ = _split(v, m, d, len(face.active))
    unit = W / np.maximum(np.linalg.norm(W, axis=1, keepdims=True), 1e-300)  # w alone: (w, b) is parallel only at the
    # exact point, and the bias is what float64 leaves unresolved
    ties = [frozenset(r for r, jj in face.ties if jj == j) for j in range(m)]
    out: list[list[int]] = []
    for j in range(m):
        for g in out:
            k = g[0]
            if (np.sign(a[j]) == np.sign(a[k]) and ties[j] == ties[k] and np.array_equal(face.sigma[:, j], face.sigma[:, k])
                    and float(unit[j] @ unit[k]) >= 1 - 1e-9):
                g.append(j)
                break
        else:
            out.append([j])
    return out


def _merge(v: np.ndarray, face: Face, groups: list[list[int]], m: int, d: int) -> tuple[np.ndarray, Face]:
    """The face's unknowns with each group one neuron: ``a_M = sign sqrt(sum a_j^2)``, ``(w_M, b_M) = sum_j a_j (w_j,
    b_j) / a_M`` (the same function where the group is exactly proportional), its ties' multipliers averaged."""
    k = len(face.active)
    W, b, a, mu, nu = _split(v, m, d, k)
    aM = np.array([np.sign(a[g[0]]) * math.sqrt(float(np.sum(a[g] ** 2))) for g in groups])
    WM = np.array([a[g] @ W[g] for g in groups]) / aM[:, None]
    bM = np.array([float(a[g] @ b[g]) for g in groups]) / aM
    where = {j: n for n, g in enumerate(groups) for j in g}
    tie_nu: dict[tuple[int, int], list[float]] = {}
    for t, (r, j) in enumerate(face.ties):
        tie_nu.setdefault((r, where[j]), []).append(float(nu[t]))
    ties = tuple(sorted(tie_nu))
    sigma = face.sigma[:, [g[0] for g in groups]] if face.sigma.size else np.zeros((k, len(groups)), dtype=bool)
    nuM = np.array([np.mean(tie_nu[t]) for t in ties])
    return np.concatenate([WM.ravel(), bM, aM, mu, nuM]), Face(face.active, sigma, ties)


def _split_back(vm, face_m: Face, groups: list[list[int]], a0: np.ndarray, m: int, d: int, digits: int):
    """The merged point split back into its groups (mpmath): member j gets ``a_j = a_M sqrt(f_j)`` and ``(w_j, b_j) =
    sqrt(f_j) (w_M, b_M)`` with ``f_j = a0_j^2 / sum a0^2`` (summing to 1 exactly: the same function and, with the same
    multipliers, each member's stationarity); returns (unknowns, face) at the full width."""
    import mpmath as mp  # heavy: mpmath (loaded on first use)

    k = len(face_m.active)
    with mp.workdps(digits):
        WM, bM, aM, mu, nuM = _split(vm, len(groups), d, k)
        W: np.ndarray = np.empty((m, d), dtype=object)
        b: np.ndarray = np.empty(m, dtype=object)
        a: np.ndarray = np.empty(m, dtype=object)
        for n, g in enumerate(groups):
            total = mp.fsum(mp.mpf(float(a0[j])) ** 2 for j in g)
            for j in g:
                r = mp.sqrt(mp.mpf(float(a0[j])) ** 2 / total)
                W[j], b[j], a[j] = WM[n] * r, bM[n] * r, aM[n] * r
        sigma: np.ndarray = np.zeros((k, m), dtype=bool)
        for n, g in enumerate(groups):
            for j in g:
                sigma[:, j] = face_m.sigma[:, n]
        ties, nus = [], []
        for t, (r_, n) in enumerate(face_m.ties):
            for j in groups[n]:
                ties.append((r_, j))
                nus.append(nuM[t])
        return np.concatenate([W.ravel(), b, a, mu, np.array(nus, dtype=object)]), Face(face_m.active, sigma, tuple(ties))


def _refine_merged(v: np.ndarray, X, y, face: Face, e: int, m: int, d: int, digits: int, deadline: float | None):
    """:func:`refine` on the face with each group of split neurons (:func:`_groups`) solved as one, then split back:
    (unknowns at the full width, their face). A tie whose multiplier leaves [0, mu_i] at this precision leaves the face
    to the side it reached (the point sits about 4^e off that wall), and the face is solved again (at most 3 times)."""
    groups = _groups(v, face, m, d)
    a0 = _split(v, m, d, len(face.active))[2]
    vr, fr = _merge(v, face, groups, m, d)
    mg = len(groups)
    for _ in range(4):  # a tie float64 saw may sit 4^e off its wall: its multiplier then leaves [0, mu_i] by as little
        vm, _ = refine(vr, X, y, fr, e, mg, d, digits, deadline)
        _, _, _, mu, nu = _split(vm, mg, d, len(fr.active))
        high = [t for t, (r, _) in enumerate(fr.ties) if nu[t] > mu[r]]
        low = [t for t, (r, _) in enumerate(fr.ties) if nu[t] < 0]
        if not high and not low:
            break
        new = _changed(fr, np.array([float(t) for t in vm]), X, y, ([], low, high, [], []), mg, d)
        vr, fr = _resize(np.array([float(t) for t in vm]), fr, new, mg, d), new
    return _split_back(vm, fr, groups, a0, m, d, digits)


def refine(v: np.ndarray, X: np.ndarray, y: np.ndarray, face: Face, e: int, m: int, d: int, digits: int,
           deadline: float | None = None):
    """Newton's method on (Q_lam), lam = 4^e exactly, with the residual in mpmath at ``digits`` and the float64
    Jacobian (iterative refinement); returns (unknowns as mpf objects, the final relative residual, mpf)."""
    import mpmath as mp  # heavy: mpmath (loaded on first use)

    with mp.workdps(digits):
        Xm = np.array([[mp.mpf(float(x)) for x in row] for row in X], dtype=object)
        ym = np.array([mp.mpf(float(t)) for t in y], dtype=object)
        lam = mp.mpf(2) ** (2 * e)
        vm = np.array([mp.mpf(float(t)) for t in v], dtype=object)
        rel = mp.inf
        for _ in range(digits // 8 + 8):
            if deadline is not None and time.perf_counter() > deadline:
                break  # the certificate below then reads the residual reached
            F = face_equations(vm, Xm, ym, face, lam, m, d)
            norm = mp.sqrt(mp.fsum(t * t for t in F))
            rel = norm / mp.sqrt(mp.fsum(t * t for t in vm))
            if rel < mp.mpf(10) ** (8 - digits):
                break
            top = max(abs(t) for t in F)
            f = np.array([float(t / top) for t in F])
            J = face_jacobian(np.array([float(t) for t in vm]), X, y, face, float(lam), m, d)
            step = np.linalg.lstsq(J, -f, rcond=None)[0]
            vm = vm + np.array([mp.mpf(float(t)) * top for t in step], dtype=object)
        return vm, rel


def _certificate(vm, Xuser: np.ndarray, y: np.ndarray, face: Face, e: int, m: int, d: int, digits: int):
    """(P)'s KKT conditions on the user's data at the point ``vm`` of (Q_{4^e}), in (P)'s own coordinates and mpmath:
    (network rounded to float64, relative residual, relative slackness, value, why it fails or "")."""
    import mpmath as mp  # heavy: mpmath (loaded on first use)

    with mp.workdps(digits):
        s = mp.mpf(2) ** e
        r = mp.sqrt(s)
        W1, b1, a1, mu1, nu1 = _split(vm, m, d, len(face.active))
        W, b, a = W1 / r, b1 * r, a1 / r
        mu, nu = mu1 / s, nu1 / s
        Xm = np.array([[mp.mpf(float(x)) for x in row] for row in Xuser], dtype=object)
        ym = np.array([mp.mpf(float(t)) for t in y], dtype=object)
        Z = Xm @ W.T + b
        relu = np.vectorize(lambda t: t if t > 0 else mp.mpf(0), otypes=[object])(Z)
        q = ym * (relu @ a)
        act = list(face.active)
        inactive = [i for i in range(len(y)) if i not in set(act)]
        theta = np.concatenate([W.ravel(), b, a])
        tn2 = mp.fsum(t * t for t in theta)
        net = TwoLayerReLU(W=np.array([[float(t) for t in row] for row in W]), a=np.array([float(t) for t in a]),
                           b=np.array([float(t) for t in b]))
        value = float(tn2 / 2)
        fine = mp.mpf(10) ** (10 - digits)  # a pre-activation within this (relative) of 0 is a tie at this precision: on
        # the side its pattern says, or 0 with the Clarke multiplier its side gives (0 or mu_i, both in [0, mu_i])
        ZA = Z[act]
        zs = 1 + max(abs(t) for t in Z.ravel())
        why = ""
        if any(t < -fine * (1 + max(abs(u) for u in mu)) for t in mu):
            why = "a multiplier is negative"
        elif any(nu[n] < -fine * (1 + abs(mu[i])) or nu[n] > mu[i] * (1 + fine) + fine for n, (i, _) in enumerate(face.ties)):
            why = "a tie's Clarke multiplier leaves [0, mu_i]"
        elif any(abs(ZA[i, j]) > fine * zs for i, j in face.ties):
            why = "a tie's pre-activation is not 0"
        elif any((face.sigma[i, j] and ZA[i, j] < -fine * zs) or (not face.sigma[i, j] and ZA[i, j] > fine * zs)
                 for i in range(len(act)) for j in range(m) if (i, j) not in set(face.ties)):
            why = "a pre-activation's sign left its pattern"
        elif inactive and min(q[i] for i in inactive) <= 1:
            why = "an inactive margin is at most 1"
        C = _coefficients(face, ym, mu, nu, m)
        rb = b - a * C.sum(axis=0)
        res = np.concatenate([(W - a[:, None] * (C.T @ Xm[act])).ravel(), rb, a - (C * relu[act]).sum(axis=0)])
        rel = mp.sqrt(mp.fsum(t * t for t in res) / tn2)
        # the bias rows on their own scale: (P)'s global residual weighs them s times the rest, so it cannot see a bias
        # off by 1e-4 that moves the function as much (a referee's case); their scale is |b| + s ||theta||
        rel_b = mp.sqrt(mp.fsum(t * t for t in rb)) / (mp.sqrt(mp.fsum(t * t for t in b)) + s * mp.sqrt(tn2))
        if not why and rel_b > POINT_TOL:
            why = f"the bias rows' residual is {float(rel_b):.2g} of the biases' scale"
        slack = max((abs(mu[n] * (q[i] - 1)) for n, i in enumerate(act)), default=mp.mpf(0)) / (tn2 / 2)
        return net, float(rel), float(slack), value, why


def _distance(v0: np.ndarray, vm, e: int, m: int, d: int, digits: int) -> float:
    """The relative distance of (Q) unknowns ``v0`` from ``vm`` in (P)'s units, block by block (W, b, a; the largest):
    ``||dW'|| / ||W'||``, ``||s db'|| / (||s b'|| + s ||theta'||)``, ``||da'|| / ||a'||`` (the substitution's sqrt(s)
    cancels)."""
    import mpmath as mp  # heavy: mpmath (loaded on first use)

    with mp.workdps(digits):
        s = mp.mpf(2) ** e
        o = m * d
        w = np.array([s if o <= i < o + m else mp.mpf(1) for i in range(o + 2 * m)], dtype=object)
        diff = (np.array([mp.mpf(float(t)) for t in v0[:o + 2 * m]], dtype=object) - vm[:o + 2 * m]) * w
        ref = vm[:o + 2 * m] * w
        blocks = (slice(0, o), slice(o, o + m), slice(o + m, o + 2 * m))  # W, b, a: each on its own scale (the biases
        # weigh s times the rest in (P)'s units, yet move the function as much), the bias's floor s ||theta||
        floor = mp.sqrt(mp.fsum(t * t for t in ref)) * s
        return float(max(mp.sqrt(mp.fsum(t * t for t in diff[sl])) / (mp.sqrt(mp.fsum(t * t for t in ref[sl])) + floor)
                         for sl in blocks))


def certify_near(net: TwoLayerReLU, Xuser: np.ndarray, y: np.ndarray, e: int) -> ScaledPoint:
    """Whether a KKT point of (P) on ``Xuser`` (features at about 2^e, e < 0; hidden biases) lies at the given network,
    where float64 cannot decide: the network mapped to (Q_{4^e}) on ``Xuser 2^-e`` and put at unit margin, Newton's
    method on its face there (float64, then in mpmath), the extended certificate (:func:`_certificate`) of the point
    reached and its relative distance from the network in (P)'s units (``distance``). The network is that point to
    within ``distance``; a face that holds no solution near it is "not certified", with why."""
    X = np.ldexp(np.asarray(Xuser, float), -e)
    r = math.sqrt(2.0) ** (e % 2) * 2.0 ** (e // 2)  # sqrt(2^e), the power of two exact
    b = net.b if net.b is not None else np.zeros(net.width)
    q_net = TwoLayerReLU(W=net.W * r, a=net.a * r, b=b / r, trained=net.trained)
    qmin = float((y * q_net.forward(X)).min())
    q_net = q_net.with_params(q_net.params() / math.sqrt(qmin))
    kept = _drop_zero_neurons(q_net)
    m, d = kept.width, kept.dim
    digits = digits_for(e)
    face = initial_face(kept, X, y)
    fail = ScaledPoint(None, False, float("nan"), float("nan"), digits, e, len(face.active), len(face.ties), 0, "")
    if m * d + 2 * m + len(face.active) + len(face.ties) > MAX_UNKNOWNS:
        return replace(fail, reason=f"not tried: beyond the {MAX_UNKNOWNS} unknowns the extended certificate handles")
    lam = 4.0 ** e if e > -537 else 0.0  # 0 below float64's range: the float64 step sees no bias cost either way
    v0 = np.concatenate([kept.W.ravel(), kept.b, kept.a, _multipliers(kept, X, y, face, lam)])  # type: ignore[arg-type]
    v, rel = _newton(v0, X, y, face, lam, m, d)
    if not rel <= 1e-10 or any(_violations(v, X, y, face, m, d)):
        return replace(fail, reason=f"no KKT point on the network's face near it (Newton's method on the face ends at a relative "
                                    f"residual of {rel:.2g}, or leaves the face)")
    vm, face = _refine_merged(v, X, y, face, e, m, d, digits, None)
    point, res, slack, value, why = _certificate(vm, Xuser, y, face, e, m, d, digits)
    dropped = float(np.linalg.norm(q_net.params())) ** 2 - float(np.linalg.norm(kept.params())) ** 2
    dist = math.hypot(_distance(v0, vm, e, m, d, digits), math.sqrt(max(dropped, 0.0)) / float(np.linalg.norm(kept.params())))
    ok = not why and res <= POINT_TOL and slack <= POINT_TOL and dist <= POINT_TOL
    if not why and not ok:
        why = (f"the nearest point on its face is at relative distance {dist:.2g}" if dist > POINT_TOL else
               f"the extended certificate's relative residual is {res:.2g} (slackness {slack:.2g})")
    W1, b1, a1, mu1, nu1 = _split(vm, m, d, len(face.active))
    with np.errstate(over="ignore"):
        mu = np.ldexp(np.array([float(t) for t in mu1]), -e)  # inf past float64's range (features below about 2^-1000)
    return ScaledPoint(point, ok, res, slack, digits, e, len(face.active), len(face.ties), 0, why, value, dist, mu, face)


def continue_to_scale(net: TwoLayerReLU, X: np.ndarray, y: np.ndarray, Xuser: np.ndarray, e: int,
                      deadline: float | None = None) -> ScaledPoint:
    """The KKT point ``net`` of (P) on ``X`` (unit margin, hidden biases) continued to (P) on ``Xuser = X 2^e`` (e < 0)
    and certified there in extended precision (the module docstring). ``deadline`` (a ``time.perf_counter()`` value):
    no path step or refinement begins past it (the point is then "not continued", or its certificate reads the
    residual reached)."""
    net = _drop_zero_neurons(net)
    m, d = net.width, net.dim
    digits = digits_for(e)
    face = initial_face(net, X, y)
    n_unknowns = m * d + 2 * m + len(face.active) + len(face.ties)
    if n_unknowns > MAX_UNKNOWNS:
        return ScaledPoint(None, False, float("nan"), float("nan"), digits, e, len(face.active), len(face.ties), 0,
                           f"not tried: {n_unknowns} unknowns on its face, beyond the {MAX_UNKNOWNS} the extended "
                           "continuation handles")
    if deadline is not None and time.perf_counter() > deadline:
        return ScaledPoint(None, False, float("nan"), float("nan"), digits, e, len(face.active), len(face.ties), 0,
                           "not tried: past the time cap")
    v, face, events, why = follow(net, X, y, max(2.0 * e, LAM_FLOAT), deadline)
    if why:
        return ScaledPoint(None, False, float("nan"), float("nan"), digits, e, len(face.active), len(face.ties), events, why)
    vm, face = _refine_merged(v, X, y, face, e, m, d, digits, deadline)
    point, rel, slack, value, why = _certificate(vm, Xuser, y, face, e, m, d, digits)
    ok = not why and rel <= POINT_TOL and slack <= POINT_TOL
    if not why and not ok:
        why = f"the extended certificate's relative residual is {rel:.2g} (slackness {slack:.2g}), above {POINT_TOL:g}"
    return ScaledPoint(point, ok, rel, slack, digits, e, len(face.active), len(face.ties), events, why, value)
