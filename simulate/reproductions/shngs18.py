"""SHNGS18: logistic regression on separable data converges in direction to the hard-margin SVM,
at the rate 1/log t, while the loss falls as 1/t (SHNGS18.thm.direction)."""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from ibcheck.simulate.reproductions.criteria import Measured

COMPARES = ("SHNGS18.thm.direction",)


def measure(quick: bool, known: Mapping[str, Any] | None = None) -> Measured:
    from ibcheck.simulate.reproductions import comparison, comparison_rows  # heavy: scipy (loaded on first use)

    R = Measured("SHNGS18: logistic regression on separable data converges to the SVM direction")
    R.comparisons["compare"] = c = comparison(R, "SHNGS18.thm.direction", quick, known or {})
    comparison_rows(R, c, "{quantity}: exponent in t after the known log offset{reading}", "{kind}({expr})")
    R.criteria[:] = [_rename(cr) for cr in R.criteria]
    R.notes.append("Full comparison: compare/report.md (sweep rows in compare/results.parquet).")
    return R


def _rename(cr):
    """``direction_error: ...`` reads ``direction error to the SVM: ...`` (the source's words)."""
    for q, words in (("direction_error", "direction error to the SVM"), ("train_loss", "training loss")):
        if cr.quantity.startswith(q):
            return replace(cr, quantity=words + cr.quantity[len(q):])
    return cr
