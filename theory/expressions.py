"""User formulas parsed as data, over the shared positive symbols of the registry: sympy syntax
(``sqrt(d/k)*log(d)**2``, ``n >= k*log(d)**2``) or LaTeX as written in a paper
(``\\sqrt{d}\\,\\log^2 d``, ``n \\geq k \\ln^2 d``, ``\\Omega(\\sqrt{d})``), read by sympy's LaTeX parser.

Pitfall avoided: sympy's ``parse_expr`` (and ``sympify`` of a string) runs ``eval`` on its input, so
a formula string could run any Python. Here a formula is parsed by :mod:`ast` and walked with a
whitelist (numbers, names, arithmetic, powers, one comparison, a fixed set of functions); sympy
objects are built from the walk, never evaluated from text. Formulas whose evaluation would explode
(``9**9**9**9``, ``d**(10**5000/3)``, ``exp(exp(exp(d)))``) are refused with one line.
"""
from __future__ import annotations

import ast
import math
import numbers
import re
from contextvars import ContextVar
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any, Callable

import sympy as sp

from .errors import InputError
from .variables import symbol

_FUNCS: dict[str, Callable[..., sp.Basic]] = {
    "log": sp.log, "ln": sp.log, "sqrt": sp.sqrt, "exp": sp.exp, "Max": sp.Max, "Min": sp.Min, "max": sp.Max, "min": sp.Min,
    "Abs": sp.Abs, "abs": sp.Abs,
}
_ARITY = {"log": (1, 2), "ln": (1, 1), "sqrt": (1, 1), "exp": (1, 1), "Abs": (1, 1), "abs": (1, 1)}
_CONSTANTS: dict[str, sp.Basic] = {"E": sp.E, "pi": sp.pi, "oo": sp.oo}
_GREEK = {"varepsilon": "eps", "epsilon": "eps", "lambda": "lam"}
# the commands sympy's LaTeX parser reads as a letter's name (\alpha is the symbol alpha): any other command that comes
# out as a name was not understood
_LATEX_LETTERS = frozenset(("alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi omicron pi "
                            "varpi rho varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma "
                            "Upsilon Phi Psi Omega").split())
# every command sympy's LaTeX grammar (sympy/parsing/latex/LaTeX.g4) reads as a command, and \infty: any other command (\def,
# \newcommand, \operatorname, \k) is lexed as a SYMBOL and comes out as a name, whether the parse succeeds or not
_LATEX_GRAMMAR = frozenset(("Longrightarrow Rightarrow arccos arccot arccsc arcosh arcsec arcsin arctan arsinh artanh binom cdot cos "
                            "cosh cot csc dbinom dfrac div exp frac ge geq geqq geqslant hfil int langle lceil le left leq leqq "
                            "leqslant lfloor lg lim limits ln log longrightarrow mathit medspace negmedspace negthickspace "
                            "negthinspace neq overline prod qquad quad rangle rceil right rightarrow rfloor sec sin sinh sqrt sum "
                            "tan tanh tbinom tfrac thickspace thinspace times to vbox vcenter vrule vskip vspace infty").split())
LATEX_COMMANDS = _LATEX_GRAMMAR | _LATEX_LETTERS
# \Omega(...) and friends around a bound written in LaTeX, with the kind they state
_KINDS = (("\\Theta", "Theta"), ("\\Omega", "Omega"), ("\\omega", "omega"), ("\\mathcal{O}", "O"), ("O", "O"), ("o", "o"))

MAX_LENGTH = 2000       # characters of one formula
MAX_NODES = 400         # syntax-tree nodes of one formula
MAX_DIGITS = 60         # significant digits of any number in the parsed formula (numerator or denominator)
MAX_EXP_DEPTH = 2       # exp(exp(d)) is the deepest tower accepted
MAX_DECIMAL_EXPONENT = 10000  # |exponent| of a decimal written in a formula (1e-400 is kept exactly)
MAX_EXACT_DIGITS = 4000  # an exact integer, numerator or denominator is at most 10**4000 (10**(-400) is exact), trailing zeros
#                          included: below Python's 4300-digit limit on printing an integer
_BINOPS = {ast.Add: sp.Add, ast.Sub: lambda a, b: a - b, ast.Mult: sp.Mul, ast.Div: lambda a, b: a / b}
_RELATIONS = {ast.Lt: sp.StrictLessThan, ast.LtE: sp.LessThan, ast.Gt: sp.StrictGreaterThan, ast.GtE: sp.GreaterThan,
              ast.Eq: sp.Eq}


_REAL_NAMES: ContextVar[frozenset[str]] = ContextVar("_REAL_NAMES", default=frozenset())


def parse_over_reals(text: str, names: frozenset[str], where: str = "formula") -> sp.Basic:
    """``text`` parsed as :func:`parse_formula` does, but with the variables in ``names`` as real symbols of either sign
    (``sp.Symbol(name, real=True)``), not the shared positive ones: what a formula says where a variable's domain
    admits values <= 0, before sympy simplifies it for positive values (``Abs(x)`` to ``x``)."""
    token = _REAL_NAMES.set(frozenset(names))
    try:
        return parse_formula(text, where)
    finally:
        _REAL_NAMES.reset(token)


class _Refused(Exception):
    """Inside the walk: the text is well-formed Python but not an admitted formula (the reason says why)."""


def parse_expression(text: str, where: str = "formula") -> sp.Basic:
    """A formula (or a relation) in sympy syntax, over the shared positive symbols; ``where`` names the
    field in the one-line error, which also gives the position of the problem. Built by a whitelist
    walk of the syntax tree, never by ``eval``."""
    if not isinstance(text, str) or not text.strip():
        shown = _quote(text) if isinstance(text, str) else repr(text)
        raise InputError(f"{_where(where)}cannot parse the formula {shown}: it is empty (write e.g. sqrt(d/k)*log(d)**2)")
    if len(text) > MAX_LENGTH:
        raise InputError(f"{_where(where)}the formula has {len(text)} characters: at most {MAX_LENGTH} are accepted")
    source = text.replace("≥", ">=").replace("≤", "<=").replace("^", "**").strip()
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as err:
        at = err.offset or _position(text)
        latex = " (LaTeX is not read here: write sympy syntax)" if "\\" in text else ""
        raise InputError(f"{_where(where)}cannot parse the formula {_quote(text)} at position {at}: write e.g. sqrt(d/k)*log(d)**2"
                         f"{latex}") from None
    nodes = sum(1 for _ in ast.walk(tree))
    for node in ast.walk(tree):  # a decimal is the decimal written: 1e-400 is not the float 0.0 Python rounds it to
        if isinstance(node, ast.Constant) and isinstance(node.value, float):
            node.text = ast.get_source_segment(source, node)  # type: ignore[attr-defined]
    if nodes > MAX_NODES:
        raise InputError(f"{_where(where)}the formula {_quote(text)} has {nodes} syntax nodes: at most {MAX_NODES} are accepted")
    try:
        return _build(tree.body, 0)
    except _Refused as why:
        col = getattr(why, "col", None)
        where_at = f" at position {col + 1}" if col is not None else ""
        raise InputError(f"{_where(where)}cannot parse the formula {_quote(text)}{where_at}: {why}") from None
    except (TypeError, ValueError, ZeroDivisionError, OverflowError, RecursionError) as err:  # sympy refusing an operation
        raise InputError(f"{_where(where)}cannot parse the formula {_quote(text)}: {type(err).__name__}: {err}"[:400]) from None


def _refuse(node: ast.AST, message: str) -> _Refused:
    err = _Refused(message)
    err.col = getattr(node, "col_offset", None)  # type: ignore[attr-defined]
    return err


def _build(node: ast.AST, exp_depth: int) -> Any:
    """The sympy object of one admitted node; anything else is refused."""
    if isinstance(node, ast.Constant):
        v = node.value
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise _refuse(node, f"{v!r} is not a number")
        if isinstance(v, int):
            return _checked(node, sp.Integer(v))
        text = getattr(node, "text", None)  # 1e309 is the decimal written, not the inf Python rounds it to
        if text is None and not math.isfinite(v):
            raise _refuse(node, f"{v!r} is not a finite number")
        try:
            written = Decimal(text or repr(v))
        except InvalidOperation:  # pragma: no cover - the text of a float literal is a decimal
            raise _refuse(node, f"{text!r} is not a number") from None
        if written != 0 and abs(written.adjusted()) > MAX_DECIMAL_EXPONENT:
            raise _refuse(node, f"{written} is beyond 1e-{MAX_DECIMAL_EXPONENT} .. 1e{MAX_DECIMAL_EXPONENT} in absolute value")
        return sp.Float(str(written), max(15, len(written.as_tuple().digits)))  # every digit written, exactly
    if isinstance(node, ast.Name):
        if node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        if node.id in _FUNCS:
            raise _refuse(node, f"{node.id} is a function: write {node.id}(...)")
        if node.id.startswith("_"):
            raise _refuse(node, f"the name {node.id!r} is not admitted (names start with a letter)")
        return sp.Symbol(node.id, real=True) if node.id in _REAL_NAMES.get() else symbol(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _build(node.operand, exp_depth)
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Pow):
            depth = exp_depth + (0 if _const(node.right) else 1)
            if depth > MAX_EXP_DEPTH:
                raise _refuse(node, f"a tower of {depth} variable exponents: at most {MAX_EXP_DEPTH} levels (2**(2**d), exp(exp(d))) are accepted")
            base, ex = _build(node.left, exp_depth), _build(node.right, depth)
            _check_power(node, base, ex)
            return _checked(node, base**ex)
        if isinstance(node.op, (ast.BitAnd, ast.BitOr)):  # (n >= 1) & (d > 2), as sympy writes it
            parts = [_build(node.left, exp_depth), _build(node.right, exp_depth)]
            if not all(isinstance(p, (sp.Rel, sp.And, sp.Or)) for p in parts):
                raise _refuse(node, "& and | join relations")
            return sp.And(*parts) if isinstance(node.op, ast.BitAnd) else sp.Or(*parts)
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise _refuse(node, f"the operator {type(node.op).__name__} is not admitted (use + - * / ** or ^)")
        return _checked(node, op(_build(node.left, exp_depth), _build(node.right, exp_depth)))
    if isinstance(node, ast.Call):
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name not in _FUNCS:
            raise _refuse(node, f"the function {ast.unparse(node.func)!r} is not admitted: use {', '.join(sorted(set(_FUNCS) - {'max', 'min', 'abs'}))}")
        if node.keywords:
            raise _refuse(node, f"{name}() takes no keyword arguments")
        lo, hi = _ARITY.get(name, (1, 16))
        if not lo <= len(node.args) <= hi:
            raise _refuse(node, f"{name}() takes {lo if lo == hi else f'{lo} to {hi}'} argument{'s' if hi > 1 else ''}, got {len(node.args)}")
        if any(isinstance(a, ast.Starred) for a in node.args):
            raise _refuse(node, f"{name}() takes plain arguments")
        depth = exp_depth + (name == "exp")
        if depth > MAX_EXP_DEPTH:
            raise _refuse(node, f"exp nested {depth} deep: at most {MAX_EXP_DEPTH} levels (exp(exp(d))) are accepted")
        return _checked(node, _FUNCS[name](*[_build(a, depth) for a in node.args]))
    if isinstance(node, ast.Compare):
        if len(node.ops) != 1 or type(node.ops[0]) not in _RELATIONS:
            raise _refuse(node, "one relation (<, <=, >, >=, ==) is admitted")
        return _RELATIONS[type(node.ops[0])](_build(node.left, exp_depth), _build(node.comparators[0], exp_depth))
    if isinstance(node, ast.BoolOp):
        parts = [_build(v, exp_depth) for v in node.values]
        if not all(isinstance(p, (sp.Rel, sp.And, sp.Or)) for p in parts):
            raise _refuse(node, "and/or join relations")
        return sp.And(*parts) if isinstance(node.op, ast.And) else sp.Or(*parts)
    what = {ast.Attribute: "attribute access", ast.Subscript: "a subscript", ast.Lambda: "a lambda", ast.ListComp: "a comprehension",
            ast.List: "a list", ast.Tuple: "a tuple", ast.Dict: "a dict", ast.NamedExpr: "an assignment"}.get(type(node), type(node).__name__)
    raise _refuse(node, f"{what} is not admitted in a formula (numbers, names, + - * / ** ^, comparisons and "
                        f"{', '.join(sorted(set(_FUNCS) - {'max', 'min', 'abs'}))})")


def _const(node: ast.AST) -> bool:
    return all(not isinstance(n, ast.Name) or n.id in _CONSTANTS for n in ast.walk(node))


def _check_power(node: ast.AST, base: Any, ex: Any) -> None:
    """Refuse a power whose value would be astronomically large before sympy computes it:
    ``9**9**9**9`` has about 10^(3.7e8) digits. A power of at most MAX_EXACT_DIGITS digits either way is computed
    exactly (``10**(-400)`` is 1/10^400, as ``1e-400`` is the decimal written) and its digits checked after."""
    if not (isinstance(ex, sp.Basic) and ex.is_number):
        return
    if ex.is_real and abs(ex) > 10**6:
        raise _refuse(node, f"the exponent {_num(ex)} exceeds 10^6 in absolute value")
    if isinstance(base, sp.Basic) and base.is_number and base.is_real and base != 0:
        try:
            digits = abs(float(ex)) * abs(math.log10(abs(float(base)))) if abs(float(base)) not in (0.0, math.inf) else math.inf
        except (TypeError, ValueError, OverflowError):
            digits = math.inf
        if digits > MAX_EXACT_DIGITS + 1 and base.is_Rational and ex.is_Rational:
            raise _refuse(node, f"{_num(base)}**{_num(ex)} has about {digits:.3g} digits: an exact number has at most {MAX_EXACT_DIGITS + 1} "
                                f"(10**{MAX_EXACT_DIGITS}); write a decimal such as 1e-5000 instead (decimals are read within "
                                f"1e-{MAX_DECIMAL_EXPONENT} .. 1e{MAX_DECIMAL_EXPONENT})")
        if digits > MAX_DECIMAL_EXPONENT:
            raise _refuse(node, f"{_num(base)}**{_num(ex)} has about {digits:.3g} digits: numbers in a formula lie within "
                                f"1e-{MAX_DECIMAL_EXPONENT} .. 1e{MAX_DECIMAL_EXPONENT}")


def _checked(node: ast.AST, value: Any) -> Any:
    """Every rational in the result has at most MAX_DIGITS significant digits (numerator and denominator, trailing zeros
    not counted: ``10**400`` is one digit) and at most MAX_EXACT_DIGITS digits in all.

    Pitfall avoided: ``10**(-400)`` was refused for its 401 digits while ``1e-400`` was read; the exact power of ten is one
    significant digit, as the decimal written."""
    if isinstance(value, sp.Basic):
        if value.has(sp.zoo, sp.nan):
            raise _refuse(node, "a division by zero (or an undefined value such as 0/0)")
        for atom in value.atoms(sp.Rational):
            for which, part in (("numerator", int(atom.p)), ("denominator", int(atom.q))):
                total, significant = _digits(part)
                if total > MAX_EXACT_DIGITS + 1:
                    raise _refuse(node, f"an exact number with {total} digits in its {which}: at most {MAX_EXACT_DIGITS + 1} (10**{MAX_EXACT_DIGITS}); "
                                        f"write a decimal such as 1e-5000 instead (decimals are read within 1e-{MAX_DECIMAL_EXPONENT} .. "
                                        f"1e{MAX_DECIMAL_EXPONENT})")
                if significant > MAX_DIGITS:
                    raise _refuse(node, f"a number with more than {MAX_DIGITS} significant digits ({_num(atom)})")
    return value


def _digits(n: int) -> tuple[int, int]:
    """(digits, significant digits) of ``|n|``: trailing zeros are not significant."""
    n = abs(n)
    total = _ndigits(n)
    if total > MAX_EXACT_DIGITS + 1:
        return total, total
    while n and n % 10**16 == 0:
        n //= 10**16
    while n and n % 10 == 0:
        n //= 10
    return total, _ndigits(n)


def _ndigits(n: int) -> int:
    """The decimal digits of ``n >= 0``, counted without ``str`` (which refuses integers past 4300 digits)."""
    if n == 0:
        return 1
    est = int((n.bit_length() - 1) * math.log10(2)) + 1  # the digits of 2^(bits - 1) <= n < 2^bits: est or est + 1
    return est + (n >= 10**est)


def _num(x: Any) -> str:
    try:
        s = str(x)
    except ValueError:  # an integer past 4300 digits
        return "a number of thousands of digits"
    return s if len(s) <= 24 else s[:10] + "..." + s[-6:]


def _clip(text: str) -> str:
    return text if len(text) <= 80 else text[:60] + "..."


def _quote(text: str) -> str:
    """A formula quoted as typed, in single quotes (clipped past 80 characters); repr() only where the text holds a character
    that does not print (a newline, a control character). Pitfall avoided: repr() doubled every backslash, so
    ``\\def\\x{d}\\x`` was quoted as ``'\\\\def\\\\x{d}\\\\x'``, which is not what was typed."""
    clipped = _clip(text)
    return f"'{clipped}'" if clipped.isprintable() else repr(clipped)


def as_sympy(value: Any, where: str = "formula") -> sp.Basic:
    """A formula given as text (parsed as data by the whitelist), a sympy object (returned as is) or a
    number. Anything else, containers included, is refused. Pitfall avoided: sympy's own conversion
    evaluates strings, even the strings inside a list or a dict when asked to be strict."""
    if isinstance(value, str):
        return parse_formula(value, where)
    if isinstance(value, sp.Basic):
        return value
    # numbers only: a container could hold strings that sympy's conversion would evaluate
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(f"{where}: {value!r} is not a formula (give a string such as 'sqrt(d/k)' or a sympy expression)")
    if isinstance(value, numbers.Integral):
        return sp.Integer(int(value))
    if isinstance(value, Fraction):
        return sp.Rational(value.numerator, value.denominator)
    if not math.isfinite(float(value)):
        raise InputError(f"{where}: {value!r} is not a finite number")
    return sp.Float(float(value))


def parse_latex_formula(text: str, where: str = "formula") -> sp.Basic:
    """A formula or relation written in LaTeX, with ``\\log``/``\\ln`` natural logs and ``e`` Euler's
    number, over the shared positive symbols. Pitfall avoided: sympy's LaTeX parser returns
    ``log(d, E)`` unevaluated and ``e`` as a symbol; the result is rebuilt from its text (and read
    by the whitelist parser) so that exponents come out exactly as from the sympy syntax."""
    try:
        from sympy.parsing.latex import LaTeXParsingError, parse_latex  # optional: sympy's LaTeX parser needs the antlr4 runtime
    except ImportError:  # pragma: no cover - the dependency is declared
        raise InputError(f"{where}: LaTeX needs antlr4-python3-runtime 4.11 (pip install 'antlr4-python3-runtime==4.11.*')") from None
    if not isinstance(text, str) or len(text) > MAX_LENGTH:
        raise InputError(f"{where}: a LaTeX formula is a string of at most {MAX_LENGTH} characters")
    if re.search(r"\^\s*\{?\s*\d{4,}", text) or re.search(r"\d{%d,}" % (MAX_DIGITS + 1), text):
        raise InputError(f"{where}: the LaTeX {_latex(text)} has a number or an exponent too large to evaluate "
                         f"(numbers have at most {MAX_DIGITS} digits, numeric exponents at most 3)")
    unknown = unknown_latex_commands(text)
    body = text.replace("\\,", " ").replace("\\;", " ").replace("\\!", "").replace("\\left", "").replace("\\right", "")
    body, placeholder = _no_differentials(body)
    try:
        raw = parse_latex(body, strict=True)
    except (LaTeXParsingError, Exception) as err:  # antlr's own errors are not all LaTeXParsingError
        if unknown:
            raise InputError(_unknown_commands(text, unknown, where)) from None
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise InputError(f"{where}: cannot parse the LaTeX {_latex(text)}: {_bracket_hint(text)} (the parser: {first})") from None
    if raw.has(sp.zoo, sp.nan) or any(isinstance(a, sp.Pow) and a.exp.is_negative and a.base == 0 for a in sp.preorder_traversal(raw)):
        # \frac{d}{0} parses to d*zoo, which sstr writes as the symbol "zoo": refused here, with the words of the sympy path
        raise InputError(f"{where}: cannot parse the LaTeX {_latex(text)}: a division by zero (or an undefined value such as 0/0)")
    renamed = {}
    for s in raw.free_symbols:  # C_1 and C_{1} as in a paper are the name C1 (sympy writes C_{1})
        m = re.fullmatch(r"([A-Za-z]+)_\{?([A-Za-z0-9]+)\}?", s.name)
        if m:
            renamed[s] = sp.Symbol(m.group(1) + m.group(2))
        elif "_" in s.name:
            raise InputError(f"{where}: the subscript in {s.name!r} of {_latex(text)} is not a plain name: LaTeX subscripts "
                             "are read as digits or one letter (C_1, C_{12}); write longer names in sympy syntax (c_max)")
    if unknown:  # after the subscripts' own message (c_{\\mathrm{max}}): a command read as a name is refused, even where it parsed
        raise InputError(_unknown_commands(text, unknown, where))
    if placeholder is not None:
        renamed[sp.Symbol(placeholder)] = sp.Symbol("d")
    raw = raw.xreplace(renamed)
    rebuilt = re.sub(r"\be\b", "E", sp.sstr(raw).replace(", E)", ")"))  # e is Euler's number in a paper
    for greek, name in _GREEK.items():  # \varepsilon is the registry's eps, \lambda its lam
        rebuilt = re.sub(rf"\b{greek}\b", name, rebuilt)
    try:
        return parse_expression(rebuilt, where)
    except InputError as err:
        raise InputError(_latex_refusal(text, rebuilt, where, err)) from None


def unknown_latex_commands(text: str) -> list[str]:
    """The commands of ``text`` (``\\name``, once each, in order) that sympy's LaTeX grammar does not read as commands: it
    reads each as a name. ``\\\\`` (a line break) is skipped as a whole, so ``\\\\x`` is no command."""
    return list(dict.fromkeys(m.group(1) for m in re.finditer(r"\\(?:([A-Za-z]+)|.)", text, re.S)
                              if m.group(1) and m.group(1) not in LATEX_COMMANDS))


def _unknown_commands(text: str, unknown: list[str], where: str) -> str:
    """The one line refusing commands that are not a formula's, said of the LaTeX as typed.

    Pitfall avoided: ``\\newcommand{\\x}{d}\\x`` parsed as ``d*newcommand*x**2``, ``\\sqrt{\\k}`` as ``sqrt(k)`` and
    ``\\operatorname{def} d`` as ``E*d**2*f*operatorname``: the parser reads an unknown command as a name, so a claim that
    declared those names was read silently; the check ran only when the rewrite failed to parse."""
    cmds = " and ".join("\\" + c for c in unknown[:4]) + (f" (and {len(unknown) - 4} more)" if len(unknown) > 4 else "")
    one = len(unknown) == 1
    return (f"{where}: cannot parse the LaTeX {_latex(text)}: {cmds} {'is not a command' if one else 'are not commands'} of a "
            f"formula (the LaTeX parser would read {'it as a name' if one else 'them as names'}; a formula's commands are \\frac, "
            f"\\sqrt, \\log, \\ln, \\exp, \\cdot, \\times, \\leq, \\geq, \\left, \\right, \\infty and the greek letters); "
            f"write e.g. \\sqrt{{d/k}}\\,\\log^2 d")


def _latex_refusal(text: str, rebuilt: str, where: str, err: InputError) -> str:
    """The refusal of a LaTeX formula's sympy rewrite, said of the LaTeX as typed (the rewrite and its positions are not
    what the user wrote); commands that are not a formula's are refused before (:func:`unknown_latex_commands`)."""
    reason = str(err)[len(_where(where)):]
    for quoted in (repr(rebuilt), _quote(rebuilt)):
        reason = reason.replace(f"the formula {quoted}", "it", 1)
    reason = re.sub(r"^cannot parse it at position \d+", "cannot parse it", reason)
    reason = reason.removeprefix("cannot parse it: ").removeprefix("cannot parse it")
    return f"{where}: cannot parse the LaTeX {_latex(text)}: {reason.lstrip(': ') or 'it does not read as a formula'}"


def _no_differentials(body: str) -> tuple[str, str | None]:
    """The letter ``d`` (the papers' dimension) outside command names replaced by a capital letter the text does not use.

    Pitfall avoided: sympy's LaTeX grammar reads ``d`` before a letter or a command as a differential, so
    ``d \\log d`` became the symbols ``d`` and ``dlog``, and ``\\sqrt{d k}`` the one symbol ``dk``."""
    parts = re.split(r"(\\[A-Za-z]+)", body)
    used = set("".join(p for p in parts if not p.startswith("\\")))
    placeholder = next((c for c in "WXYZUVQRSGHJ" if c not in used), None)
    if placeholder is None or "d" not in used:
        return body, None
    return "".join(p if p.startswith("\\") else p.replace("d", placeholder) for p in parts), placeholder


def parse_formula(text: str, where: str = "formula") -> sp.Basic:
    """LaTeX when the text has a backslash or a brace (``\\sqrt``, ``e^{d/32}``), sympy syntax otherwise."""
    return parse_latex_formula(text, where) if "\\" in text or "{" in text else parse_expression(text, where)


def parse_latex_bound(text: str, where: str = "bound") -> tuple[str, sp.Basic]:
    """``\\Omega(\\sqrt{d}\\,\\log^2 d)`` -> ``("Omega", sqrt(d)*log(d)**2)``; the wrapper gives the kind."""
    s = text.strip()
    for tex_name, kind in _KINDS:
        for opening, closing in (("(", ")"), ("\\left(", "\\right)"), ("\\big(", "\\big)")):
            if s.startswith(tex_name + opening) and s.endswith(closing):
                return kind, parse_latex_formula(s[len(tex_name) + len(opening):len(s) - len(closing)], where)
    raise InputError(f"{where}: {text!r} is not of the form O(...), \\Omega(...), \\Theta(...), o(...) or \\omega(...) "
                     "(give kind and expr instead for <= and >=)")


def _where(where: str) -> str:
    return "" if where == "formula" else where + ": "


def _latex(text: str) -> str:
    """A LaTeX formula quoted as written: repr() doubles every backslash (``'k \\\\leq'``), which is not what was typed."""
    return "'" + _clip(" ".join(text.split())) + "'"


def _bracket_hint(text: str) -> str:
    """Where parsing stopped, in words: an unclosed or unopened bracket, or the end of the formula."""
    at = _position(text)
    ch = text[at - 1] if 0 < at <= len(text) else ""
    if ch in "([{":
        return f"the {ch!r} at position {at} is never closed"
    if ch in ")]}":
        return f"the {ch!r} at position {at} closes nothing"
    return f"parsing stopped at position {at} of {len(text)}"


def _position(text: str) -> int:
    """1-based position of the first unmatched bracket, else the end of the text (where parsing ran out)."""
    stack = []
    for i, ch in enumerate(text, 1):
        if ch in "([{":
            stack.append(i)
        elif ch in ")]}":
            if not stack:
                return i
            stack.pop()
    return stack[0] if stack else len(text)
