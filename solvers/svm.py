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
        return unit(self.w)


def direction_error(w: np.ndarray, reference: np.ndarray) -> float:
    """SHNGS18.thm.direction: ``|| w/||w|| - w_ref/||w_ref|| ||``, the distance between directions.

    Pitfall avoided: comparing unnormalized vectors mixes the direction with the norm, which
    grows like log t under GD on separable data; only the direction converges (at rate 1/log t)."""
    w, reference = np.asarray(w, float).ravel(), np.asarray(reference, float).ravel()
    if not (np.abs(w).max(initial=0.0) > 0 and np.abs(reference).max(initial=0.0) > 0):
        raise InputError("direction_error: a zero vector has no direction")
    return float(np.linalg.norm(unit(w) - unit(reference)))


def unit(v: np.ndarray) -> np.ndarray:
    """``v / ||v||`` at any scale: divided by its largest |entry| first.

    Pitfall avoided: ``||v||`` of a 1e-200 vector underflows to 0 (and of a 1e200 one overflows), so the direction
    came out NaN; the ratio to the largest entry is exact and its norm lies in [1, sqrt(len)]."""
    u = v / np.abs(v).max()
    return u / np.linalg.norm(u)


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
    # Normalized units in two steps, each exact in floating point up to rounding: divide by the largest
    # |entry| first (so that squares neither overflow at 1e300 nor underflow at 1e-170), then centre
    # and divide by the largest row norm. S = unit * spread maps the solver's units back.
    unit = float(np.abs(X).max(initial=0.0))
    if unit == 0.0:
        return SVMResult(False, "infeasible")  # every point is 0: y_i b cannot be 1 and -1 (or 0 >= 1 without a bias)
    Xu = X / unit
    center = Xu.mean(axis=0) if bias else np.zeros(X.shape[1])
    Xc = Xu - center  # <w, x> + b = <w, x - c> + (b + <w, c>): the same problem with b shifted
    spread = float(np.linalg.norm(Xc, axis=1).max(initial=0.0))
    if spread == 0.0:
        return SVMResult(False, "infeasible")  # every point is the same: y_i (<w, c> + b) cannot be 1 and -1
    Z = Xc / spread
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
    nz = float(np.linalg.norm(wz))
    if not (worst >= 1 - 1e-6 and math.isfinite(nz) and nz > 0):
        return SVMResult(False, f"not proven (the solver's solution violates a constraint: min y (<w, x> + b) = {worst:.6g} < 1)")
    margin = unit * (spread / nz)  # 1/||w|| in the data's units, computed without forming w
    with np.errstate(over="ignore", under="ignore"):
        wv = (wz / spread) / unit  # <w_Z, (x/unit - c)/spread> = <w_Z/(spread unit), x> - <w_Z/spread, c>
        bv = bz - float((wz / spread) @ center)
        # w = sum_i alpha_i y_i x_i: the multipliers of the scaled problem divided by S^2, S = unit * spread
        av = ((alpha / spread) / unit) / (spread * unit) if unit * spread > 0 else alpha * math.inf
    if not (np.isfinite(wv).all() and math.isfinite(bv) and margin > 0):
        # separable, and the margin is proven; only w cannot be written in float64
        return SVMResult(True, f"separable, but w (norm 1/margin = 1/{margin:.3g}) overflows float64: rescale X", margin=margin)
    return SVMResult(True, prob.status, wv, bv, av, np.flatnonzero(alpha > sv_tol * max(alpha.max(), 1e-300)), margin)
