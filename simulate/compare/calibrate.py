"""Calibration of the verdict engine: synthetic scaling data with known truth (``ibcheck calibrate``).

Each trial draws measurements ``y(d, k, seed)`` from a scenario whose asymptotic exponents are
known, and runs them through the same pipeline as ``ibcheck compare --budget``: the default
design (d in {64, 128, 256}, k in {2, 4, 8}, 2 seeds), :func:`simulate.verdict.analysis.analyze` at each
look, :func:`simulate.verdict.rounds.plan_round` between looks, and Pocock alpha spending over the
looks. The budget is counted in synthetic task costs (``cost(d, k) = 2 ms * (d/64) * (k/2)``),
so a trial takes milliseconds of real time and the budget arithmetic is the real one.

Scenarios (the claim is always ``Theta(d^(1/2) k^(-1/2))``, margin 0.1):

* ``exact``: a pure power law, log-normal seed noise (sd 0.15);
* ``corrected``: ``d^(1/2) (1 + 4 d^(-1/2)) k^(-1/2)``: the asymptotic exponent is the prediction,
  the local one starts near 0.33 at d = 64 (pre-asymptotic);
* ``polylog``: ``d^(1/2) ln(d)^2 k^(-1/2)`` with the log factor stated in the claim (a known offset);
* ``noisy``: the exact law with four times the noise (sd 0.6), decided only at later looks;
* ``heavy_tails``: the exact law with Student-t (3 d.o.f.) seed noise in log space;
* ``wrong_d``: d exponent 0.75 (wrong by 0.25); ``wrong_k``: k exponent -0.25 (wrong by 0.25).
"""
from __future__ import annotations

import itertools
import math
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar

import numpy as np
from tqdm import tqdm

from ibcheck.simulate.substrate.seeds import stream
from ibcheck.simulate.sweep.tasks import cell_key, data_hash
from ibcheck.simulate.verdict.analysis import analyze
from ibcheck.simulate.verdict.sequential import SequentialPolicy
from ibcheck.theory.argtypes import require_float, require_int
from ibcheck.theory.atomic import write_text
from ibcheck.theory.errors import InputError
from ibcheck.theory.result import Result, plain

PREDICTED = {"d": 0.5, "k": -0.5}
GRID = {"d": [64, 128, 256], "k": [2, 4, 8]}
MAX_GRID = {"d": 8192, "k": 64}
SEEDS = 2
TRAJECTORY_RUNS = 3
DEFAULT_BUDGET = 20.0  # synthetic seconds


def _exact(d, k, rng):
    return 3.0 * d ** 0.5 * k ** -0.5 * math.exp(0.15 * rng.standard_normal())


def _noisy(d, k, rng):
    return 3.0 * d ** 0.5 * k ** -0.5 * math.exp(0.6 * rng.standard_normal())


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


def _censored(d, k, rng):
    """The exact law, reported as AtLeast(cap) above a search limit that grows with the cell (as a radius
    search's limit does) and censors about a fifth of every cell's seeds."""
    y, cap = _exact(d, k, rng), 3.0 * d ** 0.5 * k ** -0.5 * math.exp(0.13)
    return ("at_least", cap) if y > cap else y


# trajectories: one run is a series over t = 1e2 ... 1e40 with its own level and AR(1) noise along the run
TIMES = tuple(10.0 ** e for e in range(2, 42, 2))


def _series(f, rng) -> list[float]:
    level, e, out = 0.3 * rng.standard_normal(), 0.0, []
    for t in TIMES:
        e = 0.9 * e + 0.03 * rng.standard_normal()
        out.append(f(t) * math.exp(level + e))
    return out


@dataclass(frozen=True)
class Scenario:
    name: str
    draw: Callable[..., Any]  # (d, k, rng) -> value, or (rng) -> a trajectory
    truth_holds: bool  # is the claim true (asymptotically)?
    offsets: dict = field(default_factory=dict)
    note: str = ""
    trajectory: bool = False
    kind: str = "Theta"
    predicted: dict = field(default_factory=lambda: dict(PREDICTED))


LOG_CLAIM = {"t": 0.0, "log(t)": -1.0}
SCENARIOS = {s.name: s for s in [
    Scenario("exact", _exact, True, note="pure power law, log-normal noise"),
    Scenario("noisy", _noisy, True, note="pure power law, log-normal noise sd 0.6 (needs several looks)"),
    Scenario("corrected", _corrected, True, note="correction to scaling 1 + 4 d^-1/2 (pre-asymptotic)"),
    Scenario("polylog", _polylog, True, {"d": (2.0, 0.0)}, note="ln(d)^2 factor stated in the claim, taken as a known offset by request"),
    Scenario("heavy_tails", _heavy, True, note="Student-t(3) noise in log space"),
    Scenario("censored", _censored, True, note="exact law, about 20% of each cell reported as AtLeast(search limit)"),
    Scenario("wrong_d", _wrong_d, False, note="d exponent 0.75 (wrong by 0.25)"),
    Scenario("wrong_k", _wrong_k, False, note="k exponent -0.25 (wrong by 0.25)"),
    Scenario("log_rate", lambda rng: _series(lambda t: 1 / math.log(t), rng), True, trajectory=True, kind="O", predicted=LOG_CLAIM,
             note="trajectory 1/log t, claim O(1/log t): runs with their own level and AR(1) noise"),
    Scenario("log_constant", lambda rng: _series(lambda t: 0.3, rng), False, trajectory=True, kind="O", predicted=LOG_CLAIM,
             note="trajectory constant in t, claim O(1/log t) (the log exponent is wrong by 1)"),
    Scenario("log_wrong_half", lambda rng: _series(lambda t: math.log(t) ** -0.5, rng), False, trajectory=True, kind="Theta",
             predicted=LOG_CLAIM, note="trajectory (log t)^-1/2, claim Theta(1/log t) (log exponent wrong by 0.5)"),
]}


def cost(cell: dict) -> float:
    if "run" in cell:
        return 0.05  # one synthetic run
    return 0.002 * (float(cell["d"]) / 64) * (float(cell["k"]) / 2)


@dataclass
class Trial:
    scenario: str
    verdict: str
    looks: int
    spent: float
    estimate: dict
    reason: str


def _rows(sc: Scenario, values: dict) -> list[dict]:
    rows = []
    for (k, s), v in values.items():
        if sc.trajectory:
            rows += [{"t": t, "value": y, "seed": s, "run": s} for t, y in zip(TIMES, v)]
        elif isinstance(v, tuple):
            rows.append({**dict(k), "seed": s, "value": v[1], "censor": v[0]})
        else:
            rows.append({**dict(k), "seed": s, "value": v})
    return rows


def run_trial(sc: Scenario, seed: int, budget: float = DEFAULT_BUDGET, rule: str = "pocock", kind: str | None = None) -> Trial:
    """One synthetic comparison, rounds and looks included (see the module docstring): the same
    analysis, round planner and sequential policy (exact boundaries) as ``compare --budget``."""
    rng = np.random.default_rng(seed)
    kind = kind or sc.kind
    if sc.trajectory:
        cells = {cell_key({"run": 0}): TRAJECTORY_RUNS}
        variables, cell_vars = ["t"], ["run"]
    else:
        cells = {cell_key(dict(zip(GRID, c))): SEEDS for c in itertools.product(*GRID.values())}
        variables, cell_vars = ["d", "k"], list(GRID)
    policy = SequentialPolicy(rule)
    values: dict = {}
    past: list[dict] = []
    used = 0.0
    while True:
        for k, n in cells.items():
            for s in range(n):
                if (k, s) not in values:
                    c = dict(k)
                    values[(k, s)] = sc.draw(rng) if sc.trajectory else sc.draw(float(c["d"]), float(c["k"]), rng)
                    used += cost(c)
        rows = _rows(sc, values)
        keys = [f"{k}/{s}" for k, s in values]
        look = policy.level(past, keys, used, budget)

        def judge(level):
            return analyze(rows, variables, kind, sc.predicted, sc.offsets, alpha=level, bootstrap=False, extrapolate=False,
                           trajectory=sc.trajectory)

        an = judge(look.alpha)
        undecided = [(an.fit.cells, an.terms, v, ext) for v, ext in an.open_exponents()]
        decided = an.verdict != "inconclusive" and not undecided
        plan = None
        if not decided:
            plan = policy.next_round(undecided, cells, cell_vars, cost, used, budget, MAX_GRID, SEEDS, sc.trajectory)
        if plan is None and not decided and look.fraction < 1.0:
            look = policy.level(past, keys, budget, budget)  # the final look spends what is left
            an = judge(look.alpha)
        past.append({"data_hash": data_hash(keys), "work": look.work, "budget": look.budget, "fraction": look.fraction,
                     "alpha": look.alpha, "spent": look.spent, "boundary": look.boundary})
        if plan is None:
            return Trial(sc.name, an.verdict, len(past), used, dict(an.fit.estimate), an.reason)
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
        bar = tqdm(total=trials * len(names), desc="calibrate", unit="trial", disable=not sys.stderr.isatty())
    table: dict[str, dict[str, Any]] = {}
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
    targets: dict[str, Any] = {
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


@dataclass(frozen=True)
class Calibration(Result):
    """The calibration's record (:func:`calibrate`): per scenario the rate of each verdict, with the targets checked.
    ``save(directory)`` writes calibration.md and calibration.json."""

    name: ClassVar[str] = "calibration"
    record: dict

    def as_json(self) -> dict:
        return plain(self.record)

    def markdown(self) -> str:
        return calibration_markdown(self.record)

    def heading(self) -> str:
        return f"calibration: {self.record['trials']} trials per scenario"

    def extra_files(self, directory: str) -> dict[str, str]:
        path = os.path.join(directory, "calibration.md")
        write_text(path, "# ibcheck calibrate\n\n" + self.markdown())
        return {"markdown": path}
