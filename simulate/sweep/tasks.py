"""Tasks and their keys: every (cell, seed) of a design is one task, stored once under its key.

Each task is keyed by a hash of its config (claim, experiment, cell, seed, fixed settings)
and the code version (a hash of every source file of theory/, solvers/ and simulate/, and of the
versions of torch, numpy, scipy, cvxpy and the other numeric libraries). Only the parent process
writes, one row per transaction, so a sweep killed at any point (kill -9) and rerun finds
every finished row intact, skips it, and runs the rest: no lost rows, no duplicates, no
half-written row (:mod:`simulate.sweep.executor` runs them, :mod:`simulate.sweep.store` keeps them).
A cell is keyed by :func:`cell_key`, and a set of rows (one look of the ledger) by :func:`data_hash`.
"""
from __future__ import annotations

import functools
import hashlib
import json
import marshal
import os
import sysconfig
import types
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

from ibcheck.theory.registry import claim_files

CellKey = tuple  # tuple(sorted(cell.items()))


def cell_key(cell: dict) -> CellKey:
    """A cell as a hashable key (its items sorted)."""
    return tuple(sorted(cell.items()))


def data_hash(keys) -> str:
    """The hash of a set of task keys: one look of the ledger, whatever order its rows came in."""
    return hashlib.sha256("\n".join(sorted(keys)).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Task:
    key: str
    claim: str
    experiment: str
    cell: dict
    seed: int
    fixed: dict


LIBRARIES = ("torch", "numpy", "scipy", "cvxpy", "sympy", "mpmath", "foolbox", "pyscipopt", "scikit-learn")


def package_root() -> str:
    """The folder holding ``theory``, ``solvers`` and ``simulate`` (this file is ``simulate/sweep/tasks.py``).

    Pitfall avoided: two levels up is ``simulate`` itself, where no ``theory``, ``solvers`` or ``simulate`` folder
    lies: the code version then hashed no source file at all, and a changed engine reused the rows of the old one."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def source_files(root: str | None = None, packages=("theory", "solvers", "simulate")) -> list[str]:
    """Every Python source file a measurement can reach: the three layers of ibcheck."""
    root = root or package_root()
    out = []
    for pkg in packages:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, pkg)):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            out += [os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(".py")]
    return out


@functools.lru_cache(maxsize=1)
def _library_versions() -> str:
    out = []
    for lib in ("ibcheck",) + LIBRARIES:
        try:
            out.append(f"{lib}={version(lib)}")
        except PackageNotFoundError:
            out.append(f"{lib}=absent")
    return "\n".join(out)


def code_version(root: str | None = None) -> str:
    """A short hash of every source file a measurement can reach and of the numeric libraries' versions.

    Rows computed by other code (a changed trainer, data generator, loss or radius) or other
    library versions are never reused: their keys differ. Paths enter relative to the package
    root, so a copy of the tree elsewhere keys the same rows.
    """
    root = root or package_root()
    h = hashlib.sha256()
    for path in sorted(source_files(root)):
        h.update(os.path.relpath(path, root).encode() + b"\0")
        with open(path, "rb") as f:
            h.update(f.read() + b"\0")
    for path in claim_files():  # a user's claims and experiments
        with open(path, "rb") as f:
            h.update(b"user\0" + f.read() + b"\0")
    h.update(_library_versions().encode())
    try:
        v = version("ibcheck")
    except PackageNotFoundError:
        v = "dev"
    return v + "-" + h.hexdigest()[:12]


def _own_file(path: str | None) -> bool:
    """A source file of the user's (not the standard library's, not an installed package's, not ibcheck's own)."""
    if not path or not os.path.isfile(path):
        return False
    path = os.path.realpath(path)
    shared = {os.path.realpath(p) for p in (sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"])}
    shared |= {os.path.realpath(os.path.join(package_root(), pkg)) for pkg in ("theory", "solvers", "simulate", "ibcheck")}
    return not any(path.startswith(p + os.sep) for p in shared)


def measure_version(measure, depth: int = 3) -> str:
    """A hash of a user's measure: its code (bytecode and constants, nested functions included), and the source files
    of the helper functions and modules it reaches through its globals (``depth`` levels).

    Pitfall avoided: only the files named by ``--claims`` entered the code hash, so a changed measure given through
    the API (``compare(store=...)``) or a changed helper module reused the rows of the old one."""
    h = hashlib.sha256()
    seen: set[int] = set()

    def visit(obj, level: int) -> None:
        if id(obj) in seen or level > depth:
            return
        seen.add(id(obj))
        if isinstance(obj, types.ModuleType):
            f = getattr(obj, "__file__", None)
            if f is not None and _own_file(f):
                with open(f, "rb") as fh:
                    h.update(b"module\0" + fh.read())
            return
        fn = getattr(obj, "__func__", obj)
        code = getattr(fn, "__code__", None)
        if code is None:
            return
        h.update(marshal.dumps(code))
        if _own_file(code.co_filename):
            with open(code.co_filename, "rb") as fh:
                h.update(b"file\0" + fh.read())
        names = set(code.co_names)
        for n in sorted(names):
            g = getattr(fn, "__globals__", {}).get(n)
            if isinstance(g, (types.FunctionType, types.ModuleType, types.MethodType)):
                visit(g, level + 1)
        for cell in getattr(fn, "__closure__", None) or ():
            try:
                visit(cell.cell_contents, level + 1)
            except ValueError:  # an empty cell
                pass

    visit(measure, 0)
    return h.hexdigest()[:12]


def task_key(claim: str, experiment: str, cell: dict, seed: int, fixed: dict, version: str) -> str:
    blob = json.dumps({"claim": claim, "experiment": experiment, "cell": cell, "seed": seed, "fixed": fixed, "code": version},
                      sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()
