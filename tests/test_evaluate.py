import math

import pytest

from ibcheck.theory import InputError, get_claim
from ibcheck.theory.evaluate import evaluate_claim, make_point, parse_assignments

C42 = get_claim("FVBS23.thm.4_2")


def at(text, claim=C42):
    return make_point(claim, parse_assignments(text))


def test_huge_d_does_not_overflow():
    hv = {h.name: h for h in evaluate_claim(C42, at("d=1000000,k=10,n=100000,eps=0.1,delta=0.1"))}
    # H3: log10(sqrt(delta/3) exp(d/32)) = (d/32)/ln 10 + log10(sqrt(0.1/3)).
    expected = 1e6 / 32 / math.log(10) + 0.5 * math.log10(0.1 / 3)
    assert hv["H3"].log10_rhs == pytest.approx(expected, rel=1e-12)
    assert all(h.holds for h in hv.values())
    # H5 at d = 10^6: log10((eps/4) d^(ln d / 2)) = log10(eps/4) + (ln d / 2) * 6.
    assert hv["H5"].log10_rhs == pytest.approx(math.log10(0.025) + math.log(1e6) / 2 * 6, rel=1e-12)


def test_astronomical_d_still_finite():
    hv = evaluate_claim(C42, at("d=1e100,k=10,n=1e50,eps=0.1,delta=0.1"))
    for h in hv:
        assert h.holds is not None
        assert math.isfinite(h.log10_lhs) and math.isfinite(h.log10_rhs)
    assert hv[2].log10_rhs > 1e97  # exp(d/32) has about 1.36e97 digits


def test_hypothesis_fails_where_it_should():
    hv = {h.name: h for h in evaluate_claim(C42, at("d=100,k=10,n=100000,eps=0.1,delta=0.1"))}
    assert hv["H1"].holds is True          # 1e5 >= 10 ln^2(100) = 212
    assert hv["H3"].holds is False         # 1e5 > sqrt(1/30) e^(100/32) = 4.2
    assert hv["H3"].log10_lhs == pytest.approx(5.0)


def test_missing_variables_are_reported_not_guessed():
    hv = evaluate_claim(C42, at("d=1000"))
    assert hv[0].holds is None and set(hv[0].missing) == {"k", "n"}


def test_constants_default_to_one_and_are_flagged():
    c = get_claim("BCGT21.thm.one_step")
    hv = evaluate_claim(c, at("d=1000,k=100,gamma=0.1", c))
    assert hv[0].assumed == {"C1": 1} and hv[0].holds is True
    hv2 = evaluate_claim(c, at("d=1000,k=100,gamma=0.1,C1=100", c))
    assert hv2[0].holds is False and hv2[0].assumed == {}


@pytest.mark.parametrize("text, word", [
    ("eps=1.5", "eps=1.5 is out of range: eps must be a number in (0, 1)"),
    ("d=1", "d must be an integer >= 2"),
    ("d=2.5", "d=2.5 is not an integer"),
    ("d=abc", "not a number"),
    ("zz=3", "unknown variable 'zz'"),
    ("d=10,d=20", "given twice"),
    ("d", "name=value"),
    ("delta=0", "delta must be a number in (0, 1)"),
])
def test_bad_values_name_value_and_range(text, word):
    with pytest.raises(InputError) as e:
        at(text)
    assert word in str(e.value)


def test_a_log10_beyond_float_is_given_as_its_decimal_text():
    """At d = 1e999, exp(d/32) has about 1.36e997 digits: its log10 itself leaves float64. It once printed as inf beside
    a hypothesis decided exactly; now the decimal text, and the decision stands."""
    hv = {h.name: h for h in evaluate_claim(C42, at("d=1e999,k=10,n=1e50,eps=0.1,delta=0.1"))}
    assert hv["H3"].holds is True
    assert isinstance(hv["H3"].log10_rhs, str) and hv["H3"].log10_rhs.startswith("1.357") and hv["H3"].log10_rhs.endswith("e+997")
    assert isinstance(hv["H3"].log10_lhs, float)
