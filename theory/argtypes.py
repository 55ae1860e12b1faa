"""argparse types that check ranges where the value is read, so that every numeric flag gets one
line naming the value and the accepted range (``argument --lr: -inf is out of range: ...``).

Floats must be finite (``1e400`` parses to inf and is refused); integers are exact (``1.5`` and
``1e3`` are refused as integers, as is anything that is not a number).
"""
from __future__ import annotations

import argparse
import math


def _float(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(x):
        raise argparse.ArgumentTypeError(f"{text} is out of range: must be a finite number")
    return x


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None


def _at_least(parse, low: float, strict: bool, what: str):
    """A type: ``parse`` then ``x > low`` (strict) or ``x >= low``, else a message with the range."""
    def check(text: str):
        x = parse(text)
        if not (x > low if strict else x >= low):
            raise argparse.ArgumentTypeError(f"{text} is out of range: must be {what}")
        return x

    return check


pos_int = _at_least(_int, 1, False, "an integer >= 1")
nonneg_int = _at_least(_int, 0, False, "an integer >= 0")
pos_float = _at_least(_float, 0.0, True, "a finite number > 0")
nonneg_float = _at_least(_float, 0.0, False, "a finite number >= 0")


finite_float = _float


# -- the same checks for Python values (the public API); messages name the parameter in API terms,
# -- and the command line rewrites ``steps=-1`` to its flag (``--steps -1``) when it reports them.
def require_int(name: str, value, low: int) -> int:
    """``value`` is an integer (not a bool, not a float) >= ``low``; else an InputError naming it and the range."""
    import numbers

    from .errors import InputError

    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise InputError(f"{name}={value!r} is out of range: {name} must be an integer >= {low}")
    return int(value)


def require_float(name: str, value, low: float, strict: bool) -> float:
    """``value`` is a finite real number > ``low`` (``strict``) or >= ``low``; else an InputError naming it and the range."""
    import numbers

    from .errors import InputError

    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or not (value > low if strict else value >= low):
        raise InputError(f"{name}={value!r} is out of range: {name} must be a finite number {'>' if strict else '>='} {low:g}")
    return float(value)
