"""Censored measurements: a value known only to lie above (or below) a bound.

A radius search that finds no flip up to its limit R does not measure the radius; it shows the
radius is at least R. A measure returns ``AtLeast(R)`` for that (``AtMost(r)`` for the mirror
case), the sweep stores it as ``{"at_least": R}``, and the fit uses it as a bound through a Tobit
likelihood (:func:`simulate.stats.estimate.censored_cell_means`). It is never dropped, and never
taken as the value itself.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ibcheck.theory.errors import InputError


@dataclass(frozen=True)
class _Bounded:
    value: float
    side: ClassVar[str] = ""

    def __post_init__(self):
        _check(self)

    def as_json(self) -> dict:
        return {self.side: float(self.value)}


class AtLeast(_Bounded):
    """A measurement known only to be >= ``value`` (e.g. no flip found up to radius ``value``)."""

    side = "at_least"


class AtMost(_Bounded):
    """A measurement known only to be <= ``value``."""

    side = "at_most"


Censored = AtLeast | AtMost


def _check(c) -> None:
    v = c.value
    try:
        x = float(v) if not isinstance(v, bool) and isinstance(v, (int, float, np.floating, np.integer)) else math.nan
    except OverflowError:  # an int past 1.8e308 (AtLeast(10**400))
        x = math.inf
    if not (math.isfinite(x) and x > 0):
        shown = repr(v) if len(repr(v)) <= 40 else repr(v)[:20] + "..." + repr(v)[-8:]
        raise InputError(f"{type(c).__name__}({shown}): the bound must be a finite number > 0 (at most 1.8e308)")


def encode(value):
    """A measure's result made JSON-ready: censored values become ``{"at_least": x}`` / ``{"at_most": x}``."""
    if isinstance(value, (AtLeast, AtMost)):
        return value.as_json()
    if isinstance(value, dict):
        return {k: encode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [encode(v) for v in value]
    return value


def decode(x) -> tuple[float | None, str | None]:
    """(value, censor) from a stored quantity: censor is None, "at_least" or "at_most"."""
    if isinstance(x, dict):
        for side in ("at_least", "at_most"):
            if side in x:
                return float(x[side]), side
        return None, None
    if x is None or isinstance(x, bool):
        return None, None
    try:
        return float(x), None
    except (TypeError, ValueError):
        return None, None


def censored_max(values: list) -> float | AtLeast:
    """The largest of measurements some of which are ``AtLeast`` bounds. Pitfall avoided: taking the max of the
    exact values alone; a bound above every exact value makes the largest a bound too."""
    exact = [float(v) for v in values if not isinstance(v, AtLeast)]
    bounds = [v.value for v in values if isinstance(v, AtLeast)]
    if bounds and (not exact or max(bounds) >= max(exact)):
        return AtLeast(max(bounds))
    return max(exact)


def censored_quantile(r: np.ndarray, q: float, limit: float | None = None) -> float | AtLeast:
    """The q-quantile of radii where ``inf`` means "no flip found" (up to ``limit`` when given).

    Pitfall avoided: dropping the infinite radii (``r[np.isfinite(r)]``) moves the quantile down,
    toward the points that did flip. Here the quantile is exact when it falls on a finite radius
    (the lower-order statistics are known), and ``AtLeast(limit)`` when it falls on a censored one
    (without a limit: at least the largest finite radius, or the point is unflippable). The
    quantile interpolates linearly (numpy's default) between the two order statistics around it."""
    r = np.sort(np.asarray(r, dtype=float))
    if len(r) == 0:
        raise InputError("no radii to take a quantile of")
    h = (len(r) - 1) * q
    lo, k = int(math.floor(h)), min(int(math.ceil(h)), len(r) - 1)  # the order statistics the quantile needs
    if math.isfinite(r[k]):
        return float(r[lo] + (r[k] - r[lo]) * (h - lo)) if k != lo else float(r[k])
    finite = r[np.isfinite(r)]
    bound = limit if limit is not None else (float(finite.max()) if len(finite) else None)
    if bound is None or not bound > 0:
        raise InputError("every radius is infinite and there is no search limit: the quantile is not even bounded")
    return AtLeast(float(bound))


def largest_radius(r: np.ndarray) -> float | AtLeast:
    """The radius that flips every point: the largest radius, or at least the largest finite one if some never flips
    (``inf``: no flip found). Pitfall avoided: the max of the finite radii alone reads a censored point as flipped."""
    finite = r[np.isfinite(r)]
    return float(r.max()) if len(finite) == len(r) else AtLeast(float(finite.max()) if len(finite) else 1.0)


def scaled(x: float | AtLeast, c: float) -> float | AtLeast:
    """``c x`` for a measurement or a lower bound (a bound scales to a bound)."""
    return AtLeast(x.value * c) if isinstance(x, AtLeast) else float(x) * c
