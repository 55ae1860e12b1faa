"""One network of (P)'s search, certified: :class:`CertifiedNetwork`, the certificate call and the polish loop.

Shared by the KKT experiment (:mod:`.kkt`) and the cone search (:mod:`.cone_search`); it imports neither.
Thresholds are scale-free: ``eps`` bounds the stationarity residual ``||theta - sum lambda_i grad q_i|| / ||theta||``
and ``delta`` the complementary slackness ``max lambda_i (q_i - 1) / sum lambda_i``, both at unit margin.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

EPS = 1e-3  # stationarity residual, relative to ||theta||
DELTA = 1e-3  # complementary slackness, relative to sum lambda
NOT_GLOBAL_TOL = 1e-3  # a dual-check lower bound above 1 + this proves a KKT point is not the global optimum
DISTINCT_RTOL = 1e-2  # outputs agreeing to this (relative) are one KKT point: commensurate with a certificate at eps 1e-3


def function_probes(X: np.ndarray) -> np.ndarray:
    """Where two networks are compared as functions: the training points and as many Gaussian probes at their scale."""
    X = np.asarray(X, float)
    return np.vstack([X, np.random.default_rng(0).standard_normal(X.shape) * float(np.sqrt(np.mean(X * X)))])


def function_distance(f: np.ndarray, ref: np.ndarray) -> float:
    """The largest output difference relative to the reference's largest output: at most DISTINCT_RTOL is one point."""
    return float(np.max(np.abs(f - ref))) / max(float(np.max(np.abs(ref))), 1e-300)


@dataclass(frozen=True)
class CertifiedNetwork:
    """One trained network after certification (and polishing where needed), at unit margin."""

    net: object  # TwoLayerReLU, scaled to min margin 1
    init_seed: int
    eps: float  # relative stationarity residual
    delta: float  # relative complementary slackness
    feasible: bool
    solver_status: str
    polished: bool
    ties: int = 0  # the exact ties (zero pre-activations on active points) the certificate rests on
    eps_relu0: float = float("nan")  # the relative residual with every tie at ReLU'(0) = 0
    eps_relu1: float = float("nan")  # ... at ReLU'(0) = 1
    dual_lb: float = float("nan")  # a lower bound on the dual check (> 1: certainly not the global optimum of (P))
    origin: str = "gd"  # where the search started: "gd" (a trained network), "cone:<family>", "robust-cone"
    trace: str = ""  # how the search ended there (the cone's own optimum, polished, heading to a known point, ...)
    known_distance: float = float("nan")  # the search: relative output distance to the nearest KKT point already found

    def certified(self, eps: float = EPS, delta: float = DELTA) -> bool:
        """An (eps, delta)-KKT point of (P) by an optimal solver status (nan never certifies)."""
        return self.solver_status == "optimal" and self.feasible and self.eps <= eps and self.delta <= delta


def _certify(net, X, y, init_seed: int, polished: bool) -> CertifiedNetwork:
    from ibcheck.solvers.kkt.certificate import kkt_certificate  # heavy: cvxpy (loaded on first use)
    from ibcheck.solvers.kkt.global_opt import dual_lower_bound  # heavy: cvxpy (loaded on first use)

    c = kkt_certificate(net, X, y)
    ok = (c.solver_status == "optimal" and c.lam is not None and np.all(np.isfinite(c.lam)) and bool(c.feasible)
          and c.stationarity_residual <= EPS)  # only where it may matter: a network that certifies at the default eps
    Wt = c.scaled.W if c.scaled.b is None else np.hstack([c.scaled.W, c.scaled.b[:, None]])
    lb = dual_lower_bound(X, y, c.lam, bias=net.b is not None, starts=Wt, iters=30) if ok else float("nan")
    return CertifiedNetwork(c.scaled, init_seed, float(c.stationarity_residual), float(c.complementary_slackness_rel),
                            bool(c.feasible), c.solver_status, polished, int(c.n_ties), float(c.eps_relu0), float(c.eps_relu1), lb)


def certify_or_polish(net, X: np.ndarray, y: np.ndarray, init_seed: int, eps: float = EPS, delta: float = DELTA,
                      attempts: int = 3) -> CertifiedNetwork:
    """Certify ``net``; while it fails (at most ``attempts`` times), polish it on its activation cone and certify the end
    point instead. A polish restarted from the last end point reads its exact ties (zero pre-activations) afresh,
    which settles the patterns a solver's last digits left ambiguous."""
    from ibcheck.solvers.kkt.polish import pattern_polish  # heavy: cvxpy (loaded on first use)

    best = _certify(net, X, y, init_seed, False)
    for _ in range(attempts):
        if best.certified(eps, delta):
            return best
        p = pattern_polish(net, X, y)
        if p.net is net:  # the cone program failed: the last certificate stands
            return best
        net = p.net
        best = _certify(net, X, y, init_seed, True)
    return best
