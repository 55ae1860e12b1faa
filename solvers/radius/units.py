"""Units for the radius solvers (and the public KKT certificate's margins): every length and margin at any scale of X,
of each of its columns, and of each layer.

* :func:`preactivation_parts` and :func:`margin_parts`: pre-activations and margins with each column of X at its own
  power of two and each product's exponent carried apart, with a bound on their rounding error, so that a margin's sign
  is proven (or said to be undecided) whatever the scales; :func:`linear_parts` decides a linear classifier's
  ``<w, x> + b`` exactly (integer arithmetic where float64's sum is not accurate enough).
* :class:`Local` (:func:`localize`): the radius depends only on the pre-activations ``h = W x + b`` and on W and a, so
  each point's problem is the network with bias h at ``delta = 0``, its lengths in units of a power of two near the
  point's largest distance to a neuron's hyperplane. Every solver works there and scales its radii back exactly.

Every scaling is by a power of two (``np.ldexp``), exact in float64 except where an entry falls 2^1000 below its own
neuron's or point's largest term, where the loss is counted in the rounding bounds.

Pitfalls avoided: at ``X x 1e-200`` ``||v||`` of the universal direction underflowed to 0 (v became inf and every
universal radius 0, below its own certified bound), and at ``X x 1e200`` ``||w||`` of a linear classifier fitted
there underflowed (every radius inf); at ``X x 1e150`` foolbox's float32 bounds overflowed (an AssertionError); one
power of two for all of X (its largest entry at 1) flushed the small column of ``X x [1e-200, 1e200]`` to 0, so every
radius there was an "exact" 0 and every point of a ReLU network "misclassified".
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..networks import LinearClassifier, TwoLayerReLU


def exponent(v) -> int | None:
    """``e`` with ``max |v|`` in ``[2^(e-1), 2^e)``; None for an empty or all-zero array."""
    top = float(np.max(np.abs(v), initial=0.0)) if np.size(v) else 0.0
    if not (top > 0 and np.isfinite(top)):
        return None
    return int(np.frexp(top)[1])


def unit_vector(v: np.ndarray) -> np.ndarray:
    """``v / ||v||`` at any scale (divided by a power of two near its largest entry first); nan for the zero vector."""
    v = np.asarray(v, float)
    e = exponent(v)
    if e is None:
        with np.errstate(invalid="ignore", divide="ignore"):
            return v / np.linalg.norm(v)
    u = np.ldexp(v, -e)
    return u / np.linalg.norm(u)


def _row_exponents(A: np.ndarray) -> np.ndarray:
    """Per row, :func:`exponent` (0 for an all-zero row)."""
    top = np.max(np.abs(A), axis=1, initial=0.0) if A.size else np.zeros(len(A))
    return np.where(top > 0, np.frexp(top)[1], 0).astype(int)


# -- pre-activations and margins at any scale, with rounding bounds --------------------------------------------------------
ULP = 2.0 ** -53  # float64's unit roundoff
_LOST = 2.0 ** -1072  # at least the error of one product lost to underflow (three roundings of at most 2^-1075 each)
_SMALL = 2.0 ** -511  # two factors at least this large have a normal product
_NONE = -(2 ** 30)  # "no exponent" (an all-zero row or column)


def preactivation_parts(W: np.ndarray, b: np.ndarray | None, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(HM, F, E)``: the pre-activations ``H = X W^T + b`` as ``HM 2^F`` (F one exponent per neuron) with
    ``|H - HM 2^F| <= E 2^F``, at any scale of X, of each of its columns and of each weight.

    Each column of X is divided by a power of two near its own largest entry and each neuron's weights multiplied by
    it (the same products), then each neuron is divided by a power of two near its largest scaled weight: a column
    2^1000 below another keeps its digits, where a scaling of X as a whole flushed it to 0 (``X x [1e-200, 1e200]``:
    every margin read 0). A product can be lost to underflow only where it is 2^1000 below its neuron's largest term;
    each such loss is counted in E, as is the sum's rounding."""
    X = np.atleast_2d(np.asarray(X, float))
    W = np.atleast_2d(np.asarray(W, float))
    if b is not None:
        X = np.hstack([X, np.ones((len(X), 1))])
        W = np.hstack([W, np.asarray(b, float).reshape(-1, 1)])
    D = X.shape[1]
    colmax = np.max(np.abs(X), axis=0, initial=0.0)
    c = np.frexp(colmax)[1].astype(np.int64)  # 0 for an all-zero column
    Xh = np.ldexp(X, -c[None, :])
    live = W != 0
    f = np.where(live, np.frexp(W)[1].astype(np.int64) + c[None, :], _NONE)
    F = f.max(axis=1, initial=_NONE)
    F = np.where(F == _NONE, 0, F)
    T = np.ldexp(W, c[None, :] - F[:, None])  # |T| < 1
    HM = Xh @ T.T
    E = 2.0 * (D + 4) * ULP * (np.abs(Xh) @ np.abs(T).T)
    nz = X != 0
    small_x = nz & (np.abs(Xh) < _SMALL)
    small_t = live & (np.abs(T) < _SMALL)
    if small_x.any() or small_t.any():
        count = small_x.astype(float) @ live.T.astype(float) + nz.astype(float) @ small_t.T.astype(float)
        E = E + count * _LOST
    return HM, F, E


def _exact_affine(w: np.ndarray, x: np.ndarray, b: float | None) -> tuple[float, int]:
    """``<w, x> + b`` in integer arithmetic (every float64 is an integer times a power of two), rounded once:
    ``(m, e)`` with the value ``m 2^e`` to within ``2^-52 |m| 2^e``."""
    terms = []
    for wk, xk in zip(w.tolist(), x.tolist()):
        if wk and xk:
            mw, ew = math.frexp(wk)
            mx, ex = math.frexp(xk)
            terms.append((int(mw * 2**53) * int(mx * 2**53), ew + ex - 106))
    if b:
        mb, eb = math.frexp(b)
        terms.append((int(mb * 2**53), eb - 53))
    if not terms:
        return 0.0, 0
    low = min(e for _, e in terms)
    total = sum(m << (e - low) for m, e in terms)
    if total == 0:
        return 0.0, 0
    mag = abs(total)
    shift = mag.bit_length() - 64
    top = mag >> shift if shift > 0 else mag << -shift
    return (-1.0 if total < 0 else 1.0) * float(top), shift + low


def linear_parts(net: LinearClassifier, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(hm, he, err)``: ``f(x_i) = hm_i 2^he_i`` within ``err_i 2^he_i``, per row: the pre-activation of
    :func:`preactivation_parts`, and where its rounding bound exceeds 2^-40 of it (cancellation, or a sum within its
    rounding of 0), the exact value in integer arithmetic, rounded once. The sign of ``f`` is always decided."""
    w = np.asarray(net.w, float)
    b = None if net.b is None else float(net.b)
    HM, F, E = preactivation_parts(w[None, :], None if b is None else np.array([b]), X)
    hm, err = HM[:, 0].copy(), E[:, 0].copy()
    he: np.ndarray = np.full(len(HM), F[0], dtype=np.int64)
    for i in np.flatnonzero(~(err <= 2.0 ** -40 * np.abs(hm))):
        m, e = _exact_affine(w, np.asarray(X[i], float), b)
        hm[i], he[i], err[i] = m, e, 2.0 * ULP * abs(m)
    return hm, he, err


def margin_parts(net: Any, X: np.ndarray, y: np.ndarray, parts=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(qm, qe, em)``: the margins ``q_i = y_i f(x_i)`` as ``qm_i 2^qe_i`` with ``|q_i - qm_i 2^qe_i| <= em_i 2^qe_i``,
    for a linear classifier or a two-layer ReLU network, at any scale (of X, of its columns, of each layer; nothing is
    scaled as a whole). ``qm - em > 0`` proves the point correctly classified, ``qm + em <= 0`` proves it misclassified
    (the tie rule: f = 0 counts as misclassified), and anything else is not decided by float64."""
    X = np.atleast_2d(np.asarray(X, float))
    y = np.asarray(y, float)
    if isinstance(net, LinearClassifier):
        hm, he, err = linear_parts(net, X)
        return y * hm, he, np.abs(y) * err
    if not isinstance(net, TwoLayerReLU):
        raise TypeError(f"no margins with rounding bounds for a {getattr(net, 'kind', type(net).__name__)} network")
    HM, F, E = parts if parts is not None else preactivation_parts(net.W, net.b, X)  # parts: computed by the caller already
    a = np.asarray(net.a, float)
    ma, ea = np.frexp(a)
    live = (a != 0)[None, :] & (HM > -E)  # a neuron that may be on (one surely off contributes exactly 0)
    mag = np.where(live, np.abs(HM) + E, 0.0)
    ex = np.where(live & (mag > 0), ea[None, :] + F[None, :] + np.frexp(mag)[1], _NONE)
    qe = ex.max(axis=1, initial=_NONE)
    qe = np.where(qe == _NONE, 0, qe).astype(np.int64)
    shift = ea[None, :] + F[None, :] - qe[:, None]
    T = np.ldexp(ma[None, :] * np.maximum(HM, 0.0), shift)
    TE = np.ldexp(np.abs(ma)[None, :] * np.where(live, E, 0.0), shift) * (1 + 8 * ULP)
    tiny = live & (np.ldexp(np.abs(ma)[None, :] * mag, shift) < 2.0 ** -1000)
    M = len(a)
    em = 2.0 * (M + 4) * ULP * np.abs(T).sum(axis=1) + TE.sum(axis=1) + tiny.sum(axis=1) * 2 * _LOST
    return y * T.sum(axis=1), qe, np.abs(y) * em


@dataclass(frozen=True)
class Local:
    """The radius problem at each point, translated to the origin and in the point's own units.

    The radius at x depends only on the pre-activations ``h = W x + b`` and on W and a, so point i's problem is the
    network ``(W, a)`` with bias ``H[i]`` at ``delta = 0``, its lengths in units of ``2^s[i]``: the rows of W have unit
    l2 norm (``H`` is then the signed distance to each neuron's hyperplane, over 2^s), ``a`` has largest entry 1 (the
    same sign of f), and s puts point i's largest distance in [1/2, 1). ``E`` bounds the rounding error of ``H``; ``q``
    is the margin in these units and ``qerr`` its rounding bound. ``sign`` is the margin's sign proven at the
    network's own scale (:func:`margin_parts`): +1 correctly classified, -1 misclassified (or a tie), 0 not decided by
    float64. A linear classifier is one neuron without the ReLU (``linear``).

    Pitfall avoided: one power of two for all of X (max |X| at 1) flushed the small column of ``X x [1e-200, 1e200]``
    to 0: a linear classifier reading it had "exact" radius 0 at every point, a ReLU network "misclassified" all."""

    W: np.ndarray
    a: np.ndarray
    H: np.ndarray
    E: np.ndarray
    s: np.ndarray
    y: np.ndarray
    q: np.ndarray
    qerr: np.ndarray
    sign: np.ndarray
    linear: bool

    @property
    def decided(self) -> np.ndarray:
        """Points proven correctly classified, with a margin above its rounding in these units too."""
        return (self.sign > 0) & (self.q - self.qerr > 0)

    def take(self, idx: np.ndarray) -> "Local":
        return replace(self, H=self.H[idx], E=self.E[idx], s=self.s[idx], y=self.y[idx], q=self.q[idx], qerr=self.qerr[idx],
                       sign=self.sign[idx])

    def back(self, r: np.ndarray, rounding: str | None = None) -> np.ndarray:
        """Lengths in the points' units back in the units of X (``r 2^s``; inf stays inf). Exact unless the result falls in
        float64's subnormal range, where it keeps fewer digits: ``rounding="up"`` (an upper bound) or ``"down"`` (a lower
        bound) then moves it one subnormal step outwards, so that a bound stays a bound."""
        r = np.asarray(r, float)
        with np.errstate(over="ignore", under="ignore"):
            out = np.ldexp(r, self.s)
        if rounding is not None:
            coarse = (r > 0) & (np.abs(out) < 2.0 ** -1022)
            if coarse.any():
                out = np.where(coarse, np.nextafter(out, np.inf if rounding == "up" else 0.0), out)
        return out

    def to_units(self, r: np.ndarray) -> np.ndarray:
        """Lengths of X in the points' units (``r / 2^s``)."""
        with np.errstate(over="ignore", under="ignore"):
            return np.ldexp(np.asarray(r, float), -self.s)

    def point_network(self, i: int) -> TwoLayerReLU:
        """Point i's problem as a network at ``x = 0``."""
        return TwoLayerReLU(W=self.W, a=self.a, b=self.H[i].copy(), trained=("W", "b", "a"))


def _signs(qm: np.ndarray, em: np.ndarray) -> np.ndarray:
    return np.where(qm - em > 0, 1, np.where(qm + em <= 0, -1, 0))


def localize(net: Any, X: np.ndarray, y: np.ndarray) -> Local:
    """:class:`Local` for a linear classifier or a two-layer ReLU network at the rows of X."""
    X = np.atleast_2d(np.asarray(X, float))
    y = np.asarray(y, float)
    N, d = X.shape
    if isinstance(net, LinearClassifier):
        hm, he, err = linear_parts(net, X)
        sign = _signs(y * hm, err)
        ew = exponent(net.w)
        if ew is None:  # a constant classifier: only the sign of b matters, and no length does
            H = np.sign(hm)[:, None]
            return Local(np.zeros((1, d)), np.ones(1), H, np.zeros_like(H), np.zeros(N, np.int64), y, y * H[:, 0], np.zeros(N),
                         sign, True)
        wu = np.ldexp(np.asarray(net.w, float), -ew)
        wn = float(np.linalg.norm(wu))
        P = hm / wn
        s = np.where(P != 0, np.frexp(P)[1] + he - ew, 0).astype(np.int64)
        shift = he - ew - s
        with np.errstate(under="ignore"):
            H = np.ldexp(P, shift)[:, None]
            E = (np.ldexp(err / wn, shift) * (1 + 4 * ULP) + 2 * ULP * np.abs(H[:, 0]))[:, None]
        return Local((wu / wn)[None, :], np.ones(1), H, E, s, y, y * H[:, 0], np.abs(y) * E[:, 0], sign, True)
    if not isinstance(net, TwoLayerReLU):
        raise TypeError(f"no radius for a {getattr(net, 'kind', type(net).__name__)} network")
    parts = preactivation_parts(net.W, net.b, X)  # once: each neuron's column is its own, so the kept ones are a slice
    qm, _, em = margin_parts(net, X, y, parts)
    sign = _signs(qm, em)
    keep = np.asarray(net.a) != 0  # a neuron with a_j = 0 changes nothing
    W = np.asarray(net.W, float)[keep]
    a = np.asarray(net.a, float)[keep]
    M = len(a)
    if not M:  # the zero function: every point a tie (sign -1)
        none = np.zeros((N, 0))
        return Local(np.zeros((0, d)), a, none, none, np.zeros(N, np.int64), y, np.zeros(N), np.zeros(N), sign, False)
    HM, F, E = parts[0][:, keep], parts[1][keep], parts[2][:, keep]
    r = _row_exponents(W)
    Wu = np.ldexp(W, -r[:, None])
    n = np.linalg.norm(Wu, axis=1)
    const = n == 0  # a neuron constant in x (W_j = 0): its "distance" is its bias
    r = np.where(const, F, r).astype(np.int64)
    n = np.where(const, 1.0, n)
    Wn = np.where(const[:, None], 0.0, Wu / n[:, None])
    shift0 = np.broadcast_to(F - r, (N, M))  # (N, M): the distance of point i to neuron j's hyperplane is (HM / n) 2^shift0
    P = HM / n[None, :]
    moving = ~const[None, :] & (P != 0)
    s = np.where(moving, np.frexp(P)[1] + shift0, _NONE).max(axis=1, initial=_NONE)
    if np.any(const):  # keep constant neurons' values below 2^900 in every point's units
        floor = np.where(const[None, :] & (P != 0), np.frexp(P)[1] + shift0, _NONE).max(axis=1, initial=_NONE) - 900
        s = np.maximum(s, floor)
    s = np.where(s == _NONE, 0, s).astype(np.int64)
    shift = shift0 - s[:, None]
    with np.errstate(under="ignore", over="ignore"):
        H = np.ldexp(P, shift)
        Eu = np.ldexp(E / n[None, :], shift) * (1 + 4 * ULP) + 2 * ULP * np.abs(H) + 2 * _LOST
    # output weights: a_j 2^r_j n_j (the factor taken from neuron j), then largest entry 1
    ma, ea = np.frexp(a * n)
    top = int(np.max(ea + r, initial=0))
    with np.errstate(under="ignore"):
        au = np.ldexp(ma, ea + r - top)
    amax = float(np.abs(au).max(initial=0.0))
    au = au / amax if amax > 0 else au
    q = y * (np.maximum(H, 0.0) @ au)
    on = H > -Eu
    qerr = np.abs(y) * (2.0 * (M + 4) * ULP * (np.maximum(H, 0.0) @ np.abs(au)) + (np.where(on, Eu, 0.0) @ np.abs(au)) * (1 + 4 * ULP)
                        + M * _LOST)
    return Local(Wn, au, H, Eu, s, y, q, qerr, sign, False)
