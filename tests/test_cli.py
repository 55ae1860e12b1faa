"""The CLI contract: JSON keys, round trips, one-line errors with exit status 2."""
import json

import pytest

from ibcheck.theory import get_claim
from ibcheck.theory.window import applicability_window


def test_claims_json_lists_every_claim(cli):
    res = cli("claims", "--json", check_rc=0)
    rows = json.loads(res.stdout)
    assert len(rows) == 45
    row = next(r for r in rows if r["claim"] == "FVBS23.asm.2_2")
    assert row["unverified"] and "unverified" in row["flags"]


def test_bounds_json_contract(cli):
    res = cli("bounds", "FVBS23.thm.4_2", "--at", "d=100000,k=10,n=10000,eps=0.1,delta=0.1,c=0.5", "--json", check_rc=0)
    info = json.loads(res.stdout)
    assert info["claim"] == "FVBS23.thm.4_2" and info["status"] == "order"
    assert [h["name"] for h in info["hypotheses"]] == ["H1", "H2", "H3", "H4", "H5"]
    for h in info["hypotheses"]:
        assert set(h) >= {"name", "expr", "holds", "log10_lhs", "log10_rhs"}
        assert h["holds"] is True
    b = next(b for b in info["bounds"] if b["quantity"] == "universal_flip_norm")
    assert set(b) >= {"quantity", "kind", "expr", "exponents", "log_exponents", "value"}
    assert b["kind"] == "O"
    assert b["exponents"] == {"d": "1/2", "k": "-1/2", "n": "0", "eps": "0", "delta": "0", "c": "-1"}
    assert b["value"] == pytest.approx((100000 / (0.25 * 10)) ** 0.5)  # C = 1 assumed
    assert b["value_assumes"] == {"C": 1}
    assert info["applies"] is True


def test_bounds_without_point_has_null_values(cli):
    info = json.loads(cli("bounds", "LPLL25.thm.nonrobust", "--json", check_rc=0).stdout)
    assert all(b["value"] is None for b in info["bounds"])
    assert info["hypotheses"][0]["holds"] is None


def test_ambiguous_claim_shows_both_readings(cli):
    info = json.loads(cli("bounds", "VYS22.thm.main", "--json", check_rc=0).stdout)
    assert {b["reading"] for b in info["bounds"]} == {"eta_bound", "norm_bound"}
    only = json.loads(cli("bounds", "VYS22.thm.main", "--reading", "norm_bound", "--json", check_rc=0).stdout)
    assert {b["reading"] for b in only["bounds"]} == {"norm_bound"}


def test_unverified_flag_in_every_output(cli):
    assert "unverified" in cli("bounds", "FVBS23.asm.2_2", check_rc=0).stdout.lower()
    assert "unverified" in cli("bounds", "FVBS23.asm.2_2", "--latex", check_rc=0).stdout.lower()
    assert "UNVERIFIED" in cli("claims", check_rc=0).stdout
    w = json.loads(cli("window", "FVBS23.asm.2_2", "--free", "d", "--at", "k=10,sigma=1,max_mean_ip=1,kappa=0.25", "--json", check_rc=0).stdout)
    assert "unverified" in w["flags"]


def test_latex_output(cli):
    out = cli("bounds", "FVBS23.thm.4_2", "--latex", check_rc=0).stdout
    assert r"\begin{align*}" in out and r"\ln{\left(d \right)}" in out and r"\varepsilon" in out


def test_window_json_round_trips(cli):
    res = cli("window", "FVBS23.thm.4_2", "--free", "d", "--at", "k=10,n=100000,eps=0.1,delta=0.1", "--json", check_rc=0)
    data = json.loads(res.stdout)
    assert data["claim"] == "FVBS23.thm.4_2" and data["free"] == "d"
    direct = applicability_window(get_claim("FVBS23.thm.4_2"), "d", "k=10,n=100000,eps=0.1,delta=0.1")
    assert data["intervals"] == [list(iv) for iv in direct.intervals]
    assert all(isinstance(x, int) for iv in data["intervals"] for x in iv)
    assert json.loads(json.dumps(data)) == data


def test_empty_window_is_an_empty_list(cli):
    data = json.loads(cli("window", "FVBS23.thm.4_2", "--free", "d", "--at", "k=1000,n=1000,eps=0.1,delta=0.1", "--json", check_rc=0).stdout)
    assert data["intervals"] == []


def test_graph_formats(cli, tmp_path):
    assert "digraph" in cli("graph", "--format", "dot", check_rc=0).stdout
    assert cli("graph", "--format", "mermaid", check_rc=0).stdout.startswith("graph LR")
    g = json.loads(cli("graph", "--format", "json", check_rc=0).stdout)
    assert len(g["nodes"]) == 45
    out = tmp_path / "g.png"
    cli("graph", "--format", "png", "--out", str(out), check_rc=0)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_graph_queries(cli):
    deps = json.loads(cli("graph", "--rests-on", "FVBS23.cor.nonrobust_gf", "--json", check_rc=0).stdout)["rests_on"]
    assert {"FVBS23.thm.3_1", "FVBS23.thm.4_1", "FVBS23.thm.4_2", "LL20.thm.kkt"} <= set(deps)
    rows = json.loads(cli("graph", "--follows-at", "d=100000,k=10,n=10000,eps=0.1,delta=0.1,c=0.5", "--json", check_rc=0).stdout)
    assert next(r for r in rows if r["claim"] == "FVBS23.thm.4_2")["follows"] is True
    rows = json.loads(cli("graph", "--follows-at", "d=100,k=10,n=10000,eps=0.1,delta=0.1,c=0.5", "--json", check_rc=0).stdout)
    row = next(r for r in rows if r["claim"] == "FVBS23.thm.4_2")
    assert row["follows"] is False and "FVBS23.thm.4_2.H4" in row["failed"] and "FVBS23.thm.4_2.H1" not in row["failed"]


def test_compare_command(cli):
    out = json.loads(cli("growth", "d+k", "d*k", "--json", check_rc=0).stdout)
    assert out["relation"] == "<"
    assert json.loads(cli("growth", "d/k", "sqrt(d)", "--json", check_rc=0).stdout)["relation"] == "incomparable"


@pytest.mark.parametrize("args, word", [
    (["bounds", "FVBS23.thm.4_3"], "did you mean FVBS23.thm.4_2"),
    (["bounds", "FVBS23.thm.4_2", "--at", "eps=1.5"], "eps=1.5 is out of range: eps must be a number in (0, 1)"),
    (["bounds", "FVBS23.thm.4_2", "--at", "d=1"], "d=1 is out of range: d must be an integer >= 2"),
    (["bounds", "FVBS23.thm.4_2", "--at", "d=abc"], "d='abc' is not a number"),
    (["bounds", "FVBS23.thm.4_2", "--at", "q=3"], "unknown variable 'q'"),
    (["bounds", "VYS22.thm.main", "--reading", "nope"], "accepted readings are eta_bound, norm_bound"),
    (["window", "FVBS23.thm.4_2", "--free", "d", "--at", "k=10"], "needs values for"),
    (["window", "FVBS23.thm.4_2", "--free", "eps", "--at", "k=10,n=5,delta=0.1"], "needs values for d"),
    (["window", "FVBS23.thm.4_2", "--at", "k=10"], "required: --free"),
    (["graph", "--format", "svg"], "invalid choice"),
    (["graph", "--format", "png"], "needs --out"),
    (["growth", "d+", "k"], "cannot parse"),
    (["nosuchcommand"], "invalid choice"),
])
def test_bad_input_is_one_line_exit_2(cli, args, word):
    res = cli(*args)
    assert res.returncode == 2, (res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert "Traceback" not in res.stderr
    assert word in lines[0]
    assert res.stdout == ""


def test_bad_out_writes_nothing(cli, tmp_path):
    (tmp_path / "afile").write_text("x")
    target = tmp_path / "afile" / "g.dot"  # a parent that is a file: refused, nothing written
    res = cli("graph", "--format", "dot", "--out", str(target))
    assert res.returncode == 2 and (tmp_path / "afile").read_text() == "x"
    made = tmp_path / "missing" / "g.dot"  # a missing parent is created, as --out promises
    assert cli("graph", "--format", "dot", "--out", str(made)).returncode == 0 and made.is_file()
