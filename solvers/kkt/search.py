"""KKT point search: multi-start SLSQP on (P) with the analytic Jacobian of the margins.

scipy's SLSQP takes ``1/2 ||theta||^2`` (gradient theta) and the constraints
``q_i(theta) - 1 >= 0`` (Jacobian from :func:`.jacobian.margin_jacobian`). Every result is
certified by :func:`.certificate.kkt_certificate`, whatever SLSQP says ("success" is not a
certificate). Results are de-duplicated twice:

* as parameters, after a canonical form: parallel neurons merged (``a1 ReLU(c u.x) + a2 ReLU(u.x)``
  is one neuron when c > 0), dead neurons dropped (no output weight, or inactive on every training
  point), then the best matching of the neurons;
* as functions: the same margins on a probe set (the training points and Gaussian probes), which
  also catches points that differ in dead or split neurons the data never see.
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
    duplicate_of: int | None = None  # same canonical parameters (up to permutation, split and dead neurons)
    same_function_as: int | None = None  # same outputs on the probe set


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


def canonical_neurons(net: TwoLayerReLU, X: np.ndarray | None = None, tol: float = 1e-6) -> np.ndarray:
    """Rows ``s_g * [u_g, 1]`` of the network's function ``sum_g s_g ReLU(<u_g, [x, 1]>)``.

    ``u_g`` is a unit direction of ``[w_j, b_j]``; neurons with parallel directions are merged
    (``s_g = sum_j a_j ||[w_j, b_j]||``); neurons with no output weight, or inactive on every row
    of ``X``, are dropped.
    """
    Wt = np.concatenate([net.W, net.b[:, None]], axis=1) if net.b is not None else net.W
    norms = np.linalg.norm(Wt, axis=1)
    scale = max(float(np.max(np.abs(net.a) * norms)) if len(norms) else 0.0, 1e-300)
    keep = np.abs(net.a) * norms > tol * scale
    if X is not None:
        keep &= (net.preactivations(np.asarray(X, float)) > 0).any(axis=0)
    groups: list[tuple[np.ndarray, float]] = []
    for j in np.flatnonzero(keep):
        u = Wt[j] / norms[j]
        s = float(net.a[j] * norms[j])
        for g, (ug, sg) in enumerate(groups):
            if float(u @ ug) > 1 - tol:
                groups[g] = (ug, sg + s)
                break
        else:
            groups.append((u, s))
    rows = [np.append(u, 1.0) * s for u, s in groups if abs(s) > tol * scale]
    return np.array(rows) if rows else np.zeros((0, Wt.shape[1] + 1))


def same_up_to_permutation(a: TwoLayerReLU, b: TwoLayerReLU, tol: float = 1e-4, X: np.ndarray | None = None) -> bool:
    """Whether two networks are equal after merging split neurons, dropping dead ones (on ``X``),
    and the best matching of the remaining neurons."""
    A, B = canonical_neurons(a, X), canonical_neurons(b, X)
    if A.shape != B.shape:
        return False
    if len(A) == 0:
        return True
    cost = np.linalg.norm(A[:, None, :] - B[None, :, :], axis=2)
    r, c = linear_sum_assignment(cost)
    scale = max(float(np.linalg.norm(A)), float(np.linalg.norm(B)), 1e-12)
    return float(np.sqrt((cost[r, c] ** 2).sum())) <= tol * scale


def probe_set(X: np.ndarray, n_random: int = 200, seed: int = 0) -> np.ndarray:
    """The training points and Gaussian probes at the data's scale."""
    X = np.asarray(X, float)
    rng = np.random.default_rng(seed)
    scale = float(np.sqrt(np.mean(np.sum(X * X, axis=1)) / X.shape[1])) if len(X) else 1.0
    return np.concatenate([X, rng.standard_normal((n_random, X.shape[1])) * scale])


def same_function(a: TwoLayerReLU, b: TwoLayerReLU, probe: np.ndarray, tol: float = 1e-4) -> bool:
    """Whether two networks give the same outputs on a probe set (relative to the largest output)."""
    fa, fb = a.forward(probe), b.forward(probe)
    scale = max(float(np.max(np.abs(fa))), float(np.max(np.abs(fb))), 1e-300)
    return float(np.max(np.abs(fa - fb))) <= tol * scale


def kkt_search(X: np.ndarray, y: np.ndarray, starts: list[tuple[str, TwoLayerReLU]], maxiter: int = 1000,
               progress=None) -> list[SearchResult]:
    """Run SLSQP from every start; certify and de-duplicate the end points (parameters and function)."""
    out: list[SearchResult] = []
    probe = probe_set(X)
    for label, net in starts:
        end, status = slsqp(net, X, y, maxiter)
        if end.margins(X, y).min() <= 0:
            cert = None
        else:
            cert = kkt_certificate(end, X, y)
        if cert is None:
            from .certificate import _failed  # heavy: cvxpy (loaded on first use)

            out.append(SearchResult(label, status + " (infeasible end point)", end, _failed("not feasible", end, float("nan"), 0, 0), float("nan")))
            continue
        theta = cert.scaled.params()
        res = SearchResult(label, status, cert.scaled, cert, 0.5 * float(theta @ theta))
        for i, prev in enumerate(out):
            if prev.duplicate_of is None and np.isfinite(prev.value) and same_up_to_permutation(prev.net, res.net, X=X):
                res.duplicate_of = i
                break
        for i, prev in enumerate(out):
            if prev.same_function_as is None and np.isfinite(prev.value) and same_function(prev.net, res.net, probe):
                res.same_function_as = i
                break
        out.append(res)
        if progress is not None:
            progress(1)
    return out
