"""Claims as JSON and LaTeX: the shapes the CLI and the reports print.

The JSON keys named in the interface contract (``claim``, ``status``, ``hypotheses`` with
``name, expr, holds, log10_lhs, log10_rhs``, ``bounds`` with ``quantity, kind, expr,
exponents, log_exponents, value``) are produced here and nowhere else.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar, Mapping

import sympy as sp

from .errors import InputError
from .evaluate import Point, bound_value, evaluate_claim, make_point
from .growth import GrowthError, exponents
from .result import Result
from .statement import Bound, tex
from .statement import ClaimStatement as Claim
from .variables import rational_string


def tends_to_map(claim: Claim) -> dict[str, str]:
    """Every claim variable with the limit used for exponent extraction ("const" ones as oo)."""
    return {v.name: ("0" if v.tends_to == "0" else "oo") for v in claim.variables}


@dataclass(frozen=True)
class BoundExponents:
    """The exponents of one bound per variable, as exact fractions: ``x^power (log x)^log (log log x)^loglog``."""

    power: Mapping[str, Fraction | sp.Expr]  # an Expr only where a parameter (L) is left symbolic
    log: Mapping[str, Fraction | sp.Expr]
    loglog: Mapping[str, Fraction | sp.Expr]


def exponent_fractions(claim: Claim, b: Bound, point: Point | None = None) -> BoundExponents:
    """The exponents of bound ``b`` as :class:`BoundExponents` (raises GrowthError where there is none).

    A parameter (a variable declared ``tends_to="const"``, such as ``L`` in ``log(T)**(2 - 2/L)``)
    inside an exponent is held fixed, with exponent 0; a value given at the point for it is
    substituted first. A growing variable inside an exponent (``exp(d/32)``) is super-polynomial
    and raises GrowthError instead of giving a wrong power.

    Pitfall avoided: exponents that leave theory as strings must be parsed back by every caller;
    these are ``Fraction`` objects, exact and typed.
    """
    expr = b.expr
    in_exp = {s for p in expr.atoms(sp.Pow) for s in p.exp.free_symbols}
    if point is not None:
        subs = {s: point.values[s.name] for s in in_exp if s.name in point.values}
        expr = expr.subs({s: sp.nsimplify(str(v)) for s, v in subs.items()})
    params = {v.name for v in claim.variables if v.tends_to == "const"} & {s.name for s in in_exp}
    tends = tends_to_map(claim)
    e = exponents(expr, {v: w for v, w in tends.items() if v not in params})

    def table(t) -> dict[str, Fraction | sp.Expr]:
        out = {v: _fraction(x) for v, x in t.items()}
        out.update({v: Fraction(0) for v in params})
        return out

    return BoundExponents(table(e.power), table(e.log), table(e.loglog))


def _fraction(x) -> Fraction | sp.Expr:
    x = sp.nsimplify(x) if not isinstance(x, sp.Basic) else x
    if x.is_Rational:
        return Fraction(int(x.p), int(x.q))
    return x


def _sym(x: Fraction | sp.Expr) -> sp.Expr:
    return sp.Rational(x.numerator, x.denominator) if isinstance(x, Fraction) else x


def bound_exponents(claim: Claim, b: Bound, point: Point | None = None) -> dict:
    """``exponents``, ``log_exponents`` and ``loglog_exponents`` of one bound, as rational strings
    (for JSON; :func:`exponent_fractions` gives them typed), or ``exponent_error``."""
    try:
        e = exponent_fractions(claim, b, point)
    except GrowthError as err:
        return {"exponents": None, "log_exponents": None, "loglog_exponents": None, "exponent_error": str(err)}
    return {
        "exponents": {v: rational_string(_sym(x)) for v, x in e.power.items()},
        "log_exponents": {v: rational_string(_sym(x)) for v, x in e.log.items()},
        "loglog_exponents": {v: rational_string(_sym(x)) for v, x in e.loglog.items()},
    }


def describe(claim: Claim, raw: Mapping[str, str] | None = None, reading: str | None = None) -> dict:
    """The full JSON description of a claim, evaluated at ``raw`` when given."""
    point = make_point(claim, raw) if raw else None
    hyps = [hv.as_json() for hv in evaluate_claim(claim, point)]
    bounds = []
    for b in claim.bounds:
        if reading is not None and b.reading not in (None, reading):
            continue
        value, log10 = bound_value(b.expr, point)
        assumed = sorted(s.name for s in b.expr.free_symbols if point is not None and s.name in point.assumed)
        bounds.append({
            "quantity": b.quantity, "kind": b.kind, "expr": sp.sstr(b.expr), "latex": b.as_latex(),
            **bound_exponents(claim, b, point),
            "value": value, "log10_value": log10, "value_assumes": {c: 1 for c in assumed},
            "reading": b.reading, "probability": None if b.probability is None else sp.sstr(b.probability),
            "note": b.note, "unverified": b.unverified,
        })
    applies = None
    if point is not None:
        numeric = [h for h in hyps if not h["qualitative"]]
        if any(h["holds"] is False for h in numeric):
            applies = False
        elif all(h["holds"] is True for h in numeric):
            applies = True
    return {
        "claim": claim.id, "title": claim.title, "status": claim.status, "kind": claim.kind,
        "flags": claim.flags, "unverified": claim.unverified, "source": claim.source,
        "variables": {v.name: v.domain_text() for v in claim.variables},
        "constants": list(claim.constants), "readings": list(claim.readings),
        "point": dict(raw) if raw else None, "applies": applies,
        "hypotheses": hyps, "bounds": bounds,
        "definitions": {name: sp.sstr(e) for name, e in claim.definitions},
        "uses": list(claim.uses), "generalizes": list(claim.generalizes),
        "compared_with": list(claim.compared_with), "resolves": list(claim.resolves),
        "note": claim.note, "reference": dict(claim.reference),
    }


def latex(claim: Claim, reading: str | None = None) -> str:
    """A LaTeX block: hypotheses, then conclusions, then the flags."""
    lines = [rf"% {claim.id}: {claim.title} ({claim.status})", r"\begin{align*}"]
    rows = []
    for h in claim.hypotheses:
        body = tex(h.expr) if h.expr is not None else r"\text{" + h.text.replace("_", r"\_") + "}"
        rows.append(rf"\text{{{h.name}}}:&\quad {body}")
    for b in claim.bounds:
        if reading is not None and b.reading not in (None, reading):
            continue
        tag = f" && \\text{{[{b.reading}]}}" if b.reading else ""
        rows.append(rf"\Rightarrow&\quad {b.as_latex()}{tag}")
    lines.append(" \\\\\n".join(rows))
    lines.append(r"\end{align*}")
    for f in claim.flags:
        lines.append(f"% flag: {f}")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Bounds(Result):
    """A claim's hypotheses and bounds with their exponents, evaluated at a point when one is given
    (:func:`describe` holds the JSON shape; this is its typed, displayable form)."""

    name: ClassVar[str] = "bounds"
    claim: str
    point: dict[str, str] | None
    applies: bool | None
    hypotheses: tuple[dict, ...]
    bounds: tuple[dict, ...]
    latex: str
    description: dict

    def as_json(self) -> dict:
        return self.description

    def heading(self) -> str:
        at = "" if not self.point else " at " + ", ".join(f"{k}={v}" for k, v in self.point.items())
        state = {None: "", True: ": applies", False: ": does not apply"}[self.applies]
        return f"{self.claim}{at}{state}"

    def table(self) -> list[dict]:
        rows = [{"part": h["name"], "statement": h["expr"] or h["text"], "holds": h["holds"], "log10 lhs": h["log10_lhs"],
                 "log10 rhs": h["log10_rhs"]} for h in self.hypotheses]
        return rows + [{"part": f"{b['quantity']} {b['kind']}", "statement": b["expr"], "holds": None,
                        "log10 lhs": b["log10_value"], "log10 rhs": None} for b in self.bounds]

    def _repr_latex_(self) -> str:
        body = self.latex
        return "$$" + body[body.index(r"\begin{align*}"):body.index(r"\end{align*}") + len(r"\end{align*}")] + "$$"


def bounds_at(claim: Claim, raw: Mapping[str, str] | None = None, reading: str | None = None) -> Bounds:
    """:func:`describe` as a :class:`Bounds` result (the reading checked first)."""
    if reading is not None and reading not in claim.readings:
        raise InputError(f"reading={reading!r} is not a reading of {claim.id}: accepted readings are {', '.join(claim.readings) or 'none'}")
    info = describe(claim, raw or None, reading)
    return Bounds(claim.id, info["point"], info["applies"], tuple(info["hypotheses"]), tuple(info["bounds"]), latex(claim, reading), info)
