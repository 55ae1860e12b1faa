"""Does the claim's theorem apply where it was measured? Its hypotheses at every sweep cell.

This is the link between ``theory`` and ``simulate``: each (cell, seed) row is turned into a
point of the claim's variables (the cell, the experiment's fixed settings, and scalars it
measured, such as VYS22's ``max_ip``) and every hypothesis is decided there by the theory
layer's log-space evaluation (:func:`theory.evaluate.evaluate_hypothesis`). Symbolic constants
are 1 unless the user sets them. A cell is *inside* the window when every quantitative
hypothesis holds at every seed of it; qualitative hypotheses ("the model is L-homogeneous")
cannot be evaluated and are listed as assumed, never counted as held.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Sequence

import sympy as sp

from ibcheck.simulate.experiments.base import Row
from ibcheck.theory.cone import claim_cone
from ibcheck.theory.errors import InputError
from ibcheck.theory.evaluate import evaluate_hypothesis, make_point


@dataclass
class Applicability:
    """Per-cell truth of the hypotheses, and the counts summary.json reports."""

    claim: str
    constants: dict[str, float]
    cells: list[dict]  # {"cell": {...}, "inside": bool, "hypotheses": {H: True/False/None}, "seeds": n}
    hypotheses: dict[str, dict] = field(default_factory=dict)  # H -> {"text", "fails", "unknown", "qualitative", "skipped"}
    skipped: dict[str, str] = field(default_factory=dict)  # H -> why the experiment cannot evaluate it
    rays: str = ""  # the (d, k) rays k = d^beta the experiment's assumptions allow (:func:`assumption_rays`)

    @property
    def total(self) -> int:
        return len(self.cells)

    @property
    def inside(self) -> int:
        return sum(c["inside"] for c in self.cells)

    def inside_keys(self) -> set[tuple]:
        return {tuple(sorted(c["cell"].items())) for c in self.cells if c["inside"]}

    def as_json(self) -> dict:
        return {"cells_total": self.total, "cells_inside": self.inside, "constants": self.constants,
                "constants_note": "symbolic constants not given are 1",
                "per_hypothesis": self.hypotheses, "skipped": self.skipped,
                "assumed": [h for h, v in self.hypotheses.items() if v["qualitative"]],
                "unverified": [h for h, v in self.hypotheses.items() if v.get("unverified")], "rays": self.rays,
                "cells": self.cells}

    def describe(self) -> str:
        fails = ", ".join(f"{h} fails at {v['fails']}" for h, v in self.hypotheses.items() if v["fails"])
        unverified = [h for h, v in self.hypotheses.items() if v.get("unverified")]
        return (f"{self.inside}/{self.total} cells inside the hypotheses" + (f" ({fails})" if fails else "")
                + (f"; counted with forms marked unverified: {', '.join(unverified)}" if unverified else "")
                + (f"; {self.rays}" if self.rays else ""))


def _point_text(x) -> str:
    if isinstance(x, bool):
        return str(int(x))
    if isinstance(x, int):
        return str(x)
    return repr(float(x))


def _assumptions(exp) -> list:
    """The assumption claims ``exp`` names (:attr:`Experiment.assumptions`)."""
    from ibcheck.theory import get_claim  # heavy: none (the registry; kept beside its one use)

    return [get_claim(a) for a in getattr(exp, "assumptions", ()) or ()]


def _named(owner, claim, h):
    """An assumption's hypothesis under a name that says whose it is (``FVBS23.asm.2_2 H1``); the claim's own keep theirs."""
    return h if owner is claim else replace(h, name=f"{owner.id} {h.name}")


def _point(claim, values: dict, constants: dict):
    """The point of ``claim``'s variables in ``values`` (and the constants); None where a value is refused."""
    raw = {name: _point_text(x) for name, x in values.items() if name in claim.variable_names and x is not None}
    raw.update({c: _point_text(x) for c, x in constants.items()})
    try:
        return make_point(claim, raw)
    except InputError:
        return None


def applicability(claim, exp, rows: Sequence[Row], cell_vars: list[str], fixed: dict | None = None,
                  constants: dict[str, float] | None = None) -> Applicability:
    """Evaluate every hypothesis of ``claim`` at every (cell, seed) row of a sweep.

    ``rows`` are sweep rows (cell variables, ``seed``, ``status``, ``value``); failed rows are
    skipped (they have no measured scalars). ``exp.claim_values(cell, value)`` gives the
    claim's variables at a row.
    """
    constants = dict(constants or {})
    owners = [(claim, h) for h in claim.hypotheses] + [(a, h) for a in _assumptions(exp) for h in a.hypotheses]
    hyps = [_named(owner, claim, h) for owner, h in owners]
    skipped = dict(getattr(exp, "skip_hypotheses", {}) or {})
    per = {h.name: {"text": h.text, "formula": None if h.expr is None else sp.sstr(h.expr), "fails": 0, "unknown": 0,
                    "qualitative": h.qualitative, "skipped": h.name in skipped, "unverified": h.unverified} for h in hyps}
    by_cell: dict[tuple, dict] = {}
    for r in rows:
        if r.status not in ("ok", "diverged"):
            continue
        cell = r.at(cell_vars)
        key = tuple(sorted(cell.items()))
        entry = by_cell.setdefault(key, {"cell": cell, "hypotheses": {h.name: True for h in hyps if not h.qualitative and h.name not in skipped},
                                         "seeds": 0})
        entry["seeds"] += 1
        value = r.value if isinstance(r.value, dict) else {}
        values = exp.claim_values({**(fixed or {}), **cell}, value)
        run = _run_points(exp, claim, value)  # a trajectory: every point of the run (its time is a claim variable)
        ok_at = []
        for at in run:
            here = {**values, **at}
            points = {c.id: _point(c, here, constants) for c in {id(o): o for o, _ in owners}.values()}
            ok = True
            for (owner, _), h in zip(owners, hyps):
                if h.qualitative or h.name in skipped:
                    continue
                point = points[owner.id]
                hv = evaluate_hypothesis(h, point) if point is not None else None
                holds = None if hv is None or hv.missing else hv.holds
                ok = ok and holds is True
                prev = entry["hypotheses"][h.name]
                entry["hypotheses"][h.name] = None if prev is None or holds is None else (prev and holds)
            ok_at.append(ok)
        if len(run) > 1:  # the run's points inside from a time on (t >= n fails at the first points only): where they start
            tail = len(ok_at)
            while tail and ok_at[tail - 1]:
                tail -= 1
            start = run[tail].get(_time_variable(exp, claim)) if tail < len(run) else None
            entry.setdefault("starts", []).append(start)
    cells = []
    for key, e in sorted(by_cell.items(), key=lambda kv: [float(x) for _, x in kv[0]]):
        e["inside"] = all(v is True for v in e["hypotheses"].values())
        starts = e.pop("starts", None)
        if not e["inside"] and starts and all(isinstance(x, (int, float)) for x in starts) and None not in e["hypotheses"].values():
            e["inside"], e["inside_from"] = True, float(max(starts))  # inside from that time on, in every run
        for h, v in e["hypotheses"].items():
            per[h]["fails"] += v is False
            per[h]["unknown"] += v is None
        cells.append(e)
    last = next((r for r in reversed(rows) if r.status in ("ok", "diverged") and isinstance(r.value, dict)), None)
    rays = assumption_rays(exp, exp.claim_values({**(fixed or {}), **last.at(cell_vars)}, last.value) if last else {}, constants)
    return Applicability(claim.id, constants, cells, per, skipped, rays)


RUN_POINTS = 1000  # the most points of one run the hypotheses are evaluated at (evenly spaced, the last one included)


def _time_variable(exp, claim) -> str:
    """A trajectory's time: the experiment's ``time_variable``, else T or t as the claim names it."""
    return getattr(exp, "time_variable", None) or ("T" if "T" in set(claim.variable_names) else "t")


def _run_points(exp, claim, value: dict) -> list[dict]:
    """The claim's variables that change along a trajectory row, one dict per point: the time (``T``/``t``, or the
    experiment's ``time_variable``; from its log10 where the run stored that) and the point's other numbers. ``[{}]``
    for a row that is not a trajectory, so that its one point is the row's own values.

    Pitfall avoided: a hypothesis on the trajectory's own variable (t >= n) read the row's scalars alone, found no t, and
    called every cell unknown: "the hypotheses fail at every simulated cell" on runs whose every point satisfied it."""
    series = value.get("trajectory") if getattr(exp, "trajectory", False) else None
    if not isinstance(series, list) or not series:
        return [{}]
    names = set(claim.variable_names)
    v0 = _time_variable(exp, claim)
    step = max(1, len(series) // RUN_POINTS)
    picked = series[::step] + ([series[-1]] if (len(series) - 1) % step else [])
    out = []
    for tr in picked:
        if not isinstance(tr, dict):
            continue
        at = {k: x for k, x in tr.items() if k in names and isinstance(x, (int, float)) and not isinstance(x, bool)}
        lg = tr.get("log10_" + v0, tr.get("log10_T"))
        if v0 not in at and isinstance(lg, (int, float)) and math.isfinite(lg):
            at[v0] = 10.0 ** lg if lg < 308 else math.inf
        out.append(at)
    return out or [{}]


def assumption_rays(exp, values: dict, constants: dict) -> str:
    """The rays k = d^beta along which the experiment's assumptions let d and k grow together: each assumption's
    asymptotic cone (:func:`theory.cone.claim_cone`, checked exactly at d = 10^12 and 10^100, parameters such as kappa
    as at the sweep's last cell, constants 1 unless given), the same cone the verdict's directions come from. Empty when
    the experiment names no assumption or sweeps no (d, k)."""
    out = []
    for a in _assumptions(exp):
        if not {"d", "k"} <= set(a.variable_names):
            continue
        held = {v: values[v] for v in ("d", "k") if isinstance(values.get(v), (int, float))}
        cone = claim_cone([a], ["d", "k"], held=held, values={**values, **(constants or {})})
        iv = cone.interval("d", "k") if cone is not None else (0.0, math.inf)
        text = ("none" if iv is None else
                (f"beta <= {iv[1]:g}" if math.isfinite(iv[1]) else "any beta") if iv[0] == 0 else f"{iv[0]:g} <= beta <= {iv[1]:g}")
        out.append(f"{a.id} allows the rays k = d^beta with {text} (checked at d = 1e12 and 1e100)")
    return "; ".join(out)


def window_cone(exp, claim, rows: list[Row], fit_vars: list[str], cell_vars: list[str], toward_zero: frozenset[str] = frozenset()):
    """The window's asymptotic cone over the fitted variables (:func:`theory.cone.claim_cone`) under the claim's
    hypotheses and the assumptions its experiment names, parameters (kappa) as the experiment states them at its last
    measured cell, each other fitted variable held at its smallest swept value; None where no hypothesis speaks of the
    fitted variables alone."""
    ok = [r for r in rows if r.status in ("ok", "diverged") and isinstance(r.value, dict)]
    if not ok:
        return None
    values = exp.claim_values(ok[-1].at(cell_vars), ok[-1].value)
    held = {v: min(float(r.cell[v]) for r in ok if r.cell.get(v) is not None) for v in fit_vars if any(r.cell.get(v) is not None for r in ok)}
    held = {v: int(x) if x.is_integer() else x for v, x in held.items()}
    return claim_cone([claim, *_assumptions(exp)], list(fit_vars), toward_zero, held, values)


def kept_cells(app: Applicability, fit_vars: list[str], inside_only: bool = False, include_outside: bool = False) -> set | None:
    """The cells the fit reads (None: every cell), for ``compare`` and ``verdict --data`` alike. Inside the hypotheses by
    default: where enough cells lie inside the claim's window to fit, the cells outside it are run (and reported) but
    never fitted, unless ``include_outside``.
    Pitfall avoided: cells outside the window, where the measure may saturate, decided a claim about the inside; and the
    CSV path fitted them while compare did not (a true claim inconclusive there, a false one undetected)."""
    if inside_only or (not include_outside and app.inside < app.total and app.inside >= min_inside(fit_vars)):
        return app.inside_keys()
    return None


def min_inside(fit_vars: list[str]) -> int:
    """The inside cells a fit over ``fit_vars`` needs (one more than its parameters)."""
    return len(fit_vars) + 2
