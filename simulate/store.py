"""The sweep store: the one owner of a comparison's SQLite file (rows, ledger of looks, lock).

* **rows**: one per (claim, experiment, cell, seed, fixed settings, code version), written by the
  sweep (:mod:`simulate.sweep`) one transaction each, so a killed sweep resumes;
* **ledger**: the looks of the sequential design (:mod:`simulate.sequential`), keyed by design;
* **lock**: one comparison at a time per store. A second ``compare`` on the same ``--out`` while
  one runs is refused with one line: two runs interleaving their looks in one ledger would give
  each the other's alpha, and the last to finish would overwrite the other's report.
"""
from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import time

from ibcheck.theory.errors import InputError

from .rounds import CellKey, cell_key
from .sweep import connect, rows_for, task_key

LEDGER = """
CREATE TABLE IF NOT EXISTS ledger (
    design TEXT NOT NULL,
    look INTEGER NOT NULL,
    data_hash TEXT NOT NULL,
    work REAL NOT NULL,
    budget REAL,
    fraction REAL NOT NULL,
    alpha REAL NOT NULL,
    spent REAL NOT NULL,
    boundary REAL,
    rule TEXT NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (design, look)
)
"""


class SweepStore:
    """A comparison's SQLite file, opened under an exclusive lock (see the module docstring).

    Use as a context manager: ``with SweepStore(path) as store: ...``."""

    def __init__(self, path: str):
        self.path = path
        self._lock_fd: int | None = None
        self.con: sqlite3.Connection | None = None

    def __enter__(self) -> SweepStore:
        d = os.path.dirname(os.path.abspath(self.path))
        if not os.path.isdir(d):
            raise InputError(f"database directory {d} does not exist")
        # flock on the database file itself (SQLite's own locks are fcntl locks, independent of flock):
        # nothing beside it is written, and the lock dies with the process that holds it
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise InputError(f"{self.path} is in use by another comparison; wait for it to finish, or give another --out") from None
        self._lock_fd = fd
        try:
            self.con = connect(self.path)
            with self.con:
                self.con.execute(LEDGER)
        except BaseException:
            self._release()
            raise
        return self

    def __exit__(self, *exc) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None
        self._release()

    def _release(self) -> None:
        if self._lock_fd is not None:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None

    # -- rows -----------------------------------------------------------------------------------
    def run(self, tasks: list, version: str, experiment, **executor) -> dict:
        """Run the tasks not stored yet (:func:`simulate.sweep.run_sweep` on this store's connection:
        ``executor`` is workers, scheduler, dask, pool, progress)."""
        from .sweep import run_sweep

        assert self.con is not None
        return run_sweep(tasks, self.con, version, experiment=experiment, **executor)

    def rows(self, keys: list[str]) -> list[dict]:
        assert self.con is not None
        return rows_for(self.con, keys)

    def keys(self) -> set[str]:
        assert self.con is not None
        return {k for (k,) in self.con.execute("SELECT key FROM results")}

    def stored_cells(self, claim: str, experiment: str, fixed: dict, version: str) -> dict[CellKey, int]:
        """Cells and seeds of the same design stored earlier (a rerun continues from them)."""
        assert self.con is not None
        out: dict[CellKey, int] = {}
        for key, cell, seed in self.con.execute("SELECT key, cell, seed FROM results WHERE claim=? AND experiment=? AND code_version=?",
                                                (claim, experiment, version)):
            c = json.loads(cell)
            if task_key(claim, experiment, c, seed, fixed, version) == key:
                ck = cell_key(c)
                out[ck] = max(out.get(ck, 0), seed + 1)
        return out

    # -- ledger ---------------------------------------------------------------------------------
    def looks(self, design: str) -> list[dict]:
        assert self.con is not None
        cols = ("look", "data_hash", "work", "budget", "fraction", "alpha", "spent", "boundary", "rule")
        q = f"SELECT {', '.join(cols)} FROM ledger WHERE design=? ORDER BY look"
        return [dict(zip(cols, row)) for row in self.con.execute(q, (design,))]

    def record_look(self, design: str, look, keys) -> None:
        """Append a look to the ledger (a repeated look is not recorded again)."""
        from .sequential import data_hash

        assert self.con is not None
        if look.repeated:
            return
        with self.con:
            self.con.execute("INSERT INTO ledger VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                             (design, look.look, data_hash(keys), look.work, look.budget, look.fraction, look.alpha, look.spent,
                              look.boundary if look.boundary is None or look.boundary < 1e300 else None, look.rule, time.time()))
