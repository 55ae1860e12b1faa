"""Independent random streams, one per purpose, from numpy's ``SeedSequence.spawn``.

Pitfall avoided: literal offsets (``10_000 + seed``, ``20_000 + seed``) make streams collide as
soon as seeds run past the gap (seed 10_000 of one purpose is seed 0 of the next), and say
nothing about why a number was chosen. Here the user's seed is the entropy and the purpose picks
a spawned child, so streams never overlap and each has a name.
"""
from __future__ import annotations

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
)


def stream(purpose: str, seed: int, *more: int) -> int:
    """A 63-bit seed for ``purpose`` derived from ``seed`` (and further integers, e.g. a cell index):
    the child ``SeedSequence(seed).spawn(...)[PURPOSES.index(purpose)]``, spawned again for ``more``."""
    if purpose not in PURPOSES:
        raise ValueError(f"unknown random stream {purpose!r}; add it to PURPOSES")
    ss = np.random.SeedSequence(int(seed)).spawn(len(PURPOSES))[PURPOSES.index(purpose)]
    for m in more:
        ss = ss.spawn(int(m) + 1)[int(m)]
    return int(ss.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))


def rng(purpose: str, seed: int, *more: int) -> np.random.Generator:
    """``np.random.default_rng`` on :func:`stream`."""
    return np.random.default_rng(stream(purpose, seed, *more))
