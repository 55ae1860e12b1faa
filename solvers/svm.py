"""The hard-margin linear SVM (SHNGS18's w_svm; FVBS23.lemma.2_1's separability check).

    minimize  1/2 ||w||^2   subject to   y_i (<w, x_i> + b) >= 1   (b = 0 without bias)

solved in cvxpy (Clarabel) in normalized units; the solver status is checked every time, and every answer is
verified before it is reported:

* "optimal": a hyperplane whose margins are positive beyond their rounding error (a proven lower bound on the
  margin) and a dual point (a pair of points of the two classes' convex hulls, or a point of the hull of the
  ``y_i x_i`` without a bias) whose distance bounds the margin from above, within ``RTOL`` of each other;
* "infeasible": an exact overlap of the classes, ``sum_i beta_i y_i x_i = 0`` (and ``sum_i beta_i y_i = 0`` with a
  bias) for some ``beta >= 0``, not all 0, verified in rational arithmetic on the data as given (Farkas: no
  hyperplane can then have every ``y_i (<w, x_i> + b) > 0``);
* "not proven" (``separable = None``) where neither can be verified: the data are separable or not at a margin
  below float64 resolution. Never "infeasible" for that.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

import cvxpy as cp
import numpy as np

from ibcheck.errors import InputError
from ibcheck.theory.result import Result, plain

U = 2.0 ** -53  # float64's unit roundoff
RTOL = 1e-6  # "optimal" when the proven bracket on the margin is this tight (relative)
MAX_SUPPORT = 40  # the largest overlap verified in rational arithmetic (larger ones: :func:`_perturbed_overlap`)


@dataclass
class SVMResult(Result):
    """``w``, ``b``, the dual variables ``alpha``, the support vectors and the solver status.

    ``separable`` is True or False only where proven (``evidence`` says by what), None where float64 cannot decide.
    As every result: ``as_json()`` (plain data), ``to_json()`` (its JSON text), ``text()`` and ``save(directory)``.
    Pitfall avoided: the SVM's result had no JSON methods, though docs/api.md says every result has them."""

    name: ClassVar[str] = "svm"

    separable: bool | None
    status: str
    w: np.ndarray | None = None
    b: float = 0.0
    alpha: np.ndarray | None = None
    support: np.ndarray | None = None
    margin: float | None = None
    evidence: str = ""

    @property
    def direction(self) -> np.ndarray:
        if self.w is None:
            raise ValueError(f"the SVM has no direction: its solver status is {self.status!r}")
        return unit(self.w)

    def as_json(self) -> dict:
        """Plain data: the arrays as lists, an infinite margin (one class, with a bias) as None, as JSON has no infinity."""
        return plain({"separable": self.separable, "status": self.status, "margin": self.margin, "w": self.w, "b": self.b,
                      "alpha": self.alpha, "support": self.support, "evidence": self.evidence})

    def heading(self) -> str:
        said = {True: "separable", False: "not separable", None: "separability not proven"}[self.separable]
        margin = f", margin {self.margin:.6g}" if self.margin is not None else ""
        return f"hard-margin SVM: {said}{margin} ({self.status})"

    def table(self) -> list[dict]:
        return [{"field": k, "value": v} for k, v in self.as_json().items() if k in ("separable", "status", "margin", "b", "evidence")]


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


# -- normalized units ------------------------------------------------------------------------------------------------
def _exponents(A: np.ndarray, axis: int) -> np.ndarray:
    """Per column (axis 0) or row (axis 1): e with max |entry| in [2^(e-1), 2^e); 0 where all are 0."""
    top = np.max(np.abs(A), axis=axis, initial=0.0)
    return np.where(top > 0, np.frexp(top)[1], 0).astype(int)


@dataclass(frozen=True)
class _Units:
    """The data in normalized units, column by column: ``z_ij = (x_ij / 2^e_j - c_j) / 2^f_j`` (c the column mean in
    the units 2^e_j with a bias, else 0), so that every live column has largest |entry| in [1/2, 1). Every scaling is
    by a power of two; only the subtraction of c rounds. A hyperplane ``(v, b)`` of z is ``w_j = v_j 2^-E_j``
    (``E = e + f``), ``b_x = b - sum_j v_j c_j 2^-f_j`` of x."""

    Z: np.ndarray
    e: np.ndarray
    f: np.ndarray
    c: np.ndarray
    live: np.ndarray

    @property
    def E(self) -> np.ndarray:
        return self.e + self.f


def _units(X: np.ndarray, bias: bool) -> _Units:
    e = _exponents(X, 0)
    Xs = np.ldexp(X, -e[None, :])
    c = Xs.mean(axis=0) if bias else np.zeros(X.shape[1])
    Xc = Xs - c
    f = _exponents(Xc, 0)
    live = np.any(Xc != 0, axis=0)
    return _Units(np.ldexp(Xc, -f[None, :]), e, f, c, live)


def _norm_pow2(values: np.ndarray, exps: np.ndarray) -> tuple[float, int]:
    """``||values * 2^exps||`` as ``(mantissa, k)``, the norm being ``mantissa * 2^k``, without overflow or underflow."""
    nz = values != 0
    if not nz.any():
        return 0.0, 0
    k = int(np.max(np.frexp(values[nz])[1] + exps[nz]))
    return float(np.linalg.norm(np.ldexp(values[nz], exps[nz] - k))), k


# -- candidates and their verification -------------------------------------------------------------------------------
@dataclass
class _Candidate:
    name: str
    v: np.ndarray
    b: float
    beta: np.ndarray | None  # the solver's multipliers (any scale), or None


def _solve(T: _Units, y: np.ndarray, bias: bool, shift: np.ndarray, weights: np.ndarray | None, name: str) -> tuple[str, _Candidate | None]:
    """The SVM on ``Y = Z 2^shift`` (column by column), objective ``1/2 sum weights_j u_j^2``; ``v = u 2^shift``."""
    Y = np.ldexp(T.Z, shift[None, :])
    u = cp.Variable(Y.shape[1])
    b = cp.Variable() if bias else None
    lin = Y @ u + b if b is not None else Y @ u
    cons = [cp.multiply(y, lin) >= 1]
    obj = cp.sum_squares(u) if weights is None else cp.sum_squares(cp.multiply(np.sqrt(weights), u))
    prob = cp.Problem(cp.Minimize(0.5 * obj), cons)
    try:
        prob.solve(solver=cp.CLARABEL)
    except cp.SolverError as err:
        return f"solver failed ({err})"[:200], None
    if prob.status != cp.OPTIMAL or u.value is None:
        return str(prob.status), None
    v = np.where(T.live, np.ldexp(np.asarray(u.value, float), shift), 0.0)
    dual = cons[0].dual_value
    beta = np.maximum(np.asarray(dual, float), 0.0) if dual is not None else None
    return str(prob.status), _Candidate(name, v, float(b.value) if b is not None else 0.0, beta)


def _margins(T: _Units, y: np.ndarray, v: np.ndarray, b: float) -> tuple[np.ndarray, np.ndarray]:
    """``m_i = y_i (<v, z_i> + b)`` and a bound on how far each is from the exact margin of the hyperplane of x that
    ``(v, b)`` stands for (rounding of z and of the sums, and z's underflow)."""
    d = T.Z.shape[1]
    m = y * (T.Z @ v + b)
    mag = np.abs(T.Z) @ np.abs(v) + abs(b)
    tiny = float(np.sum(np.abs(v) * np.ldexp(1.0, np.maximum(-1070 - T.f, -1100))))
    return m, 2.0 * (d + 4) * U * mag + tiny


def _lower(T: _Units, y: np.ndarray, cand: _Candidate) -> tuple[float, float]:
    """(proven lower bound on the geometric margin in the units of x, the candidate's own margin); -inf where the
    candidate does not separate beyond its rounding."""
    m, err = _margins(T, y, cand.v, cand.b)
    nm, k = _norm_pow2(cand.v, -T.E)
    worst = float(np.min(m - err))
    if not (nm > 0 and math.isfinite(nm)) or not worst > 0:
        return -math.inf, -math.inf
    with np.errstate(over="ignore", under="ignore"):
        return float(np.ldexp(worst / nm, -k)), float(np.ldexp(float(np.min(m)) / nm, -k))


def _balanced(beta: np.ndarray, y: np.ndarray, bias: bool) -> np.ndarray | None:
    """beta scaled to a point of the hulls: each class's weights sum to 1 with a bias, all of them to 1 without."""
    beta = np.maximum(beta, 0.0)
    if not bias:
        s = float(beta.sum())
        return beta / s if s > 0 and math.isfinite(s) else None
    out = np.zeros_like(beta)
    for cls in (1.0, -1.0):
        mask = y == cls
        s = float(beta[mask].sum())
        if not (s > 0 and math.isfinite(s)):
            return None
        out[mask] = beta[mask] / s
    return out


def _upper(T: _Units, y: np.ndarray, beta: np.ndarray | None, bias: bool) -> float:
    """An upper bound on the margin from any ``beta >= 0``: half the distance between the two hull points (with a bias),
    the distance from 0 to the hull point of the ``y_i x_i`` (without), in the units of x, rounding included."""
    if beta is None:
        return math.inf
    bb = _balanced(beta, y, bias)
    if bb is None:
        return math.inf
    n = len(y)
    g = (bb * y) @ T.Z
    err = 2.0 * (n + 4) * U * (bb @ np.abs(T.Z))
    nm, k = _norm_pow2(np.where(T.live, np.abs(g) + err, 0.0), T.E)
    with np.errstate(over="ignore", under="ignore"):
        val = float(np.ldexp(nm, k))
    return val / 2 if bias else val


# -- an exact overlap ------------------------------------------------------------------------------------------------
def _exact_rows(X: np.ndarray, y: np.ndarray, S: np.ndarray, bias: bool) -> np.ndarray:
    """The rows of ``M beta_S = 0``: ``sum_i beta_i y_i x_ij`` per column (and ``sum_i beta_i y_i`` with a bias)."""
    M = (y[S][None, :] * X[S].T)
    return np.vstack([M, y[S][None, :]]) if bias else M


def _nullspace(rows: list[list[Fraction]], ncols: int) -> list[list[Fraction]]:
    """A basis of the null space of a rational matrix (reduced row echelon form, exact)."""
    R = [r[:] for r in rows]
    pivots: list[int] = []
    r = 0
    for c in range(ncols):
        piv = next((i for i in range(r, len(R)) if R[i][c] != 0), None)
        if piv is None:
            continue
        R[r], R[piv] = R[piv], R[r]
        inv = 1 / R[r][c]
        R[r] = [v * inv for v in R[r]]
        for i in range(len(R)):
            if i != r and R[i][c] != 0:
                fac = R[i][c]
                R[i] = [a - fac * p for a, p in zip(R[i], R[r])]
        pivots.append(c)
        r += 1
        if r == len(R):
            break
    basis = []
    for fc in (c for c in range(ncols) if c not in pivots):
        vec = [Fraction(0)] * ncols
        vec[fc] = Fraction(1)
        for i, pc in enumerate(pivots):
            vec[pc] = -R[i][fc]
        basis.append(vec)
    return basis


def _verify_overlap(X: np.ndarray, y: np.ndarray, S: np.ndarray, beta_S: np.ndarray, bias: bool) -> list[Fraction] | None:
    """Exact weights ``beta >= 0`` (not all 0) on the points S with ``M beta = 0``, or None: the null space of M is
    computed in rational arithmetic from the independent rows (chosen by a pivoted QR in float64), the float weights
    projected onto it, and every row of M checked exactly against the result."""
    from scipy.linalg import qr  # heavy: scipy (loaded on first use)

    M = _exact_rows(X, y, S, bias)
    keep = np.flatnonzero(np.any(M != 0, axis=1))
    if not len(keep):
        vec = [Fraction(1)] * len(S)
        return vec
    Mk = M[keep]
    scale = np.ldexp(1.0, -_exponents(Mk, 1))[:, None]
    _, Rq, piv = qr((Mk * scale).T, mode="economic", pivoting=True)
    diag = np.abs(np.diag(Rq))
    rank = int(np.sum(diag > diag.max(initial=0.0) * 1e-13)) if diag.size else 0
    chosen = keep[np.sort(piv[:min(rank + 2, len(piv))])]  # a little more than the float rank: the exact rank may be larger
    rows = [[Fraction(float(v)) for v in M[i]] for i in chosen]
    basis = _nullspace(rows, len(S))
    if not basis:
        return None
    B = np.array([[float(v) for v in vec] for vec in basis]).T  # (|S|, k)
    coef, *_ = np.linalg.lstsq(B, beta_S, rcond=None)
    cands = [[Fraction(float(c)) for c in coef]] + [[Fraction(1 if j == i else 0) for j in range(len(basis))] for i in range(len(basis))]
    for co in cands:
        vec = [sum((c * bv[i] for c, bv in zip(co, basis)), Fraction(0)) for i in range(len(S))]
        if all(v <= 0 for v in vec):
            vec = [-v for v in vec]
        if not (all(v >= 0 for v in vec) and any(v > 0 for v in vec)):
            continue
        Mf = [[Fraction(float(v)) for v in M[i]] for i in range(len(M)) if i not in set(chosen.tolist())]
        if all(sum((a * b for a, b in zip(row, vec)), Fraction(0)) == 0 for row in Mf):
            return vec
    return None


def _overlap(X: np.ndarray, y: np.ndarray, T: _Units, bias: bool) -> str | None:
    """A proof that the classes overlap (the data are not linearly separable), or None. First an exact pair: a point
    with both labels (with a bias), a point at 0 or a point and its negative with opposite labels (without); then a
    vertex of ``{beta >= 0, sum beta = 1, sum beta_i y_i z_i = 0 (, sum beta_i y_i = 0)}`` from HiGHS's simplex,
    verified exactly on the data as given (:func:`_verify_overlap`)."""
    A = y[:, None] * (np.hstack([X, np.ones((len(X), 1))]) if bias else X) + 0.0  # + 0.0: -0.0 and 0.0 alike
    if not bias:
        zero = np.flatnonzero(~np.any(A != 0, axis=1))
        if len(zero):
            return f"x_{zero[0]} = 0: y <w, x> = 0 for every w"
    seen = {row.tobytes(): i for i, row in enumerate(A)}
    for k, row in enumerate(A):
        i = seen.get((-row + 0.0).tobytes())
        if i is not None and i != k:
            return (f"x_{i} and x_{k} are the same point with opposite labels" if bias
                    else f"y_{i} x_{i} = -y_{k} x_{k}: the two margins are opposite for every w")
    from scipy.optimize import linprog  # heavy: scipy (loaded on first use)

    Zl = T.Z[:, T.live]
    rows = [(y[:, None] * Zl).T]
    if bias:
        rows.append(y[None, :])
    rows.append(np.ones((1, len(y))))
    A_eq = np.vstack(rows)
    b_eq = np.zeros(len(A_eq))
    b_eq[-1] = 1.0
    tries = []
    try:
        res = linprog(np.zeros(len(y)), A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method="highs-ds")
        if res.status == 0 and res.x is not None:
            tries.append(np.asarray(res.x, float))
    except ValueError:
        pass
    central = _nearest_points(Zl, y, bias)  # the interior of the overlap: a vertex may rest on a rounding error
    if central is not None:
        tries.append(central)
    eq = f"sum_i beta_i y_i x_i = 0{' and sum_i beta_i y_i = 0' if bias else ''} with beta >= 0"
    for x in tries:
        top = float(x.max(initial=0.0))
        S = np.flatnonzero(x > 1e-12 * top) if top > 0 else np.array([], int)
        if not len(S):
            continue
        if len(S) <= MAX_SUPPORT:
            beta = _verify_overlap(X, y, S, x[S], bias)
            if beta is not None:
                pts = ", ".join(str(int(i)) for i, b in zip(S, beta) if b > 0)
                return f"an exact overlap of the classes on points {pts}: {eq}, verified in rational arithmetic"
        if _perturbed_overlap(X, y, S, x[S], bias):
            return (f"an exact overlap of the classes on {len(S)} points: {eq}, proven in float64 with its rounding bounds (the "
                    "float weights are closer to the exact null space than their smallest entry)")
    return None


def _perturbed_overlap(X: np.ndarray, y: np.ndarray, S: np.ndarray, beta: np.ndarray, bias: bool) -> bool:
    """Whether an exact ``beta' >= 0`` with ``M beta' = 0`` lies within reach of the float weights: for M (its rows scaled
    by powers of two, which keeps its null space) of full row rank, ``beta' = beta - M^+ M beta`` is exact and
    ``||beta' - beta|| <= ||M beta|| / sigma_min(M)``; with ``||M beta||`` bounded above (its rounding included) and
    ``sigma_min`` below (less a backward error of 8 (rows + cols) u sigma_max), beta' > 0 where that is below min beta.
    For the large supports that rational arithmetic cannot afford (a 100 x 100 elimination takes seconds to minutes)."""
    M = _exact_rows(X, y, S, bias)
    M = M[np.any(M != 0, axis=1)]
    M = np.ldexp(M, -_exponents(M, 1)[:, None])
    r, k = M.shape
    if not r or k <= r or not (beta > 0).all():
        return False
    b = beta / float(beta.max())
    s = np.linalg.svd(M, compute_uv=False)
    slack = 8.0 * (r + k) * U * float(s[0])
    if s[r - 1] <= 4 * slack:
        return False
    res = np.abs(M @ b) + 2.0 * (k + 4) * U * (np.abs(M) @ np.abs(b))
    rho = float(np.linalg.norm(res)) * (1 + 8 * U)
    return rho / (float(s[r - 1]) - slack) < float(b.min()) * (1 - 1e-9)


def _nearest_points(Zl: np.ndarray, y: np.ndarray, bias: bool) -> np.ndarray | None:
    """``argmin ||sum_i beta_i y_i z_i||`` over the hulls (Clarabel's interior point: a central point of the overlap)."""
    beta = cp.Variable(len(y), nonneg=True)
    cons = [cp.sum(beta[y > 0]) == 1, cp.sum(beta[y < 0]) == 1] if bias else [cp.sum(beta) == 1]
    prob = cp.Problem(cp.Minimize(cp.norm(Zl.T @ cp.multiply(y, beta))), cons)
    try:
        prob.solve(solver=cp.CLARABEL)
    except cp.SolverError:
        return None
    if prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or beta.value is None:
        return None
    return np.maximum(np.asarray(beta.value, float), 0.0)


# -- the SVM ---------------------------------------------------------------------------------------------------------
def hard_margin_svm(X: np.ndarray, y: np.ndarray, bias: bool = True, sv_tol: float = 1e-7) -> SVMResult:
    """Solve the hard-margin SVM and say what is proven: "optimal" (a verified bracket on the margin), "infeasible" (an
    exact overlap of the classes), "unbounded" (one class with a bias), or "not proven" (``separable=None``).

    Pitfalls avoided: with a bias and one class only, every w works and the margin is unbounded (status
    ``"unbounded"``, margin inf; never "optimal" with a margin of 1e13). The solver's tolerances are absolute, so the
    data are solved in normalized units (:class:`_Units`: every column at unit scale, centred with a bias) and scaled
    back: a common offset of 1e8 read "optimal" with margin 1.875 against 1.8028 and "infeasible" for separable data from
    3e8 on; separable data with margin 1e-9 at spread 1, or with columns at 1e200 and 1, read "infeasible". The margin
    in the units of the data is solved three ways (the plain problem, the problem with every column at unit scale, and
    that problem weighted back to the data's metric), each answer verified, and "optimal" reported only where a
    hyperplane and a dual point bracket the margin within RTOL."""
    X = np.asarray(X, float)
    y = np.asarray(y, float)
    if bias and len(np.unique(y)) == 1:
        return SVMResult(True, "unbounded", np.zeros(X.shape[1]), float(y[0]), np.zeros(len(y)), np.array([], int), math.inf,
                         "one class: every w works with b = y")
    T = _units(X, bias)
    d = X.shape[1]
    live = T.live
    cands: list[_Candidate] = []
    statuses: list[str] = []
    if live.any():
        EM = int(T.E[live].max())
        Em = int(T.E[live].min())
        plain = np.where(live, T.E - EM, 0)
        plain = plain - _row_exp(np.ldexp(T.Z, plain[None, :]))
        status, cand = _solve(T, y, bias, plain, None, "plain")
        statuses.append(f"plain: {status}")
        if cand is not None:
            cands.append(cand)
        best = _best(T, y, cands, bias, X)
        if best is None or not best[3]:
            col = np.full(d, -_row_exp(T.Z))
            status, cand = _solve(T, y, bias, col, None, "column")
            statuses.append(f"unit columns: {status}")
            if cand is not None:
                cands.append(cand)
                weights = np.where(live, np.ldexp(1.0, np.maximum(2 * (Em - T.E), -1100)), 1.0)
                status, cand = _solve(T, y, bias, col, weights, "weighted")
                statuses.append(f"weighted: {status}")
                if cand is not None:
                    cands.append(cand)
            best = _best(T, y, cands, bias, X)
        if best is not None:
            return _report(X, y, T, bias, best, sv_tol)
    proof = _overlap(X, y, T, bias)
    if proof is not None:
        return SVMResult(False, "infeasible", evidence=proof)
    why = "; ".join(statuses) or "every column is constant"
    return SVMResult(None, "not proven (neither a separating hyperplane nor an exact overlap of the classes could be verified in float64: "
                     f"the data are separable or not at a margin below its resolution; solver statuses: {why})"[:400])


def _row_exp(Y: np.ndarray) -> int:
    """The exponent of the largest row norm of Y (a power of two to divide it by)."""
    top = float(np.max(np.linalg.norm(Y, axis=1), initial=0.0))
    return int(np.frexp(top)[1]) if top > 0 and math.isfinite(top) else 0


def _best(T: _Units, y: np.ndarray, cands: list[_Candidate], bias: bool, X: np.ndarray | None = None):
    """(candidate with the best proven margin, its proven lower bound, the best upper bound, tight) or None where no
    candidate separates beyond rounding."""
    lows = [(_lower(T, y, c), c) for c in cands]
    ok = [(lo, c) for lo, c in lows if lo[0] > 0]
    if not ok:
        return None
    (lo, _), cand = max(ok, key=lambda t: t[0][0])
    up = min((_upper(T, y, beta, bias) for c in cands for beta in _dual_points(T, y, c)), default=math.inf)
    if not up - lo <= RTOL * up and X is not None:
        for c in cands:  # the float hull point cannot cancel columns 1e400 apart: the exact one on the support vectors
            m, _ = _margins(T, y, c.v, c.b)
            for tol in (1e-9, 1e-6):
                up = min(up, _exact_upper(X, y, np.flatnonzero(m <= float(np.min(m)) * (1 + tol)), bias))
    tight = up - lo <= RTOL * up
    return cand, lo, up, tight


def _dual_points(T: _Units, y: np.ndarray, cand: _Candidate) -> list[np.ndarray]:
    """The solver's multipliers and the same with its near-zero entries set to 0 (on the points that are not support
    vectors of its own hyperplane, and below 1e-12 .. 1e-6 of the largest): any ``beta >= 0`` bounds the margin, so
    each is tried. Pitfall avoided: a multiplier of 7e-16 on a point at 1e200 (in a column whose scale is 1) put the
    bound at 1e185 where the margin is 1."""
    if cand.beta is None:
        return []
    beta = cand.beta
    top = float(beta.max(initial=0.0))
    m, _ = _margins(T, y, cand.v, cand.b)
    out = [beta, np.where(m <= float(np.min(m)) * (1 + 1e-7), beta, 0.0)]
    out += [np.where(beta >= t * top, beta, 0.0) for t in (1e-12, 1e-9, 1e-6)]
    return out


def _exact_upper(X: np.ndarray, y: np.ndarray, S: np.ndarray, bias: bool) -> float:
    """The margin bound of the nearest point of the hulls restricted to S (the support vectors of a candidate), solved in
    rational arithmetic on the data as given (``min ||sum_S beta_i y_i x_i||`` over the simplices is a linear system
    on its affine hull); inf where that point leaves the hulls, the system is singular or S is too large."""
    S = np.asarray(S, int)
    if not len(S) or len(S) > 60 or len(S) * X.shape[1] > 20000 or (bias and len(np.unique(y[S])) < 2):
        return math.inf
    A = [[Fraction(float(v)) * (1 if y[i] > 0 else -1) for v in X[i]] for i in S]  # the rows y_i x_i, exactly
    k = len(S)
    G = [[sum((a * b for a, b in zip(A[i], A[j])), Fraction(0)) for j in range(k)] for i in range(k)]
    groups = [y[S] > 0, y[S] < 0] if bias else [np.ones(k, bool)]
    g = len(groups)
    # [G  E; E^T 0] [beta; mu] = [0; 1]: E's columns are the classes' indicator vectors
    rows = [G[i] + [Fraction(1 if grp[i] else 0) for grp in groups] + [Fraction(0)] for i in range(k)]
    rows += [[Fraction(1 if grp[i] else 0) for i in range(k)] + [Fraction(0)] * g + [Fraction(1)] for grp in groups]
    sol = _solve_exact(rows, k + g)
    if sol is None:
        return math.inf
    beta = sol[:k]
    if any(b < 0 for b in beta):
        return math.inf
    Q = sum((beta[i] * G[i][j] * beta[j] for i in range(k) for j in range(k) if beta[i] and beta[j]), Fraction(0))
    if Q < 0:
        return math.inf
    return _sqrt_up(Q) / 2 if bias else _sqrt_up(Q)


def _solve_exact(rows: list[list[Fraction]], n: int) -> list[Fraction] | None:
    """The unique solution of a square rational system (augmented rows), or None where it is singular."""
    R = [r[:] for r in rows]
    for c in range(n):
        piv = next((i for i in range(c, n) if R[i][c] != 0), None)
        if piv is None:
            return None
        R[c], R[piv] = R[piv], R[c]
        inv = 1 / R[c][c]
        R[c] = [v * inv for v in R[c]]
        for i in range(n):
            if i != c and R[i][c] != 0:
                fac = R[i][c]
                R[i] = [a - fac * p for a, p in zip(R[i], R[c])]
    return [R[i][n] for i in range(n)]


def _sqrt_up(Q: Fraction) -> float:
    """``sqrt(Q)`` rounded up (a few ulps), at any magnitude a float64 can hold."""
    if Q == 0:
        return 0.0
    k = (Q.numerator.bit_length() - Q.denominator.bit_length()) // 2
    scaled = Q / Fraction(4) ** k if k >= 0 else Q * Fraction(4) ** (-k)
    with np.errstate(over="ignore", under="ignore"):
        return float(np.ldexp(math.sqrt(float(scaled)) * (1 + 8 * U), k))


def _report(X, y, T: _Units, bias: bool, best, sv_tol: float) -> SVMResult:
    cand, lo, up, tight = best
    m, _ = _margins(T, y, cand.v, cand.b)
    mmin = float(np.min(m))
    _, margin = _lower(T, y, cand)
    if not tight:
        return SVMResult(True, f"separable (proven: a hyperplane with margin >= {lo:.6g}), but the maximum margin is not proven: "
                         f"it lies in [{lo:.6g}, {up:.6g}]", evidence=f"a separating hyperplane ({cand.name} program), verified with its rounding")
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        wv = np.ldexp(cand.v / mmin, -T.E)
        bv = (cand.b - float(np.sum(np.ldexp(cand.v * T.c, -T.f)))) / mmin
    evidence = (f"margin in [{lo:.9g}, {up:.9g}]: a separating hyperplane ({cand.name} program) verified with its rounding, "
                "and a dual point of the hulls")
    if not (np.isfinite(wv).all() and math.isfinite(bv)):
        # separable, and the margin is proven; only w cannot be written in float64
        return SVMResult(True, f"separable, but w (norm 1/margin = 1/{margin:.3g}) overflows float64: rescale X", margin=margin, evidence=evidence)
    beta = cand.beta if cand.beta is not None else np.zeros(len(y))
    total = float(beta.sum())
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        alpha = (beta / total) / margin / margin if total > 0 else np.zeros(len(y))
    support = np.flatnonzero(beta > sv_tol * max(float(beta.max(initial=0.0)), 1e-300))
    return SVMResult(True, "optimal", wv, float(bv), alpha, support, margin, evidence)
