"""FVBS23.thm.3_1: test error <= eps with probability >= 1 - delta, a binomial test over samples (simulate.verdict.
probability), measured on FVBS23.thm.4_2's samples and counted in the index by the same rule as every row."""
from __future__ import annotations

from dataclasses import replace

import pytest

from ibcheck.simulate.verdict.probability import probability_test, samples_needed


def _obs(errors: list[int], points: int = 2000):
    return [({"d": 256.0}, i, k, points) for i, k in enumerate(errors)]


def test_no_sample_erring_is_not_refuted_and_decides_only_with_enough_samples():
    few = probability_test(_obs([0] * 18), "test_error", 0.1, 0.1)
    assert few.verdict == "inconclusive" and "not refuted" in few.reason and few.exceed == 0
    assert few.rate_upper == pytest.approx(1 - 0.025 ** (1 / 18))
    need = samples_needed(0.1, 0.025)
    assert need == 36 and str(need) in few.reason
    assert probability_test(_obs([0] * need), "test_error", 0.1, 0.1).verdict == "consistent"
    assert probability_test(_obs([0] * (need - 1)), "test_error", 0.1, 0.1).verdict == "inconclusive"


def test_too_many_samples_above_eps_refute_the_claim_and_a_few_do_not():
    # 600/2000 = 0.3 > eps = 0.1 in m of 18 samples: P[Binom(18, 0.1) >= 5] = 0.028 > 0.025, >= 6: 0.0064
    five = probability_test(_obs([600] * 5 + [0] * 13), "test_error", 0.1, 0.1)
    assert five.exceed == 5 and five.verdict == "inconclusive" and five.p_value == pytest.approx(0.0282, abs=1e-3)
    six = probability_test(_obs([600] * 6 + [0] * 12), "test_error", 0.1, 0.1)
    assert six.verdict == "inconsistent" and six.p_value < 0.025


def test_each_sample_is_classified_at_the_bonferroni_level():
    """230/2000 = 0.115: its plain 95% lower bound (0.104) is above eps = 0.1, but not at alpha / (2S); a rate of exactly
    eps is unresolved, never "within"."""
    from scipy import stats

    assert stats.beta.ppf(0.05, 230, 2000 - 230 + 1) > 0.1
    t = probability_test(_obs([230, 200, 0] + [0] * 15), "test_error", 0.1, 0.1)
    assert [s.status for s in t.samples[:3]] == ["unresolved", "unresolved", "within"]
    assert t.exceed == 0 and t.unresolved == 2


@pytest.fixture(scope="module")
def base():
    """FVBS23.thm.4_2's quick KKT samples at d = 256, 512, 1024 (k = 2, one seed): the base both comparisons below read
    (about 10 s; read only, never changed)."""
    from ibcheck.simulate.compare.driver import compare_claim

    return compare_claim("FVBS23.thm.4_2", grid={"d": [256, 512, 1024], "k": [2]}, seeds=1, quick=True, progress=False)


def test_fvbs23_3_1_is_measured_on_the_kkt_samples_inside_its_hypotheses_and_counted_by_the_rule(base):
    from ibcheck.simulate.compare.probability import probability_comparison
    from ibcheck.simulate.compare.suite import judged_rows as _judged_rows

    pc = probability_comparison("FVBS23.thm.3_1", base)
    assert pc.applicability.claim == "FVBS23.thm.3_1" and pc.applicability.inside == 3
    assert len(pc.test.samples) == 3 and all(s.points == 2000 for s in pc.test.samples)
    worst = {(r.cell["d"], r.seed): max(r.value["kkt_test_errors"]) for r in base.rows}
    assert all(s.errors == worst[(s.cell["d"], s.seed)] for s in pc.test.samples)  # the worst distinct point per sample
    assert pc.test.eps == pytest.approx(0.1) and pc.test.delta == pytest.approx(0.1)
    assert pc.verdict == "inconclusive"  # 3 samples cannot bound a rate below delta = 0.1
    rows, _, _ = _judged_rows([(base.claim.id, b, base.record) for b in base.record.bounds], [(pc, base.record)])
    row = rows[-1]
    assert row.claim == "FVBS23.thm.3_1" and row.verdict == "inconclusive" and not row.counted
    js = pc.as_json()
    assert js["test"]["samples"] == 3 and js["cells_inside"] == 3 and js["measured_on"] == "FVBS23.thm.4_2"


def test_too_few_samples_are_extended_at_the_cheapest_slice_and_a_base_sample_is_counted_once(base, tmp_path):
    """Where the base's samples cannot decide (3 of the 36 needed at delta = 0.1), :func:`extension` names the slice of
    inside cells with the smallest declared cost per sample and the seeds that make up the difference; the extra
    comparison's samples enter the test once each (a (cell, seed) of the base is the same sample)."""
    from ibcheck.simulate.compare.probability import extension, extra_rows, probability_comparison

    ext = extension("FVBS23.thm.3_1", base)
    assert ext is not None and (ext.have, ext.needed) == (3, 36)
    assert ext.grid == {"d": [256], "k": [2]}  # one cell, cheaper per sample than the slice k = 2 (d = 256-1024)
    assert (ext.first_new, ext.seeds, ext.new_samples) == (1, 34, 33) and ext.have + ext.new_samples >= ext.needed
    same = probability_comparison("FVBS23.thm.3_1", base, tuple(base.rows), ext)  # every extra sample is already the base's
    assert len(same.test.samples) == 3
    short = replace(ext, seeds=2, new_samples=1)  # one new seed, not the 34 (the test's cost); the rows come from a real sweep
    rows = extra_rows(base, short, str(tmp_path / "extension.sqlite"))
    assert [(r.cell["d"], r.seed, r.status) for r in rows] == [(256, 1, "ok")]
    assert extra_rows(base, short, str(tmp_path / "extension.sqlite")) == rows  # resumed: the stored row, not a rerun
    pc = probability_comparison("FVBS23.thm.3_1", base, rows + tuple(base.rows), short)
    assert sorted((s.cell["d"], s.seed) for s in pc.test.samples) == [(256, 0), (256, 1), (512, 0), (1024, 0)]
    assert "3 samples of the base sweep and 1 added at its cheapest slice (d = 256, k = 2; seeds 1-1)" in pc.as_json()["extension"]["text"]
    assert "this mix of cells" in pc.markdown() and pc.extra_kkt and pc.extra_kkt[0].networks_certified > 0
    assert "not each cell's own" in pc.as_json()["reason"] and pc.as_json()["reason"].startswith(pc.test.reason)
    assert probability_comparison("FVBS23.thm.3_1", base).extension is None


@pytest.mark.slow  # 13 s (FVBS23's KKT samples); the API path runs by default, and the CLI's flags are checked in test_edges_round4
def test_the_cli_compares_fvbs23_3_1_and_writes_inside_out(cli, tmp_path):
    import json

    out = tmp_path / "p"
    r = cli("compare", "FVBS23.thm.3_1", "--grid", "d=256,512,1024", "k=2", "--seeds", "1", "--no-extend", "--quick", "--out", out, "--json", check_rc=0)
    s = json.loads(r.stdout)
    assert s["claim"] == "FVBS23.thm.3_1" and s["verdict"] == "inconclusive" and s["test"]["samples"] == 3
    assert (out / "summary.json").exists() and (out / "base" / "report.md").exists() and "(base/report.md)" in (out / "report.md").read_text()
    bad = cli("compare", "FVBS23.thm.3_1", "--grid", "d=256,512", "k=2", "--out", tmp_path / "q", check_rc=2)
    assert len(bad.stderr.strip().splitlines()) == 1 and "at least 3" in bad.stderr and not (tmp_path / "q").exists()
