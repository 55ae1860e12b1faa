"""The working set's Cholesky factor, shared by the engine's two active-set programs (numpy, scipy).

Both the cone program (:mod:`.gram`, Hessian ``H_FF`` over constraints) and the certificate's multiplier program
(:mod:`.multipliers`, the generators' Gram matrix ``S_FF``) are Lawson and Hanson active sets on a positive
semi-definite matrix known only by its blocks. :class:`BorderedCholesky` keeps the upper factor of the working set's
block: columns enter by a bordered update (one triangular solve, one small Cholesky: O(|F|^2 b) for b columns) and
leaving columns force a refactor.

Pitfall avoided: refactoring after every added column cost O(|F|^3) each, 10 s for a cold start at n = 1107; bordering
one column at a time, 6 s in copies of the factor (so blocks enter at once, column by column only where a block is
dependent to rounding).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.linalg as sla


class BorderedCholesky:
    """The upper Cholesky factor ``R`` of ``M[F, F]`` for a working set ``F``.

    ``block(F, P)`` returns ``M[F, P]``. A column enters only when its pivot is above ``rel`` times its diagonal (else
    it depends on F to rounding). ``strict`` also applies that test on a refactor (the multiplier program; ``diag``,
    ``M``'s diagonal, is needed only then); otherwise a refactor fails only where LAPACK's Cholesky does (the cone
    program).
    ``ok`` is False after a failed refactor."""

    def __init__(self, block: Callable[[np.ndarray, np.ndarray], np.ndarray], diag: np.ndarray | None, F: np.ndarray,
                 rel: float, strict: bool):
        self.block, self.diag, self.rel, self.strict = block, diag, rel, strict
        self.refactor(F)

    def refactor(self, F: np.ndarray) -> bool:
        self.F = np.asarray(F, int)
        self.R = np.zeros((0, 0))
        self.ok = True
        if len(self.F):
            try:
                R = sla.cholesky(self.block(self.F, self.F), lower=False, check_finite=False)
            except (np.linalg.LinAlgError, ValueError):
                self.ok = False
                return False
            if self.strict and self.diag is not None and np.any(np.diag(R) ** 2 <= self.rel * self.diag[self.F]):
                self.ok = False
                return False
            self.R = R
        return True

    def add(self, ps: list[int]) -> list[int]:
        """Border the factor with the columns ps in one block; where the block is dependent to rounding, column by
        column, leaving out a column dependent on the rest. Returns the columns added."""
        k = len(self.F)
        P = np.asarray(ps, int)
        R12 = sla.solve_triangular(self.R, self.block(self.F, P), trans="T", check_finite=False) if k else np.zeros((0, len(P)))
        Mpp = self.block(P, P)
        try:
            R22 = sla.cholesky(Mpp - R12.T @ R12, lower=False, check_finite=False)
            ok = np.diag(R22) ** 2 > self.rel * np.maximum(np.diag(Mpp), 1e-300)
        except (np.linalg.LinAlgError, ValueError):
            ok = np.zeros(len(P), bool)
        if not ok.all():
            if len(P) == 1:
                return []
            return [p for q in ps for p in self.add([q])]
        R = np.zeros((k + len(P), k + len(P)))
        R[:k, :k], R[:k, k:], R[k:, k:] = self.R, R12, R22
        self.R, self.F = R, np.concatenate([self.F, P])
        return list(ps)

    def solve(self, bF: np.ndarray) -> np.ndarray:
        """``M[F, F]^-1 bF``."""
        return sla.cho_solve((self.R, False), bF, check_finite=False)
