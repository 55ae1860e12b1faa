"""Verdicts: does a fitted exponent agree with a claim's prediction?

Each bound kind has its own test, at level alpha = 0.05 and equivalence margin ``margin``
(0.1 by default), with ``L, U`` the one-sided (1 - alpha) bounds from the t distribution:

* ``O`` (also ``o``, ``<=``): the exponent is not above the prediction.
  consistent if ``U <= pred + margin``; inconsistent if ``L > pred + margin``.
* ``Omega`` (also ``omega``, ``>=``): mirror image.
  consistent if ``L >= pred - margin``; inconsistent if ``U < pred - margin``.
* ``Theta``: two one-sided tests (TOST). consistent if ``pred - margin < L`` and
  ``U < pred + margin``; inconsistent if the two-sided (1 - alpha) CI lies outside the band.

Anything else is ``inconclusive``, a valid outcome. The negative control tests the same fit
against a wrong, stronger prediction (O: pred - 0.5; Omega and Theta: pred + 0.5); it must come
out inconsistent, or the comparison has no power.
"""
from __future__ import annotations

from dataclasses import dataclass

from scipy import stats

UPPER = ("O", "o", "<=")
LOWER = ("Omega", "omega", ">=")
TWO = ("Theta",)
VERDICTS = ("consistent", "inconsistent", "inconclusive")


@dataclass
class Verdict:
    verdict: str
    kind: str
    predicted: float
    estimate: float
    lower: float  # one-sided (1 - alpha) lower bound
    upper: float
    margin: float
    reason: str

    def as_json(self) -> dict:
        return dict(self.__dict__)


def exponent_verdict(kind: str, estimate: float, se: float, df: int, predicted: float, margin: float = 0.1, alpha: float = 0.05) -> Verdict:
    """The verdict for one exponent (see the module docstring for the rules)."""
    t1 = stats.t.ppf(1 - alpha, df)
    t2 = stats.t.ppf(1 - alpha / 2, df)
    L, U = estimate - t1 * se, estimate + t1 * se
    lo2, hi2 = estimate - t2 * se, estimate + t2 * se
    if kind in UPPER:
        if U <= predicted + margin:
            v, why = "consistent", f"upper bound {U:.3f} <= {predicted:g} + {margin:g}"
        elif L > predicted + margin:
            v, why = "inconsistent", f"lower bound {L:.3f} > {predicted:g} + {margin:g}"
        else:
            v, why = "inconclusive", f"[{L:.3f}, {U:.3f}] straddles {predicted + margin:g}"
    elif kind in LOWER:
        if L >= predicted - margin:
            v, why = "consistent", f"lower bound {L:.3f} >= {predicted:g} - {margin:g}"
        elif U < predicted - margin:
            v, why = "inconsistent", f"upper bound {U:.3f} < {predicted:g} - {margin:g}"
        else:
            v, why = "inconclusive", f"[{L:.3f}, {U:.3f}] straddles {predicted - margin:g}"
    elif kind in TWO:
        if predicted - margin < L and U < predicted + margin:
            v, why = "consistent", f"[{L:.3f}, {U:.3f}] inside {predicted:g} +- {margin:g} (TOST)"
        elif lo2 > predicted + margin or hi2 < predicted - margin:
            v, why = "inconsistent", f"CI [{lo2:.3f}, {hi2:.3f}] outside {predicted:g} +- {margin:g}"
        else:
            v, why = "inconclusive", f"CI [{lo2:.3f}, {hi2:.3f}] overlaps the band {predicted:g} +- {margin:g} without lying in it"
    else:
        raise ValueError(f"no exponent test for bound kind {kind!r}")
    return Verdict(v, kind, predicted, estimate, L, U, margin, why)


def negative_control_exponent(kind: str, predicted: float, shift: float = 0.5) -> float:
    """A wrong, stronger prediction the data must reject."""
    return predicted - shift if kind in UPPER else predicted + shift


def combine(verdicts: list[str]) -> str:
    """Overall: inconsistent if any is, consistent if all are, inconclusive otherwise."""
    if "inconsistent" in verdicts:
        return "inconsistent"
    if verdicts and all(v == "consistent" for v in verdicts):
        return "consistent"
    return "inconclusive"
