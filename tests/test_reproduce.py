"""Each quick reproduction runs and shows its key qualitative outcome (no number copied from a source)."""
import json

import pytest


def _rows(cli, name, tmp_path):
    res = cli("reproduce", name, "--quick", "--out", str(tmp_path / name), "--json", check_rc=0)
    s = json.loads(res.stdout)
    assert s["name"] == name and s["rows"]
    for r in s["rows"]:
        assert {"quantity", "source_value", "measured", "verdict"} <= set(r)
        assert r["verdict"] in ("consistent", "inconsistent", "inconclusive")
    assert (tmp_path / name / "reproduce.html").is_file()
    return {r["quantity"]: r for r in s["rows"]}


@pytest.mark.slow
def test_fa_synthetic_k_class_model_is_more_robust(cli, tmp_path):
    rows = _rows(cli, "fa-synthetic", tmp_path)
    assert rows["k-class / 2-class median radius"]["measured"] >= 1.5
    assert rows["k-class cosine, diagonal (mean)"]["measured"] > rows["2-class cosine, same-class block (mean)"]["measured"]


@pytest.mark.slow
def test_fa_digits_ten_class_model_has_the_larger_median_radius(cli, tmp_path):
    rows = _rows(cli, "fa-digits", tmp_path)
    assert rows["median radius, 10-class-trained read-out"]["measured"] > rows["median radius, binary-trained"]["measured"]


@pytest.mark.slow
def test_ll20_margin_reaches_tiny_losses_with_a_monotone_smoothed_margin(cli, tmp_path):
    rows = _rows(cli, "ll20-margin", tmp_path)
    assert rows["lowest log10 loss reached (loss-based)"]["measured"] <= -700
    assert rows["smoothed margin monotone after t0 (constant lr)"]["measured"] is True


@pytest.mark.slow
def test_shngs18_and_ssttm18(cli, tmp_path):
    rows = _rows(cli, "shngs18", tmp_path)
    direction = [r for q, r in rows.items() if q.startswith("direction error")]
    assert len(direction) == 2 and all(r["verdict"] != "inconsistent" for r in direction)
    rows = _rows(cli, "ssttm18", tmp_path)
    lin = rows["Bernoulli, one sample: l_inf-robust error of the linear learner"]["measured"]
    thr = rows["Bernoulli, one sample: robust error after thresholding (sign)"]["measured"]
    assert thr < lin


@pytest.mark.slow
def test_bcgt21_and_mv24(cli, tmp_path):
    rows = _rows(cli, "bcgt21", tmp_path)
    assert rows["relu: fraction of flips within |eta| <= 20"]["measured"] > 0.9
    assert rows["gelu: fraction of flips within |eta| <= 20"]["measured"] > 0.9
    rows = _rows(cli, "mv24", tmp_path)
    assert rows["distance of f/||f|| to F/||F|| on test inputs"]["measured"] < 0.2


@pytest.mark.slow
def test_fvbs23_states_the_window_honestly_and_vys22_judges_the_readings(cli, tmp_path):
    rows = _rows(cli, "fvbs23", tmp_path)
    window = next(r for q, r in rows.items() if q.startswith("Theorem 4.2 applies"))
    assert window["measured"] in ("yes", "no") and "window of d" in window["note"]
    assert any(q.startswith("KKT points") and "test error" in q for q in rows)
    rows = _rows(cli, "vys22", tmp_path)
    reading = next(r for q, r in rows.items() if q.startswith("reading supported"))
    assert reading["measured"] in ("eta_bound", "norm_bound", "undecided")


def test_unknown_reproduction_is_a_one_line_error(cli, tmp_path):
    res = cli("reproduce", "nosuch", "--quick", "--out", str(tmp_path / "x"))
    assert res.returncode == 2 and "available are" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    res = cli("reproduce", "shngs18", "--idx-dir", str(tmp_path), "--out", str(tmp_path / "y"))
    assert res.returncode == 2 and "fa-digits only" in res.stderr


@pytest.mark.slow
def test_fa_digits_reads_mnist_format_idx_files(cli, tmp_path):
    import numpy as np
    from sklearn.datasets import load_digits

    from ibcheck.simulate.substrate.data import write_idx

    data = load_digits()
    idx = tmp_path / "idx"
    idx.mkdir()
    write_idx(str(idx / "train-images-idx3-ubyte"), (data.images * 15).astype(np.uint8))
    write_idx(str(idx / "train-labels-idx1-ubyte"), data.target.astype(np.uint8))
    res = cli("reproduce", "fa-digits", "--quick", "--idx-dir", str(idx), "--out", str(tmp_path / "r"), "--json", check_rc=0)
    import json

    s = json.loads(res.stdout)
    assert "MNIST IDX" in s["title"] and s["params"]["data"] == "idx"
    rows = {r["quantity"]: r for r in s["rows"]}
    assert rows["binary model test accuracy"]["measured"] > 0.8


def test_criteria_verdicts_come_from_their_rules():
    from ibcheck.simulate.reproductions.criteria import AtLeast, AtMost, Criterion, Holds, Judged, Reported, Within

    cases = [(Within(14, 18), 15.0, "consistent"), (Within(14, 18), 18.5, "inconsistent"), (AtMost(0.2), 0.2, "consistent"),
             (AtLeast(1.5, strict=True), 1.5, "inconsistent"), (AtLeast(0.9), float("nan"), "inconclusive"),
             (AtMost(0.2), None, "inconclusive"), (Holds(), True, "consistent"), (Holds(), False, "inconsistent"),
             (Judged("inconsistent"), 0.7, "inconsistent"), (Reported(), 3.0, "inconclusive")]
    for rule, measured, verdict in cases:
        c = Criterion("q", "source", measured, rule)
        assert c.verdict == verdict, (rule, measured)
        assert c.as_json()["rule"] == rule.text() and c.as_json()["verdict"] == verdict


@pytest.mark.slow  # 15 s (SHNGS18's sweep); make report's reproductions reuse the suite's comparisons the same way
def test_a_reproduction_reuses_the_reports_own_comparison_instead_of_sweeping_again():
    from ibcheck.simulate.compare.driver import compare_claim
    from ibcheck.simulate.reproductions import run_reproduction

    c = compare_claim("SHNGS18.thm.direction", quick=True, progress=False)
    rep = run_reproduction("shngs18", True, known={"SHNGS18.thm.direction": c, "VYS22.thm.main": None})
    assert rep.comparisons["compare"] is c  # not a second sweep
    assert any("the report's own comparison" in n for n in rep.notes)
    first = c.record.bounds[0].as_json()["fits"]
    assert rep.rows[0]["measured"] == [f["estimate"] for f in first]  # the comparison's own numbers


def test_a_comparison_over_its_share_is_charged_its_share_only():
    from ibcheck.simulate.compare.suite import charged

    assert charged(3890.0, 54.5) == 54.5  # FVBS23.thm.4_2's full grid against a 600 s budget of 11 comparisons
    assert charged(12.0, 54.5) == 12.0
    assert charged(12.0, None) == 12.0
