"""Referee round 5, F4: one guard for every command that writes a claim's report into --out.

The other-claim guard (``compare CLAIM2 --out DIR`` refused where DIR holds CLAIM1's report, unless --overwrite) was on
``compare`` alone: ``verdict --claim CLAIM2 --out DIR`` exited 0 and replaced CLAIM1's report (``verdict`` had no
--overwrite), ``verdict --predict ... --out DIR`` left CLAIM1's radius_0_*.png beside its own report, and a DIR whose
summary.json had been deleted had its report.md/html replaced by ``compare`` without a word. Now ``compare`` and
``verdict`` share one guard (:func:`ibcheck.commands.compare.guard_out`), each with --overwrite; a DIR holding a report
whose claim cannot be read (report files, no readable summary.json) is refused too.

The other commands that write into --out write no claim's report there: ``calibrate`` (calibration.md/json),
``reproduce`` (reproduce.*), ``scaling`` (scaling.md and its plots), ``report`` (index.* at the top, each claim's report in
compare/<its id>/, a folder only that claim writes), ``radius`` (radius.*); ``train``, ``construct`` and ``kkt`` refuse a
non-empty --out unless --overwrite already.
"""
import json
import math
import os
import random

import pytest

from tests.conftest import file_digests as _files
from tests.conftest import refused_in_one_line as _refused

TOY = """
import math, random, ibcheck
for i in (1, 2):
    ibcheck.Claim(id=f"TOY26.thm.{i}", variables=["d", "k"], hypotheses={"H1": r"k \\leq \\sqrt{d}"},
                  bounds=[ibcheck.Bound("radius", latex=r"\\Theta(\\sqrt{d/k})")])
    ibcheck.experiment(f"TOY26.thm.{i}", grid={"d": [64, 128, 256, 512], "k": [2, 4, 8]}, seeds=3)(
        lambda cell, seed: {"radius": math.sqrt(cell["d"] / cell["k"]) * math.exp(random.Random(f"{cell}{seed}").gauss(0, 0.05))})
"""
PREDICT = ["--predict", "d=1/2,k=-1/2", "--kind", "Theta"]


def _claim(out) -> str:
    with open(out / "summary.json") as f:
        return json.load(f)["claim"]


@pytest.fixture
def toy(cli, tmp_path, monkeypatch):
    """``ibcheck --claims toy.py ...`` and the measurements CSV of the toy claims."""
    monkeypatch.setattr("ibcheck.simulate.compare.driver.code_version", lambda: "round5")
    claims = tmp_path / "toy.py"
    claims.write_text(TOY)
    csv = tmp_path / "meas.csv"
    lines = ["d,k,value,seed"]
    for d in (64, 128, 256, 512):
        for k in (2, 4, 8):
            for s in range(3):
                lines.append(f"{d},{k},{math.sqrt(d / k) * math.exp(random.Random(f'{d}{k}{s}').gauss(0, 0.05))},{s}")
    csv.write_text("\n".join(lines) + "\n")

    def run(*args):
        return cli("--claims", claims, *args)
    run.csv = csv
    return run


@pytest.fixture
def first(toy, tmp_path):
    """A folder holding TOY26.thm.1's comparison report."""
    out = tmp_path / "first"
    assert toy("compare", "TOY26.thm.1", "--workers", "1", "--out", out).returncode == 0
    assert _claim(out) == "TOY26.thm.1" and (out / "radius_0_loglog.png").is_file()
    return out


def test_verdict_for_another_claim_is_refused_and_overwrite_replaces_the_report(toy, first):
    before = _files(first)
    res = toy("verdict", "--data", toy.csv, "--claim", "TOY26.thm.2", "--out", first)
    # before: exit 0, DIR's report became TOY26.thm.2's
    _refused(res, f"--out {first}", "the report of TOY26.thm.1", "--overwrite")
    assert _files(first) == before
    _refused(toy("verdict", "--data", toy.csv, "--claim", "TOY26.thm.2", "--out", first, "--json"), "TOY26.thm.1")
    assert _files(first) == before
    s = json.loads(toy("verdict", "--data", toy.csv, "--claim", "TOY26.thm.2", "--out", first, "--overwrite", "--json").stdout)
    assert s["claim"] == _claim(first) == "TOY26.thm.2"
    assert (first / "sweep.sqlite").is_file()  # the store stays; only the report was replaced
    left = set(os.listdir(first))
    assert left == {os.path.basename(p) for p in s["files"].values()} | {"sweep.sqlite"}  # one report, no stale file of the old
    # the folder is now TOY26.thm.2's: the same verdict again is a rerun, TOY26.thm.1's compare is refused in turn
    assert toy("verdict", "--data", toy.csv, "--claim", "TOY26.thm.2", "--out", first).returncode == 0
    _refused(toy("compare", "TOY26.thm.1", "--workers", "1", "--out", first), "the report of TOY26.thm.2")


def test_verdict_with_a_prediction_is_refused_and_overwrite_leaves_no_stale_plot(toy, first):
    before = _files(first)
    _refused(toy("verdict", "--data", toy.csv, *PREDICT, "--out", first), "the report of TOY26.thm.1", "--overwrite")
    assert _files(first) == before
    s = json.loads(toy("verdict", "--data", toy.csv, *PREDICT, "--out", first, "--overwrite", "--json").stdout)
    assert s["claim"] == _claim(first) == "user.prediction"
    left = set(os.listdir(first))
    # before: radius_0_*.png (the old claim's) stayed beside value_0_*.png
    assert not any(n.startswith("radius_0_") for n in left), left
    assert any(n.startswith("value_0_") for n in left) and "sweep.sqlite" in left
    # a prediction again into its own folder is a rerun
    assert toy("verdict", "--data", toy.csv, *PREDICT, "--out", first).returncode == 0


@pytest.mark.parametrize("command", ["compare", "verdict"])
def test_a_report_whose_claim_cannot_be_read_is_refused_unless_overwrite(toy, first, command):
    os.remove(first / "summary.json")
    before = _files(first)
    args = ["compare", "TOY26.thm.2", "--workers", "1"] if command == "compare" else ["verdict", "--data", toy.csv, "--claim", "TOY26.thm.2"]
    # before (compare): exit 0, report.md/html replaced
    _refused(toy(*args, "--out", first), "holds a report whose claim cannot be read", "no summary.json", "--overwrite")
    assert _files(first) == before
    # not even the same claim: with no summary.json, whose report it is cannot be told
    same = ["compare", "TOY26.thm.1", "--workers", "1"] if command == "compare" else ["verdict", "--data", toy.csv, "--claim", "TOY26.thm.1"]
    _refused(toy(*same, "--out", first), "cannot be read")
    assert toy(*args, "--out", first, "--overwrite").returncode == 0
    assert _claim(first) == "TOY26.thm.2"


def test_a_summary_json_of_no_claim_is_refused_by_verdict_too(toy, tmp_path):
    out = tmp_path / "dir"
    out.mkdir()
    (out / "summary.json").write_text("{not json")
    _refused(toy("verdict", "--data", toy.csv, "--claim", "TOY26.thm.1", "--out", out), "a summary.json that is no claim's report")
    assert os.listdir(out) == ["summary.json"]


def test_compare_refuses_a_folder_holding_another_claims_verdict_report(toy, tmp_path):
    out = tmp_path / "v"
    assert toy("verdict", "--data", toy.csv, "--claim", "TOY26.thm.1", "--out", out).returncode == 0
    before = _files(out)
    _refused(toy("compare", "TOY26.thm.2", "--workers", "1", "--out", out), "the report of TOY26.thm.1", "--overwrite")
    assert _files(out) == before


def test_a_folder_with_no_report_takes_any_claims_report(toy, tmp_path):
    """A store alone (an interrupted comparison) or files no report wrote are no report to protect."""
    out = tmp_path / "plain"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert toy("verdict", "--data", toy.csv, "--claim", "TOY26.thm.1", "--out", out).returncode == 0
    assert (out / "notes.txt").read_text() == "mine"
    for name in os.listdir(out):
        if name != "notes.txt":
            os.remove(out / name)
    assert toy("compare", "TOY26.thm.2", "--workers", "1", "--out", out).returncode == 0
    for name in os.listdir(out):
        if not name.startswith("sweep.sqlite"):
            os.remove(out / name)
    assert toy("compare", "TOY26.thm.1", "--workers", "1", "--out", out).returncode == 0  # the store alone: no report


def test_verdict_has_overwrite_in_its_help(cli):
    assert "--overwrite" in cli("verdict", "--help").stdout
