"""Formula strings are data: a whitelist parser, never eval (issue 18, items 1 and 3)."""
import os
import time

import pytest
import sympy as sp

import ibcheck
from ibcheck.cli import main
from ibcheck.theory.expressions import as_sympy, parse_expression, parse_formula

INJECTION = "d+len([c for c in ().__class__.__base__.__subclasses__() if c.__name__=='_wrap_close'][0].__init__.__globals__['system']('touch {f}'))"


def test_the_injection_creates_no_file_through_any_entry(tmp_path, capsys):
    target = tmp_path / "PWNED"
    payload = INJECTION.format(f=target)
    assert main(["growth", payload, "d"]) == 2
    assert main(["growth", "d", "d", "--coupling", f"k={payload}"]) == 2
    csv = tmp_path / "m.csv"
    csv.write_text("d,value\n64,8\n128,11\n256,16\n")
    assert main(["verdict", "--data", str(csv), "--predict", f"d={payload}", "--kind", "O", "--out", str(tmp_path / "o")]) == 2
    with pytest.raises(ibcheck.InputError):
        ibcheck.growth(payload, "d")
    with pytest.raises(ibcheck.InputError):
        ibcheck.Claim(id="INJ.1", variables=["d"], hypotheses={"H1": f"{payload} >= 1"})
    with pytest.raises(ibcheck.InputError):
        ibcheck.Claim(id="INJ.2", variables=["d"], bounds=[ibcheck.Bound("r", "O", payload)])
    assert not target.exists()
    err = capsys.readouterr().err.strip().splitlines()
    assert all(line.startswith("ibcheck: error:") for line in err) and len(err) == 3, err


@pytest.mark.parametrize("text", ["__import__('os').system('true')", "d.real", "d[0]", "lambda: d", "(lambda x: x)(d)",
                                  "[d for d in (1,)]", "f(d)", "'d'", "d if d else k", "{d: 1}", "d @ k", "sin(d)", "log(d, base=2)",
                                  "_x + d", "b'1'", "1j*d", "d < k < n"])
def test_anything_outside_the_whitelist_is_refused(text):
    with pytest.raises(ibcheck.InputError, match="cannot parse the formula"):
        parse_expression(text)


@pytest.mark.parametrize("text", ["9**9**9**9", "d**(10**5000/3)", "exp(exp(exp(d)))", "2**2**2**d", "10**" + "9" * 70, "d*" * 500 + "d",
                                  "1/0"])
def test_explosive_formulas_are_refused_quickly(text):
    start = time.perf_counter()
    with pytest.raises(ibcheck.InputError):
        parse_expression(text)
    assert time.perf_counter() - start < 2.0


def test_the_admitted_language_builds_the_same_objects_as_before():
    d, k, n, L, T = (ibcheck.theory.variables.symbol(x) for x in "d k n L T".split())
    assert parse_expression("sqrt(d/k)*log(d)**2") == sp.sqrt(d / k) * sp.log(d) ** 2
    assert parse_expression("n >= k*ln(d)^2") == sp.GreaterThan(n, k * sp.log(d) ** 2)
    assert parse_expression("log(T)**(2-2/L)") == sp.log(T) ** (2 - 2 / L)
    assert parse_expression("(n >= 1) & (d > 2)") == sp.And(n >= 1, d > 2)
    assert parse_expression("E**d") == sp.exp(d)          # E is Euler's number, as in LaTeX's e
    assert parse_formula(r"e^{d/32}") == sp.exp(d / 32)
    assert parse_expression("exp(exp(d))") == sp.exp(sp.exp(d))  # two levels are admitted


def test_sympy_objects_are_never_parsed_from_strings():
    class Evil:
        def __str__(self):
            return "__import__('os').system('true')"
    with pytest.raises(ibcheck.InputError):
        as_sympy(Evil())
    assert as_sympy(2) == 2


def test_strings_inside_containers_are_not_parsed_either(tmp_path):
    """sympify(strict=True) still parses the strings inside a dict or a list: containers are refused."""
    target = tmp_path / "PWNED2"
    payload = INJECTION.format(f=target)
    for expr in ({"d": payload}, [payload], (payload,)):
        with pytest.raises(ibcheck.InputError):
            ibcheck.Claim(id="INJ.3", variables=["d"], bounds=[ibcheck.Bound("r", "O", expr)])
    with pytest.raises(ibcheck.InputError):
        ibcheck.Claim(id="INJ.4", variables=["d"], hypotheses=[ibcheck.Hypothesis("H1", {"d": payload})])
    assert not target.exists()


def test_a_huge_point_value_is_refused_without_allocating():
    start = time.perf_counter()
    assert main(["bounds", "FVBS23.thm.4_2", "--at", "d=1e999999999,k=10"]) == 2
    assert time.perf_counter() - start < 5


def test_tiny_valid_values_are_accepted():
    b = ibcheck.bounds("FVBS23.thm.4_2", at={"d": 1000, "k": 10, "n": 5000, "eps": "1e-400", "delta": 0.1})
    assert b.as_json()["hypotheses"]


# -- growth: super-polynomial and signed terms (item 3) ------------------------------------------
@pytest.mark.parametrize("a, b, rel", [("2**d", "d**100", ">"), ("d**100", "2**d", "<"), ("d**d", "d", ">"), ("log(d)**d", "d", ">"),
                                       ("d**log(d)", "d**100", ">"), ("exp(d)", "exp(2*d)", "<"), ("sqrt(d**2+1)-d", "1/d", "~"),
                                       ("d - sqrt(d)", "d", "~")])
def test_growth_known_answers_outside_the_term_algebra(a, b, rel):
    assert ibcheck.growth(a, b).relation == rel


@pytest.mark.parametrize("a, b", [("sqrt(d)-d", "1"), ("2**d*k", "d"), ("1 - d", "1")])
def test_growth_refuses_rather_than_guesses(a, b, capsys):
    with pytest.raises(ibcheck.InputError, match="cannot compare"):
        ibcheck.growth(a, b)
    assert main(["growth", a, b]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_no_file_was_left_in_the_working_directory():
    assert not os.path.exists("PWNED")
