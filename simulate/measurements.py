"""Measurements: the rows a verdict is drawn from, from a sweep store or from a user's CSV.

Both sources give the same object, so ``ibcheck verdict`` (a CSV) and ``ibcheck compare`` (a
sweep) take the same path through the analysis, the applicability of the hypotheses and the
report. A ``Measurements`` stands where an experiment stands for those stages: it says what was
measured (``description``), whether each seed is a run along a trajectory, and which of the
claim's variables a row carries.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Measurements:
    """Rows of measurements (``variables`` per row, ``value``, optional ``censor``, ``seed`` and ``run``)."""

    description: str
    variables: tuple[str, ...]
    rows: tuple[dict, ...]
    trajectory: bool = False
    skip_hypotheses: dict = field(default_factory=dict)

    def claim_values(self, cell: dict, value) -> dict:
        """The claim's variables at one row: the row's own columns (a CSV carries every setting it has)."""
        return dict(cell)

    def fit_rows(self, fit_variables: list[str]) -> list[dict]:
        return [{**{v: r[v] for v in fit_variables}, "value": r["value"], "censor": r.get("censor"), "seed": r.get("seed"),
                 "run": r.get("run", r.get("seed"))} for r in self.rows]
