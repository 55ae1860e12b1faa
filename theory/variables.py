"""Variables of the claims, with their domains.

A :class:`Variable` couples a sympy symbol with the set of values the sources allow
(d an integer >= 2, eps in (0, 1), ...) and the direction in which it is asymptotic
(``+oo`` for sizes such as d, k, n; ``0`` for accuracies such as eps, delta, gamma).
The direction matters for the growth layer: ``log(1/eps)`` grows as eps -> 0.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from .argtypes import refused
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
    if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
        raise InputError(f"variable {name!r} is not a name (a Python identifier such as d, k or n_train)")
    return Variable(name, "a user's variable (positive real, tending to infinity)", low=0, low_open=True)


def tends_to_zero(name: str) -> bool:
    """Does the registry's variable of this name tend to 0 (eps, delta, gamma)? A name it does not know grows."""
    return shared_variable(name).tends_to == "0"
