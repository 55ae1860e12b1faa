"""Referee round 5 (names, numbers, messages): each case as it came plus variants, giving the right answer or one line
(the command line: exit 2; the API: an InputError), never a silent misreading. Each test fails on the code before.

1. LaTeX commands that are not a formula's (``\\newcommand``, ``\\k``, ``\\operatorname``) were read as names when the
   parse succeeded; 2. ``Variable("E")``, ``"pi"``, ``"oo"`` (read as constants) and the full-width ``'ｘ'`` (read as x)
   were accepted; 3. seeds above 2^53 were read as floats; 4. ``1e309`` was refused as inf, ``10**(-400)`` refused beside
   ``1e-400``, and a CSV's ``1e-400`` became 0; 5. messages named the wrong array, doubled backslashes and said "cannot
   write" for a read; 6. ``scaling_report(out, claims=[])`` wrote every claim, and the SVM's result had no JSON."""
from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest
import sympy as sp

import ibcheck
from ibcheck.errors import InputError
from ibcheck.theory import expressions
from ibcheck.theory.expressions import parse_expression, parse_formula

D = sp.Symbol("d", positive=True)


def _refused(call, *words: str) -> str:
    with pytest.raises(InputError) as info:
        call()
    msg = str(info.value)
    assert "\n" not in msg, msg
    for w in words:
        assert w in msg, (w, msg)
    return msg


def _claim(variables, bounds=(), hypotheses=None, constants=()):
    return ibcheck.Claim(id="R5N.thm.1", title="t", variables=list(variables), constants=list(constants),
                         hypotheses=hypotheses or {}, bounds=list(bounds))


def _var(name):
    return ibcheck.Variable(name, "a user's variable", low=0, low_open=True)


# -- 1. a LaTeX command that is not a formula's is refused, even where the parse succeeds ---------------------------------
@pytest.mark.parametrize("latex, declared, commands", [
    (r"\newcommand{\x}{d}\x", ["d", "x", "newcommand"], r"\newcommand and \x are not commands"),  # was d*newcommand*x**2
    (r"\newcommand{\x}{d}\x", ["d"], r"\newcommand and \x are not commands"),  # was "undeclared symbols newcommand, x"
    (r"\sqrt{\k}", ["d", "k"], r"\k is not a command"),  # was sqrt(k)
    (r"\operatorname{def} d", ["d", "f", "operatorname"], r"\operatorname is not a command"),  # was E*d**2*f*operatorname
    (r"\sqrt{d}\foo", ["d", "foo"], r"\foo is not a command"),
    (r"\mathrm{d} d", ["d", "mathrm"], r"\mathrm is not a command"),
    (r"\x_{1} d", ["d", "x1"], r"\x is not a command"),
    (r"\input{/etc/passwd}", ["d"], r"\input is not a command"),
])
def test_an_unknown_latex_command_is_refused_quoting_the_latex(latex, declared, commands):
    msg = _refused(lambda: _claim([_var(v) if v not in ("d", "k") else v for v in declared],
                                  [ibcheck.Bound("r", "O", latex=latex)]),
                   f"claim R5N.thm.1: bounds[0]: cannot parse the LaTeX '{latex}'", commands, "of a formula")
    assert "undeclared" not in msg and "\\\\" not in msg


def test_an_unknown_latex_command_in_a_hypothesis_is_refused_too():
    _refused(lambda: _claim(["d", "k"], [ibcheck.Bound("r", "O", "d")], {"H1": r"k \leq \sqrt{\k}"}),
             r"hypotheses['H1']: cannot parse the LaTeX 'k \leq \sqrt{\k}'", r"\k is not a command of a formula")


def test_the_bounds_of_an_unknown_command_are_never_evaluated():
    """The case as it came: ibcheck.bounds of a registered claim read ``\\newcommand{\\x}{d}\\x`` as d*newcommand*x**2."""
    with ibcheck.using_registry(ibcheck.Registry()):
        with pytest.raises(InputError, match=r"\\newcommand and \\x are not commands"):
            ibcheck.register(_claim(["d", _var("x"), _var("newcommand")], [ibcheck.Bound("r", "O", latex=r"\newcommand{\x}{d}\x")]))


@pytest.mark.parametrize("latex, expected", [
    (r"\sqrt{d}\,\log d", sp.sqrt(D) * sp.log(D)),
    (r"\frac{d}{2} \cdot \ln d", D * sp.log(D) / 2),
    (r"\left( d \right)^{2} \times \exp(d)", D**2 * sp.exp(D)),
    (r"d^{\frac{1}{2}}", sp.sqrt(D)),
])
def test_latex_of_known_commands_still_parses(latex, expected):
    assert sp.simplify(parse_formula(latex) - expected) == 0


def test_greek_letters_and_a_line_break_are_not_unknown_commands():
    from ibcheck.theory.expressions import unknown_latex_commands

    assert unknown_latex_commands(r"\alpha \varepsilon \lambda \Omega \infty") == []
    assert unknown_latex_commands(r"d \\ x") == []  # \\ is a line break, not the command \x
    assert unknown_latex_commands(r"\def\x{d}\x\def") == ["def", "x"]


def test_the_known_commands_are_the_latex_grammars():
    """Every command accepted (but the greek letters, read as SYMBOL tokens, and \\infty) is a literal of sympy's grammar."""
    import sympy.parsing.latex as latex_pkg

    from ibcheck.theory.expressions import LATEX_COMMANDS

    grammar = os.path.join(os.path.dirname(latex_pkg.__file__), "LaTeX.g4")
    if not os.path.exists(grammar):
        pytest.skip("sympy ships no LaTeX.g4 here")
    literals = set(re.findall(r"'\\\\([A-Za-z]+)'", open(grammar, encoding="utf-8").read())) | {"limits"}  # '\\int\\limits'
    assert expressions._LATEX_GRAMMAR - {"infty"} <= literals
    assert literals <= LATEX_COMMANDS


# -- 2. a variable's name that a formula reads as something else -----------------------------------------------------------
@pytest.mark.parametrize("name", ["E", "pi", "oo", "I", "nan", "zoo", "e", "log", "ln", "sqrt", "exp", "Max", "min", "Abs", "abs"])
def test_a_reserved_name_is_refused_naming_it(name):
    _refused(lambda: ibcheck.Variable(name, "v"), f"Variable(name={name!r}) is not a name", f"{name} is a reserved word")


def test_every_constant_and_function_of_the_parser_is_reserved():
    from ibcheck.theory.variables import RESERVED_NAMES

    assert set(expressions._CONSTANTS) | set(expressions._FUNCS) <= set(RESERVED_NAMES)


def test_the_case_as_it_came_E_times_d_is_refused_not_read_as_e_times_d():
    """``Variable("E")`` with the bound ``E*d`` at E=100, d=10 gave e*10 (log10 1.43), not 1000."""
    _refused(lambda: _claim([_var("E"), "d"], [ibcheck.Bound("r", "O", "E*d")]), "E is a reserved word", "Euler's number")
    _refused(lambda: _claim(["d"], [ibcheck.Bound("r", "O", "E*d")], constants=["E"]), "constants['E'] is not a name")
    _refused(lambda: _claim([_var("e"), "d"], [ibcheck.Bound("r", "O", latex="e d")]), "e is a reserved word")


@pytest.mark.parametrize("name", ["\uff58", "\u03b5", "d\u2082", "\u212a"])  # full-width x, epsilon, d subscript 2, the Kelvin sign
def test_a_non_ascii_name_is_refused(name):
    _refused(lambda: ibcheck.Variable(name, "v"), "is not a name", "ASCII")


def test_the_full_width_case_as_it_came():
    """``Variable('ｘ')`` was accepted, then ``x <= 2`` was "undeclared symbols x (declared: ｘ)"."""
    _refused(lambda: _claim([_var("\uff58")], [ibcheck.Bound("r", "O", "x")], {"H1": "x <= 2"}), "ASCII")


def test_ordinary_names_still_build():
    for name in ("d", "k", "n_train", "eps", "C1", "Ee", "pi2", "logd"):
        assert ibcheck.Variable(name, "v").name == name


# -- 3. seeds are exact integers ---------------------------------------------------------------------------------------------
def _measurements(tmp_path, seeds, name="m.csv") -> str:
    rows = "".join(f"{d},{s},{v}\n" for d, v in ((64, 8.3), (128, 11.2), (256, 16.5)) for s in seeds)
    path = tmp_path / name
    path.write_text("d,seed,value\n" + rows, encoding="utf-8")
    return str(path)


def test_seeds_past_2_53_are_kept_exactly(tmp_path):
    from ibcheck.simulate.compare.from_csv import read_table

    table = read_table(_measurements(tmp_path, ["9007199254740992", "9007199254740993", "9223372036854775807", "-9223372036854775808"]))
    assert [r["seed"] for r in table.rows[:4]] == ["9007199254740992", "9007199254740993", "9223372036854775807", "-9223372036854775808"]


def test_seeds_2_53_and_2_53_plus_1_are_two_runs_not_a_repeat(cli, tmp_path):
    """The case as it came: refused as "rows 2 and 3 repeat cell d=64 with seed 9007199254740992"."""
    path = _measurements(tmp_path, ["9007199254740992", "9007199254740993", "5"])
    res = cli("verdict", "--data", path, "--predict", "d=1/2", "--kind", "Theta", "--out", str(tmp_path / "v"))
    assert res.returncode == 0, res.stderr


@pytest.mark.parametrize("seed", ["18446744073709551615", "9223372036854775808", "-9223372036854775809", "1e19", "1e999"])
def test_a_seed_beyond_int64_is_refused_as_given(cli, tmp_path, seed):
    path = _measurements(tmp_path, [seed, "1"])
    res = cli("verdict", "--data", path, "--predict", "d=1/2", "--kind", "Theta", "--out", str(tmp_path / "v"))
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1, res.stderr
    assert f"row 2, column 'seed': {seed} is out of range" in lines[0] and "int64" in lines[0]
    assert not (tmp_path / "v").exists()


@pytest.mark.parametrize("same", [["1", "1.0"], ["1", "01"], ["1", "1e0"], ["12", "+12"]])
def test_one_seed_written_two_ways_is_still_one_run(tmp_path, same):
    from ibcheck.simulate.compare.from_csv import read_table

    with pytest.raises(InputError, match="repeat cell d=64 with seed"):
        read_table(_measurements(tmp_path, same))


def test_seeds_that_are_names_are_kept_as_written(tmp_path):
    from ibcheck.simulate.compare.from_csv import read_table

    table = read_table(_measurements(tmp_path, ["run-a", "1.50", "nan"]))
    assert [r["seed"] for r in table.rows[:3]] == ["run-a", "1.5", "nan"]


# -- 4. numbers: as written, the same whichever way they are written ---------------------------------------------------------
def test_a_decimal_past_the_float_range_is_read_as_written_not_as_inf():
    rel = parse_expression("d >= 1e309")
    assert rel.rhs == sp.Float("1e309", 15) and sp.log(rel.rhs, 10).evalf() > 308
    msg = _refused(lambda: parse_expression("d >= 1e10001"), "beyond 1e-10000 .. 1e10000")
    assert "inf" not in msg


def test_ten_to_minus_400_reads_as_1e_minus_400_does():
    exact = parse_expression("d >= 10**(-400)").rhs
    assert exact == sp.Rational(1, 10**400)
    assert sp.Abs(exact - parse_expression("d >= 1e-400").rhs) < sp.Rational(1, 10**410)
    assert parse_expression("10**400") == sp.Integer(10) ** 400
    assert parse_expression("10**4000") == sp.Integer(10) ** 4000 and parse_expression("10**(-4000)") == sp.Rational(1, 10**4000)
    assert parse_expression("2*10**(-400)") == sp.Rational(2, 10**400)
    assert parse_formula(r"d \geq 10^{-400}").rhs == sp.Rational(1, 10**400)


def test_the_bounds_of_ten_to_minus_400_agree_with_1e_minus_400():
    with ibcheck.using_registry(ibcheck.Registry()):
        for i, text in enumerate(("d >= 10**(-400)", "d >= 1e-400")):
            ibcheck.register(ibcheck.Claim(id=f"R5N.thm.{i + 2}", title="t", variables=["d"], hypotheses={"H1": text},
                                           bounds=[ibcheck.Bound("r", "O", "d")]))
        a, b = (ibcheck.bounds(f"R5N.thm.{i + 2}", at={"d": 10}).as_json() for i in range(2))
        assert json.dumps(a["hypotheses"][0]["log10_rhs"]) == json.dumps(b["hypotheses"][0]["log10_rhs"])
        assert a["applies"] is b["applies"] is True


@pytest.mark.parametrize("text, words", [
    ("2**300", "more than 60 significant digits"),  # 91 significant digits: as if written out
    ("123456789" * 7, "more than 60 significant digits"),
    ("10**4001", "an exact number with 4002 digits in its numerator"),  # past Python's printing of integers: write 1e4001
    ("10**(-4001)", "an exact number with 4002 digits in its denominator"),
    ("10**5000", "write a decimal such as 1e-5000 instead"),
    ("9**9**9**9", "exceeds 10^6"),
    ("d**(10**5000/3)", "digits"),
])
def test_numbers_too_long_are_still_refused(text, words):
    _refused(lambda: parse_expression(text), words)


@pytest.mark.parametrize("cell", ["1e-400", "-1e-400", "2e-310", "4.9e-324"])
def test_a_csv_number_that_underflows_float64_is_refused_not_read_as_0(tmp_path, cell):
    from ibcheck.simulate.substrate.userdata import number

    with pytest.raises(ValueError, match=f"{re.escape(cell)} is out of range"):
        number(cell)
    path = tmp_path / "pts.csv"
    path.write_text(f"y,x1,x2\n1,{cell},2\n-1,-1,3\n1,2,1\n", encoding="utf-8")
    _refused(lambda: ibcheck.read_data(str(path)), f"row 2, column 'x1': {cell} is out of range", "read as 0")


def test_zero_and_the_smallest_normal_float_are_still_numbers():
    from ibcheck.simulate.substrate.userdata import number

    assert number("0") == number("0e-400") == number("-0.0") == 0.0
    assert number("2.2250738585072014e-308") == 2.2250738585072014e-308


def test_a_measurement_of_1e_minus_400_is_refused_in_verdict(cli, tmp_path):
    """The case as it came: ``verdict --data`` read a value of 1e-400 as 0.0."""
    path = tmp_path / "m.csv"
    path.write_text("d,seed,value\n64,1,1e-400\n128,1,2\n256,1,3\n", encoding="utf-8")
    res = cli("verdict", "--data", str(path), "--predict", "d=1/2", "--kind", "Theta", "--out", str(tmp_path / "v"))
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1, res.stderr
    assert "row 2, column 'value': 1e-400 is out of range" in lines[0] and "read as 0" in lines[0]
    assert not (tmp_path / "v").exists()


# -- 5. messages that name the right thing -----------------------------------------------------------------------------------
def test_a_negative_npz_shape_is_said_of_its_own_array(tmp_path):
    import io
    import zipfile

    from numpy.lib import format as npy_format

    header = (b"\x93NUMPY\x01\x00" + b"v\x00" + "{'descr': '<f8', 'fortran_order': False, 'shape': (-6, 2), }".ljust(117).encode()
              + b"\n")
    y = io.BytesIO()
    npy_format.write_array(y, np.array([1, -1, 1, -1, 1, -1]))
    path = tmp_path / "neg.npz"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("X.npy", header)
        z.writestr("y.npy", y.getvalue())
    msg = _refused(lambda: ibcheck.read_data(str(path)), "the array 'X' has shape (-6, 2)", "n = -6 is negative")
    assert "'y'" not in msg


@pytest.mark.parametrize("suffix", [".csv", ".npz"])
def test_a_file_that_cannot_be_read_says_reading_not_writing(cli, tmp_path, suffix):
    if not os.path.exists("/proc/self/mem"):
        pytest.skip("no /proc/self/mem here")
    link = tmp_path / f"mem{suffix}"
    link.symlink_to("/proc/self/mem")
    res = cli("kkt", "--data", str(link), "--starts", "1", "--out", str(tmp_path / "out"))
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1, res.stderr
    assert lines[0].startswith(f"ibcheck: error: --data {link} cannot be read") and "write" not in lines[0], lines[0]
    _refused(lambda: ibcheck.read_data(str(link)), "cannot be read", "resolves to /proc/")


@pytest.mark.parametrize("text", [r"\def\x{d}\x", r"\sqrt{d}"])
def test_growth_quotes_the_formula_as_typed(cli, text):
    res = cli("growth", text, "d")
    assert res.returncode == 2
    assert f"cannot parse the formula '{text}'" in res.stderr and "\\\\" not in res.stderr, res.stderr
    _refused(lambda: ibcheck.growth(text, "d"), f"'{text}'", "LaTeX is not read here")


def test_a_formula_with_a_newline_is_still_quoted_visibly():
    _refused(lambda: parse_expression("d +\n"), r"'d +\n'")


# -- 6. the API as documented ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("claims", [[], ()])
def test_scaling_report_refuses_an_empty_list_of_claims(tmp_path, claims):
    _refused(lambda: ibcheck.scaling_report(str(tmp_path / "r"), claims=claims), "names no claim", "None for every claim")
    assert not (tmp_path / "r").exists()


def test_the_svm_result_has_the_json_methods_of_every_result(tmp_path):
    X = np.array([[1.0, 2.0], [2.0, 0.5], [-1.0, -1.5], [-2.0, -0.3]])
    r = ibcheck.svm(X, np.array([1, 1, -1, -1]))
    data = r.as_json()
    assert data["separable"] is True and data["status"] == "optimal" and len(data["w"]) == 2 and isinstance(data["margin"], float)
    assert json.loads(r.to_json()) == data and "\n" not in r.to_json(indent=None)
    assert "separable" in r.text()
    paths = r.save(str(tmp_path / "svm"))
    assert paths["json"].endswith("svm.json") and json.loads(open(paths["json"], encoding="utf-8").read()) == data
    one_class = ibcheck.svm(X[:2], np.array([1, 1]))  # unbounded: an infinite margin, which JSON has not
    assert json.loads(one_class.to_json())["margin"] is None


def test_a_kkt_csv_with_a_second_label_column_or_a_bad_label_names_the_file_and_column(tmp_path):
    """'Y,x1,y': Y was read as a feature; a label 2 was refused as "y[0] = 2" without the file or the row."""
    from ibcheck.simulate.tools.kkt_search import load_data_file

    two = tmp_path / "two.csv"
    two.write_text("Y,x1,y\n1,0.5,1\n-1,-0.5,-1\n")
    with pytest.raises(ibcheck.InputError, match=r"csv'.*'Y' differs from 'y' only in case"):
        load_data_file(str(two))
    bad = tmp_path / "bad.csv"
    bad.write_text("x1,y\n0.5,1\n-0.5,2\n")
    with pytest.raises(ibcheck.InputError, match=r"csv'.*row 3, column 'y': 2 is not a label"):
        load_data_file(str(bad))
