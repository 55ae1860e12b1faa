"""The hard-margin linear SVM (SHNGS18's w_svm; FVBS23.lemma.2_1's separability check).

    minimize  1/2 ||w||^2   subject to   y_i (<w, x_i> + b) >= 1   (b = 0 without bias)

solved in cvxpy (Clarabel); the solver status is checked every time, and an infeasible
problem is reported as "not linearly separable", never as a solution.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import cvxpy as cp
import numpy as np

from ibcheck.errors import InputError


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
        if self.w is None:
            raise ValueError(f"the SVM has no direction: its solver status is {self.status!r}")
        return self.w / np.linalg.norm(self.w)


def direction_error(w: np.ndarray, reference: np.ndarray) -> float:
    """SHNGS18.thm.direction: ``|| w/||w|| - w_ref/||w_ref|| ||``, the distance between directions.

    Pitfall avoided: comparing unnormalized vectors mixes the direction with the norm, which
    grows like log t under GD on separable data; only the direction converges (at rate 1/log t)."""
    w, reference = np.asarray(w, float).ravel(), np.asarray(reference, float).ravel()
    nw, nr = float(np.linalg.norm(w)), float(np.linalg.norm(reference))
    if nw == 0.0 or nr == 0.0:
        raise InputError("direction_error: a zero vector has no direction")
    return float(np.linalg.norm(w / nw - reference / nr))


def hard_margin_svm(X: np.ndarray, y: np.ndarray, bias: bool = True, sv_tol: float = 1e-7) -> SVMResult:
    """Solve the hard-margin SVM; ``separable=False`` (with the status) when it is infeasible.

    Pitfalls avoided: with a bias and one class only, every w works and the margin is unbounded
    (status ``"unbounded"``, margin inf; never "optimal" with a margin of 1e13); the data are scaled
    to unit largest norm before solving (the solver's tolerances are absolute), and w, b and the
    multipliers scaled back, so that the answer does not depend on the units of X. With a bias the
    problem is translation-invariant, so the data are centred first (b carries the offset back):
    a common offset of 1e8 read "optimal" with margin 1.875 against 1.8028, and "infeasible" for
    separable data from 3e8 on. The solution is checked against the constraints before it is
    reported; one that violates them is "not proven", never "optimal"."""
    X = np.asarray(X, float)
    y = np.asarray(y, float)
    if bias and len(np.unique(y)) == 1:
        return SVMResult(True, "unbounded", np.zeros(X.shape[1]), float(y[0]), np.zeros(len(y)), np.array([], int), math.inf)
    center = X.mean(axis=0) if bias and len(X) else np.zeros(X.shape[1])
    Xc = X - center  # <w, x> + b = <w, x - c> + (b + <w, c>): the same problem with b shifted
    scale = float(np.linalg.norm(Xc, axis=1).max(initial=0.0))
    if scale == 0.0:
        return SVMResult(False, "infeasible")  # every point is the same: y_i (<w, c> + b) cannot be 1 and -1 (or 0 < 1 without a bias)
    Z = Xc / scale
    w = cp.Variable(X.shape[1])
    b = cp.Variable() if bias else cp.Constant(0.0)
    cons = [cp.multiply(y, Z @ w + b) >= 1]
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w)), cons)
    try:
        prob.solve(solver=cp.CLARABEL)
    except cp.SolverError as err:
        return SVMResult(False, f"solver failed ({err})"[:200])
    if prob.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        return SVMResult(False, prob.status)
    if prob.status != cp.OPTIMAL:
        return SVMResult(False, f"not proven (solver status {prob.status})")
    alpha = np.maximum(np.asarray(cons[0].dual_value, float), 0.0)
    wz = np.asarray(w.value, float)
    bz = float(b.value) if bias else 0.0
    worst = float(np.min(y * (Z @ wz + bz)))
    if not worst >= 1 - 1e-6:
        return SVMResult(False, f"not proven (the solver's solution violates a constraint: min y (<w, x> + b) = {worst:.6g} < 1)")
    wv = wz / scale  # <w_Z, (x - c)/scale> = <w_Z/scale, x - c>
    bv = bz - float(wv @ center)
    # w = sum_i alpha_i y_i x_i: the multipliers of the scaled problem divided by scale^2
    return SVMResult(True, prob.status, wv, bv, alpha / scale**2,
                     np.flatnonzero(alpha > sv_tol * max(alpha.max(), 1e-300)), 1.0 / float(np.linalg.norm(wv)))
