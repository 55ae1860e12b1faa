"""Issue 50, item 2: a sweep store that detects edits.

A hostile round edited the SQLite store: three values set to 1e6 were reused ("0 tasks run, 36 reused") and the
verdict moved without a word; a row whose cell was changed to d = 99999 was fitted as a measurement, its own seed never
rerun. Every row now carries a digest of its key and what it holds; a row that fails it (or has none: an older store)
is measured again, never reused or fitted, and the sweep says so in one line.
"""
import json
import sqlite3

import pytest

from ibcheck.simulate.experiments.registry import EXPERIMENTS
from ibcheck.simulate.sweep.executor import run_sweep
from ibcheck.simulate.sweep.measurements import readable_rows
from ibcheck.simulate.sweep.store import connect, reusable, row_digest, rows_for
from ibcheck.simulate.sweep.tasks import Task, task_key

EXP = "SSTTM18.cor.robust_lower"  # deterministic per seed, non-trivial thresholds, milliseconds per task
QUANTITY = "robust_sample_threshold"
CELLS = [1000, 3000, 10000, 30000]


def _tasks(version="round5"):
    exp = EXPERIMENTS[EXP]
    return [Task(task_key(exp.claim, exp.name, {"d": d, "eps": 0.5}, s, exp.fixed, version), exp.claim, exp.name,
                 {"d": d, "eps": 0.5}, s, dict(exp.fixed)) for d in CELLS for s in range(2)]


def _stored(db) -> dict:
    """key -> (cell, seed, status, value) as the file holds them."""
    con = sqlite3.connect(db)
    try:
        return {k: (json.loads(c), s, st, v) for k, c, s, st, v in con.execute("SELECT key, cell, seed, status, value FROM results")}
    finally:
        con.close()


def _edit(db, *statements):
    con = sqlite3.connect(db)
    for q, params in statements:
        con.execute(q, params)
    con.commit()
    con.close()


def _set_value(db, rowid, x):
    con = sqlite3.connect(db)
    (text,) = con.execute("SELECT value FROM results WHERE rowid = ?", (rowid,)).fetchone()
    value = json.loads(text)
    value[QUANTITY] = x
    con.close()
    return ("UPDATE results SET value = ? WHERE rowid = ?", (json.dumps(value), rowid))


HOSTILE_CELL = ("UPDATE results SET cell = ? WHERE rowid = ?", (json.dumps({"d": 99999, "eps": 0.5}), 5))


@pytest.fixture
def swept(tmp_path):
    db = str(tmp_path / "sweep.sqlite")
    tasks = _tasks()
    first = run_sweep(tasks, db, "round5", progress=False, log=None)
    assert first["ran"] == len(tasks) and first["stale"] == ()
    return db, tasks, _stored(db)


def test_edited_values_and_cell_are_measured_again_reported_and_equal_the_unedited_run(swept):
    db, tasks, clean = swept
    _edit(db, *[_set_value(db, i, 1e6) for i in (1, 2, 3)], HOSTILE_CELL)
    edited = _stored(db)
    assert sum(v[3] != clean[k][3] for k, v in edited.items()) == 3 and sum(v[0]["d"] == 99999 for v in edited.values()) == 1
    lines: list[str] = []
    again = run_sweep(tasks, db, "round5", progress=False, log=lines.append)
    # before: {"ran": 0, "skipped": 8}, the 1e6 values and the d = 99999 row read as measurements
    assert (again["ran"], again["skipped"]) == (4, len(tasks) - 4)
    assert len(again["stale"]) == 4 and {r.kind for r in again["stale"]} == {"EditedRow"}
    assert all(r.why.startswith("edited after it was written") for r in again["stale"])
    (moved,) = [r for r in again["stale"] if "99999" in r.why]
    assert "a cell not in the design" in moved.why and moved.cell["d"] in CELLS  # named by its task's cell, which ran again
    (line,) = lines  # one line, the count and the reasons
    assert "\n" not in line and "4 stored row(s)" in line and "edited after it was written" in line and "never reused or fitted" in line
    assert _stored(db) == clean  # the rerun's values are the unedited run's, one row per key
    rows = rows_for(connect(db), [t.key for t in tasks])
    assert [r.status for r in rows] == ["ok"] * len(tasks)
    quiet: list[str] = []
    third = run_sweep(tasks, db, "round5", progress=False, log=quiet.append)
    assert third["ran"] == 0 and third["stale"] == () and quiet == []  # the replaced rows verify


def test_an_edited_row_read_before_any_rerun_is_a_failed_row_never_fitted(swept):
    db, tasks, clean = swept
    _edit(db, _set_value(db, 1, 1e6), HOSTILE_CELL)
    rows = rows_for(connect(db), [t.key for t in tasks])
    bad = [r for r in rows if r.status == "failed"]
    assert len(bad) == 2 and all(r.failure == "EditedRow" and r.value is None for r in bad)
    assert all("edited after it was written" in r.error and "never fitted" in r.error for r in bad)
    assert not any(r.measured for r in bad)  # no value for the fit, the hypotheses or the KKT records
    ok = [r for r in rows if r.status == "ok"]
    assert len(ok) == len(tasks) - 2 and all(r.value[QUANTITY] < 1e6 and r.cell["d"] in CELLS for r in ok)


def test_a_forged_digest_does_not_make_a_moved_cell_reusable(swept):
    """A digest recomputed after the edit matches; the row still holds another cell than its key's task: measured again."""
    db, tasks, clean = swept
    con = sqlite3.connect(db)
    cols = "key, claim, experiment, cell, seed, status, value, error, seconds, code_version, failure"
    con.execute("UPDATE results SET cell = ? WHERE rowid = 5", HOSTILE_CELL[1][:1])
    fields = con.execute(f"SELECT {cols} FROM results WHERE rowid = 5").fetchone()
    con.execute("UPDATE results SET digest = ? WHERE rowid = 5", (row_digest(*fields),))
    con.commit()
    con.close()
    ok, stale = reusable(connect(db), tasks, "round5")
    assert len(ok) == len(tasks) - 1 and len(stale) == 1 and "a cell not in the design" in stale[0].why
    again = run_sweep(tasks, db, "round5", progress=False, log=None)
    assert again["ran"] == 1 and _stored(db) == clean


def test_a_value_or_digest_of_another_type_is_an_edit_not_an_internal_error(swept):
    db, tasks, clean = swept
    _edit(db, ("UPDATE results SET value = ? WHERE rowid = 1", (b"\x00\x01",)), ("UPDATE results SET digest = 7 WHERE rowid = 2", ()))
    ok, stale = reusable(connect(db), tasks, "round5")
    assert len(stale) == 2 and all(r.why == "edited after it was written" for r in stale)
    assert run_sweep(tasks, db, "round5", progress=False, log=None)["ran"] == 2 and _stored(db) == clean


def test_a_row_of_another_code_version_under_a_task_key_is_not_reused(swept):
    db, tasks, clean = swept
    _edit(db, ("UPDATE results SET code_version = 'other' WHERE rowid = 2", ()))
    ok, stale = reusable(connect(db), tasks, "round5")
    assert len(stale) == 1 and "code 'other'" in stale[0].why


def test_an_unreadable_value_written_as_such_is_still_an_unreadable_row_and_reused(swept):
    """The round-4 guard: a row whose digest matches (as a measure wrote it) but whose value cannot enter the fit is a
    failed row that says why; it is not an edit, so the sweep reuses it."""
    db, tasks, clean = swept
    con = sqlite3.connect(db)
    cols = "key, claim, experiment, cell, seed, status, value, error, seconds, code_version, failure"
    con.execute("UPDATE results SET value = ? WHERE rowid = 1", (json.dumps({QUANTITY: float("nan"), "trivial": False}),))
    fields = con.execute(f"SELECT {cols} FROM results WHERE rowid = 1").fetchone()
    con.execute("UPDATE results SET digest = ? WHERE rowid = 1", (row_digest(*fields),))
    con.commit()
    con.close()
    assert run_sweep(tasks, db, "round5", progress=False, log=None)["ran"] == 0
    rows = readable_rows(rows_for(connect(db), [t.key for t in tasks]), EXPERIMENTS[EXP])
    (bad,) = [r for r in rows if r.status == "failed"]
    assert bad.failure == "UnreadableRow" and "not a finite number > 0" in bad.error


def test_a_store_from_before_the_digest_gets_the_column_and_its_rows_are_measured_again(tmp_path, swept):
    """Old stores: the column is added (as the failure column was); their rows have no digest, so they cannot be verified
    and are measured again (rows of an older release are keyed by another code version anyway, so none was reusable)."""
    db, tasks, clean = swept
    old = str(tmp_path / "old.sqlite")
    con = sqlite3.connect(old)
    con.execute("CREATE TABLE results (key TEXT PRIMARY KEY, claim TEXT NOT NULL, experiment TEXT NOT NULL, cell TEXT NOT NULL, "
                "seed INTEGER NOT NULL, status TEXT NOT NULL, value TEXT, error TEXT, seconds REAL, code_version TEXT NOT NULL, "
                "created REAL NOT NULL, failure TEXT)")
    con.execute("ATTACH DATABASE ? AS new", (db,))
    con.execute("INSERT INTO results SELECT key, claim, experiment, cell, seed, status, value, error, seconds, code_version, created, "
                "failure FROM new.results")
    con.execute("UPDATE results SET value = ? WHERE rowid = 1", (json.dumps({QUANTITY: 1e6, "trivial": False}),))
    con.commit()
    con.close()
    before = rows_for(connect(old), [t.key for t in tasks])  # connect adds the column
    assert {r.failure for r in before} == {"UnverifiedRow"} and all(r.value is None for r in before)
    lines: list[str] = []
    again = run_sweep(tasks, old, "round5", progress=False, log=lines.append)
    assert again["ran"] == len(tasks) and {r.kind for r in again["stale"]} == {"UnverifiedRow"}
    assert "cannot be verified" in lines[0]
    assert _stored(old) == clean
    assert "digest" in [c[1] for c in sqlite3.connect(old).execute("PRAGMA table_info(results)")]


def test_a_failed_row_verifies_and_is_reused(tmp_path):
    """A failure is a recorded row with its digest like any other: not measured again on every rerun."""
    exp = EXPERIMENTS[EXP]
    bad = Task(task_key(exp.claim, exp.name, {"d": -5, "eps": 0.5}, 0, exp.fixed, "round5"), exp.claim, exp.name,
               {"d": -5, "eps": 0.5}, 0, dict(exp.fixed))
    db = str(tmp_path / "f.sqlite")
    assert run_sweep([bad], db, "round5", progress=False, log=None)["failed"] == 1
    lines: list[str] = []
    again = run_sweep([bad], db, "round5", progress=False, log=lines.append)
    assert again["ran"] == 0 and lines == []


# -- the same through `ibcheck compare`: the verdict is the unedited run's, and the output says what was measured again --
GRID = ["--grid", "d=1000,3000,10000,30000,100000", "eps=0.5", "--seeds", "2", "--plan-trials", "0"]


def test_compare_reruns_edited_rows_and_its_fits_are_the_unedited_runs(cli, tmp_path, monkeypatch):
    # one code version for both runs: another file of the tree edited meanwhile would key every row anew
    monkeypatch.setattr("ibcheck.simulate.compare.driver.code_version", lambda: "round5")
    out = tmp_path / "c"
    clean = json.loads(cli("compare", EXP, *GRID, "--out", out, "--json", check_rc=0).stdout)
    assert clean["tasks"]["ran"] == 10
    db = str(out / "sweep.sqlite")
    _edit(db, *[_set_value(db, i, 1e6) for i in (1, 2, 3)], HOSTILE_CELL)
    res = cli("compare", EXP, *GRID, "--out", out, "--json", check_rc=0)
    again = json.loads(res.stdout)
    # before: 0 tasks run, 10 reused; 6 cells, d = 99999 among them; the d exponent 9.3 instead of 1.08; no warning
    assert (again["tasks"]["ran"], again["tasks"]["skipped"]) == (4, 6)
    warning = [line for line in res.stderr.splitlines() if "warning" in line]
    assert len(warning) == 1 and "4 stored row(s)" in warning[0] and "edited after it was written" in warning[0]
    remeasured = again["tasks"]["remeasured"]  # summary.json names each row measured again, with why
    assert len(remeasured) == 4 and all("edited after it was written" in r for r in remeasured)
    assert sum("d=99999" in r and "not in the design" in r for r in remeasured) == 1, remeasured
    assert clean["tasks"]["remeasured"] == []
    assert again["fits"] == clean["fits"] and again["verdict"] == clean["verdict"]
    assert again["task_status"] == {"ok": 10} and again["failures"] == []
    assert sorted(again["grid"]["d"]) == [1000, 3000, 10000, 30000, 100000]
