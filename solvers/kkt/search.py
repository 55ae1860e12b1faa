"""KKT point search: multi-start SLSQP on (P) with the analytic Jacobian of the margins.

scipy's SLSQP takes ``1/2 ||theta||^2`` (gradient theta) and the constraints
``q_i(theta) - 1 >= 0`` (Jacobian from :func:`.jacobian.margin_jacobian`). Every result is
certified by :func:`.certificate.kkt_certificate`, whatever SLSQP says ("success" is not a
certificate), and the results are de-duplicated up to a permutation of the neurons.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment, minimize

from ..networks import TwoLayerReLU
from .certificate import KKTCertificate, kkt_certificate
from .jacobian import margin_jacobian


@dataclass
class SearchResult:
    start: str
    solver_status: str
    net: TwoLayerReLU
    certificate: KKTCertificate
    value: float  # 1/2 ||theta||^2 after scaling to unit margin
    duplicate_of: int | None = None


def random_start(d: int, width: int, rng: np.random.Generator, bias: bool = True) -> TwoLayerReLU:
    return TwoLayerReLU(W=rng.standard_normal((width, d)) / np.sqrt(d), a=rng.standard_normal(width) / np.sqrt(width),
                        b=rng.standard_normal(width) / np.sqrt(d) if bias else None)


def slsqp(net: TwoLayerReLU, X: np.ndarray, y: np.ndarray, maxiter: int = 1000) -> tuple[TwoLayerReLU, str]:
    """Solve (P) from ``net`` with SLSQP; returns the end point and SLSQP's own message."""
    def obj(theta):
        return 0.5 * theta @ theta, theta

    def cons(theta):
        q, _ = margin_jacobian(net.with_params(theta), X, y)
        return q - 1.0

    def cons_jac(theta):
        return margin_jacobian(net.with_params(theta), X, y)[1]

    theta0 = net.params()
    q0 = net.margins(X, y)
    if q0.min() > 0:  # a feasible start: scale to unit margin
        theta0 = theta0 / q0.min() ** (1.0 / net.degree)
    res = minimize(obj, theta0, jac=True, method="SLSQP",
                   constraints=[{"type": "ineq", "fun": cons, "jac": cons_jac}],
                   options={"maxiter": maxiter, "ftol": 1e-14})
    return net.with_params(res.x), ("success" if res.success else "failed") + f": {res.message}"


def same_up_to_permutation(a: TwoLayerReLU, b: TwoLayerReLU, tol: float = 1e-4) -> bool:
    """Whether two networks are equal after the best matching of their neurons."""
    def rows(n):
        cols = [n.W] + ([n.b[:, None]] if n.b is not None else []) + [n.a[:, None]]
        return np.concatenate(cols, axis=1)

    A, B = rows(a), rows(b)
    if A.shape != B.shape:
        return False
    cost = np.linalg.norm(A[:, None, :] - B[None, :, :], axis=2)
    r, c = linear_sum_assignment(cost)
    scale = max(np.linalg.norm(A), np.linalg.norm(B), 1e-12)
    return float(np.sqrt((cost[r, c] ** 2).sum())) <= tol * scale


def kkt_search(X: np.ndarray, y: np.ndarray, starts: list[tuple[str, TwoLayerReLU]], maxiter: int = 1000,
               progress=None) -> list[SearchResult]:
    """Run SLSQP from every start; certify and de-duplicate the end points."""
    out: list[SearchResult] = []
    for label, net in starts:
        end, status = slsqp(net, X, y, maxiter)
        if end.margins(X, y).min() <= 0:
            cert = None
        else:
            cert = kkt_certificate(end, X, y)
        if cert is None:
            from .certificate import _failed

            out.append(SearchResult(label, status + " (infeasible end point)", end, _failed("not feasible", end, float("nan"), 0, 0), float("nan")))
            continue
        theta = cert.scaled.params()
        res = SearchResult(label, status, cert.scaled, cert, 0.5 * float(theta @ theta))
        for i, prev in enumerate(out):
            if prev.duplicate_of is None and np.isfinite(prev.value) and same_up_to_permutation(prev.net, res.net):
                res.duplicate_of = i
                break
        out.append(res)
        if progress is not None:
            progress(1)
    return out
