"""The design that would decide an inconclusive verdict, read off the Neyman-Pearson envelope.

Takes the variable the verdict is weakest along, its swept values, the observations at each, the seed noise (sd of
log y within a cell) and the design's cost; returns a :class:`DesignPlan`: how far the variable's range must grow (at
the seeds per cell it has), or how many seeds per cell it needs at this range, for any test to reach 80% power against
the nearest alternative, and what each costs in the design's declared work against this sweep's.

The alternative is the claim with a log factor more or less along the variable (a missing 1/log d, an extra log d:
the classes theorems differ by; a power more or less is farther away, so a design that tells this one tells those
too). The function test's own target, a log log factor, is nearer still: a design that reaches it is larger. Its
distance from the nearest true curve, the claim times a correction to scaling the engine allows (``c (1 + q x^-w)``,
``w >= MIN_DECAY``, q within the cap), is :func:`simulate.stats.separation.nearest_corrected`'s; the bound it gives
is an upper one on every test's power, so the plan is the least design that could decide: the engine, below the
envelope, may need more (docs/verdict.md, calibration).

Pitfall avoided: "about 4x the seeds" from the resolution alone, which ignores that a wider range both shrinks the
standard error and moves the target, and that more seeds never separate a slow correction from a log factor.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable, Sequence

import numpy as np

from ibcheck.simulate.stats.separation import nearest_corrected, np_power, seeds_needed
from ibcheck.simulate.verdict.analysis import reanalyze
from ibcheck.simulate.verdict.exp_plan import exp_stories
from ibcheck.simulate.verdict.plan_check import PASS, TRIALS, PlanCheck, _psi, check_plan, simulate_design
from ibcheck.theory.errors import InputError

POWER = 0.80  # the power the plan reaches (against the nearest alternative, at level ALPHA)
ALPHA = 0.05
MAX_STEPS = 40  # the most grid steps the range is extended by (the search stops there: "beyond reach")
MAX_DESIGNS = 5  # the most designs one plan check simulates


@dataclass(frozen=True)
class DesignPlan:
    """The least design at which any test reaches POWER against a log factor along ``variable``."""

    variable: str
    power_now: float  # the envelope's power at this design
    top: float | None  # the variable's largest value that reaches it at ``seeds`` per cell (None: not within the cap)
    top_work: float | None  # that design's declared work over this sweep's
    seeds: int  # the seeds per cell at this range that reach it
    seeds_now: int
    seeds_work: float  # that design's work over this sweep's
    capped_at: float | None = None  # the window's or the experiment's largest value, where the range search stopped

    check: object = None  # the simulation of the plan (simulate.verdict.plan_check.PlanCheck), where it was checked
    unchecked: str = "no simulation was asked for"  # why it was not checked, where it was not
    envelope: bool = True  # False: an exp-type bound's plan, which the ratio's envelope says nothing about

    def envelope_text(self) -> str:
        """What any test needs (the Neyman-Pearson bound): a lower bound on the design, not a plan."""
        if not self.envelope:
            return "(an exp-type bound: the plan is sized from its own test; the ratio's power envelope does not apply)"
        alt = f"a log {self.variable} factor more or less"
        if self.power_now >= POWER:
            return f"this design already lets a test reach {POWER:.0%} power against {alt} (any test: at most {self.power_now:.0%})"
        seeds = f"{self.seeds} seeds per cell at this range (about {self.seeds_work:.1f}x)"
        if self.top is not None and self.top_work is not None:
            how = (f"at least {self.variable} up to {_val(self.top)} at {self.seeds_now} seeds (about {self.top_work:.1f}x this "
                   f"sweep's work), or {seeds}")
        else:
            reach = f"up to {_val(self.capped_at)}" if self.capped_at else f"within {MAX_STEPS} grid steps"
            how = f"{seeds}: no range of {self.variable} {reach} at {self.seeds_now} seeds reaches it"
        return (f"to reach {POWER:.0%} power against {alt} any test needs {how}; at this design any test has at most "
                f"{self.power_now:.0%}")

    def text(self) -> str:
        """One sentence: the checked plan (the cheapest design tried that decided in simulation), else that none did;
        the envelope beside it as a bound. An unchecked plan names no design that would decide."""
        c = self.check
        if c is None:
            return f"no plan is named (not checked by simulation: {self.unchecked}); {self.envelope_text()}"
        ok = c.passed  # type: ignore[attr-defined]
        if ok is not None:
            need = math.ceil(PASS * c.trials - 1e-9)  # type: ignore[attr-defined]
            return (f"plan, checked by simulation: {_design_text(self.variable, ok, self.seeds_now)} (about {ok.work:.1f}x this "
                    f"sweep's work) decides the right way in at least {need} of {c.trials} simulated trials under each of the "  # type: ignore[attr-defined]
                    f"data's two stories, {_stories(c)}; {self.envelope_text()}")
        tried = [t for t in c.tried if t.skipped is None]  # type: ignore[attr-defined]
        skipped = len(c.tried) - len(tried)  # type: ignore[attr-defined]
        best = max(tried, key=lambda t: (min(t.right), sum(t.right)), default=None)
        most = max(tried, key=lambda t: t.work, default=None)
        over = f"; {skipped} more too large to simulate ({c.tried[-1].skipped})" if skipped else ""  # type: ignore[attr-defined]
        if most is None:
            return f"no plan is named: every design tried is too large to simulate{over}; {self.envelope_text()}"
        return (f"no plan is named: no design simulated decided the right way in {PASS:.0%} of the trials under each of the "
                f"data's two stories ({len(tried)} simulated, the largest {_design_text(self.variable, most, self.seeds_now)}, "
                f"about {most.work:.1f}x this sweep's work{over}); the best, {_design_text(self.variable, best, self.seeds_now)}: "  # type: ignore[arg-type]
                f"{_rates(c, best)}; {self.envelope_text()}")

    def as_json(self) -> dict:
        return {"variable": self.variable, "power_now": self.power_now, "top": self.top, "top_work": self.top_work, "seeds": self.seeds,
                "seeds_now": self.seeds_now, "seeds_work": self.seeds_work, "capped_at": self.capped_at, "text": self.text(),
                "envelope": self.envelope_text(),
                "simulation": self.check.as_json() if self.check is not None else None}  # type: ignore[attr-defined]


def _val(x: float | None) -> str:
    if x is None:
        return "?"
    e = math.log2(x)
    return f"2^{e:.0f}" if abs(e - round(e)) < 1e-9 and x >= 64 else f"{x:g}"


def _design_text(v: str, t, seeds_now: int) -> str:
    """A simulated design in words: the range it reaches and its seeds per cell."""
    return f"{v} up to {_val(t.values[-1])} at {t.seeds} seeds per cell" + (" (this range)" if t.seeds != seeds_now else "")


def _listed(parts: list[str]) -> str:
    return ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else "".join(parts)


def _stories(c) -> str:
    return _listed([f"{s.name} ({s.text(c.variable)}, right: {s.verdict})" for s in c.truths])


def _rates(c, t) -> str:
    return _listed([f"{r} of {n} trials right where the data's ratio is {s.name}" for r, n, s in zip(t.right, t.run, c.truths) if n])



def envelope_power(x: Sequence[float], n_obs: Sequence[float], sigma: float, w_min: float) -> float:
    """Any test's power bound against a log factor (either sign: the nearer) at values ``x`` with ``n_obs`` each."""
    return np_power(_delta(x, n_obs, sigma, w_min), ALPHA)


def plan_design(variable: str, values: Sequence[float], n_obs: Sequence[float], seeds: int, sigma: float, w_min: float,
                work: Callable[[list[float], int], float], cap: float | None = None) -> DesignPlan | None:
    """The plan along ``variable`` (module docstring). ``values``: its swept values (3 or more, > 1), ``n_obs`` the
    observations at each (seeds times the cells sharing the value); ``work(values, seeds)``: the declared work of the
    design with those values at that many seeds per cell (the other variables as swept); ``cap``: the largest value the
    window or the experiment allows. None where the envelope cannot be computed (values <= 1, no noise estimate)."""
    xs = sorted(float(v) for v in values)
    if not _plannable(xs, sigma, seeds):
        return None
    per_seed = np.asarray([n / seeds for _, n in sorted(zip(values, n_obs))], dtype=float)
    delta_now = _delta(xs, per_seed * seeds, sigma, w_min)
    now = np_power(delta_now, ALPHA)
    base = work(xs, seeds)
    # seeds at this range: the distance grows as sqrt(seeds)
    need = seeds_needed(delta_now, seeds, ALPHA, POWER) if delta_now > 0 else seeds * 100
    seeds_work = work(xs, need) / base if base > 0 else math.nan
    top = top_work = None
    capped = None
    if now < POWER:  # the range: doubling steps, then bisection (the bound grows with the range)
        limit = _step_limit(xs, cap)
        if cap is not None:
            capped = cap if limit < MAX_STEPS else None

        def design(steps: int) -> tuple[list[float], list[float]]:
            return _extended(xs, steps), list(per_seed * seeds) + [per_seed[-1] * seeds] * steps

        def reaches(steps: int) -> bool:
            return envelope_power(*design(steps), sigma, w_min) >= POWER

        lo, hi = 0, 1
        while hi <= limit and not reaches(hi):
            lo, hi = hi, hi * 2
        if hi > limit:
            hi = limit if limit > lo and reaches(limit) else -1
        if hi > 0:
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (lo, mid) if reaches(mid) else (mid, hi)
            grid, _ = design(hi)
            top, top_work, capped = grid[-1], (work(grid, seeds) / base if base > 0 else math.nan), None
    return DesignPlan(variable, now, top, top_work, need, seeds, seeds_work, capped)


def _plannable(xs: list[float], sigma: float, seeds: int) -> bool:
    """A plan needs 3 or more swept values above 1 (ascending ``xs``), a finite noise estimate and a seed."""
    return len(xs) >= 3 and xs[0] > 1.0 and sigma > 0 and math.isfinite(sigma) and seeds >= 1


def exp_design(variable: str, values: Sequence[float], seeds: int, sigma: float) -> DesignPlan | None:
    """An exp-type bound's plan before its check (:func:`exp_checked`): no envelope, which bounds a test against a log
    factor of the ratio and says nothing about log(1/y). None where :func:`_plannable` is not."""
    if not _plannable(sorted(float(v) for v in values), sigma, seeds):
        return None
    return DesignPlan(variable, math.nan, None, None, seeds, seeds, math.nan, None, envelope=False)


def _delta(xs, n_obs, sigma: float, w_min: float) -> float:
    """The distance (noise units) from a log factor, either sign, to the nearest corrected true curve."""
    best = math.inf
    for sign in (1.0, -1.0):
        try:
            best = min(best, nearest_corrected(sign * _psi(np.asarray(xs)), np.asarray(xs), np.asarray(n_obs), sigma, w_min, fine=False).delta)
        except ValueError:
            continue
    return best if math.isfinite(best) else 0.0


def seed_noise(rows: list[dict], variables: list[str]) -> float:
    """The pooled sd of log y within cells (the seeds' spread), from fit rows (``log_value`` or ``value``); nan where
    no cell has two seeds."""
    groups: dict[tuple, list[float]] = {}
    for r in rows:
        lv = r.get("log_value")
        if lv is None:
            v = r.get("value")
            lv = math.log(v) if isinstance(v, (int, float)) and v > 0 else None
        if lv is None or not math.isfinite(lv) or r.get("censor"):
            continue
        key = tuple(round(float(r.get("log_" + v, math.log(r[v]) if isinstance(r.get(v), (int, float)) and r[v] > 0 else 0.0)), 9)
                    for v in variables)
        groups.setdefault(key, []).append(lv)
    ss, df = 0.0, 0
    for g in groups.values():
        if len(g) > 1:
            a = np.asarray(g)
            ss += float(((a - a.mean()) ** 2).sum())
            df += len(g) - 1
    return math.sqrt(ss / df) if df else math.nan


def bound_plan(rows: list[dict], ft, variables: list[str], seeds: int, work: Callable[[str, list[float], int], float],
               caps: dict[str, float] | None = None, w_min: float = 0.3, analysis=None, trials: int | None = None) -> DesignPlan | None:
    """The plan for one inconclusive bound: along the single-variable direction its function test ``ft`` is weakest
    along (else the first variable it leaves open), from its fit ``rows``; ``work(variable, values, seeds)`` is the
    declared work of the sweep with that variable's values replaced. With ``analysis`` (the bound's
    :class:`~simulate.verdict.analysis.Analysis`), the plan is checked by simulation (:func:`checked`) with ``trials``
    per truth (default :data:`simulate.verdict.plan_check.TRIALS`; 0: not checked, and no design is named). None where
    the verdict decided, or no plan can be computed (a trajectory, values <= 1, one seed)."""
    if ft is None or ft.verdict != "inconclusive":
        return None
    t = ft.weakest()
    v = t.variables[0] if t is not None else next((u for u, _ in ft.open_directions(variables)), None)
    if v is None:
        return None
    counts: dict[float, int] = {}
    for r in rows:
        x = r.get(v)
        if x is None and r.get("log_" + v) is not None:
            x = math.exp(r["log_" + v])
        if isinstance(x, (int, float)) and math.isfinite(x):
            counts[round(float(x), 9)] = counts.get(round(float(x), 9), 0) + 1
    xs = sorted(counts)
    sigma = seed_noise(rows, variables)
    cap = (caps or {}).get(v)
    exp_type = analysis is not None and bool(analysis.call.get("free_constant"))  # its own stories (simulate.verdict.exp_plan)
    if exp_type:  # the ratio's envelope says nothing about it
        plan = exp_design(v, xs, seeds, sigma)
    else:
        plan = plan_design(v, xs, [counts[x] for x in xs], seeds, sigma, w_min, lambda vals, s: work(v, vals, s), cap)
    if plan is None or analysis is None:
        return plan
    why = ("plan_trials = 0 (--plan-trials 0)" if trials == 0 else
           "log factors taken as known offsets" if analysis.offsets and any(p or q for p, q in analysis.offsets.values()) else
           "a trajectory" if analysis.call.get("trajectory") else
           f"{v} tends to 0, and the stories are fitted for a growing variable" if v in analysis.call.get("toward_zero", ()) else None)
    if why:
        return replace(plan, unchecked=why)
    if exp_type:
        return exp_checked(plan, analysis, rows, xs, lambda vals, s: work(v, vals, s), cap, trials)
    return checked(plan, analysis, rows, xs, sigma, lambda vals, s: work(v, vals, s), cap, w_min, trials)


def _ratio(xs: list[float]) -> float:
    """The grid's last step (a factor), by which a range is extended."""
    return xs[-1] / xs[-2] if xs[-2] > 0 else 2.0


def _step_limit(xs: list[float], cap: float | None) -> int:
    """The most steps the range may be extended by: MAX_STEPS, and within the cap."""
    return MAX_STEPS if cap is None else min(MAX_STEPS, int(math.floor(math.log(cap / xs[-1]) / math.log(_ratio(xs)) + 1e-9)))


def _extended(xs: list[float], steps: int) -> list[float]:
    """The swept values and ``steps`` more at the grid's last step."""
    return xs + [xs[-1] * _ratio(xs) ** i for i in range(1, steps + 1)]


def _judge(an):
    def judge(sim_rows: list[dict]) -> str:
        try:
            return reanalyze(an, sim_rows).verdict
        except (InputError, ValueError, ZeroDivisionError, np.linalg.LinAlgError):
            return "refused"
    return judge


def exp_checked(plan: DesignPlan, an, rows: list[dict], xs: list[float], work: Callable[[list[float], int], float],
                cap: float | None, trials: int | None = None) -> DesignPlan:
    """An exp-type bound's plan (:mod:`simulate.verdict.exp_plan`): its stories of log(1/y), simulated at 2x, 4x and
    8x the seeds at this range and at 2, 4 and 8 more grid steps of the variable at this sweep's seeds (within the cap),
    cheapest first, at most MAX_DESIGNS; then the bisection step. None names less than the sweep has."""
    fitted = exp_stories(an, rows, plan.variable)
    base = work(xs, plan.seeds_now)
    if fitted is None or not base > 0 or len(xs) < 2:
        return replace(plan, unchecked="the exp-type stories cannot be fitted on these cells")
    stories, sigma = fitted
    limit = _step_limit(xs, cap)
    designs = [(xs, plan.seeds_now * f, work(xs, plan.seeds_now * f) / base) for f in (2, 4, 8)]
    for steps in sorted({min(k, limit) for k in (2, 4, 8)}):
        if steps >= 1:
            grid = _extended(xs, steps)
            designs.append((grid, plan.seeds_now, work(grid, plan.seeds_now) / base))
    order = sorted(designs, key=lambda d: d[2])[:MAX_DESIGNS]
    judge = _judge(an)
    check = check_plan(an, rows, plan.variable, order, sigma, 0.0, judge, TRIALS if trials is None else trials, stories=stories)
    return replace(plan, check=_tightened(check, an, rows, xs, plan.seeds_now, sigma, judge, work, base))


def checked(plan: DesignPlan, an, rows: list[dict], xs: list[float], sigma: float, work: Callable[[list[float], int], float],
            cap: float | None, w_min: float, trials: int | None = None) -> DesignPlan:
    """``plan`` with its simulation (:mod:`simulate.verdict.plan_check`): the candidate designs, cheapest first, are the
    envelope's seeds at this range (at least one more than the sweep has) and 2x and 4x them, and the envelope's range
    (at the sweep's seeds; to the cap where it names none) and 2x and 4x its added steps, within the cap; at most
    MAX_DESIGNS of them. None names less than the sweep has: every design keeps its values and at least its seeds."""
    base = work(xs, plan.seeds_now)
    if not base > 0:
        return plan
    ratio = _ratio(xs)
    limit = _step_limit(xs, cap)
    designs: dict[tuple, tuple] = {}
    need = max(plan.seeds, plan.seeds_now + 1)
    for f in (1, 2, 4):
        designs[(len(xs), need * f)] = (xs, need * f, work(xs, need * f) / base)
    first = round(math.log(plan.top / xs[-1]) / math.log(ratio)) if plan.top else limit
    for steps in sorted({min(first * f, limit) for f in (1, 2, 4)}):
        if steps >= 1:
            grid = _extended(xs, steps)
            designs[(len(grid), plan.seeds_now)] = (grid, plan.seeds_now, work(grid, plan.seeds_now) / base)
    order = sorted(designs.values(), key=lambda d: d[2])[:MAX_DESIGNS]

    judge = _judge(an)
    try:
        check = check_plan(an, rows, plan.variable, order, sigma, w_min, judge, TRIALS if trials is None else trials)
    except ValueError:  # no correction within the cap fits the data's ratio: no story to simulate
        return plan
    return replace(plan, check=_tightened(check, an, rows, xs, plan.seeds_now, sigma, judge, work, base))


def _tightened(check, an, rows: list[dict], xs: list[float], seeds_now: int, sigma: float, judge, work, base: float):
    """One bisection step between the design that passed and the largest one of its kind (range or seeds) that failed
    before it: the midpoint, simulated; it becomes the plan where it passes (a plan closer to the least that decides).
    Pitfall avoided: 2^28 named where 2^20 failed and 2^24 was never tried."""
    ok = check.passed
    if ok is None:
        return check
    ranged = len(ok.values) > len(xs)
    failed = [t for t in check.tried if not t.passed and t.skipped is None and (len(t.values) > len(xs)) == ranged
              and (t.work < ok.work)]
    if not failed:
        return check
    lo = max(failed, key=lambda t: t.work)
    if ranged:
        steps = (len(lo.values) + len(ok.values)) // 2 - len(xs)
        if steps <= len(lo.values) - len(xs):
            return check
        values, seeds = _extended(xs, steps), seeds_now
    else:
        seeds = (lo.seeds + ok.seeds) // 2
        if seeds <= lo.seeds:
            return check
        values = xs
    mid = simulate_design(an, rows, check.variable, values, seeds, work(values, seeds) / base, check.truths, sigma, judge, check.trials)
    return PlanCheck(check.variable, check.truths, check.tried + (mid,), check.trials)


def grid_work(cells: list[dict], cost: Callable[[dict], float]) -> Callable[[str, list[float], int], float]:
    """``work(variable, values, seeds)`` for :func:`bound_plan` over a sweep's ``cells``: the cells at the given values of
    ``variable`` as swept, and for each value beyond the largest, a copy of the largest value's cells; each weighted by
    ``cost(cell)`` (the declared work of one task; 1 where a design declares none), times the seeds."""
    def work(v: str, values: list[float], seeds: int) -> float:
        top = max(float(c[v]) for c in cells)
        others = {tuple(sorted((u, x) for u, x in c.items() if u != v)) for c in cells if float(c[v]) == top}
        chosen = [c for c in cells if any(abs(float(c[v]) - x) <= 1e-9 * max(1.0, x) for x in values)]
        chosen += [{**dict(o), v: x} for x in values if x > top * (1 + 1e-12) for o in others]
        return sum(cost(c) for c in chosen) * seeds
    return work


def planned_undecided(analyses: list, rows_of, variables: list[str], seeds: int, work: Callable[[str, list[float], int], float],
                      caps: dict[str, float] | None = None) -> list[tuple]:
    """The round planner's open directions (Analysis.undecided: fit cells, terms, variable, extend?) for ``analyses``,
    with the envelope's plan choosing the direction: a variable whose plan reaches POWER more cheaply by a wider range
    than by seeds at this range is extended, not only seeded. ``rows_of(analysis)``: the rows it was fitted on."""
    out = []
    for an in analyses:
        open_ = an.undecided()
        try:  # only where it can change a direction: some open variable the rounds would only seed
            plan = bound_plan(list(rows_of(an)), an.function, variables, seeds, work, caps) if any(not e for *_, e in open_) else None
        except (InputError, ValueError, ZeroDivisionError):
            plan = None
        wider = plan is not None and plan.top_work is not None and plan.top_work < plan.seeds_work
        out += [(c, t, v, ext or (wider and plan is not None and v == plan.variable)) for c, t, v, ext in open_]
    return out
