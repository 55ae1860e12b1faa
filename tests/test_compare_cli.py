import json
import os

import pytest


def test_quick_compare_lpll25_nonrobust_is_consistent_with_a_failing_negative_control(cli, tmp_path):
    out = tmp_path / "c"
    res = cli("compare", "LPLL25.thm.nonrobust", "--quick", "--workers", "2", "--out", str(out), "--json", check_rc=0)
    s = json.loads(res.stdout)
    assert s["claim"] == "LPLL25.thm.nonrobust"
    assert s["verdict"] == "consistent"
    assert s["negative_control"]["verdict"] == "inconsistent"
    assert {f["variable"] for f in s["fits"]} == {"d", "k"}
    for f in s["fits"]:
        assert {"variable", "estimate", "ci_low", "ci_high", "predicted"} <= set(f)
        assert f["ci_low"] <= f["estimate"] <= f["ci_high"]
    pred = {f["variable"]: f["predicted"] for f in s["fits"]}
    assert pred == {"d": 0.5, "k": -0.5}  # read from theory/, not retyped
    for key in ("html", "markdown", "parquet"):
        assert os.path.isfile(s["files"][key])
    html = open(s["files"]["html"]).read()
    assert "data:image/png;base64," in html and "<img" in html  # self-contained
    # a rerun reusing every cell of the sweep: test_edges_round5_overwrite.py::test_the_same_claim_again_resumes
    # the summary contract (also checked on LL20's trajectory, marked slow)
    assert {"cells_total", "cells_inside", "per_hypothesis"} <= set(s["applicability"])
    assert {"has_power", "detectable_deviation"} <= set(s["power"])
    assert isinstance(s["rounds"], list) and s["rounds"] and isinstance(s["failures"], list)


@pytest.mark.slow  # 21 s: VYS22's KKT certification; the index's VYS22 rows (make report) show both readings too
def test_ambiguous_claim_gets_a_verdict_per_reading(cli, tmp_path):
    s = json.loads(cli("compare", "VYS22.thm.main", "--quick", "--out", str(tmp_path / "v"), "--json", check_rc=0).stdout)
    assert set(s["readings"]) == {"eta_bound", "norm_bound"}
    assert all(v in ("consistent", "inconsistent", "inconclusive") for v in s["readings"].values())


@pytest.mark.parametrize("args, word", [
    (["compare", "LPLL25.thm.nonrobst", "--out", "{tmp}/x"], "did you mean LPLL25.thm.nonrobust"),
    (["compare", "LL20.def.P", "--out", "{tmp}/x"], "has no experiment"),
    (["compare", "LPLL25.thm.nonrobust", "--grid", "d=64,x", "--out", "{tmp}/x"], "is not a number"),
    (["compare", "LPLL25.thm.nonrobust", "--grid", "d=64,128", "k=2,4,8", "--out", "{tmp}/x"], "needs at least 3"),
    (["compare", "LPLL25.thm.nonrobust", "--quick", "--scheduler", "tcp://127.0.0.1:1", "--out", "{tmp}/x"], "cannot reach a Dask scheduler"),
])
def test_compare_bad_input(cli, tmp_path, args, word):
    res = cli(*[a.format(tmp=tmp_path) for a in args])
    assert res.returncode == 2, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr
    assert word in res.stderr


def test_report_only_one_claim_writes_an_index_with_its_row(cli, tmp_path):
    out = tmp_path / "r"
    cli("report", "--only", "SSTTM18.cor.robust_upper", "--quick", "--budget", "5", "--out", str(out), check_rc=0)
    index = (out / "index.md").read_text()
    row = next(line for line in index.splitlines() if "SSTTM18.cor.robust_upper/report.md" in line)
    assert "robust_sample_threshold" in row and any(v in row for v in ("consistent", "inconsistent", "inconclusive"))
    assert "Reproductions" not in index  # --only: no reproductions
    assert (out / "scaling" / "scaling.md").is_file() and (out / "compare" / "SSTTM18.cor.robust_upper" / "summary.json").is_file()
    assert "<table>" in (out / "index.html").read_text()
    # read at a glance (issue 37): the first table is one line per row (claim, quantity, a verdict badge, counted, one
    # clause of reason), before the forest plot; the wide table is on its own page
    lines = index.splitlines()
    first_table = next(i for i, line in enumerate(lines) if line.startswith("|"))
    cols = [c.strip() for c in lines[first_table].strip().strip("|").split("|")]
    assert cols[:4] == ["claim", "quantity", "verdict", "counted"] and len(cols) == 5, cols
    assert "index_forest.png" not in index or index.index("| claim") < index.index("index_forest.png")
    assert len(row.split("|")) == 7  # five columns, not fourteen
    assert 'class="badge b-' in (out / "index.html").read_text()
    wide = (out / "table.md").read_text()
    assert "exponents (95% CI, descriptive)" in wide and "SSTTM18.cor.robust_upper/report.md" in wide
