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
import os
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
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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


def task_key(claim: str, experiment: str, cell: dict, seed: int, fixed: dict, version: str) -> str:
    blob = json.dumps({"claim": claim, "experiment": experiment, "cell": cell, "seed": seed, "fixed": fixed, "code": version},
                      sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()
