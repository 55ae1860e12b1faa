import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from ibcheck.theory.growth import compare, couple, exponents
from ibcheck.theory.variables import symbol

d, k, n, eps, t, C = (symbol(x) for x in ("d", "k", "n", "eps", "t", "C"))
OO = {"d": "oo", "k": "oo"}


def test_sqrt_d_over_k_is_smaller_than_sqrt_d_as_k_grows():
    assert compare(sp.sqrt(d / k), sp.sqrt(d), {"k": "oo"}).relation == "<"
    assert compare(sp.sqrt(d / k), sp.sqrt(d), OO).relation == "<"
    assert compare(sp.sqrt(d), sp.sqrt(d / k), OO).relation == ">"


def test_d_over_k_against_sqrt_d_is_incomparable_with_witness_rays():
    res = compare(d / k, sp.sqrt(d), OO)
    assert res.relation == "incomparable"
    assert "k = d^" in res.reason


def test_the_case_sympy_order_gets_wrong():
    # sympy's multivariate Order claimed O(d + k) contains O(d k); d + k = o(d k) jointly.
    assert compare(d + k, d * k, OO).relation == "<"
    assert compare(d * k, d + k, OO).relation == ">"
    # With k held fixed, d + k and d k are the same order in d.
    assert compare(d + k, d * k, {"d": "oo"}).relation == "~"


def test_theta_equivalence_and_logs():
    assert compare(3 * d + k, d + 2 * k, OO).relation == "~"
    assert compare(sp.sqrt(d) * sp.log(d), sp.sqrt(d), {"d": "oo"}).relation == ">"
    assert compare(sp.log(sp.log(t)) / sp.log(t), 1 / sp.log(t), {"t": "oo"}).relation == ">"
    assert compare(sp.sqrt(d) / sp.log(d), sp.sqrt(d), {"d": "oo"}).relation == "<"


def test_coupling_k_equals_d_to_alpha():
    assert compare(d / k, sp.sqrt(d), OO, {"k": d ** sp.Rational(1, 4)}).relation == ">"
    assert compare(d / k, sp.sqrt(d), OO, {"k": d ** sp.Rational(3, 4)}).relation == "<"
    assert compare(d / k, sp.sqrt(d), OO, {"k": d ** sp.Rational(1, 2)}).relation == "~"
    assert couple(sp.sqrt(d / k), {"k": d ** sp.Rational(1, 2)}) == d ** sp.Rational(1, 4)


def test_exponent_extraction_with_polylog():
    e = exponents(C * sp.sqrt(d / k) * sp.log(d) ** 2, {"d": "oo", "k": "oo"})
    assert e.power == {"d": sp.Rational(1, 2), "k": sp.Rational(-1, 2)}
    assert e.log == {"d": 2, "k": 0}


def test_variables_tending_to_zero():
    assert exponents(eps**2 * sp.sqrt(d), {"eps": "0", "d": "oo"}).power["eps"] == 2
    assert exponents(sp.sqrt(sp.log(1 / eps)), {"eps": "0"}).log["eps"] == sp.Rational(1, 2)
    assert compare(eps**2, eps, {"eps": "0"}).relation == "<"


rat = st.fractions(min_value=-3, max_value=3, max_denominator=4)


@settings(max_examples=40, deadline=None)
@given(a=rat, b=rat, la=st.integers(-2, 2), lb=st.integers(-2, 2))
def test_one_variable_comparison_agrees_with_sympy_limit(a, b, la, lb):
    """Cross-check against sympy's one-variable limit (gruntz) of the ratio."""
    A = d ** sp.Rational(a.numerator, a.denominator) * sp.log(d) ** la
    B = d ** sp.Rational(b.numerator, b.denominator) * sp.log(d) ** lb
    lim = sp.limit(A / B, d, sp.oo)
    rel = compare(A, B, {"d": "oo"}).relation
    expected = "<" if lim == 0 else (">" if lim == sp.oo else "~")
    assert rel == expected, (A, B, lim)


@settings(max_examples=25, deadline=None)
@given(a=st.tuples(rat, rat), b=st.tuples(rat, rat), alpha=st.fractions(min_value="1/5", max_value=3, max_denominator=5))
def test_joint_comparison_is_consistent_with_every_coupling(a, b, alpha):
    """If a < b jointly, then a < b along k = d^alpha for every alpha > 0 (and so on)."""
    A = d ** sp.Rational(a[0].numerator, a[0].denominator) * k ** sp.Rational(a[1].numerator, a[1].denominator)
    B = d ** sp.Rational(b[0].numerator, b[0].denominator) * k ** sp.Rational(b[1].numerator, b[1].denominator)
    joint = compare(A, B, OO).relation
    along = compare(A, B, OO, {"k": d ** sp.Rational(alpha.numerator, alpha.denominator)}).relation
    lim = sp.limit(couple(A / B, {"k": d ** sp.Rational(alpha.numerator, alpha.denominator)}), d, sp.oo)
    assert along == ("<" if lim == 0 else (">" if lim == sp.oo else "~"))
    if joint in ("<", ">", "~"):
        assert along == joint
