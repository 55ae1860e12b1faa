"""Claims that bound a quantity with a probability over the sample, measured on another claim's sweep.

Takes a base comparison (its stored rows: one per (cell, seed) sample) and returns a :class:`ProbabilityComparison`:
the claim's hypotheses at every cell (its own, evaluated by the theory layer), and the binomial test of
:mod:`simulate.verdict.probability` on the samples inside them. FVBS23.thm.3_1 (every KKT point of (P) has test
error <= eps with probability >= 1 - delta) is measured on FVBS23.thm.4_2's samples: the same certified KKT points,
each distinct point's errors counted on 2000 fresh points of its own stream. Nothing is written until ``save``.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from ibcheck.simulate.experiments.applicability import Applicability, applicability
from ibcheck.simulate.verdict.probability import ProbabilityTest, probability_test
from ibcheck.theory import get_claim
from ibcheck.theory.atomic import write_text
from ibcheck.theory.errors import InputError
from ibcheck.theory.outdir import inside, slug
from ibcheck.theory.result import JsonText, markdown_table


@dataclass(frozen=True)
class ProbabilityClaim:
    """A claim measured on ``base``'s sweep: its bounded quantity and the row keys holding the count and the points."""

    claim: str
    base: str
    quantity: str
    count: str
    points: str


PROBABILITY_CLAIMS = {"FVBS23.thm.3_1": ProbabilityClaim("FVBS23.thm.3_1", "FVBS23.thm.4_2", "test_error", "test_error_count", "test_points")}


@dataclass(frozen=True)
class ProbabilityComparison(JsonText):
    """The verdict of a probability claim on a base sweep's samples inside the claim's hypotheses."""

    claim: str
    base: str
    test: ProbabilityTest
    applicability: Applicability
    measured: int  # samples with a count (the others hold no certified KKT point)
    total: int  # samples of the base sweep
    base_result: object = field(default=None, repr=False, compare=False)  # the base's ComparisonResult
    base_link: str = ""  # where the base's report is, relative to this one's (the index's layout by default)

    @property
    def verdict(self) -> str:
        return self.test.verdict

    def as_json(self) -> dict:
        return {"claim": self.claim, "measured_on": self.base, "verdict": self.verdict, "reason": self.test.reason,
                "samples_measured": self.measured, "samples_total": self.total,
                "cells_inside": self.applicability.inside, "cells_total": self.applicability.total,
                "applicability": self.applicability.as_json(), "test": self.test.as_json()}

    def markdown(self) -> str:
        t = self.test
        rows = [{"cell": ", ".join(f"{k}={v:g}" for k, v in s.cell.items()), "seed": s.seed, "errors / fresh points": f"{s.errors}/{s.points}",
                 "rate": f"{s.errors / s.points:.4f}", "bounds": f"[{s.lower:.4f}, {s.upper:.4f}]", "status": s.status} for s in t.samples]
        return "\n".join([
            f"# {self.claim}: {t.quantity} <= eps with probability >= 1 - delta", "",
            f"**Verdict: {self.verdict}.** {t.reason}.", "",
            f"Measured on the samples of [{self.base}]({self.base_link or '../' + slug(self.base) + '/report.md'}) ({self.measured} of {self.total} samples "
            f"hold certified KKT points; {self.applicability.inside}/{self.applicability.total} cells inside this claim's own "
            f"hypotheses, and only those enter). Per sample, the worst distinct certified KKT point's errors on fresh points; each "
            f"sample is classified with one-sided Clopper-Pearson bounds at level alpha/(2S) (Bonferroni over the S samples), "
            f"and the samples that exceed eps = {t.eps:g} are tested against Binomial(S, delta = {t.delta:g}) at alpha/2 = "
            f"{t.alpha / 2:g}: p = {t.p_value:.3g}. Upper bound on the rate of samples exceeding (unresolved counted as "
            f"exceeding): {t.rate_upper:.3f}; {t.samples_needed} samples with none exceeding would bound it below delta.", "",
            markdown_table(rows), ""])

    def save(self, out: str) -> dict[str, str]:
        """Write summary.json and report.md under ``out`` (inside it, nothing else)."""
        os.makedirs(out, exist_ok=True)
        paths = {"summary": inside(out, "summary.json"), "report": inside(out, "report.md")}
        write_text(paths["summary"], json.dumps(self.as_json(), indent=2, default=float) + "\n")
        write_text(paths["report"], self.markdown())
        return paths


def probability_comparison(claim_id: str, base) -> ProbabilityComparison:
    """The test of ``claim_id`` (one of PROBABILITY_CLAIMS) on the rows of ``base`` (a ComparisonResult of its base)."""
    spec = PROBABILITY_CLAIMS.get(claim_id)
    if spec is None:
        raise InputError(f"{claim_id} is not measured on another claim's sweep; such claims: {', '.join(PROBABILITY_CLAIMS)}")
    claim = get_claim(claim_id)
    bound = next(b for b in claim.bounds if b.quantity == spec.quantity)
    exp, rec = base.experiment, base.record
    cell_vars = list(rec.grid)
    rows = [r for r in base.rows if r.status == "ok" and isinstance(r.value, dict) and r.value.get(spec.count) is not None]
    app = applicability(claim, exp, rows, cell_vars, dict(rec.fixed))
    keys = app.inside_keys()
    obs, params = [], set()
    for r in rows:
        cell = r.at(cell_vars)
        if tuple(sorted(cell.items())) not in keys:
            continue
        vals = exp.claim_values({**dict(rec.fixed), **cell}, r.value)
        params.add((float(vals[str(bound.expr)]), float(vals["delta"])))
        obs.append((cell, r.seed, int(r.value[spec.count]), int(r.value[spec.points])))
    obs.sort(key=lambda o: (tuple(float(o[0][v]) for v in cell_vars), o[1]))
    if len(params) > 1:
        raise InputError(f"{claim_id}: the samples hold different (eps, delta) {sorted(params)}: one test per setting")
    eps, delta = params.pop() if params else (float("nan"), float("nan"))
    return ProbabilityComparison(claim_id, spec.base, probability_test(obs, spec.quantity, eps, delta), app, len(rows), len(base.rows),
                                 base)
