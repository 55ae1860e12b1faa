import math

import mpmath
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from ibcheck.theory import InputError, get_claim
from ibcheck.theory.claim import Claim, Hypothesis
from ibcheck.theory.evaluate import relation_holds
from ibcheck.theory.variables import d as D_VAR
from ibcheck.theory.variables import symbol
from ibcheck.theory.window import applicability_window

C42 = get_claim("FVBS23.thm.4_2")


def fvbs_float(d, k, n, eps, delta):
    """FVBS23.thm.4_2's H1..H5 in float log space, written independently of the sympy path."""
    ld = math.log(d)
    return [
        n >= k * ld**2,
        -math.log(delta) <= -math.log(3) + (ld - 1) * ld,
        math.log(n) <= 0.5 * math.log(delta / 3) + d / 32,
        math.log(n) <= 0.5 * math.log(delta) - math.log(3) + ld**2 / 4,
        math.log(n) <= math.log(eps / 4) + ld**2 / 2,
    ]


def brute(pred, lo, hi):
    """Closed integer intervals of x in [lo, hi] where pred(x) holds."""
    out, start = [], None
    for x in range(lo, hi + 1):
        if pred(x) and start is None:
            start = x
        if not pred(x) and start is not None:
            out.append((start, x - 1))
            start = None
    if start is not None:
        out.append((start, None))
    return out


@pytest.mark.parametrize("k, n, eps, delta", [(10, 1000, 0.1, 0.1), (5, 300, 0.2, 0.05), (3, 250, 0.05, 0.3), (1000, 1000, 0.1, 0.1)])
def test_window_in_d_matches_brute_force(k, n, eps, delta):
    w = applicability_window(C42, "d", f"k={k},n={n},eps={eps},delta={delta}")
    top = 40000
    b = brute(lambda d: all(fvbs_float(d, k, n, eps, delta)), 2, top)
    assert all(hi is not None and hi < top for _, hi in w.intervals)
    assert [tuple(iv) for iv in w.intervals] == b
    assert w.verified


def test_window_in_n_and_k_match_brute_force():
    w = applicability_window(C42, "n", "d=1000,k=10,eps=0.1,delta=0.1")
    assert [tuple(iv) for iv in w.intervals] == brute(lambda n: all(fvbs_float(1000, 10, n, 0.1, 0.1)), 1, 30000)[:1]
    assert w.binding == [{"low": "H1", "high": "H4"}]
    w = applicability_window(C42, "k", "d=1000,n=10000,eps=0.1,delta=0.1")
    assert [tuple(iv) for iv in w.intervals] == brute(lambda k: all(fvbs_float(1000, k, 10000, 0.1, 0.1)), 2, 2000)


def test_or_hypothesis_window_matches_brute_force():
    c = get_claim("SSTTM18.cor.robust_upper")
    w = applicability_window(c, "d", "n=10000,sigma=1,eps=0.1")

    def ok(d):
        return 1 <= d ** 0.25 / 32 and 0.1 <= 0.25 and (0.1 <= d ** -0.25 / 4 or 10000 >= 64 * 0.01 * math.sqrt(d))
    # The window is [32^4, 15625^2]; brute force on a band around each end.
    assert w.intervals == [(32**4, 15625**2)]
    assert ok(32**4) and not ok(32**4 - 1) and ok(15625**2) and not ok(15625**2 + 1)


def test_two_branches_give_two_intervals():
    x = symbol("d")
    c = Claim(id="TEST.branches", title="t", paper="t", seeds=(), status="exact", kind="lemma", variables=(D_VAR,),
              hypotheses=(Hypothesis("H1", sp.GreaterThan((sp.log(x) - 3) ** 2, 1)),))
    w = applicability_window(c, "d", {})
    assert [tuple(iv) for iv in w.intervals] == brute(lambda d: (math.log(d) - 3) ** 2 >= 1, 2, 5000)
    assert len(w.intervals) == 2 and w.intervals[1][1] is None


def test_exact_upper_end_far_beyond_float64():
    w = applicability_window(C42, "d", "k=10,n=100000,eps=0.1,delta=0.1")
    with mpmath.workdps(80):
        assert w.intervals[0][1] == int(mpmath.floor(mpmath.exp(100)))  # H1: ln d <= sqrt(n/k) = 100
    assert w.binding[0]["high"] == "H1" and w.verified


def test_astronomical_upper_end_is_reported_in_log10():
    w = applicability_window(C42, "d", "k=2,n=1e12,eps=0.1,delta=0.1")
    lo, hi = w.intervals[0]
    assert isinstance(lo, int) and isinstance(hi, str) and hi.startswith("~10^")
    assert w.log10_intervals[0][1] == pytest.approx(math.sqrt(5e11) / math.log(10), rel=1e-12)


def test_empty_window_says_why():
    w = applicability_window(C42, "d", "k=1000,n=1000,eps=0.1,delta=0.1")
    assert w.intervals == [] and "never all together" in w.empty_because


@pytest.mark.parametrize("free, at, word", [
    ("zz", "k=10", "not a variable"),
    ("d", "k=10", "needs values for"),
    ("d", "d=5,k=10,n=100,eps=0.1,delta=0.1", "must not also be fixed"),
])
def test_window_bad_input(free, at, word):
    with pytest.raises(InputError) as e:
        applicability_window(C42, free, at)
    assert word in str(e.value)


def holds_all(d, k, n, eps, delta):
    with mpmath.workdps(max(60, len(str(d)) + 20)):
        vals = {"d": mpmath.mpf(d), "k": k, "n": n, "eps": mpmath.mpf(eps), "delta": mpmath.mpf(delta)}
        return [relation_holds(h.expr, vals)[0] for h in C42.hypotheses]


@settings(max_examples=30, deadline=None)
@given(k=st.integers(2, 60), logn=st.floats(1, 9), eps=st.sampled_from(["0.01", "0.1", "0.3"]), delta=st.sampled_from(["0.001", "0.05", "0.5"]))
def test_property_inside_all_hold_outside_one_fails(k, logn, eps, delta):
    n = int(10**logn)
    w = applicability_window(C42, "d", f"k={k},n={n},eps={eps},delta={delta}")
    for lo, hi in w.intervals:
        if isinstance(hi, str):
            continue
        inside = [lo] + ([hi, (lo + hi) // 2] if hi is not None else [lo * 10])
        for x in inside:
            assert all(holds_all(x, k, n, eps, delta)), (x, w.intervals)
        if lo > 2:
            assert not all(holds_all(lo - 1, k, n, eps, delta))
        if hi is not None:
            assert not all(holds_all(hi + 1, k, n, eps, delta))


def test_window_without_a_symbolic_root_uses_the_bracketing_root_finder(monkeypatch):
    """d^(1/3) + (ln d)^2 <= 60 has no closed-form root in u = ln d: the sign scan brackets it and
    mpmath's bracketing solver finds it; the integer window still matches brute force exactly."""
    import ibcheck.theory.window as W

    calls = []
    real = W._root_between
    monkeypatch.setattr(W, "_root_between", lambda g, a, b: calls.append((a, b)) or real(g, a, b))
    x = symbol("d")
    c = Claim(id="TEST.transcendental", title="t", paper="t", seeds=(), status="exact", kind="lemma", variables=(D_VAR,),
              hypotheses=(Hypothesis("H1", sp.LessThan(x ** sp.Rational(1, 3) + sp.log(x) ** 2, 60)),))
    w = applicability_window(c, "d", {})
    assert calls, "the sampled path was not taken"
    assert [tuple(iv) for iv in w.intervals] == brute(lambda d: d ** (1 / 3) + math.log(d) ** 2 <= 60, 2, 200000)  # d >= 2
    assert w.verified


def _product_claim(rel):
    from ibcheck.theory.variables import k as K_VAR
    from ibcheck.theory.variables import n as N_VAR
    return Claim(id="TEST.product", variables=(D_VAR, K_VAR, N_VAR), hypotheses=(Hypothesis("H1", rel),))


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 40), k=st.integers(1, 40), p=st.sampled_from([1, 2, 3]), strict=st.booleans())
def test_window_of_a_product_hypothesis_keeps_its_equality_point(n, k, p, strict):
    """``d >= n * k**p`` (or >): the window starts exactly at n * k**p (+1 when strict), as integer arithmetic says,
    and bounds, window and the hypothesis check agree at that point. The log-space comparison alone lost it
    (``d >= n*k`` at n = 7, k = 3 gave [22, oo))."""
    d, kk, nn = symbol("d"), symbol("k"), symbol("n")
    rel = (sp.StrictGreaterThan if strict else sp.GreaterThan)(d, nn * kk**p)
    w = applicability_window(_product_claim(rel), "d", f"n={n},k={k}")
    edge = n * k**p + (1 if strict else 0)
    assert [tuple(iv) for iv in w.intervals] == [(max(edge, 2), None)]
    assert w.verified
    assert relation_holds(rel, {"d": n * k**p, "n": n, "k": k})[0] is (not strict)
    if n * k**p > 2:
        assert relation_holds(rel, {"d": n * k**p - 1, "n": n, "k": k})[0] is False


def test_window_equality_point_seen_by_bounds_and_at_high_precision():
    d, kk, nn = symbol("d"), symbol("k"), symbol("n")
    rel = sp.GreaterThan(d, nn * kk)
    w = applicability_window(_product_claim(rel), "d", "n=7,k=3")
    assert [tuple(iv) for iv in w.intervals] == [(21, None)]
    with mpmath.workdps(30):  # the precision of the window's end checks, where ln 21 and ln 7 + ln 3 differed
        assert relation_holds(rel, {"d": 21, "n": 7, "k": 3})[0]
    assert not relation_holds(sp.StrictGreaterThan(d, nn * kk), {"d": 21, "n": 7, "k": 3})[0]
    # a decimal is the decimal it was read as: eps <= 1/d at eps = 0.1, d = 10 is an equality
    e = symbol("eps")
    assert relation_holds(sp.LessThan(e, 1 / d), {"eps": mpmath.mpf("0.1"), "d": 10})[0]
    assert not relation_holds(sp.StrictLessThan(e, 1 / d), {"eps": mpmath.mpf("0.1"), "d": 10})[0]
    assert relation_holds(sp.GreaterThan(d, sp.sqrt(nn * kk)), {"d": 6, "n": 12, "k": 3})[0]
    assert not relation_holds(sp.StrictGreaterThan(d, sp.sqrt(nn * kk)), {"d": 6, "n": 12, "k": 3})[0]


def test_window_of_a_real_variable_gives_real_intervals():
    """A real free variable (eps, a signal strength) is no longer refused: its window is real intervals whose ends
    are the roots, closed for <= and open for <, each checked just inside and just outside."""
    from ibcheck.theory.variables import eps as E_VAR
    from ibcheck.theory.variables import n as N_VAR
    from ibcheck.theory.variables import shared_variable
    d, nn, e, s = symbol("d"), symbol("n"), symbol("eps"), symbol("snr")
    c = Claim(id="TEST.real", variables=(D_VAR, N_VAR, E_VAR, shared_variable("snr")),
              hypotheses=(Hypothesis("H1", sp.LessThan(e, 1 / d)), Hypothesis("H2", sp.StrictGreaterThan(e, 1 / (d * nn))),
                          Hypothesis("H3", sp.GreaterThan(s**2, sp.log(d)))))
    w = applicability_window(c, "eps", "d=21,n=7,snr=3")
    assert w.real and w.verified
    assert len(w.intervals) == 1 and w.closed == [(False, True)]
    assert abs(float(w.intervals[0][0]) - 1 / 147) < 1e-15 and abs(float(w.intervals[0][1]) - 1 / 21) < 1e-15
    assert w.binding == [{"low": "H2", "high": "H1"}]
    assert w.interval_text(0).startswith("(0.0068027") and w.interval_text(0).endswith("]")
    w = applicability_window(c, "snr", "d=100,n=7,eps=0.005")
    assert abs(float(w.intervals[0][0]) - math.sqrt(math.log(100))) < 1e-14 and w.intervals[0][1] is None
    assert w.closed == [(True, False)] and w.verified
    w = applicability_window(c, "snr", "d=100,n=7,eps=0.001")  # H2 fails whatever snr is
    assert w.intervals == [] and "H2" in w.empty_because
