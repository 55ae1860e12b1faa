"""`ibcheck verdict` (your CSV), `ibcheck calibrate`, and compare's summary contract and budgeted rounds."""
import json
import math
import os
import sqlite3

import numpy as np
import pytest


def _write_csv(path, b_d=0.5, b_k=-0.5, seeds=3, noise=0.05):
    rng = np.random.default_rng(0)
    lines = ["d,k,seed,value"]
    for d in (64, 128, 256, 512):
        for k in (2, 4, 8):
            for s in range(seeds):
                lines.append(f"{d},{k},{s},{2 * d ** b_d * k ** b_k * math.exp(noise * rng.standard_normal())}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_verdict_from_a_csv_against_a_registry_claim(cli, tmp_path):
    data = _write_csv(tmp_path / "m.csv")
    out = tmp_path / "o"
    s = json.loads(cli("verdict", "--data", str(data), "--claim", "LPLL25.thm.nonrobust", "--out", str(out), "--json", check_rc=0).stdout)
    assert s["verdict"] == "consistent" and s["power"]["has_power"]
    assert {f["variable"]: f["predicted"] for f in s["fits"]} == {"d": 0.5, "k": -0.5}
    assert s["applicability"]["cells_total"] == 12
    for key in ("applicability", "drift", "extrapolated", "power", "rounds"):
        assert key in s
    for name in ("report.md", "report.html", "summary.json"):
        assert (out / name).is_file()
    assert any(p.endswith("_local.png") for p in os.listdir(out))


def test_verdict_with_a_stated_prediction_catches_a_wrong_exponent(cli, tmp_path):
    data = _write_csv(tmp_path / "m.csv", b_d=0.8)
    s = json.loads(cli("verdict", "--data", str(data), "--predict", "d=1/2,k=-1/2", "--kind", "Theta", "--out", str(tmp_path / "o"),
                       "--json", check_rc=0).stdout)
    assert s["verdict"] == "inconsistent"
    fits = {f["variable"]: f for f in s["fits"]}
    assert fits["d"]["verdict"] == "inconsistent" and fits["k"]["verdict"] == "consistent"


@pytest.mark.parametrize("content, words", [
    ("", ["is empty"]),
    ("d,k,seed\n64,2,0\n", ["missing column 'value'"]),
    ("d,value\n64,1\n128,x\n256,2\n", ["row 3", "column 'value'", "is not a number"]),
    ("d,value\n64,1\n128,-2\n256,2\n", ["row 3", "column 'value'", "out of range"]),
    ("d,value\n64,0\n128,2\n256,2\n", ["row 2", "column 'value'", "out of range"]),
    ("d,value\n64,1\n64,2\n", ["every row is the same cell"]),
    ("d,value\n64,1\n128,2\n", ["column 'd' has 2 distinct values"]),
    ("q,value\n64,1\n128,2\n256,3\n", ["column 'q' is not a variable"]),
])
def test_bad_csv_is_one_line_and_writes_nothing(cli, tmp_path, content, words):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    out = tmp_path / "o"
    res = cli("verdict", "--data", str(path), "--claim", "LPLL25.thm.nonrobust", "--out", str(out))
    assert res.returncode == 2, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr
    for w in words:
        assert w in res.stderr
    assert not out.exists()


def test_predict_needs_its_columns_and_a_kind(cli, tmp_path):
    data = _write_csv(tmp_path / "m.csv")
    res = cli("verdict", "--data", str(data), "--predict", "d=1/2,n=-1/2", "--kind", "O", "--out", str(tmp_path / "o"))
    assert res.returncode == 2 and "missing column 'n'" in res.stderr
    res = cli("verdict", "--data", str(data), "--predict", "d=1/2", "--kind", "Big", "--out", str(tmp_path / "o"))
    assert res.returncode == 2 and "--kind Big is not one of O, Omega, Theta" in res.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.slow  # 11 s (28 scenarios); the engine's calibration runs by default in test_verdict_engine
def test_calibrate_cli_writes_the_table(cli, tmp_path):
    res = cli("calibrate", "--trials", "1", "--out", str(tmp_path / "cal"), check_rc=0)
    assert "| exact" in res.stdout and "wrong_d" in res.stdout
    data = json.loads((tmp_path / "cal" / "calibration.json").read_text())
    assert set(data["scenarios"]) == {"exact", "corrected", "polylog", "heavy_tails", "censored", "wrong_d", "wrong_k", "log_rate",
                                      "log_constant", "log_wrong_half", "noisy", "corrected_below", "log_claim", "loose", "window",
                                      "missing_log", "extra_log", "extra_loglog", "ray", "wrong_upper",
                                      # issue 36's classes
                                      "power_062", "missing_log_wide", "extra_log_wide", "correction_03", "capped_transient",
                                      "additive_rays", "late_rise", "transient_steps"}
    assert all("band_rule_rates" in sc for sc in data["scenarios"].values())
    assert cli("calibrate", "--trials", "0", "--out", str(tmp_path / "c2")).returncode == 2


@pytest.mark.slow  # 23 s; the summary contract is also checked on LPLL25 (test_compare_cli), the flow control in test_verdict_regime
def test_ll20_rates_over_hundreds_of_decades_are_not_inconsistent(cli, tmp_path):
    s = json.loads(cli("compare", "LL20.thm.rates", "--quick", "--out", str(tmp_path / "ll"), "--json", check_rc=0).stdout)
    loss = next(r for r in s["results"] if r["quantity"] == "train_loss")
    assert loss["verdict"] != "inconsistent", loss["reason"]
    span = [c["log_T"] for c in loss["cell_table"]]
    assert (max(span) - min(span)) / math.log(10) > 300  # T covers hundreds of decades
    # the summary contract
    assert {"cells_total", "cells_inside", "per_hypothesis"} <= set(s["applicability"])
    d = s["drift"]["train_loss"]["T"]
    assert {"local", "p_value", "direction"} <= set(d) and all("ci" in le for le in d["local"])
    assert {"estimate", "ci"} <= set(s["extrapolated"])
    assert {"has_power", "detectable_deviation"} <= set(s["power"])
    assert isinstance(s["rounds"], list) and s["rounds"]


@pytest.mark.slow
def test_budgeted_sweep_grows_and_a_rerun_continues(cli, tmp_path):
    """The same on a built-in claim's GD sweep (about 12 s): the default suite checks it on a user's experiment
    (tests/test_reproducible.py::test_a_rerun_with_a_larger_budget_continues_the_sweep)."""
    out = tmp_path / "b"
    first = json.loads(cli("compare", "BCGT21.thm.one_step", "--quick", "--budget", "4", "--plan-trials", "0", "--out", str(out), "--json", check_rc=0).stdout)
    assert first["budget"] == 4 and first["spending"] == "pocock"
    n_first = first["tasks"]["tasks"]
    con = sqlite3.connect(str(out / "sweep.sqlite"))
    rows = con.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    assert rows == n_first
    if len(first["rounds"]) > 1:
        assert n_first > 18 and first["rounds"][1]["added"] != "initial grid"
    again = json.loads(cli("compare", "BCGT21.thm.one_step", "--quick", "--budget", "8", "--plan-trials", "0", "--out", str(out), "--json", check_rc=0).stdout)
    assert again["tasks"]["skipped"] >= n_first  # every earlier (cell, seed) reused
    looks = con.execute("SELECT alpha, spent, fraction, budget FROM ledger ORDER BY look").fetchall()
    con.close()
    assert looks and looks[-1][1] <= 0.05 + 1e-12
    assert all(0 <= a <= 0.05 for a, *_ in looks)
    assert [f for _, _, f, _ in looks] == sorted(f for _, _, f, _ in looks)  # the ledger continues: fractions only grow
    assert again["rounds"][0]["look"]["alpha"] > 0 or again["rounds"][0]["look"]["repeated"]
    md = (out / "report.md").read_text()
    assert "## Rounds" in md and "alpha spending: pocock" in md
