"""Issue 50, round five: a hypothesis over a variable whose domain admits values <= 0 is read as written, or refused.

The shared symbols are positive, so sympy simplifies a formula for positive values when it is parsed: ``Abs(x) <= 1``
became ``x <= 1``, whose window on [-5, 5] is [-5, 1], not [-1, 1]."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import ibcheck
from ibcheck import Bound, Claim, Variable
from ibcheck.theory.argtypes import require_bool

_ids = itertools.count()


def _claim(h, var):
    return Claim(f"SIGNED{next(_ids)}.a", title="t", variables=[var], hypotheses={"H": h}, bounds=[Bound("y", "O", "1")])


SIGNED = Variable("x", "a signed real", low=-5, high=5)


@pytest.mark.parametrize("h", ["Abs(x) <= 1", "sqrt(x**2) <= 2", "x + 1 > 0", r"\left|x\right| \leq 1", "Abs(x) >= 1/2"])
def test_a_hypothesis_simplified_for_positive_values_is_refused_on_a_signed_domain(h):
    with pytest.raises(ibcheck.InputError, match=r"reads differently for positive values than over the domain \(x in \[-5, 5\]\)"):
        _claim(h, SIGNED)


@pytest.mark.parametrize("h, expr", [("x <= 1", "x <= 1"), ("x**2 >= 2", "x**2 >= 2"), ("log(x) <= 1", "log(x) <= 1")])
def test_a_hypothesis_that_reads_the_same_over_the_reals_is_kept(h, expr):
    assert str(_claim(h, SIGNED).hypotheses[0].expr) == expr


def test_on_a_positive_domain_the_positive_reading_stands():
    """(0, 5]: Abs(x) is x there, so the simplification is right and the hypothesis is built."""
    pos = Variable("x", "a positive real", low=0, low_open=True, high=5)
    assert str(_claim("Abs(x) <= 1", pos).hypotheses[0].expr) == "x <= 1"


def test_a_hypothesis_object_is_checked_against_the_claims_domain_too():
    with pytest.raises(ibcheck.InputError, match="reads differently"):
        _claim(ibcheck.Hypothesis("H", "Abs(x) <= 1"), SIGNED)


def test_numpy_bools_are_bools():
    """numpy 2 names its bool type ``bool``, not ``bool_``: np.True_ was refused as "must be True or False"."""
    assert require_bool("flag", np.True_) is True and require_bool("flag", np.bool_(False)) is False
    with pytest.raises(ibcheck.InputError, match="must be True or False"):
        require_bool("flag", 1)


@pytest.mark.parametrize("h, at, holds", [("log(x) <= 1", 0, False), ("log(x) <= 1", 2, True), ("sqrt(x - 1) <= 1", 0, False),
                                          ("sqrt(x - 1) <= 1", 2, True), ("x <= 1", 0, True)])
def test_bounds_count_a_hypothesis_undefined_at_the_point_as_failing_as_windows_do(h, at, holds):
    """log(0) read as -inf and the real part of sqrt(-1) as 0 made ``log(x) <= 1`` and ``sqrt(x - 1) <= 1`` hold at x = 0
    in ``bounds``, where the window (undefined: fails) left 0 out."""
    var = Variable("x", "a real", low=0, high=5)
    with ibcheck.using_registry(ibcheck.Registry()):  # registered apart: the built-in claim graph stays as it is
        c = _claim(h, var)
        ibcheck.register(c)
        got = {r["name"]: r["holds"] for r in ibcheck.bounds(c.id, at={"x": at}).as_json()["hypotheses"]}
    assert got == {"H": holds}


def test_a_hypothesis_whose_text_is_words_beside_its_relation_is_not_parsed_as_a_formula():
    """Hypothesis('H1', t < 3, 'at some t the loss is below ell(0)') on a domain reaching below 0 was refused as
    "cannot parse the formula 'at some t ...'": the signed-domain check read the words as the formula."""
    import sympy as sp

    t = Variable("t", "time", low=-1, high=5)
    with ibcheck.using_registry(ibcheck.Registry()):
        c = Claim(f"SIGNED{next(_ids)}.a", title="t", variables=[t],
                  hypotheses=[ibcheck.Hypothesis("H1", sp.Symbol("t", positive=True) < 3, "at some t the loss is below ell(0)")],
                  bounds=[Bound("y", "O", "1")])
    assert c.hypotheses[0].text.startswith("at some t")


@pytest.mark.parametrize("integer, expect", [(False, ["[1.414213562373095, 3]"]), (True, ["[2, 3]"])])
def test_an_exact_irrational_domain_end_is_kept_exact(integer, expect):
    """A real variable with low = sqrt(2) raised decimal.InvalidOperation (the real window converted the end as a decimal)."""
    import sympy as sp

    x = Variable("x", "x", integer=integer, low=sp.sqrt(2), high=5)
    with ibcheck.using_registry(ibcheck.Registry()):
        c = _claim("x <= 3", x)
        ibcheck.register(c)
        w = ibcheck.window(c.id, free="x")
    assert [w.interval_text(i) for i in range(len(w.intervals))] == expect
