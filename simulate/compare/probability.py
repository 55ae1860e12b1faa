"""Claims that bound a quantity with a probability over the sample, measured on another claim's sweep.

Takes a base comparison (its stored rows: one per (cell, seed) sample) and returns a :class:`ProbabilityComparison`:
the claim's hypotheses at every cell (its own, evaluated by the theory layer), and the binomial test of
:mod:`simulate.verdict.probability` on the samples inside them. FVBS23.thm.3_1 (every KKT point of (P) has test
error <= eps with probability >= 1 - delta) is measured on FVBS23.thm.4_2's samples: the same certified KKT points,
each distinct point's errors counted on 2000 fresh points of its own stream. Nothing is written until ``save``.

Where the base's samples inside the claim's hypotheses are fewer than the binomial test needs to decide (0 of S
exceeding bounds the rate below delta only from ``samples_needed`` on), :func:`extension` names the cheapest slice of
inside cells (by the experiment's declared cost) and the seeds per cell that make up the difference; the orchestrator
(the suite, or :func:`ibcheck.compare_probability`) runs those new seeds with :func:`extra_rows`, the base's design
unchanged, in a store of its own (so that the base's rerun never reads them), and :func:`probability_comparison` adds
them (a (cell, seed) already in the base is the same sample and counted once). The pooled count then bounds the rate
over the sampled mix of cells, which the reason states.
"""
from __future__ import annotations

import itertools
import json
import math
import os
from dataclasses import dataclass, field

from ibcheck.simulate.experiments.applicability import Applicability, applicability
from ibcheck.simulate.experiments.base import Row
from ibcheck.simulate.experiments.window import design_cell
from ibcheck.simulate.sweep.executor import run_sweep
from ibcheck.simulate.sweep.measurements import readable_rows
from ibcheck.simulate.sweep.store import SweepStore
from ibcheck.simulate.sweep.tasks import Task, task_key
from ibcheck.simulate.verdict.kkt import kkt_cells
from ibcheck.simulate.verdict.probability import ProbabilityTest, probability_test, samples_needed
from ibcheck.theory import get_claim
from ibcheck.theory.atomic import write_text
from ibcheck.theory.errors import InputError
from ibcheck.theory.outdir import inside, slug
from ibcheck.theory.result import JsonText, markdown_table, report_markdown


@dataclass(frozen=True)
class ProbabilityClaim:
    """A claim measured on ``base``'s sweep: its bounded quantity and the row keys holding the count and the points."""

    claim: str
    base: str
    quantity: str
    count: str
    points: str


@dataclass(frozen=True)
class Extension:
    """Extra samples for a probability test: ``grid`` (one slice of the base's inside cells, the cheapest per sample)
    swept with ``seeds`` seeds per cell, of which seeds ``first_new`` and up are new (the lower ones are the base's)."""

    grid: dict
    seeds: int
    first_new: int
    new_samples: int
    needed: int  # the samples the test needs (none exceeding) to bound the rate below delta
    have: int  # the base's samples inside the hypotheses
    work: float  # the new samples' declared work (reference seconds, the experiment's cost model)

    def describe(self) -> str:
        cells = ", ".join(f"{v} = {', '.join(f'{x:g}' for x in xs)}" for v, xs in self.grid.items())
        return (f"{self.have} samples of the base sweep and {self.new_samples} added at its cheapest slice ({cells}; seeds "
                f"{self.first_new}-{self.seeds - 1}), since {self.needed} are needed to bound the rate below delta")


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
    extension: Extension | None = None  # the extra samples swept for this test (None: the base's alone)
    base_result: object = field(default=None, repr=False, compare=False)  # the base's ComparisonResult
    extra_kkt: tuple = ()  # the KKT evidence (kkt_cells) of the extension's samples: the counting rule judges them too
    base_link: str = ""  # where the base's report is, relative to this one's (the index's layout by default)

    @property
    def verdict(self) -> str:
        return self.test.verdict

    @property
    def reason(self) -> str:
        """The test's reason, with the samples' mix where seeds were added (the pooled rate is over that mix)."""
        if self.extension is None:
            return self.test.reason
        return f"{self.test.reason} ({self.extension.describe()}; the bound is on the rate over this mix of cells, not each cell's own)"

    def as_json(self) -> dict:
        return {"claim": self.claim, "measured_on": self.base, "verdict": self.verdict, "reason": self.reason,
                "samples_measured": self.measured, "samples_total": self.total,
                "cells_inside": self.applicability.inside, "cells_total": self.applicability.total,
                "extension": None if self.extension is None else {"grid": self.extension.grid, "seeds": self.extension.seeds,
                                                                  "first_new_seed": self.extension.first_new,
                                                                  "new_samples": self.extension.new_samples,
                                                                  "text": self.extension.describe()},
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
            f"exceeding): {t.rate_upper:.3f}; {t.samples_needed} samples with none exceeding would bound it below delta."
            + (f" The samples: {self.extension.describe()}; the pooled count bounds the rate over this mix of cells, not "
               f"each cell's own." if self.extension else ""), "",
            markdown_table(rows), ""])

    def save(self, out: str) -> dict[str, str]:
        """Write summary.json and report.md under ``out`` (inside it, nothing else)."""
        os.makedirs(out, exist_ok=True)
        paths = {"summary": inside(out, "summary.json"), "report": inside(out, "report.md")}
        write_text(paths["summary"], json.dumps(self.as_json(), indent=2, default=float) + "\n")
        write_text(paths["report"], report_markdown(self.markdown()))
        return paths


def _spec(claim_id: str) -> ProbabilityClaim:
    spec = PROBABILITY_CLAIMS.get(claim_id)
    if spec is None:
        raise InputError(f"{claim_id} is not measured on another claim's sweep; such claims: {', '.join(PROBABILITY_CLAIMS)}")
    return spec


def _observations(claim_id: str, base, rows: list):
    """The samples of ``rows`` (the base experiment's) inside ``claim_id``'s hypotheses: the applicability, the
    observations (cell, seed, count, points) sorted by cell and seed, and the (eps, delta) they hold."""
    spec = _spec(claim_id)
    claim = get_claim(claim_id)
    bound = next(b for b in claim.bounds if b.quantity == spec.quantity)
    exp, rec = base.experiment, base.record
    cell_vars = list(rec.grid)
    rows = [r for r in rows if r.status == "ok" and isinstance(r.value, dict) and r.value.get(spec.count) is not None]
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
    return app, obs, len(rows), params


def extension(claim_id: str, base, alpha: float = 0.05) -> Extension | None:
    """The extra samples ``claim_id``'s test needs beyond ``base``'s (None: enough, or no inside cell to extend).

    The slice is one value of one swept variable (so that the grid stays a product), among the base's inside cells,
    with the smallest declared cost per sample (ties: more cells); its seeds go up until the inside samples reach
    ``samples_needed(delta, alpha / 2)``."""
    _, obs, _, params = _observations(claim_id, base, list(base.rows))
    if not params:
        return None
    _, delta = next(iter(params))
    need = samples_needed(delta, alpha / 2)
    if len(obs) >= need:
        return None
    exp, rec = base.experiment, base.record
    claim = base.claim
    cells = {tuple(sorted(o[0].items())): dict(o[0]) for o in obs}
    cell_vars = list(rec.grid)
    seeds_at = {k: 1 + max(r.seed for r in base.rows if tuple(sorted(r.at(cell_vars).items())) == k) for k in cells}  # any status
    cost = {k: design_cell(exp, claim, c).cost for k, c in cells.items()}
    best: tuple[float, str, list] | None = None
    for v in rec.grid:
        for x in sorted({c[v] for c in cells.values()}):
            ks = sorted((k for k, c in cells.items() if c[v] == x), key=lambda k: tuple(float(a[1]) for a in k))
            per = sum(cost[k] for k in ks) / len(ks)
            if best is None or (per, -len(ks)) < (best[0], -len(best[2])):
                best = (per, v, ks)
    if best is None:
        return None
    ks = best[2]
    first = max(seeds_at[k] for k in ks)  # every cell of the slice runs seeds first, first + 1, ...
    per_cell = math.ceil((need - len(obs)) / len(ks))
    grid = {u: sorted({cells[k][u] for k in ks}) for u in rec.grid}
    return Extension(grid, first + per_cell, first, per_cell * len(ks), need, len(obs), per_cell * sum(cost[k] for k in ks))


def extra_rows(base, ext: Extension, store: str, workers: int = 1, progress: bool = False) -> tuple[Row, ...]:
    """The rows of ``ext``'s new seeds under ``base``'s own design (experiment, fixed values, code version), run in the
    SQLite file ``store`` (resumable; never the base's, whose rerun would read them); no fit."""
    exp, rec = base.experiment, base.record
    fixed, version = dict(rec.fixed), rec.code_version
    names = list(ext.grid)
    tasks = []
    for combo in itertools.product(*(ext.grid[v] for v in names)):
        cell = dict(zip(names, combo))
        tasks += [Task(task_key(exp.claim, exp.name, cell, s, fixed, version), exp.claim, exp.name, cell, s, dict(fixed))
                  for s in range(ext.first_new, ext.seeds)]
    with SweepStore(store) as st:
        run_sweep(tasks, st.connection, version, workers=workers, progress=progress, experiment=exp)
        return tuple(readable_rows(st.rows([t.key for t in tasks]), exp))


def probability_comparison(claim_id: str, base, extra: tuple[Row, ...] | None = None, ext: Extension | None = None) -> ProbabilityComparison:
    """The test of ``claim_id`` (one of PROBABILITY_CLAIMS) on the rows of ``base`` (a ComparisonResult of its base),
    with ``extra`` (the rows :func:`extra_rows` swept for ``ext``), a (cell, seed) of the base counted once."""
    spec = _spec(claim_id)
    rows = list(base.rows)
    if extra is not None:
        cell_vars = list(base.record.grid)
        seen = {(tuple(sorted(r.at(cell_vars).items())), r.seed) for r in rows}
        rows += [r for r in extra if (tuple(sorted(r.at(cell_vars).items())), r.seed) not in seen]
    app, obs, measured, params = _observations(claim_id, base, rows)
    eps, delta = params.pop() if params else (float("nan"), float("nan"))
    return ProbabilityComparison(claim_id, spec.base, probability_test(obs, spec.quantity, eps, delta), app, measured, len(rows),
                                 ext if extra is not None else None, base,
                                 extra_kkt=kkt_cells(list(extra), list(base.record.grid)) if extra else ())


def extended_comparison(claim_id: str, base, store: str, workers: int = 1, progress: bool = False) -> ProbabilityComparison:
    """:func:`probability_comparison` on ``base`` with the samples :func:`extension` asks for, swept into ``store`` (a
    SQLite file of their own; untouched when the base's samples suffice)."""
    ext = extension(claim_id, base)
    if ext is None:
        return probability_comparison(claim_id, base)
    return probability_comparison(claim_id, base, extra_rows(base, ext, store, workers, progress), ext)
