"""One bound against one set of measurements: fit, drift, extrapolation, power, verdict.

:func:`analyze` is the single pipeline behind ``ibcheck compare``, ``ibcheck verdict`` (your own
CSV) and ``ibcheck calibrate`` (synthetic truth): the same rows in, the same
:class:`Analysis` out. Rows are dicts with a value per fitted variable (or its natural log
under ``log_<v>``), the measure under ``value`` (or ``log_value``) and optionally ``seed``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .drift import Drift, Extrapolated, correction_fit, drift_test, local_exponents
from .fit import Fit, fit_exponents, seed_rows
from .verdict import Judgement, Verdict, combine, judge_exponent


@dataclass
class Analysis:
    variables: list[str]
    kind: str
    predicted: dict[str, float]
    offsets: dict[str, tuple[float, float]]
    fit: Fit
    drift: dict[str, Drift]
    extrapolated: dict[str, Extrapolated]
    judgements: dict[str, Judgement]
    verdict: Verdict
    reason: str
    margin: float
    alpha: float
    cells_used: str = "all"  # "all" or "inside" (the hypotheses' window only)
    notes: list[str] = field(default_factory=list)
    lack_of_fit: dict = field(default_factory=dict)  # {"F", "p_value"}: is the scatter of cell means beyond seed noise?

    @property
    def power(self) -> dict:
        return {"has_power": all(j.has_power for j in self.judgements.values()),
                "detectable_deviation": {v: j.detectable_deviation for v, j in self.judgements.items()},
                "negative_control": {v: {"exponent_tested": j.negative_control.predicted, "verdict": j.negative_control.verdict}
                                     for v, j in self.judgements.items()}}

    def open_exponents(self) -> list[tuple[str, bool]]:
        """Exponents a growing sweep should keep working on, each with whether to extend the grid.

        Open: ``inconclusive`` ones (extend when the local exponent drifts, when the fit lacks fit,
        since seeds cannot help there, or when the estimate lies outside the prediction's band,
        since an ``inconsistent`` must then be checked at larger scale), and ``inconsistent`` ones that the largest-scale window
        alone does not yet confirm: an ``inconsistent`` stands as decisive only when the largest
        scales say so too, so the sweep goes on toward larger scale, where a pre-asymptotic
        exponent reveals its drift.
        """
        out = []
        lof_p, lof_F = self.lack_of_fit.get("p_value"), self.lack_of_fit.get("F")
        # model error dominates the spread (significant, or at least twice the seed noise): seeds cannot help
        lacking = (lof_p is not None and lof_p < 0.05) or (lof_F is not None and lof_F > 2.0)
        for v, j in self.judgements.items():
            if j.verdict == "inconclusive":
                leaning = self._outside_band(v)
                out.append((v, self.drift[v].significant or lacking or leaning))
            elif j.verdict == "inconsistent" and (j.last_window is None or j.last_window.verdict != "inconsistent"):
                out.append((v, True))
        return out

    def _outside_band(self, v: str) -> bool:
        """Does the point estimate lie on the wrong side of the prediction's margin?"""
        from .verdict import LOWER, UPPER

        est, pred = self.fit.estimate[v], self.predicted[v]
        if self.kind in UPPER:
            return est > pred + self.margin
        if self.kind in LOWER:
            return est < pred - self.margin
        return abs(est - pred) > self.margin

    def fits_json(self) -> list[dict]:
        f = self.fit
        out = []
        for v in self.variables:
            j = self.judgements[v]
            out.append({"variable": v, "estimate": f.estimate[v], "ci_low": f.ci[v][0], "ci_high": f.ci[v][1], "se": f.se[v],
                        "predicted": self.predicted[v], "bca_low": f.bca[v][0] if f.bca else None,
                        "bca_high": f.bca[v][1] if f.bca else None, "bca_note": f.bca_note, "log_offset": self.offsets.get(v, (0.0, 0.0))[0],
                        "verdict": j.verdict, "reason": j.reason, "plain_verdict": j.plain.verdict,
                        "extrapolated": self.extrapolated[v].estimate,
                        "extrapolated_ci": list(self.extrapolated[v].ci) if self.extrapolated[v].ci else None})
        return out

    def as_json(self) -> dict:
        return {
            "variables": self.variables, "kind": self.kind, "predicted": self.predicted, "verdict": self.verdict,
            "reason": self.reason, "cells_used": self.cells_used, "margin": self.margin, "alpha": self.alpha,
            "fits": self.fits_json(), "df": self.fit.df, "cells": self.fit.n_cells, "dropped_rows": self.fit.dropped,
            "curvature": self.fit.curvature, "interaction": self.fit.interaction,
            "drift": {v: d.as_json() for v, d in self.drift.items()},
            "extrapolated": {v: e.as_json() for v, e in self.extrapolated.items()},
            "lack_of_fit": self.lack_of_fit, "power": self.power, "judgements": {v: j.as_json() for v, j in self.judgements.items()}, "notes": self.notes,
        }


def analyze(rows: list[dict], variables: list[str], kind: str, predicted: dict[str, float],
            offsets: dict[str, tuple[float, float]] | None = None, margin: float = 0.1, alpha: float = 0.05,
            bootstrap: bool = True, cells_used: str = "all", extrapolate: bool = True) -> Analysis:
    """Fit the exponents of ``rows`` along ``variables`` and judge them against ``predicted``.

    ``alpha`` is the level of this look (smaller than 0.05 when a sequential design spends
    alpha over several looks).
    """
    offsets = dict(offsets or {})
    fit = fit_exponents(rows, variables, offsets, bootstrap=bootstrap)
    srows, _ = seed_rows(rows, variables, offsets)
    drifts, extra, judgements = {}, {}, {}
    for v in variables:
        local = local_exponents(srows, fit.cells, variables, v)
        drifts[v] = drift_test(fit.cells, variables, v, fit.estimate[v], predicted[v], local, alpha)
        extra[v] = correction_fit(fit.cells, variables, v) if extrapolate else Extrapolated(v, None, None, note="not computed")
        judgements[v] = judge_exponent(v, kind, fit.estimate[v], fit.se[v], fit.df, predicted[v], drifts[v], margin, alpha)
    verdict = combine([j.verdict for j in judgements.values()])
    reason = "; ".join(f"{v}: {j.reason}" for v, j in judgements.items())
    return Analysis(list(variables), kind, {v: predicted[v] for v in variables}, offsets, fit, drifts, extra, judgements,
                    verdict, reason, margin, alpha, cells_used, lack_of_fit=lack_of_fit(fit))


def lack_of_fit(fit: Fit) -> dict:
    """F test of the cell means' scatter about the fitted plane against the seed noise (pure error).

    A significant F says the spread of the fit is model error (curvature, interaction), which
    more seeds do not shrink; a larger grid does. None where no cell has two seeds.
    """
    from scipy import stats

    pe_df = sum(c["n_seeds"] - 1 for c in fit.cells)
    if pe_df < 1 or fit.df < 1:
        return {"F": None, "p_value": None}
    s2 = sum((c["n_seeds"] - 1) * (c["sd_log"] or 0.0) ** 2 for c in fit.cells) / pe_df
    rss = sum(c["residual"] ** 2 for c in fit.cells)
    expected = s2 * sum(1.0 / c["n_seeds"] for c in fit.cells) / len(fit.cells)
    if expected <= 0:
        return {"F": float("inf"), "p_value": 0.0}
    F = (rss / fit.df) / expected
    return {"F": float(F), "p_value": float(stats.f.sf(F, fit.df, pe_df))}
