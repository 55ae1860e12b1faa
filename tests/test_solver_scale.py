"""Solvers whose answers do not depend on scale, and that never claim more than they prove
(issue 18, items 4, 5 and 7)."""
import math

import numpy as np
import pytest

import ibcheck
from ibcheck.solvers.networks import TwoLayerReLU, classifier_normalized
from ibcheck.solvers.radius import exact as exact_mod
from ibcheck.solvers.radius.bracket import compute_radii
from ibcheck.solvers.svm import hard_margin_svm


def _net(seed: int, d: int = 4, m: int = 5) -> TwoLayerReLU:
    rng = np.random.default_rng(seed)
    return TwoLayerReLU(W=rng.standard_normal((m, d)), a=rng.standard_normal(m), b=rng.standard_normal(m))


def _points(net, seed: int, n: int = 8):
    rng = np.random.default_rng(100 + seed)
    X = rng.standard_normal((n, net.dim))
    return X, np.sign(net.forward(X))  # correctly classified: every radius is positive


@pytest.mark.parametrize("seed", range(3))
def test_exact_radii_do_not_depend_on_the_output_scale(seed):
    net = _net(seed)
    X, y = _points(net, seed)
    v = np.ones(net.dim) / math.sqrt(net.dim)
    ref = compute_radii(net, X, y, v, ("universal", "attack", "certified", "exact"), 10.0)
    for c in (1e-10, 1e-5, 1e6):
        scaled = TwoLayerReLU(W=net.W * 1e-3, a=net.a * c, b=net.b * 1e-3)  # the same classifier
        out = compute_radii(scaled, X, y, v, ("universal", "attack", "certified", "exact"), 10.0)
        both = ref["exact_proven"] & out["exact_proven"]
        assert both.sum() >= len(X) - 1, out["exact_status"]
        np.testing.assert_allclose(out["exact_upper"][both], ref["exact_upper"][both], rtol=1e-6)
        for r in (ref, out):  # certified <= exact <= attack on every point
            assert (r["certified"] <= r["exact_upper"] * (1 + 1e-6) + 1e-12).all()
            assert (r["exact_upper"] <= r["upper"] * (1 + 1e-6) + 1e-12).all()


def test_the_normalized_network_is_the_same_classifier_at_unit_scale():
    net = TwoLayerReLU(W=_net(0).W * 1e-3, a=_net(0).a * 1e-10, b=_net(0).b * 1e-3)
    X, _ = _points(net, 0, 50)
    unit = classifier_normalized(net)
    assert np.array_equal(np.sign(unit.forward(X)), np.sign(net.forward(X)))
    assert math.isclose(np.abs(unit.a).max(), 1.0)
    np.testing.assert_allclose(np.linalg.norm(np.c_[unit.W, unit.b], axis=1), 1.0)


def test_a_failing_solver_keeps_the_bracket_and_says_so(monkeypatch):
    """SCIP's 'error in LP solver' (injected here: it shows on badly scaled problems) never escapes."""
    net = _net(1)
    X, y = _points(net, 1, 4)

    def failing(*args, **kwargs):
        raise Exception("SCIP: error in LP solver!")

    monkeypatch.setattr(exact_mod, "exact_radius_miqp", failing)
    out = compute_radii(net, X, y, np.ones(net.dim) / 2, ("exact",), 1.0)
    assert not out["exact_proven"].any()
    assert all("solver failed" in s and "bracket kept" in s for s in out["exact_status"])
    np.testing.assert_array_equal(out["exact_upper"], out["upper"])


def test_svm_is_unbounded_on_one_class_and_scale_covariant():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 5))
    y = np.sign(X[:, 0] + 0.3)
    one = hard_margin_svm(X[:1], y[:1])
    assert one.status == "unbounded" and one.margin == math.inf
    assert hard_margin_svm(X, np.ones(20)).status == "unbounded"
    ref = hard_margin_svm(X, y)
    for s in (1e-10, 1e7):
        r = hard_margin_svm(X * s, y)
        assert r.status == "optimal"
        assert math.isclose(r.margin / s, ref.margin, rel_tol=1e-6)


def test_kkt_search_never_says_optimal_for_an_unbounded_svm(cli, tmp_path):
    import json

    res = cli("kkt", "--data", "sphere", "--d", "2", "--n", "1", "--width", "2", "--starts", "2", "--global", "--out", str(tmp_path / "k"),
              "--json")
    assert res.returncode in (0, 2), res.stderr
    if res.returncode == 0:
        rep = json.loads(res.stdout)
        assert rep["svm_status"] != "optimal" or math.isfinite(rep["svm_margin"])


def test_global_max_margin_never_infeasible_on_feasible_data_and_exact_without_bias():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((6, 2))
    y = np.array([1, -1, 1, -1, 1, -1.0])
    tiny = ibcheck.global_max_margin(X * 1e-10, y)
    assert tiny.status != "infeasible" and not tiny.certified
    ref = ibcheck.global_max_margin(X, y, bias=False)
    for s in (1e-10, 1e7):
        g = ibcheck.global_max_margin(X * s, y, bias=False)
        assert g.certified and math.isclose(g.value * s, ref.value, rel_tol=1e-6)
        assert g.net.margins(X * s, y).min() >= 1 - 1e-6
    X2, y2 = np.vstack([X, X[:1]]), np.append(y, -y[0])  # the same point with both labels
    assert ibcheck.global_max_margin(X2, y2).status == "infeasible"


def test_global_max_margin_with_a_bias_at_a_large_scale_does_not_crash():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((6, 2))
    y = np.array([1, -1, 1, -1, 1, -1.0])
    g = ibcheck.global_max_margin(X * 1e7, y)
    assert g.certified and g.net.margins(X * 1e7, y).min() >= 1 - 1e-6


def test_an_absurd_noise_scale_is_a_result_or_one_line_never_a_crash(cli, tmp_path):
    res = cli("kkt", "--sigma", "1e100", "--d", "3", "--n", "6", "--width", "2", "--starts", "2", "--global", "--out", str(tmp_path / "k"))
    assert res.returncode in (0, 2), res.stderr
    assert "internal error" not in res.stderr and len(res.stderr.strip().splitlines()) <= 1


# ---------------------------------------------------------------------------------------------
# Issue 28, section 8: solver faults from the hostile-input campaign.


def _kkt_points():
    """A hand-checked KKT point (the SVM as a +-ReLU pair on symmetric data) and one certified by the search."""
    from ibcheck.simulate.substrate.data import clusters
    from ibcheck.solvers.kkt.certificate import kkt_certificate
    from ibcheck.solvers.kkt.search import kkt_search, random_start

    rng = np.random.default_rng(0)
    P = rng.standard_normal((15, 5)) + np.eye(1, 5)[0] * 2
    X, y = np.vstack([P, -P]), np.r_[np.ones(15), -np.ones(15)]
    s = hard_margin_svm(X, y, bias=False)
    c = math.sqrt(np.linalg.norm(s.w))
    svm_net = TwoLayerReLU(W=np.vstack([s.w, -s.w]) / c, b=None, a=np.array([c, -c]))
    ds = clusters(5, 4, 20, sigma=0.3, seed=1)
    res = kkt_search(ds.X, ds.y, [(f"r{i}", random_start(5, 6, np.random.default_rng(i), bias=False)) for i in range(3)])
    found = next(r.net for r in res if r.certificate.is_kkt(1e-5))
    assert kkt_certificate(svm_net, X, y).is_kkt(1e-6) and kkt_certificate(found, ds.X, ds.y).is_kkt(1e-5)
    return [(svm_net, X, y), (found, ds.X, ds.y)]


@pytest.mark.parametrize("scale", [1e-9, 1e-8, 1e10, 1e12, 1e150])
def test_a_kkt_point_certifies_at_any_data_scale(scale):
    """A bias-free network's KKT points do not depend on the data's scale; the certificate must not either
    (before: residual 0.33 at 1e-9, 1.8e65 at 1e150)."""
    from ibcheck.solvers.kkt.certificate import kkt_certificate

    for net, X, y in _kkt_points():
        cert = kkt_certificate(net, X * scale, y)
        assert cert.solver_status == "optimal" and cert.is_kkt(1e-5), (scale, cert.failures(1e-5))
        assert cert.stationarity_residual <= 1.0  # lambda = 0 alone gives 1


def test_a_kkt_point_scaled_by_1e200_still_certifies():
    from ibcheck.solvers.kkt.certificate import kkt_certificate

    for net, X, y in _kkt_points():
        big = net.with_params(net.params() * 1e200)
        assert kkt_certificate(big, X, y).is_kkt(1e-5)


@pytest.mark.parametrize("offset", [1e8, 3e8, 1e10])
def test_svm_is_translation_safe(offset):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    y = np.sign(X[:, 0] + 0.3 * X[:, 1] + 0.1)
    X[:, 0] += 0.5 * y
    ref = hard_margin_svm(X, y)
    out = hard_margin_svm(X + offset, y)
    assert out.status == "optimal" and out.separable
    assert out.margin == pytest.approx(ref.margin, rel=1e-5)
    np.testing.assert_allclose(out.w, ref.w, rtol=1e-4, atol=1e-6)
    assert np.min(y * ((X + offset) @ out.w + out.b)) >= 1 - 1e-3  # feasible on the data as given


def test_eps_delta_kkt_reports_the_definitions_absolute_eps():
    """LL20.def.eps_delta_kkt's eps is ||theta - sum lambda h|| at unit margin; the relative residual is named apart."""
    from ibcheck.solvers.kkt.certificate import eps_delta_kkt

    net, X, y = _kkt_points()[0]
    bad = net.with_params(net.params() * (1 + 0.05 * np.random.default_rng(3).standard_normal(net.params().size)))
    eps, delta, cert = eps_delta_kkt(bad, X, y)
    assert eps == pytest.approx(cert.stationarity_abs) == pytest.approx(cert.epsilon)
    assert eps == pytest.approx(cert.stationarity_residual * np.linalg.norm(cert.scaled.params()))
    assert eps > cert.stationarity_residual  # ||theta|| > 1 at unit margin here: the two differ


def test_an_identically_zero_classifier_has_radius_zero_not_nan():
    net = TwoLayerReLU(W=np.zeros((3, 4)), a=np.zeros(3), b=np.zeros(3))
    X = np.random.default_rng(0).standard_normal((5, 4))
    r = compute_radii(net, X, np.ones(5), np.ones(4) / 2, ("universal", "attack", "certified", "exact"), 10.0)
    for key in ("universal", "attack", "certified", "exact_lower", "exact_upper"):
        assert np.all(r[key] == 0.0), (key, r[key])
