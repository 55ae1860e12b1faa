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


def pos_int(text: str) -> int:
    x = _int(text)
    if x < 1:
        raise argparse.ArgumentTypeError(f"{text} is out of range: must be an integer >= 1")
    return x


def nonneg_int(text: str) -> int:
    x = _int(text)
    if x < 0:
        raise argparse.ArgumentTypeError(f"{text} is out of range: must be an integer >= 0")
    return x


def pos_float(text: str) -> float:
    x = _float(text)
    if not x > 0:
        raise argparse.ArgumentTypeError(f"{text} is out of range: must be a finite number > 0")
    return x


def nonneg_float(text: str) -> float:
    x = _float(text)
    if x < 0:
        raise argparse.ArgumentTypeError(f"{text} is out of range: must be a finite number >= 0")
    return x


finite_float = _float
