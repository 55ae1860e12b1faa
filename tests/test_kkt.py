import math

import numpy as np
import pytest

from ibcheck.solvers.kkt.certificate import eps_delta_kkt, kkt_certificate
from ibcheck.solvers.kkt.global_opt import TooLarge, activation_patterns, augment, cover_count, dual_check, global_max_margin
from ibcheck.solvers.kkt.search import kkt_search, random_start, same_up_to_permutation
from ibcheck.solvers.networks import TwoLayerReLU
from ibcheck.solvers.svm import hard_margin_svm


def symmetric_data(seed=0, n=15, d=5):
    rng = np.random.default_rng(seed)
    P = rng.standard_normal((n, d)) + np.eye(1, d)[0] * 2
    return np.vstack([P, -P]), np.r_[np.ones(n), -np.ones(n)]


def svm_network(X, y):
    """f = c ReLU(<w, x>/c) - c ReLU(-<w, x>/c) = <w, x>: a KKT point of (P) on symmetric data."""
    s = hard_margin_svm(X, y, bias=False)
    c = math.sqrt(np.linalg.norm(s.w))
    return TwoLayerReLU(W=np.vstack([s.w, -s.w]) / c, b=None, a=np.array([c, -c]))


def test_svm_solution_and_non_separable_data():
    X, y = symmetric_data()
    s = hard_margin_svm(X, y, bias=False)
    assert s.separable and s.status == "optimal"
    assert np.min(y * (X @ s.w)) == pytest.approx(1.0, abs=1e-6)
    assert np.allclose(s.w, (s.alpha * y) @ X, atol=1e-6)  # w = sum alpha_i y_i x_i
    bad = hard_margin_svm(np.array([[0.0], [1.0], [2.0]]), np.array([1.0, -1.0, 1.0]))
    assert not bad.separable and "infeasible" in bad.status


def test_certificate_accepts_svm_network_and_rejects_perturbations():
    X, y = symmetric_data()
    net = svm_network(X, y)
    cert = kkt_certificate(net, X, y)
    assert cert.solver_status == "optimal" and cert.is_kkt(1e-6)
    assert cert.stationarity_residual < 1e-6 and cert.euler_gap < 1e-6
    rng = np.random.default_rng(1)
    for _ in range(3):
        bad = net.with_params(net.params() * (1 + 1e-3 * rng.standard_normal(net.params().size)))
        assert kkt_certificate(bad, X, y).stationarity_residual > 1e-2
    # The fa model (second layer fixed, degree 1) too.
    s = hard_margin_svm(X, y, bias=False)
    fa = TwoLayerReLU(W=np.vstack([s.w, -s.w]), b=None, a=np.array([1.0, -1.0]), trained=("W", "b"), kind="fa")
    assert kkt_certificate(fa, X, y).is_kkt(1e-6)


def test_slsqp_reaches_kkt_points_in_most_starts():
    from ibcheck.simulate.substrate.data import clusters

    ds = clusters(5, 4, 20, sigma=0.3, seed=1)
    rng = np.random.default_rng(0)
    res = kkt_search(ds.X, ds.y, [(f"r{i}", random_start(5, 6, rng)) for i in range(8)])
    ok = [r for r in res if r.certificate.is_kkt(1e-5)]
    assert len(ok) >= 6
    assert all(r.certificate.stationarity_residual <= 1e-5 for r in ok)


def test_pattern_enumeration_matches_cover_count():
    rng = np.random.default_rng(0)
    for n, d in [(16, 2), (10, 3), (7, 1)]:
        Xt = augment(rng.standard_normal((n, d)), True)
        assert len(activation_patterns(Xt)) == cover_count(n, d + 1)
    with pytest.raises(TooLarge) as e:
        activation_patterns(augment(rng.standard_normal((200, 5)), True))
    assert "Cover's count" in str(e.value)


def test_global_value_bounds_every_kkt_point_and_dual_check():
    """Value(global) <= value(every KKT point); equality exactly where the dual check says global;
    and a non-global KKT point found by the search is flagged by the dual check."""
    from ibcheck.simulate.substrate.data import sphere

    ds = sphere(2, 8, seed=1)  # an instance where 8 starts reach both a global and a non-global KKT point (5 and 2)
    X, y = ds.X, ds.y
    g = global_max_margin(X, y)
    assert g.status == "optimal" and g.n_blocks >= 1
    rng = np.random.default_rng(1)
    res = kkt_search(X, y, [(f"r{i}", random_start(2, 6, rng)) for i in range(8)])
    kkt = [r for r in res if r.certificate.is_kkt(1e-5)]
    assert kkt
    seen_global = seen_local = False
    for r in kkt:
        assert g.value <= r.value * (1 + 1e-6)
        dc = dual_check(X, y, r.certificate.lam)
        if dc <= 1 + 1e-4:
            assert r.value == pytest.approx(g.value, rel=1e-5)
            seen_global = True
        else:
            assert r.value > g.value * (1 + 1e-4)
            seen_local = True
    assert seen_global and seen_local


def test_recovered_global_network_attains_the_value():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((10, 2))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)
    g = global_max_margin(X, y)
    q = g.net.margins(X, y)
    assert q.min() == pytest.approx(1.0, abs=1e-4)
    assert 0.5 * np.sum(g.net.params() ** 2) == pytest.approx(g.value, rel=1e-4)


def test_dedup_up_to_permutation():
    rng = np.random.default_rng(0)
    net = random_start(4, 5, rng)
    perm = rng.permutation(5)
    other = TwoLayerReLU(W=net.W[perm], a=net.a[perm], b=net.b[perm])
    assert same_up_to_permutation(net, other)
    assert not same_up_to_permutation(net, net.with_params(net.params() * 1.01))


def test_gd_trajectory_eps_delta_decrease():
    """LL20.thm.kkt numerically: the (eps, delta) of GD iterates fall as the loss falls."""
    from ibcheck.simulate.substrate.models import ModelConfig
    from ibcheck.simulate.substrate.trainer import TrainConfig
    from ibcheck.simulate.substrate.training import DataConfig, RunConfig, run

    cfg = RunConfig(setting="two-layer", data=DataConfig(d=10, k=4, n=30), model=ModelConfig("two-layer", width=10),
                    train=TrainConfig(steps=3000, lr=0.05, loss="exp", reduction="sum", schedule="loss-based", checkpoints=8, progress=False))
    res = run(cfg)
    ds = res.datasets[0]
    rows = []
    loss = {r["step"]: r["log10_loss_sum"] for r in res.trajectory}
    for step, nets in res.checkpoints:
        net = nets[0]
        if net.margins(ds.X, ds.y).min() <= 0:
            continue
        eps, delta, _ = eps_delta_kkt(net, ds.X, ds.y)
        eps_t, delta_t, _ = eps_delta_kkt(net, ds.X, ds.y, tie_tol=1e-4)
        rows.append((loss[step], max(eps, delta), max(eps_t, delta_t)))
    assert len(rows) >= 4
    first, last = rows[0], rows[-1]
    assert last[0] < first[0] - 50  # the loss fell by many orders of magnitude
    assert last[1] < 0.6 * first[1]
    assert last[2] < 0.5 * first[2]
    from scipy.stats import spearmanr

    assert spearmanr([r[0] for r in rows], [r[2] for r in rows]).statistic > 0.7


def test_is_kkt_checks_complementary_slackness_explicitly():
    from ibcheck.solvers.kkt.certificate import KKTCertificate

    net = TwoLayerReLU(W=np.eye(2), a=np.array([1.0, -1.0]), b=None)
    base = dict(solver_status="optimal", stationarity_residual=1e-9, stationarity_abs=1e-9, feasible=True, min_margin=1.0,
                normalized_margin=0.5, euler_gap=0.0, n_active=2, n_ties=0, scaled=net)
    good = KKTCertificate(complementary_slackness=1e-9, lam=np.array([1.0, 1.0]), **base)
    assert good.is_kkt(1e-6) and good.failures(1e-6) == []
    # stationary, feasible, but a multiplier sits on a sample with margin 1.5: not a KKT point
    bad = KKTCertificate(complementary_slackness=0.5, lam=np.array([1.0, 1.0]), **base)
    assert not bad.is_kkt(1e-6)
    assert bad.failures(1e-6) == ["complementary slackness max lambda_i (q_i - 1) / sum lambda = 0.25 > 1e-06"]
    assert bad.as_json()["complementary_slackness_rel"] == pytest.approx(0.25)
    assert not KKTCertificate(complementary_slackness=0.0, lam=np.array([1.0, 1.0]), **{**base, "solver_status": "infeasible"}).is_kkt()


def test_split_and_dead_neurons_are_the_same_point():
    from ibcheck.solvers.kkt.search import probe_set, same_function

    rng = np.random.default_rng(0)
    X = rng.standard_normal((10, 3))
    W = rng.standard_normal((2, 3))
    a = np.array([1.5, -0.7])
    net = TwoLayerReLU(W=W, a=a, b=None)
    # neuron 0 split into two parallel ones (0.5 W0 with weight 1.5 and 2 W0 with weight 0.375: 0.75 + 0.75 = 1.5)
    # plus a dead neuron (no output weight)
    split = TwoLayerReLU(W=np.vstack([0.5 * W[0], 2 * W[0], W[1], np.ones(3)]), a=np.array([1.5, 0.375, -0.7, 0.0]), b=None)
    assert same_up_to_permutation(net, split, X=X)
    assert same_function(net, split, probe_set(X))
    other = TwoLayerReLU(W=W, a=np.array([1.5, -0.6]), b=None)
    assert not same_up_to_permutation(net, other, X=X) and not same_function(net, other, probe_set(X))


# ---------------------------------------------------------------------------------------------
# Degenerate arrangements (issue 12): duplicate, parallel and antipodal points, n <= d + 1


def test_symmetric_degenerate_configuration_has_its_closed_form_optimum():
    """d = 2, no bias: +e1 and -e1 labelled +1, +e2 and -e2 labelled -1 (antipodal pairs: two distinct lines).

    No neuron can serve two points (e1 and -e1 never fire together; e1 and e2 carry opposite labels),
    so each point needs its own neuron with |a| ||w|| >= 1, costing 1/2 (a^2 + ||w||^2) >= 1: the
    optimum is 4, attained by one balanced unit neuron per point, with multipliers lambda_i = 1.
    """
    X = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    y = np.array([1.0, 1.0, -1.0, -1.0])
    D = activation_patterns(X)
    assert len(D) == 4  # the four quadrants; Cover's count for 4 points in general position would be 8
    g = global_max_margin(X, y, bias=False)
    assert g.status == "optimal" and g.certified and g.value == pytest.approx(4.0, rel=1e-6)
    assert dual_check(X, y, np.ones(4), bias=False) == pytest.approx(1.0, abs=1e-6)
    construction = TwoLayerReLU(W=X.copy(), a=y.copy(), b=None)
    assert np.allclose(construction.margins(X, y), 1.0)
    assert 0.5 * np.sum(construction.params() ** 2) == pytest.approx(g.value, rel=1e-6)


def test_duplicates_and_parallel_points_tie_their_signs():
    rng = np.random.default_rng(1)
    base = rng.standard_normal((5, 3))
    X = np.vstack([base, base[:2], 2.5 * base[2:3], -base[3:4], np.zeros((1, 3))])  # duplicates, parallel, antipodal, zero
    D = activation_patterns(X)
    assert len(D) == cover_count(5, 3)  # the distinct hyperplanes are those of base, in general position
    assert np.array_equal(D[:, 5], D[:, 0]) and np.array_equal(D[:, 6], D[:, 1]) and np.array_equal(D[:, 7], D[:, 2])
    assert np.array_equal(D[:, 8], 1 - D[:, 3]) and not D[:, 9].any()


@pytest.mark.parametrize("n", [3, 8, 12])
def test_few_points_in_high_dimension_realize_every_pattern(n):
    rng = np.random.default_rng(n)
    Xt = augment(rng.standard_normal((n, 20)), True)
    assert len(activation_patterns(Xt, max_patterns=5000)) == 2 ** n


def test_column_generation_beyond_the_pattern_limit_certifies_the_enumerated_optimum():
    from ibcheck.simulate.substrate.data import sphere

    ds = sphere(2, 8, seed=2)
    full = global_max_margin(ds.X, ds.y)
    assert full.method == "enumeration" and full.certified
    cg = global_max_margin(ds.X, ds.y, max_patterns=10)  # far fewer than the 36 patterns: column generation
    assert cg.method == "column generation" and cg.certified and cg.status == "optimal"
    assert cg.value == pytest.approx(full.value, rel=1e-5)
    assert "patterns used" in cg.note


def test_incomplete_patterns_are_never_reported_optimal(monkeypatch):
    """If the enumeration missed patterns, a feasible network beats the program's value: not certified."""
    import ibcheck.solvers.kkt.global_opt as G
    from ibcheck.simulate.substrate.data import sphere

    ds = sphere(2, 8, seed=2)
    full = global_max_margin(ds.X, ds.y)
    real = G.activation_patterns
    monkeypatch.setattr(G, "activation_patterns", lambda Xt, m=5000, verify=True: real(Xt, m)[::3])  # a third of them
    g = G.global_max_margin(ds.X, ds.y, candidates=[full.net])
    assert g.value > full.value * (1 + 1e-6)  # the restricted program is worse ...
    assert not g.certified and g.status == "upper bound (not certified)"  # ... and says so
    assert "patterns are incomplete" in g.note or "dual check" in g.note
