"""Issue 50, item 7: docs/performance.md shows the current figures, one row per measurement, generated from
docs/performance.json by bench/record.py (written by `make bench` and bench/fresh_clone.sh); the history is git's."""
from __future__ import annotations

import argparse
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"


def _load(name: str):
    """A bench/ script as a module (bench/ is not a package; its scripts import each other by name)."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(f"{name}_bench", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def rec():
    return _load("record")


@pytest.fixture
def pair(tmp_path, monkeypatch):
    monkeypatch.delenv("BENCH_RECORD_TO", raising=False)
    return tmp_path / "performance.json", tmp_path / "performance.md"


def _rows(md: str) -> list[str]:
    """The ids of the page's table rows, in order."""
    return re.findall(r"^\| `([^`]+)` \|", md, re.M)


def test_record_replaces_the_row_with_the_same_id_and_keeps_the_others(rec, pair):
    jp, mp = pair
    rec.record("gd_speed", "9.7x", "python bench/gd_speed.py", what="batched GD", commit="aaaaaaa", json_path=jp, md_path=mp)
    rec.record("kkt_speed.lone", "2.2 s", "python bench/kkt_speed.py --only lone", what="lone neurons", commit="aaaaaaa",
               json_path=jp, md_path=mp)
    rec.record("gd_speed", "10.1x", "python bench/gd_speed.py", {"ms": 1.5}, commit="bbbbbbb+", json_path=jp, md_path=mp)
    entries = {e["id"]: e for e in json.loads(jp.read_text())["entries"]}
    assert set(entries) == {"gd_speed", "kkt_speed.lone"}
    new, kept = entries["gd_speed"], entries["kkt_speed.lone"]
    assert (new["figure"], new["commit"], new["extra"], new["what"]) == ("10.1x", "bbbbbbb+", {"ms": 1.5}, "batched GD")  # what kept
    assert (kept["figure"], kept["commit"]) == ("2.2 s", "aaaaaaa")
    assert set(new) >= {"id", "group", "what", "figure", "command", "commit", "date", "machine"}
    assert new["machine"]["nproc"] and new["machine"]["python"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", new["date"])
    md = mp.read_text()
    assert _rows(md) == ["kkt_speed.lone", "gd_speed"]  # one row per id, in the page's (group, id) order
    assert "10.1x" in md and "9.7x" not in md
    assert "git log -p docs/performance.json" in md


def test_the_page_is_regenerated_with_its_hand_written_section_kept(rec, pair):
    jp, mp = pair
    rec.record("make.report", "4 min", "make report", what="make report", commit="aaaaaaa", json_path=jp, md_path=mp)
    mp.write_text(mp.read_text() + "## Open\n\n- something slow\n")
    rec.record("make.report", "3 min", "make report", commit="ccccccc", json_path=jp, md_path=mp)
    md = mp.read_text()
    assert md.endswith(rec.MARKER + "\n\n## Open\n\n- something slow\n")
    assert _rows(md) == ["make.report"] and "3 min" in md and "4 min" not in md
    assert md == rec.render(rec.load(jp), rec.kept_section(mp))


def test_rows_sort_by_group_then_id_and_a_pipe_stays_in_its_cell(rec):
    data = {"entries": [{"id": "zzz.b", "figure": "a | b", "command": "x"}, {"id": "fresh_clone.make_test", "figure": "1", "command": "y"},
                        {"id": "zzz.a", "figure": "2", "command": "z"}, {"id": "make.test", "figure": "3", "command": "w"}]}
    md = rec.render(data)
    assert _rows(md) == ["fresh_clone.make_test", "make.test", "zzz.a", "zzz.b"]
    assert "a \\| b" in md
    assert json.loads(rec.dumps(data))["entries"][0]["id"] == "fresh_clone.make_test"


def test_a_partial_run_records_under_an_id_naming_its_options(rec):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--fixture", action="store_true")
    ap.add_argument("--cells", default="")
    ap.add_argument("--seeds", type=int, default=1)
    assert rec.variant_id("kkt_recall", ap.parse_args([]), ap) == "kkt_recall"
    assert rec.variant_id("kkt_recall", ap.parse_args(["--fixture"]), ap, ignore=("fixture",)) == "kkt_recall"
    args = ap.parse_args(["--seeds", "15", "--cells", "6,8", "--quick"])
    assert rec.variant_id("kkt_recall", args, ap) == "kkt_recall[cells=6,8;quick;seeds=15]"
    assert rec.group_of("kkt_recall[cells=6,8;quick;seeds=15]") == "kkt_recall" == rec.group_of("kkt_recall")


def test_the_commit_is_marked_dirty_by_changes_other_than_the_records(rec, tmp_path):
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t", "-c", "commit.gpgsign=false"]
    (tmp_path / "docs").mkdir()
    for f in ("docs/performance.json", "docs/performance.md", "a.py"):
        (tmp_path / f).write_text("0\n")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run([*git, "-C", str(tmp_path), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(tmp_path), "commit", "-qm", "x"], check=True)
    clean = rec.commit_id(tmp_path)
    assert re.fullmatch(r"[0-9a-f]{4,}", clean)
    (tmp_path / "docs" / "performance.json").write_text("1\n")
    (tmp_path / "docs" / "performance.md").write_text("1\n")
    assert rec.commit_id(tmp_path) == clean  # a bench run's own output does not make the next one's commit dirty
    (tmp_path / "a.py").write_text("1\n")
    assert rec.commit_id(tmp_path) == clean + "+"


def test_docs_performance_md_is_what_the_generator_writes_from_the_json(rec, monkeypatch):
    """A hand edit of the tables (or a JSON edit without regenerating) is caught: `python bench/record.py --render-only`
    rewrites the page."""
    monkeypatch.delenv("BENCH_RECORD_TO", raising=False)
    data = rec.load(rec.JSON_PATH)
    md = rec.MD_PATH.read_text()
    assert md == rec.render(data, rec.kept_section(rec.MD_PATH))
    ids = [e["id"] for e in data["entries"]]
    assert len(ids) == len(set(ids)) and _rows(md) == [e["id"] for e in sorted(data["entries"], key=rec._sort_key)]
    for e in data["entries"]:  # every row names its commit and its command
        assert e["commit"].strip() and e["command"].strip() and e["figure"].strip() and e["what"].strip(), e["id"]
    assert rec.dumps(data) == rec.JSON_PATH.read_text()  # the JSON as the recorder writes it (sorted, one format)


TEST_LOG = """\
.venv/bin/ruff check theory solvers simulate ibcheck tests bench
All checks passed!
.venv/bin/mypy ibcheck theory solvers simulate
Success: no issues found in 180 source files
.venv/bin/python -m pytest -q -n 2 --dist worksteal
........................................................................ [ 99%]
.s                                                                       [100%]
=========================== short test summary info ============================
SKIPPED [1] tests/test_docs.py:12: THEORY.md is not in a clone
1173 passed, 1 skipped, 12 deselected in 196.42s (0:03:16)

real\t3m52.318s
user\t6m1.002s
sys\t0m20.123s
"""

REPORT_LOG = """\
.venv/bin/ibcheck report --quick --budget 200 --workers 2 --out report
wrote report/index.md and report/index.html in 238 s
report written to report/index.html (and index.md)
\tCommand being timed: "make report"
\tUser time (seconds): 400.12
\tPercent of CPU this job got: 170%
\tElapsed (wall clock) time (h:mm:ss or m:ss): 4:01.23
\tMaximum resident set size (kbytes): 826368
\tExit status: 0
"""

INDEX = ("# ibcheck report\n\n`ibcheck report --quick --budget 200` in 238 s (computing 219 s, writing 19 s); comparisons 210 s. "
         "**12 of 18 rows decided and counted** (9 consistent, 3 inconsistent); 2 more decided but not counted\n")


def test_the_fresh_clone_logs_parse_into_the_two_figures():
    fc = _load("fresh_clone_parse")
    p = fc.parse(TEST_LOG, REPORT_LOG, INDEX)
    assert p["test_wall_seconds"] == pytest.approx(232.318)
    assert p["pytest"] == {"passed": 1173, "skipped": 1, "deselected": 12, "seconds": 196.42}
    assert p["report"] == {"wall_seconds": pytest.approx(241.23), "max_rss_kb": 826368, "exit_status": 0}
    assert p["index"] == {"seconds": 238, "computing": 219, "writing": 19, "comparisons": 210, "decided": 12, "rows": 18}
    assert fc.test_figure(p) == "**3 min 52 s** wall (pytest 196 s: 1173 passed, 1 skipped)" and p["cpu_probe"] == {}
    probed = fc.parse("cpu probe: 1.70 s (30M additions, best of 3); matmul 18.8 GFLOP/s (one thread, 1000 x 1000, best of 3)\n"
                      + TEST_LOG, REPORT_LOG, INDEX)
    assert probed["cpu_probe"] == {"loop_seconds": 1.7, "matmul_gflops": 18.8}
    assert fc.test_figure(probed) == ("**3 min 52 s** wall (pytest 196 s: 1173 passed, 1 skipped; the machine (bench/cpu_probe.py): "
                                      "Python loop 1.70 s, matmul 18.8 GFLOP/s on one thread)")
    assert fc.cpu_probe("cpu probe: 2.00 s (30M additions, best of 3); matmul not measured (no numpy)") == {"loop_seconds": 2.0}
    assert fc.report_figure(p) == ("**4 min 01 s** wall, the index stating 238 s (computing 219 s, writing 19 s; comparisons 210 s); "
                                   "peak 807 MiB (maximum resident set); 12 of 18 rows decided and counted")
    assert fc.gnu_time("\tElapsed (wall clock) time (h:mm:ss or m:ss): 1:02:03\n")["wall_seconds"] == 3723
    assert fc.bash_real("real\t0m45.5s\n") == 45.5 and fc.bash_real("no timing") is None
    assert fc.pytest_summary("==== 3 failed, 10 passed, 1 error in 5.00s ====") == {"failed": 3, "passed": 10, "errors": 1, "seconds": 5.0}
    assert [fc.duration(x) for x in (45, 232.3, 6079)] == ["45 s", "3 min 52 s", "1 h 41 min"]


def test_the_fresh_clone_parser_records_both_ids(tmp_path, monkeypatch):
    fc = _load("fresh_clone_parse")
    monkeypatch.setenv("BENCH_RECORD_TO", str(tmp_path / "out"))
    (tmp_path / "t.log").write_text(TEST_LOG)
    (tmp_path / "r.log").write_text(REPORT_LOG)
    (tmp_path / "index.md").write_text(INDEX)
    assert fc.main(["--test-log", str(tmp_path / "t.log"), "--report-log", str(tmp_path / "r.log"), "--index",
                    str(tmp_path / "index.md"), "--commit", "5a613d9"]) == 0
    entries = json.loads((tmp_path / "out" / "performance.json").read_text())["entries"]
    assert [(e["id"], e["commit"]) for e in entries] == [("fresh_clone.make_report", "5a613d9"), ("fresh_clone.make_test", "5a613d9")]
    assert _rows((tmp_path / "out" / "performance.md").read_text()) == ["fresh_clone.make_report", "fresh_clone.make_test"]


def test_kkt_recall_records_a_partial_run_under_its_own_id(tmp_path, monkeypatch):
    """bench/kkt_recall.py --cells 6,8 --seeds 15 --slsqp 0 (--fixture aside) replaces its own row, the one migrated from
    the hand-kept table, and never the full run's (``kkt_recall``)."""
    bench = _load("kkt_recall")
    monkeypatch.setenv("BENCH_RECORD_TO", str(tmp_path))
    argv = ["--cells", "6,8", "--seeds", "15", "--slsqp", "0", "--fixture"]
    monkeypatch.setattr(sys, "argv", [str(BENCH / "kkt_recall.py"), *argv])
    ap = bench.parser()
    args = ap.parse_args(argv)
    bench._record_run(args, ap, [(512, 6, 200, 0)] * 2, ["k = 6, d = 512-512, FVBS23 quick: 3/4 = 75% (2 instances)"], "",
                      {"FVBS23 quick": [9.04, 19.0]}, "abcd1234", "5a613d9")
    (e,) = json.loads((tmp_path / "performance.json").read_text())["entries"]
    assert (e["id"], e["commit"], e["group"]) == ("kkt_recall[cells=6,8;seeds=15;slsqp=0]", "5a613d9", "kkt_recall")
    assert e["figure"] == "k = 6, d = 512-512, FVBS23 quick: 3/4 = 75% (2 instances); seconds per search: FVBS23 quick 9.0-19.0 s"
    assert e["command"] == "python bench/kkt_recall.py --cells 6,8 --seeds 15 --slsqp 0 --fixture"
    assert e["id"] in {x["id"] for x in _load("record").load(ROOT / "docs" / "performance.json")["entries"]}
