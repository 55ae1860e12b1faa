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
