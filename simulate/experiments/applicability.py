"""Does the claim's theorem apply where it was measured? Its hypotheses at every sweep cell.

This is the link between ``theory`` and ``simulate``: each (cell, seed) row is turned into a
point of the claim's variables (the cell, the experiment's fixed settings, and scalars it
measured, such as VYS22's ``max_ip``) and every hypothesis is decided there by the theory
layer's log-space evaluation (:func:`theory.evaluate.evaluate_hypothesis`). Symbolic constants
are 1 unless the user sets them. A cell is *inside* the window when every quantitative
hypothesis holds at every seed of it; qualitative hypotheses ("the model is L-homogeneous")
cannot be evaluated and are listed as assumed, never counted as held.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import sympy as sp

from ibcheck.simulate.experiments.base import Row
from ibcheck.theory.errors import InputError
from ibcheck.theory.evaluate import evaluate_hypothesis, make_point


@dataclass
class Applicability:
    """Per-cell truth of the hypotheses, and the counts summary.json reports."""

    claim: str
    constants: dict[str, float]
    cells: list[dict]  # {"cell": {...}, "inside": bool, "hypotheses": {H: True/False/None}, "seeds": n}
    hypotheses: dict[str, dict] = field(default_factory=dict)  # H -> {"text", "fails", "unknown", "qualitative", "skipped"}
    skipped: dict[str, str] = field(default_factory=dict)  # H -> why the experiment cannot evaluate it

    @property
    def total(self) -> int:
        return len(self.cells)

    @property
    def inside(self) -> int:
        return sum(c["inside"] for c in self.cells)

    def inside_keys(self) -> set[tuple]:
        return {tuple(sorted(c["cell"].items())) for c in self.cells if c["inside"]}

    def as_json(self) -> dict:
        return {"cells_total": self.total, "cells_inside": self.inside, "constants": self.constants,
                "constants_note": "symbolic constants not given are 1",
                "per_hypothesis": self.hypotheses, "skipped": self.skipped,
                "assumed": [h for h, v in self.hypotheses.items() if v["qualitative"]],
                "cells": self.cells}

    def describe(self) -> str:
        fails = ", ".join(f"{h} fails at {v['fails']}" for h, v in self.hypotheses.items() if v["fails"])
        return f"{self.inside}/{self.total} cells inside the hypotheses" + (f" ({fails})" if fails else "")


def _point_text(x) -> str:
    if isinstance(x, bool):
        return str(int(x))
    if isinstance(x, int):
        return str(x)
    return repr(float(x))


def applicability(claim, exp, rows: Sequence[Row], cell_vars: list[str], fixed: dict | None = None,
                  constants: dict[str, float] | None = None) -> Applicability:
    """Evaluate every hypothesis of ``claim`` at every (cell, seed) row of a sweep.

    ``rows`` are sweep rows (cell variables, ``seed``, ``status``, ``value``); failed rows are
    skipped (they have no measured scalars). ``exp.claim_values(cell, value)`` gives the
    claim's variables at a row.
    """
    constants = dict(constants or {})
    hyps = list(claim.hypotheses)
    skipped = dict(getattr(exp, "skip_hypotheses", {}) or {})
    per = {h.name: {"text": h.text, "formula": None if h.expr is None else sp.sstr(h.expr), "fails": 0, "unknown": 0,
                    "qualitative": h.qualitative, "skipped": h.name in skipped} for h in hyps}
    by_cell: dict[tuple, dict] = {}
    for r in rows:
        if r.status not in ("ok", "diverged"):
            continue
        cell = r.at(cell_vars)
        key = tuple(sorted(cell.items()))
        entry = by_cell.setdefault(key, {"cell": cell, "hypotheses": {h.name: True for h in hyps if not h.qualitative and h.name not in skipped},
                                         "seeds": 0})
        entry["seeds"] += 1
        value = r.value if isinstance(r.value, dict) else {}
        raw = {name: _point_text(x) for name, x in exp.claim_values({**(fixed or {}), **cell}, value).items()
               if name in claim.variable_names and x is not None}
        raw.update({c: _point_text(x) for c, x in constants.items()})
        try:
            point = make_point(claim, raw)
        except InputError:
            point = None
        for h in hyps:
            if h.qualitative or h.name in skipped:
                continue
            hv = evaluate_hypothesis(h, point) if point is not None else None
            holds = None if hv is None or hv.missing else hv.holds
            prev = entry["hypotheses"][h.name]
            entry["hypotheses"][h.name] = None if prev is None or holds is None else (prev and holds)
    cells = []
    for key, e in sorted(by_cell.items(), key=lambda kv: [float(x) for _, x in kv[0]]):
        e["inside"] = all(v is True for v in e["hypotheses"].values())
        for h, v in e["hypotheses"].items():
            per[h]["fails"] += v is False
            per[h]["unknown"] += v is None
        cells.append(e)
    return Applicability(claim.id, constants, cells, per, skipped)
