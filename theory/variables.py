"""Variables of the claims, with their domains.

A :class:`Variable` couples a sympy symbol with the set of values the sources allow
(d an integer >= 2, eps in (0, 1), ...) and the direction in which it is asymptotic
(``+oo`` for sizes such as d, k, n; ``0`` for accuracies such as eps, delta, gamma).
The direction matters for the growth layer: ``log(1/eps)`` grows as eps -> 0.
"""
from __future__ import annotations

import keyword
import math
import numbers
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

import sympy as sp

from .argtypes import _is_bool, refused
from .errors import InputError


@dataclass(frozen=True)
class Variable:
    """A claim variable: symbol, domain and asymptotic direction.

    ``low``/``high`` are the domain ends (``None`` for unbounded); ``low_open`` and
    ``high_open`` say whether an end is excluded. ``integer`` restricts to integers.
    ``tends_to`` is ``"oo"`` or ``"0"``.
    """

    name: str
    description: str
    integer: bool = False
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    tends_to: str = "oo"

    def __post_init__(self):
        """The domain checked once, here: each end a finite number (None: unbounded), low <= high, and not empty.

        Pitfall avoided: a low end of nan, inf or above the high end was accepted, and every window then
        answered for a domain no value can be in. The name, description, flags and direction too, as a claim checks its
        parts: ``Variable(None, None)``, ``Variable('', '')`` and ``Variable(nan, nan)`` were built unchecked."""
        check_name(self.name, f"Variable(name={self.name!r})")
        if not isinstance(self.description, str):
            raise InputError(f"variable {self.name}: description={self.description!r} is not a string (e.g. 'input dimension')",
                             parameter="description", value=self.description)
        for flag in ("integer", "low_open", "high_open"):
            if not _is_bool(getattr(self, flag)):
                raise InputError(f"variable {self.name}: {flag}={getattr(self, flag)!r} is not accepted: {flag} must be True or False",
                                 parameter=flag, value=getattr(self, flag))
        if not isinstance(self.tends_to, str) or self.tends_to not in TENDS_TO:
            raise InputError(f"variable {self.name}: tends_to={self.tends_to!r} is not accepted: tends_to must be one of "
                             f"{', '.join(map(repr, TENDS_TO))}", parameter="tends_to", value=self.tends_to)
        for side in ("low", "high"):
            end = getattr(self, side)
            if end is not None and not _finite_number(end):
                raise InputError(f"variable {self.name}: {side}={end!r} is not a finite number: give a finite number, "
                                 f"or None for no {side} end", parameter=side, value=end)
        lo, hi = self.low, self.high
        if lo is not None and hi is not None and (hi < lo or (hi == lo and (self.low_open or self.high_open))):
            shown = f"{'(' if self.low_open else '['}{_fmt(lo)}, {_fmt(hi)}{')' if self.high_open else ']'}"
            raise InputError(f"variable {self.name}: the domain {shown} is empty: low={lo!r} must be "
                             f"below high={hi!r} (or equal to it, with both ends closed)", parameter="low", value=lo)

    @property
    def symbol(self) -> sp.Symbol:
        return symbol(self.name)

    def domain_text(self) -> str:
        """The accepted range in words, e.g. ``an integer >= 2`` or ``a number in (0, 1)``."""
        what = "an integer" if self.integer else "a number"
        lo, hi = self.low, self.high
        if lo is not None and hi is not None:
            lb = "(" if self.low_open else "["
            rb = ")" if self.high_open else "]"
            return f"{what} in {lb}{_fmt(lo)}, {_fmt(hi)}{rb}"
        if lo is not None:
            return f"{what} {'>' if self.low_open else '>='} {_fmt(lo)}"
        if hi is not None:
            return f"{what} {'<' if self.high_open else '<='} {_fmt(hi)}"
        return what

    def contains(self, value: float | int) -> bool:
        if isinstance(value, float) and not math.isfinite(value):
            return False
        if self.integer and value != int(value):
            return False
        if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
            return False
        if self.high is not None and (value > self.high or (self.high_open and value == self.high)):
            return False
        return True

    def check(self, value: float | int):
        """Return ``value`` (as int for integer variables) or raise :class:`InputError`."""
        if not self.contains(value):
            raise refused(self.name, value, f"is out of range: must be {self.domain_text()}", shown=_fmt(value))
        return int(value) if self.integer else value


TENDS_TO = ("oo", "0", "const")  # the asymptotic direction: sizes grow, accuracies shrink, a constant stays


# the names a formula reads as something else: constants (E, pi, oo; e is Euler's number in LaTeX; I, nan and zoo are how
# sympy prints its imaginary unit and undefined values) and the functions of the formula parser
# (theory.expressions._CONSTANTS and _FUNCS, which a test keeps within this set)
RESERVED_NAMES: dict[str, str] = {
    "E": "Euler's number", "e": "Euler's number in LaTeX", "pi": "the number pi", "oo": "infinity",
    "I": "the imaginary unit, as sympy writes it", "nan": "an undefined value, as sympy writes it", "zoo": "complex infinity, as sympy writes it",
    **{f: f"the function {f}(...)" for f in ("log", "ln", "sqrt", "exp", "Max", "Min", "max", "min", "Abs", "abs")},
}


def check_name(name: object, what: str | None = None) -> str:
    """A variable's name: an ASCII Python identifier, not a keyword, not starting with ``_`` (the formula parser reads it as
    a name), not a name a formula reads as a constant or a function (:data:`RESERVED_NAMES`); else an InputError naming
    ``what`` (default ``variable 'name'``).

    Pitfalls avoided: ``Variable("E")`` was accepted and ``E*d`` then read as e*d (at E=100: 10e, not 1000); the full-width
    ``Variable('ｘ')`` was accepted but unusable, since Python's parser reads the identifier ``ｘ`` in a formula as ``x``
    (NFKC)."""
    shown = what or f"variable {name!r}"
    if isinstance(name, str) and not name.isascii():
        raise InputError(f"{shown} is not a name: a variable's name is ASCII letters, digits and _ (such as d, k or n_train); "
                         "a formula reads some non-ASCII letters as others (the full-width 'ｘ' as x)", parameter="name", value=name)
    if not isinstance(name, str) or not name.isidentifier() or name.startswith("_") or keyword.iskeyword(name):
        raise InputError(f"{shown} is not a name: a variable's name is a Python identifier such as d, k or "
                         "n_train (not a keyword, not starting with _)", parameter="name", value=name)
    if name in RESERVED_NAMES:
        raise InputError(f"{shown} is not a name: {name} is a reserved word (a formula reads it as {RESERVED_NAMES[name]}); choose "
                         "another name, such as d, k or n_train", parameter="name", value=name)
    return name


def _finite_number(x) -> bool:
    """A finite real number (an int, a float, a Fraction, a Decimal or a sympy number), not a bool or a string."""
    if isinstance(x, bool):
        return False
    if isinstance(x, sp.Basic):
        return bool(x.is_number and x.is_extended_real and x.is_finite)
    if isinstance(x, Decimal):
        return x.is_finite()
    if not isinstance(x, numbers.Real):
        return False
    return isinstance(x, (numbers.Integral, Fraction)) or math.isfinite(x)


def _fmt(x) -> str:
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e16:
        return str(int(x))
    return str(x)


_SYMBOLS: dict[str, sp.Symbol] = {}


def symbol(name: str) -> sp.Symbol:
    """The one positive sympy symbol for ``name`` (shared by all claims)."""
    if name not in _SYMBOLS:
        _SYMBOLS[name] = sp.Symbol(name, positive=True)
    return _SYMBOLS[name]


def constant(name: str) -> sp.Symbol:
    """A symbolic constant (C, C1..C4) whose value the source does not give."""
    return symbol(name)


# The shared vocabulary. Claims pick from these and may override a domain.
d = Variable("d", "input dimension", integer=True, low=2)
k = Variable("k", "number of clusters (features), or the width of a random network", integer=True, low=1)
n = Variable("n", "number of training samples", integer=True, low=1)
m = Variable("m", "neurons per output sign", integer=True, low=1)
eps = Variable("eps", "target error / robustness radius parameter", low=0, high=1, low_open=True, high_open=True, tends_to="0")
delta = Variable("delta", "failure probability", low=0, high=1, low_open=True, high_open=True, tends_to="0")
gamma = Variable("gamma", "failure probability", low=0, high=1, low_open=True, high_open=True, tends_to="0")
sigma = Variable("sigma", "per-coordinate noise standard deviation", low=0, low_open=True)
T = Variable("T", "training time: t for gradient flow, the sum of step sizes for GD", low=1, low_open=True)
t = Variable("t", "number of GD iterations", low=1, low_open=True)
L = Variable("L", "homogeneity degree of the model", integer=True, low=1, tends_to="const")


def rational_string(x) -> str:
    """A rational as ``"1/2"``, ``"-1/2"`` or ``"0"``; a symbolic value via ``str``."""
    x = sp.nsimplify(x) if not isinstance(x, (int, Fraction)) else sp.Rational(x)
    if x.is_Rational:
        return str(x)
    return str(x)


def shared_variable(name: str) -> Variable:
    """The registry's variable called ``name`` (d, k, n, eps, ...), else a positive real variable that
    grows (a user's own). Pitfall avoided: two claims that write ``d`` get the same symbol and domain."""
    found = globals().get(name) if isinstance(name, str) else None
    if isinstance(found, Variable) and found.name == name:
        return found
    check_name(name)
    return Variable(name, "a user's variable (positive real, tending to infinity)", low=0, low_open=True)


def tends_to_zero(name: str) -> bool:
    """Does the registry's variable of this name tend to 0 (eps, delta, gamma)? A name it does not know grows."""
    return shared_variable(name).tends_to == "0"
