"""Validation in one place: ``require_int`` and ``require_float`` check Python values where the
API (and the config dataclasses) receive them, with messages in API terms (``steps=-1 is out of
range: steps must be an integer >= 0``); the command line maps the parameter to its flag.

The argparse types below only parse: floats must be finite (``1e400`` parses to inf and is
refused), integers exact (``1.5`` and ``1e3`` are refused as integers, as is anything that is not a
number). The ranges are the API's.
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


# parse only: the range is checked by the API (names kept so a flag still says what it expects)
pos_int = nonneg_int = _int
pos_float = nonneg_float = _float
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
