"""The Experiment type: what a claim's measurement is, and the fixed parameters of each family of experiments.

An :class:`Experiment` names the claim, the measured quantities, the setting (data, model,
trainer, measurement), the grid and the seeds. Its ``measure(cell, seed)`` runs one grid cell for
one seed and returns ``{quantity: value, ...}``; trajectory experiments return
``{"trajectory": [{"T": ..., quantity: ...}, ...]}`` and are fitted against T. The predicted
exponents are read from ``theory`` at comparison time, never retyped here. A free variable of the
claim (FVBS23: n) is picked inside the applicability window at each cell (:class:`FreeSetting`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from functools import lru_cache
from typing import Any, Callable, Literal, Mapping

from ibcheck.theory import get_claim
from ibcheck.theory.errors import InputError
from ibcheck.theory.window import applicability_window


# -- the fixed parameters of each family of experiments, with their defaults declared once ------------
# (an Experiment's ``fixed`` overrides them; a measure function reads them through ``design``)
@dataclass(frozen=True)
class TrainedNetwork:
    """A network trained by GD on k clusters (n = n_per_cluster k) or on the sphere. The defaults are
    LPLL25's fa network; an experiment's ``fixed`` sets the rest (FVBS23 and VYS22: a two-layer
    network with the loss-based step and, for FVBS23, the fraction ``eps`` of points allowed to resist)."""

    width: int = 5
    init_scale: float = 0.1
    steps: int = 800
    lr: float = 0.5
    n_per_cluster: int = 40
    points: int = 200
    target_log10_loss: float | None = None
    k: int = 2
    eps: float = 0.1
    networks: int = 3  # KKT claims: networks trained on each sample, from different initializations
    kkt_gd: int = 8  # the KKT engine: GD starts from per-cluster inits (numpy, in the data's span)
    kkt_steps: int = 2000  # ... steps each
    kkt_programs: int = 8  # ... cone programs per pattern (tie-aware polish, certified between programs)
    kkt_enumerate: int = 0  # ... every partition cone where there are at most this many (225 at k = 8)
    kkt_gd_max: int | None = None  # ... more GD starts, up to this many, until the unseen estimate is at most kkt_saturation
    kkt_saturation: float = 0.05  # ... the Good-Turing level (reported; without an objective it ends the GD starts)
    kkt_starts_max: int | None = None  # ... starts of every source, at most, while the record rule has not stopped
    kkt_ascent: int = 2  # ... moves over activation patterns tried from each best point (the hill-climb), and per record


@dataclass(frozen=True)
class LongRun:
    """One long GD run measured along its trajectory (LL20, SHNGS18)."""

    steps: int = 2000
    lr: float = 0.05
    schedule: str = "loss-based"
    target_log10_loss: float = -800.0
    records: int = 400
    up: float = 2 ** 0.2  # the loss-based step's growth factor after a step that lowered the loss (1: a fixed alpha)


@dataclass(frozen=True)
class GaussianModel:
    """SSTTM18's Gaussian model at a fixed l_inf radius."""

    eps: float = 0.25
    sigma_scale: float = 1.0  # sigma = sigma_scale d^(1/4): 1/32 is the edge of SSTTM18.cor.robust_upper's H1, 1 is c = 1


def design(cls, cell: dict):
    """The design ``cls`` at one cell: its declared defaults, overridden by the cell's fixed values."""
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in cell.items() if k in names})


@dataclass(frozen=True)
class FreeSetting:
    """A free variable of the claim chosen inside its window at each cell: ``variable`` (integer), the
    claim's other values ``at`` (e.g. eps, delta), and the pick (the smallest inside value)."""

    variable: str
    at: tuple[tuple[str, str], ...] = ()
    pick: str = "smallest"

    def window(self, claim_id: str, cell: dict) -> tuple[int | None, str]:
        """(the picked value or None, which hypotheses bind at the window's ends or why it is empty)."""
        return _window_pick(claim_id, self.variable, tuple(sorted((k, _text(v)) for k, v in cell.items())) + self.at)


def _text(x) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


@lru_cache(maxsize=4096)
def _window_pick(claim_id: str, free: str, at: tuple) -> tuple[int | None, str]:
    claim = get_claim(claim_id)
    names = set(claim.variable_names)
    w = applicability_window(claim, free, {k: v for k, v in at if k in names and k != free})
    if not w.intervals:
        return None, f"empty: {w.empty_because}"
    lo, hi = w.intervals[0]
    b = w.binding[0]
    if str(lo) == "-oo":  # a user's integer variable with no low end: no smallest value to pick
        return None, f"empty: {free}'s window is unbounded below ({w.interval_text(0)}): no smallest value to pick; give {free} a low end"
    return int(lo), f"{free} in [{lo}, {'oo' if hi is None else hi}] ({b['low']} binds below, {b['high'] or 'nothing'} above)"


@dataclass(frozen=True)
class Experiment:
    name: str
    claim: str
    quantities: tuple[str, ...]  # bound quantities this experiment measures
    description: str  # what is trained or built, on which data
    measure: Callable[[dict, int], dict]
    grid: dict
    quick_grid: dict
    fixed: dict = field(default_factory=dict)
    seeds: int = 3
    quick_seeds: int = 2
    trajectory: bool = False  # fit against T along each run instead of across cells
    quick_fixed: dict | None = None  # fixed settings for --quick (default: fixed)
    # The claim's variables at a cell beyond the cell itself (e.g. FVBS23's n = 20 k, eps, delta),
    # for evaluating its hypotheses; scalars the measure returns (VYS22's max_ip) are added too.
    hypothesis_values: Callable[[dict], dict] | None = None
    skip_hypotheses: dict = field(default_factory=dict)  # hypothesis -> why this design cannot evaluate it
    max_grid: dict = field(default_factory=dict)  # the largest value a budgeted sweep may extend each variable to
    design: type | None = None  # the dataclass of the fixed parameters the measure reads (their defaults)
    user: bool = False  # a user's experiment (ibcheck.experiment): its fixed values are its own, its results checked
    time_variable: str | None = None  # trajectories: the variable the series run along (default: T or t, or the one not swept)
    cost: Callable[[dict], float] | None = None  # relative work of one task at a cell (reference seconds; default 1)
    # built-ins: (seconds, {variable: exponent}) of one task on the reference machine (2 cores, one worker),
    # fitted to the timings stored by `make report`; budgets count this, never the wall clock
    cost_model: tuple[float, dict] | None = None
    # a free variable of the claim (FVBS23: n) picked inside the applicability window at each cell (window_design)
    free: FreeSetting | None = None
    kkt: bool = False  # the claim speaks of KKT points: rows carry certificates (kkt_sample) and only certified networks are measured
    # assumption claims whose hypotheses are part of "inside" too (FVBS23.asm.2_2 for Theorems 3.1 and 4.2), decided in
    # log space at each row from the same values (the cell, the measured scalars, hypothesis_values)
    assumptions: tuple[str, ...] = ()
    # values a measure returns, as the design predicts them before any run (a window design decides inside with them;
    # every row's measured value replaces them): FVBS23's max_mean_ip = 0 for exactly orthogonal means
    design_values: dict = field(default_factory=dict)

    def settings_at(self, cell: dict) -> dict:
        """The free settings the window design picks at ``cell`` (``{}`` without a window design, or where the
        window is empty: the experiment's own default then applies and the cell is outside)."""
        if self.free is None:
            return {}
        base = dict(cell)
        if self.hypothesis_values is not None:
            base.update(self.hypothesis_values(cell))
        value, _ = self.free.window(self.claim, base)
        return {} if value is None else {self.free.variable: value}

    def cost_of(self, cell: dict) -> float:
        """The declared work of one task at ``cell`` (reference seconds): deterministic, so a budget
        gives the same rounds and verdicts under any machine load."""
        if self.cost is not None:
            c = float(self.cost(dict(cell)))
            if not (math.isfinite(c) and c > 0):
                raise InputError(f"experiment {self.name}: cost({cell}) = {c!r}, not a finite number > 0")
            return c
        if self.cost_model is None:
            return 1.0
        cell = {**cell, **self.settings_at(cell)}
        scale, exps = self.cost_model
        return scale * math.prod(float(cell[v]) ** e for v, e in exps.items() if v in cell)

    def __post_init__(self):
        if self.user:
            return
        allowed = {f.name for f in fields(self.design)} if self.design is not None else set()
        for fixed in (self.fixed, self.quick_fixed or {}):
            unknown = set(fixed) - allowed
            if unknown:
                raise ValueError(f"{self.name}: fixed {sorted(unknown)} are not parameters of {getattr(self.design, '__name__', 'its design')}")

    def fixed_at(self, quick: bool) -> dict:
        return dict(self.quick_fixed if quick and self.quick_fixed is not None else self.fixed)

    def claim_values(self, cell: dict, value: dict) -> dict:
        """The claim's variables at one (cell, seed) row: the cell and fixed settings, the scalars
        the measure returned, and :attr:`hypothesis_values`."""
        out = dict(cell)
        out.update(self.design_values)  # before the run: what the design predicts; the measured values replace them
        out.update({k: v for k, v in (value or {}).items() if isinstance(v, (int, float)) and not isinstance(v, bool)})
        if self.hypothesis_values is not None:
            out.update(self.hypothesis_values(cell))
        out.update(self.settings_at(cell))
        return out


RowStatus = Literal["ok", "diverged", "failed"]


@dataclass(frozen=True)
class Row:
    """One (cell, seed) of an experiment as stored: its cell, seed, status, the measure's value (JSON-ready, censored
    values encoded; None when failed), the error and the failure's kind (its own field, never read from the text),
    and the seconds it took. The sweep store returns these; every later stage reads their fields.

    Pitfall avoided: rows as dicts with the cell's variables flattened beside ``status`` and ``value``, whose keys
    every reader spelled again."""

    cell: Mapping[str, float]
    seed: int
    status: RowStatus
    value: Any = None
    key: str = ""
    error: str | None = None
    seconds: float | None = None
    failure: str | None = None

    @property
    def measured(self) -> bool:
        """ok or diverged, with a value (the rows the hypotheses and the KKT records read)."""
        return self.status in ("ok", "diverged") and isinstance(self.value, dict)

    def at(self, variables) -> dict:
        """The cell's values of ``variables``."""
        return {v: self.cell[v] for v in variables}

    def as_json(self) -> dict:
        """The row as results.parquet and earlier versions held it: the cell's variables beside the rest."""
        return {"key": self.key, **self.cell, "seed": self.seed, "status": self.status, "value": self.value, "error": self.error,
                "seconds": self.seconds, "failure": self.failure}
