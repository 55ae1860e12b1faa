"""Claims about KKT points are measured on certified KKT points only (issue 20, section 2)."""
import math
from types import SimpleNamespace

import numpy as np
import pytest

from ibcheck.simulate.experiments.base import Row
from ibcheck.simulate.experiments.kkt import CertifiedNetwork, KKTSample, UncertifiedSample, kkt_row, largest_over_certified
from ibcheck.simulate.experiments.registry import EXPERIMENTS
from ibcheck.simulate.verdict.kkt import at_thresholds, kkt_cells, transfer_cells
from ibcheck.solvers.kkt.certificate import kkt_certificate
from ibcheck.solvers.networks import TwoLayerReLU

_RNG = np.random.default_rng(7)
_POINT = TwoLayerReLU(W=_RNG.standard_normal((4, 3)), a=_RNG.standard_normal(4), b=None)
_DATA = SimpleNamespace(X=_RNG.standard_normal((20, 3)))


def _net(eps, delta=1e-12, status="optimal", feasible=True, net=_POINT):
    return CertifiedNetwork(net, 0, eps, delta, feasible, status, True)


def _sample(*nets):
    return KKTSample(_DATA, tuple(nets))


def test_an_uncertified_network_never_enters_the_largest():
    s = _sample(_net(1e-6), _net(0.5), _net(1e-5, delta=0.2), _net(1e-7, status="optimal_inaccurate"), _net(1e-7, feasible=False))
    assert largest_over_certified([1.0, 100.0, 50.0, 70.0, 60.0], s) == 1.0
    assert largest_over_certified([1.0, 100.0, 50.0, 70.0, 60.0], s, eps=1.0, delta=1.0) == 100.0  # at looser thresholds it would
    with pytest.raises(UncertifiedSample):
        largest_over_certified([3.0], _sample(_net(0.3)))
    with pytest.raises(UncertifiedSample):  # nan (no certificate at all) never certifies
        largest_over_certified([3.0], _sample(_net(float("nan"))))


def test_kkt_row_takes_the_largest_over_certified_and_records_every_network():
    s = _sample(_net(1e-6), _net(0.5), _net(2e-4))
    row = kkt_row(s, [2.0, None, 3.0], "universal_flip_norm")
    assert row["universal_flip_norm"] == 3.0
    assert row["kkt_trained"] == 3 and row["kkt_certified"] == 2 and row["kkt_eps"] == 2e-4
    assert [n.get("universal_flip_norm") for n in row["kkt_networks"]] == [2.0, None, 3.0]
    assert row["kkt_distinct"] == 1 and row["kkt_flip_norms"] == [3.0]  # the two certified networks are one function
    with pytest.raises(UncertifiedSample):
        kkt_row(_sample(_net(0.5)), [None], "universal_flip_norm")


def _row(cell, seed, value, status="ok", error=None, failure=None):
    return Row(cell, seed, status, value, error=error, failure=failure)


def test_halved_thresholds_rejudge_every_network_and_fail_rows_left_empty():
    nets = [{"eps": 1e-6, "delta": 1e-12, "feasible": True, "solver_status": "optimal", "q": 2.0},
            {"eps": 8e-4, "delta": 1e-12, "feasible": True, "solver_status": "optimal", "q": 5.0}]
    rows = [_row({"d": 4}, 0, {"q": 5.0, "kkt_networks": nets}),
            _row({"d": 8}, 0, {"q": 7.0, "kkt_networks": [nets[1] | {"q": 7.0}]})]
    half = at_thresholds(rows, "q", 5e-4, 5e-4)
    assert half[0].value["q"] == 2.0  # the network at eps 8e-4 no longer counts
    assert half[1].status == "failed" and half[1].value is None and half[1].failure == "UncertifiedSample"
    assert at_thresholds(rows, "q", 1e-3, 1e-3)[0].value["q"] == 5.0


def test_kkt_and_transfer_summaries_per_cell():
    v = {"kkt_trained": 3, "kkt_certified": 2, "kkt_polished": 3, "kkt_eps": 2e-5, "kkt_delta": 1e-12, "kkt_eps_threshold": 1e-3,
         "kkt_delta_threshold": 1e-3, "transfer_min": 0.88, "transfer_mean": 0.9, "transfer_pairs": 2, "transfer_target": 0.9}
    rows = [_row({"d": 4}, 0, v), _row({"d": 4}, 1, None, "failed", "none of the 3 networks ...", "UncertifiedSample")]
    k = kkt_cells(rows, ["d"])
    got = k[0].to_json()
    assert {key: got[key] for key in ("cell", "samples", "samples_uncertified", "networks_trained", "networks_certified",
                                      "networks_polished", "max_eps", "eps_threshold", "delta_threshold")} == {
        "cell": {"d": 4}, "samples": 2, "samples_uncertified": 1, "networks_trained": 3, "networks_certified": 2,
        "networks_polished": 3, "max_eps": 2e-5, "eps_threshold": 1e-3, "delta_threshold": 1e-3}
    assert got["distinct"] == [] and got["global"] is None and "delta_note" in got
    t = transfer_cells(rows, ["d"])[0]
    assert t.pairs == 2 and t.fraction_min == 0.88 and t.transferable  # 0.88 >= 0.9 - 2 sqrt(0.09/200)
    bad = transfer_cells([_row({"d": 4}, 0, {**v, "transfer_min": 0.5})], ["d"])[0]
    assert bad.transferable is False
    # the failure's kind is read from its own column, never from the text: a text that merely names it is another failure
    text_only = [_row({"d": 4}, 0, v), _row({"d": 4}, 1, None, "failed", "UncertifiedSample: said in the text only", "ValueError")]
    assert kkt_cells(text_only, ["d"])[0].samples_uncertified == 0


def test_fvbs23_row_is_measured_on_certified_kkt_points_only():
    exp = EXPERIMENTS["FVBS23.thm.4_2"]
    cell = {**exp.fixed_at(True), "d": 256, "k": 2}
    cell = {**cell, **exp.settings_at(cell)}
    assert cell["n"] == math.ceil(2 * math.log(256) ** 2)  # the smallest n inside H1
    row = exp.measure(cell, 0)
    # two GD networks, and the cone search: at k = 2 every family is one cone (one cluster per class), solved once; the
    # robust construction's cone is that cone too where its pattern is exactly per cluster (the trace then says so)
    origins = [n["origin"] for n in row["kkt_networks"]]
    assert origins[:3] == ["gd", "gd", "cone:per-cluster"] and set(origins[3:]) <= {"robust-cone"}
    assert row["kkt_trained"] == len(origins) and 1 <= row["kkt_certified"] <= len(origins)
    assert "robust-cone" in origins or "also the cone of robust-cone" in row["kkt_networks"][2]["trace"]
    assert all((n["point"] is None) == (n.get("universal_flip_norm") is None) for n in row["kkt_networks"])
    certified = [n for n in row["kkt_networks"] if n["eps"] <= 1e-3 and n["delta"] <= 1e-3 and n["solver_status"] == "optimal"]
    assert len(certified) == row["kkt_certified"]
    assert row["universal_flip_norm"] == max(n["universal_flip_norm"] for n in certified)
    assert all(n.get("universal_flip_norm") is None for n in row["kkt_networks"] if n not in certified)
    assert row["kkt_distinct"] >= 1 and len(row["kkt_flip_norms"]) == row["kkt_distinct"]
    assert row["transfer_target"] == pytest.approx(0.9)
    if row["kkt_distinct"] == 1:  # copies of one point: no pair, transfer not tested
        assert row["transfer_pairs"] == 0 and row["transfer_min"] is None
    else:
        assert 0.0 <= row["transfer_min"] <= 1.0
    # what each certificate rests on: its ties, and its residual with ReLU'(0) forced to 0 and to 1
    assert all({"ties", "eps_relu0", "eps_relu1"} <= set(n) for n in row["kkt_networks"])


def test_a_polished_network_is_certified_independently():
    from ibcheck.simulate.experiments.kkt import kkt_sample

    exp = EXPERIMENTS["FVBS23.thm.4_2"]
    cell = {**exp.fixed_at(True), "d": 256, "k": 2}
    s = kkt_sample({**cell, **exp.settings_at(cell)}, 1, "clusters", 1)
    c = s.networks[0]
    if c.solver_status == "not separating":
        pytest.skip("the network did not separate the sample")
    cert = kkt_certificate(c.net, s.dataset.X, s.dataset.y)  # the certificate again, from scratch
    assert (cert.stationarity_residual <= 1e-3 and cert.complementary_slackness_rel <= 1e-3) == c.certified()
    assert np.isclose(cert.min_margin, 1.0, rtol=1e-6)  # stored at unit margin


def test_copies_of_one_kkt_point_count_once_and_a_different_point_twice():
    """Two copies of one point (the same network, and one with its neurons permuted and split) are one KKT point;
    another function is a second one; transfer needs two."""
    perm = TwoLayerReLU(W=np.vstack([_POINT.W[::-1], _POINT.W[:1]]), a=np.r_[_POINT.a[::-1][:-1], _POINT.a[0] / 2, _POINT.a[0] / 2],
                        b=None)
    assert np.allclose(perm.forward(_DATA.X), _POINT.forward(_DATA.X))
    other = TwoLayerReLU(W=_POINT.W * np.array([[1.0], [1.0], [1.0], [-1.0]]), a=_POINT.a, b=None)
    assert len(_sample(_net(1e-6), _net(1e-6, net=perm)).distinct) == 1
    assert len(_sample(_net(1e-6), _net(1e-6, net=perm), _net(1e-6, net=other)).distinct) == 2
    assert len(_sample(_net(1e-6), _net(0.5, net=other)).distinct) == 1  # an uncertified network is no KKT point
    from ibcheck.simulate.experiments.kkt import transfer_fractions

    X, y = _DATA.X, np.sign(_POINT.forward(_DATA.X))
    v = np.ones(3) / math.sqrt(3)
    assert transfer_fractions(_sample(_net(1e-6), _net(1e-6, net=perm)), X, y, v, [0.5, 0.5]) == []
    assert len(transfer_fractions(_sample(_net(1e-6), _net(1e-6, net=other)), X, y, v, [0.5, 0.5])) == 2


def test_one_point_per_sample_is_not_counted_as_every_kkt_point():
    from ibcheck.simulate.verdict.kkt import KKTCell, several_points
    from ibcheck.simulate.verdict.rules import RowEvidence, counted

    def cell(d, distinct):
        return KKTCell({"d": d}, 2, 0, 4, 4, 0, 1e-6, None, 1e-3, 1e-3, distinct=distinct)

    one = (cell(4, (1, 1)), cell(8, (1, 1)), cell(16, (1, 2)))
    two = (cell(4, (2, 2)), cell(8, (2, 3)), cell(16, (2, 2)), cell(32, (2, 2)), cell(64, (1, 2)))
    assert not several_points(one) and several_points(two)
    ok, why = counted(RowEvidence("consistent", 3, 3, kkt_certified=True, kkt_several=several_points(one)))
    assert not ok and "every-KKT-point not tested" in why
    assert counted(RowEvidence("consistent", 5, 5, kkt_certified=True, kkt_several=several_points(two)))[0]


def test_a_certificate_says_what_it_rests_on():
    """A polished KKT point rests on exact ties: its residual with ReLU'(0) forced to 0 or to 1 is far from 0."""
    from ibcheck.simulate.experiments.kkt import kkt_sample

    s = kkt_sample({"d": 64, "k": 2, "n": 40}, 0, "clusters", 1)
    c = s.networks[0]
    assert c.certified()
    if c.ties:
        assert c.eps_relu0 > 100 * c.eps or c.eps_relu1 > 100 * c.eps
    rec = s.record()
    assert rec["kkt_delta"] is None and "by construction" in rec["kkt_delta_note"]
    assert rec["kkt_ties"] == [c.ties]


def test_the_flip_norm_is_chosen_with_confidence_and_checked_on_fresh_points():
    from ibcheck.simulate.experiments.kkt import confident_norm, lower_confidence

    rng = np.random.default_rng(0)
    fresh_ok = plain_ok = 0
    for t in range(40):
        r = rng.exponential(size=2000)
        eta = confident_norm(r, 0.9)
        assert lower_confidence(int(np.sum(r <= eta)), 2000) >= 0.9  # on the points it was chosen on
        f = rng.exponential(size=2000)
        fresh_ok += np.mean(f <= eta) >= 0.9
        plain_ok += np.mean(f <= np.quantile(r, 0.9)) >= 0.9
    assert fresh_ok >= 30 and plain_ok <= 28  # the plain 0.9-quantile reaches 0.9 on fresh points about half the time
    assert lower_confidence(0, 100) == 0.0 and 0.95 < lower_confidence(100, 100) < 1.0


def test_transfer_controls_fail_and_a_network_that_is_no_kkt_point_never_enters_the_test():
    """The robust construction (k = 4) is not flipped by the KKT point's z; the linear SVM written as a +-ReLU pair is
    flipped as often as a KKT point (the test alone cannot tell them apart) but does not certify, so it is never one
    of the distinct points transfer is tested between."""
    from ibcheck.simulate.experiments.kkt import FIT_POINTS, FRESH_POINTS, _flip_norms, kkt_sample, transfer_controls, transfer_pairs
    from ibcheck.simulate.experiments.kkt_certify import _certify
    from ibcheck.simulate.substrate.seeds import stream
    from ibcheck.solvers.radius.universal import universal_directions
    from ibcheck.solvers.svm import hard_margin_svm

    s = kkt_sample({"d": 256, "k": 4, "n": 100}, 0, "clusters", 2)
    ds = s.dataset
    X, y = ds.sample(FIT_POINTS, stream("claim-measure", 0, 4))
    Xf, yf = ds.sample(FRESH_POINTS, stream("kkt-test-points", 0, 4))
    v = universal_directions("fvbs23", means=ds.means, J_plus=ds.J_plus)
    norms = _flip_norms(s, X, y, v, 0.9)
    controls = transfer_controls(s, Xf, yf, v, norms, 4)
    assert controls["robust_construction"]["lcb"] < 0.9 and controls["robust_construction"]["fraction"] < 0.5
    assert any(c["lcb"] < 0.9 for name, c in controls.items() if name.startswith("raw_gd"))
    sv = hard_margin_svm(ds.X, ds.y)
    lin = TwoLayerReLU(W=np.vstack([sv.w, -sv.w]), a=np.array([1.0, -1.0]), b=np.array([sv.b, -sv.b]))
    planted = KKTSample(ds, (s.networks[0], _certify(lin, ds.X, ds.y, 99, False)))
    assert not planted.networks[1].certified()
    assert len(planted.distinct) == 1 and transfer_pairs(planted, Xf, yf, v, norms) == []
