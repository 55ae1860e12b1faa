"""Issue 50, item 5: one validation for the public types and calls.

``compare_probability([])`` and ``scaling_report(-1, -1)`` were bare TypeErrors; ``Variable(None, None)``,
``Variable('', '')``, ``Variable(nan, nan)`` and ``Hypothesis(None, None)`` were built unchecked; a LaTeX error quoted
sympy's rewrite (``'d*def*x**2'``), not what was typed. Each case and its variants: an InputError in one line."""
from __future__ import annotations

import math
import pathlib

import numpy as np
import pytest
import sympy as sp

import ibcheck
from ibcheck import Hypothesis, Variable
from ibcheck.errors import InputError


def _refused(call, *words: str) -> str:
    with pytest.raises(InputError) as info:
        call()
    msg = str(info.value)
    assert "\n" not in msg
    for w in words:
        assert w in msg, (w, msg)
    return msg


# -- compare_probability([]) and scaling_report(-1, -1): bare TypeErrors ---------------------------------------------------
@pytest.mark.parametrize("claim", [[], None, 3, {"a": 1}, ""])
def test_compare_probability_refuses_a_claim_that_is_not_an_id(claim):
    _refused(lambda: ibcheck.compare_probability(claim), f"claim={claim!r} is not accepted", "non-empty string")


def test_compare_probability_names_the_probability_claims_for_an_unknown_id():
    _refused(lambda: ibcheck.compare_probability("FVBS23.thm.4_2"), "is not a probability claim", "FVBS23.thm.3_1")


@pytest.mark.parametrize("out, claims, words", [
    (-1, -1, ["out=-1 is not accepted"]),
    (None, None, ["out=None is not accepted"]),
    ("{tmp}", -1, ["claims=-1 is not accepted", "a list of claim ids"]),
    ("{tmp}", [1], ["claims=[1] is not accepted"]),
    ("{tmp}", {"FVBS23.thm.4_2"}, ["is not accepted: claims must be a list of claim ids"]),
    ("{tmp}", ["NOPE.x"], ["unknown claim id 'NOPE.x'"]),
])
def test_scaling_report_refuses_bad_arguments_before_writing(tmp_path, out, claims, words):
    target = str(tmp_path / "r") if out == "{tmp}" else out
    _refused(lambda: ibcheck.scaling_report(target, claims), *words)
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("path, words", [(None, ["path=None is not accepted"]), (3, ["path=3"]), (b"x.csv", ["path=b'x.csv'"]),
                                         ("", ["path='' is not accepted"])])
def test_read_data_refuses_a_path_that_is_not_text(path, words):
    _refused(lambda: ibcheck.read_data(path), *words)


def test_read_data_takes_a_pathlib_path(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("x,y\n1,1\n-1,-1\n")
    X, y, c = ibcheck.read_data(p)
    assert X.tolist() == [[1.0], [-1.0]] and y.tolist() == [1.0, -1.0] and c is None
    _refused(lambda: ibcheck.read_data(pathlib.Path(tmp_path / "missing.csv")), "no such file")


# -- Variable(None, None), Variable('', ''), Variable(nan, nan): built unchecked --------------------------------------------
@pytest.mark.parametrize("args, kwargs, words", [
    ((None, None), {}, ["Variable(name=None) is not a name"]),
    (("", ""), {}, ["Variable(name='') is not a name"]),
    ((math.nan, math.nan), {}, ["Variable(name=nan) is not a name"]),
    (("2d", "x"), {}, ["Variable(name='2d') is not a name"]),
    (("_d", "x"), {}, ["not starting with _"]),
    (("lambda", "x"), {}, ["Variable(name='lambda') is not a name", "not a keyword"]),
    (("d", None), {}, ["variable d: description=None is not a string"]),
    (("d", "x"), {"integer": "yes"}, ["integer='yes' is not accepted: integer must be True or False"]),
    (("d", "x"), {"low_open": 1}, ["low_open=1 is not accepted"]),
    (("d", "x"), {"tends_to": "inf"}, ["tends_to='inf' is not accepted", "'oo', '0', 'const'"]),
    (("d", "x"), {"tends_to": None}, ["tends_to=None is not accepted"]),
    (("d", "x"), {"low": math.nan}, ["low=nan is not a finite number"]),
    (("d", "x"), {"high": "1"}, ["high='1' is not a finite number"]),
])
def test_variable_is_checked_when_built(args, kwargs, words):
    _refused(lambda: Variable(*args, **kwargs), *words)


def test_a_checked_variable_still_builds_as_before():
    v = Variable("n_train", "samples", integer=True, low=np.int64(2), high=sp.Integer(10), low_open=np.bool_(False), tends_to="oo")
    assert v.contains(5) and not v.contains(1) and v.symbol.name == "n_train"
    assert Variable("d", "").domain_text() == "a number"  # an empty description is a description
    c = ibcheck.Claim("my.v5", "t", variables=[Variable("t", "real", low=1)], bounds=[ibcheck.Bound("r", "O", "t")])
    assert c.variable("t").low == 1


def test_a_claim_with_a_bad_variable_says_so_in_one_line():
    _refused(lambda: ibcheck.Claim("my.v6", variables=["class"]), "variable 'class' is not a name")


# -- Hypothesis(None, None): built unchecked ----------------------------------------------------------------------------------
@pytest.mark.parametrize("args, kwargs, words", [
    ((None, None), {}, ["Hypothesis(name=None) is not accepted", "non-empty printable string"]),
    (("", sp.Gt(sp.Symbol("n"), 1)), {}, ["Hypothesis(name='') is not accepted"]),
    (("H\n1", None, "x"), {}, ["Hypothesis(name='H\\n1') is not accepted"]),
    (("H1", None), {}, ["Hypothesis 'H1' has neither a relation (expr) nor a text"]),
    (("H1", None, "   "), {}, ["has neither a relation"]),
    (("H1", None, None), {}, ["Hypothesis 'H1': text=None is not accepted"]),
    (("H1", None, "x"), {"unverified": "no"}, ["unverified='no' is not accepted"]),
    (("H1", "n + k"), {}, ["Hypothesis 'H1': 'n + k' is not a relation"]),
    (("H1", 5), {}, ["Hypothesis 'H1': 5 is not a relation"]),
    (("H1", sp.Symbol("n")), {}, ["is not a relation"]),
    (("H1", "d >= 2*d"), {}, ["never true for positive values"]),
    (("H1", "Eq(n, k)"), {}, ["cannot parse the formula"]),
    (("H1", "n >= "), {}, ["cannot parse the formula"]),
])
def test_hypothesis_is_checked_when_built(args, kwargs, words):
    _refused(lambda: Hypothesis(*args, **kwargs), *words)


def test_a_hypothesis_takes_a_relation_a_string_or_a_text():
    n, k = sp.Symbol("n", positive=True), sp.Symbol("k", positive=True)
    assert Hypothesis("H1", sp.GreaterThan(n, k)).expr == sp.GreaterThan(n, k)
    h = Hypothesis("H1", "n >= k")  # parsed as in a claim's hypotheses dict, the text kept
    assert h.expr == sp.GreaterThan(n, k) and h.text == "n >= k"
    assert Hypothesis("H2", r"n \geq k").expr == sp.GreaterThan(n, k)
    assert Hypothesis("H3", None, "the data are separable").qualitative
    c = ibcheck.Claim("my.h5", variables=["n", "k"], hypotheses=[Hypothesis("H1", "n >= k")], bounds=[ibcheck.Bound("r", "O", "n")])
    assert c.hypotheses[0].expr == sp.GreaterThan(n, k)


# -- a LaTeX error quoted sympy's rewrite, not what was typed ---------------------------------------------------------------
def test_a_latex_error_quotes_the_latex_as_typed():
    msg = _refused(lambda: ibcheck.Claim("my.l5", variables=["d"], bounds=[ibcheck.Bound("r", "O", latex=r"\def\x{d}\x")]),
                   r"claim my.l5: bounds[0]: cannot parse the LaTeX '\def\x{d}\x'", r"\def and \x are not commands of a formula")
    assert "d*def*x**2" not in msg and "position 3" not in msg


@pytest.mark.parametrize("latex, words, rewrite", [
    (r"\sin(d)", [r"cannot parse the LaTeX '\sin(d)'", "the function 'sin' is not admitted"], "the formula 'sin(d)'"),
    (r"d^{d^{d^{d}}}", [r"cannot parse the LaTeX 'd^{d^{d^{d}}}'", "a tower of 3 variable exponents"], "the formula 'd**"),
    (r"\class{d}", [r"'\class{d}'", r"\class is not a command of a formula"], "*class"),
    (r"\sqrt{d} \log x_{ab}", [r"of '\sqrt{d} \log x_{ab}' is not a plain name"], "\\\\sqrt"),  # quoted once, not repr's \\
])
def test_latex_errors_say_the_text_typed_not_its_rewrite(latex, words, rewrite):
    msg = _refused(lambda: ibcheck.Claim("my.l6", variables=["d", "x"], bounds=[ibcheck.Bound("r", "O", latex=latex)]), *words)
    assert rewrite not in msg.replace(latex, "")


def test_a_latex_hypothesis_error_quotes_the_latex_too():
    msg = _refused(lambda: ibcheck.Claim("my.l7", variables=["d", "n"], hypotheses={"H1": r"n \geq \def d"}),
                   r"claim my.l7: hypotheses['H1']: cannot parse the LaTeX 'n \geq \def d'", r"\def is not a command")
    assert "*def" not in msg and "def*" not in msg


def test_latex_that_parses_is_unchanged():
    c = ibcheck.Claim("my.l8", variables=["d", "k"], bounds=[ibcheck.Bound("r", "O", latex=r"\sqrt{d/k}\,\log d")])
    d, k = sp.Symbol("d", positive=True), sp.Symbol("k", positive=True)
    assert sp.simplify(c.bounds[0].expr - sp.sqrt(d / k) * sp.log(d)) == 0
