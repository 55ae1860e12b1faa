"""Issue 50, item 3, columns of mixed scales: radii and kkt_certificate on ``X x [c0, c1]`` with c1 / c0 from 1e10 to
1e600, both column orders, linear classifiers and ReLU networks.

Every value is checked against an exact reference in rational arithmetic (``fractions.Fraction``, on the float64
data and weights as given): a proven value must be the reference's, and where float64 cannot decide the answer must
say "not proven". Before: at ``X x [1e-200, 1e200]`` the small column was flushed to 0 by one scaling of all of X, so a
linear classifier reading it had "exact" radius 0 at every point, a ReLU network had every point "misclassified"
(radius 0, proven), and kkt_certificate said "the margin of point 0, q = 0, is within float64 resolution of 0"; at
``X x [1e-100, 1e100]`` it said "not certified (stationarity residual 0.707)" for a KKT point (the multiplier program's
Gram matrix never saw the small column).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import ibcheck
from ibcheck.solvers.networks import LinearClassifier, TwoLayerReLU
from ibcheck.solvers.radius.linear import linf_radius, linf_robust_error

X6 = np.array([[1.0, 0.0], [-1.0, 0.0], [1.0, 1.0], [-1.0, -1.0], [2.0, 0.5], [-2.0, -0.5]])
Y6 = np.array([1.0, -1.0, 1.0, -1.0, 1.0, -1.0])
# column scales: ratios 1e10, 1e100, 1e200, 1e300 (from 1 and centred on 1), then 1e400 and 1e600; both orders
PAIRS = [(1.0, 1e10), (1e-5, 1e5), (1.0, 1e100), (1e-50, 1e50), (1.0, 1e200), (1e-100, 1e100), (1.0, 1e300), (1e-150, 1e150),
         (1e-200, 1e200), (1e-300, 1e300)]
COLS = PAIRS + [(b, a) for a, b in PAIRS]
RELU_COLS = [(1e-5, 1e5), (1.0, 1e100), (1e-100, 1e100), (1.0, 1e300), (1e-200, 1e200), (1e-300, 1e300)]
RELU_COLS = RELU_COLS + [(b, a) for a, b in RELU_COLS]
ALL = ("universal", "attack", "certified", "exact")


def _ids(cols):
    return [f"{a:g},{b:g}" for a, b in cols]


def _fr(v) -> Fraction:
    return Fraction(float(v))


def _affine(w, x, b) -> Fraction:
    """``<w, x> + b`` exactly."""
    return sum((_fr(wk) * _fr(xk) for wk, xk in zip(w, x)), Fraction(0)) + (_fr(b) if b is not None else Fraction(0))


def _linear_refs(w, b, X, y) -> tuple[list[Fraction], list[Fraction]]:
    """Per point: the exact margin ``y (<w, x> + b)`` and the exact squared l2 radius ``max(margin, 0)^2 / ||w||^2``."""
    margins = [_fr(yi) * _affine(w, x, b) for x, yi in zip(X, y)]
    n2 = sum((_fr(wk) ** 2 for wk in w), Fraction(0))
    return margins, [max(m, Fraction(0)) ** 2 / n2 for m in margins]


def _sq(v: float) -> Fraction:
    return _fr(v) ** 2


def _root(r2: Fraction) -> float:
    """sqrt(r2) as a float, for messages (r2 may be past float64's range)."""
    return 0.0 if r2 == 0 else math.exp((math.log(r2.numerator) - math.log(r2.denominator)) / 2)


def _check_radii(pp: dict, margins: list[Fraction], ref2: list[Fraction], rel: float = 1e-9, all_proven: bool = False) -> int:
    """Every method against the exact squared radius: lower bounds below it, upper bounds above it, a proven exact value
    equal to it (0 only for a margin <= 0 in exact arithmetic), an unproven one a bracket around it. Returns how many
    points are proven."""
    proven = 0
    rel_ = Fraction(rel)
    for i, (m, r2) in enumerate(zip(margins, ref2)):
        assert _sq(pp["certified"][i]) <= r2 * (1 + rel_), ("certified above the radius", i, pp["certified"][i], _root(r2))
        for key in ("universal", "attack", "upper"):
            v = float(pp[key][i])
            assert v == math.inf or _sq(v) >= r2 * (1 - rel_), (key, "below the radius", i, v, _root(r2))
        lo, hi, status = float(pp["exact_lower"][i]), float(pp["exact_upper"][i]), str(pp["exact_status"][i])
        if status == "misclassified":
            assert m <= 0, ("called misclassified, but the exact margin is positive", i, float(m))
        if pp["exact_proven"][i]:
            proven += 1
            assert lo == hi, (i, lo, hi)
            if r2 == 0:
                assert hi == 0.0, (i, hi)
            else:
                assert hi > 0 and abs(_sq(hi) / r2 - 1) <= rel_, ("a proven radius that is not the radius", i, hi, _root(r2), status)
        else:
            assert "not proven" in status or "bracket" in status or "interval" in status, status
            assert _sq(lo) <= r2 * (1 + rel_) and (hi == math.inf or _sq(hi) >= r2 * (1 - rel_)), (i, lo, hi, _root(r2))
    if all_proven:  # every radius float64 can hold to full precision (a subnormal one is an interval of two steps)
        normal = [i for i, r2 in enumerate(ref2) if r2 == 0 or r2 >= Fraction(2) ** -2044]
        assert all(pp["exact_proven"][i] for i in normal), pp["exact_status"]
    return proven


def _cancelling_row(c0: float, c1: float) -> np.ndarray:
    """A point whose two products with the mapped weights (1/c0, 0.5/c1) are about 1 and -(1 + 2^-50): their sum, about
    2^-50, is below the rounding of a float64 sum of the two."""
    return np.array([[c0, -2.0 * c1 * (1 + 2.0 ** -50)]])


def _with_cancelling_row(w, b, c0, c1):
    X = np.vstack([X6 * np.array([c0, c1]), _cancelling_row(c0, c1)])
    z = _affine(w, X[-1], b)
    return X, np.append(Y6, -1.0 if z < 0 else 1.0)  # labelled right (or a tie at z = 0)


# -- linear classifiers: the closed form is computable exactly, so it is always proven and right ------------------------
def _linear_cases(c0, c1):
    D = np.array([c0, c1])
    mapped = np.array([1.0, 0.5]) / D  # the pre-activations of w = (1, 0.5) on X, read on X D
    return [("reads column 0", np.array([1.0, 0.0]), None), ("reads column 1 (ties at points 0, 1)", np.array([0.0, 1.0]), None),
            ("both columns", np.array([1.0, 1.0]), None), ("mapped weights", mapped, None), ("mapped weights and a bias", mapped, 0.25)]


@pytest.mark.parametrize("c0, c1", COLS, ids=_ids(COLS))
def test_linear_radii_on_mixed_columns_are_exact(c0, c1):
    """radii of a linear classifier: universal, attack, certified and exact agree with ``|<w, x> + b| / ||w||`` computed
    in rational arithmetic, at every column scale, and every point is proven (was: exact_lower = exact_upper = 0,
    exact_proven, at [1e-200, 1e200]); a radius below 2^-1022 (the cancelling point at [1e-300, 1e300]: 1e-315) is an
    interval of two subnormal steps around it."""
    for label, w, b in _linear_cases(c0, c1):
        X, y = _with_cancelling_row(w, b, c0, c1) if b is None and label.startswith("mapped") else (X6 * np.array([c0, c1]), Y6)
        margins, ref2 = _linear_refs(w, b, X, y)
        res = ibcheck.radii(LinearClassifier(w=w, b=b), X, y, methods=ALL, points=len(X))
        try:
            _check_radii(res.per_point, margins, ref2, rel=1e-12, all_proven=True)
        except AssertionError as err:
            raise AssertionError(f"{label}: {err}") from None


@pytest.mark.parametrize("c0, c1", COLS, ids=_ids(COLS))
def test_linear_linf_radius_on_mixed_columns_is_exact(c0, c1):
    w = np.array([1.0, 0.5]) / np.array([c0, c1])
    X, y = _with_cancelling_row(w, None, c0, c1)
    margins, _ = _linear_refs(w, None, X, y)
    n1 = sum((abs(_fr(v)) for v in w), Fraction(0))
    ref = [max(m, Fraction(0)) / n1 for m in margins]
    r = linf_radius(LinearClassifier(w=w), X, y)
    for i, (got, want) in enumerate(zip(r, ref)):
        assert abs(_fr(got) - want) <= max(want * Fraction(1e-12), Fraction(2) ** -1073), (i, got, float(want))
    levels = sorted(set(ref))
    for lo, hi in zip(levels, levels[1:]):  # an eps strictly between two radii: the robust error counts those below
        eps = float((lo + hi) / 2)
        if not lo < _fr(eps) < hi:  # two radii closer than float64 resolves
            continue
        assert linf_robust_error(LinearClassifier(w=w), X, y, eps) == pytest.approx(np.mean([v <= lo for v in ref]))


def test_the_referee_case_linear_reading_the_small_column():
    """``radii(LinearClassifier(w=[1, 0]), X x [1e-200, 1e200], y)``: the radius is the margin over ||w||, 1e-200 and
    2e-200, proven."""
    X = X6 * np.array([1e-200, 1e200])
    pp = ibcheck.radii(LinearClassifier(w=np.array([1.0, 0.0])), X, Y6, methods=ALL, points=6).per_point
    np.testing.assert_array_equal(pp["exact_upper"], [1e-200, 1e-200, 1e-200, 1e-200, 2e-200, 2e-200])
    assert pp["exact_proven"].all()


# -- ReLU networks ------------------------------------------------------------------------------------------------------
def _pm(w, b=None) -> TwoLayerReLU:
    """``ReLU(z) - ReLU(-z) = z`` with ``z = <w, x> + b``: a ReLU network whose radius is a linear classifier's."""
    return TwoLayerReLU(W=np.vstack([w, -w]), a=np.array([1.0, -1.0]), b=None if b is None else np.array([b, -b]))


@pytest.mark.parametrize("c0, c1", RELU_COLS, ids=_ids(RELU_COLS))
def test_relu_radii_on_mixed_columns_are_right_or_not_proven(c0, c1):
    """A ReLU network reading the first column (the referee's), and one reading both through the mapped weights with a
    point whose margin cancels below float64's resolution: every proven radius is the exact one, the cancelling point is
    never called misclassified, and the first network (no cancellation) is proven at every point (was: every point
    "misclassified", radius 0, proven, at [1e-200, 1e200])."""
    D = np.array([c0, c1])
    net = _pm(np.array([1.0, 0.0]))
    margins, ref2 = _linear_refs(np.array([1.0, 0.0]), None, X6 * D, Y6)
    _check_radii(ibcheck.radii(net, X6 * D, Y6, methods=ALL, points=6).per_point, margins, ref2, all_proven=True)
    w = np.array([1.0, 0.5]) / D
    X, y = _with_cancelling_row(w, None, c0, c1)
    margins, ref2 = _linear_refs(w, None, X, y)
    pp = ibcheck.radii(_pm(w), X, y, methods=ALL, points=len(X)).per_point
    _check_radii(pp, margins, ref2)
    assert pp["exact_proven"][:6].all(), pp["exact_status"]  # the six points without cancellation are decided


BIAS_COLS = [(1e-200, 1e200), (1e200, 1e-200), (1e-300, 1e300)]


@pytest.mark.parametrize("c0, c1", BIAS_COLS, ids=_ids(BIAS_COLS))
def test_relu_with_a_bias_on_mixed_columns(c0, c1):
    """The same with a bias at the small column's scale: ``z = x_0 c0 - c0 / 4``."""
    w, b = np.array([1.0, 0.0]), -0.25 * c0
    X = X6 * np.array([c0, c1])
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0, -1.0])
    margins, ref2 = _linear_refs(w, b, X, y)
    _check_radii(ibcheck.radii(_pm(w, b), X, y, methods=ALL, points=6).per_point, margins, ref2, all_proven=True)


def test_a_point_whose_margin_cancels_is_never_a_proven_misclassification():
    """The cancelling point with the wrong label: its exact margin is -2^-50-ish, but float64's sum cannot tell its sign;
    a ReLU network's radius there is "not proven" or the exact 0, never a 0 for a positive margin, and the linear
    classifier (exact integer arithmetic) decides it."""
    for c0, c1 in [(1e-200, 1e200), (1e200, 1e-200), (1.0, 1e10)]:
        w = np.array([1.0, 0.5]) / np.array([c0, c1])
        X = np.vstack([X6 * np.array([c0, c1]), _cancelling_row(c0, c1)])
        z = _affine(w, X[-1], None)
        for label in (1.0, -1.0):
            y = np.append(Y6, label)
            margins, ref2 = _linear_refs(w, None, X, y)
            _check_radii(ibcheck.radii(_pm(w), X, y, methods=ALL, points=len(X)).per_point, margins, ref2)
            lin = ibcheck.radii(LinearClassifier(w=w), X, y, methods=ALL, points=len(X)).per_point
            _check_radii(lin, margins, ref2, rel=1e-12, all_proven=True)
            assert (lin["exact_upper"][-1] == 0) == (label * z <= 0)


# -- kkt_certificate ----------------------------------------------------------------------------------------------------
KKT_PAIRS = [(1.0, 1e10), (1e-5, 1e5), (1e-9, 1e9), (1.0, 1e100), (1e-50, 1e50), (1.0, 1e200), (1e-100, 1e100), (1.0, 1e300),
             (1e-150, 1e150), (1e-200, 1e200), (1e-300, 1e300)]
KKT_COLS = KKT_PAIRS + [(b, a) for a, b in KKT_PAIRS]
READER = TwoLayerReLU(W=np.array([[1.0, 0.0], [-1.0, 0.0]]), a=np.array([1.0, -1.0]), b=None)  # f(x) = x_0


def _exact_stationarity(net: TwoLayerReLU, X, y, lam: list[Fraction]) -> list[Fraction]:
    """``theta - sum_i lam_i grad q_i(theta)`` in rational arithmetic (bias-free, W and a trained): for a network of degree
    2, zero with lam >= 0 on the points of least margin makes theta a positive multiple of a KKT point of (P)."""
    W = [[_fr(v) for v in row] for row in net.W]
    a = [_fr(v) for v in net.a]
    Xf = [[_fr(v) for v in row] for row in X]
    res_W = [row[:] for row in W]
    res_a = a[:]
    for i, li in enumerate(lam):
        if li == 0:
            continue
        for j in range(len(a)):
            z = sum((W[j][k] * Xf[i][k] for k in range(len(Xf[i]))), Fraction(0))
            assert z != 0, "a tie: ReLU'(0) is not one number"
            if z > 0:
                for k in range(len(Xf[i])):
                    res_W[j][k] -= li * _fr(y[i]) * a[j] * Xf[i][k]
                res_a[j] -= li * _fr(y[i]) * z
    return [v for row in res_W for v in row] + res_a


def _exact_margins(net: TwoLayerReLU, X, y) -> list[Fraction]:
    out = []
    for x, yi in zip(X, y):
        f = Fraction(0)
        for w, aj in zip(net.W, net.a):
            f += _fr(aj) * max(_affine(w, x, None), Fraction(0))
        out.append(_fr(yi) * f)
    return out


@pytest.mark.parametrize("c0, c1", KKT_COLS, ids=_ids(KKT_COLS))
def test_a_kkt_point_on_mixed_columns_is_certified(c0, c1):
    """``W = [[1, 0], [-1, 0]], a = (1, -1)`` on ``X x [c0, c1]``: a KKT point (exact multipliers 1/c0 on points 0 and 1,
    checked in rational arithmetic), and the certificate says so at every column scale: where the engine's Gram-space
    program cannot hold the columns in float64, the parameter-space check (each row and column of the Jacobian at its
    own power of two) proves it. Never "not certified", never a margin lost to underflow (was: "q = 0 ... within float64
    resolution of 0" at [1e-200, 1e200], "not certified (stationarity residual 0.707)" at [1e-100, 1e100]). min_margin
    is the exact one."""
    X = X6 * np.array([c0, c1])
    q = _exact_margins(READER, X, Y6)
    lam = [Fraction(1) / _fr(c0) if i in (0, 1) else Fraction(0) for i in range(6)]
    assert q[0] == q[1] == min(q) and all(v == 0 for v in _exact_stationarity(READER, X, Y6, lam))  # the reference: a KKT point
    cert = ibcheck.kkt_certificate(READER, X, Y6)
    assert "within float64 resolution" not in cert.solver_status, cert.solver_status
    assert cert.is_kkt(), cert.heading()
    assert cert.min_margin == pytest.approx(float(min(q)), rel=1e-12)
    lam_found = cert.lam / cert.lam.max()
    np.testing.assert_allclose(lam_found, [1, 1, 0, 0, 0, 0], atol=1e-9)  # the reference's multipliers, up to scale


MAPPED_COLS = [(1e-100, 1e100), (1e-200, 1e200), (1e200, 1e-200), (1e-5, 1e5), (1e5, 1e-5), (1e-300, 1e300)]


@pytest.mark.parametrize("c0, c1", MAPPED_COLS, ids=_ids(MAPPED_COLS))
def test_weights_mapped_to_the_columns_are_not_a_kkt_point(c0, c1):
    """``W / [c0, c1]`` keeps the pre-activations of the KKT point above on X, but the rescaling is no isometry: on
    ``X x [c0, c1]`` stationarity on ``a_1`` asks for lambda_0 = 1 and on ``W_10`` for lambda_0 = 1 / c0^2 (the second
    column forces lambda_2 = 0), so it is no KKT point unless c0 = 1. Never certified; min_margin exact."""
    D = np.array([c0, c1])
    net = TwoLayerReLU(W=READER.W / D, a=READER.a, b=None)
    X = X6 * D
    lam_from_a, lam_from_w = Fraction(1), Fraction(1) / _fr(c0) ** 2 * (_fr(net.W[0, 0]) * _fr(c0))
    assert lam_from_a != lam_from_w
    cert = ibcheck.kkt_certificate(net, X, Y6)
    assert not cert.is_kkt(), cert.heading()
    assert cert.min_margin == pytest.approx(float(min(_exact_margins(net, X, Y6))), rel=1e-12)


@pytest.mark.parametrize("s", [1e-100, 1e-200])
def test_near_ties_from_unbalanced_layers_are_not_a_kkt_point(s):
    """``W x s`` with ``a`` kept (s = 1e-100, on X as given): at unit margin its pre-activations are 1e-50 while a is
    1e50, all within the program's absolute tie tolerance, and with ReLU'(0) = 0 there it read "a KKT point". At a KKT
    point of a bias-free two-layer network every neuron is balanced, ``||w_j||^2 = a_j^2`` (the stationarity of w_j
    and a_j against each other), at every positive scale of theta; this one is not."""
    net = TwoLayerReLU(W=READER.W * s, a=READER.a, b=None)
    w0 = [_fr(v) for v in net.W[0]]
    assert sum(v * v for v in w0) != _fr(net.a[0]) ** 2  # the reference: no KKT point
    cert = ibcheck.kkt_certificate(net, X6, Y6)
    assert not cert.is_kkt(), cert.heading()
    assert cert.solver_status.startswith("not proven") or cert.solver_status == "optimal", cert.solver_status


def test_the_referee_case_kkt_at_1e200():
    """The referee's script (f3e): the margins are 1e-200 and 2e-200, the certificate never says q = 0."""
    X = X6 * np.array([1e-200, 1e200])
    cert = ibcheck.kkt_certificate(READER, X, Y6)
    assert "q = 0" not in cert.solver_status and cert.min_margin == 1e-200
    assert cert.is_kkt(), cert.heading()

