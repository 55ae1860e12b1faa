"""Independent random streams, one per purpose, from numpy's ``SeedSequence.spawn``.

Pitfall avoided: literal offsets (``10_000 + seed``, ``20_000 + seed``) make streams collide as
soon as seeds run past the gap (seed 10_000 of one purpose is seed 0 of the next), and say
nothing about why a number was chosen. Here the user's seed is the entropy and the purpose picks
a spawned child, so streams never overlap and each has a name.

A stream is also independent per cell: :func:`cell_key` turns what a cell draws from (a dataset's own
arguments; the data and model a network is initialized for) into one more spawn index. Pitfall avoided:
``default_rng(seed)`` at every cell gives one seed the same numbers at every cell (the same cluster means at
n = 50 and n = 100, the first n points of the larger sample, the same first rows of W at d = 8 and d = 16), so a
fit over cells that treats them as independent understates or overstates its error.
"""
from __future__ import annotations

import hashlib
import math

import numpy as np

PURPOSES = (
    "test-points",          # held-out points measured after training (training.py)
    "radius-test-points",   # fresh points for `ibcheck radius` and radii()
    "kkt-test-points",      # points for the flip rates of KKT points
    "kkt-test-error",       # FVBS23.thm.3_1: fresh points for the test error of each KKT point
    "construction-test-points",
    "claim-measure",        # fresh points drawn by a claim's measure function (claim_experiments.py)
    "reproduction",         # points drawn by a reproduction (reproductions/)
    "model-init",           # random-network weights (models.py)
    "calibration",          # synthetic calibration trials (calibrate.py)
    "training-data",        # a dataset's own draws (data.py), per cell through cell_key
)
STREAMS_VERSION = 2  # 1: default_rng(seed) for every dataset and init, shared across cells; 2: per (cell, seed)


def stream(purpose: str, seed: int, *more: int) -> int:
    """A 63-bit seed for ``purpose`` derived from ``seed`` (and further integers, e.g. a cell index):
    the child ``SeedSequence(seed).spawn(...)[PURPOSES.index(purpose)]``, spawned again for ``more``.

    Built as ``SeedSequence(seed, spawn_key=(index, *more))``, the same child without spawning ``m + 1`` of them (a
    cell key is a 62-bit integer)."""
    if purpose not in PURPOSES:
        raise ValueError(f"unknown random stream {purpose!r}; add it to PURPOSES")
    if any(int(m) < 0 for m in more):
        raise ValueError(f"a stream's spawn indices are non-negative integers, not {more!r}")
    ss = np.random.SeedSequence(int(seed), spawn_key=(PURPOSES.index(purpose), *(int(m) for m in more)))
    return int(ss.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))


def cell_key(*parts) -> int:
    """A 62-bit spawn index for a cell: a hash of ``parts`` (numbers, strings, booleans, None, tuples of them), the
    same on every machine and Python. Integers and integral floats hash alike (d = 8 and d = 8.0 are one cell)."""
    def text(v) -> str:
        if v is None or isinstance(v, (bool, np.bool_)):
            return repr(None if v is None else bool(v))
        if isinstance(v, (int, np.integer)):
            return str(int(v))
        if isinstance(v, (float, np.floating)):
            f = float(v)
            return str(int(f)) if math.isfinite(f) and f.is_integer() else repr(f)
        if isinstance(v, str):
            return repr(v)
        if isinstance(v, (tuple, list)):
            return "(" + ",".join(text(u) for u in v) + ")"
        raise TypeError(f"a cell key is made of numbers, strings, booleans and tuples, not {type(v).__name__}")
    digest = hashlib.sha256(text(tuple(parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 2


def rng(purpose: str, seed: int, *more: int) -> np.random.Generator:
    """``np.random.default_rng`` on :func:`stream`."""
    return np.random.default_rng(stream(purpose, seed, *more))
