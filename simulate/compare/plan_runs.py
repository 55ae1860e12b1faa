"""Named plans, run: does the design a plan names decide when it is swept from the scenario's own truth?

Takes one calibration trial's final analysis (inconclusive), its rows and cells, the scenario's draw and truth, and
the planner's settings; returns a :class:`PlanRun`: whether a plan was named (checked by simulation,
:mod:`simulate.verdict.plan_check`), and the verdict the engine gives on a fresh sweep of the named design drawn from
the scenario (not from the planner's two stories), with whether it is the right one.

``calibrate(plan_trials=N)`` reports, per scenario, how often the named plan decided, the right way, when it was run.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ibcheck.simulate.verdict.analysis import reanalyze
from ibcheck.simulate.verdict.planner import bound_plan, grid_work


@dataclass(frozen=True)
class PlanRun:
    """One inconclusive trial's plan: named or not, and the verdict its design got when run."""

    named: bool
    verdict: str | None  # the engine's verdict on the named design's fresh sweep (None: no plan named)
    right: bool | None
    design: str  # the plan's text, or why none was named


def run_named_plan(an, rows: list[dict], cells: dict, draw: Callable, truth_holds: bool, inside: Callable | None,
                   cost: Callable[[dict], float], caps: dict, rng: np.random.Generator, trials: int) -> PlanRun:
    """The plan for ``an`` (rows ``rows`` over ``cells``: cell key -> seeds), and, where one is named, the engine's
    verdict on the named design drawn by ``draw(d, k, rng)`` (only cells where ``inside(d, k)``, as the trial fits)."""
    seeds = max(cells.values())
    p = bound_plan(rows, an.function, ["d", "k"], seeds, grid_work([dict(k) for k in cells], cost), caps, analysis=an, trials=trials)
    ok = p.check.passed if p is not None and p.check is not None else None
    if ok is None:
        return PlanRun(False, None, None, p.text() if p is not None else "no plan could be computed")
    other = "k" if p.variable == "d" else "d"
    combos = sorted({float(r[other]) for r in rows})
    new = []
    for o in combos:
        for x in ok.values:
            c = {p.variable: float(x), other: o}
            if inside is not None and not inside(c["d"], c["k"]):
                continue
            for s in range(ok.seeds):
                y = draw(c["d"], c["k"], rng)
                new.append({**c, "seed": s, "value": y[1], "censor": y[0]} if isinstance(y, tuple) else {**c, "seed": s, "value": y})
    verdict = reanalyze(an, new).verdict
    return PlanRun(True, verdict, verdict == ("consistent" if truth_holds else "inconsistent"), p.text())
