"""Measurements: the rows a verdict is drawn from, from a sweep store or from a user's CSV.

Both sources give the same object, so ``ibcheck verdict`` (a CSV) and ``ibcheck compare`` (a
sweep) take the same path through the analysis, the applicability of the hypotheses and the
report. A ``Measurements`` stands where an experiment stands for those stages: it says what was
measured (``description``), whether each seed is a run along a trajectory, and which of the
claim's variables a row carries.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from ibcheck.simulate.experiments.base import Row
from ibcheck.simulate.substrate.censored import decode
from ibcheck.simulate.sweep.tasks import cell_key
from ibcheck.theory.argtypes import shown_value as _shown

LN10 = math.log(10.0)
MAX_POINTS = 1000  # the most points of one run a fit reads (evenly spaced in log of the scale; see thin_run)


def thin_run(points: list[dict], v0: str, limit: int = MAX_POINTS) -> list[dict]:
    """At most ``limit`` points of one run, evenly spaced in log ``v0`` (the first point of each of ``limit`` equal
    bins of log v0, the last point always kept); a run with fewer points is returned as it is.

    Pitfall avoided: every point of a long trajectory became a row, fitted over and over (3 runs x 1e5 points: 282 s
    and 1.8 GB after the sweep), though one run is one observation: its points are one curve, and a thousand of them
    per decade-spaced bin trace it as well as a hundred thousand."""
    if len(points) <= limit:
        return points
    logs = [p.get("log_" + v0, math.log(p[v0]) if isinstance(p.get(v0), (int, float)) and p[v0] > 0 else None) for p in points]
    known = [x for x in logs if x is not None]
    if not known:
        return points[:: max(1, len(points) // limit)]
    lo, hi = min(known), max(known)
    width = (hi - lo) / limit or 1.0
    seen: set[int] = set()
    out = []
    for p, x in zip(points, logs):
        b = -1 if x is None else min(int((x - lo) / width), limit - 1)
        if b not in seen:
            seen.add(b)
            out.append(p)
    if out[-1] is not points[-1]:
        out.append(points[-1])
    return out


@dataclass(frozen=True)
class Measurements:
    """Rows of measurements (``variables`` per row, ``value``, optional ``censor``, ``seed`` and ``run``)."""

    description: str
    variables: tuple[str, ...]
    rows: tuple[dict, ...]
    trajectory: bool = False
    skip_hypotheses: dict = field(default_factory=dict)

    def claim_values(self, cell: dict, value) -> dict:
        """The claim's variables at one row: the row's own columns (a CSV carries every setting it has)."""
        return dict(cell)

    def fit_rows(self, fit_variables: list[str]) -> list[dict]:
        """The rows the fit reads: each variable (or its log, ``log_<v>``), ``value`` (or ``log_value``),
        ``censor``, ``seed`` and ``run``, and ``trials`` where a row has it (y is then a proportion of that many trials)."""
        out = []
        for r in self.rows:
            row = {k: r[k] for k in r if k in fit_variables or k.startswith("log_")}
            row.update({"censor": r.get("censor"), "seed": r.get("seed"), "run": r.get("run", r.get("seed"))})
            if r.get("trials") is not None:  # y a proportion of this many trials (binomial counts)
                row["trials"] = r["trials"]
            if "log_value" not in r:
                row["value"] = r["value"]
            out.append(row)
        return out

    @classmethod
    def from_store(cls, exp, rows: list[Row], quantity: str, fit_variables: list[str], keep=None,
                   cell_variables: list[str] | None = None, run_start: dict | None = None) -> Measurements:
        """One quantity's measurements from a sweep's stored rows (ok rows only; ``keep``, a set of
        cell keys, restricts them to those cells). A trajectory row becomes one row per point (at most
        MAX_POINTS per run, :func:`thin_run`), all with their cell and seed as their run (:func:`run_key`); points carry
        ``log_T``/``log_value`` where the run gave log10
        values (T and the loss leave float64's range under the loss-based schedule). A censored
        value keeps its side (``censor``). ``run_start`` (per cell key, a time): a trajectory's points before its cell's
        time are left out (the run enters the claim's hypotheses there)."""
        out = []
        for r in rows:
            if r.status != "ok" or not isinstance(r.value, dict):
                continue
            if keep is not None and cell_key(r.at(cell_variables or [])) not in keep:
                continue
            if exp.trajectory:
                v0 = fit_variables[0]
                run = []
                key = run_key(r.at(cell_variables or []), r.seed)
                t0 = (run_start or {}).get(cell_key(r.at(cell_variables or [])))
                for tr in r.value.get("trajectory", []):
                    row = {"seed": r.seed, "run": key}  # one run per (cell, seed): the unit the fit combines
                    lg = tr.get("log10_" + v0, tr.get("log10_T"))
                    if lg is not None:
                        row["log_" + v0] = round(float(lg) * LN10, 9)
                    else:
                        row[v0] = float(f"{tr.get(v0, tr.get('T')):.10g}")
                    if t0 is not None and (row[v0] < t0 if v0 in row else row["log_" + v0] < math.log(t0)):
                        continue  # before the run enters the hypotheses
                    if tr.get("log10_" + quantity) is not None:
                        row["log_value"] = float(tr["log10_" + quantity]) * LN10
                    else:
                        row["value"] = tr.get(quantity)
                    run.append(row)
                out += thin_run(run, v0)
            else:
                value, censor = decode(r.value.get(quantity))
                row = {**r.at(fit_variables), "value": value, "censor": censor, "seed": r.seed}
                if r.value.get(quantity + "_trials") is not None:  # checked by _unreadable: a count of trials
                    row["trials"] = int(r.value[quantity + "_trials"])
                out.append(row)
        return cls(exp.description, tuple(fit_variables), tuple(out), exp.trajectory, dict(getattr(exp, "skip_hypotheses", {})))


def _unreadable_number(x) -> str | None:
    """Why a stored quantity cannot enter a log-space fit, or None: a finite number > 0, or a censored bound
    ``{"at_least": x}`` / ``{"at_most": x}`` with a finite x > 0."""
    if isinstance(x, dict) and len(x) == 1 and next(iter(x)) in ("at_least", "at_most"):
        x = next(iter(x.values()))
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return f"{_shown(x)}, not a number"
    if not math.isfinite(float(x)) or x <= 0:
        return f"{_shown(x)}, not a finite number > 0"
    return None


def _unreadable(value, quantities: tuple[str, ...], trajectory: bool) -> str | None:
    """Why a stored ok row cannot be read for ``quantities``, or None."""
    if not isinstance(value, dict):
        return f"the stored value is {_shown(value)}, not a mapping of quantities"
    if trajectory:
        points = value.get("trajectory")
        if not isinstance(points, list) or not points:
            return "the stored trajectory is missing or empty"
        for i, p in enumerate(points):
            if not isinstance(p, dict):
                return f"trajectory point {i} is {_shown(p)}, not a mapping"
            for q in quantities:
                if p.get("log10_" + q) is not None:
                    lg = p["log10_" + q]
                    if isinstance(lg, bool) or not isinstance(lg, (int, float)) or not math.isfinite(lg):
                        return f"trajectory point {i}: log10_{q} is {_shown(lg)}, not a finite number"
                elif (why := _unreadable_number(p.get(q))) is not None:
                    return f"trajectory point {i}: {q} is {why}"
        return None
    for q in quantities:
        if q not in value:
            return f"quantity {q!r} is missing from the stored value"
        if (why := _unreadable_number(value[q])) is not None:
            return f"quantity {q!r} is {why}"
        if (why := _unreadable_trials(value, q)) is not None:
            return why
    return None


MAX_TRIALS = 2 ** 53  # a count of trials is an exact integer in a float (the CSV reader's bound too)


def _unreadable_trials(value: dict, q: str) -> str | None:
    """Why a quantity's ``<q>_trials`` (the trials N behind a proportion y = k/N) cannot be read, or None (absent, or an
    integer in [1, 2^53] beside a y in (0, 1])."""
    n = value.get(q + "_trials")
    if n is None:
        return None
    if isinstance(n, bool) or not isinstance(n, (int, float)) or not math.isfinite(n) or n != int(n) or not 1 <= n <= MAX_TRIALS:
        return f"{q}_trials is {_shown(n)}, not a count of trials (an integer in [1, 2^53])"
    y = value[q]
    y = next(iter(y.values())) if isinstance(y, dict) else y
    if not y <= 1:
        return f"quantity {q!r} is {_shown(y)} with {q}_trials = {int(n)}: not a proportion of its trials (a value in (0, 1])"
    return None


def readable_rows(rows: list[Row], exp) -> list[Row]:
    """The stored rows, each ok row whose value cannot be read for the experiment's quantities turned into a failed
    row (failure ``UnreadableRow``) that says why: counted among the failures, never dropped silently.

    Pitfall avoided: a stored NaN, inf, 0, -5, string, list or null (or a missing key) was skipped by the fit while the
    table still said "failed 0, ok 36" and the cell mean moved (7.754 to 7.697)."""
    out = []
    for r in rows:
        why = _unreadable(r.value, tuple(exp.quantities), bool(exp.trajectory)) if r.status == "ok" else None
        out.append(r if why is None else replace(r, status="failed", value=None, failure="UnreadableRow",
                                                 error=f"UnreadableRow: {why}"))
    return out


def run_key(cell: dict, seed) -> str:
    """One run's identity: its cell and its seed (``n=20, seed 0``). Pitfall avoided: keyed by the seed alone, the runs of
    a trajectory grid (n = 20 and 40, three seeds) merged into three, read as 2 degrees of freedom."""
    where = ", ".join(f"{k}={v}" for k, v in sorted(cell.items()) if k != "run")
    return f"{where}, seed {seed}" if where else f"seed {seed}"
