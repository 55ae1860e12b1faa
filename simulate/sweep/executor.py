"""The executor stage: where a sweep's tasks run (this process, a local pool, or Dask).

Resumable sweeps: every task (:mod:`simulate.sweep.tasks`) runs once and its row goes to the
store's SQLite file (WAL mode). Only the parent process writes, one row per transaction, so a
sweep killed at any point (kill -9) and rerun finds every finished row intact, skips it, and runs
the rest. Workers of the local pool die with their parent (PR_SET_PDEATHSIG). Executors: a local
process pool (default; one torch thread per worker), or Dask distributed: ``scheduler=ADDRESS``
connects to a running cluster, ``workers=N`` with ``dask=True`` starts a ``LocalCluster``.

It receives the resolved experiment, measure included (:func:`pack`), never a name
to look up in a worker; rows are written by the :class:`~simulate.sweep.store.SweepStore` it runs for.
A local pool is opened once and reused across the rounds of a budgeted sweep.
"""
from __future__ import annotations

import ctypes
import functools
import multiprocessing as mp
import os
import pickle
import signal
import sqlite3
import sys
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Callable

import cloudpickle
from threadpoolctl import threadpool_limits
from tqdm import tqdm

from ibcheck.simulate.experiments.registry import as_trajectory, check_user_value, experiment_for
from ibcheck.simulate.substrate.censored import encode
from ibcheck.simulate.sweep.store import connect, reusable, write_row  # the file's one owner: its schema and its SQL
from ibcheck.simulate.sweep.tasks import Task
from ibcheck.theory.argtypes import refused, require_int
from ibcheck.theory.errors import InputError, RunFailure

# (key, status, value, error text, seconds, failure kind): the kind of a failed task (the exception's class name,
# "InvalidMeasurement", "WorkerDied", ...) is stored in its own column, so no reader matches it in the error's text
TaskResult = tuple[str, str, object, str | None, float, str | None]


@dataclass
class Executor:
    """``workers`` local processes (1: this process), or Dask: ``dask=True`` starts a LocalCluster of
    ``workers``, ``scheduler="tcp://..."`` joins a running one."""

    workers: int = 1
    scheduler: str | None = None
    dask: bool = False
    progress: bool = True
    _pool: ProcessPoolExecutor | None = field(default=None, repr=False)

    def __post_init__(self):
        require_int("workers", self.workers, 1)

    @property
    def kind(self) -> str:
        return "dask" if (self.scheduler or self.dask) else "pool" if self.workers > 1 else "local"

    def __enter__(self) -> Executor:
        if self.kind == "pool":
            self._pool = local_pool(self.workers)
        return self

    def __exit__(self, *exc) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None

    def run(self, store, tasks: list, version: str, experiment) -> dict:
        """Run the tasks ``store`` lacks with ``experiment``; returns the sweep's counts."""
        return run_sweep(tasks, store.connection, version, experiment=experiment, workers=self.workers, scheduler=self.scheduler,
                         dask=self.dask, progress=self.progress, pool=self._pool)


def _init_worker() -> None:
    """Die with the parent (Linux) and use one thread per worker: torch's, and the BLAS's that numpy and scipy call.

    Pitfall avoided: OMP_NUM_THREADS is read when OpenBLAS loads, and a spawned worker has loaded numpy (to unpickle
    this very function) before it runs; two workers then ran two BLAS threads each on two cores, and the KKT engine's
    Cholesky factors (solvers/kkt/gram.py) ran 2.5-4x slower than alone."""
    try:
        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass
    os.environ["OMP_NUM_THREADS"] = "1"
    threadpool_limits(limits=1)  # the BLAS already loaded: limited in place
    try:
        import torch  # heavy: torch (a worker sets its threads)

        torch.set_num_threads(1)
    except ImportError:
        pass


def resolve(experiment_name: str):
    """The experiment of a task, resolved in the parent (its quantities and time variable included)."""
    return experiment_for(experiment_name)


def pack(exp) -> bytes:
    """An experiment, measure included, as bytes a worker can run without any registry: cloudpickle
    carries a user's measure by value (it was defined in a claims file no worker can import)."""
    return cloudpickle.dumps(exp)


@functools.lru_cache(maxsize=8)
def _unpack(payload: bytes):
    return pickle.loads(payload)


def run_task(task: Task, payload: bytes | None = None) -> TaskResult:
    """Run one task in a worker with the experiment ``payload`` (:func:`pack`; None: resolve it here).
    Never raises: a failure is a recorded status."""
    try:
        exp = _unpack(payload) if payload is not None else resolve(task.experiment)
    except Exception as err:  # recorded, never dropped
        return task.key, "failed", None, f"the experiment could not be loaded in the worker: {type(err).__name__}: {err}", 0.0, "ExperimentNotLoaded"
    return execute(task, exp)


def execute(task: Task, exp) -> TaskResult:
    """Run one task with the resolved experiment ``exp``; never raises (a failure is a recorded status)."""
    t0 = time.perf_counter()
    try:
        value = exp.measure({**task.fixed, **exp.settings_at({**task.fixed, **task.cell}), **task.cell}, task.seed)
        why = check_user_value(exp, value) if exp.user else None
        if why is None and exp.user and exp.trajectory:
            value, why = as_trajectory(exp, value)
        value = encode(value)  # AtLeast/AtMost -> {"at_least": x}: stored as bounds, never as values
        if why is not None:  # recorded as failed with the reason, never dropped
            return task.key, "failed", None, why, time.perf_counter() - t0, "InvalidMeasurement"
        status = "diverged" if isinstance(value, dict) and value.get("status") == "diverged" else "ok"
        return task.key, status, value, None, time.perf_counter() - t0, None
    except Exception as err:  # recorded, never dropped
        return task.key, "failed", None, f"{type(err).__name__}: {err}\n{traceback.format_exc(limit=3)}", time.perf_counter() - t0, type(err).__name__


def local_pool(workers: int) -> ProcessPoolExecutor:
    """The local worker pool (spawned, one torch thread each, dying with the parent); reusable across sweeps."""
    return ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn"), initializer=_init_worker)


def _stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def run_sweep(tasks: list[Task], db: str | sqlite3.Connection, version: str, workers: int = 1, scheduler: str | None = None,
              dask: bool = False, progress: bool = True, pool: ProcessPoolExecutor | None = None, experiment=None,
              log: Callable[[str], None] | None = _stderr) -> dict:
    """Run the tasks not yet in ``db`` (a path, or the open connection of a
    :class:`~ibcheck.simulate.sweep.store.SweepStore`, which then stays the file's one owner); returns
    counts of done / skipped / failed.

    ``experiment``: the resolved experiment every task runs (default: resolved here from the tasks'
    experiment name); the workers receive it, measure included, and look nothing up.
    ``pool``: an open :func:`local_pool` to reuse (a budgeted sweep runs several rounds).

    A stored row is reused only where its digest matches and it holds its task's cell and seed
    (:func:`~ibcheck.simulate.sweep.store.reusable`); any other is measured again, its row replaced, and ``log`` gets one
    line saying how many and why (``stale`` in the counts lists them)."""
    own = not isinstance(db, sqlite3.Connection)
    con = db if isinstance(db, sqlite3.Connection) else connect(db)
    try:
        have, stale = reusable(con, tasks, version)  # a row edited after it was written is measured again, never reused
    except BaseException:
        if own:
            con.close()
        raise
    todo = [t for t in tasks if t.key not in have]
    again = {r.key for r in stale}
    if stale and log is not None:
        log(stale_text(stale, len(tasks)))
    if todo and experiment is None:
        experiment = resolve(todo[0].experiment)
    job = functools.partial(run_task, payload=pack(experiment) if todo and (workers > 1 or pool or scheduler or dask) else None)
    by_key = {t.key: t for t in todo}
    bar = _bar(len(todo), progress)
    failed = 0

    def record(result):
        nonlocal failed
        key, status, value, error, secs, failure = result
        failed += status == "failed"
        write_row(con, by_key[key], status, value, error, secs, version, failure, overwrite=key in again)
        if bar is not None:
            bar.update(1)

    try:
        if not todo:
            pass
        elif scheduler or dask:
            _run_dask(todo, record, scheduler, workers, job)
        elif pool is not None:
            _collect([pool.submit(job, t) for t in todo], record, len(tasks))
        elif workers <= 1:
            for t in todo:
                record(execute(t, experiment))
        else:
            with local_pool(workers) as ex:
                _collect([ex.submit(job, t) for t in todo], record, len(tasks))
    finally:
        if bar is not None:
            bar.close()
        if own:
            con.close()
    return {"tasks": len(tasks), "ran": len(todo), "skipped": len(tasks) - len(todo), "failed": failed, "stale": stale}


def stale_text(stale, tasks: int, most: int = 3) -> str:
    """One line for the stored rows a sweep does not reuse: how many, and why for the first ``most``."""
    shown = "; ".join(r.text() for r in stale[:most]) + (f"; and {len(stale) - most} more" if len(stale) > most else "")
    return (f"ibcheck: warning: {len(stale)} stored row(s) of this sweep ({tasks} tasks) cannot be trusted: measured again, never "
            f"reused or fitted: {shown}")


def _collect(futs, record, total: int) -> None:
    """Record each finished task; a worker process that died (killed, out of memory) stops the sweep with
    one line saying what was saved: its tasks are not recorded as failures, so a rerun retries them."""
    done = 0
    try:
        for f in as_completed(futs):
            record(f.result())
            done += 1
    except BrokenProcessPool:
        for f in futs:
            f.cancel()
        raise RunFailure(f"a worker process died (killed or out of memory) after {done} of {len(futs)} tasks of this run; "
                         f"every finished row is saved in the sweep database: rerun the same command to resume") from None


def _run_dask(todo, record, scheduler, workers, job):
    try:
        from distributed import Client, LocalCluster  # heavy: distributed (Dask), only on a cluster
        from distributed import as_completed as das_completed  # heavy: distributed
    except ImportError as err:  # pragma: no cover - distributed is a dependency
        raise InputError(f"Dask distributed is not installed: {err}") from None
    cluster = None
    try:
        if scheduler:
            try:
                client = Client(scheduler, timeout=os.environ.get("IBCHECK_DASK_TIMEOUT", "10s"))
            except (OSError, TimeoutError) as err:
                raise refused("scheduler", scheduler, f": cannot reach a Dask scheduler there ({type(err).__name__})") from None
        else:
            cluster = LocalCluster(n_workers=max(1, workers), threads_per_worker=1, processes=True, dashboard_address=None)
            client = Client(cluster)
        with client:
            futs = client.map(job, todo, pure=False)
            task_of = {f.key: t for f, t in zip(futs, todo)}
            for f in das_completed(futs):
                try:
                    record(f.result())
                except Exception as err:  # e.g. KilledWorker: the task took down its worker every time it ran
                    t = task_of[f.key]
                    record((t.key, "failed", None, f"{type(err).__name__}: {err} (the task's worker died on every try)", 0.0, "WorkerDied"))
    finally:
        if cluster is not None:
            cluster.close()


class LineProgress:
    """Progress for a stderr that is not a terminal (a notebook's ``!ibcheck``, a pipe, a batch log): one plain line at
    most every ``every`` seconds and at the end, "sweep: 12/48 tasks, 95 s", where a bar's carriage returns would pile
    up or nothing would show for minutes."""

    def __init__(self, total: int, every: float = 30.0, stream=None):
        self.total, self.done, self.every = total, 0, every
        self.stream = stream if stream is not None else sys.stderr
        self.t0 = self.last = time.monotonic()

    def update(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if now - self.last >= self.every or self.done >= self.total:
            self.last = now
            print(f"sweep: {self.done}/{self.total} tasks, {now - self.t0:.0f} s", file=self.stream, flush=True)

    def close(self) -> None:
        pass


def _bar(total: int, progress: bool):
    if not progress or total == 0:
        return None
    if not sys.stderr.isatty():
        return LineProgress(total)
    return tqdm(total=total, desc="sweep", unit="task", dynamic_ncols=True)
