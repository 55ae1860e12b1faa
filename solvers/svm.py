"""The hard-margin linear SVM (SHNGS18's w_svm; FVBS23.lemma.2_1's separability check).

    minimize  1/2 ||w||^2   subject to   y_i (<w, x_i> + b) >= 1   (b = 0 without bias)

solved in cvxpy (Clarabel); the solver status is checked every time, and an infeasible
problem is reported as "not linearly separable", never as a solution.
"""
from __future__ import annotations

from dataclasses import dataclass

import cvxpy as cp
import numpy as np


@dataclass
class SVMResult:
    """``w``, ``b``, the dual variables ``alpha``, the support vectors and the solver status."""

    separable: bool
    status: str
    w: np.ndarray | None = None
    b: float = 0.0
    alpha: np.ndarray | None = None
    support: np.ndarray | None = None
    margin: float | None = None

    @property
    def direction(self) -> np.ndarray:
        return self.w / np.linalg.norm(self.w)


def hard_margin_svm(X: np.ndarray, y: np.ndarray, bias: bool = True, sv_tol: float = 1e-7) -> SVMResult:
    """Solve the hard-margin SVM; ``separable=False`` (with the status) when it is infeasible."""
    X = np.asarray(X, float)
    y = np.asarray(y, float)
    w = cp.Variable(X.shape[1])
    b = cp.Variable() if bias else cp.Constant(0.0)
    cons = [cp.multiply(y, X @ w + b) >= 1]
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w)), cons)
    prob.solve(solver=cp.CLARABEL)
    if prob.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        return SVMResult(False, prob.status)
    if prob.status != cp.OPTIMAL:
        raise RuntimeError(f"hard-margin SVM: solver status {prob.status}")
    alpha = np.maximum(np.asarray(cons[0].dual_value, float), 0.0)
    wv = np.asarray(w.value, float)
    return SVMResult(True, prob.status, wv, float(b.value) if bias else 0.0, alpha,
                     np.flatnonzero(alpha > sv_tol * max(alpha.max(), 1e-300)), 1.0 / float(np.linalg.norm(wv)))
