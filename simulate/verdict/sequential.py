"""Repeated looks without an inflated error rate: the ledger of looks and the level of each.

A sweep that grows until it decides looks at its data several times; testing every look at 0.05
would call a true claim ``inconsistent`` far more often than 5% of the time. Each look gets the
nominal level of the exact group-sequential boundary for Lan-DeMets spending
(:mod:`simulate.stats.boundaries`) at the information fractions of all looks so far.

* **Information fraction**: the deterministic work of the design so far (seed-runs weighted by
  the experiment's declared cost per cell) over the budget, so the same command on the same code
  and store gives the same looks and levels under any machine load.
* **The ledger** lives in the sweep's SQLite file (:class:`simulate.sweep.store.SweepStore`). A rerun
  that adds no data repeats the last look (same data, same level). A continuation with a larger
  budget re-places the earlier looks at their work over the new budget and recomputes every
  boundary: the earlier looks did not decide (a decided sweep stops), and their recomputed
  boundaries are stricter than the ones they were tested at, so they stay undecided. If the
  earlier budget had reached its final look, the two runs together keep their error rate below
  ``alpha + (alpha - alpha*(t))`` with t the old final look's new fraction; the look reports it.
* A rerun without a budget analyses every stored row of the design as a final look at t = 1.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ibcheck.simulate.stats.boundaries import RULES, boundaries, nominal_levels, spending
from ibcheck.simulate.sweep.tasks import data_hash

# the smallest round, as a share of the budget: rounds otherwise double the work done so far, and a
# first round smaller than this would spend a look on too little new data
MIN_ROUND = 0.15

__all__ = ["RULES", "Look", "SequentialPolicy", "data_hash", "spending"]


@dataclass(frozen=True)
class Look:
    look: int
    fraction: float
    alpha: float  # the nominal one-sided level this look is tested at
    spent: float  # cumulative alpha after this look (the spending function at its fraction)
    rule: str
    work: float = 0.0  # the design's work so far (reference seconds)
    budget: float | None = None  # the largest budget of the ledger when this look was taken
    boundary: float | None = None  # the z boundary of this look
    repeated: bool = False  # the same data as the previous look: no new alpha spent
    family_alpha: float | None = None  # the bound on the error rate over this ledger's runs together (see the module docstring)
    note: str = ""

    def as_json(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class SequentialPolicy:
    """Looks and their levels: ``rule`` (pocock or obrien-fleming) spends ``alpha`` over the
    information fractions (work / budget)."""

    rule: str = "pocock"
    alpha: float = 0.05

    def next_round(self, undecided: list, cells: dict, cell_vars: list[str], cost, work: float, budget: float, max_grid: dict,
                   base_seeds: int, trajectory: bool, failing: frozenset = frozenset()):
        """The next round's plan (:func:`simulate.verdict.rounds.plan_round`), or None when none fits the budget.

        Rounds grow geometrically, each about as large as the work before it (at least
        ``MIN_ROUND`` of the budget), so that the looks stay few."""
        from ibcheck.simulate.verdict.rounds import plan_round  # heavy: scipy (loaded on first use)

        left = budget - work
        if left <= 0:
            return None
        plan = plan_round(undecided, cells, cell_vars, cost, min(left, max(work, MIN_ROUND * budget)), max_grid, base_seeds,
                          trajectory, max_tasks=100_000, failing=failing)
        return None if plan.empty else plan

    def look(self, past: list[dict], keys, work: float, budget: float | None, analyse, open_of, plan_next, replay: int | None = None,
             capped: bool = False):
        """One look of a sweep that grows until it decides, the loop ``compare`` and ``calibrate`` share: its level
        (:meth:`level`), ``analyse(alpha)`` (a list of results at that level), and the next round ``plan_next(open)`` for
        the results' open directions ``open_of(results)`` (a list; empty with some results: decided). Returns (look, results, plan); plan is
        None when this look is the last: decided, no budget, or no further round fits (or ``capped``, a wall-clock cap),
        and then an undecided last look spends what is left of the budget.

        A rerun with a larger budget repeats the ledger's last look first (the same rows, no new alpha) and continues;
        a ``replay`` of the ledger plans as the uninterrupted run did."""
        look = self.level(past, keys, work, budget, replay)
        results = analyse(look.alpha)
        open_ = open_of(results)
        grows = budget is not None and budget > 0 and look.repeated and (look.budget or 0.0) < budget and work < budget
        retraced = replay is not None and look.repeated and look.look == replay + 1
        decided = bool(results) and not open_
        open_round = bool(budget) and not decided and (not look.repeated or grows or retraced) and (look.fraction < 1.0 or grows)
        if open_round and not capped:
            plan = plan_next(open_)
            if plan is not None:
                return look, results, plan
        if open_round and budget:  # no further round fits, or the cap ends the sweep: the final look spends what is left
            look = self.level(past, keys, budget, budget, replay)
            results = analyse(look.alpha)
        return look, results, None

    def level(self, past: list[dict], keys, work: float, budget: float | None, replay: int | None = None) -> Look:
        """The level of a look at the rows ``keys`` after ``work`` units, given the ledger's ``past`` looks
        (dicts with data_hash, work, budget, fraction, alpha, spent; oldest first). Nothing is recorded.

        ``replay``: the index of this look when the same command runs again over the same ledger (after an
        interruption): a look with the rows of the ledger's look at that index is that look again (its level, no new
        alpha), so the rerun retraces the uninterrupted run's rounds instead of starting a look of its own."""
        h = data_hash(keys)
        at = replay if replay is not None and replay < len(past) else len(past) - 1
        if past and past[at]["data_hash"] == h:
            p = past[at]
            return Look(at + 1, p["fraction"], p["alpha"], p["spent"], self.rule, p["work"], p["budget"], p.get("boundary"),
                        repeated=True, note="the same rows as a look of the ledger: its level, no new alpha spent")
        budgets = [p["budget"] for p in past if p["budget"]] + ([budget] if budget else [])
        if not budgets:
            return Look(len(past) + 1, 1.0, self.alpha, self.alpha, self.rule, work, None, None,
                        note="one fixed look (no budget, no earlier looks)")
        b_max = max(budgets)
        fractions = [min(p["work"] / b_max, 1.0) for p in past]
        t = 1.0 if budget is None else min(work / b_max, 1.0)
        note = ""
        if budget is None:
            note = "no budget: every stored row, analysed as the final look"
        if fractions and t <= fractions[-1]:
            if fractions[-1] >= 1.0:
                return Look(len(past) + 1, 1.0, 0.0, self.alpha, self.rule, work, b_max, math.inf,
                            note="the ledger's alpha is spent (its final look was taken at this budget): "
                                 "a larger --budget continues it")
            t = min(1.0, fractions[-1] + 1e-6)
        fractions.append(t)
        levels = nominal_levels(fractions, self.rule, self.alpha)
        bounds = boundaries(fractions, self.rule, self.alpha)
        family = None
        old_final = [p for p in past if p["fraction"] >= 1.0 and p["budget"] and p["budget"] < b_max]
        if old_final:
            t_old = min(old_final[-1]["work"] / b_max, 1.0)
            family = self.alpha + (self.alpha - spending(self.rule, t_old, self.alpha))
            note = (note + "; " if note else "") + (f"continues a ledger whose final look was at budget {old_final[-1]['budget']:g}: "
                                                    f"both runs together err at most {family:.3g}")
        return Look(len(past) + 1, t, levels[-1], spending(self.rule, t, self.alpha), self.rule, work, b_max, bounds[-1],
                     family_alpha=family, note=note)
