"""The experiments of the current registry: the built-ins, a user's (the :func:`experiment` decorator), and the lookup by claim.

A user's experiment is checked here: its quantities default to the claim's bounds, its values must
be finite numbers or bounds, and a trajectory's series must line up.
"""
from __future__ import annotations

import math
from collections.abc import MutableMapping
from dataclasses import replace
from typing import Callable

import numpy as np

from ibcheck.simulate.experiments.base import Experiment
from ibcheck.simulate.experiments.builtin import BUILTIN
from ibcheck.simulate.substrate.censored import AtLeast, AtMost
from ibcheck.theory import get_claim
from ibcheck.theory.argtypes import refused, require_int
from ibcheck.theory.errors import InputError
from ibcheck.theory.outdir import check_claim_id
from ibcheck.theory.registry import current


class _Experiments(MutableMapping):
    """The experiments of the current registry (:func:`ibcheck.theory.registry.current`): a user's
    (registered there by :func:`experiment`) over the built-in ones. A test's own registry sees
    the built-ins and only its own user experiments."""

    def _own(self) -> dict:

        return current().experiments

    def __getitem__(self, name: str) -> Experiment:
        own = self._own()
        return own[name] if name in own else BUILTIN[name]

    def __setitem__(self, name: str, exp: Experiment) -> None:
        self._own()[name] = exp

    def __delitem__(self, name: str) -> None:
        del self._own()[name]

    def __iter__(self):
        return iter(dict.fromkeys([*BUILTIN, *self._own()]))

    def __len__(self) -> int:
        return len(dict.fromkeys([*BUILTIN, *self._own()]))


EXPERIMENTS = _Experiments()


def experiment(claim: str, grid: dict, seeds: int = 3, quick_grid: dict | None = None, quick_seeds: int | None = None,
               fixed: dict | None = None, max_grid: dict | None = None, description: str = "", quantities: tuple[str, ...] = (),
               trajectory: bool | str = False, cost=None):
    """Decorator: bind ``measure(cell, seed) -> {quantity: value}`` to ``claim`` (a user's experiment).

    The quantities default to the claim's bounds; every one must come back finite (or a bound:
    ``AtLeast(r)``/``AtMost(r)``), or the row is recorded as failed with the reason. ``grid`` maps
    swept variables to values, ``fixed`` adds settings every cell sees; ``quick_grid``/``quick_seeds``
    are used with ``quick=True``.

    ``trajectory=True``: ``measure(cell, seed)`` returns one run as series, e.g.
    ``{"t": [...], "margin_gap": [...]}``; it runs once per seed, is stored once, and the fit runs
    along the time variable (the claim's one variable that is not swept; ``trajectory="t"`` names it)
    with each run fitted on its own and the runs combined. ``cost(cell)`` is the relative work of one
    task (default 1), which ``budget`` counts."""

    check_claim_id(claim)
    require_int("seeds", seeds, 1, high=100_000)
    if quick_seeds is not None:
        require_int("quick_seeds", quick_seeds, 1, high=100_000)
    for name, g in (("grid", grid), ("quick_grid", quick_grid), ("max_grid", max_grid), ("fixed", fixed)):
        if g is not None and not isinstance(g, dict):
            raise refused(name, g, "is not accepted: must be a dict, e.g. {'d': [64, 128, 256]}")
    if not isinstance(description, str):
        raise refused("description", description, "is not accepted: must be a string")
    if isinstance(quantities, str) or not isinstance(quantities, (list, tuple)) or not all(isinstance(q, str) for q in quantities):
        raise refused("quantities", quantities, "is not accepted: must be a tuple of quantity names")
    if not isinstance(grid, dict) or not grid:
        raise InputError(f"experiment {claim}: grid={grid!r} must map each swept variable to its values, e.g. {{'d': [64, 128, 256]}}",
                         "grid", grid)

    if not isinstance(trajectory, (bool, str)) or trajectory == "":
        raise InputError(f"experiment {claim}: trajectory={trajectory!r} must be True, False or the name of the time variable")
    if cost is not None and not callable(cost):
        raise InputError(f"experiment {claim}: cost={cost!r} must be a function of the cell (its relative work)")

    def register(measure: Callable[[dict, int], dict]) -> Callable[[dict, int], dict]:
        if claim in BUILTIN:
            raise InputError(f"experiment {claim}: the claim already has a built-in experiment")
        EXPERIMENTS[claim] = Experiment(claim, claim, tuple(quantities), description or f"your measure {measure.__name__}", measure,
                                        dict(grid), dict(quick_grid or grid), dict(fixed or {}), seeds, quick_seeds or seeds,
                                        trajectory=bool(trajectory), max_grid=dict(max_grid or {}), user=True,
                                        time_variable=trajectory if isinstance(trajectory, str) else None, cost=cost)
        return measure

    return register


def user_quantities(exp: Experiment) -> tuple[str, ...]:
    """The quantities a user's experiment must return: its own, else the claim's bounds' quantities."""
    if exp.quantities:
        return exp.quantities

    return tuple(dict.fromkeys(b.quantity for b in get_claim(exp.claim).bounds if b.kind != "->"))


def check_user_value(exp: Experiment, value) -> str | None:
    """Why a user's measurement cannot be used (not a dict, a quantity missing or not finite), or None."""
    if not isinstance(value, dict):
        return f"the measure returned a {type(value).__name__}, not a dict of quantities"
    for q in user_quantities(exp):
        x = value.get(q)
        if x is None:
            return f"quantity {q!r} missing from the measure's result (it returned {', '.join(value) or 'nothing'})"
        if isinstance(x, (AtLeast, AtMost)):
            continue  # a censored value: checked when built (a finite bound > 0)
        if exp.trajectory and isinstance(x, (list, tuple)):
            continue  # checked with the series (check_series)
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
            return f"quantity {q!r} is {x!r}, not a finite number (a bound is ibcheck.AtLeast(r) or ibcheck.AtMost(r))"
    return None


def as_trajectory(exp: Experiment, value: dict) -> tuple[dict | None, str | None]:
    """A user's series ``{"t": [...], "q": [...]}`` as trajectory points ``{"trajectory": [{"t": .., "q": ..}, ...]}``,
    or (None, why it cannot be used)."""
    tv = exp.time_variable
    if tv is None or tv not in value:
        return None, (f"a trajectory measure returns series keyed by the time variable ({tv or 't'}) and each quantity, "
                      f"e.g. {{'t': [...], 'gap': [...]}}; it returned {', '.join(value) or 'nothing'}")
    qs = user_quantities(exp)
    series = {k: value[k] for k in (tv, *qs)}
    n = None
    for k, xs in series.items():
        if not isinstance(xs, (list, tuple, np.ndarray)):
            return None, f"{k!r} is {type(xs).__name__}, not a series (a list of numbers, one per time)"
        if n is None:
            n = len(xs)
        if len(xs) != n:
            return None, f"the series have different lengths ({tv}: {len(series[tv])}, {k}: {len(xs)})"
        for i, x in enumerate(xs):
            if isinstance(x, bool) or not isinstance(x, (int, float, np.floating, np.integer)) or not (math.isfinite(float(x)) and x > 0):
                return None, f"{k}[{i}] is {x!r}, not a finite number > 0"
    if not n or n < 3:
        return None, f"a trajectory needs at least 3 points; it has {n or 0}"
    points = [{k: float(series[k][i]) for k in series} for i in range(n)]
    return {"trajectory": points, **{k: v for k, v in value.items() if k not in series}}, None


def experiment_for(claim_id: str) -> Experiment:


    if claim_id in EXPERIMENTS:
        exp = EXPERIMENTS[claim_id]
        if not exp.user:
            return exp
        exp = replace(exp, quantities=user_quantities(exp))
        if exp.trajectory and exp.time_variable is None:
            claim = get_claim(claim_id)
            free = [v.name for v in claim.variables if v.name not in exp.grid and v.name not in exp.fixed and v.tends_to != "const"]
            if len(free) != 1:
                raise InputError(f"experiment {claim_id}: trajectory=True, but the time variable is ambiguous among "
                                 f"{', '.join(free) or 'none'}: name it, e.g. trajectory='t'")
            exp = replace(exp, time_variable=free[0])
        return exp
    get_claim(claim_id)  # unknown ids get the nearest-id suggestion
    raise InputError(f"{claim_id} has no experiment (nothing measurable is bound to it); claims that can be compared: {', '.join(EXPERIMENTS)}")
