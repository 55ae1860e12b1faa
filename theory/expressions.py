"""User formulas parsed over the shared positive symbols of the registry: sympy syntax
(``sqrt(d/k)*log(d)**2``, ``n >= k*log(d)**2``) or LaTeX as written in a paper
(``\\sqrt{d}\\,\\log^2 d``, ``n \\geq k \\ln^2 d``, ``\\Omega(\\sqrt{d})``), read by sympy's LaTeX parser.
"""
from __future__ import annotations

import re

import sympy as sp

from .errors import InputError

_FUNCS = {"log": sp.log, "ln": sp.log, "sqrt": sp.sqrt, "exp": sp.exp}
_GREEK = {"varepsilon": "eps", "epsilon": "eps", "lambda": "lam"}
# \Omega(...) and friends around a bound written in LaTeX, with the kind they state
_KINDS = (("\\Theta", "Theta"), ("\\Omega", "Omega"), ("\\omega", "omega"), ("\\mathcal{O}", "O"), ("O", "O"), ("o", "o"))


def parse_expression(text: str, where: str = "formula") -> sp.Basic:
    """A formula (or a relation) in sympy syntax, over the shared positive symbols; ``where`` names the
    field in the one-line error, which also gives the position of the problem."""
    from sympy.parsing.sympy_parser import convert_xor, parse_expr, standard_transformations

    from .variables import symbol

    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{_where(where)}cannot parse the formula {text!r}: it is empty (write e.g. sqrt(d/k)*log(d)**2)")
    local = dict(_FUNCS)
    local.update({n: symbol(n) for n in _identifiers(text) if n not in _FUNCS})
    try:
        return parse_expr(text.replace("≥", ">=").replace("≤", "<="), local_dict=local,
                          transformations=standard_transformations + (convert_xor,))
    except Exception as err:  # sympy raises many types for malformed text
        at = getattr(err, "offset", None) or _position(text)
        raise InputError(f"{_where(where)}cannot parse the formula {text!r} at position {at}: write e.g. sqrt(d/k)*log(d)**2") from None


def parse_latex_formula(text: str, where: str = "formula") -> sp.Basic:
    """A formula or relation written in LaTeX, with ``\\log``/``\\ln`` natural logs and ``e`` Euler's
    number, over the shared positive symbols. Pitfall avoided: sympy's LaTeX parser returns
    ``log(d, E)`` unevaluated and ``e`` as a symbol; the result is rebuilt from its text so that
    exponents come out exactly as from the sympy syntax."""
    try:
        from sympy.parsing.latex import LaTeXParsingError, parse_latex
    except ImportError:  # pragma: no cover - the dependency is declared
        raise InputError(f"{where}: LaTeX needs antlr4-python3-runtime 4.11 (pip install 'antlr4-python3-runtime==4.11.*')") from None
    body = text.replace("\\,", " ").replace("\\;", " ").replace("\\!", "").replace("\\left", "").replace("\\right", "")
    try:
        raw = parse_latex(body, strict=True)
    except (LaTeXParsingError, Exception) as err:  # antlr's own errors are not all LaTeXParsingError
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise InputError(f"{where}: cannot parse the LaTeX {text!r} at position {_position(text)}: {first}") from None
    rebuilt = re.sub(r"\be\b", "E", sp.sstr(raw).replace(", E)", ")"))  # e is Euler's number in a paper
    for greek, name in _GREEK.items():  # \varepsilon is the registry's eps, \lambda its lam
        rebuilt = re.sub(rf"\b{greek}\b", name, rebuilt)
    return parse_expression(rebuilt, where)


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


def _identifiers(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", text))
