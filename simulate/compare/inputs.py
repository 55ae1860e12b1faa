"""The one validation boundary of a comparison: every value a user gives is checked here, once.

The API (:func:`ibcheck.compare`, :func:`ibcheck.verdict`, :func:`ibcheck.report`), the options of a
comparison (:class:`~ibcheck.simulate.compare.driver.CompareOptions`), its design stage (the grid, which
needs the claim) and the CSV path all call these functions, so the command line, a script and a notebook
are refused alike, before anything runs or is written. Each refusal is an
:class:`~ibcheck.errors.InputError` naming the parameter, the value and the accepted range.

Pitfall avoided: checks written at each entry drift apart (the command line once swept a grid of
non-integer d for 32 s that the API refused at once), and a value refused deep inside a stage
(``KeyError: 'k'``) reads as a bug.
"""
from __future__ import annotations

import math
import numbers
import os
from typing import Mapping, Sequence

from ibcheck.theory.argtypes import refused, require_bool, require_choice, require_float, require_int

MAX_GRID_VALUE = 2**53  # float64 holds every integer up to here; no simulation allocates past it either
MAX_WORKERS = 1024
MAX_SEEDS = 100_000  # per cell: a larger count is surely a typo (and would allocate its tasks at once)
MAX_WORK = 1e7  # reference seconds of budget (about 115 days of one core's work)
OFFSETS = ("fit", "known")
SPENDING = ("pocock", "obrien-fleming")


def check_bool(name: str, value) -> bool:
    """True or False (a numpy bool too); ``'no'``, ``1``, ``nan`` or None are refused."""
    return require_bool(name, value)


def local_cores() -> int:
    """The cores this process may run on (its affinity, else the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def check_workers(workers, scheduler: str | None = None) -> int:
    """Worker processes: at most the local cores, since a CPU-bound sweep gains nothing from more (``--workers
    1000`` on 2 cores started 38 processes and ran 20x slower); with a remote ``scheduler``, up to MAX_WORKERS."""
    w = require_int("workers", workers, 1, high=MAX_WORKERS)
    cores = local_cores()
    if scheduler is None and w > cores:
        raise refused("workers", w, f"is out of range: at most {cores} here (the cores this machine gives the process; "
                      "more processes than cores only slow a sweep). A remote Dask cluster takes more, with a scheduler address")
    return w


def check_seeds(seeds) -> int | None:
    return None if seeds is None else require_int("seeds", seeds, 1, high=MAX_SEEDS)


def check_plan_trials(trials) -> int:
    """The simulated trials per truth that check a printed plan (simulate.verdict.plan_check): an integer in 0..200 (0: no
    plan is checked, and none is named)."""
    return require_int("plan_trials", trials, 0, high=200)


def check_margin(name: str, value) -> float | None:
    """An explicit tolerance: None (the resolution decides), or a finite number in (0, 10] (a Fraction or a numpy
    scalar too), as a float."""
    return None if value is None else require_float(name, value, 0.0, strict=True, high=10.0)


def check_work(name: str, value) -> float | None:
    """A budget of work (reference seconds) or a wall-clock cap: None, or a finite number in (0, 1e7]."""
    return None if value is None else require_float(name, value, 0.0, strict=True, high=MAX_WORK)


def check_choice(name: str, value, accepted: Sequence[str]) -> str:
    return require_choice(name, value, tuple(accepted))


def check_text(name: str, value, optional: bool = False) -> str | None:
    """A non-empty string (or None when ``optional``)."""
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip():
        raise refused(name, value, "is not accepted: must be a non-empty string")
    return value


def _mapping(name: str, value, example: str) -> Mapping:
    if not isinstance(value, Mapping):
        raise refused(name, value, f"is not accepted: must be a mapping, e.g. {name}={example}")
    for k in value:
        if not isinstance(k, str):
            raise refused(name, value, f"is not accepted: its keys must be names (strings), not {k!r}")
    return value


def check_constants(constants, claim=None) -> dict[str, float] | None:
    """``{"C": 0.5}``: each a finite number > 0, and a constant of ``claim`` when given (None when empty)."""
    if constants is None:
        return None
    out = {}
    for k, v in _mapping("constants", constants, "{'C': 0.5}").items():
        if claim is not None and k not in claim.constants:
            raise refused("constants", dict(constants), f"names {k!r}, but {claim.id} has no constant {k!r}; its constants are "
                          f"{', '.join(claim.constants) or 'none'}")
        out[k] = require_float(f"constants[{k!r}]", v, 0.0, strict=True)
    return out or None


def check_fit_from(fit_from) -> dict[str, float] | None:
    """``{"T": 1e3}``: fit only rows with T >= 1000; each a finite number > 0 (None when not given)."""
    if fit_from is None:
        return None
    return {k: require_float(f"fit_from[{k!r}]", v, 0.0, strict=True) for k, v in _mapping("fit_from", fit_from, "{'T': 1e3}").items()} or None


def check_offsets(offsets) -> str:
    return check_choice("offsets", offsets, OFFSETS)


def check_spending(spending) -> str:
    return check_choice("spending", spending, SPENDING)


def check_store(store) -> str | None:
    """The sweep's SQLite file: None (a temporary one), or a path whose directory exists, which is not a directory
    and not a link (a dangling link would make the comparison write its database wherever the link points)."""
    if store is None:
        return None
    if not isinstance(store, (str, os.PathLike)) or not os.fspath(store):
        raise refused("store", store, "is not accepted: must be a path to a SQLite file (a string), or None for a temporary one")
    path = os.fspath(store)
    if not isinstance(path, str):
        raise refused("store", store, "is not accepted: must be a path given as text")
    if os.path.islink(path):
        raise refused("store", store, "is not accepted: it is a symbolic link; give the path of the file itself")
    if os.path.isdir(path):
        raise refused("store", store, "is not accepted: it is a directory; give a file path such as OUT/sweep.sqlite")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise refused("store", store, f"is not accepted: its directory {parent} does not exist")
    return path


def check_grid(grid, claim, experiment) -> dict[str, list] | None:
    """A grid for ``claim``'s ``experiment``: each of the experiment's swept variables given (one value holds it
    fixed), no other name, each value a finite number > 0 in the variable's domain (d an integer >= 2, eps in
    (0, 1), ...), no value twice; the values sorted. None: the experiment's own grid."""
    if grid is None:
        return None
    grid = _mapping("grid", grid, "{'d': [64, 128, 256], 'k': [2, 4]}")
    variables = {v.name: v for v in claim.variables}
    swept = list(experiment.grid)
    known = set(variables) | set(swept)
    for v in grid:
        if v not in known:
            raise refused("grid", dict(grid), f"names {v}, which is not a variable of {claim.id} or of its experiment; the "
                          f"experiment sweeps {', '.join(swept)}")
    missing = [v for v in swept if v not in grid]
    if missing:
        raise refused("grid", dict(grid), f"gives no {', '.join(missing)}: {claim.id}'s experiment sweeps {', '.join(swept)}; give "
                      "every one (a single value holds it fixed)")
    out = {}
    for v, vals in grid.items():
        if isinstance(vals, (str, bytes)) or not isinstance(vals, Sequence) and not hasattr(vals, "tolist"):
            raise refused(f"grid[{v!r}]", vals, "is not a list of numbers, e.g. [64, 128, 256]")
        vals = list(vals.tolist() if hasattr(vals, "tolist") else vals)
        if not vals:
            raise refused(f"grid[{v!r}]", vals, "is not accepted: give at least one value")
        if len(vals) > 1000:
            raise refused(f"grid[{v!r}]", f"{len(vals)} values", "is out of range: at most 1000 values per variable")
        if any(isinstance(x, bool) or type(x).__name__ == "bool_" or not isinstance(x, numbers.Real)
               or not (math.isfinite(float(x)) and float(x) > 0) for x in vals):
            raise refused(f"grid[{v!r}]", vals, "is out of range: grid values must be finite numbers > 0")
        if any(float(x) > MAX_GRID_VALUE for x in vals):
            raise refused(f"grid[{v!r}]", vals, f"is out of range: grid values must be at most 2^53 = {MAX_GRID_VALUE} "
                          "(where float64 stops holding every integer)")
        if v in variables:  # the claim's own domain: d an integer >= 2, eps in (0, 1), ...
            vals = [variables[v].check(int(x) if isinstance(x, numbers.Integral) else float(x)) for x in vals]
        if len(set(vals)) != len(vals):
            raise refused(f"grid[{v!r}]", vals, "is not accepted: a value is given twice")
        out[v] = sorted(vals)
    return out
