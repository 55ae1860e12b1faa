"""Designs from the applicability window: every swept cell is put inside the claim's hypotheses.

A built-in experiment sweeps some variables (FVBS23.thm.4_2: d and k) and leaves others free (n).
At each swept cell the theory layer gives the exact integer window of the free variable
(:func:`ibcheck.theory.window.applicability_window`), and the design picks a tractable value in it
(the smallest: the cheapest sample). A cell whose window is empty is outside whatever the free
setting; the design drops it whenever another cell is inside, and says which hypotheses bind.

Pitfall avoided: a fixed free setting (n = 20 k) that is outside the hypotheses at every cell, so
that every verdict is an extrapolation of the theorem, not a test of it.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import ClassVar

from ibcheck.simulate.experiments.applicability import applicability
from ibcheck.simulate.experiments.base import Row
from ibcheck.simulate.experiments.registry import experiment_for
from ibcheck.theory import get_claim
from ibcheck.theory.result import Result


@dataclass(frozen=True)
class DesignCell:
    """One swept cell: the free settings picked, whether every hypothesis holds there, what binds, and the
    estimated work of one task (reference seconds, the experiment's cost model fitted to stored timings)."""

    cell: dict
    settings: dict
    inside: bool
    binding: str
    cost: float
    known: bool = True  # False: a hypothesis needs a measured value (VYS22's max_ip), decided only once the cell is run


@dataclass(frozen=True)
class WindowDesign(Result):
    """The grid a comparison would run (``ibcheck design``): the cells inside the window, or, where none is,
    every cell with the reason and the smallest inside cell found beyond the grid."""

    name: ClassVar[str] = "design"

    claim: str
    experiment: str
    free: str | None
    cells: tuple[DesignCell, ...]
    seeds: int
    budget: float | None = None
    smallest_inside: DesignCell | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def run_cells(self) -> list[DesignCell]:
        """The cells the comparison runs: for a window design the inside ones where any is, else every cell (marked
        extrapolated); without a window (no free setting) every cell of the grid."""
        inside = [c for c in self.cells if c.inside]
        return (inside or list(self.cells)) if self.free is not None else list(self.cells)

    @property
    def fitted_cells(self) -> list[DesignCell]:
        """The cells the comparison fits: the inside ones where enough are inside to fit (each swept variable with
        three or more values, plus two), else every cell it runs, as ``compare`` decides it (unless --include-outside)."""
        runs = self.run_cells
        inside = [c for c in runs if c.inside]
        values: dict[str, set] = {}
        for c in runs:
            for v, x in c.cell.items():
                values.setdefault(v, set()).add(x)
        need = sum(len(xs) >= 3 for xs in values.values()) + 2
        return inside if len(inside) < len(runs) and len(inside) >= need and all(c.known for c in runs) else runs

    @property
    def work(self) -> float:
        return sum(c.cost for c in self.run_cells) * self.seeds

    def as_json(self) -> dict:
        def cj(c: DesignCell | None):
            return None if c is None else {"cell": c.cell, "settings": c.settings, "inside": c.inside, "binding": c.binding,
                                           "cost_seconds": c.cost, "runs": c in self.run_cells, "fitted": c in self.fitted_cells,
                                           "known": c.known}

        return {"claim": self.claim, "experiment": self.experiment, "free": self.free, "seeds": self.seeds,
                "budget": self.budget, "cells": [cj(c) for c in self.cells], "work_seconds": self.work,
                "seeds_within_budget": self.seeds_within_budget(), "smallest_inside": cj(self.smallest_inside),
                "notes": self.notes}

    def seeds_within_budget(self) -> int | None:
        if self.budget is None:
            return None
        per_seed = sum(c.cost for c in self.run_cells)
        return int(self.budget // per_seed) if per_seed > 0 else None

    def heading(self) -> str:
        inside = sum(c.inside for c in self.cells)
        head = (f"{self.claim}: design of {self.experiment}, {inside} of {len(self.cells)} cells inside the hypotheses, "
                f"{len(self.run_cells)} run x {self.seeds} seeds ({len(self.fitted_cells)} fitted), about {self.work:.0f} s of work")
        if self.budget is not None:
            s = self.seeds_within_budget()
            head += f"; a budget of {self.budget:g} s affords {s} seed(s) per cell"
        unknown = sum(not c.known for c in self.cells)
        if unknown:
            head += (f"; {unknown} cell(s) depend on values measured when the cell runs (a hypothesis reads them), "
                     "so whether they are inside is decided by the comparison")
        elif not inside:
            head += ". No cell of the grid is inside the window"
            if self.smallest_inside is not None:
                c = self.smallest_inside
                head += (f"; the smallest inside cell is {_fmt(c.cell)} with {_fmt(c.settings)}, about {c.cost:.3g} s per task")
            else:
                head += "; none was found up to the experiment's largest grid"
        return head

    def table(self) -> list[dict]:
        return [{"cell": _fmt(c.cell), "settings": _fmt(c.settings) or "-", "inside": ("yes" if c.inside else "**no**") if c.known else "when measured",
                 "binds": c.binding, "cost per task (s)": f"{c.cost:.3g}", "runs": "yes" if c in self.run_cells else "no",
                 "fitted": "yes" if c in self.fitted_cells else "no"}
                for c in self.cells]


def _fmt(d: dict) -> str:
    return ", ".join(f"{k}={v:g}" if isinstance(v, (int, float)) else f"{k}={v}" for k, v in d.items())


def design_cell(exp, claim, cell: dict, constants: dict | None = None) -> DesignCell:
    """The free settings at ``cell`` and whether every hypothesis holds there (with ``exp``'s fixed values)."""
    at = {**exp.fixed, **cell}
    settings = exp.settings_at(at)
    c = applicability(claim, exp, [Row(dict(cell), 0, "ok", {})], list(cell), exp.fixed, constants).cells[0]
    if exp.free is not None:
        _, binding = exp.free.window(claim.id, exp.claim_values(at, {}))
    else:
        failing = [f"{h} {'fails' if v is False else 'needs a measured value'}" for h, v in c["hypotheses"].items() if v is not True]
        binding = ", ".join(failing) or "every hypothesis holds"
    known = all(v is not None for v in c["hypotheses"].values())
    return DesignCell(dict(cell), settings, bool(c["inside"]), binding, exp.cost_of({**cell, **settings}), known)


def _grid_cells(exp, claim, grid: dict, constants: dict | None) -> tuple[DesignCell, ...]:
    names = list(grid)
    return tuple(design_cell(exp, claim, dict(zip(names, combo)), constants) for combo in itertools.product(*(grid[n] for n in names)))


def window_design(claim_id: str, quick: bool = True, grid: dict | None = None, seeds: int | None = None,
                  budget: float | None = None, constants: dict | None = None) -> WindowDesign:
    """The design :func:`compare_claim` runs for ``claim_id``: the grid's cells with their free settings picked
    inside the window, which are inside, what binds, and each cell's estimated cost."""
    claim = get_claim(claim_id)
    exp = experiment_for(claim_id)
    grid = dict(grid) if grid else (exp.quick_grid if quick else exp.grid)
    seeds = seeds if seeds is not None else (exp.quick_seeds if quick else exp.seeds)
    cells = _grid_cells(exp, claim, grid, constants)
    smallest = None
    if not any(c.inside for c in cells) and all(c.known for c in cells):
        smallest = _smallest_inside(exp, claim, grid, constants)
    notes = []
    if exp.free is not None:
        notes.append(f"{exp.free.variable} is picked at each cell as the smallest value inside the window "
                     f"(the theory layer's exact window of {exp.free.variable}, the other values fixed)")
    return WindowDesign(claim.id, exp.name, exp.free.variable if exp.free else None, cells, seeds, budget, smallest, notes)


def _smallest_inside(exp, claim, grid: dict, constants) -> DesignCell | None:
    """The cheapest inside cell among the grid's values extended by doublings up to the experiment's ``max_grid``."""
    axes = {}
    for v, vals in grid.items():
        top = float(exp.max_grid.get(v, max(vals) * 16))
        xs = sorted(set(vals))
        x = max(vals)
        while x * 2 <= top:
            x *= 2
            xs.append(x)
        axes[v] = xs
    best = None
    for combo in itertools.product(*axes.values()):
        c = design_cell(exp, claim, dict(zip(axes, combo)), constants)
        if c.inside and math.isfinite(c.cost) and (best is None or c.cost < best.cost):
            best = c
    return best


def run_cell_keys(exp, claim, grid: dict, constants: dict | None = None) -> set[tuple] | None:
    """The cells of ``grid`` a comparison runs (as sorted item tuples), or None when the experiment has no window
    design (every cell of the grid runs)."""
    if exp.free is None:
        return None
    cells = _grid_cells(exp, claim, grid, constants)
    return {tuple(sorted(c.cell.items())) for c in (WindowDesign(claim.id, exp.name, exp.free.variable, cells, 1).run_cells)}
