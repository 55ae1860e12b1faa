"""Fit terms: the factors x^a, (log x)^b and (log log x)^c of a bound, one regressor each.

A bound ``A x^a (log x)^b (log log x)^c`` is fitted as
``log y = c0 + a log x + b log(log x) + c log(log(log x))``: every exponent it states gets its own
coefficient and CI. A term is named the way ``--predict`` and summary.json spell it: ``T``,
``log(T)``, ``log(log(T))``.

Pitfall avoided: treating a stated log factor as a known offset tests only the power exponent,
so a quantity that never changes passes ``O(1/log t)`` (its power exponent, 0, is the one
predicted). Offsets are used only on explicit request (``offsets="known"``).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction

from ibcheck.theory.errors import InputError

ORDERS = (0, 1, 2)
# The default equivalence margin of each order: a power exponent within 0.1, a log exponent within
# 0.25 (log x moves by a factor 3.5 where x moves by 30 decades), a log-log exponent within 0.5.
MARGINS = {0: 0.1, 1: 0.25, 2: 0.5}
# The negative control's shift: the next stronger statement a fit must reject (x^(a-1/2), (log x)^(b-1)).
SHIFTS = {0: 0.5, 1: 1.0, 2: 1.0}


@dataclass(frozen=True, order=True)
class Term:
    """One factor of a bound along ``variable``: order 0 is x, 1 is log x, 2 is log log x.

    ``toward_zero``: the variable tends to 0 (eps, delta). Its power is stated in x itself (``eps^2``
    has exponent 2), as the theory layer reports it, and its log factors in ``log(1/x)``.
    Pitfall avoided: ``log(eps)`` is negative below 1, so a log factor fitted as ``log(log eps)``
    is undefined; the regressor is ``log(log(1/eps))``."""

    variable: str
    order: int = 0
    toward_zero: bool = False

    @property
    def name(self) -> str:
        inner = f"1/{self.variable}" if self.toward_zero and self.order else self.variable
        for _ in range(self.order):
            inner = f"log({inner})"
        return inner

    def regressor(self, log_x: float) -> float:
        """The regressor from log x: log x, log(log x) or log(log(log x)); nan where undefined.

        Pitfall avoided: x itself may be 1e800 (T under the loss-based step), so the regressor is
        computed from log x, never from x."""
        z = -log_x if self.toward_zero and self.order else log_x
        for _ in range(self.order):
            if not (z > 0 and math.isfinite(z)):
                return float("nan")
            z = math.log(z)
        return z

    def __str__(self) -> str:
        return self.name


def parse_term(text: str) -> Term:
    """``"t"`` -> Term("t"), ``"log(t)"`` / ``"ln(t)"`` -> order 1, ``"log(log(t))"`` -> order 2;
    ``"log(1/eps)"`` -> the log factor of a variable that tends to 0."""
    s = text.replace(" ", "")
    order = 0
    while True:
        m = re.match(r"^(?:log|ln)\((.*)\)$", s)
        if not m:
            break
        s, order = m.group(1), order + 1
    toward_zero = order > 0 and s.startswith("1/")
    if toward_zero:
        s = s[2:]
    if order > 2 or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", s):
        raise InputError(f"{text!r} is not a fit term: accepted are VAR, log(VAR), log(log(VAR)) and, for a variable that "
                         "tends to 0, log(1/VAR) and log(log(1/VAR)), e.g. t, log(t), log(log(t)), log(1/eps)"
                         + ("; an exp-type bound such as exp(-c*n/d) is stated in a claims file (ibcheck.Bound(quantity, 'O', "
                            "'exp(-c*n/d)') with constants=['c'], --claims; docs/verdict.md), not as a fit term"
                            if re.search(r"\bexp\s*\(|\be\s*\*\*|\^", s) else ""))
    return Term(s, order, toward_zero)


@dataclass(frozen=True)
class TermSpec:
    """The exponents a bound states, as exact fractions per term (power terms always present)."""

    predicted: tuple[tuple[Term, Fraction], ...]

    @property
    def terms(self) -> list[Term]:
        return [t for t, _ in self.predicted]

    def exponent(self, term: Term) -> Fraction:
        return dict(self.predicted)[term]

    def as_floats(self) -> dict[str, float]:
        return {t.name: float(x) for t, x in self.predicted}


def term_spec(variables: list[str], power: dict, log: dict | None = None, loglog: dict | None = None,
              toward_zero: frozenset[str] = frozenset()) -> TermSpec:
    """The fit terms of a bound along ``variables``: every power term, and a log (log-log) term
    wherever the bound states a nonzero log (log-log) exponent. ``toward_zero`` names the variables
    that tend to 0 (their log factors are in ``log(1/x)``, see :class:`Term`)."""
    out: list[tuple[Term, Fraction]] = []
    for v in variables:
        tz = v in toward_zero
        out.append((Term(v, 0, tz), Fraction(power.get(v, 0))))
        for order, table in ((1, log or {}), (2, loglog or {})):
            x = Fraction(table.get(v, 0))
            if x != 0:
                out.append((Term(v, order, tz), x))
    return TermSpec(tuple(out))
