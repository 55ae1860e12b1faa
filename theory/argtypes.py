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
import numbers
from fractions import Fraction

from .errors import InputError


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


def float_list(text: str) -> tuple[float, ...]:
    """A comma-separated list of finite numbers (``none``: the empty list); the range is the API's."""
    if text.strip().lower() == "none":
        return ()
    return tuple(_float(t) for t in text.split(","))


# parse only: the range is checked by the API (names kept so a flag still says what it expects)
pos_int = nonneg_int = _int
pos_float = nonneg_float = _float
finite_float = _float


# -- the same checks for Python values (the public API); messages name the parameter in API terms,
# -- and the command line rewrites ``steps=-1`` to its flag (``--steps -1``) when it reports them.
def require_int(name: str, value, low: int, high: int | None = None) -> int:
    """``value`` is an integer (a Python or numpy integer, or an integral Fraction; not a bool, not a
    float) in ``[low, high]``; else an InputError naming it and the range."""
    if isinstance(value, Fraction) and value.denominator == 1:
        value = value.numerator
    ok = isinstance(value, numbers.Integral) and not _is_bool(value)
    if not ok or value < low or (high is not None and value > high):
        rng = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise refused(name, value, f"is out of range: must be an integer {rng}")
    return int(value)


def require_float(name: str, value, low: float, strict: bool, high: float | None = None) -> float:
    """``value`` is a finite real number (int, float, Fraction or a numpy scalar; not a bool) > ``low``
    (``strict``) or >= ``low``, and <= ``high``; else an InputError naming it and the range."""
    ok = isinstance(value, numbers.Real) and not _is_bool(value)
    try:
        x = float(value) if ok else math.nan
    except (OverflowError, ValueError):
        x = math.nan
    if not math.isfinite(x) or not (x > low if strict else x >= low) or (high is not None and x > high):
        rng = f"{'>' if strict else '>='} {low:g}" + (f" and <= {high:g}" if high is not None else "")
        raise refused(name, value, f"is out of range: must be a finite number {rng}")
    return x


def require_bool(name: str, value) -> bool:
    """``value`` is True or False (a numpy bool too); 'no', 1 or None are refused."""
    if not _is_bool(value):
        raise refused(name, value, "is not accepted: must be True or False")
    return bool(value)


def require_choice(name: str, value, choices) -> str:
    """``value`` is one of ``choices`` (strings)."""
    if not isinstance(value, str) or value not in choices:
        raise refused(name, value, f"is not accepted: must be one of {', '.join(map(str, choices))}")
    return value


def _is_bool(value) -> bool:
    # numpy's bool type is named bool_ before numpy 2 and bool since (theory does not import numpy for this)
    return isinstance(value, bool) or (type(value).__module__ == "numpy" and type(value).__name__ in ("bool_", "bool"))


def shown_value(value) -> str:
    s = repr(value)
    return s if len(s) <= 60 else s[:50] + "..." + s[-6:]


def refused(name: str, value, problem: str, shown: str | None = None) -> InputError:
    """The InputError for one parameter: ``name=value <problem, the name said again>`` with its fields set
    (``shown``: the value as the message shows it, default its repr)."""
    head, _, tail = problem.partition(": must")
    said = f"{head}: {name} must{tail}" if tail or problem.endswith(": must") else problem
    text = shown if shown is not None else shown_value(value)
    sep = "" if said[:1] in ":;," else " "
    return InputError(f"{name}={text}{sep}{said}", parameter=name, value=value, problem=problem)
