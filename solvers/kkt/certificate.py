"""A numerical KKT certificate for (P), for homogeneous two-layer ReLU networks.

Given theta and the data: scale to ``theta / q_min^(1/L)``; take the active set
(``q_i <= 1 + active_tol``) and the ties (active i with ``|z_ij| <= tie_tol``); then solve

    minimize    || theta - sum_i lambda_i h_i - sum_{(i,j) tie} mu_ij t_ij ||
    subject to  lambda >= 0,   0 <= mu_ij <= lambda_i

in cvxpy (Clarabel), where ``h_i`` is the gradient of q_i with ReLU'(0) = 0 and ``t_ij`` the
extra direction a tie can add (the Clarke subdifferential of ReLU at 0 is [0, 1]). The
columns are compressed by a thin QR first (an exact rewriting), so the program has
|active| + |ties| variables whatever the parameter count. A non-optimal solver status is
never read as a certificate.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, replace
from typing import ClassVar

import cvxpy as cp
import numpy as np

from ibcheck.errors import InputError
from ibcheck.theory.result import Result

from ..networks import TwoLayerReLU
from .jacobian import margin_jacobian, scale_to_unit_margin, tie_columns
from .multipliers import GramData, clarke_multipliers


@dataclass(frozen=True)
class KKTCertificate(Result):
    """The evidence for (or against) ``theta`` being a KKT point of (P)."""

    name: ClassVar[str] = "kkt_certificate"

    solver_status: str
    stationarity_residual: float  # ||theta - sum lambda h|| / ||theta||
    stationarity_abs: float
    complementary_slackness: float  # max_i lambda_i (q_i - 1)
    feasible: bool
    min_margin: float  # before scaling
    normalized_margin: float  # q_min / ||theta||^L
    euler_gap: float  # |L sum lambda - ||theta||^2| / ||theta||^2
    n_active: int
    n_ties: int
    lam: np.ndarray
    scaled: TwoLayerReLU
    eps_relu0: float = float("nan")  # the relative residual with ReLU'(0) = 0 at every tie (no tie may help)
    eps_relu1: float = float("nan")  # ... with ReLU'(0) = 1 at every tie (each tie fully on)

    @property
    def epsilon(self) -> float:
        return self.stationarity_abs

    @property
    def delta(self) -> float:
        return self.complementary_slackness

    @property
    def complementary_slackness_rel(self) -> float:
        """max_i lambda_i (q_i - 1) / sum_i lambda_i: scale-free (sum lambda = ||theta||^2 / L by Euler)."""
        total = float(np.sum(self.lam)) if self.lam is not None else 0.0
        if not np.isfinite(self.complementary_slackness):
            return float("nan")
        return self.complementary_slackness / total if total > 0 else (0.0 if self.complementary_slackness <= 0 else float("inf"))

    def failures(self, tol: float = 1e-6) -> list[str]:
        """Every KKT condition that does not hold at tolerance ``tol`` (empty: a certificate)."""
        out = []
        if self.solver_status != "optimal":
            out.append(f"solver status {self.solver_status} (not a certificate)")
            return out
        if not self.feasible:
            out.append("infeasible: min margin after scaling below 1")
        if not self.stationarity_residual <= tol:
            out.append(f"stationarity residual {self.stationarity_residual:.3g} > {tol:g}")
        cs = self.complementary_slackness_rel
        if not cs <= tol:
            out.append(f"complementary slackness max lambda_i (q_i - 1) / sum lambda = {cs:.3g} > {tol:g}")
        if self.lam is not None and np.any(self.lam < 0):
            out.append("a negative multiplier")
        return out

    def is_kkt(self, tol: float = 1e-6) -> bool:
        """Primal feasibility, lambda >= 0, stationarity and complementary slackness, each at ``tol``,
        from an optimal solver status (anything else is never a certificate)."""
        return not self.failures(tol)

    def as_json(self) -> dict:
        return {"solver_status": self.solver_status, "stationarity_residual": self.stationarity_residual,
                "stationarity_abs": self.stationarity_abs, "complementary_slackness": self.complementary_slackness,
                "complementary_slackness_rel": self.complementary_slackness_rel,
                "feasible": self.feasible, "min_margin": self.min_margin, "normalized_margin": self.normalized_margin,
                "euler_gap": self.euler_gap, "n_active": self.n_active, "n_ties": self.n_ties,
                "eps_relu0": self.eps_relu0, "eps_relu1": self.eps_relu1}

    def heading(self) -> str:
        why = "" if self.is_kkt() else " (" + "; ".join(self.failures()) + ")"
        return f"KKT certificate: {'a KKT point of (P)' if self.is_kkt() else 'not certified'}{why}"

    def table(self) -> list[dict]:
        return [{"check": k, "value": v} for k, v in self.as_json().items()]


def require_homogeneous(net) -> None:
    if not isinstance(net, TwoLayerReLU) or net.degree is None:
        raise InputError(f"the KKT certificate needs a homogeneous two-layer ReLU network, got {getattr(net, 'kind', type(net).__name__)}")


def _unit_scale(net: TwoLayerReLU, X: np.ndarray) -> tuple[TwoLayerReLU, np.ndarray, float]:
    """The same KKT question at unit scale: ``theta / max|theta|`` (a positive multiple of theta is the same direction
    of a homogeneous network), and, for a bias-free network, ``X / max|X|`` (its margins are then 1-homogeneous in x,
    so its KKT points do not depend on the data's scale). Returns the network, the data and the factor by which the
    margins shrank, ``q_unit = q / factor`` (for reporting the margin before scaling).

    Pitfall avoided: the solver's tolerances are absolute, so the same KKT point read "residual 0.33" at X x 1e-9
    and "1.8e65" at X x 1e150 (where lambda = 0 alone gives 1), and a network scaled by 1e200 overflowed its
    margins into a division by zero."""
    theta = net.params()
    t = float(np.max(np.abs(theta))) if theta.size else 0.0
    factor = 1.0
    if t > 0 and np.isfinite(t) and (net.b is None or "b" in net.trained):
        net = net.with_params(theta / t)
        with np.errstate(over="ignore"):
            factor *= float(np.float64(t) ** net.degree)  # inf where the original margins overflow float64 themselves
    if net.b is None:
        s = float(np.max(np.abs(X))) if X.size else 0.0
        if s > 0 and np.isfinite(s):
            X = X / s
            with np.errstate(over="ignore"):
                factor = float(np.float64(factor) * s)
    return net, X, factor


def _active_and_ties(scaled: TwoLayerReLU, X: np.ndarray, y: np.ndarray, active_tol: float, tie_tol: float):
    """(pre-activations, margins, active points, tie mask (n, m)) at unit margin: the active set ``q_i <= 1 +
    active_tol`` and its ties ``|z_ij| <= tie_tol (1 + max |z|)``."""
    Zall = scaled.preactivations(X)
    q = y * (np.maximum(Zall, 0.0) @ scaled.a)
    active = np.flatnonzero(q <= 1 + active_tol)
    tie_mask = np.zeros_like(Zall, dtype=bool)
    tie_mask[active] = np.abs(Zall[active]) <= tie_tol * (1 + np.abs(Zall).max())
    return Zall, q, active, tie_mask


def kkt_certificate(net: TwoLayerReLU, X: np.ndarray, y: np.ndarray, active_tol: float = 1e-6, tie_tol: float = 1e-9) -> KKTCertificate:
    """Certify (P)'s KKT conditions at ``net`` (LL20.def.kkt), after scaling to unit margin (at unit parameter and,
    bias-free, unit data scale: :func:`_unit_scale`): the multiplier program over the Clarke cone in the data's Gram
    space (:mod:`.multipliers`; O(m n^2) beside one forward pass, no parameters x n array). Its residual equals the
    parameter-space program's (:func:`kkt_certificate_params`, the reference) to rounding."""
    require_homogeneous(net)
    X = np.asarray(X, float)
    y = np.asarray(y, float)
    net, X, factor = _unit_scale(net, X)
    scaled, qmin = scale_to_unit_margin(net, X, y)
    Zall, q, active, tie_mask = _active_and_ties(scaled, X, y, active_tol, tie_tol)
    with np.errstate(over="ignore"):
        qmin_orig = float(np.float64(qmin) * factor)
    bias = "b" in scaled.blocks
    a_trained = "a" in scaled.blocks
    Xt = np.hstack([X[active], np.ones((len(active), 1))]) if bias else X[active]
    Wt = np.hstack([scaled.W, scaled.b[:, None]]) if bias and scaled.b is not None else scaled.W
    ZA = Zall[active] if bias or scaled.b is None else Zall[active] - scaled.b  # the trained blocks' pre-activations
    yA = y[active]
    data = GramData(K=Xt @ Xt.T, coef=yA[:, None] * scaled.a[None, :], Z=ZA,
                    relu=(yA[:, None] * np.maximum(Zall[active], 0.0)) if a_trained else np.zeros_like(ZA), q=q[active],
                    a_trained=a_trained)
    sigma0 = ((Zall[active] > 0) & ~tie_mask[active]).astype(float)
    row = {int(i): r for r, i in enumerate(active)}
    ties = [(int(i), int(j)) for i, j in zip(*np.nonzero(tie_mask))]
    ties_A = [(row[i], j) for i, j in ties]
    a = scaled.a if a_trained else None
    sol = clarke_multipliers(data, ties_A, Xt, Wt, a, sigma0)
    theta = scaled.params()
    tn = float(np.linalg.norm(theta))
    L = scaled.degree
    lam_full = np.zeros(len(X))
    lam_full[active] = sol.lam
    res_abs = min(sol.residual, tn)
    status = "optimal" if sol.converged else f"not converged after {sol.rounds} pricing round(s) ({sol.generators} generators)"
    cert = KKTCertificate(
        solver_status=status, stationarity_residual=res_abs / tn, stationarity_abs=res_abs,
        complementary_slackness=float(np.max(lam_full * (q - 1))), feasible=bool(q.min() >= 1 - 1e-9),
        min_margin=qmin_orig, normalized_margin=float(q.min() / tn ** L),
        euler_gap=abs(L * lam_full.sum() - tn**2) / tn**2, n_active=len(active), n_ties=len(ties),
        lam=lam_full, scaled=scaled)
    if not ties:
        return replace(cert, eps_relu0=cert.stationarity_residual, eps_relu1=cert.stationarity_residual)
    r0, r1 = (clarke_multipliers(data, ties_A, Xt, Wt, a, sigma0, fixed=f) for f in ("relu0", "relu1"))
    return replace(cert, eps_relu0=min(r0.residual, tn) / tn if r0.converged else float("nan"),
                   eps_relu1=min(r1.residual, tn) / tn if r1.converged else float("nan"))


def kkt_certificate_params(net: TwoLayerReLU, X: np.ndarray, y: np.ndarray, active_tol: float = 1e-6, tie_tol: float = 1e-9) -> KKTCertificate:
    """The reference certificate in parameter space (tests and ``bench/`` only): the same program on the thin QR of
    the margin gradients and tie columns (parameters x (active + ties), formed whole), solved by Clarabel. Pitfall
    avoided: at d = 4096, k = 16, n = 1107 this costs 30-100 s a certificate (the QR of a 131,000 x 3,300 matrix and a
    dense interior-point program); :func:`kkt_certificate` solves the same program in the Gram space."""
    require_homogeneous(net)
    X = np.asarray(X, float)
    y = np.asarray(y, float)
    net, X, factor = _unit_scale(net, X)
    scaled, qmin = scale_to_unit_margin(net, X, y)
    theta = scaled.params()
    Zall, q, active, tie_mask = _active_and_ties(scaled, X, y, active_tol, tie_tol)
    # A tie enters h_i with ReLU'(0) = 0; its tie column adds mu_ij in [0, lambda_i] of the other end.
    sigma = ((Zall[active] > 0) & ~tie_mask[active]).astype(float)
    _, J = margin_jacobian(scaled, X[active], y[active], sigma=sigma)  # active rows only
    ties = [(int(i), int(j)) for i, j in zip(*np.nonzero(tie_mask))]
    H = J.T  # (P, |A|)
    T = tie_columns(scaled, X, y, ties)
    with np.errstate(over="ignore"):
        qmin_orig = float(np.float64(qmin) * factor)
    M = np.concatenate([H, T], axis=1)
    Q, R = np.linalg.qr(M, mode="reduced")
    c = Q.T @ theta
    perp = float(np.linalg.norm(theta - Q @ c))  # the part no multiplier can reach
    cert = _solve(theta, c, R, perp, active, ties, q, scaled, qmin_orig, len(X))
    if not ties:
        return replace(cert, eps_relu0=cert.stationarity_residual, eps_relu1=cert.stationarity_residual)
    k = len(active)
    owner = {int(i): r for r, i in enumerate(active)}
    R1 = R[:, :k].copy()  # H = Q R[:, :k]; H with every tie added to its point's column = Q R1
    for col, (i, _) in enumerate(ties):
        R1[:, owner[i]] += R[:, k + col]
    tn = float(np.linalg.norm(theta))
    return replace(cert, eps_relu0=_nnls_residual(c, R[:, :k], perp, tn), eps_relu1=_nnls_residual(c, R1, perp, tn))


def _nnls_residual(c: np.ndarray, R: np.ndarray, perp: float, tn: float) -> float:
    """``min_{lambda >= 0} ||theta - H lambda|| / ||theta||`` for ``H = Q R`` (Q the certificate's orthonormal columns,
    ``c = Q^T theta``, ``perp = ||theta - Q c||``): ``sqrt(perp^2 + min ||c - R lambda||^2)``, scipy's NNLS on the
    unit-scale system of the QR's size.

    Used to say what a certificate rests on: the residual with every tie forced to ReLU'(0) = 0, or to 1. A certificate
    that holds only with the Clarke interval in between rests on its ties. Pitfall avoided: NNLS on H itself (the
    parameters x the active points: 131,000 x 1,100 at d = 4096, k = 16) took half of an FVBS23 sample's time; the
    reduction is exact."""
    from scipy.optimize import nnls  # heavy: scipy (loaded on first use)

    r = float(np.max(np.abs(R))) if R.size else 1.0
    r = r if r > 0 and np.isfinite(r) else 1.0
    try:
        _, res = nnls(R / r, c / tn, maxiter=50 * max(R.shape[1], 1))
    except RuntimeError:
        return float("nan")
    return min(math.hypot(float(res), perp / tn), 1.0)


def _solve(theta, c, R, perp, active, ties, q, scaled, qmin, n) -> KKTCertificate:
    """The certificate's program on the QR of ``[H T]`` (``c = Q^T theta``, ``perp`` the part of theta off Q's span)."""
    tn = float(np.linalg.norm(theta))
    H_cols = len(active)
    # the program at unit scale: u = coeffs * r / ||theta||, so that the solver's absolute tolerances mean the same
    # thing whatever the scale of theta and of the data (the constraints mu <= lambda are homogeneous)
    r = float(np.max(np.abs(R))) if R.size else 1.0
    r = r if r > 0 and np.isfinite(r) else 1.0
    u = cp.Variable(H_cols, nonneg=True)
    v = cp.Variable(len(ties), nonneg=True) if ties else None
    coeffs = cp.hstack([u, v]) if v is not None else u
    cons = []
    if v is not None:
        owner = {int(i): k for k, i in enumerate(active)}
        cons.append(v <= cp.hstack([u[owner[i]] for i, _ in ties]))
    prob = cp.Problem(cp.Minimize(cp.norm(c / tn - (R / r) @ coeffs)), cons)
    try:
        # tighter tolerances first (1e-10), then Clarabel's defaults where those end inaccurate: a certificate is read
        # only from an optimal status either way
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10, max_iter=300)
            if prob.status != cp.OPTIMAL:
                prob.solve(solver=cp.CLARABEL)
    except cp.SolverError as err:
        return _failed(f"solver error: {err}", scaled, qmin, len(active), len(ties))
    if prob.status != cp.OPTIMAL:
        return _failed(str(prob.status), scaled, qmin, len(active), len(ties))
    lam_active = np.maximum(np.asarray(u.value, dtype=float), 0.0) * tn / r
    lam_full = np.zeros(n)
    lam_full[active] = lam_active
    coeff_all = np.concatenate([lam_active, np.maximum(np.asarray(v.value, dtype=float), 0.0) * tn / r]) if v is not None else lam_active
    # the residual recomputed in the original units (never above ||theta||: lambda = 0 is always feasible)
    res_abs = min(math.hypot(float(np.linalg.norm(c - R @ coeff_all)), perp), tn)
    L = scaled.degree
    return KKTCertificate(
        solver_status="optimal", stationarity_residual=res_abs / tn, stationarity_abs=res_abs,
        complementary_slackness=float(np.max(lam_full * (q - 1))), feasible=bool(q.min() >= 1 - 1e-9),
        min_margin=qmin, normalized_margin=float(q.min() / tn ** L),
        euler_gap=abs(L * lam_full.sum() - tn**2) / tn**2, n_active=len(active), n_ties=len(ties),
        lam=lam_full, scaled=scaled)


def _failed(status, scaled, qmin, n_active, n_ties) -> KKTCertificate:
    nan = float("nan")
    return KKTCertificate(status, nan, nan, nan, False, qmin, nan, nan, n_active, n_ties, np.array([]), scaled)


def joint_certificate(net: TwoLayerReLU, X: np.ndarray, y: np.ndarray, weight: float) -> KKTCertificate:
    """Multipliers on every sample, trading stationarity against complementary slackness:

        minimize ||theta - sum_i lambda_i h_i|| / ||theta|| + weight * sum_i lambda_i (q_i - 1),  lambda >= 0.

    Any solution is a valid (eps, delta) certificate (LL20.def.eps_delta_kkt).
    """
    require_homogeneous(net)
    X, y = np.asarray(X, float), np.asarray(y, float)
    net, X, factor = _unit_scale(net, X)
    scaled, qmin = scale_to_unit_margin(net, X, y)
    with np.errstate(over="ignore"):
        qmin = float(np.float64(qmin) * factor)
    theta = scaled.params()
    q, J = margin_jacobian(scaled, X, y)
    Q, R = np.linalg.qr(J.T, mode="reduced")
    c = Q.T @ theta
    perp = float(np.linalg.norm(theta - Q @ c))
    tn = float(np.linalg.norm(theta))
    lam = cp.Variable(len(X), nonneg=True)
    prob = cp.Problem(cp.Minimize(cp.norm(c - R @ lam) / tn + weight * ((q - 1) @ lam)))
    prob.solve(solver=cp.CLARABEL)
    if prob.status != cp.OPTIMAL:
        return _failed(str(prob.status), scaled, qmin, len(X), 0)
    lv = np.maximum(lam.value, 0.0)
    res_abs = math.hypot(float(np.linalg.norm(c - R @ lv)), perp)
    L = scaled.degree
    return KKTCertificate("optimal", res_abs / tn, res_abs, float(np.max(lv * (q - 1))), bool(q.min() >= 1 - 1e-9), qmin,
                          float(q.min() / tn**L), abs(L * lv.sum() - tn**2) / tn**2, int((lv > 0).sum()), 0, lv, scaled)


def eps_delta_kkt(net: TwoLayerReLU, X: np.ndarray, y: np.ndarray, tolerances=(1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 3e-2, 1e-1, 3e-1, 1.0),
                  weights=(0.1, 1.0, 10.0, 100.0), tie_tol: float = 1e-9) -> tuple[float, float, KKTCertificate]:
    """LL20.def.eps_delta_kkt: an (eps, delta) pair that ``net`` provably satisfies, in the definition's own units:
    ``eps = ||theta - sum_i lambda_i h_i||`` with theta scaled to unit margin (absolute, as the definition and
    :attr:`KKTCertificate.epsilon` state it), ``delta = max_i lambda_i (q_i - 1)``. The relative residual
    (``eps / ||theta||``) is the certificate's ``stationarity_residual``.

    Candidates: each active-set tolerance tau (multipliers on ``q_i <= 1 + tau`` only), and
    each weight of :func:`joint_certificate` (multipliers on every sample); the one with the
    smallest ``max(relative residual, delta)`` is returned.
    Pitfall avoided: returning the relative residual under the name eps reported 0.306 where the definition's
    eps was 0.617.

    With the default ``tie_tol`` the subgradients are the exact Clarke ones at theta. A
    larger ``tie_tol`` lets pre-activations within ``tie_tol`` of 0 (relative) take ReLU' in
    [0, 1]: a Goldstein-style relaxation that shows how near theta is to a KKT point with
    ties (GD iterates approach such points); it is not the exact definition.
    """
    best = None
    cands = [kkt_certificate(net, X, y, active_tol=tau, tie_tol=tie_tol) for tau in tolerances]
    if tie_tol <= 1e-9:
        cands += [joint_certificate(net, X, y, w) for w in weights]
    for cert in cands:
        if cert.solver_status != "optimal":
            continue
        key = max(cert.stationarity_residual, cert.complementary_slackness)
        if best is None or key < best[0]:
            best = (key, cert)
    if best is None:
        raise RuntimeError("no certificate: the convex program failed at every tolerance")
    cert = best[1]
    return cert.stationarity_abs, cert.complementary_slackness, cert
