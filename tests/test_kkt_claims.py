"""Claims about KKT points are measured on the KKT engine's distinct points only (issue 20, section 2; issue 35)."""
import math
from types import SimpleNamespace

import numpy as np
import pytest

from ibcheck.simulate.experiments.base import Row
from ibcheck.simulate.experiments.kkt import KKTSample, UncertifiedSample, kkt_row
from ibcheck.simulate.experiments.registry import EXPERIMENTS
from ibcheck.simulate.verdict.kkt import at_thresholds, kkt_cells, transfer_cells
from ibcheck.solvers.kkt.certificate import kkt_certificate
from ibcheck.solvers.kkt.engine import Budget, Candidate, KKTSearch
from ibcheck.solvers.networks import TwoLayerReLU

_RNG = np.random.default_rng(7)
_POINT = TwoLayerReLU(W=_RNG.standard_normal((4, 3)), a=_RNG.standard_normal(4), b=np.zeros(4))
_DATA = SimpleNamespace(X=_RNG.standard_normal((20, 3)))


def _cand(eps, point=None, status="optimal"):
    return Candidate("gd:test", _POINT, eps, 1e-12, status, 2, "", 0.5, 0, point)


def _sample(cands, points):
    search = KKTSearch(tuple(cands), tuple(points), tuple(0.5 for _ in points), True, Budget(), 1.0, len(cands))
    s = KKTSample(_DATA, search)
    s.__dict__["dual_lbs"] = [1.0] * len(points)  # the cached dual bounds (no program on synthetic points)
    return s


def test_kkt_row_takes_the_largest_over_distinct_points_and_records_every_candidate():
    s = _sample([_cand(1e-7, 0), _cand(0.5), _cand(2e-7, 1)], [_POINT, _POINT])
    row = kkt_row(s, [2.0, 3.0], "universal_flip_norm")
    assert row["universal_flip_norm"] == 3.0
    assert row["kkt_trained"] == 3 and row["kkt_certified"] == 2 and row["kkt_eps"] == 2e-7
    assert [n.get("universal_flip_norm") for n in row["kkt_networks"]] == [2.0, None, 3.0]
    assert row["kkt_distinct"] == 2 and row["kkt_flip_norms"] == [2.0, 3.0] and row["kkt_flip_spread"] == 1.5
    assert row["kkt_eps_threshold"] == 1e-6 and row["kkt_complete"] is True
    with pytest.raises(UncertifiedSample):
        kkt_row(_sample([_cand(0.5)], []), [], "universal_flip_norm")
    assert not _cand(2e-6).certified and _cand(1e-6).certified  # the policy: 1e-6, not the old 1e-3


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
    got = k[0].as_json()
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


def test_a_transfer_is_refuted_only_by_a_pair_significantly_below_one_minus_eps_and_the_controls_must_be():
    """On fresh points the flip norm's own z has a lower bound under 1 - eps by construction (the norm is chosen where
    the fitting points' lower bound reaches it), so the transfer is refuted only where a pair's fraction is significantly
    below 1 - eps: its one-sided 95% upper bound (Bonferroni over the cell's pairs) under the target. The negative
    controls must be refuted that way, and the test must be able to refute (a pair at 0.85 of 2000 is)."""
    base = {"transfer_mean": 0.93, "transfer_pairs": 23, "transfer_target": 0.9, "fresh_points": 2000, "flip_fresh_lcb": 0.884,
            "transfer_controls": {"robust_construction": {"fraction": 0.0, "lcb": 0.0}, "raw_gd_0": {"fraction": 0.81, "lcb": 0.796}}}
    ok = transfer_cells([_row({"d": 512}, 0, {**base, "transfer_min": 0.9055, "transfer_lcb": 0.894})], ["d"])[0]
    assert ok.transferable and ok.fraction_ucb > 0.9 and ok.fraction_lcb < 0.9  # the old test (lower bound >= 0.9) said no
    assert all(c["failed"] and c["ucb"] < 0.9 for c in ok.controls.values())
    bad = transfer_cells([_row({"d": 512}, 0, {**base, "transfer_min": 0.85, "transfer_lcb": 0.836})], ["d"])[0]
    assert bad.transferable is False and bad.fraction_ucb < 0.9
    # a row of the former kind: raw GD among its controls is read as what it is, a near-KKT network beside the test
    assert set(ok.controls) == {"robust_construction"} and ok.near_kkt["raw_gd"]["failed"] is True
    near = {**base["transfer_controls"], "raw_gd_0": {"fraction": 0.895, "lcb": 0.88}}  # not significantly below: it passes
    weak = transfer_cells([_row({"d": 512}, 0, {**base, "transfer_min": 0.9055, "transfer_lcb": 0.894, "transfer_controls": near})], ["d"])[0]
    assert weak.near_kkt["raw_gd"]["failed"] is False and weak.transferable and weak.withheld is None  # not a control
    from ibcheck.simulate.report.index import _fresh_text

    assert "failed as it must (significantly below 1 - eps) at 1 of 1 cells" in _fresh_text([ok])
    assert "pass the same test at 1 of 1 cells" in _fresh_text([weak])


def _shortened(fractions):
    return [{"r": r, "fraction": f, "lcb": f - 0.02} for r, f in zip((0.5, 0.8, 0.9, 0.95, 0.98), fractions)]


def test_a_transfer_reading_is_withheld_where_a_negative_control_passes_and_the_shortened_z_gives_its_resolution():
    """The negative controls are the robust construction and the most robust point's own z at half its norm; where one is
    not significantly below 1 - eps the test has passed what it should reject, and the cell's transfer reading is
    withheld (not 'transferable'), naming the control. The resolution is the largest shortening r refuted, with every
    smaller one, at every sample: a sample whose z still flips 0.9 at r = 0.95 holds it at 0.9."""
    base = {"transfer_mean": 0.93, "transfer_pairs": 3, "transfer_target": 0.9, "fresh_points": 2000, "flip_fresh_lcb": 0.884,
            "transfer_min": 0.92, "transfer_lcb": 0.905, "transfer_controls": {"robust_construction": {"fraction": 0.0, "lcb": 0.0}},
            "transfer_near_kkt": {"raw_gd_0": {"fraction": 0.95, "lcb": 0.94}}}
    good = _shortened([0.0, 0.3, 0.7, 0.85, 0.89])
    one = transfer_cells([_row({"d": 512}, 0, {**base, "transfer_shortened": good})], ["d"])[0]
    assert one.transferable is True and one.withheld is None and one.resolution == 0.95  # 0.89 of 2000 is not below 0.9
    assert set(one.controls) == {"robust_construction", "shortened_z"} and one.controls["shortened_z"]["failed"]
    assert one.near_kkt["raw_gd"]["failed"] is False  # reported, and it does not withhold the reading
    coarse = _shortened([0.0, 0.3, 0.895, 0.91, 0.93])  # a second sample whose own z at 0.9 eta is not refuted
    two = transfer_cells([_row({"d": 512}, 0, {**base, "transfer_shortened": good}),
                          _row({"d": 512}, 1, {**base, "transfer_shortened": coarse})], ["d"])[0]
    assert two.resolution == 0.8 and two.transferable is True
    blunt = transfer_cells([_row({"d": 512}, 0, {**base, "transfer_shortened": _shortened([0.95] * 5)})], ["d"])[0]
    assert blunt.resolution is None and blunt.transferable is None and "shortened z" in blunt.withheld
    robust_passes = {**base, "transfer_shortened": good, "transfer_controls": {"robust_construction": {"fraction": 0.97, "lcb": 0.96}}}
    held = transfer_cells([_row({"d": 512}, 0, robust_passes)], ["d"])[0]
    assert held.transferable is None and "robust construction" in held.withheld
    refuted = transfer_cells([_row({"d": 512}, 0, {**robust_passes, "transfer_min": 0.8, "transfer_lcb": 0.78})], ["d"])[0]
    assert refuted.transferable is False  # a refutation stands: the control passing withholds only a 'transferable'
    from ibcheck.simulate.report.index import _fresh_text

    text = _fresh_text([one, two])
    assert "for every r up to 0.8 at every cell (a point that needs a z 1.25 times as long" in text
    assert "not a control" in text and "withheld" not in text and "finest" not in text
    fine = transfer_cells([_row({"d": 512}, 0, {**base, "transfer_shortened": _shortened([0.0] * 5)})], ["d"])[0]
    assert fine.resolution == 0.98 and "up to 0.98 (the finest r tried)" in _fresh_text([fine])  # a bound, said so


def test_fvbs23_row_is_measured_on_the_engines_distinct_points_only():
    exp = EXPERIMENTS["FVBS23.thm.4_2"]
    cell = {**exp.fixed_at(True), "d": 256, "k": 2}
    cell = {**cell, **exp.settings_at(cell)}
    assert cell["n"] == math.ceil(2 * math.log(256) ** 2)  # the smallest n inside H1
    row = exp.measure(cell, 0)
    origins = [n["origin"] for n in row["kkt_networks"]]
    assert origins[0].startswith("start:gd") and any(o.startswith("gd:per-cluster") for o in origins)
    assert row["kkt_trained"] == len(origins) and 1 <= row["kkt_certified"] <= len(origins)
    assert all((n["point"] is None) == (n.get("universal_flip_norm") is None) for n in row["kkt_networks"])
    certified = [n for n in row["kkt_networks"] if n["point"] is not None]
    assert len(certified) == row["kkt_certified"] and all(n["eps"] <= 1e-6 and n["delta"] <= 1e-6 for n in certified)
    assert all(not (n["eps"] <= 1e-6 and n["delta"] <= 1e-6 and n["solver_status"] == "optimal") for n in row["kkt_networks"]
               if n["point"] is None)
    assert row["universal_flip_norm"] == max(n["universal_flip_norm"] for n in certified)
    assert row["kkt_distinct"] >= 1 and len(row["kkt_flip_norms"]) == row["kkt_distinct"] == len(row["kkt_values"])
    assert row["transfer_target"] == pytest.approx(0.9) and row["kkt_complete"]
    if row["kkt_distinct"] == 1:  # one point: no pair, transfer not tested
        assert row["transfer_pairs"] == 0 and row["transfer_min"] is None
    else:
        assert row["transfer_pairs"] == row["kkt_distinct"] - 1 and 0.0 <= row["transfer_min"] <= 1.0


@pytest.mark.slow
def test_every_distinct_point_certifies_again_from_scratch():
    from ibcheck.simulate.experiments.kkt import kkt_sample

    exp = EXPERIMENTS["FVBS23.thm.4_2"]
    cell = {**exp.fixed_at(True), "d": 256, "k": 2}
    s = kkt_sample({**cell, **exp.settings_at(cell)}, 1, "clusters", 1)
    assert s.points
    for net in s.points:
        cert = kkt_certificate(net, s.dataset.X, s.dataset.y)  # the certificate again, from scratch
        assert cert.stationarity_residual <= 1e-6 and cert.complementary_slackness_rel <= 1e-6
        assert np.isclose(cert.min_margin, 1.0, rtol=1e-6)  # stored at unit margin


def test_every_kkt_point_does_not_count_a_partial_search():
    """The rule's first condition (the rest: tests/test_kkt_depth.py): an engine that did not run in full at a cell."""
    from ibcheck.simulate.verdict.kkt import KKTCell, every_point_searched
    from ibcheck.simulate.verdict.rules import RowEvidence, counted

    partial = KKTCell({"d": 4}, 2, 0, 4, 4, 0, 1e-7, None, 1e-6, 1e-6, distinct=(2,), complete=False)
    why = every_point_searched((partial,))
    assert why and "did not run in full" in why
    ok, how = counted(RowEvidence("consistent", 2, 2, kkt_certified=True, kkt_search=why))
    assert not ok and "every-KKT-point not tested" in how
    ok, how = counted(RowEvidence("consistent", 2, 2, kkt_certified=True, kkt_search=None,
                                  kkt_depth="depth-stable at its classes (k = 8: 29/30 within 2.0%)"))
    assert ok and how.endswith("; depth-stable at its classes (k = 8: 29/30 within 2.0%)")


def test_the_flip_norm_is_chosen_with_confidence_and_checked_on_fresh_points():
    from ibcheck.solvers.kkt.flip import flip_norm, lower_confidence

    rng = np.random.default_rng(0)
    fresh_ok = plain_ok = 0
    for t in range(40):
        r = rng.exponential(size=2000)
        eta, censored = flip_norm(r, 0.9)
        assert not censored
        assert lower_confidence(int(np.sum(r <= eta)), 2000) >= 0.9  # on the points it was chosen on
        f = rng.exponential(size=2000)
        fresh_ok += np.mean(f <= eta) >= 0.9
        plain_ok += np.mean(f <= np.quantile(r, 0.9)) >= 0.9
    assert fresh_ok >= 30 and plain_ok <= 28  # the plain 0.9-quantile reaches 0.9 on fresh points about half the time
    assert lower_confidence(0, 100) == 0.0 and 0.95 < lower_confidence(100, 100) < 1.0


def test_transfer_controls_fail_and_a_network_that_is_no_kkt_point_never_enters_the_test():
    """The robust construction (k = 4) is not flipped by the most robust point's z, nor that point by its own z at half
    its norm; the linear SVM written as a +-ReLU pair
    does not certify, so it is never a point."""
    from ibcheck.simulate.experiments.kkt import FIT_POINTS, FRESH_POINTS, kkt_sample, point_norms, transfer_controls
    from ibcheck.simulate.substrate.seeds import stream
    from ibcheck.solvers.kkt.policy import is_point
    from ibcheck.solvers.radius.universal import universal_directions
    from ibcheck.solvers.svm import hard_margin_svm

    s = kkt_sample({"d": 128, "k": 4, "n": 60, "kkt_gd": 2, "kkt_enumerate": 0}, 0, "clusters", 2)
    ds = s.dataset
    X, y = ds.sample(FIT_POINTS, stream("claim-measure", 0, 4))
    Xf, yf = ds.sample(FRESH_POINTS, stream("kkt-test-points", 0, 4))
    v = universal_directions("fvbs23", means=ds.means, J_plus=ds.J_plus)
    norms = point_norms(s.points, X, y, v, 0.9)
    got = transfer_controls(s, Xf, yf, v, norms, 4)
    robust = got["transfer_controls"]["robust_construction"]
    assert robust["lcb"] < 0.9 and robust["fraction"] < 0.5
    short = {c["r"]: c["fraction"] for c in got["transfer_shortened"]}
    assert short[0.5] < 0.5 and short[0.5] <= short[0.98]  # the point's own z at half its norm flips far fewer
    assert set(got["transfer_near_kkt"]) == {f"raw_gd_{i}" for i in range(len(s.raw))}  # reported apart, not a control
    sv = hard_margin_svm(ds.X, ds.y)
    lin = TwoLayerReLU(W=np.vstack([sv.w, -sv.w]), a=np.array([1.0, -1.0]), b=np.array([sv.b, -sv.b]))
    assert not is_point(kkt_certificate(lin, ds.X, ds.y))


def test_the_kkt_table_shows_depth_stability_points_families_and_each_samples_last_record(tmp_path):
    """Per cell, the class's depth stability in words (or why it is unmeasured); per sample, its points and families,
    the unseen estimate and the stop, and the running extremum with the start of its last record. The figure plots every
    start in search order, divided by the claim's function, with each record's source and the reference's value."""
    from ibcheck.simulate.report.comparison import _kkt_section, _running_max_figure

    base = {"networks_certified": 8, "networks_trained": 16, "distinct": [17, 1], "families": [4, 1], "ties": [5, 9],
            "max_eps": 1e-12, "complete": True, "flip_norms": [[9.5, 9.9], [9.4]], "spread": [1.04], "unseen": [0.05, 0.0],
            "stops": ["stopped", "cap"], "running_max": [[9.5] * 10 + [9.9] * 12, [9.4] * 5 + [9.6] * 15],
            "sources": [["start:gd"] + ["cone:per-class"] * 9 + ["cover"] * 12, ["cover"] * 5 + ["move:split"] * 15],
            "references": [10.0, None],
            "depth_note": "depth-stable at its class (29/30 within 2.0% of a reference at least 4.0x deeper ...)"}
    text = "\n".join(_kkt_section({"kkt": [{**base, "cell": {"d": 256, "k": 6}}]}))
    assert "0.05 (stopped), 0.00 (cap)" in text
    assert "17/4, 1/1" in text  # points / families
    assert "9.9 (11/22), 9.6 (6/20)" in text  # the running extremum and the start of its last record
    assert "depth-stable at its class (29/30 within 2.0%" in text
    assert "saturated" not in text
    name = _running_max_figure([{**base, "cell": {"d": 256, "k": 6}}], str(tmp_path), lambda cell: (cell["d"] / cell["k"]) ** 0.5)
    assert (tmp_path / name).stat().st_size > 1000


def test_a_claim_page_gives_its_grid_and_settings_as_text_not_python():
    """The claim page once printed ``Grid: {'run': [0]}`` and ``Tasks: {'ok': 25}``."""
    from ibcheck.simulate.report.comparison import _settings

    assert _settings({"d": [64, 128.0], "k": [2, 4]}) == "d = 64, 128; k = 2, 4"
    assert _settings({"ok": 25}) == "ok = 25" and _settings({}) == ""
    assert "{" not in _settings({"target_log10_loss": -800, "up": 1.0}) and "'" not in _settings({"a": ["x"]})


def test_the_wide_table_page_takes_the_window_width(tmp_path):
    """table.html's 15 columns were cut off at the pages' 1100 pixels; it now takes the window's width."""
    from ibcheck.simulate.report.figures import write_html

    wide = open(write_html("| a | b |\n|---|---|\n| 1 | 2 |\n", str(tmp_path), "t.html", "t", wide=True)).read()
    narrow = open(write_html("text\n", str(tmp_path), "n.html", "n")).read()
    assert "max-width:98vw" in wide and "max-width:1100px" in narrow


def test_the_index_headline_counts_what_it_says():
    """A new user read "Decided: 12 of 18 rows (11 consistent ...)" beside 14 consistent badges: the headline now says
    the counted rows, and how many more are decided but not counted."""
    from types import SimpleNamespace as NS

    from ibcheck.simulate.report.index import _summary_line

    rows = [NS(verdict="consistent", counted=True)] * 13 + [NS(verdict="consistent", counted=False)] * 3 \
        + [NS(verdict="inconclusive", counted=False)] * 2
    line = _summary_line(NS(rows=rows, decided=frozenset(range(9)), claims=12))
    assert line.startswith("**13 of 18 rows decided and counted** (13 consistent, 0 inconsistent); 3 more decided but not counted")
    assert "2 inconclusive; 9 of 12 claims" in line
