import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from ibcheck.commands.args import parse_grid
from ibcheck.simulate.experiments.registry import EXPERIMENTS
from ibcheck.simulate.sweep.executor import run_sweep
from ibcheck.simulate.sweep.store import connect
from ibcheck.simulate.sweep.tasks import Task, task_key
from ibcheck.theory import InputError

EXP = "SSTTM18.cor.robust_upper"  # fast, deterministic


def _tasks(n_cells=6, seeds=2, version="test"):
    exp = EXPERIMENTS[EXP]
    out = []
    for d in [1000 * (i + 1) for i in range(n_cells)]:
        for s in range(seeds):
            cell = {"d": d}
            out.append(Task(task_key(exp.claim, exp.name, cell, s, exp.fixed, version), exp.claim, exp.name, cell, s, dict(exp.fixed)))
    return out


def _rows(db):
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT key, status, value FROM results").fetchall()
    except sqlite3.OperationalError:  # the file exists but the sweep has not created its table yet
        return []
    finally:
        con.close()


def test_sweep_runs_each_cell_once_and_resumes(tmp_path):
    db = str(tmp_path / "s.sqlite")
    tasks = _tasks()
    first = run_sweep(tasks[:5], db, "test", progress=False)
    assert first["ran"] == 5
    second = run_sweep(tasks, db, "test", progress=False)
    assert second["ran"] == len(tasks) - 5 and second["skipped"] == 5
    rows = _rows(db)
    assert len(rows) == len(tasks) == len({r[0] for r in rows})
    assert all(r[1] == "ok" and json.loads(r[2])["robust_sample_threshold"] > 0 for r in rows)
    con = connect(db)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


# Every process of the killed sweep, spawned workers included, imports this at start-up
# (sitecustomize on PYTHONPATH), so every task is slow enough to kill the sweep mid-way.
SITECUSTOMIZE = """
import sys, time
sys.path.insert(0, {root!r})
import ibcheck.simulate.experiments.registry as E
from ibcheck.simulate.experiments.base import Experiment
from ibcheck.simulate.experiments.ssttm18 import measure_ssttm18 as _orig
def _slow(cell, seed):
    time.sleep(0.3)
    return _orig(cell, seed)
E.EXPERIMENTS[{exp!r}] = Experiment(**{{**E.EXPERIMENTS[{exp!r}].__dict__, "measure": _slow}})
"""

SCRIPT = """
from tests.test_sweep import _tasks
from ibcheck.simulate.sweep.executor import run_sweep
run_sweep(_tasks(n_cells=10, seeds=2), {db!r}, "test", workers={workers}, progress=False)
"""


@pytest.mark.parametrize("workers", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_kill_minus_9_then_rerun_finishes_every_cell_exactly_once(tmp_path, workers):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    db = str(tmp_path / "k.sqlite")
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(SITECUSTOMIZE.format(root=root, exp=EXP))
    env = {**os.environ, "PYTHONPATH": f"{hook}{os.pathsep}{root}"}
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT.format(db=db, workers=workers)], cwd=root, env=env, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline:
        time.sleep(0.1)
        if os.path.exists(db) and len(_rows(db)) >= 3:
            break
    os.kill(proc.pid, signal.SIGKILL)  # kill -9 of the parent, mid-sweep
    proc.wait()
    partial = len(_rows(db))
    assert 3 <= partial < 20
    # No worker outlives the killed parent: nothing is left in its session.
    for _ in range(50):
        left = subprocess.run(["pgrep", "-s", str(proc.pid)], capture_output=True, text=True).stdout.split()
        if not left:
            break
        time.sleep(0.1)
    assert left == [], left
    result = run_sweep(_tasks(n_cells=10, seeds=2), db, "test", progress=False)
    rows = _rows(db)
    assert len(rows) == 20 and len({r[0] for r in rows}) == 20
    assert result["ran"] == 20 - partial
    assert all(r[1] == "ok" and r[2] is not None for r in rows)


def test_tiny_sweep_on_a_dask_local_cluster(tmp_path):
    db = str(tmp_path / "dask.sqlite")
    tasks = _tasks(n_cells=3, seeds=2)
    res = run_sweep(tasks, db, "test", workers=2, dask=True, progress=False)
    assert res["ran"] == 6 and res["failed"] == 0
    assert len(_rows(db)) == 6


def test_unreachable_scheduler_is_a_one_line_error(tmp_path):
    with pytest.raises(InputError) as e:
        run_sweep(_tasks(n_cells=1, seeds=1), str(tmp_path / "x.sqlite"), "test", scheduler="tcp://127.0.0.1:1")
    assert "cannot reach a Dask scheduler" in str(e.value)


def test_failures_are_recorded_not_dropped(tmp_path):
    exp = EXPERIMENTS[EXP]
    bad = Task("k1", exp.claim, exp.name, {"d": -5}, 0, {})
    res = run_sweep([bad], str(tmp_path / "f.sqlite"), "test", progress=False)
    rows = _rows(str(tmp_path / "f.sqlite"))
    assert res["failed"] == 1 and rows[0][1] == "failed"


def test_grid_parsing():
    assert parse_grid(["d=64,128,256", "k=2,4"]) == {"d": [64, 128, 256], "k": [2, 4]}
    for bad, word in [(["d"], "VAR=v1"), (["d=a,b"], "not a number"), (["d=0,1,2"], "must be numbers > 0"), (["d=1,1,2"], "repeats")]:
        with pytest.raises(InputError) as e:
            parse_grid(bad)
        assert word in str(e.value)


@pytest.mark.slow
def test_rows_are_keyed_on_every_reachable_source_file(tmp_path):
    """A change to the trainer (not claim_experiments.py) in a copy of the tree recomputes every row."""
    import shutil

    from ibcheck.simulate.sweep.tasks import code_version

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    copy = tmp_path / "tree"
    for pkg in ("theory", "solvers", "simulate", "ibcheck"):
        shutil.copytree(os.path.join(root, pkg), copy / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    assert code_version(str(copy)) == code_version(root)  # relative paths: a copy keys the same rows

    def compare():
        env = {**os.environ, "PYTHONPATH": str(copy)}
        res = subprocess.run([sys.executable, "-m", "ibcheck.cli", "compare", EXP, "--quick", "--out", str(tmp_path / "c"), "--json"],
                             cwd=str(copy), env=env, capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, res.stderr
        return json.loads(res.stdout)

    first = compare()
    assert first["tasks"]["ran"] == first["tasks"]["tasks"] > 0
    assert compare()["tasks"]["ran"] == 0  # unchanged code: every row reused
    with open(copy / "simulate" / "trainer.py", "a") as f:
        f.write("\n# a change a measurement can reach\n")
    assert code_version(str(copy)) != code_version(root)
    third = compare()
    assert third["tasks"]["ran"] == third["tasks"]["tasks"]  # recomputed, not reused


def test_the_same_seed_gives_the_same_numbers_with_one_and_two_workers(tmp_path):
    exp = EXPERIMENTS["LPLL25.thm.nonrobust"]  # GD training in torch: thread counts could change the rounding
    tasks = [Task(task_key(exp.claim, exp.name, {"d": d, "k": 2}, s, {}, "t"), exp.claim, exp.name, {"d": d, "k": 2}, s, {})
             for d in (64, 128) for s in (0, 1)]
    values = {}
    for w in (1, 2):
        db = str(tmp_path / f"w{w}.sqlite")
        run_sweep(tasks, db, "t", workers=w, progress=False)
        values[w] = {k: json.loads(v) for k, _, v in _rows(db)}
    assert values[1] == values[2] and len(values[1]) == 4  # bit for bit


DASK_SCRIPT = """
from tests.test_sweep import _tasks
from ibcheck.simulate.sweep.executor import run_sweep
if __name__ == "__main__":
    print(run_sweep(_tasks(n_cells=10, seeds=2), {db!r}, "test", workers=2, dask=True, progress=False))
"""


def _dask_workers(pid):
    """Worker processes of a LocalCluster started by ``pid`` (its nannies live in the client's own
    process and spawn the workers as its children)."""
    import psutil

    try:
        return [c for c in psutil.Process(pid).children() if "spawn_main" in " ".join(c.cmdline())]
    except psutil.NoSuchProcess:
        return []


def _start_slow_dask_sweep(tmp_path, name, **popen):
    """A 20-task Dask sweep (0.3 s per task) in a subprocess, returned once 3 rows are written."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    db = str(tmp_path / name)
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(SITECUSTOMIZE.format(root=root, exp=EXP))
    env = {**os.environ, "PYTHONPATH": f"{hook}{os.pathsep}{root}"}
    script = tmp_path / "sweep.py"
    script.write_text(DASK_SCRIPT.format(db=db))
    proc = subprocess.Popen([sys.executable, str(script)], cwd=root, env=env, start_new_session=True, **popen)
    deadline = time.time() + 120
    while time.time() < deadline and not (os.path.exists(db) and len(_rows(db)) >= 3):
        time.sleep(0.1)
    return proc, db


@pytest.mark.slow
def test_killing_a_dask_worker_mid_sweep_is_survived(tmp_path):
    proc, db = _start_slow_dask_sweep(tmp_path, "dk.sqlite", stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    workers = _dask_workers(proc.pid)
    assert workers, "no Dask worker process found"
    workers[0].kill()  # one worker dies mid-sweep (kill -9); its nanny restarts it
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err[-2000:]
    rows = _rows(db)
    assert len(rows) == 20 and len({r[0] for r in rows}) == 20  # nothing lost, nothing duplicated
    assert all(r[1] == "ok" for r in rows)


@pytest.mark.slow
def test_kill_minus_9_of_a_dask_client_then_rerun_resumes(tmp_path):
    proc, db = _start_slow_dask_sweep(tmp_path, "dc.sqlite", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = len(_rows(db))
    assert 3 <= partial < 20
    for _ in range(300):  # the cluster's processes notice the lost client and exit
        left = subprocess.run(["pgrep", "-s", str(proc.pid)], capture_output=True, text=True).stdout.split()
        if not left:
            break
        time.sleep(0.1)
    assert left == [], f"Dask processes outlived the killed client: {left}"
    result = run_sweep(_tasks(n_cells=10, seeds=2), db, "test", progress=False)
    rows = _rows(db)
    assert len(rows) == 20 and len({r[0] for r in rows}) == 20 and result["ran"] == 20 - partial


KILLER = """
import os, signal, sys, time
sys.path.insert(0, {root!r})
import ibcheck.simulate.experiments.registry as E
from ibcheck.simulate.experiments.base import Experiment
from ibcheck.simulate.experiments.ssttm18 import measure_ssttm18 as _orig
def _die(cell, seed):
    if cell["d"] == 3000 and seed == 1:
        os.kill(os.getpid(), signal.SIGKILL)  # this worker dies (as under the OOM killer)
    time.sleep(0.05)
    return _orig(cell, seed)
E.EXPERIMENTS[{exp!r}] = Experiment(**{{**E.EXPERIMENTS[{exp!r}].__dict__, "measure": _die}})
"""


@pytest.mark.slow
def test_a_dead_local_worker_stops_the_sweep_with_one_line_and_a_rerun_resumes(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    db = str(tmp_path / "dead.sqlite")
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(KILLER.format(root=root, exp=EXP))
    env = {**os.environ, "PYTHONPATH": f"{hook}{os.pathsep}{root}"}
    script = "from tests.test_sweep import _tasks\nfrom ibcheck.simulate.sweep.executor import run_sweep\nfrom ibcheck.theory.errors import RunFailure\n" \
             "if __name__ == '__main__':\n    try:\n        run_sweep(_tasks(n_cells=6, seeds=2), %r, 'test', workers=2, progress=False)\n" \
             "    except RunFailure as e:\n        print('FAILURE', e)\n" % db
    res = subprocess.run([sys.executable, "-c", script], cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert "FAILURE a worker process died" in res.stdout, res.stdout + res.stderr
    saved = _rows(db)
    assert all(r[1] == "ok" for r in saved) and len(saved) < 12  # the lost tasks are not recorded as failures
    result = run_sweep(_tasks(n_cells=6, seeds=2), db, "test", progress=False)  # a rerun (normal code) resumes
    assert len(_rows(db)) == 12 and result["ran"] == 12 - len(saved)


def test_progress_without_a_terminal_is_plain_lines_not_silence():
    """Where stderr is not a terminal (a notebook's !ibcheck, a pipe), the sweep prints one plain line at most every
    30 s and one at the end, instead of nothing."""
    import io

    from ibcheck.simulate.sweep.executor import LineProgress, _bar

    out = io.StringIO()
    p = LineProgress(3, every=1e9, stream=out)
    for _ in range(3):
        p.update(1)
    assert out.getvalue().splitlines() == [out.getvalue().splitlines()[0]] and out.getvalue().startswith("sweep: 3/3 tasks, ")
    out = io.StringIO()
    p = LineProgress(3, every=0.0, stream=out)
    for _ in range(3):
        p.update(1)
    assert [line.split(",")[0] for line in out.getvalue().splitlines()] == ["sweep: 1/3 tasks", "sweep: 2/3 tasks", "sweep: 3/3 tasks"]
    assert isinstance(_bar(5, True), LineProgress)  # pytest's stderr is not a terminal
    assert _bar(5, False) is None
