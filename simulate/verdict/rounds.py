"""Sweeps that grow until they decide: what the next round adds, and what would decide.

A round spends part of the remaining budget on the measurements that shrink the standard
error of the undecided exponents most, and extends the grid one step toward larger scale
along a variable whose local exponent still drifts:

* **seeds**: for an exponent b_v of the OLS on cell means, ``Var(b_v) = sum_c a_c^2 s_c^2 / n_c``
  where ``a = ((X'X)^-1 X')_v`` and ``s_c^2`` is the seed variance of cell c (pooled when a cell
  has one seed). One more seed at cell c removes ``a_c^2 s_c^2 (1/n_c - 1/(n_c + 1))``; cells are
  taken in order of that gain per second of their measured cost.
* **grid**: the next value continues the variable's geometric grid (``x_max^2 / x_prev``), up to
  the experiment's ``max_grid``, and only when its cost, extrapolated by a power law fitted to the
  measured task times, fits the remaining budget.
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

import numpy as np

from ibcheck.simulate.experiments.terms import Term, parse_term
from ibcheck.simulate.stats.estimate import LeastSquares
from ibcheck.simulate.stats.fit import design
from ibcheck.simulate.sweep.tasks import CellKey, cell_key


@dataclass
class Plan:
    """What one round adds: extra seeds per cell and new cells (each with its seeds)."""

    seeds: dict[CellKey, int] = field(default_factory=dict)
    new_cells: dict[CellKey, int] = field(default_factory=dict)
    extended: dict[str, float] = field(default_factory=dict)  # variable -> new grid value
    estimated_seconds: float = 0.0

    @property
    def empty(self) -> bool:
        return not self.seeds and not self.new_cells

    def describe(self) -> str:
        parts = []
        if self.seeds:
            parts.append(f"{sum(self.seeds.values())} seed(s) at {len(self.seeds)} cell(s)")
        for v, x in self.extended.items():
            parts.append(f"{v} = {x:g} ({sum(n for k, n in self.new_cells.items() if dict(k).get(v) == x)} task(s))")
        return ", ".join(parts) or "nothing"


def variance_gains(cells: list[dict], variables: list[str], v: str) -> list[float]:
    """Reduction of Var(b_v) + Var(curvature_v) from one more seed at each cell (same order as ``cells``).

    The slope alone would starve the middle of the range (a straight line is best measured at
    its ends); the curvature term, which the drift test needs, keeps the middle measured.
    Each of the two is normalized to sum 1 over the cells before adding.
    """
    L = design(cells, variables)
    names = [getattr(u, "name", u) for u in variables]
    i = names.index(v)
    X = np.hstack([np.ones((len(cells), 1)), L, ((L[:, i] - L[:, i].mean()) ** 2)[:, None]])
    A = LeastSquares(X).gain_rows()
    pooled2 = _pooled_variance(cells)
    s2n = []
    for c in cells:
        n = c["n_seeds"]
        # a cell's own variance, shrunk toward the pooled one (4 pseudo degrees of freedom):
        # two seeds that happen to agree must not make a cell look noiseless
        own = (c["sd_log"] ** 2) * (n - 1) if c.get("sd_log") is not None else 0.0
        s2 = (own + 4 * pooled2) / ((n - 1) + 4)
        s2n.append(s2 * (1.0 / n - 1.0 / (n + 1)))
    out = np.zeros(len(cells))
    for row in (A[1 + i], A[-1]):
        g = row * row * np.array(s2n)
        if g.sum() > 0:
            out += g / g.sum()
    return [float(x) for x in out]


def _pooled_variance(cells: list[dict]) -> float:
    df = sum(c["n_seeds"] - 1 for c in cells if c.get("sd_log") is not None)
    if df < 1:
        return 1.0
    return sum((c["n_seeds"] - 1) * c["sd_log"] ** 2 for c in cells if c.get("sd_log") is not None) / df


def next_value(values: list[float], toward_zero: bool = False) -> float:
    """Continue a geometric grid one step toward the theorem's limit: x_max^2 / x_prev, or
    x_min^2 / x_next for a variable that tends to 0 (integers stay integers)."""
    vals = sorted(values)
    x = vals[0] * vals[0] / vals[1] if toward_zero else vals[-1] * vals[-1] / vals[-2]
    return int(round(x)) if all(float(u).is_integer() for u in vals) and x >= 1 else x


def plan_round(undecided: list[tuple[list[dict], list[Term], str, bool]], design_cells: dict[CellKey, int], cell_vars: list[str],
               cost, seconds: float, max_grid: dict, base_seeds: int, trajectory: bool, max_tasks: int = 64,
               failing: frozenset = frozenset()) -> Plan:
    """The next round within ``seconds``.

    ``undecided``: (fit cells, fit variables, variable, extend) for every undecided exponent; ``extend``
    marks a variable whose local exponent drifts or whose fit shows lack of fit (seeds cannot help).
    ``design_cells``: the current cells and their seed counts. ``cost(cell)`` predicts the
    seconds of one task. ``failing``: the cells where most rows failed; a variable whose largest (or, toward 0,
    smallest) value already fails is not extended further (pitfall: a grid extended where the measure fails on
    60-100% of rows buys failures, not resolution).
    """
    plan = Plan()
    left = seconds
    # 1. Grid extension along drifting variables (not for trajectories: their scale is T along each run).
    if not trajectory:
        for cells, fvars, term, drifting in undecided:
            v = parse_term(term).variable
            if not drifting or v in plan.extended or v not in cell_vars:
                continue
            values = sorted({dict(k)[v] for k in design_cells})
            if len(values) < 2:
                continue
            tz = any(getattr(t, "toward_zero", False) and t.variable == v for t in fvars)
            edge = values[0] if tz else values[-1]
            if any(dict(k).get(v) == edge for k in failing):
                continue  # the measure already fails at the edge of the grid
            x = next_value(values, tz)
            if v in max_grid and (x < max_grid[v] if tz else x > max_grid[v]):  # where v tends to 0, max_grid is its smallest value
                continue
            others = sorted({tuple((u, val) for u, val in k if u != v) for k in design_cells})
            new = {cell_key({**dict(o), v: x}): base_seeds for o in others}
            est = sum(cost(dict(k)) * n for k, n in new.items())
            if est <= 0.6 * left:
                plan.new_cells.update(new)
                plan.extended[v] = x
                left -= est
                plan.estimated_seconds += est
    # 2. Seeds where they shrink the undecided standard errors most per second.
    gains: dict[CellKey, float] = {}
    for cells, fvars, v, _ in undecided:
        vg = variance_gains(cells, fvars, v)
        total = sum(vg) or 1.0
        for c, gi in zip(cells, vg):
            # map a fit cell back to its design cell (trajectory fits have one design cell per run)
            key = next(iter(design_cells)) if trajectory else cell_key({u: _match(c, u, design_cells) for u in cell_vars})
            gains[key] = gains.get(key, 0.0) + gi / total
    n0 = dict(design_cells)
    cap = seed_cap(design_cells, [u for u in cell_vars if any(u == parse_term(t).variable for _, _, t, _ in undecided)])
    heap: list[tuple[float, CellKey, float, int]] = []
    for k, g in gains.items():
        if k not in n0 or g <= 0:
            continue
        n = n0[k]
        base = g / (1.0 / n - 1.0 / (n + 1))  # a^2 s^2, summed over the undecided exponents
        heapq.heappush(heap, (-g / max(cost(dict(k)), 1e-3), k, base, n))
    added = 0
    while heap and left > 0 and added < max_tasks:
        _, k, base, n = heapq.heappop(heap)
        c = cost(dict(k))
        if c > left or n >= cap[k]:
            continue
        plan.seeds[k] = plan.seeds.get(k, 0) + 1
        left -= c
        plan.estimated_seconds += c
        added += 1
        g = base * (1.0 / (n + 1) - 1.0 / (n + 2))
        heapq.heappush(heap, (-g / max(c, 1e-3), k, base, n + 1))
    return plan


def seed_cap(design_cells: dict[CellKey, int], variables: list[str]) -> dict[CellKey, int]:
    """The most seeds a cell may hold: eight times the seeds of the largest-scale cells along the
    undecided ``variables`` (the cells at the largest mean log-scale position), at least 16.

    Pitfall avoided: gain per unit of work alone pours seeds into the cheapest cells, which are
    the smallest, pre-asymptotic ones (530 seeds at t = 10 against 14 at t = 10^4 in a user's t
    grid); the asymptotic exponent lives at the large scales. A cap, not a reweighting of the
    gains: in calibration a reweighting cost a quarter more looks and a third of the power on the
    pre-asymptotic scenario, while the cap alone changed neither."""
    spans = {}
    for v in variables:
        logs = [math.log(float(dict(k)[v])) for k in design_cells]
        if max(logs) > min(logs):
            spans[v] = (min(logs), max(logs))
    if not spans:
        return {k: 10**9 for k in design_cells}
    place = {k: round(sum((math.log(float(dict(k)[v])) - lo) / (hi - lo) for v, (lo, hi) in spans.items()), 9) for k in design_cells}
    top = max(place.values())
    n_top = max(n for k, n in design_cells.items() if place[k] == top)
    return {k: max(16, 8 * n_top) if place[k] < top else 10**9 for k in design_cells}


def _match(fit_cell: dict, v: str, design_cells: dict) -> object:
    """The design-cell value of ``v`` at a fit cell (fit cells carry floats; keep the grid's type)."""
    x = fit_cell.get(v)
    for k in design_cells:
        val = dict(k).get(v)
        if val is not None and x is not None and math.isclose(float(val), float(x), rel_tol=1e-9):
            return val
    return x if x is not None else next(dict(k)[v] for k in design_cells)

