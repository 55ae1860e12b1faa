"""Issue 50, item 1: exact real windows. A hostile-input round found wrong answers from the real-variable window:
a point window reported empty, thresholds below 1e-300 rounded away, a domain [-5, 5] pinned at 0, an open domain end
shown closed at 0.50000000000000001, nan/inf/reversed domains accepted, a side that is 0 crashing with KeyError, and
``x >= 1e-400`` refused as "always true". Each case goes through the public path (``ibcheck.window``, ``ibcheck.bounds``
and the command line); a property test checks the window against brute-force membership in exact rationals."""
from __future__ import annotations

import itertools
import json
from decimal import Decimal
from fractions import Fraction

import pytest
import sympy as sp
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import ibcheck
from ibcheck.theory import InputError
from ibcheck.theory import registry as R
from tests.conftest import run_cli

V = ibcheck.Variable
POS = dict(low=0, low_open=True)
_IDS = itertools.count(1)


@pytest.fixture(autouse=True)
def _own_registry():
    with R.using(R.current().copy()):
        yield


def window(hyps, var=None, at=None, extra=("d",)):
    """The window of x for a claim with these hypotheses (strings, or sympy relations), through ibcheck.window."""
    var = var if var is not None else V("x", "a real x", **POS)
    hyps = {k: (h if isinstance(h, str) else ibcheck.Hypothesis(k, h)) for k, h in hyps.items()}
    cid = f"W5.thm.{next(_IDS)}"
    ibcheck.register(ibcheck.Claim(id=cid, variables=[var, *extra], hypotheses=hyps))
    return ibcheck.window(cid, free="x", at=at or {})


def texts(w):
    return [w.interval_text(i) for i in range(len(w.intervals))]


def applies(hyps, x, var=None):
    """ibcheck.bounds' verdict at one point (the evaluator the window's checks share)."""
    var = var if var is not None else V("x", "a real x", **POS)
    cid = f"W5.pt.{next(_IDS)}"
    ibcheck.register(ibcheck.Claim(id=cid, variables=[var], hypotheses=hyps))
    return ibcheck.bounds(cid, at={"x": x}).applies


# -- the cases of the report ---------------------------------------------------------------------------------------
def test_x_at_least_2_and_at_most_2_is_the_point_2():
    w = window({"H1": "x >= 2", "H2": "x <= 2"})
    assert texts(w) == ["[2, 2]"] and w.closed == [(True, True)] and w.exact_intervals == [("2", "2")]
    assert w.binding == [{"low": "H1", "high": "H2"}] and w.verified


def test_a_threshold_of_1e_320_is_kept_exactly():
    w = window({"H1": "x >= 1e-320"})
    assert texts(w) == ["[1e-320, oo)"] and w.exact_intervals == [("1e-320", None)] and w.verified
    assert w.binding[0]["low"] == "H1"
    assert applies({"H1": "x >= 1e-320"}, "1e-320") is True
    assert applies({"H1": "x >= 1e-320"}, "1e-321") is False  # the point that (0, oo) wrongly held


def test_a_threshold_times_a_fixed_variable_below_1e_300():
    w = window({"H1": "x <= d*1e-310"}, at={"d": 10})
    assert texts(w) == ["(0, 1e-309]"] and w.verified and w.binding == [{"low": "domain (a number > 0)", "high": "H1"}]


def test_a_domain_of_minus_5_to_5_is_not_pinned_at_0():
    w = window({"H1": "x <= 1"}, var=V("x", "x", low=-5, high=5))
    assert texts(w) == ["[-5, 1]"] and w.verified
    assert w.binding == [{"low": "domain (a number in [-5, 5])", "high": "H1"}]


@pytest.mark.parametrize("hyp", ["x >= 0.5", "x <= 2", "x >= 0.25"])
def test_an_open_domain_end_is_shown_open_at_its_own_value(hyp):
    w = window({"H1": hyp}, var=V("x", "x", low=0.5, high=1, low_open=True))
    assert texts(w) == ["(0.5, 1]"] and w.closed == [(False, True)] and w.verified
    assert w.binding[0]["low"] == "domain (a number in (0.5, 1])"


@pytest.mark.parametrize("domain, word", [
    (dict(low=float("nan"), high=5), "low=nan is not a finite number"),
    (dict(low=float("inf")), "low=inf is not a finite number"),
    (dict(low=0, high=float("-inf")), "high=-inf is not a finite number"),
    (dict(low=0, high=float("nan")), "high=nan is not a finite number"),
    (dict(low=3, high=2), "the domain [3, 2] is empty"),
    (dict(low=2, high=2, low_open=True), "the domain (2, 2] is empty"),
    (dict(low="0"), "low='0' is not a finite number"),
])
def test_a_bad_domain_is_refused_once_at_validation(domain, word):
    with pytest.raises(InputError) as e:
        V("x", "x", **domain)
    msg = str(e.value)
    assert word in msg and "\n" not in msg and msg.startswith("variable x: ")


def test_a_bad_domain_in_a_claims_file_is_one_line_and_status_2(tmp_path):
    path = tmp_path / "bad_claims.py"
    path.write_text("import ibcheck\nc = ibcheck.Claim(id='BAD.thm.1', variables=[ibcheck.Variable('x', 'x', low=float('nan'))],\n"
                    "                  hypotheses={'H1': 'x <= 1'})\n")
    res = run_cli("--claims", str(path), "window", "BAD.thm.1", "--free", "x")
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1 and "low=nan is not a finite number" in res.stderr


def test_a_product_with_a_side_of_0_is_a_union():
    w = window({"H1": "(x-1)*(x-3) >= 0"})
    assert texts(w) == ["(0, 1]", "[3, oo)"] and w.verified
    assert w.binding == [{"low": "domain (a number > 0)", "high": "H1"}, {"low": "H1", "high": "domain (a number > 0)"}]
    w = window({"H1": "(x-1)*(x-3) >= 0"}, var=V("x", "x", low=-5, high=5))
    assert texts(w) == ["[-5, 1]", "[3, 5]"] and w.verified
    assert applies({"H1": "(x-1)*(x-3) >= 0"}, "2") is False  # bounds crashed there too (log 0)
    assert applies({"H1": "(x-1)*(x-3) >= 0"}, "3") is True


def test_an_integer_window_with_a_side_of_0():
    """The same KeyError hit integer variables: (d-3)(d-6) >= 0 over d >= 2 is {2, 3} and [6, oo)."""
    ibcheck.register(ibcheck.Claim(id="W5.int.1", variables=["d"], hypotheses={"H1": "(d-3)*(d-6) >= 0", "H2": "d - 1 > 0"}))
    w = ibcheck.window("W5.int.1", free="d", at={})
    assert w.intervals == [(2, 3), (6, None)] and w.verified


def test_x_at_least_1e_400_is_accepted_and_exact():
    w = window({"H1": "x >= 1e-400"})
    assert texts(w) == ["[1e-400, oo)"] and w.verified
    assert applies({"H1": "x >= 1e-400"}, "1e-401") is False and applies({"H1": "x >= 1e-400"}, "1e-400") is True


# -- variants ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("hyps", [{"H1": "x > 2", "H2": "x < 2"}, {"H1": "x >= 2", "H2": "x < 2"}, {"H1": "x > 2", "H2": "x <= 2"}])
def test_a_strict_inequality_at_the_point_leaves_it_empty(hyps):
    w = window(hyps)
    assert w.intervals == [] and "never all together" in w.empty_because and w.verified


def test_the_smallest_double_and_below():
    assert texts(window({"H1": "x >= 5e-324"})) == ["[5e-324, oo)"]
    assert texts(window({"H1": "x < 1e-9999"})) == ["(0, 1e-9999)"]


def test_a_17_digit_threshold_inside_an_open_domain_end():
    """0.50000000000000001 is above the domain's open end 0.5 (the double both round to): a closed end of its own."""
    w = window({"H1": "x >= 0.50000000000000001"}, var=V("x", "x", low=0.5, high=1, low_open=True))
    assert texts(w) == ["[0.50000000000000001, 1]"] and w.binding[0]["low"] == "H1" and w.verified


def test_domains_with_exact_rational_ends():
    w = window({"H1": "x <= 1/2"}, var=V("x", "x", low=Fraction(1, 3), high=Fraction(2, 3)))
    assert w.exact_intervals == [("1/3", "0.5")] and w.closed == [(True, True)]
    assert w.intervals[0][0] == "0.33333333333333333" and w.verified
    w = window({"H1": "x >= 0.2"}, var=V("x", "x", low=Fraction(1, 3), high=1, low_open=True))
    assert texts(w) == ["(0.33333333333333333, 1]"] and w.exact_intervals == [("1/3", "1")]


def test_a_domain_that_is_one_point():
    assert texts(window({"H1": "x >= 2"}, var=V("x", "x", low=2, high=2))) == ["[2, 2]"]
    assert window({"H1": "x > 2"}, var=V("x", "x", low=2, high=2)).intervals == []


def test_an_unbounded_domain_reaches_minus_infinity():
    w = window({"H1": "x <= 1"}, var=V("x", "x"))
    assert texts(w) == ["(-oo, 1]"] and w.verified


def test_nested_products_poles_and_double_roots():
    assert texts(window({"H1": "(x-1)*((x-2)*(x-4)) <= 0"})) == ["(0, 1]", "[2, 4]"]
    assert texts(window({"H1": "1/(x-2) >= 1"})) == ["(2, 3]"]  # undefined at the pole 2
    assert texts(window({"H1": "1/(x-2) > 1"})) == ["(2, 3)"]
    w = window({"H1": "(x-1)**2 > 0"})
    assert texts(w) == ["(0, 1)", "(1, oo)"] and w.verified
    assert texts(window({"H1": "(x-1)**2 <= 0"})) == ["[1, 1]"]


def test_irrational_ends_are_exact_where_sympy_has_them():
    w = window({"H1": "x**2 >= 2"}, var=V("x", "x", low=-5, high=5))
    assert w.exact_intervals == [("-5", "-sqrt(2)"), ("sqrt(2)", "5")] and w.closed == [(True, True), (True, True)]
    assert float(w.intervals[1][0]) == pytest.approx(2**0.5, rel=1e-16) and w.verified
    w = window({"H1": "log(x) >= log(2)"})
    assert texts(w) == ["[2, oo)"] and w.exact_intervals == [("2", None)]
    assert texts(window({"H1": "sqrt(x) <= 3"})) == ["(0, 9]"]


def test_transcendental_ends_below_the_old_scan_range():
    w = window({"H1": "log(x) <= -800"})  # e^-800 is about 10^-347
    assert w.exact_intervals == [("0", "exp(-800)")] and w.intervals[0][1].startswith("3.667874584177687") and w.verified


def test_a_log_is_undefined_at_and_below_0():
    w = window({"H1": "log(x) <= 1"}, var=V("x", "x", low=-5, high=5))
    assert w.exact_intervals == [("0", "E")] and w.closed == [(False, True)] and w.verified


@pytest.mark.parametrize("hyp, domain, exact, closed", [
    ("log(x) > 0", dict(low=1, high=5), [("1", "5")], [(False, True)]),  # the root is the domain's closed end
    ("log(x) >= 0", dict(low=1, high=5), [("1", "5")], [(True, True)]),
    ("log(x - 1) <= 0", dict(low=-5, high=5), [("1", "2")], [(False, True)]),  # undefined at 1 and below
    ("exp(-x) <= 2", dict(low=-5, high=5), [("-log(2)", "5")], [(True, True)]),  # a root below 0
    ("sqrt(x - 1) >= 0.5", dict(low=0, high=5), [("1.25", "5")], [(True, True)]),
])
def test_ends_of_non_rational_hypotheses(hyp, domain, exact, closed):
    w = window({"H1": hyp}, var=V("x", "x", **domain))
    assert w.exact_intervals == exact and w.closed == closed and w.verified


def test_the_command_line_prints_points_unions_and_exact_ends(tmp_path):
    path = tmp_path / "my_claims.py"
    path.write_text(
        "import ibcheck\n"
        "pt = ibcheck.Claim(id='PT.thm.1', variables=[ibcheck.Variable('x', 'x', low=0, low_open=True)],\n"
        "                   hypotheses={'H1': 'x >= 2', 'H2': 'x <= 2'})\n"
        "q = ibcheck.Claim(id='Q.thm.1', variables=[ibcheck.Variable('x', 'x', low=-5, high=5), 'd'],\n"
        "                  hypotheses={'H1': '(x-1)*(x-3) >= 0', 'H2': 'x <= d*1e-310 + 4'})\n")
    out = run_cli("--claims", str(path), "window", "PT.thm.1", "--free", "x", check_rc=0).stdout
    assert "[2, 2]   binding: low H1, high H2" in out and "verified a relative 1e-10 inside and outside: yes" in out
    out = run_cli("--claims", str(path), "window", "Q.thm.1", "--free", "x", "--at", "d=10", check_rc=0).stdout
    assert "[-5, 1]   binding: low domain (a number in [-5, 5]), high H1" in out
    assert "[3, 4.0]   binding: low H1, high H2" in out  # 4 + 1e-309 shown to 17 digits; exact in the JSON
    data = json.loads(run_cli("--claims", str(path), "window", "Q.thm.1", "--free", "x", "--at", "d=10", "--json", check_rc=0).stdout)
    assert data["exact_intervals"] == [["-5", "1"], ["3", str(sp.Rational(4) + sp.Rational(1, 10**309))]]
    assert data["closed"] == [[True, True], [True, True]] and data["verified"] is True


# -- property: the window against brute-force membership in exact rationals ---------------------------------------
RATS = st.fractions(min_value=-6, max_value=6, max_denominator=12)
NONZERO = RATS.filter(lambda f: f != 0)
RELS = {">=": lambda a, b: a >= b, ">": lambda a, b: a > b, "<=": lambda a, b: a <= b, "<": lambda a, b: a < b}
SYMPY_RELS = {">=": sp.GreaterThan, ">": sp.StrictGreaterThan, "<=": sp.LessThan, "<": sp.StrictLessThan}


def _q(f: Fraction) -> str:
    """A rational as formula text: a terminating one as a decimal sometimes (read back exactly), else p/q."""
    return f"({f.numerator}/{f.denominator})"


@st.composite
def constraints(draw):
    """(formula over x as a string of rationals, exact predicate on Fraction x, the points where its truth may change)."""
    kind = draw(st.sampled_from(["linear", "decimal", "product", "power", "pole"]))
    rel = draw(st.sampled_from(list(RELS)))
    holds = RELS[rel]
    if kind in ("linear", "decimal"):
        a, b = draw(NONZERO), draw(RATS)
        if kind == "linear":
            t = draw(RATS)
            text_t = _q(t)
        else:  # a threshold written as a decimal (0.375, -12.5, 0.001): read back as exactly that rational
            t = Fraction(draw(st.integers(-999, 999)), draw(st.sampled_from([1, 8, 100, 1000])))
            text_t = format(Decimal(t.numerator) / Decimal(t.denominator), "f")
        return f"{_q(a)}*x + {_q(b)} {rel} {text_t}", lambda x: holds(a * x + b, t), [(t - b) / a]
    if kind == "product":
        c = draw(NONZERO)
        roots = draw(st.lists(RATS, min_size=1, max_size=3))
        body = "*".join(f"(x - {_q(r)})" for r in roots)

        def value(x, c=c, roots=roots):
            out = c
            for r in roots:
                out *= x - r
            return out
        return f"{_q(c)}*{body} {rel} 0", lambda x: holds(value(x), 0), list(roots)
    if kind == "power":
        n = draw(st.sampled_from([2, 3]))
        s = draw(NONZERO)
        s = abs(s) if n == 2 else s
        return f"x**{n} {rel} {_q(s ** n)}", lambda x: holds(x**n, s**n), [s, -s]
    r, t = draw(RATS), draw(NONZERO)
    return (f"1/(x - {_q(r)}) {rel} {_q(t)}", lambda x: x != r and holds(1 / (x - r), t), [r, r + 1 / t])


@st.composite
def domains(draw):
    """(Variable kwargs, membership predicate, ends)."""
    kind = draw(st.sampled_from(["positive", "closed", "open-low", "unbounded", "low-only"]))
    if kind == "positive":
        return POS, lambda x: x > 0, [Fraction(0)]
    if kind == "unbounded":
        return {}, lambda x: True, []
    lo = draw(RATS)
    if kind == "low-only":
        return dict(low=lo), lambda x: x >= lo, [lo]
    hi = lo + draw(st.fractions(min_value=Fraction(1, 4), max_value=8, max_denominator=6))
    lo_open = kind == "open-low"
    inside = (lambda x: lo < x <= hi) if lo_open else (lambda x: lo <= x <= hi)
    return dict(low=lo, high=hi, low_open=lo_open), inside, [lo, hi]


def _member(w, x: Fraction) -> bool:
    """Is x in the window, read from its exact ends (every end of these windows is rational)."""
    for (lo, hi), (lc, hc) in zip(w.exact_intervals, w.closed):
        above = lo == "-oo" or (Fraction(lo) < x or (lc and Fraction(lo) == x))
        below = hi is None or (x < Fraction(hi) or (hc and Fraction(hi) == x))
        if above and below:
            return True
    return False


@settings(max_examples=70, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(cons=st.lists(constraints(), min_size=1, max_size=3), dom=domains())
def test_property_window_agrees_with_brute_force_membership(cons, dom):
    kwargs, in_domain, dom_ends = dom
    var = V("x", "x", **kwargs)
    positive = kwargs.get("low") is not None and (kwargs["low"] > 0 or (kwargs["low"] == 0 and kwargs.get("low_open")))
    with R.using(R.current().copy()):
        if positive:  # the parser's path: formulas as text (its symbols are positive, so only for a positive domain)
            hyps = {f"H{i + 1}": text for i, (text, _, _) in enumerate(cons)}
        else:
            hyps = {}
        try:
            if not positive:  # any sign: the formulas as sympy relations over a real x
                x = sp.Symbol("x", real=True)
                hyps = {}
                for i, (text, _, _) in enumerate(cons):
                    lhs, rel, rhs = _split(text)
                    # (sympy decides -x^2 > 0 over the reals at construction: refused there, as "never true")
                    hyps[f"H{i + 1}"] = ibcheck.Hypothesis(f"H{i + 1}", SYMPY_RELS[rel](_expr(lhs, x), _expr(rhs, x)))
            ibcheck.register(ibcheck.Claim(id="PROP.thm.1", variables=[var], hypotheses=hyps))
        except InputError as e:  # sympy decided a relation for positive x ("always true"): nothing to window
            assume("for positive values" not in str(e))
            raise
        w = ibcheck.window("PROP.thm.1", free="x", at={})
    assert w.verified, w.as_json()
    for (lo, hi), (_, shown_hi) in zip(w.exact_intervals, w.intervals):  # every end here is rational, so exact
        assert lo is not None and (hi is not None or shown_hi is None), w.exact_intervals
    crit = sorted({p for _, _, pts in cons for p in pts} | set(dom_ends) | {Fraction(0)})
    grid = set(crit) | {crit[0] - 1, crit[-1] + 1, crit[0] - 1000, crit[-1] + 1000}
    grid |= {(a + b) / 2 for a, b in zip(crit, crit[1:])}
    grid |= {p + s * Fraction(1, 10**12) for p in crit for s in (-1, 1)}
    for p in sorted(grid):
        expected = in_domain(p) and all(pred(p) for _, pred, _ in cons)
        assert _member(w, p) == expected, (p, [t for t, _, _ in cons], kwargs, w.interval_text(0) if w.intervals else w.empty_because)


def _split(text: str) -> tuple[str, str, str]:
    for rel in (">=", "<=", ">", "<"):
        if f" {rel} " in text:
            lhs, rhs = text.split(f" {rel} ")
            return lhs, rel, rhs
    raise AssertionError(text)


def _expr(text: str, x: sp.Symbol) -> sp.Expr:
    """The test's own formula text (rationals, x, + - * / **, parentheses) as sympy over the real x, read by the
    whitelist parser (never eval) and then moved onto the real symbol."""
    from ibcheck.theory.expressions import parse_expression

    e = parse_expression(text)
    return e.xreplace({s: x for s in e.free_symbols if s.name == "x"}) if isinstance(e, sp.Basic) else sp.Integer(e)
