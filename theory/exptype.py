"""Exp-type bounds: ``y <= A exp(-c h(x))`` read as a power-law bound on ``log(1/y)``.

A bound such as test error ``<= exp(-c n ||mu||^4 / d)`` has no power-law exponents in y, but taking logs,

    log(1/y) >= c h(x) - log A,

an Omega bound on ``log(1/y)`` whose function is ``h``, with the constants c and A free: the ratio's constant is c, and
``-log A`` is an additive lower-order term, the correction ``h (c + b h^-1)`` in h's own scale (omega = 1). An Omega
bound ``y >= A exp(-c h)`` becomes O on ``log(1/y)``, Theta stays Theta.

Pitfall avoided: refusing the bound ("no power-law exponents to fit"), or fitting ``log y`` against a power of x,
which tests a different function (a power law in the exponent, not of the quantity).
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

MIRROR = {"O": "Omega", "o": "omega", "<=": ">=", "Omega": "O", "omega": "o", ">=": "<=", "Theta": "Theta"}  # a bound's kind, mirrored


@dataclass(frozen=True)
class ExpForm:
    """``expr = A exp(-c h)``: ``h`` (the variables' part, a positive monomial) and the kind of the bound on log(1/y)."""

    h: sp.Expr
    kind: str


def exp_form(expr: sp.Expr, kind: str, variables: set[str]) -> ExpForm | None:
    """``expr`` as ``A exp(-c h(x))`` with A > 0 and c > 0 free of ``variables`` and h a product of their powers (and
    logs); None where it is not of that form (an exponent that grows, a prefactor that depends on the variables, a sum of
    several terms in the exponent)."""
    if kind not in MIRROR or not isinstance(expr, sp.Expr) or not expr.has(sp.exp):
        return None
    syms = {s for s in expr.free_symbols if s.name in variables}
    if not syms:
        return None
    log_form = sp.expand(sp.expand_log(sp.log(expr), force=True))
    dep = [t for t in sp.Add.make_args(log_form) if t.free_symbols & syms]
    if len(dep) != 1:
        return None
    coeff, h = dep[0].as_independent(*syms, as_Add=False)
    if coeff.is_negative is not True and (-coeff).is_positive is not True:
        return None
    if h.has(sp.exp):
        return None
    for f in sp.Mul.make_args(h):
        base = f.base if isinstance(f, sp.Pow) else f
        if not (base.is_Symbol or isinstance(base, sp.log)):
            return None
    return ExpForm(h, MIRROR[kind])
