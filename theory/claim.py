"""A claim as users see it: :class:`Claim` is the data of :class:`~ibcheck.theory.statement.ClaimStatement`
with its display (a table, LaTeX in a notebook, ``to_json()`` through :func:`~ibcheck.theory.describe.describe`).

The readers of a claim (evaluation, description, windows) take a :class:`ClaimStatement`, so this
module may import them without a cycle.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import sympy as sp

from .describe import describe, latex
from .result import Result
from .statement import BOUND_KINDS, KINDS, STATUSES, Bound, ClaimStatement, ClaimStatus, Hypothesis, tex

__all__ = ["BOUND_KINDS", "KINDS", "STATUSES", "Bound", "Claim", "ClaimStatement", "ClaimStatus", "Hypothesis", "tex"]


@dataclass(frozen=True)
class Claim(ClaimStatement, Result):
    """One result of THEORY.md, keyed by its id (e.g. ``FVBS23.thm.4_2``).

    In a notebook it shows its hypotheses and bounds as a table, and as LaTeX (``_repr_latex_``)."""

    name: ClassVar[str] = "claim"

    def as_json(self) -> dict:
        return describe(self)

    def heading(self) -> str:
        return f"{self.id}: {self.title} ({self.status}{'; ' + '; '.join(self.flags) if self.flags else ''})"

    def table(self) -> list[dict]:
        rows = [{"part": h.name, "statement": sp.sstr(h.expr) if h.expr is not None else h.text + " (qualitative)"} for h in self.hypotheses]
        return rows + [{"part": "=> " + b.quantity + (f" [{b.reading}]" if b.reading else ""), "statement": f"{b.kind}({sp.sstr(b.expr)})"}
                       for b in self.bounds]

    def _repr_latex_(self) -> str:
        body = latex(self)
        return "$$" + body[body.index(r"\begin{align*}"):body.index(r"\end{align*}") + len(r"\end{align*}")] + "$$"
