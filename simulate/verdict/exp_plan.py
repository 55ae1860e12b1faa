"""An exp-type bound's plan, checked by simulation (issue 57, item 2): the plan is sized from the exp-type test itself.

Takes the analysis of an inconclusive exp-type bound (rows of ``value = z = log(1/y)`` per seed,
:mod:`simulate.verdict.exp_test`), the rows and the variable the plan grows; returns the data's two stories of z, each
able to draw a simulated sweep at a design, for :func:`simulate.verdict.plan_check.check_plan`:

* **the claim with its lower-order term**: ``z = a + c h + b log h`` (least squares over the cell means, weighted by
  seeds): a Gaussian-tail prefactor ``h^-1/2`` is ``b log h``, part of the claim's family; the right verdict is
  ``consistent``;
* **a log factor on h**: ``z = a + c h (log x)^s`` along the planned variable x (s = -1 where the bound forbids a slower
  decay, an Omega bound on log(1/y) such as O(exp(-c h)); +1 for the other side; the nearer of the two for Theta); the
  right verdict is ``inconsistent``.

The seeds' noise is z's pooled spread within cells (z's noise is additive: log-normal seeds of y). The ratio planner's
envelope (a log factor of y) says nothing about log(1/y), so an exp-type plan carries none.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ibcheck.simulate.verdict.plan_check import _claim_log, _x_of, design_cells
from ibcheck.simulate.verdict.rules import LOWER, UPPER


def _h(an, row: dict) -> float:
    return math.exp(_claim_log(an, row))


@dataclass(frozen=True)
class ExpTruth:
    """One story of z = log(1/y) along ``variable``: ``a + c h (log x)^sign + b log h``, and the verdict it must get."""

    name: str
    verdict: str
    variable: str
    a: float
    c: float
    b: float
    sign: float  # the log factor on h (0: none)
    power: float = 0.0  # a power of h on h (the data's own deviation, where fitted): c h^(1 + power)

    def mean(self, h: float, x: float) -> float:
        return self.a + self.c * h ** (1.0 + self.power) * math.log(x) ** self.sign + self.b * math.log(h)

    def text(self, x: str = "x") -> str:
        """The story's form of log(1/y), in the variable named ``x``."""
        factor = (f" (log {x})^{self.sign:+.0f}" if self.sign else "") + (f" h^{self.power:+.2g}" if self.power else "")
        low = f" {'+' if self.b >= 0 else '-'} {abs(self.b):.3g} log h" if self.b else ""
        return f"log(1/y) = {self.a:.3g} + {self.c:.3g} h{factor}{low}"

    def as_json(self, x: str = "x") -> dict:
        return {"name": self.name, "verdict": self.verdict, "z": self.text(x), "a": self.a, "c": self.c, "b": self.b, "log_factor": self.sign,
                "power": self.power}

    def draw(self, an, rows: list[dict], variable: str, values, seeds: int, sigma: float, rng: np.random.Generator) -> list[dict]:
        """One simulated sweep of z (:func:`simulate.verdict.plan_check.design_cells`), ``seeds`` rows per cell."""
        out = []
        for cell in design_cells(an, rows, variable, values):
            mu = self.mean(_h(an, cell), cell[variable])
            combo = tuple(cell[u] for u in an.variables if u != variable)
            logs = {"log_" + v: math.log(val) for v, val in cell.items()}
            for s, e in enumerate(rng.standard_normal(seeds)):
                out.append({**cell, **logs, "seed": s, "run": f"{combo}/{cell[variable]}/{s}", "value": mu + sigma * float(e)})
        return out


def _cells(an, rows: list[dict], variable: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """Per cell (every variable's value): h, x, the mean z, the seeds; and z's pooled spread within cells."""
    groups: dict[tuple, list[float]] = {}
    where: dict[tuple, tuple[float, float]] = {}
    for r in rows:
        z = r.get("value")
        if not isinstance(z, (int, float)) or not math.isfinite(z) or r.get("censor"):
            continue
        key = tuple(round(_x_of(r, v), 9) for v in an.variables)
        groups.setdefault(key, []).append(float(z))
        where[key] = (_h(an, r), _x_of(r, variable))
    keys = sorted(groups)
    ss = sum(float(((np.array(groups[k]) - np.mean(groups[k])) ** 2).sum()) for k in keys)
    df = sum(len(groups[k]) - 1 for k in keys)
    return (np.array([where[k][0] for k in keys]), np.array([where[k][1] for k in keys]), np.array([np.mean(groups[k]) for k in keys]),
            np.array([len(groups[k]) for k in keys], dtype=float), math.sqrt(ss / df) if df > 0 else math.nan)


def _ols(X: np.ndarray, z: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, float]:
    w = np.sqrt(n)
    beta, *_ = np.linalg.lstsq(X * w[:, None], z * w, rcond=None)
    r = (z - X @ beta) * w
    return beta, float(r @ r)


def exp_stories(an, rows: list[dict], variable: str) -> tuple[tuple[ExpTruth, ...], float] | None:
    """The two stories (module docstring) fitted on the cell means, and the data's own deviation as a third where it lies
    on a forbidden side (:func:`_own_deviation`); and z's seed noise. None where they cannot be fitted (fewer than 4
    cells, values of the variable <= 1, no spread within cells)."""
    h, x, z, n, sigma = _cells(an, rows, variable)
    if len(z) < 4 or not np.all(h > 0) or not np.all(x > 1) or not (sigma > 0):
        return None
    (a, c, b), _ = _ols(np.column_stack([np.ones(len(z)), h, np.log(h)]), z, n)
    claim = ExpTruth("the claim with its lower-order term", "consistent", variable, float(a), float(c), float(b), 0.0)
    signs = [-1.0] if an.kind in LOWER else [1.0] if an.kind in UPPER else [-1.0, 1.0]
    fits = []
    for s in signs:
        (a1, c1), rss = _ols(np.column_stack([np.ones(len(z)), h * np.log(x) ** s]), z, n)
        fits.append((rss, ExpTruth(f"a log {variable} factor {'less' if s < 0 else 'more'} on h", "inconsistent", variable,
                                   float(a1), float(c1), 0.0, s)))
    stories = [claim, min(fits, key=lambda f: f[0])[1]]
    own = _own_deviation(h, x, z, n, signs)
    if own is not None:
        stories.append(own)
    return tuple(stories), sigma


POWERS = np.round(np.arange(-0.5, 0.5 + 1e-9, 0.01), 2)  # the powers of h on h the data's own deviation is fitted over


def _own_deviation(h: np.ndarray, x: np.ndarray, z: np.ndarray, n: np.ndarray, signs: list[float]) -> ExpTruth | None:
    """The data's own deviation, ``z = a + c h^(1 + e)`` (e on POWERS, a and c by least squares), as a third story where
    e lies on a side the bound forbids (e < 0, a slower decay, under an Omega bound on log(1/y)): the design must also
    decide the move the data show, a function of h that a lower-order term of h partly mimics, not only a log factor along
    the variable (an exp(-0.3 h^0.8) named plans that decided it in 5 of 9 runs when only the log factor was simulated).
    None where the fitted e is on the allowed side or 0."""
    best = min(((_ols(np.column_stack([np.ones(len(z)), h ** (1.0 + e)]), z, n), e) for e in POWERS), key=lambda t: t[0][1])
    (a, c), _ = best[0]
    e = float(best[1])
    if e == 0 or not any(e * s > 0 for s in signs) or not c > 0:
        return None
    return ExpTruth(f"the data's own deviation, h^{1 + e:.2g} in place of h", "inconsistent", "", float(a), float(c), 0.0, 0.0, e)
