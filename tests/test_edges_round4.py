"""Issue 37, round four of the hostile-input campaign: each case that gave a wrong answer or a crash.

Each test fails if its case comes back (or another of its class written here)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ibcheck
from ibcheck.errors import InputError

X4 = np.array([[1.0, 0.3], [2.0, 1.0], [-1.0, -0.5], [-2.0, 0.2]])
Y4 = np.array([1.0, 1.0, -1.0, -1.0])


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("scale", [1e300, 1e200, 1e155, 1e-155, 1e-160, 1e-170, 1e-300])
def test_svm_margin_scales_with_the_data_at_any_scale(scale, bias):
    """Separable points scaled by 1e300 were "infeasible"; at 1e-160 "optimal" with margin 0.0."""
    ref = ibcheck.svm(X4, Y4, bias=bias)
    r = ibcheck.svm(X4 * scale, Y4, bias=bias)
    assert r.separable and r.status == "optimal"
    assert r.margin / (scale * ref.margin) == pytest.approx(1.0, rel=1e-6)
    assert np.allclose(r.direction, ref.direction, atol=1e-6)


def test_svm_says_when_w_cannot_be_held_but_the_margin_is_proven():
    r = ibcheck.svm(X4 * 1e-310, Y4)
    assert r.separable and r.w is None and "overflows float64" in r.status
    assert r.margin > 0 and math.isfinite(r.margin)


@pytest.mark.parametrize("call", [
    lambda: ibcheck.svm(X4 + 0j, Y4),
    lambda: ibcheck.svm([[1 + 1j, 0.0], [1.0, 2.0]], [1, -1]),
    lambda: ibcheck.global_max_margin(X4.astype(complex), Y4),
    lambda: ibcheck.direction_error(np.array([1 + 0j, 2]), [1.0, 2.0]),
    lambda: ibcheck.direction_error([1.0, 2j], [1.0, 2.0]),
    lambda: ibcheck.svm(X4, Y4.astype(complex)),
])
def test_complex_input_is_refused_not_truncated(call):
    with pytest.raises(InputError, match="complex"):
        call()


@pytest.mark.parametrize("scale", [1e-200, 1e200])
def test_direction_error_is_scale_free(scale):
    assert ibcheck.direction_error(np.array([1.0, 2.0]) * scale, [2.0, 4.0]) == pytest.approx(0.0, abs=1e-12)


# -- the sweep store: unreadable rows are failed rows, counted and named; a foreign store is left untouched ---------
STORE_CLAIM = "SSTTM18.cor.robust_upper"  # a quick comparison of a few seconds, 6 rows
QUANTITY = "robust_sample_threshold"


def _compare(store):
    return ibcheck.compare(STORE_CLAIM, quick=True, budget=1, store=str(store), progress=False)


@pytest.fixture(scope="module")
def base_store(tmp_path_factory):
    path = tmp_path_factory.mktemp("store") / "sweep.sqlite"
    _compare(path)
    return path


def _damaged(base_store, tmp_path, *sql, params=()):
    import shutil
    import sqlite3
    path = tmp_path / "sweep.sqlite"
    shutil.copy(base_store, path)
    con = sqlite3.connect(path)
    for q in sql:
        con.execute(q, params) if "?" in q else con.execute(q)
    con.commit()
    con.close()
    return path


@pytest.mark.parametrize("stored, why", [
    ('{"robust_sample_threshold": NaN}', "not a finite number > 0"),
    ('{"robust_sample_threshold": 1e999}', "not a finite number > 0"),
    ('{"robust_sample_threshold": 0}', "not a finite number > 0"),
    ('{"robust_sample_threshold": -5}', "not a finite number > 0"),
    ('{"robust_sample_threshold": "7.7"}', "not a number"),
    ('{"robust_sample_threshold": [7.7]}', "not a number"),
    ('{"robust_sample_threshold": null}', "not a number"),
    ('{"other": 7.7}', "is missing"),
    ('[' * 100_000 + ']' * 100_000, "nested too deep"),
    ('{not json', "not JSON"),
    ('"a string"', "not a mapping"),
])
def test_an_unreadable_stored_row_is_a_failed_row_counted_with_its_reason(base_store, tmp_path, stored, why):
    """A stored NaN, inf, 0, -5, string, list or null (or a missing key) was left out of the fit while the table said
    "failed 0"; a row nested 100,000 deep was a RecursionError."""
    clean = _compare(base_store)
    path = _damaged(base_store, tmp_path, "UPDATE results SET value = ? WHERE rowid = 1", params=(stored,))
    res = _compare(path)
    assert res.record.task_status == {"ok": clean.record.task_status["ok"] - 1, "failed": 1}
    (f,) = res.record.failures
    assert f.kind == "UnreadableRow" and why in f.error and f.cell and f.seed in (0, 1)
    assert sum(c.failed for c in res.record.censored) == 1


def test_a_foreign_store_is_refused_before_anything_is_written(tmp_path):
    """It was refused as "left untouched" after a column had been added and the journal switched to WAL."""
    import hashlib
    import sqlite3
    path = tmp_path / "sweep.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE results (key TEXT, value TEXT)")
    con.execute("INSERT INTO results VALUES ('a', '1')")
    con.commit()
    con.close()
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(InputError, match="not a sweep store of ibcheck.*left untouched"):
        _compare(path)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert not (tmp_path / "sweep.sqlite-wal").exists()


@pytest.mark.parametrize("sql, says", [
    ("UPDATE ledger SET alpha = -1", "alpha=-1"),
    ("UPDATE ledger SET spent = 2", "spent=2"),
    ("DROP TABLE ledger; CREATE TABLE ledger (design TEXT, look INTEGER)", "its ledger table has the columns design, look"),
    ("CREATE TABLE notes (a TEXT)", "holds the table(s) notes"),
])
def test_a_damaged_or_foreign_ledger_is_one_input_error(base_store, tmp_path, sql, says):
    path = _damaged(base_store, tmp_path, *sql.split("; "))
    with pytest.raises(InputError) as err:
        _compare(path)
    assert says in str(err.value)


# -- crashes that became one line --------------------------------------------------------------------------------
@pytest.mark.parametrize("call, says", [
    (lambda: ibcheck.AtLeast(10**400), "finite number > 0"),
    (lambda: ibcheck.AtMost(10**400), "finite number > 0"),
    (lambda: ibcheck.load_claims(None), "path is a NoneType"),
    (lambda: ibcheck.register(None), "not NoneType"),
    (lambda: ibcheck.register("FVBS23.thm.4_2"), "not str"),
    (lambda: ibcheck.compare(STORE_CLAIM, grid={"d": [1e300, 1e301, 1e302]}, progress=False), "at most 2^53"),
    (lambda: ibcheck.compare(STORE_CLAIM, quick=True, workers=10_000, progress=False), "workers=10000 is out of range"),
])
def test_api_calls_that_crashed_raise_input_error(call, says):
    with pytest.raises(InputError) as err:
        call()
    assert says in str(err.value)


def test_workers_are_bounded_by_the_local_cores():
    from ibcheck.simulate.compare.inputs import check_workers, local_cores
    assert check_workers(local_cores()) == local_cores()
    with pytest.raises(InputError, match="at most"):
        check_workers(local_cores() + 1)
    assert check_workers(64, scheduler="tcp://10.0.0.5:8786") == 64  # a remote cluster: its own workers
