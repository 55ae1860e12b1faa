"""The KKT certificate in the data's Gram space (solvers/kkt/multipliers.py) against the parameter-space reference.

Both solve min ||theta - sum lambda_i h_i - sum mu_ij t_ij|| over lambda >= 0, 0 <= mu_ij <= lambda_i; the Gram one over
the Clarke cone's generators (column generation), the reference by a QR of the parameters x (active + ties) matrix and
Clarabel. They must agree on the residual to 1e-10 (relative), and the Gram one must never form a parameters x n array.
"""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from ibcheck.simulate.substrate.data import clusters
from ibcheck.solvers.kkt.certificate import kkt_certificate, kkt_certificate_params
from ibcheck.solvers.kkt.cones import family_cone
from ibcheck.solvers.kkt.polish import cone_optimum, data_span
from ibcheck.solvers.networks import TwoLayerReLU


def _cone_points(d, k, n, seed, rounds=3):
    """The per-cluster cone's optimum and the next cones' (ties at walls, certified or not): a mix of cases."""
    ds = clusters(d, k, n, 1.0, seed=seed)
    labels = np.where(np.isin(np.arange(k), ds.J_plus), 1.0, -1.0)
    out = []
    for fam in ("per-cluster", "per-class", "mixture"):
        D, s = family_cone(fam, ds.cluster, labels)
        span = data_span(ds.X)
        for _ in range(rounds):
            o = cone_optimum(ds.X, ds.y, D, s, span=span)
            if not o.net.width:
                break
            out.append(o.net)
            if o.next_cone is None:
                break
            D, s = o.next_cone
    return ds, out


@pytest.mark.parametrize("d,k,n,seed", [(16, 4, 24, 0), (32, 6, 36, 2), (64, 8, 48, 2)])  # each with ties and a certified point
def test_the_gram_residual_equals_the_parameter_space_residual(d, k, n, seed):
    ds, nets = _cone_points(d, k, n, seed)
    ties = certified = 0
    for net in nets:
        g = kkt_certificate(net, ds.X, ds.y)
        p = kkt_certificate_params(net, ds.X, ds.y)
        assert g.solver_status == p.solver_status == "optimal"
        assert g.stationarity_residual == pytest.approx(p.stationarity_residual, abs=1e-10)
        assert g.eps_relu0 == pytest.approx(p.eps_relu0, abs=1e-9) and g.eps_relu1 == pytest.approx(p.eps_relu1, abs=1e-9)
        assert g.is_kkt() == p.is_kkt() and g.n_ties == p.n_ties and g.n_active == p.n_active
        ties += g.n_ties > 0
        certified += g.is_kkt()
    assert ties and certified  # the cases include ties, and certified points beside uncertified ones


def test_the_gram_certificate_agrees_off_the_data_span_and_without_biases_or_a_trained_output_layer():
    """A GD-like network with weights off the data's span (the part no multiplier reaches), a bias-free network, and
    LPLL25's fixed output layer (degree 1): the same residual as the reference."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((30, 40))
    w = rng.standard_normal(40)
    y = np.sign(X @ w)
    for net in (TwoLayerReLU(W=rng.standard_normal((6, 40)) + w, a=np.abs(rng.standard_normal(6)), b=rng.standard_normal(6)),
                TwoLayerReLU(W=np.vstack([w, -w, w + 0.1 * rng.standard_normal(40)]), a=np.array([1.0, -1.0, 0.5])),
                TwoLayerReLU(W=np.vstack([w, -w]), a=np.array([0.5, -0.5]), b=np.zeros(2), trained=("W", "b"))):
        if (y * net.forward(X)).min() <= 0:
            continue
        g, p = kkt_certificate(net, X, y, active_tol=0.5), kkt_certificate_params(net, X, y, active_tol=0.5)
        assert g.stationarity_residual == pytest.approx(p.stationarity_residual, abs=1e-10, rel=1e-8)
        assert np.allclose(g.lam, p.lam, atol=1e-6 * max(1.0, float(np.abs(p.lam).max())))


def test_the_gram_certificate_never_forms_a_parameters_by_points_array():
    """At d = 20,000, n = 48, width 16: the parameters x active-points Jacobian alone is about 120 MB; the Gram path's
    peak allocation (a few copies of the data itself, 7.7 MB each) stays under a quarter of that."""
    d, n, m = 20000, 48, 16
    ds = clusters(d, 8, n, 1.0, seed=0)
    labels = np.where(np.isin(np.arange(8), ds.J_plus), 1.0, -1.0)
    D, s = family_cone("per-cluster", ds.cluster, labels)
    net = cone_optimum(ds.X, ds.y, np.repeat(D, 2, axis=1), np.repeat(s, 2)).net
    jacobian_bytes = (m * (d + 2)) * n * 8
    tracemalloc.start()
    try:
        cert = kkt_certificate(net, ds.X, ds.y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert cert.solver_status == "optimal"
    assert peak < jacobian_bytes / 4, f"peak {peak / 1e6:.1f} MB against a Jacobian of {jacobian_bytes / 1e6:.0f} MB"


@pytest.mark.parametrize("seed", range(6))
def test_the_multiplier_program_solves_dependent_generators_and_ends(seed):
    """The NNLS in Gram form, ``min_(u >= 0) 1/2 u^T S u - b^T u`` with S = G G^T and b = G theta, on generators that
    are dependent (30 in R^10, some repeated, some repeated at 1e-7 of their scale: the pivoted Cholesky and the
    factor's own pivot test can disagree there): it ends, and its residual ||G^T u - theta|| is scipy's NNLS one."""
    from scipy.optimize import nnls

    from ibcheck.solvers.kkt.multipliers import _nnqp

    rng = np.random.default_rng(seed)
    G = rng.standard_normal((24, 10))
    G = np.vstack([G, G[:3], 1e-7 * G[3:6]])
    theta = rng.standard_normal(10) + G[:5].T @ rng.random(5)
    u, converged = _nnqp(G @ G.T, G @ theta)
    _, ref = nnls(G.T, theta)
    assert converged and (u >= 0).all()
    assert np.linalg.norm(G.T @ u - theta) == pytest.approx(ref, rel=1e-8, abs=1e-10)
