"""Log-space evaluation of hypotheses and bounds at a parameter point.

Conditions such as ``n <= sqrt(delta/3) * exp(d/32)`` or ``1/delta <= d^(ln d - 1)/3`` are
super-polynomial in d: at d = 10^6 the right side is about 10^13571, far past float64.
Every side is therefore rewritten symbolically as its logarithm (``expand_log``), so that
``exp(d/32)`` becomes ``d/32``, and evaluated with mpmath at a working precision that can
be raised for the exact endpoint checks of :mod:`theory.window`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Mapping

import mpmath
import sympy as sp

from .argtypes import refused
from .errors import InputError
from .expressions import as_sympy
from .statement import ClaimStatement as Claim
from .statement import Hypothesis

LN10 = mpmath.log(10)
MAX_DECIMAL_EXPONENT = 10000  # |log10| of a value at a point; log space handles it, an exact integer stays small


def parse_assignments(text: str | None, option: str = "--at") -> dict[str, str]:
    """``"d=100,k=5"`` -> ``{"d": "100", "k": "5"}``; one-line errors (naming ``option``) for malformed text."""
    out: dict[str, str] = {}
    if not text:
        return out
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        if "=" not in part:
            raise InputError(f"{option} expects name=value pairs separated by commas, got {part!r}")
        name, value = part.split("=", 1)
        if not name or not value:
            raise InputError(f"{option} expects name=value pairs separated by commas, got {part!r}")
        if name in out:
            raise InputError(f"variable {name} is given twice in {option}")
        out[name] = value
    return out


def parse_number(name: str, text: str, integer: bool) -> int | mpmath.mpf:
    """Parse a decimal number exactly (``1e6`` is the integer 1000000 for an integer variable)."""
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise InputError(f"{name}={text!r} is not a number") from None
    if not value.is_finite():
        raise InputError(f"{name}={text} is not a finite number")
    if value != 0 and abs(value.adjusted()) > MAX_DECIMAL_EXPONENT:
        # Pitfall avoided: int(Decimal("1e999999999")) builds a billion-digit integer (485 MB).
        raise InputError(f"{name}={text} is out of range: numbers must lie within 1e-{MAX_DECIMAL_EXPONENT} .. 1e{MAX_DECIMAL_EXPONENT} "
                         "in absolute value")
    if integer:
        if value != value.to_integral_value():
            raise InputError(f"{name}={text} is not an integer: {name} must be an integer")
        return int(value)
    return mpmath.mpf(text)


@dataclass(frozen=True)
class Point:
    """Validated values of a claim's variables and constants at one parameter point."""

    values: dict[str, object]
    assumed: dict[str, int] = field(default_factory=dict)

    def get(self, name: str):
        return self.values.get(name, self.assumed.get(name))


def make_point(claim: Claim, raw: Mapping[str, str], allow: tuple[str, ...] = ()) -> Point:
    """Validate ``raw`` against the claim's variables and constants.

    Unknown names, non-numbers and values out of their domain raise :class:`InputError`
    naming the value and the accepted range. Symbolic constants not given default to 1
    and are listed in ``assumed``.
    """
    known = {v.name: v for v in claim.variables}
    values: dict[str, object] = {}
    for name, text in raw.items():
        if name in known:
            var = known[name]
            num = parse_number(name, text, var.integer)
            values[name] = var.check(num) if var.integer else _check_real(var, num)
        elif name in claim.constants:
            num = parse_number(name, text, False)
            if num <= 0:
                raise InputError(f"{name}={text} is out of range: the constant {name} must be a number > 0")
            values[name] = num
        elif name in allow:
            values[name] = text
        else:
            accepted = ", ".join(list(known) + list(claim.constants)) or "none"
            raise InputError(f"unknown variable {name!r} for {claim.id}: accepted variables are {accepted}", "at", name)
    assumed = {c: 1 for c in claim.constants if c not in values}
    return Point(values, assumed)


def _check_real(var, num: mpmath.mpf):
    """The domain check on the exact value. Pitfall avoided: ``float(mpf('1e-400'))`` is 0.0, which
    would refuse a valid eps = 1e-400 as outside (0, 1)."""
    lo_ok = var.low is None or (num > var.low if var.low_open else num >= var.low)
    hi_ok = var.high is None or (num < var.high if var.high_open else num <= var.high)
    if not (lo_ok and hi_ok):
        raise refused(var.name, num, f"is out of range: must be {var.domain_text()}", shown=mpmath.nstr(num, 8))
    return num


@lru_cache(maxsize=4096)
def log_form(expr: sp.Expr) -> sp.Expr:
    """``log(expr)`` expanded so that no exponential or huge power survives.

    ``log(sqrt(delta/3) * exp(d/32))`` becomes ``log(delta)/2 - log(3)/2 + d/32``.
    """
    return sp.expand_log(sp.log(as_sympy(expr)), force=False)


@lru_cache(maxsize=4096)
def _compiled(expr: sp.Expr):
    syms = sorted(expr.free_symbols, key=lambda s: s.name)
    fn = sp.lambdify(syms, expr, modules="mpmath")
    return tuple(s.name for s in syms), fn


def evaluate(expr: sp.Expr, values: Mapping[str, object]) -> mpmath.mpf | mpmath.mpc:
    """Evaluate a sympy expression with mpmath at the given values (names -> numbers)."""
    names, fn = _compiled(as_sympy(expr))
    return fn(*[_mp(values[n]) for n in names])


def _mp(v):
    """A value as mpmath reads it: ints and exact rationals (sympy's) at the working precision."""
    if isinstance(v, int):
        return mpmath.mpf(v)
    if isinstance(v, sp.Rational):
        return mpmath.mpf(int(v.p)) / int(v.q)
    return v


def log10_value(expr: sp.Expr, values: Mapping[str, object]) -> mpmath.mpf | None:
    """log10 of a positive expression, computed in log space (never overflows).

    Returns None where the expression is not positive (its log is undefined).
    """
    form = log_form(expr)
    if form.has(sp.zoo, sp.nan):  # log 0: a side that is 0 (``(x-1)*(x-3) >= 0``) is compared by value
        return None
    v = evaluate(form, values)
    if isinstance(v, mpmath.mpc):
        if abs(v.imag) > mpmath.mpf(10) ** (-mpmath.mp.dps // 2):
            return None
        v = v.real
    if mpmath.isnan(v):
        return None
    return v / LN10


_REL = {
    sp.GreaterThan: lambda a, b: a >= b,
    sp.StrictGreaterThan: lambda a, b: a > b,
    sp.LessThan: lambda a, b: a <= b,
    sp.StrictLessThan: lambda a, b: a < b,
}


@dataclass
class HypothesisValue:
    """One hypothesis at one point. ``holds`` is None when it cannot be decided there."""

    name: str
    expr: str
    text: str
    holds: bool | None
    log10_lhs: float | str | None = None  # a str (decimal) where the log10 itself is beyond float64: log10_number
    log10_rhs: float | str | None = None
    missing: list[str] = field(default_factory=list)
    assumed: dict[str, int] = field(default_factory=dict)
    qualitative: bool = False
    unverified: bool = False

    def as_json(self) -> dict:
        return {
            "name": self.name, "expr": self.expr, "text": self.text, "holds": self.holds,
            "log10_lhs": self.log10_lhs, "log10_rhs": self.log10_rhs, "missing": self.missing,
            "assumed_constants": self.assumed, "qualitative": self.qualitative, "unverified": self.unverified,
        }


def relation_holds(rel: sp.Basic, values: Mapping[str, object]) -> tuple[bool, mpmath.mpf | None, mpmath.mpf | None]:
    """Decide a relation (or And/Or of relations) in log space; return the deciding sides' log10."""
    if isinstance(rel, (sp.And, sp.Or)):
        results = [relation_holds(a, values) for a in rel.args]
        want = isinstance(rel, sp.Or)
        for r in results:
            if r[0] == want:
                return r
        return results[-1]
    lhs, rhs = rel.lhs, rel.rhs
    a, b = log10_value(lhs, values), log10_value(rhs, values)
    if a is None or b is None:
        # A side that is not positive: compare the values directly (rare; small numbers).
        va, vb = evaluate(lhs, values), evaluate(rhs, values)
        if not (_real_finite(va) and _real_finite(vb)):  # undefined there (log 0, sqrt of a negative): the relation fails,
            return False, a, b  # as a window counts it (the real part of sqrt(-1) used to read as 0, log 0 as -inf)
        a_, b_ = mpmath.re(va), mpmath.re(vb)
        if abs(a_ - b_) <= _tie_width(a_, b_):
            return _decide_tie(rel, values, a_, b_), a, b
        return bool(_REL[type(rel)](a_, b_)), a, b
    if abs(a - b) <= _tie_width(a, b):
        return _decide_tie(rel, values, a, b), a, b
    return bool(_REL[type(rel)](a, b)), a, b


def _real_finite(v) -> bool:
    """Is ``v`` a finite real number (an mpc with a zero imaginary part counts)?"""
    try:
        im = mpmath.im(v)
        re_ = mpmath.re(v)
    except (TypeError, ValueError):
        return False
    return bool(im == 0 and mpmath.isfinite(re_))


def _tie_width(a, b) -> mpmath.mpf:
    """How close two sides' (log) values must be for rounding to decide the comparison: 10^(8 - dps) of their scale."""
    return mpmath.mpf(10) ** (8 - mpmath.mp.dps) * max(mpmath.mpf(1), abs(a), abs(b))


def exact_value(v) -> sp.Expr:
    """A value at a point as an exact sympy number: an int as itself, an mpf as the decimal it was read from (its
    shortest decimal at the working precision: ``mpf('0.1')`` is 1/10, not the binary float next to it)."""
    if isinstance(v, (int, sp.Integer, sp.Rational)):
        return sp.Integer(v) if isinstance(v, int) else v
    return sp.Rational(mpmath.nstr(mpmath.mpf(v), mpmath.mp.dps, strip_zeros=True, min_fixed=-mpmath.inf, max_fixed=mpmath.inf))


def _decide_tie(rel: sp.Basic, values: Mapping[str, object], a, b) -> bool:
    """A comparison whose sides agree to the working precision, decided exactly: the values enter as exact numbers and
    the sign of lhs - rhs is proved by sympy (a rational, or an algebraic number whose sign sympy settles), else read
    at four times the precision, where sides still equal count as equal.

    Pitfall avoided: in log space ``d >= n*k`` at d = 21, n = 7, k = 3 compares ln 21 with ln 7 + ln 3, which differ in
    the last digit, so the equality point fell outside the window and its verification agreed with the error."""
    subs = {s: exact_value(values[s.name]) for s in rel.free_symbols if s.name in values}
    diff = sp.simplify(as_sympy(rel.lhs).subs(subs) - as_sympy(rel.rhs).subs(subs))
    sign = None
    if diff.is_zero:
        sign = 0
    elif diff.is_positive:
        sign = 1
    elif diff.is_negative:
        sign = -1
    else:
        digits = 4 * mpmath.mp.dps
        num = diff.evalf(digits)
        if num.is_real and num.is_number:
            sign = 0 if abs(num) <= sp.Float(10, digits) ** (10 - digits) else (1 if num > 0 else -1)
    if sign is None:
        return bool(_REL[type(rel)](a, b))
    return bool(_REL[type(rel)](sign, 0))


def evaluate_hypothesis(h: Hypothesis, point: Point | None) -> HypothesisValue:
    """Evaluate one hypothesis at ``point`` (None: report the formula only)."""
    expr_text = "" if h.expr is None else sp.sstr(h.expr)
    out = HypothesisValue(h.name, expr_text, h.text, None, qualitative=h.qualitative, unverified=h.unverified)
    if h.expr is None or point is None:
        return out
    names = sorted(s.name for s in h.expr.free_symbols)
    out.missing = [n for n in names if point.get(n) is None]
    out.assumed = {n: point.assumed[n] for n in names if n in point.assumed}
    if out.missing:
        return out
    values = {n: point.get(n) for n in names}
    holds, a, b = relation_holds(h.expr, values)
    out.holds = holds
    out.log10_lhs, out.log10_rhs = log10_number(a), log10_number(b)
    return out


def evaluate_claim(claim: Claim, point: Point | None) -> list[HypothesisValue]:
    """Every hypothesis of ``claim`` at ``point``."""
    return [evaluate_hypothesis(h, point) for h in claim.hypotheses]


def log10_number(x: mpmath.mpf | None) -> float | str | None:
    """A log10 for JSON and print: a float where float64 holds it, else its decimal text (``"1.35736e+997"``).

    Pitfall avoided: float() of the log10 of exp(d/32) at d = 1e999 is inf, so ``bounds`` printed "log10 rhs inf"
    beside a hypothesis it had decided exactly in log space."""
    if x is None:
        return None
    f = float(x)
    return f if math.isfinite(f) else mpmath.nstr(x, 6)


def bound_value(expr: sp.Expr, point: Point | None) -> tuple[float | None, float | str | None]:
    """(value, log10 value) of a bound expression at a point; None where a variable is missing.

    The value is None too when it is beyond float64's range; its log10 is still given.
    """
    if point is None:
        return None, None
    names = [s.name for s in as_sympy(expr).free_symbols]
    if any(point.get(n) is None for n in names):
        return None, None
    values = {n: point.get(n) for n in names}
    lg = log10_value(expr, values) if as_sympy(expr) != 0 else None
    if lg is None:
        v = evaluate(expr, values)
        return (float(mpmath.re(v)) if not isinstance(v, int) else float(v)), None
    lg_f = float(lg)
    value = float(mpmath.power(10, lg)) if abs(lg_f) < 300 else None
    return value, log10_number(lg)
