"""Bring your own measurements: a verdict from a CSV file (``ibcheck verdict``).

The CSV has a column per variable (``d``, ``k``, ``n``, ``T``, ...), a ``value`` column (the
measured quantity, > 0) and optionally a ``seed`` column. A value known only as a bound is written
``>=25`` (at least 25: e.g. no flip found up to a search limit of 25) or ``<=0.01`` (at most); it
enters the fit as a bound (a Tobit likelihood), never as a value. The same pipeline as
``ibcheck compare`` judges it (:func:`simulate.verdict.analysis.analyze`: fit, drift, extrapolation,
power, verdict) and writes the same report. The prediction comes from a claim of the registry
(``--claim``, ``--quantity``, ``--reading``) or is given directly (``--predict 'd=1/2,k=-1/2'``
with ``--kind``).

Every check happens before any file is written: a bad file gets one line naming the column and
the row.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from fractions import Fraction

import sympy as sp

from ibcheck.simulate.compare import inputs
from ibcheck.simulate.compare.binning import log_time_bins
from ibcheck.simulate.experiments.applicability import applicability, kept_cells
from ibcheck.simulate.experiments.base import Row
from ibcheck.simulate.experiments.design import LOG_INVERSE, bound_specs
from ibcheck.simulate.experiments.terms import parse_term
from ibcheck.simulate.substrate.userdata import INT64_MAX, NUMBER, NUMBER_RULE, CsvRows, number
from ibcheck.simulate.sweep.measurements import MAX_TRIALS, Measurements, run_key
from ibcheck.theory import get_claim
from ibcheck.theory.argtypes import refused
from ibcheck.theory.claim import Bound, Claim
from ibcheck.theory.cone import claim_cone
from ibcheck.theory.errors import InputError
from ibcheck.theory.variables import Variable, tends_to_zero

KINDS = ("O", "Omega", "Theta")
MAX_ROWS = 1_000_000  # measurements in one CSV: the reading stops past them (a sweep's rows are far fewer)
RESERVED = ("seed", "value", "trials")  # the columns that are not variables, matched without case
MAX_COLUMNS = 1000  # columns of one CSV: a claim's variables, value and seed
MAX_CELLS = 20_000  # distinct cells of one CSV fitted across cells: time grows about linearly (10^4 cells: 0.43 GB, 160 s)


@dataclass
class Table:
    """A validated CSV: the variable columns and one row per measurement."""

    path: str
    variables: list[str]
    rows: list[dict]  # {variable: float, "value": float, "seed": str|None, "row": line number}


def read_table(path: str, allowed: list[str] | None = None, required: tuple[str, ...] = ()) -> Table:
    """Read and validate a measurements CSV (see the module docstring), through the one reader of the user's files
    (:class:`~ibcheck.simulate.substrate.userdata.CsvRows`: a regular UTF-8 file, each column named once, at most
    MAX_ROWS rows read, numbers as written)."""
    with CsvRows(path, "data", max_rows=MAX_ROWS, max_columns=MAX_COLUMNS, what=" (measurements of one CSV)") as table:
        # 'Seed', 'VALUE': the two reserved columns are matched without case; variables keep their names
        header = [h.lower() if h.lower() in RESERVED else h for h in table.header]
        if "value" not in header:
            raise refused("data", path, f": missing column 'value' (the header is {', '.join(header) or 'empty'})")
        variables = [h for h in header if h not in RESERVED]
        if not variables:
            raise refused("data", path, ": missing variable columns: give a column per variable (e.g. d, k) beside 'value'")
        if len(set(header)) != len(header):
            raise refused("data", path, f": a column name is repeated in the header ({', '.join(header)})")
        for v in required:
            if v not in variables:
                raise refused("data", path, f": missing column {v!r} (named in predict, --predict); the columns are {', '.join(header)}")
        if allowed is not None:
            for v in variables:
                if v not in allowed:
                    raise refused("data", path, f": column {v!r} is not a variable here: the accepted columns are "
                                     f"{', '.join(allowed)}, value, seed and trials (remove other columns such as run ids)")
        rows = []
        for i, fields in table.rows():
            raw = {h: f.strip() for h, f in zip(header, fields)}
            try:
                seed = _seed(raw.get("seed"))
            except ValueError as err:
                raise refused("data", path, f": row {i}, column 'seed': {err}") from None
            row: dict[str, object] = {"row": i, "seed": seed}
            for col in variables + ["value"]:
                cell = raw[col]
                if cell == "":
                    raise refused("data", path, f": row {i}, column {col!r} is empty")
                if col == "value" and cell[:2] in (">=", "<="):  # a censored value: a bound, not a measurement
                    row["censor"] = "at_least" if cell[:2] == ">=" else "at_most"
                    cell = cell[2:].strip()
                try:
                    x = number(cell)
                except ValueError as err:
                    if NUMBER.fullmatch(cell):  # a number past the float range (1e999), or below it (1e-400: never read as 0)
                        raise refused("data", path, f": row {i}, column {col!r}: {err}; values must be finite numbers "
                                         "> 0 (a log-log fit)") from None
                    raise refused("data", path, f": row {i}, column {col!r}: {cell!r} is not a number ({NUMBER_RULE})"
                                     + (" (a bound is written >=25 or <=0.01)" if col == "value" else "")) from None
                if not x > 0 and col == "value" and raw.get("trials"):
                    raise refused("data", path, f": row {i}, column 'value': {cell} beside trials {raw['trials'][:40]} is a zero count, "
                                     "which no fit in log(1/y) or log y can read (a proportion k/N needs k >= 1; pool the seeds or "
                                     "enlarge N where counts reach 0)")
                if not x > 0:
                    raise refused("data", path, f": row {i}, column {col!r}: {cell} is out of range: values must be finite numbers > 0 "
                                     "(a log-log fit)")
                row[col] = x
            if "trials" in raw:
                row["trials"] = _trials(path, i, raw["trials"], row)
            rows.append(row)
    if not rows:
        raise refused("data", path, "has a header but no rows")
    _refuse_repeats(path, variables, rows)
    cells = {tuple(r[v] for v in variables) for r in rows}
    if len(cells) < 2:
        raise refused("data", path, f": every row is the same cell ({', '.join(f'{v}={rows[0][v]:g}' for v in variables)}); "
                         "a fit needs several cells")
    return Table(path, variables, rows)


def _trials(path: str, i: int, cell: str, row: dict) -> int:
    """A row's ``trials``: the number of trials N behind a proportion y = k/N (binomial counts, such as test errors of N
    test points), an integer in [1, 2^53]; its value must then be a proportion, in (0, 1]. The exp-type test weights such
    cells by their own variance (:func:`simulate.verdict.exp_test.binomial_weights`)."""
    shown = cell if len(cell) <= 40 else cell[:40] + "..."
    try:
        x = Decimal(cell)
    except (InvalidOperation, ValueError):
        x = None
    if x is None or not x.is_finite() or x != x.to_integral_value() or not 1 <= x <= MAX_TRIALS:
        raise refused("data", path, f": row {i}, column 'trials': {shown!r} is not a count of trials (an integer in [1, 2^53])")
    if not row["value"] <= 1:
        raise refused("data", path, f": row {i}: value {row['value']:g} with trials {int(x)} is not a proportion of its trials "
                                    "(a value in (0, 1], k/N)")
    return int(x)


def _seed(text: str | None) -> str | None:
    """A seed as one run's name: "1", "1.0", "01" and "1e0" are the same run (a number compared as the exact decimal written,
    an integer written as one); other text is kept as written. An integer seed is an int64: beyond it, a ValueError
    quoting the text as given.

    Pitfalls avoided: seeds compared as text made three runs of one; seeds read as floats made 2^53 and 2^53 + 1 one run
    (refused as repeats) and stored 2^64 - 1 as 2^64."""
    if not text:
        return None
    if not NUMBER.fullmatch(text):
        return text
    x = Decimal(text)
    if x == x.to_integral_value():
        if not -INT64_MAX - 1 <= x <= INT64_MAX:
            raise ValueError(f"{text} is out of range (a seed is an integer in [-2^63, 2^63 - 1], an int64, or a name)")
        return str(int(x))
    return str(x.normalize())


def _refuse_repeats(path: str, variables: list[str], rows: list[dict]) -> None:
    """A seed is one observation: a cell measured twice with the same seed (or, without a seed column,
    the same line twice) would count as two. Refused, naming both rows."""
    seen: dict[tuple, int] = {}
    for r in rows:
        key = tuple(r[v] for v in variables) + ((r["seed"],) if r["seed"] is not None else (r["value"],))
        if key in seen:
            cell = ", ".join(f"{v}={r[v]:g}" for v in variables)
            what = f"seed {r['seed']}" if r["seed"] is not None else f"value {r['value']:g} (no seed column)"
            raise refused("data", path, f": rows {seen[key]} and {r['row']} repeat cell {cell} with {what}; each seed is one "
                             "observation: remove the repeat or give each run its own seed")
        seen[key] = r["row"]


def parse_predict(text: str) -> dict[str, Fraction]:
    """``'d=1/2,k=-1/2'`` -> ``{"d": 1/2, "k": -1/2}``, each exponent exactly as written (a Fraction: ``0.542`` is
    271/500); log terms by name: ``'t=0,log(t)=-1'``, ``'log(log(t))=1'``. Keys are term names
    (:mod:`simulate.experiments.terms`)."""
    out: dict[str, Fraction] = {}
    if not text or not text.strip():
        raise refused("predict", text, "is empty: give VAR=exponent pairs, e.g. d=1/2,k=-1/2 or t=0,log(t)=-1")
    for part in _split_top(text.replace(" ", "")):
        if not part:
            continue
        if part.count("=") != 1:
            raise refused("predict", text, f"expects TERM=exponent pairs separated by commas, one '=' in each (e.g. t=0,log(t)=-1), "
                          f"got {part!r}")
        name, value = part.rsplit("=", 1)
        term = parse_term(name)
        if term.name in out:
            raise refused("predict", text, f"gives {term.name} twice")
        try:
            out[term.name] = Fraction(value)
        except (ValueError, ZeroDivisionError):
            raise refused("predict", text, f"gives {name}={value!r}, which is not a number or a fraction such as 1/2") from None
    if not out:
        raise refused("predict", text, "is empty: give VAR=exponent pairs, e.g. d=1/2,k=-1/2 or t=0,log(t)=-1")
    return out


def _split_top(text: str) -> list[str]:
    """Split on commas outside parentheses."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur]


def predicted_variables(pred: dict[str, Fraction]) -> list[str]:
    """The variables the terms of a prediction speak of, in order."""
    return list(dict.fromkeys(parse_term(k).variable for k in pred))


def fit_variables(table: Table, trajectory: bool = False) -> list[str]:
    """Columns with at least 3 distinct values are fitted; one value holds a variable fixed; two is an error. For
    trajectories (``trajectory``), the one column that varies within a run (rows of one seed and one value of every other
    column) is fitted, the time, as compare fits a trajectory experiment's time variable; every other column names the
    runs' cells and may take any number of values."""
    if trajectory:
        return [time_variable(table)]
    out = []
    for v in table.variables:
        distinct = {r[v] for r in table.rows}
        if len(distinct) == 2:
            raise refused("data", table.path, f": column {v!r} has 2 distinct values; a fitted variable needs at least 3 "
                             "(or 1 to hold it fixed)")
        if len(distinct) >= 3:
            out.append(v)
    if not out:
        raise refused("data", table.path, ": no column has 3 or more distinct values to fit")
    return out


def time_variable(table: Table) -> str:
    """The trajectories' time: the column along which the rows form the fewest runs (rows of one seed at one value of
    every other column), each of 3 or more points. Grouped by the time, a run's rows share a seed and a cell; grouped by
    a cell variable (n), they share only a seed and a time, so they form many more, mostly of one point. Refused where
    the rows name no run (no seed column), or where no column, or two equally, qualify."""
    if any(r["seed"] is None for r in table.rows):
        raise refused("trajectory", True, "needs a seed column naming each row's run")
    runs_along: dict[str, int] = {}
    for v in table.variables:
        runs: dict[tuple, set] = {}
        for r in table.rows:
            runs.setdefault((r["seed"], *(r[u] for u in table.variables if u != v)), set()).add(r[v])
        if min(len(x) for x in runs.values()) >= 3:
            runs_along[v] = len(runs)
    fewest = sorted(runs_along, key=runs_along.__getitem__)
    if not fewest or (len(fewest) > 1 and runs_along[fewest[0]] == runs_along[fewest[1]]):
        raise refused("trajectory", True, "fits each run along one variable (the time): the column along which every run (a "
                      "seed at one value of the other columns) has 3 or more points; in " + str(table.path) + " "
                      + (f"{' and '.join(fewest[:2])} both qualify equally" if fewest else "no column does"))
    return fewest[0]


def claim_bounds(claim, quantity: str | None, reading: str | None) -> list:
    from ibcheck.simulate.compare.driver import TESTABLE  # heavy: scipy (loaded on first use)

    bounds = [b for b in claim.bounds if b.kind in TESTABLE]
    quantities = sorted({b.quantity for b in bounds})
    if not bounds:
        raise refused("claim", claim.id, "has no bound with an exponent to test (O, Omega, Theta, o, omega, <=, >=)")
    if quantity is None:
        if len(quantities) > 1:
            raise refused("claim", claim.id, "bounds several quantities; choose one with quantity (--quantity): " + f" {', '.join(quantities)}")
        quantity = quantities[0]
    if quantity not in quantities:
        raise refused("quantity", quantity, f"is not a tested quantity of {claim.id}; accepted: {', '.join(quantities)}")
    bounds = [b for b in bounds if b.quantity == quantity]
    if reading is not None:
        readings = sorted({b.reading for b in bounds if b.reading})
        bounds = [b for b in bounds if b.reading == reading]
        if not bounds:
            raise refused("reading", reading, f"is not a reading of {claim.id}'s {quantity}; accepted: {', '.join(readings) or 'none'}")
    return bounds


def verdict_from_csv(path: str, claim_id: str | None = None, quantity: str | None = None, reading: str | None = None,
                     predict: str | None = None, kind: str | None = None, margin: float | None = None, constants: dict | None = None,
                     margin_log: float | None = None, offsets: str = "fit", fit_from: dict | None = None, trajectory: bool = False,
                     log_corrections: bool = False, include_outside: bool = False, plan_trials: int = 20):
    """Judge a CSV of measurements (columns: the variables, ``seed``, ``value``) against a claim of the
    registry, or against a stated prediction (``predict="d=1/2,k=-1/2"`` or ``"t=0,log(t)=-1"`` with
    ``kind``). Every exponent the claim states is fitted, log factors included (``offsets="known"``
    on request takes them as known). ``fit_from`` ({variable: x0}) keeps rows with variable >= x0.
    ``trajectory``: each seed is one run measured along the fitted variable (a time), so each run is
    fitted on its own and the runs are combined (one run is one observation). As in ``compare``, where enough cells lie
    inside the claim's hypotheses, only those are fitted (:func:`~ibcheck.simulate.experiments.applicability.kept_cells`);
    ``include_outside`` fits every row.
    Returns a :class:`~ibcheck.simulate.compare.driver.ComparisonResult`; ``save(directory)`` writes the report."""
    from ibcheck.simulate.compare.record import ComparisonRecord, bound_record, planned  # heavy: scipy (loaded on first use)
    from ibcheck.simulate.compare.result import ComparisonResult  # heavy: scipy (loaded on first use)
    from ibcheck.simulate.verdict.analysis import BoundAnalysis, analyze  # heavy: scipy (loaded on first use)
    from ibcheck.simulate.verdict.planner import bound_plan, grid_work  # heavy: scipy (loaded on first use)

    if (claim_id is None) == (predict is None):
        raise InputError("give either a claim of the registry (claim, --claim) or a prediction (predict='d=1/2,...', --predict) with its kind")
    margin, margin_log = inputs.check_margin("margin", margin), inputs.check_margin("margin_log", margin_log)
    offsets, fit_from = inputs.check_offsets(offsets), inputs.check_fit_from(fit_from)
    trajectory = inputs.check_bool("trajectory", trajectory)
    log_corrections = inputs.check_bool("log_corrections", log_corrections)
    include_outside = inputs.check_bool("include_outside", include_outside)
    plan_trials = inputs.check_plan_trials(plan_trials)
    constants = inputs.check_constants(constants)
    claim, table, fvars, specs = _claim_and_specs(path, claim_id, quantity, reading, predict, kind, offsets, constants, trajectory)
    read_rows = len(table.rows)
    table, binning = log_time_bins(table, fvars[0]) if trajectory else (table, None)
    if not trajectory and (n_cells := len({tuple(r[v] for v in table.variables) for r in table.rows})) > MAX_CELLS:
        raise refused("data", path, f"has {n_cells} distinct cells; at most {MAX_CELLS} are fitted across cells (about "
                      "linear time and memory: 10^4 cells take about 3 min and 0.45 GB); average within coarser cells, or "
                      "split the CSV")
    for v in fit_from or {}:
        if v not in fvars:
            raise refused("fit_from", dict(fit_from), f"names {v}, which is not a fitted column here; the fitted columns are {', '.join(fvars)}")
    app = applicability(claim, Measurements(f"your measurements ({path})", tuple(table.variables), (), trajectory),
                        [Row({v: r[v] for v in table.variables}, r["seed"], "ok", {}) for r in table.rows], table.variables, {}, constants)
    keep = kept_cells(app, fvars, include_outside=include_outside)  # compare's rule: the window's inside cells (points) alone
    kept = [r for r in table.rows if keep is None or tuple(sorted((v, r[v]) for v in table.variables)) in keep]
    meas = Measurements(f"your measurements ({path})", tuple(table.variables),
                        tuple({**r, "run": run_key({v: r[v] for v in table.variables if v not in fvars}, r["seed"])}
                              for r in kept), trajectory)
    data = meas.fit_rows(fvars)
    results = []
    held = {v: min(r[v] for r in table.rows if r.get(v) is not None) for v in fvars}
    for spec in specs:
        rows = spec.tested_rows(data)
        cone = None if trajectory else claim_cone([claim], list(fvars), spec.toward_zero, held, dict(constants or {}))
        an = analyze(rows, fvars, spec.kind, spec.predicted(), spec.offset_table(), margin, margin_log=margin_log,
                     cells_used="all" if keep is None else "inside",
                     restriction=dict(fit_from or {}), trajectory=trajectory, extrapolate=not trajectory, toward_zero=spec.toward_zero,
                     cone=cone, log_corrections=log_corrections, free_constant=spec.transform == LOG_INVERSE)
        varied = {v for v in table.variables if len({r[v] for r in table.rows}) > 1}
        if (note := spec.untested_note(varied, trajectory)):
            an.reason = f"{an.reason}; {note}"
        if binning is not None:
            an.reason = f"{an.reason}; {binning.text()}"
        results.append(BoundAnalysis(spec, an, tuple(rows)))
    pa = results[0].analysis
    seeds = max(c["n_seeds"] for c in pa.fit.cells)
    cells = [dict(k) for k in {tuple((v, r[v]) for v in table.variables) for r in kept}]
    plans = {} if trajectory else {r.label: p for r in results
                                   if (p := bound_plan(list(r.data), r.analysis.function, fvars, seeds, grid_work(cells, lambda c: 1.0),
                                                       analysis=r.analysis, trials=plan_trials))}
    counts = _counts(table, [r.quantity for r in results])  # the same for every bound
    bounds = tuple(bound_record(r, app, counts) for r in results)
    bounds = tuple(replace(b, reason=f"{b.reason}; {plans[b.label].text()}") if b.label in plans else b for b in bounds)
    record = ComparisonRecord(
        "csv", claim.id, claim.title, claim.status, tuple(claim.flags), f"your measurements ({path})",
        {v: sorted({r[v] for r in table.rows}) for v in table.variables}, seeds, tuple(fvars),
        margin, margin_log, offsets, dict(fit_from or {}) or None, bounds, app,
        f"every number comes from {os.path.abspath(path)} ({read_rows} rows" + (f"; {binning.text()})" if binning else ")"),
        {"rows": read_rows},
        constants=dict(constants or {}), data=os.path.abspath(path), rows=read_rows,
        binning=binning.text() if binning else None, include_outside=include_outside,
        would_decide=tuple(planned(label, p) for label, p in plans.items()))
    return ComparisonResult(record, tuple(results), tuple(data), claim, meas)


def _counts(table, quantities: list[str]):
    """Per cell the CSV's rows and its censored ones (">=x", "<=x"), as compare counts a sweep's (record.row_counts), so
    that the reason's censoring note is the same on both paths."""
    from ibcheck.simulate.compare.record import CellCount  # heavy: scipy (loaded on first use)

    cells: dict[tuple, list[int]] = {}
    for r in table.rows:
        c = cells.setdefault(tuple(sorted((v, r[v]) for v in table.variables)), [0, 0])
        c[0] += 1
        c[1] += bool(r.get("censor"))
    return tuple(CellCount(dict(k), n, 0, {q: cens for q in quantities})
                 for k, (n, cens) in sorted(cells.items(), key=lambda kv: [str(x) for x in kv[0]]))


def _claim_and_specs(path: str, claim_id: str | None, quantity: str | None, reading: str | None, predict: str | None,
                     kind: str | None, offsets: str, constants: dict | None, trajectory: bool = False) -> tuple:
    """The claim (of the registry, or built from ``predict`` and ``kind``), the CSV read for its variables, the fitted
    variables and the bounds to test: (claim, table, fitted variables, bound specs)."""
    if claim_id is not None:
        if kind is not None:
            raise refused("kind", kind, "goes with predict (--predict), not with a registry claim, which states its own kind")
        claim = get_claim(claim_id)
        table = read_table(path, list(claim.variable_names))
        fvars = fit_variables(table, trajectory)
        bounds = claim_bounds(claim, quantity, reading)
        wanted = {(b.quantity, b.reading) for b in bounds}
        specs = [sp_ for sp_ in bound_specs(claim, fvars, offsets=offsets) if (sp_.quantity, sp_.reading) in wanted]
        inputs.check_constants(constants, claim)
    else:
        if kind not in KINDS:
            raise refused("kind", kind, f"is not one of {', '.join(KINDS)} (a prediction, --predict, needs the bound's kind)")
        if predict is None:
            raise InputError("give either a claim of the registry (claim, --claim) or a prediction (predict='d=1/2,...', --predict) with its kind")
        pred = parse_predict(predict)
        pvars = predicted_variables(pred)
        table = read_table(path, pvars, required=tuple(pvars))
        fvars = fit_variables(table, trajectory)
        for name in pred:
            if parse_term(name).order and parse_term(name).variable not in fvars:
                raise refused("predict", predict, f"names {name}, but {parse_term(name).variable} has fewer than 3 distinct values, so "
                              "its log term cannot be fitted")
        claim = prediction_claim(pred, kind, pvars)
        specs = bound_specs(claim, fvars, offsets=offsets)
    return claim, table, fvars, specs


def prediction_claim(pred: dict[str, Fraction], kind: str, variables: list[str]):
    """A stated prediction (``--predict 't=0,log(t)=-1'`` with ``--kind O``) as a real, unregistered
    :class:`~ibcheck.theory.claim.Claim` with one bound on ``value``: the same object a claims file
    builds, so the same analysis reads its exponents (no stand-in)."""
    factors = []
    zero = {parse_term(name).variable for name in pred if parse_term(name).toward_zero} | {v for v in variables if tends_to_zero(v)}
    for name, x in pred.items():
        t = parse_term(name)
        base = sp.Symbol(t.variable, positive=True)
        for i in range(t.order):  # a variable that tends to 0 has its log factors in log(1/x)
            base = sp.log(1 / base) if i == 0 and t.variable in zero else sp.log(base)
        factors.append(base ** sp.Rational(x.numerator, x.denominator))  # exact (nsimplify made 0.542 a product of radicals)
    expr = sp.Mul(*factors)
    return Claim("user.prediction", title=f"{kind}({sp.sstr(expr)}) stated with --predict", paper="your data", status="order",
                 variables=tuple(Variable(v, "real", low=0, tends_to="0" if v in zero else "oo") for v in variables),
                 bounds=(Bound("value", kind, expr),))
