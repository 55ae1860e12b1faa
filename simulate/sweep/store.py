"""The sweep store: the one owner of a comparison's SQLite file (rows, ledger of looks, lock).

* **rows**: one per (claim, experiment, cell, seed, fixed settings, code version), written by the
  sweep (:mod:`simulate.sweep.executor`) one transaction each, so a killed sweep resumes; each carries the
  digest of what it holds (:func:`row_digest`), so a row edited after it was written is never reused or fitted:
  the sweep measures its task again (:func:`reusable`), and a reader sees it as a failed row saying so;
* **ledger**: the looks of the sequential design (:mod:`simulate.verdict.sequential`), keyed by design; each entry carries
  the digest of what it holds chained to the entry before it (:func:`ledger_digest`), so a look edited, removed or
  inserted afterwards is never used: the design's ledger is discarded from it on (:meth:`SweepStore.looks`), said in
  one line and in the record, and the same command recomputes those looks from the rows;
* **schema and SQL**: every statement on the file lives here (the sweep calls :func:`write_row`);
* **lock**: one comparison at a time per store. A second ``compare`` on the same ``--out`` while
  one runs is refused with one line: two runs interleaving their looks in one ledger would give
  each the other's alpha, and the last to finish would overwrite the other's report.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import math
import os
import sqlite3
import time
from dataclasses import dataclass, replace

from ibcheck.simulate.experiments.base import Row
from ibcheck.simulate.sweep.tasks import CellKey, Task, cell_key, data_hash, task_key
from ibcheck.theory.errors import InputError, RunFailure, StoreInUse

SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    key TEXT PRIMARY KEY,
    claim TEXT NOT NULL,
    experiment TEXT NOT NULL,
    cell TEXT NOT NULL,
    seed INTEGER NOT NULL,
    status TEXT NOT NULL,
    value TEXT,
    error TEXT,
    seconds REAL,
    code_version TEXT NOT NULL,
    created REAL NOT NULL,
    failure TEXT,
    digest TEXT
)
"""

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
    digest TEXT,
    PRIMARY KEY (design, look)
)
"""


def check_sides(db: str) -> None:
    """SQLite's own files beside the store (-wal, -shm, -journal) are regular files or absent, never links: SQLite would
    write its journal through a link. Checked before anything is created (the store's lock file included)."""
    for side in (db + "-wal", db + "-shm", db + "-journal"):
        if os.path.islink(side) or (os.path.lexists(side) and not os.path.isfile(side)):
            what = "a symbolic link" if os.path.islink(side) else "not a regular file"
            raise InputError(f"{side} is {what} beside the sweep store: SQLite writes its journal there, so nothing was "
                             "written; remove it or choose another --out")


def connect(db: str) -> sqlite3.Connection:
    d = os.path.dirname(os.path.abspath(db))
    if not os.path.isdir(d):
        raise InputError(f"database directory {d} does not exist")
    check_sides(db)
    con = sqlite3.connect(db, timeout=60)
    try:
        foreign = _foreign(con)  # read only: nothing is written to a file that is not ours
        if foreign:
            con.close()
            raise InputError(f"{db} is not a sweep store of ibcheck ({foreign}): it was left untouched; move it away or choose "
                             "another --out")
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA synchronous=NORMAL")
        con.execute(SCHEMA)
        for column in LATER_COLUMNS:  # a store written before the column: its rows have none (no digest: never reused)
            if column not in {row[1] for row in con.execute("PRAGMA table_info(results)")}:
                con.execute(f"ALTER TABLE results ADD COLUMN {column} TEXT")
        con.commit()
        con.execute("SELECT key, cell, seed, status, value FROM results LIMIT 1").fetchall()
    except sqlite3.DatabaseError as err:
        con.close()
        if getattr(err, "sqlite_errorname", "").startswith(("SQLITE_IOERR", "SQLITE_FULL", "SQLITE_CANTOPEN")):
            raise RunFailure(f"{db} could not be written ({err}): free space or choose another --out") from None
        raise InputError(f"{db} is not a usable sweep database ({err}): it was left untouched; move it away or choose another "
                         "--out") from None
    return con


def _columns(sql: str) -> list[str]:
    body = sql[sql.index("(") + 1:sql.rindex(")")]
    return [line.split()[0] for line in body.strip().splitlines() if line.strip() and not line.strip().startswith("PRIMARY")]


RESULT_COLUMNS, LEDGER_COLUMNS = _columns(SCHEMA), _columns(LEDGER)
LATER_COLUMNS = ("failure", "digest")  # added to the results table after its first release, in this order
# the results table's columns as each release wrote them (the current one first)
KNOWN_RESULT_COLUMNS = tuple(RESULT_COLUMNS[:len(RESULT_COLUMNS) - i] for i in range(len(LATER_COLUMNS) + 1))
LATER_LEDGER_COLUMNS = ("digest",)  # added to the ledger after its first release
KNOWN_LEDGER_COLUMNS = tuple(LEDGER_COLUMNS[:len(LEDGER_COLUMNS) - i] for i in range(len(LATER_LEDGER_COLUMNS) + 1))


def _foreign(con: sqlite3.Connection) -> str | None:
    """Why the open file is not one of our stores (another program's tables, or our tables' names with other
    columns), or None for a new file or one of ours (a store from before the ``failure`` or ``digest`` columns is ours).

    Pitfall avoided: a foreign file was refused as "left untouched" after a column had been added to it and its
    journal switched to WAL."""
    tables = {name: [c[1] for c in con.execute(f"PRAGMA table_info('{name}')")]
              for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type='table'") if not name.startswith("sqlite_")}
    other = sorted(set(tables) - {"results", "ledger"})
    if other:
        return f"it holds the table(s) {', '.join(other)[:80]}"
    if "results" in tables and tables["results"] not in KNOWN_RESULT_COLUMNS:
        return f"its results table has the columns {', '.join(tables['results'])[:80]}"
    if "ledger" in tables and tables["ledger"] not in KNOWN_LEDGER_COLUMNS:
        return f"its ledger table has the columns {', '.join(tables['ledger'])[:80]}"
    return None


DIGEST_VERSION = "ibcheck-row-1"
EDITED, UNVERIFIED = "EditedRow", "UnverifiedRow"  # the failure kinds of a row that is not reused
EDITED_WHY = "edited after it was written"
UNVERIFIED_WHY = "written without a digest (a store from before rows carried one), so it cannot be verified"


def row_digest(key, claim, experiment, cell, seed, status, value, error, seconds, version, failure) -> str:
    """The sha256 of a row as stored: its key (the task: claim, experiment, cell, seed, fixed settings, code) and every
    column a reader uses, the cell and the value as their stored JSON text. Written with the row, checked when it is read:
    a row edited afterwards (a value set to 1e6, a cell to d=99999) no longer matches it. It detects edits, not a forger
    who recomputes it (who is caught where a row's cell or seed is not its task's: :func:`reusable`)."""
    blob = json.dumps([DIGEST_VERSION, key, claim, experiment, cell, seed, status, value, error, seconds, version, failure],
                      separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def _stored_seconds(seconds) -> float | None:
    """Seconds as SQLite gives them back (a REAL; NaN would come back as NULL), so that the digest matches on reading."""
    try:
        x = float(seconds)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def write_row(con: sqlite3.Connection, task: Task, status: str, value, error: str | None, seconds: float, version: str,
              failure: str | None = None, overwrite: bool = False) -> None:
    """One row, one transaction: either the whole row is there or none of it, with its digest (:func:`row_digest`).
    ``overwrite``: the row replaces the one stored under its key (an edited row, measured again); otherwise a stored row
    is kept. A file that cannot take the row (a full disk, a file-size limit) is a :class:`RunFailure` saying what is kept,
    never an internal error."""
    cell, text = json.dumps(task.cell, sort_keys=True), None if value is None else json.dumps(value)
    secs = _stored_seconds(seconds)
    digest = row_digest(task.key, task.claim, task.experiment, cell, int(task.seed), status, text, error, secs, version, failure)
    try:
        with con:
            con.execute(f"INSERT OR {'REPLACE' if overwrite else 'IGNORE'} INTO results (key, claim, experiment, cell, seed, status, "
                        "value, error, seconds, code_version, created, failure, digest) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        (task.key, task.claim, task.experiment, cell, int(task.seed), status, text, error, secs, version, time.time(),
                         failure, digest))
    except sqlite3.OperationalError as err:
        raise RunFailure(f"the sweep store could not take a row ({err}); every finished row is kept: free space and run the "
                         "same command again to resume") from None


ROW_COLUMNS = "key, claim, experiment, cell, seed, status, value, error, seconds, code_version, failure, digest"


def _stored(con: sqlite3.Connection, keys: list[str]):
    """The stored rows of ``keys`` (in no particular order), every column :func:`row_digest` reads and the digest."""
    for i in range(0, len(keys), 500):
        chunk = keys[i:i + 500]
        yield from con.execute(f"SELECT {ROW_COLUMNS} FROM results WHERE key IN ({','.join('?' * len(chunk))})", chunk)


def _unverified(stored: tuple) -> str | None:
    """Why a stored row (the columns of :data:`ROW_COLUMNS`) cannot be trusted, or None: its digest does not match what
    it holds, or it has none."""
    *fields, digest = stored
    if digest is None:
        return UNVERIFIED_WHY
    try:
        return None if digest == row_digest(*fields) else EDITED_WHY
    except (TypeError, ValueError):  # a column of a type no sweep writes (bytes): edited too
        return EDITED_WHY


@dataclass(frozen=True)
class StaleRow:
    """A stored row of a task that is not reused: the task (its key, cell and seed) and why (:func:`reusable`)."""

    key: str
    cell: dict
    seed: int
    kind: str  # EditedRow or UnverifiedRow
    why: str

    def text(self) -> str:
        where = ", ".join(f"{k}={v}" for k, v in sorted(self.cell.items()))
        return f"{where + ', ' if where else ''}seed {self.seed}: {self.why}"


def reusable(con: sqlite3.Connection, tasks: list[Task], version: str) -> tuple[set[str], tuple[StaleRow, ...]]:
    """The keys of ``tasks`` whose stored row may be reused, and the stored rows that may not, each with why: a digest
    that does not match (edited after it was written), none (an older store), or a row that holds another cell, seed,
    claim, experiment or code version than its key's task (a cell changed to one not in the design). Their tasks run
    again; the rows are never fitted.

    Pitfall avoided: rows were reused by their key alone, so three values set to 1e6 were read as measurements ("0 tasks
    run, 36 reused") and a row whose cell was changed to d = 99999 was fitted there, its own seed never rerun."""
    by_key = {t.key: t for t in tasks}
    designed = {json.dumps(t.cell, sort_keys=True) for t in tasks}
    ok: set[str] = set()
    stale = []
    for stored in _stored(con, list(by_key)):
        key, claim, experiment, cell, seed, _, _, _, _, code, _, _ = stored
        task = by_key[key]
        why = _unverified(stored)
        kind = UNVERIFIED if why == UNVERIFIED_WHY else EDITED
        mine = json.dumps(task.cell, sort_keys=True)
        if (claim, experiment, cell, seed, code) != (task.claim, task.experiment, mine, task.seed, version):
            held = f"the cell {_shown_cell(cell)}, seed {seed!r}" if (cell, seed) != (mine, task.seed) else \
                f"claim {claim!r}, experiment {experiment!r}, code {code!r}"
            where = " (a cell not in the design)" if cell != mine and cell not in designed else ""
            why, kind = f"{EDITED_WHY}: it holds {held}{where}, not its task's", EDITED
        if why is None:
            ok.add(key)
        else:
            stale.append(StaleRow(key, dict(task.cell), task.seed, kind, why))
    order = {k: i for i, k in enumerate(by_key)}
    return ok, tuple(sorted(stale, key=lambda r: order[r.key]))


def _shown_cell(text) -> str:
    """A stored cell as ``d=99999`` (its JSON text, cut short, where it is not a mapping)."""
    try:
        cell = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        cell = None
    if isinstance(cell, dict):
        return ", ".join(f"{k}={v}" for k, v in sorted(cell.items()))[:80]
    return repr(str(text)[:40])


def rows_for(con: sqlite3.Connection, keys: list[str]) -> list[Row]:
    """The stored rows of ``keys``, in their order. A row whose digest does not match (edited after it was written) or
    that has none is a failed row (failure ``EditedRow`` / ``UnverifiedRow``) with no value: counted, never fitted. A
    value that is not JSON is a failed row too (``UnreadableRow``)."""
    out = []
    for stored in _stored(con, keys):
        key, _, _, cell, seed, status, value, error, secs, _, failure, _ = stored
        row = Row(_json_cell(cell, key), seed, status, None, key, error, secs, failure)
        why = _unverified(stored)
        if why is not None:
            kind = UNVERIFIED if why == UNVERIFIED_WHY else EDITED
            row = replace(row, status="failed", failure=kind, error=f"{kind}: the stored row was {why}; it is never fitted, and the "
                          "next sweep of its design measures its task again")
        elif value is not None:
            parsed, bad = _parse(value)
            row = replace(row, value=parsed) if bad is None else \
                replace(row, status="failed", failure="UnreadableRow",  # there, but unreadable: a failed row, counted
                        error=f"UnreadableRow: the stored value {str(value)[:40]!r} is {bad}")
        out.append(row)
    order = {k: i for i, k in enumerate(keys)}
    return sorted(out, key=lambda r: order[r.key])  # the design's order, not the order the workers finished in


def _parse(text) -> tuple[object, str | None]:
    """(the stored JSON value, None), or (None, why it cannot be read): edited, truncated, or nested past the
    parser's depth (100,000 brackets raised RecursionError)."""
    try:
        return json.loads(text), None
    except (TypeError, ValueError):
        return None, "not JSON"
    except RecursionError:
        return None, "nested too deep to read"


def _json(text, key: str):
    """A stored cell; a damaged one is one line naming its row, not an internal error."""
    value, why = _parse(text)
    if why is None:
        return value
    raise InputError(f"the sweep store is damaged: row {key[:12]} holds {str(text)[:40]!r}, which is {why}; move the "
                     "file away or give another --out")


def _json_cell(text, key: str) -> dict:
    cell = _json(text, key)
    if not isinstance(cell, dict):
        raise InputError(f"the sweep store is damaged: row {key[:12]} holds the cell {str(text)[:40]!r}, not a mapping; move the "
                         "file away or give another --out")
    return cell


class SweepStore:
    """A comparison's SQLite file, opened under an exclusive lock (see the module docstring).

    Use as a context manager: ``with SweepStore(path) as store: ...``."""

    def __init__(self, path: str):
        self.path = path
        self._lock_fd: int | None = None
        self.con: sqlite3.Connection | None = None
        self.discarded: list[str] = []  # the ledger's looks discarded on reading (:meth:`looks`), each with why

    def __enter__(self) -> SweepStore:
        d = os.path.dirname(os.path.abspath(self.path))
        if not os.path.isdir(d):
            raise InputError(f"database directory {d} does not exist")
        check_sides(self.path)  # before the lock creates the store: a refused store leaves no file behind
        # flock on the database file itself (SQLite's own locks are fcntl locks, independent of flock):
        # nothing beside it is written, and the lock dies with the process that holds it
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise StoreInUse(f"{self.path} is in use by another comparison; wait for it to finish, or give another --out", "out", self.path) from None
        self._lock_fd = fd
        try:
            self.con = connect(self.path)
            with self.con:
                self.con.execute(LEDGER)
                have = {row[1] for row in self.con.execute("PRAGMA table_info(ledger)")}
                for column in LATER_LEDGER_COLUMNS:  # a ledger written before the column: its entries have none (unverified)
                    if column not in have:
                        self.con.execute(f"ALTER TABLE ledger ADD COLUMN {column} TEXT")
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
    @property
    def connection(self) -> sqlite3.Connection:
        """The open connection (inside ``with``): the executor writes rows through it, with :func:`write_row`."""
        assert self.con is not None
        return self.con

    def rows(self, keys: list[str]) -> list[Row]:
        assert self.con is not None
        return rows_for(self.con, keys)

    def stored_cells(self, claim: str, experiment: str, fixed: dict, version: str) -> dict[CellKey, int]:
        """Cells and seeds of the same design stored earlier (a rerun continues from them)."""
        assert self.con is not None
        out: dict[CellKey, int] = {}
        for key, cell, seed in self.con.execute("SELECT key, cell, seed FROM results WHERE claim=? AND experiment=? AND code_version=?",
                                                (claim, experiment, version)):
            c = _json_cell(cell, key)
            if task_key(claim, experiment, c, seed, fixed, version) == key:
                ck = cell_key(c)
                out[ck] = max(out.get(ck, 0), seed + 1)
        return out

    # -- ledger ---------------------------------------------------------------------------------
    def looks(self, design: str) -> list[dict]:
        """The design's looks, oldest first, each verified: an entry whose digest does not match what it holds (edited
        after it was written), that has none (a ledger from before entries carried one) or that is not the next look
        (one removed, or one inserted) is never used. The design's ledger is discarded from that entry on (deleted from
        the file, so the looks are recomputed from the rows and recorded again), and :attr:`discarded` says which, with why.

        A value no sweep writes (alpha = -1, a fraction 'abc') is refused as a damaged store, as before.

        Pitfall avoided: ``update ledger set spent=0, alpha=0.5`` turned a consistent verdict inconclusive with no warning
        ("0 tasks run, 36 reused"), and alpha = 0.001 changed the resolution silently."""
        assert self.con is not None
        q = f"SELECT rowid, {', '.join(LEDGER_READ)}, created, digest FROM ledger WHERE design=? ORDER BY look"
        stored = list(self.con.execute(q, (design,)))
        looks = [dict(zip(LEDGER_READ, row[1:1 + len(LEDGER_READ)])) for row in stored]
        for lk in looks:  # a damaged ledger (an edited or foreign row) is one line, not an error deep in the policy
            bad = [c for c in ("look", "work", "fraction", "alpha", "spent") if isinstance(lk[c], bool) or not isinstance(lk[c], (int, float))
                   or not math.isfinite(lk[c])]
            bad += [c for c in ("budget", "boundary") if lk[c] is not None and (not isinstance(lk[c], (int, float)) or not math.isfinite(lk[c]))]
            bad = bad or [c for c, ok in (("look", lambda x: x >= 0 and x == int(x)), ("work", lambda x: x >= 0), ("fraction", lambda x: x >= 0),
                                          ("alpha", lambda x: 0 <= x <= 1), ("spent", lambda x: 0 <= x <= 1),
                                          ("budget", lambda x: x is None or x > 0)) if not ok(lk[c])]
            if bad or not isinstance(lk["rule"], str) or not isinstance(lk["data_hash"], str):
                raise InputError(f"{self.path}: the ledger's look {lk['look']!r} holds {', '.join(f'{c}={lk[c]!r}' for c in bad) or 'a bad entry'}: "
                                 "the store is damaged; move it away or give another --out")
        previous, legacy = None, all(row[-1] is None for row in stored)
        for i, row in enumerate(stored):
            why = _untrusted_look(design, i + 1, row[1:], previous, legacy)
            if why is not None:
                self._discard(design, stored[i:], why)
                return looks[:i]
            previous = row[-1]
        return looks

    def _discard(self, design: str, entries: list, why: str) -> None:
        """Delete ``entries`` (the ledger's rows from the first untrusted one on) and say so in :attr:`discarded`."""
        assert self.con is not None
        first = entries[0][1]
        said = [f"look {first!r}: {why}"] + [f"look {e[1]!r}: after look {first!r}, which was discarded" for e in entries[1:]]
        with self.con:
            self.con.executemany("DELETE FROM ledger WHERE rowid = ? AND design = ?", [(e[0], design) for e in entries])
        self.discarded += said

    def record_look(self, design: str, look, keys) -> None:
        """Append a look to the ledger (a repeated look is not recorded again), with its digest (:func:`ledger_digest`),
        chained to the design's previous entry; the digest is of the entry as the file gives it back."""
        assert self.con is not None
        if look.repeated:
            return
        with self.con:
            self.con.execute("INSERT INTO ledger VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                             (design, look.look, data_hash(keys), look.work, look.budget, look.fraction, look.alpha, look.spent,
                              look.boundary if look.boundary is None or look.boundary < 1e300 else None, look.rule, time.time(), None))
            before = self.con.execute("SELECT digest FROM ledger WHERE design=? AND look<? ORDER BY look DESC LIMIT 1",
                                      (design, look.look)).fetchone()
            row = self.con.execute(f"SELECT {', '.join(LEDGER_READ)}, created FROM ledger WHERE design=? AND look=?",
                                   (design, look.look)).fetchone()
            self.con.execute("UPDATE ledger SET digest=? WHERE design=? AND look=?",
                             (ledger_digest(design, tuple(row), None if before is None else before[0]), design, look.look))


LEDGER_READ = ("look", "data_hash", "work", "budget", "fraction", "alpha", "spent", "boundary", "rule")  # what the policy reads
LEDGER_DIGEST_VERSION = "ibcheck-look-1"
LOOK_EDITED_WHY = "edited after it was written"
LOOK_UNVERIFIED_WHY = "written without a digest (a ledger from before its entries carried one), so it cannot be verified"


def ledger_digest(design: str, fields: tuple | list, previous: str | None) -> str:
    """The sha256 of a ledger entry as stored: its design, every column (``fields``: those of :data:`LEDGER_READ` and
    ``created``, as the file gives them back: the level it spent, the rows it looked at) and the digest of the design's
    entry before it (None for the first), so that an entry edited, removed or inserted afterwards no longer matches.
    Like :func:`row_digest`, it detects edits, not a forger who recomputes it; a ledger cut after its last entry (or
    emptied) reads as an interrupted run (or none), whose looks the same command makes again from the rows."""
    blob = json.dumps([LEDGER_DIGEST_VERSION, design, *fields, previous], separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def _untrusted_look(design: str, due: int, entry: tuple, previous: str | None, legacy: bool) -> str | None:
    """Why a stored ledger entry (the columns of :data:`LEDGER_READ`, created, digest) is not the design's look ``due``
    as written after ``previous`` (the digest of the entry before it), or None. ``legacy``: no entry of the design has a
    digest (a ledger from before they carried one), else an entry without one was inserted or edited afterwards."""
    *fields, digest = entry
    look = fields[0]
    if look != due:
        return (f"not the next look (look {due} was due): look {due} is missing (removed, or this entry renumbered)"
                if isinstance(look, (int, float)) and look > due else f"not the next look (look {due} was due): an entry inserted or renumbered")
    if digest is None:
        return LOOK_UNVERIFIED_WHY if legacy else "it has no digest, unlike the entries written with it: inserted or edited afterwards"
    try:
        return None if digest == ledger_digest(design, fields, previous) else LOOK_EDITED_WHY
    except (TypeError, ValueError):  # a column of a type no sweep writes (bytes): edited too
        return LOOK_EDITED_WHY


def discarded_text(discarded: list[str], most: int = 3) -> str:
    """One line for the ledger's looks discarded on reading: how many, and why for the first ``most``."""
    shown = "; ".join(discarded[:most]) + (f"; and {len(discarded) - most} more" if len(discarded) > most else "")
    return (f"ibcheck: warning: {len(discarded)} look(s) of this comparison's sequential ledger cannot be trusted: discarded, "
            f"never used; the looks are recomputed from the rows: {shown}")
