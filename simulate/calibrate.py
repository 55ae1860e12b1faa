"""Calibration of the verdict engine: synthetic scaling data with known truth (``ibcheck calibrate``).

Each trial draws measurements ``y(d, k, seed)`` from a scenario whose asymptotic exponents are
known, and runs them through the same pipeline as ``ibcheck compare --budget``: the default
design (d in {64, 128, 256}, k in {2, 4, 8}, 2 seeds), :func:`simulate.analysis.analyze` at each
look, :func:`simulate.rounds.plan_round` between looks, and Pocock alpha spending over the
looks. The budget is counted in synthetic task costs (``cost(d, k) = 2 ms * (d/64) * (k/2)``),
so a trial takes milliseconds of real time and the budget arithmetic is the real one.

Scenarios (the claim is always ``Theta(d^(1/2) k^(-1/2))``, margin 0.1):

* ``exact``: a pure power law, log-normal seed noise (sd 0.15);
* ``corrected``: ``d^(1/2) (1 + 4 d^(-1/2)) k^(-1/2)``: the asymptotic exponent is the prediction,
  the local one starts near 0.33 at d = 64 (pre-asymptotic);
* ``polylog``: ``d^(1/2) ln(d)^2 k^(-1/2)`` with the log factor stated in the claim (a known offset);
* ``heavy_tails``: the exact law with Student-t (3 d.o.f.) seed noise in log space;
* ``wrong_d``: d exponent 0.75 (wrong by 0.25); ``wrong_k``: k exponent -0.25 (wrong by 0.25).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from ibcheck.theory.argtypes import require_float, require_int
from ibcheck.theory.errors import InputError

from .analysis import analyze
from .rounds import cell_key, plan_round
from .seeds import stream
from .sequential import spending

PREDICTED = {"d": 0.5, "k": -0.5}
GRID = {"d": [64, 128, 256], "k": [2, 4, 8]}
MAX_GRID = {"d": 8192, "k": 64}
SEEDS = 2
DEFAULT_BUDGET = 20.0  # synthetic seconds


def _exact(d, k, rng):
    return 3.0 * d ** 0.5 * k ** -0.5 * math.exp(0.15 * rng.standard_normal())


def _corrected(d, k, rng):
    return 3.0 * d ** 0.5 * (1 + 4.0 * d ** -0.5) * k ** -0.5 * math.exp(0.15 * rng.standard_normal())


def _polylog(d, k, rng):
    return 3.0 * d ** 0.5 * math.log(d) ** 2 * k ** -0.5 * math.exp(0.15 * rng.standard_normal())


def _heavy(d, k, rng):
    return 3.0 * d ** 0.5 * k ** -0.5 * math.exp(0.1 * rng.standard_t(3))


def _wrong_d(d, k, rng):
    return 3.0 * d ** 0.75 * k ** -0.5 * math.exp(0.15 * rng.standard_normal())


def _wrong_k(d, k, rng):
    return 3.0 * d ** 0.5 * k ** -0.25 * math.exp(0.15 * rng.standard_normal())


@dataclass(frozen=True)
class Scenario:
    name: str
    draw: object
    truth_holds: bool  # is the claim true (asymptotically)?
    offsets: dict = field(default_factory=dict)
    note: str = ""


SCENARIOS = {s.name: s for s in [
    Scenario("exact", _exact, True, note="pure power law, log-normal noise"),
    Scenario("corrected", _corrected, True, note="correction to scaling 1 + 4 d^-1/2 (pre-asymptotic)"),
    Scenario("polylog", _polylog, True, {"d": (2.0, 0.0)}, note="ln(d)^2 factor stated in the claim"),
    Scenario("heavy_tails", _heavy, True, note="Student-t(3) noise in log space"),
    Scenario("wrong_d", _wrong_d, False, note="d exponent 0.75 (wrong by 0.25)"),
    Scenario("wrong_k", _wrong_k, False, note="k exponent -0.25 (wrong by 0.25)"),
]}


def cost(cell: dict) -> float:
    return 0.002 * (float(cell["d"]) / 64) * (float(cell["k"]) / 2)


@dataclass
class Trial:
    scenario: str
    verdict: str
    looks: int
    spent: float
    estimate: dict
    reason: str


def run_trial(sc: Scenario, seed: int, budget: float = DEFAULT_BUDGET, rule: str = "pocock", kind: str = "Theta") -> Trial:
    """One synthetic comparison, rounds and looks included (see the module docstring)."""
    rng = np.random.default_rng(seed)
    cells = {cell_key(dict(zip(GRID, c))): SEEDS for c in itertools.product(*GRID.values())}
    values: dict = {}
    used, spent_alpha, looks = 0.0, 0.0, 0
    while True:
        for k, n in cells.items():
            for s in range(n):
                if (k, s) not in values:
                    c = dict(k)
                    values[(k, s)] = sc.draw(float(c["d"]), float(c["k"]), rng)
                    used += cost(c)
        rows = [{**dict(k), "seed": s, "value": v} for (k, s), v in values.items()]
        frac = min(used / budget, 1.0)
        level = max(spending(rule, frac) - spent_alpha, 0.0)
        an = analyze(rows, ["d", "k"], kind, PREDICTED, sc.offsets, alpha=level, bootstrap=False, extrapolate=False)
        looks += 1
        undecided = [(an.fit.cells, an.variables, v, ext) for v, ext in an.open_exponents()]
        plan = None
        if undecided and used < budget:
            left = budget - used
            plan = plan_round(undecided, cells, list(GRID), cost, min(left, max(used, 0.15 * budget)), MAX_GRID, SEEDS, False,
                              max_tasks=100_000)
            if plan.empty:
                plan = None
        if plan is None and undecided and frac < 1.0:
            # the final look spends what is left
            level = max(spending(rule, 1.0) - spent_alpha, 0.0)
            an = analyze(rows, ["d", "k"], kind, PREDICTED, sc.offsets, alpha=level, bootstrap=False, extrapolate=False)
        spent_alpha += level
        if plan is None:
            return Trial(sc.name, an.verdict, looks, used, dict(an.fit.estimate), an.reason)
        for k, n in plan.seeds.items():
            cells[k] += n
        for k, n in plan.new_cells.items():
            cells[k] = max(cells.get(k, 0), n)


def calibrate(trials: int = 100, budget: float = DEFAULT_BUDGET, scenarios: list[str] | None = None, seed: int = 0,
              progress: bool = False) -> dict:
    """Per scenario, the rate of each verdict over ``trials`` draws; the three targets checked."""
    require_int("trials", trials, 1)
    require_float("budget", budget, 0.0, strict=True)
    require_int("seed", seed, 0)
    names = scenarios or list(SCENARIOS)
    for n in names:
        if n not in SCENARIOS:
            raise InputError(f"scenario {n!r} is not one of {', '.join(SCENARIOS)}")
    bar = None
    if progress:
        import sys

        from tqdm import tqdm

        bar = tqdm(total=trials * len(names), desc="calibrate", unit="trial", disable=not sys.stderr.isatty())
    table = {}
    for i, name in enumerate(names):
        sc = SCENARIOS[name]
        res = []
        for t in range(trials):
            res.append(run_trial(sc, stream("calibration", seed, i, t), budget))
            if bar is not None:
                bar.update(1)
        counts = {v: sum(r.verdict == v for r in res) for v in ("consistent", "inconsistent", "inconclusive")}
        table[name] = {"truth": "true" if sc.truth_holds else "false", "note": sc.note, "trials": trials,
                       "rates": {v: c / trials for v, c in counts.items()}, "counts": counts,
                       "mean_looks": float(np.mean([r.looks for r in res])),
                       "mean_budget_used": float(np.mean([r.spent for r in res])),
                       "examples": [{"verdict": r.verdict, "reason": r.reason} for r in res[:2]]}
    if bar is not None:
        bar.close()
    true_names = [n for n in names if SCENARIOS[n].truth_holds]
    wrong_names = [n for n in names if not SCENARIOS[n].truth_holds]
    targets = {
        "false_inconsistent_max": max((table[n]["rates"]["inconsistent"] for n in true_names), default=None),
        "false_consistent_max": max((table[n]["rates"]["consistent"] for n in wrong_names), default=None),
        "exact_decided": (1 - table["exact"]["rates"]["inconclusive"]) if "exact" in table else None,
    }
    targets["met"] = {
        "true claim called inconsistent <= 5%": targets["false_inconsistent_max"] is None or targets["false_inconsistent_max"] <= 0.05,
        "wrong exponent called consistent <= 5%": targets["false_consistent_max"] is None or targets["false_consistent_max"] <= 0.05,
        "exact power laws decided >= 80%": targets["exact_decided"] is None or targets["exact_decided"] >= 0.80,
    }
    return {"trials": trials, "budget": budget, "spending": "pocock", "design": {"grid": GRID, "seeds": SEEDS, "max_grid": MAX_GRID,
            "cost": "2 ms * (d/64) * (k/2) per task"}, "claim": "Theta(d^(1/2) k^(-1/2)), margin 0.1", "scenarios": table, "targets": targets}


def calibration_markdown(res: dict) -> str:
    lines = [f"Calibration: {res['trials']} trials per scenario, claim {res['claim']}, default design {res['design']['grid']} with "
             f"{res['design']['seeds']} seeds, budget {res['budget']:g} synthetic s, {res['spending']} alpha spending.", "",
             "| scenario | truth | consistent | inconsistent | inconclusive | mean looks |", "|---|---|---|---|---|---|"]
    for name, r in res["scenarios"].items():
        rt = r["rates"]
        lines.append(f"| {name} ({r['note']}) | {r['truth']} | {rt['consistent']:.0%} | {rt['inconsistent']:.0%} | "
                     f"{rt['inconclusive']:.0%} | {r['mean_looks']:.1f} |")
    lines += ["", "Targets: " + "; ".join(f"{k}: {'met' if ok else '**not met**'}" for k, ok in res["targets"]["met"].items()) + "."]
    return "\n".join(lines) + "\n"
