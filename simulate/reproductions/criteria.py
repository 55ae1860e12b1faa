"""The criteria of a reproduction, stated declaratively: what was measured, what the source says,
and the rule that compares them. The verdict is computed from the rule, never typed in.

Rules: :class:`Within` (a range, either end open: ``AtMost``, ``AtLeast``), :class:`Holds` (a measured
truth value), :class:`Judged` (the verdict of a comparison with its own statistics) and
:class:`Reported` (no rule: the number is shown, the verdict is inconclusive).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ibcheck.simulate.verdict.rules import Verdict


def _from(ok: bool | None) -> Verdict:
    return "inconclusive" if ok is None else ("consistent" if ok else "inconsistent")


def _number(x) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else None


@dataclass(frozen=True)
class Within:
    """``lo <= measured <= hi``; an end left as None is open; ``strict`` makes the lower end ``>``."""

    lo: float | None = None
    hi: float | None = None
    strict: bool = False

    def judge(self, measured) -> Verdict:
        x = _number(measured)
        if x is None:
            return "inconclusive"
        return _from((self.lo is None or (x > self.lo if self.strict else x >= self.lo)) and (self.hi is None or x <= self.hi))

    def text(self) -> str:
        if self.lo is not None and self.hi is not None:
            return f"in [{self.lo:g}, {self.hi:g}]"
        return f"<= {self.hi:g}" if self.hi is not None else f"{'>' if self.strict else '>='} {self.lo:g}"


def AtMost(bound: float) -> Within:
    return Within(hi=bound)


def AtLeast(bound: float, strict: bool = False) -> Within:
    return Within(lo=bound, strict=strict)


@dataclass(frozen=True)
class Holds:
    """The measured value is a truth value computed by the reproduction (e.g. "the margin is monotone")."""

    def judge(self, measured) -> Verdict:
        return _from(bool(measured)) if isinstance(measured, (bool, int)) else "inconclusive"

    def text(self) -> str:
        return "holds"


@dataclass(frozen=True)
class Judged:
    """The verdict of a comparison (fit, CI, drift and power rules of :mod:`simulate.verdict.rules`)."""

    verdict: Verdict
    by: str = "the exponent comparison"

    def judge(self, measured) -> Verdict:
        return self.verdict

    def text(self) -> str:
        return f"verdict of {self.by}"


@dataclass(frozen=True)
class Reported:
    """No rule: the source gives no number to compare with, or the comparison is not meaningful here."""

    def judge(self, measured) -> Verdict:
        return "inconclusive"

    def text(self) -> str:
        return "reported"


Rule = Within | Holds | Judged | Reported


@dataclass(frozen=True)
class Criterion:
    """One row: ``quantity``, the source's value or claim, ibcheck's measurement, the rule, a note."""

    quantity: str
    source_value: str | None
    measured: Any
    rule: Rule = field(default_factory=Reported)
    note: str = ""

    @property
    def verdict(self) -> Verdict:
        return self.rule.judge(self.measured)

    def as_json(self) -> dict:
        return {"quantity": self.quantity, "source_value": self.source_value, "measured": self.measured, "rule": self.rule.text(),
                "verdict": self.verdict, "note": self.note}


@dataclass
class Measured:
    """What one reproduction module returns: its criteria, figures (matplotlib), notes, and the
    comparisons it ran (saved into their own subdirectories)."""

    title: str
    params: dict = field(default_factory=dict)
    criteria: list[Criterion] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    comparisons: dict[str, Any] = field(default_factory=dict)

    def add(self, quantity: str, source_value: str | None, measured, rule: Rule | None = None, note: str = "") -> None:
        self.criteria.append(Criterion(quantity, source_value, measured, rule or Reported(), note))
