"""Issue 50, item 6: a report never replaces another claim's report without --overwrite.

``ibcheck compare CLAIM2 --out DIR``, where DIR held the report ``compare CLAIM1 --out DIR`` wrote, replaced it without a
word. Now it is refused in one line naming DIR and CLAIM1, nothing in DIR touched; the same claim again resumes as before,
and --overwrite writes CLAIM2's report there, the old report's files gone.
"""
import json
import os

import pytest

from tests.conftest import file_digests as _files
from tests.conftest import refused_in_one_line as _refused

FIRST = ["SSTTM18.cor.robust_upper", "--quick"]  # 6 tasks, about a second
SECOND = ["SSTTM18.cor.robust_lower", "--grid", "d=1000,3000,10000,30000,100000", "eps=0.5", "--seeds", "2", "--plan-trials", "0"]  # 10 tasks


@pytest.fixture
def first(cli, tmp_path, monkeypatch):
    # one code version for every run of a test: another file of the tree edited meanwhile would key every row anew
    monkeypatch.setattr("ibcheck.simulate.compare.driver.code_version", lambda: "round5")
    out = tmp_path / "dir"
    s = json.loads(cli("compare", *FIRST, "--out", out, "--json", check_rc=0).stdout)
    assert s["claim"] == FIRST[0]
    return out, s


def test_another_claims_report_is_refused_naming_it_and_left_as_it_was(cli, first):
    out, _ = first
    before = _files(out)
    res = cli("compare", *SECOND, "--out", out)
    # before: exit 0, DIR's summary.json and report were SSTTM18.cor.robust_lower's
    _refused(res, f"--out {out}", f"the report of {FIRST[0]}", "--overwrite")
    assert _files(out) == before  # nothing written, nothing removed, the store untouched
    res = cli("compare", *SECOND, "--out", out, "--json")  # --json too: the same one line
    _refused(res, FIRST[0], "--overwrite")
    assert res.stdout == "" and _files(out) == before


def test_the_same_claim_again_resumes(cli, first):
    out, s = first
    again = json.loads(cli("compare", *FIRST, "--out", out, "--json", check_rc=0).stdout)
    assert again["tasks"]["ran"] == 0 and again["tasks"]["skipped"] == s["tasks"]["tasks"] and again["fits"] == s["fits"]


def test_overwrite_writes_the_other_claims_report_and_removes_the_old_ones_files(cli, first, tmp_path):
    out, s = first
    # the old report's own files as its summary.json lists them: one the new report does not write, one outside --out
    with open(out / "summary.json") as f:
        old = json.load(f)
    old["files"].update({"old_only": str(out / "old_only.png"), "outside": str(tmp_path / "outside.png")})
    (out / "summary.json").write_text(json.dumps(old))
    for p in (out / "old_only.png", tmp_path / "outside.png", out / "notes.txt", out / "outside.png.keep"):
        p.write_bytes(b"x")
    new = json.loads(cli("compare", *SECOND, "--out", out, "--overwrite", "--json", check_rc=0).stdout)
    assert new["claim"] == SECOND[0] and new["tasks"]["ran"] == 10
    with open(out / "summary.json") as f:
        assert json.load(f)["claim"] == SECOND[0]
    left = set(os.listdir(out))
    assert {os.path.basename(p) for p in new["files"].values()} <= left
    assert "old_only.png" not in left  # the old report's file, not rewritten: gone with it
    assert (tmp_path / "outside.png").is_file()  # never outside --out
    assert {"notes.txt", "outside.png.keep"} <= left  # files no report listed stay
    assert (out / "sweep.sqlite").is_file()  # the store stays (rows are keyed by claim); only the report was replaced
    # now DIR is the second claim's: the first is refused in turn, and the second resumes
    _refused(cli("compare", *FIRST, "--out", out), f"the report of {SECOND[0]}", "--overwrite")
    assert json.loads(cli("compare", *SECOND, "--out", out, "--json", check_rc=0).stdout)["tasks"]["ran"] == 0


def test_a_folder_with_a_sweep_and_no_report_resumes_and_holds_no_report_to_protect(cli, first):
    """An interrupted comparison leaves its store and no report: the same claim resumes from it; another claim's report
    replaces none there (the store keeps both claims' rows, keyed by claim), and from then on the folder is that claim's."""
    out, s = first
    for name in os.listdir(out):
        if not name.startswith("sweep.sqlite"):
            os.remove(out / name)
    again = json.loads(cli("compare", *FIRST, "--out", out, "--json", check_rc=0).stdout)
    assert again["tasks"]["ran"] == 0 and (out / "summary.json").is_file()
    for name in os.listdir(out):
        if not name.startswith("sweep.sqlite"):
            os.remove(out / name)
    other = json.loads(cli("compare", *SECOND, "--out", out, "--json", check_rc=0).stdout)
    assert other["claim"] == SECOND[0] and other["tasks"]["ran"] == 10
    _refused(cli("compare", *FIRST, "--out", out), f"the report of {SECOND[0]}", "--overwrite")
    back = json.loads(cli("compare", *FIRST, "--out", out, "--overwrite", "--json", check_rc=0).stdout)
    assert back["tasks"]["ran"] == 0  # its rows were kept: --overwrite replaces the report, not the sweep


@pytest.mark.parametrize("text, says", [
    ('{"claim": "X\\nibcheck: fine"}', "the report of 'X\\nibcheck: fine'"),
    ("{not json", "a summary.json that is no claim's report"),
    ('{"setting": "a training run"}', "a summary.json that is no claim's report"),
])
def test_a_summary_json_of_no_comparison_is_refused_in_one_line(cli, tmp_path, text, says):
    out = tmp_path / "dir"
    out.mkdir()
    (out / "summary.json").write_text(text)
    _refused(cli("compare", *FIRST, "--out", out), says, "--overwrite")
    assert os.listdir(out) == ["summary.json"] and (out / "summary.json").read_text() == text


def test_an_unknown_claim_is_refused_for_what_it_is_not_for_the_folder(cli, first):
    out, _ = first
    _refused(cli("compare", "SSTTM18.cor.robust_uper", "--quick", "--out", out), "did you mean")
