"""Theory against simulation for one claim: sweep, fit, verdict, report.

``compare_claim`` runs the claim's experiment over its grid and seeds (resumably, through
:mod:`simulate.sweep`), fits the exponents of the measured quantity, reads the predicted
exponents from ``theory`` (never retyped), gives a verdict per bound and per reading with a
negative control, and writes Markdown, a self-contained HTML file, PNGs, a JSON summary and
a Parquet export of the raw rows.
"""
from __future__ import annotations

import base64
import itertools
import json
import math
import os
import time

import numpy as np
import sympy as sp

from theory import get_claim
from theory.describe import bound_exponents
from theory.errors import InputError
from theory.evaluate import make_point

from .experiments import EXPERIMENTS, Experiment, experiment_for
from .fit import fit_exponents
from .rundir import clean
from .sweep import Task, code_version, connect, export_parquet, rows_for, run_sweep, task_key
from .verdict import combine, exponent_verdict, negative_control_exponent

TESTABLE = ("O", "o", "<=", "Omega", "omega", ">=", "Theta")
PARAMS = {"L": "2"}  # parameters that enter exponents, at the value the experiments use (two-layer: L = 2)


def parse_grid(items: list[str] | None) -> dict | None:
    """``["d=64,128,256", "k=2,4,8"]`` -> ``{"d": [64, 128, 256], "k": [2, 4, 8]}``."""
    if not items:
        return None
    grid = {}
    for item in items:
        if "=" not in item:
            raise InputError(f"--grid expects VAR=v1,v2,... (e.g. d=64,128,256), got {item!r}")
        name, vals = item.split("=", 1)
        out = []
        for v in vals.split(","):
            try:
                x = float(v)
            except ValueError:
                raise InputError(f"--grid {name}: {v!r} is not a number") from None
            if not (math.isfinite(x) and x > 0):
                raise InputError(f"--grid {name}: {v} is out of range: grid values must be numbers > 0")
            out.append(int(x) if x.is_integer() else x)
        if len(set(out)) != len(out):
            raise InputError(f"--grid {name} repeats a value: {vals}")
        grid[name] = sorted(out)
    return grid


def _tasks(exp: Experiment, grid: dict, seeds: int, version: str, fixed: dict) -> list[Task]:
    names = list(grid)
    tasks = []
    for combo in itertools.product(*(grid[n] for n in names)):
        cell = dict(zip(names, combo))
        for s in range(seeds):
            tasks.append(Task(task_key(exp.claim, exp.name, cell, s, fixed, version), exp.claim, exp.name, cell, s, dict(fixed)))
    return tasks


def _fit_variable_names(exp: Experiment, claim, grid: dict) -> list[str]:
    if exp.trajectory:
        return ["T" if "T" in claim.variable_names else "t"]
    fv = []
    for v, vals in grid.items():
        if len(vals) >= 3:
            fv.append(v)
        elif len(vals) == 2:
            raise InputError(f"--grid {v} has 2 values: a fitted variable needs at least 3 (or give 1 to hold it fixed)")
    if not fv:
        raise InputError("the grid has no variable with at least 3 values to fit")
    return fv


def _data_rows(exp: Experiment, rows: list[dict], quantity: str, fit_vars: list[str]) -> list[dict]:
    out = []
    for r in rows:
        if r["status"] != "ok" or not isinstance(r["value"], dict):
            continue
        if exp.trajectory:
            for tr in r["value"].get("trajectory", []):
                out.append({fit_vars[0]: float(f"{tr['T']:.10g}"), "value": tr.get(quantity), "seed": r["seed"]})
        else:
            out.append({**{v: r[v] for v in fit_vars}, "value": r["value"].get(quantity), "seed": r["seed"]})
    return out


def compare_claim(claim_id: str, out: str, grid: dict | None = None, seeds: int | None = None, quick: bool = False,
                  workers: int = 1, scheduler: str | None = None, dask: bool = False, margin: float = 0.1,
                  progress: bool = True) -> dict:
    claim = get_claim(claim_id)
    exp = experiment_for(claim_id)
    grid = grid or (exp.quick_grid if quick else exp.grid)
    seeds = seeds or (exp.quick_seeds if quick else exp.seeds)
    if seeds < 1:
        raise InputError(f"--seeds {seeds} is out of range: seeds must be an integer >= 1")
    fit_vars = _fit_variable_names(exp, claim, grid)
    os.makedirs(out, exist_ok=True)
    version = code_version(__import__("simulate.experiments", fromlist=["x"]).__file__)
    fixed = exp.settings(quick)
    tasks = _tasks(exp, grid, seeds, version, fixed)
    db = os.path.join(out, "sweep.sqlite")
    t0 = time.perf_counter()
    counts = run_sweep(tasks, db, version, workers=workers, scheduler=scheduler, dask=dask, progress=progress)
    con = connect(db)
    rows = rows_for(con, [t.key for t in tasks])
    con.close()
    statuses = {}
    for r in rows:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    point = make_point(claim, {k: v for k, v in PARAMS.items() if k in claim.variable_names})
    results = []
    for quantity in exp.quantities:
        data = _data_rows(exp, rows, quantity, fit_vars)
        bounds = [b for b in claim.bounds if b.quantity == quantity and b.kind in TESTABLE]
        if not bounds or not data:
            continue
        offsets_base = None
        for b in bounds:
            ex = bound_exponents(claim, b, point)
            offsets = {v: (float(sp.Rational(ex["log_exponents"].get(v, "0"))), float(sp.Rational(ex["loglog_exponents"].get(v, "0"))))
                       for v in fit_vars}
            fit = fit_exponents(data, fit_vars, offsets)
            fits, vs = [], []
            for v in fit_vars:
                pred = float(sp.Rational(ex["exponents"].get(v, "0")))
                vd = exponent_verdict(b.kind, fit.estimate[v], fit.se[v], fit.df, pred, margin)
                fits.append({"variable": v, "estimate": fit.estimate[v], "ci_low": fit.ci[v][0], "ci_high": fit.ci[v][1],
                             "predicted": pred, "bca_low": fit.bca[v][0] if fit.bca else None, "bca_high": fit.bca[v][1] if fit.bca else None,
                             "log_offset": offsets[v][0], "verdict": vd.verdict, "reason": vd.reason})
                vs.append(vd.verdict)
            v0 = fit_vars[0]
            wrong = negative_control_exponent(b.kind, fits[0]["predicted"])
            nc = exponent_verdict(b.kind, fit.estimate[v0], fit.se[v0], fit.df, wrong, margin)
            results.append({
                "quantity": quantity, "kind": b.kind, "reading": b.reading, "expr": sp.sstr(b.expr), "fits": fits,
                "verdict": combine(vs),
                "negative_control": {"variable": v0, "exponent_tested": wrong, "verdict": nc.verdict,
                                     "has_power": nc.verdict == "inconsistent"},
                "df": fit.df, "cells": fit.n_cells, "dropped_rows": fit.dropped,
                "curvature": fit.curvature, "interaction": fit.interaction,
                "_fit": fit, "_data": data, "_bound": b, "_offsets": offsets,
            })
            offsets_base = offsets_base or offsets
    if not results:
        raise InputError(f"{claim_id}: no successful measurements to fit ({statuses})")
    primary = results[0]
    summary = {
        "claim": claim.id, "title": claim.title, "status": claim.status, "flags": claim.flags, "experiment": exp.setting,
        "grid": grid, "seeds": seeds, "fit_variables": fit_vars, "margin": margin,
        "fits": [{k: f[k] for k in ("variable", "estimate", "ci_low", "ci_high", "predicted")} for f in primary["fits"]],
        "verdict": primary["verdict"], "negative_control": {k: primary["negative_control"][k] for k in ("exponent_tested", "verdict")},
        "readings": {r["reading"]: r["verdict"] for r in results if r["reading"]} or None,
        "results": [{k: v for k, v in r.items() if not k.startswith("_")} for r in results],
        "tasks": counts, "task_status": statuses, "seconds": time.perf_counter() - t0, "code_version": version,
        "fixed": fixed,
        "provenance": f"every number comes from {db}: rows keyed by (claim, experiment, cell, seed, fixed {fixed}, code {version})",
    }
    files = _write_report(summary, results, claim, exp, out)
    try:
        files["parquet"] = export_parquet(db, os.path.join(out, "results.parquet"))
    except ImportError:
        files["parquet"] = None
    summary["files"] = files
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(clean(summary), f, indent=2)
    return clean(summary)


# ---------------------------------------------------------------------------------------------
# Figures and documents.


def _plots(res: dict, claim, out: str, tag: str) -> dict:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fit, data, b = res["_fit"], res["_data"], res["_bound"]
    v0 = fit.variables[0]
    others = fit.variables[1:]
    files = {}
    # 1. log-log: raw seeds faint, cell means bold, fitted line, theory slope.
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    groups = {}
    for c in fit.cells:
        groups.setdefault(tuple(c[o] for o in others), []).append(c)
    colors = plt.get_cmap("viridis")(np.linspace(0, 0.85, max(1, len(groups))))
    pred0 = res["fits"][0]["predicted"]
    for (key, cells), col in zip(sorted(groups.items()), colors):
        lab = ", ".join(f"{o}={k:g}" for o, k in zip(others, key)) or "cells"
        raw = [r for r in data if all(float(r[o]) == k for o, k in zip(others, key)) and r["value"] and r["value"] > 0]
        ax.scatter([r[v0] for r in raw], [r["value"] for r in raw], s=8, color=col, alpha=0.3)
        xs = np.array([c[v0] for c in cells])
        # cell means back on the measure's scale (offset added back)
        off = np.array([sum(p * math.log(math.log(c[v])) + q * (math.log(math.log(math.log(c[v]))) if q else 0)
                            for v, (p, q) in res["_offsets"].items()) for c in cells])
        ys = np.exp(np.array([c["mean_log"] for c in cells]) + off)
        ax.loglog(xs, ys, "o", color=col, ms=6, label=lab)
        line = fit.intercept + fit.estimate[v0] * np.log(xs) + sum(fit.estimate[o] * math.log(k) for o, k in zip(others, key))
        ax.loglog(xs, np.exp(line + off), "-", color=col, lw=1.5)
        ax.loglog(xs, ys[0] * (xs / xs[0]) ** pred0 * np.exp(off - off[0]), ":", color=col, lw=1)
    ax.set_xlabel(v0)
    ax.set_ylabel(res["quantity"])
    f0 = res["fits"][0]
    ax.set_title(f"{claim.id}: {res['quantity']} {res['kind']}({res['expr']})" + (f" [{res['reading']}]" if res["reading"] else "")
                 + f"\nfit {f0['estimate']:.3f} [{f0['ci_low']:.3f}, {f0['ci_high']:.3f}] vs theory {pred0:g} (dotted): {res['verdict']}", fontsize=8)
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    files["loglog"] = f"{tag}_loglog.png"
    fig.savefig(os.path.join(out, files["loglog"]), dpi=110)
    plt.close(fig)
    # 2. collapse against the theory expression (constants = 1).
    expr = b.expr.subs({s: 1 for s in b.expr.free_symbols if s.name in claim.constants})
    syms = sorted(expr.free_symbols, key=lambda s: s.name)
    fixed = {**PARAMS, "c": "0.5"}
    fig, ax = plt.subplots(figsize=(5.2, 4.2))
    xs, ys = [], []
    for r in data:
        vals = {s.name: float(r.get(s.name, fixed.get(s.name, "nan"))) for s in syms}
        try:
            xv = float(expr.subs({s: vals[s.name] for s in syms}))
        except (TypeError, ValueError):
            continue
        if r["value"] and r["value"] > 0 and math.isfinite(xv) and xv > 0:
            xs.append(xv)
            ys.append(r["value"])
    if xs:
        ax.loglog(xs, ys, "o", ms=4, alpha=0.6)
        lo, hi = min(xs), max(xs)
        ax.loglog([lo, hi], [np.median(np.array(ys) / np.array(xs)) * lo, np.median(np.array(ys) / np.array(xs)) * hi], "k--", lw=1, label="slope 1")
        ax.legend(fontsize=7)
    ax.set_xlabel(f"theory: {sp.sstr(expr)}")
    ax.set_ylabel(res["quantity"])
    ax.set_title("collapse: points on one line of slope 1 if the theory's form holds", fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    files["collapse"] = f"{tag}_collapse.png"
    fig.savefig(os.path.join(out, files["collapse"]), dpi=110)
    plt.close(fig)
    # 3. residuals of the fit.
    fig, ax = plt.subplots(figsize=(5.2, 3.4))
    ax.axhline(0, color="gray", lw=1)
    ax.plot([math.log(c[v0]) for c in fit.cells], [c["residual"] for c in fit.cells], "o")
    ax.set_xlabel(f"log {v0}")
    ax.set_ylabel("residual of mean log measure")
    curv = fit.curvature.get(v0)
    ax.set_title(f"residuals; curvature in log {v0}: {curv['coef']:.3g} (p = {curv['p_value']:.2g})" if curv else "residuals", fontsize=8)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    files["residuals"] = f"{tag}_residuals.png"
    fig.savefig(os.path.join(out, files["residuals"]), dpi=110)
    plt.close(fig)
    return files


def _write_report(summary: dict, results: list[dict], claim, exp: Experiment, out: str) -> dict:
    md = [f"# {claim.id}: theory against simulation", "",
          f"*{claim.title}* ({claim.paper}); status **{claim.status}**" + (f"; flags: {', '.join(claim.flags)}" if claim.flags else ""), "",
          f"Experiment: {exp.setting}. Grid: {summary['grid']}, {summary['seeds']} seed(s) per cell, fixed settings {summary['fixed']}.",
          f"Fit: OLS of the seed-averaged log measure on log({', '.join(summary['fit_variables'])}) over the cells, "
          f"t-based 95% CI (and BCa bootstrap over cells); stated polylog factors are known offsets. Margin {summary['margin']}.", "",
          f"Provenance: {summary['provenance']}. Tasks: {summary['task_status']}.", ""]
    files = {}
    for i, res in enumerate(results):
        tag = f"{res['quantity']}" + (f"_{res['reading']}" if res["reading"] else "") + f"_{i}"
        pf = _plots(res, claim, out, tag)
        files.update({f"{tag}_{k}": v for k, v in pf.items()})
        md += [f"## {res['quantity']} {res['kind']}( {res['expr']} )" + (f" — reading `{res['reading']}`" if res["reading"] else ""), "",
               f"**Verdict: {res['verdict']}**; negative control (exponent {res['negative_control']['exponent_tested']:g} in "
               f"{res['negative_control']['variable']}): {res['negative_control']['verdict']}"
               + ("" if res["negative_control"]["has_power"] else " — **the comparison has no power**"), "",
               "| variable | predicted | estimate | 95% CI (t) | 95% CI (BCa) | log offset | verdict | why |", "|---|---|---|---|---|---|---|---|"]
        for f in res["fits"]:
            bca = f"[{f['bca_low']:.3f}, {f['bca_high']:.3f}]" if f["bca_low"] is not None else "-"
            md.append(f"| {f['variable']} | {f['predicted']:g} | {f['estimate']:.3f} | [{f['ci_low']:.3f}, {f['ci_high']:.3f}] | {bca} | "
                      f"{f['log_offset']:g} | {f['verdict']} | {f['reason']} |")
        extra = []
        for v, c in res["curvature"].items():
            extra.append(f"curvature in log {v}: {c['coef']:.3g} (p = {c['p_value']:.2g})")
        if res["interaction"]:
            extra.append(f"log d x log k interaction: {res['interaction']['coef']:.3g} (p = {res['interaction']['p_value']:.2g})")
        md += ["", "; ".join(extra) + (f". {res['cells']} cells, {res['df']} degrees of freedom." if extra else ""), "",
               f"![loglog]({pf['loglog']})", f"![collapse]({pf['collapse']})", f"![residuals]({pf['residuals']})", ""]
    text = "\n".join(md) + "\n"
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(text)
    files["markdown"] = os.path.join(out, "report.md")
    files["html"] = write_html(text, out, "report.html", f"{claim.id}: theory against simulation")
    return files


def write_html(markdown: str, out: str, name: str, title: str) -> str:
    """A self-contained HTML page from our Markdown subset: images inlined as base64 PNG."""
    import html

    body, in_table = [], False
    for line in markdown.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if all(set(c) <= {"-"} for c in cells):
                continue
            tag = "th" if not in_table else "td"
            if not in_table:
                body.append("<table>")
                in_table = True
            body.append("<tr>" + "".join(f"<{tag}>{_inline(html.escape(c))}</{tag}>" for c in cells) + "</tr>")
            continue
        if in_table:
            body.append("</table>")
            in_table = False
        if line.startswith("!["):
            src = line[line.index("(") + 1:line.rindex(")")]
            path = os.path.join(out, src)
            if os.path.isfile(path):
                with open(path, "rb") as f:
                    data = base64.b64encode(f.read()).decode()
                body.append(f'<p><img alt="{html.escape(src)}" src="data:image/png;base64,{data}"></p>')
            else:
                body.append(f'<p><a href="{html.escape(src)}">{html.escape(src)}</a></p>')
        elif line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            body.append(f"<h{level}>{_inline(html.escape(line[level:].strip()))}</h{level}>")
        elif line.strip():
            body.append(f"<p>{_inline(html.escape(line))}</p>")
    if in_table:
        body.append("</table>")
    page = f"""<!doctype html><html><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>body{{font-family:sans-serif;max-width:1100px;margin:2em auto;}}table{{border-collapse:collapse;}}
td,th{{border:1px solid #ccc;padding:4px 8px;font-size:13px;}}img{{max-width:100%;}}</style></head>
<body>{''.join(body)}</body></html>"""
    path = os.path.join(out, name)
    with open(path, "w") as f:
        f.write(page)
    return path


def _inline(s: str) -> str:
    import re

    s = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", s)
    s = re.sub(r"`(.+?)`", r"<code>\1</code>", s)
    return re.sub(r"\*(.+?)\*", r"<i>\1</i>", s)
