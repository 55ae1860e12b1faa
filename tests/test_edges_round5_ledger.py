"""Referee round 5, F2: the sequential ledger can no longer be edited silently.

``update ledger set spent=0, alpha=0.5`` in a finished comparison's store turned its consistent verdict inconclusive on
the same command ("0 tasks run, 36 reused"), and alpha = 0.001 changed the resolution, both without a word. Each ledger
entry now carries a digest of what it holds, chained to the entry before it; an entry that fails it (edited, removed,
inserted, or written before entries carried one) is never used: the design's ledger is discarded from it on, the same
command recomputes those looks from the rows (so its verdict is the unedited run's), and says so on stderr and in
summary.json (``tasks.ledger_discarded``).
"""
import json
import shutil
import sqlite3

import pytest

from ibcheck.errors import InputError
from ibcheck.simulate.sweep.store import LEDGER_COLUMNS, SweepStore, ledger_digest
from tests.conftest import run_cli

# noisy enough that a budget of 30 takes three looks (about a second each run); deterministic per (cell, seed)
NOISY = """
import math, random
import ibcheck

ibcheck.Claim("rep.ledger", "a quantity growing like sqrt(d), measured with noise", variables=[ibcheck.Variable("d", "int", low=2)],
              bounds=[ibcheck.Bound("y", "Theta", "sqrt(d)")])

@ibcheck.experiment("rep.ledger", grid={"d": [64, 128, 256]}, seeds=2, max_grid={"d": 4096}, cost=lambda cell: cell["d"] / 64)
def measure(cell, seed):
    rnd = random.Random(seed * 1000003 + cell["d"])
    return {"y": math.sqrt(cell["d"]) * math.exp(0.4 * rnd.gauss(0, 1))}
"""
READ = "look, data_hash, work, budget, fraction, alpha, spent, boundary, rule"


def _ledger(out) -> list[tuple]:
    con = sqlite3.connect(str(out / "sweep.sqlite"))
    try:
        return con.execute(f"SELECT {READ} FROM ledger ORDER BY look").fetchall()
    finally:
        con.close()


def _signature(s: dict) -> tuple:
    """What a verdict rests on: the verdict, the fits, and each look's level and spent alpha."""
    return (s["verdict"], s["fits"], [(r["look"]["look"], r["look"]["alpha"], r["look"]["spent"], r["look"]["fraction"]) for r in s["rounds"]])


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "warning" in line]


def _go(claims, out, *extra, json_out=True):
    return run_cli("--claims", claims, "compare", "rep.ledger", "--budget", "30", "--plan-trials", "0", *extra, "--out", out,
                   *(["--json"] if json_out else []))


@pytest.fixture
def run(clean, monkeypatch):
    """The clean run's command (its claims file: rows are keyed by the experiment's source and place) on another folder."""
    # one code version for every run of a test: another file of the tree edited meanwhile would key every row anew
    monkeypatch.setattr("ibcheck.simulate.compare.driver.code_version", lambda: "round5")
    claims = clean[0].parent / "noisy.py"
    return lambda out, *extra, json_out=True: _go(claims, out, *extra, json_out=json_out)


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """The unedited run, once per test process: each test edits its own copy of its store (:func:`_edited`)."""
    root = tmp_path_factory.mktemp("clean")
    claims = root / "noisy.py"
    claims.write_text(NOISY)
    out = root / "clean"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("ibcheck.simulate.compare.driver.code_version", lambda: "round5")
        res = _go(claims, out)
    assert res.returncode == 0, res.stderr
    s = json.loads(res.stdout)
    assert len(s["rounds"]) >= 3 and s["tasks"]["ledger_discarded"] == [] and _warnings(res.stderr) == []
    led = _ledger(out)
    assert [lk[0] for lk in led] == [1, 2, 3]
    return out, s, led


def _edited(clean, tmp_path, name: str, sql: str):
    """A copy of the clean run's store (only the store: the report is the same claim's anyway), edited with ``sql``."""
    out = tmp_path / name
    out.mkdir()
    shutil.copy(clean[0] / "sweep.sqlite", out / "sweep.sqlite")
    con = sqlite3.connect(str(out / "sweep.sqlite"))
    con.executescript(sql)
    con.commit()
    con.close()
    return out


COPY_OF = ("INSERT INTO ledger SELECT design, {look}, data_hash, work, budget, fraction, alpha, spent, boundary, rule, created, {digest} "
           "FROM ledger WHERE look = {src}")


@pytest.mark.parametrize("name, sql, first", [
    # the referee's edits: the consistent verdict turned inconclusive, or its resolution changed, without a word
    ("referee", "UPDATE ledger SET spent = 0, alpha = 0.5", "look 1: edited after it was written"),
    ("alpha", "UPDATE ledger SET alpha = 0.001 WHERE look = 2", "look 2: edited after it was written"),
    ("spent", "UPDATE ledger SET spent = 0.01 WHERE look = 2", "look 2: edited after it was written"),
    ("boundary", "UPDATE ledger SET boundary = 9.5 WHERE look = 3", "look 3: edited after it was written"),
    ("data", "UPDATE ledger SET data_hash = 'ffffffffffffffff' WHERE look = 1", "look 1: edited after it was written"),
    ("digest", "UPDATE ledger SET digest = 'x' WHERE look = 2", "look 2: edited after it was written"),
    ("removed", "DELETE FROM ledger WHERE look = 2", "look 3: not the next look (look 2 was due): look 2 is missing"),
    ("inserted", COPY_OF.format(look=4, digest="NULL", src=3), "look 4: it has no digest, unlike the entries written with it"),
    ("inserted-first", COPY_OF.format(look=0, digest="digest", src=1), "look 0: not the next look (look 1 was due)"),
    ("renumbered", "UPDATE ledger SET look = 7 WHERE look = 3", "look 7: not the next look (look 3 was due)"),
    ("unverified", "UPDATE ledger SET digest = NULL", "look 1: written without a digest"),
])
def test_an_edited_ledger_is_discarded_reported_and_the_verdict_is_the_unedited_runs(run, clean, tmp_path, name, sql, first):
    out = _edited(clean, tmp_path, name, sql)
    res = run(out)
    assert res.returncode == 0, res.stderr
    again = json.loads(res.stdout)
    # before: the edited entries were the looks' levels ("inconclusive (0 tasks run, 36 reused)" for the referee's edit)
    assert _signature(again) == _signature(clean[1])
    assert again["tasks"]["ran"] == 0  # the rows verify: only the looks are recomputed
    discarded = again["tasks"]["ledger_discarded"]
    assert discarded and discarded[0].startswith(first), discarded
    assert all("which was discarded" in d for d in discarded[1:])
    (warning,) = _warnings(res.stderr)
    assert f"{len(discarded)} look(s) of this comparison's sequential ledger cannot be trusted" in warning and first in warning
    assert _ledger(out) == clean[2]  # the recomputed looks are the ones the unedited run wrote, with their digests
    if name != "referee":
        return  # the ledger is now the clean run's, entry for entry (above): the next run is checked once, on the first edit
    # the next run finds a sound ledger: nothing to say
    third = run(out)
    assert json.loads(third.stdout)["tasks"]["ledger_discarded"] == [] and _warnings(third.stderr) == []
    assert _signature(json.loads(third.stdout)) == _signature(clean[1])


def test_the_text_output_says_the_ledger_was_recomputed(run, clean, tmp_path):
    out = _edited(clean, tmp_path, "text", "UPDATE ledger SET alpha = 0.5 WHERE look = 3")
    res = run(out, json_out=False)
    assert res.returncode == 0, res.stderr
    assert "(1 of the ledger not trusted, recomputed)" in res.stdout.splitlines()[0]
    assert len(_warnings(res.stderr)) == 1


def test_a_ledger_cut_after_its_last_entry_is_an_interrupted_run_recomputed_alike(run, clean, tmp_path):
    """What a kill leaves (the last look unwritten) cannot be told from a deletion of it; either way the same command
    recomputes the look from the rows, so the verdict is still the unedited run's."""
    out = _edited(clean, tmp_path, "cut", "DELETE FROM ledger WHERE look = 3")
    again = json.loads(run(out).stdout)
    assert _signature(again) == _signature(clean[1]) and again["tasks"]["ledger_discarded"] == []
    assert _ledger(out) == clean[2]


def test_a_damaged_value_is_still_refused_as_a_damaged_store(run, clean, tmp_path):
    out = _edited(clean, tmp_path, "damaged", "UPDATE ledger SET alpha = -1 WHERE look = 2")
    res = run(out)
    assert res.returncode == 2 and "alpha=-1" in res.stderr and "damaged" in res.stderr


# -- the store itself ---------------------------------------------------------------------------------------------
class _Look:
    def __init__(self, n, alpha=0.02, spent=0.02):
        self.look, self.work, self.budget, self.fraction, self.alpha, self.spent = n, 10.0 * n, 30, n / 3, alpha, spent
        self.boundary, self.rule, self.repeated = 2.0, "pocock", False


def test_entries_are_chained_per_design_and_verified_on_reading(tmp_path):
    db = str(tmp_path / "s.sqlite")
    with SweepStore(db) as st:
        for n in (1, 2):
            st.record_look("A", _Look(n), [f"k{n}"])
        st.record_look("B", _Look(1), ["k1"])  # another design: its own chain
        assert [lk["look"] for lk in st.looks("A")] == [1, 2] and [lk["look"] for lk in st.looks("B")] == [1]
        assert st.discarded == []
        rows = st.connection.execute("SELECT look, data_hash, work, budget, fraction, alpha, spent, boundary, rule, created, digest "
                                     "FROM ledger WHERE design='A' ORDER BY look").fetchall()
    first = ledger_digest("A", rows[0][:-1], None)
    assert rows[0][-1] == first and rows[1][-1] == ledger_digest("A", rows[1][:-1], first)
    con = sqlite3.connect(db)
    con.execute("UPDATE ledger SET work = 11 WHERE design = 'A' AND look = 1")
    con.commit()
    con.close()
    with SweepStore(db) as st:
        assert st.looks("A") == [] and st.discarded == ["look 1: edited after it was written",
                                                        "look 2: after look 1, which was discarded"]
        assert [lk["look"] for lk in st.looks("B")] == [1]  # the other design's ledger is untouched
        assert st.looks("A") == [] and len(st.discarded) == 2  # discarded once: deleted from the file, not read again
        st.record_look("A", _Look(1), ["k1"])  # recorded again, with a digest that verifies
        assert [lk["look"] for lk in st.looks("A")] == [1] and len(st.discarded) == 2


def test_a_ledger_from_before_digests_gets_the_column_and_its_entries_are_unverified(tmp_path):
    db = str(tmp_path / "old.sqlite")
    old_columns = [c for c in LEDGER_COLUMNS if c != "digest"]
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE ledger (design TEXT NOT NULL, look INTEGER NOT NULL, data_hash TEXT NOT NULL, work REAL NOT NULL, "
                "budget REAL, fraction REAL NOT NULL, alpha REAL NOT NULL, spent REAL NOT NULL, boundary REAL, rule TEXT NOT NULL, "
                "created REAL NOT NULL, PRIMARY KEY (design, look))")
    con.execute("INSERT INTO ledger VALUES ('A', 1, 'h', 10, 30, 0.33, 0.02, 0.02, 2.0, 'pocock', 0)")
    con.commit()
    assert [c[1] for c in con.execute("PRAGMA table_info(ledger)")] == old_columns
    con.close()
    with SweepStore(db) as st:  # an older store of ours: opened, not refused as foreign
        assert st.looks("A") == []
        assert st.discarded == ["look 1: written without a digest (a ledger from before its entries carried one), so it cannot be verified"]
    assert "digest" in [c[1] for c in sqlite3.connect(db).execute("PRAGMA table_info(ledger)")]


def test_a_ledger_with_other_columns_is_still_foreign(tmp_path):
    db = str(tmp_path / "f.sqlite")
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE ledger (design TEXT, look INTEGER, digest TEXT)")
    con.commit()
    con.close()
    with pytest.raises(InputError, match="its ledger table has the columns design, look, digest"):
        with SweepStore(db):
            pass


def test_a_rerun_after_a_larger_budget_continued_the_ledger_repeats_its_last_look(run, tmp_path):
    """Budgets 30, then 300, then 300 again: the third run retraced the mixed ledger from the initial grid, analysed 69 of
    the 300 stored rows, appended a look whose work fell below the last one's (every later run then refused as "information
    fractions must be increasing"), and crashed printing a resolution of None (referee round 2)."""
    out = tmp_path / "grown"
    assert run(out).returncode == 0
    grown = run(out, "--budget", "300")
    assert grown.returncode == 0, grown.stderr
    first = json.loads(grown.stdout)
    before = _ledger(out)
    again = run(out, "--budget", "300")
    assert again.returncode == 0, again.stderr
    s = json.loads(again.stdout)
    assert s["tasks"]["ran"] == 0 and s["tasks"]["tasks"] == first["tasks"]["tasks"]
    assert s["verdict"] == first["verdict"] and s["fits"] == first["fits"]
    assert _ledger(out) == before  # no look appended
    works = [lk[2] for lk in before]
    assert works == sorted(works) and len(set(works)) == len(works)
    text = run(out, "--budget", "300", json_out=False)  # the printed summary (a resolution may be None) is one run's, no crash
    assert text.returncode == 0 and "internal error" not in text.stderr
