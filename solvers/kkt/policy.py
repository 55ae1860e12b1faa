"""The KKT engine's one policy: what counts as a KKT point of (P), and when two are the same point.

* :data:`POINT_TOL`: a network is a KKT point only when its certificate (:func:`.certificate.kkt_certificate`, ties by
  the Clarke rule ReLU'(0) in [0, 1]) holds at a relative stationarity residual and a relative complementary slackness
  of at most 1e-6, from an optimal solver status (or, at feature scales float64 cannot certify, the same conditions
  evaluated in mpmath at the point continued from unit scale: :mod:`.extended`). Anything else is a *candidate*, never
  a point.
* :func:`same_point`: two certified points are one when their outputs agree to :data:`SAME_POINT_RTOL` of the larger
  output, on the training points and as many Gaussian probes at the data's scale (:func:`function_probes`).

``ibcheck kkt``, ``ibcheck.kkt_points``, the comparisons and the reproductions all read these two.

Pitfall avoided: three searches had three thresholds (1e-5, 1e-3 and 1e-5 to certify; 1e-4 and 1e-2 for "the same
point"): at 1e-3, 9 of 10 near-KKT networks (residual 3.7e-5 to 1.6e-3, some 0.085-0.17 in function distance from
every exactly certified point) counted as KKT points; exact cone optima certify at 1e-8 to 1e-9.
"""
from __future__ import annotations

import numpy as np

POINT_TOL = 1e-6  # relative stationarity residual and complementary slackness at which a certificate makes a KKT point
SAME_POINT_RTOL = 1e-3  # relative output distance within which two certified KKT points are one point


def is_point(cert, tol: float = POINT_TOL) -> bool:
    """Whether a :class:`~.certificate.KKTCertificate` makes its network a KKT point of (P) under the policy: an optimal
    solver status, feasible, lambda >= 0, and both relative residuals at most ``tol`` (nan never passes)."""
    return bool(cert.is_kkt(tol))


def function_probes(X: np.ndarray, seed: int = 0) -> np.ndarray:
    """Where two networks are compared as functions: the training points and as many Gaussian probes at their scale.

    Pitfall avoided: the training points alone miss neurons that differ off the data (two points that agree on the
    sample may be different networks)."""
    X = np.asarray(X, float)
    scale = float(np.sqrt(np.mean(X * X))) if X.size else 1.0
    return np.vstack([X, np.random.default_rng(seed).standard_normal(X.shape) * scale])


def function_distance(f: np.ndarray, ref: np.ndarray) -> float:
    """The largest output difference relative to the larger of the two largest outputs (symmetric)."""
    f, ref = np.asarray(f, float), np.asarray(ref, float)
    scale = max(float(np.max(np.abs(ref), initial=0.0)), float(np.max(np.abs(f), initial=0.0)), 1e-300)
    return float(np.max(np.abs(f - ref), initial=0.0)) / scale


def same_point(a, b, probes: np.ndarray, rtol: float = SAME_POINT_RTOL) -> bool:
    """Whether two networks at unit margin are one KKT point: :func:`function_distance` of their outputs on ``probes``
    at most ``rtol``. Scale them to unit margin first (a homogeneous network's direction is the point)."""
    return function_distance(a.forward(probes), b.forward(probes)) <= rtol


def distinct_groups(nets: list, probes: np.ndarray, rtol: float = SAME_POINT_RTOL) -> list[list[int]]:
    """The networks grouped into distinct points (indices), each group led by its first member; a network joins the
    first group whose leader it matches (:func:`same_point`)."""
    groups: list[list[int]] = []
    leads: list[np.ndarray] = []
    for i, net in enumerate(nets):
        f = np.asarray(net.forward(probes))
        for g, ref in zip(groups, leads):
            if function_distance(f, ref) <= rtol:
                g.append(i)
                break
        else:
            groups.append([i])
            leads.append(f)
    return groups
