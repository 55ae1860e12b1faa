"""User formulas (``sqrt(d/k)*log(d)**2``) parsed over the shared positive symbols of the registry."""
from __future__ import annotations

import re

import sympy as sp

from .errors import InputError


def parse_expression(text: str) -> sp.Expr:
    """Parse a user formula over the shared positive symbols; one-line error when malformed."""
    from sympy.parsing.sympy_parser import convert_xor, parse_expr, standard_transformations

    from ibcheck.theory.variables import symbol

    local = {"log": sp.log, "ln": sp.log, "sqrt": sp.sqrt, "exp": sp.exp}
    try:
        names = {t for t in _identifiers(text) if t not in local}
        local.update({n: symbol(n) for n in names})
        return parse_expr(text, local_dict=local, transformations=standard_transformations + (convert_xor,))
    except Exception:  # sympy raises many types for malformed text
        raise InputError(f"cannot parse the formula {text!r}: write e.g. sqrt(d/k)*log(d)**2") from None


def _identifiers(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", text))
