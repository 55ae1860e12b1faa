"""The documents of a comparison: Markdown, a self-contained HTML page and its PNG figures.

Figures: the ratio plot (the measure over the claim's function against scale, with the fitted trend and its
band, the correction to scaling where one was fitted, and the resolution), the log-log plot (raw seeds faint,
censored values as arrows, cell means bold, the fitted function with its log terms, the claim's function dotted,
cells outside the hypotheses' window hollow and the window shaded), the collapse against the bound's expression,
the residuals, and the local exponent against scale with the prediction.
"""
from __future__ import annotations

import math
import os
import re

import numpy as np
import sympy as sp

from ibcheck.simulate.experiments.design import LOG_INVERSE
from ibcheck.simulate.report.figures import save_figure, write_html
from ibcheck.simulate.stats.fit import seed_rows
from ibcheck.simulate.stats.ratio import SCALE, log_claim
from ibcheck.simulate.verdict.analysis import BoundAnalysis
from ibcheck.solvers.kkt.records import last_record
from ibcheck.theory.atomic import write_text
from ibcheck.theory.result import held_text, markdown_code, markdown_table, markdown_text, report_markdown, settings_text

LN10 = math.log(10)
PARAMS = {"L": "2"}
# ---------------------------------------------------------------------------------------------
# Figures and documents.


def _fmt(x, spec=".3f") -> str:
    return "-" if x is None or (isinstance(x, float) and not math.isfinite(x)) else format(x, spec)


def _ci(ci, spec=".3f") -> str:
    return "-" if not ci else f"[{_fmt(ci[0], spec)}, {_fmt(ci[1], spec)}]"


def _inside_lookup(summary: dict) -> dict:
    app = summary.get("applicability") or {}
    return {tuple(sorted((k, float(v)) for k, v in c["cell"].items())): c["inside"] for c in app.get("cells", [])}


def _plots(res, summary: dict, claim, out: str, tag: str) -> dict:
    """The four figures of one bound (log-log, local exponents, collapse, residuals): {name: file}."""
    import matplotlib  # heavy: matplotlib, loaded only when a report is written
    matplotlib.use("Agg")

    figs = {"ratio": _ratio_figure(res, out, tag), "loglog": _loglog_figure(res, summary, claim, out, tag),
            "local": _local_figure(res, out, tag), "collapse": _collapse_figure(res, claim, out, tag),
            "residuals": _residual_figure(res, out, tag)}
    if getattr(getattr(res, "spec", None), "transform", None) == LOG_INVERSE and (exp := _exp_figure(res, out, tag)):
        figs["exp"] = exp
    return figs


def _exp_figure(res, out: str, tag: str) -> str | None:
    """An exp-type bound, ``y = A exp(-c h)``, on its own scale: log(1/y) against h (the claim's function) per cell,
    seeds faint and cell means bold, with the claim's fit ``a + c h`` (a = -log A and c free, least squares over the
    seeds) and, dashed, the same with a lower-order term ``b log h`` beside it (what the test allows to excuse a move).
    A straight line is the claim; curvature is a deviation or a lower-order term. None where fewer than 3 cells have a
    finite h."""
    import matplotlib.pyplot as plt  # heavy: matplotlib

    an = res.analysis
    claim = {t.name: an.predicted.get(t.name, 0.0) for t in an.terms}
    pts = []
    for r in res.data:
        lg, z = log_claim(r, claim, an.terms), r.get("value")
        if lg is not None and isinstance(z, (int, float)) and math.isfinite(z) and not r.get("censor") and lg < 700:
            pts.append((math.exp(lg), float(z), tuple(sorted((v, r.get(v)) for v in an.variables))))
    cells: dict = {}
    for h, z, key in pts:
        cells.setdefault(key, []).append((h, z))
    if len(cells) < 3:
        return None
    h = np.array([p[0] for p in pts])
    z = np.array([p[1] for p in pts])
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ax.scatter(h, z, s=8, color="tab:blue", alpha=0.25, label="seeds")
    means = sorted((float(np.mean([a for a, _ in v])), float(np.mean([b for _, b in v]))) for v in cells.values())
    ax.plot([m[0] for m in means], [m[1] for m in means], "o", color="tab:blue", ms=5, label="cell means")
    grid = np.linspace(h.min(), h.max(), 200)
    X = np.column_stack([np.ones_like(h), h])
    a, c = np.linalg.lstsq(X, z, rcond=None)[0]
    ax.plot(grid, a + c * grid, "-", color="tab:red", lw=1.5, label=f"the claim's form: a + c h (c = {c:.3g})")
    if h.min() > 0:
        X2 = np.column_stack([X, np.log(h)])
        a2, c2, b2 = np.linalg.lstsq(X2, z, rcond=None)[0]
        ax.plot(grid, a2 + c2 * grid + b2 * np.log(grid), "--", color="tab:green", lw=1.2,
                label=f"with a lower-order term b log h (b = {b2:.3g})")
    ax.set_xlabel("h (the claim's function at the cell; a linear axis, on which the claim is a straight line)")
    ax.set_ylabel(f"log(1/{res.quantity})")
    name = f"{tag}_exp.png"
    save_figure(fig, ax, os.path.join(out, name), f"log(1/{res.quantity}) against h: {an.verdict}", legend_fontsize=6)
    return name


def _log_function(terms, coef: dict, cell: dict) -> float:
    """sum_t coef[t] * regressor_t at a cell (nan where a term is undefined): a fitted or claimed log function."""
    total = 0.0
    for t in terms:
        c = coef.get(t.name, 0.0)
        if c:
            total += c * t.regressor(cell["log_" + t.variable])
    return total


def _censor_arrows(ax, xs, ys, sides, colour) -> None:
    """Censored values as arrows: up from an AtLeast bound, down from an AtMost one."""
    for x, y, side in zip(xs, ys, sides):
        if side:
            ax.annotate("", (x, y + 0.12 * side), (x, y), arrowprops={"arrowstyle": "->", "color": colour, "lw": 1, "alpha": 0.7})


def _ratio_figure(res, out: str, tag: str) -> str:
    """log10(measure / claim's function) against the first variable: seeds faint (censored ones as arrows), cell means
    bold, the power-family trend with its slope's +-2 se, and the resolution as a wedge of slopes +-resolution about
    the mean (what the sweep would detect). Over more than 30 decades (a trajectory) the axis is log10(ln x), where
    a log factor is a straight line."""
    import matplotlib.pyplot as plt  # heavy: matplotlib

    an = res.analysis
    ft = an.function
    v0 = an.variables[0]
    srows, _ = seed_rows(res.data, an.variables, an.offsets)
    claim = {t.name: an.predicted.get(t.name, 0.0) for t in an.terms}
    tz = any(t.toward_zero for t in an.terms if t.variable == v0)
    us_all = [(-c["log_" + v0] if tz else c["log_" + v0]) for c in an.fit.cells]
    wide = bool(us_all) and max(us_all) - min(us_all) > 30 * LN10 and min(us_all) > 0

    def xpos(lx):
        u = -lx if tz else lx
        return math.log10(u) if wide else lx / LN10

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    rs = [(xpos(r["log_" + v0]), (r["lm"] - _log_function(an.terms, claim, r)) / LN10, r["side"]) for r in srows]
    rs = [x for x in rs if math.isfinite(x[1]) and math.isfinite(x[0])]
    ax.scatter([x for x, _, _ in rs], [y for _, y, _ in rs], s=8, color="tab:blue", alpha=0.25, label="seeds")
    _censor_arrows(ax, [x for x, _, _ in rs], [y for _, y, _ in rs], [s for _, _, s in rs], "tab:blue")
    cells = [(c["log_" + v0], c["mean_log"] - _log_function(an.terms, claim, c)) for c in an.fit.cells]
    cells = [c for c in cells if math.isfinite(c[1])]
    if cells:
        lx = np.array([c[0] for c in cells])
        ys = np.array([c[1] for c in cells])
        us = -lx if tz else lx
        ax.plot([xpos(x) for x in lx], ys / LN10, "o", color="tab:blue", ms=4 if wide else 5, label="cell means")
        corrected = _corrected_means(ax, an, claim, v0, xpos)
        # judged on the corrected fit where a correction levelled the ratio: its trend is drawn through those means
        base, mid = float(np.mean(corrected if corrected else ys)), float(np.mean(us))
        grid = np.linspace(us.min(), us.max(), 80)
        gx = [xpos(-g if tz else g) for g in grid]
        m = next((t for t in (ft.tests if ft else ()) if t.variables == (v0,) and t.family == "power"), None)
        if m is not None and math.isfinite(m.se):
            line = base + m.estimate * (grid - mid)
            ax.plot(gx, line / LN10, "-", color="tab:red", lw=1.5,
                    label=f"trend {m.factor(m.estimate)}" + (" (correction taken off)" if corrected else ""))
            ax.fill_between(gx, (line - 2 * m.se * np.abs(grid - mid)) / LN10, (line + 2 * m.se * np.abs(grid - mid)) / LN10,
                            color="tab:red", alpha=0.12, label="slope +-2 se")
            if math.isfinite(m.resolution):
                ax.fill_between(gx, (base - m.resolution * np.abs(grid - mid)) / LN10, (base + m.resolution * np.abs(grid - mid)) / LN10,
                                color="0.5", alpha=0.12, label=f"resolution {m.factor()}")
        ax.axhline(base / LN10, color="black", lw=0.8, ls=":", label="the claim (constant free)")
    name = f"{tag}_ratio.png"
    how = f"{an.verdict}" + (f", attained: {ft.attained}" if ft and ft.attained is not None else "")
    ax.set_xlabel(f"log10 ln {v0}" if wide else f"log10 {v0}" + (" (tends to 0)" if tz else ""))
    ax.set_ylabel(f"log10 ({res.quantity} / claim's function)")
    save_figure(fig, ax, os.path.join(out, name), f"{res.quantity} / claim's function against {v0}: {how}", legend_fontsize=6)
    return name


def _corrected_means(ax, an, claim: dict, v0: str, xpos) -> list[float]:
    """The cell means with the correction to scaling that levelled the ratio along ``v0`` taken off (hollow): what the
    verdict judged, beside the raw means. A correction in the claim's own scale reads log g at each cell. Returns their
    natural-log values (none without such a correction), the level the trend is drawn at.

    Pitfall avoided: the trend judged on the corrected fit drawn at the raw means' level ran through neither set."""
    ft = an.function
    fits = [c for c in (ft.corrections if ft else ()) if c.variable == v0 and c.decision == "levels off" and c.shape is not None
            and not c.part]
    if not fits:
        return []
    corr = fits[0].shape
    pts = []
    for c in an.fit.cells:
        lx = log_claim(c, an.predicted, an.terms) if corr.variable == SCALE else c.get("log_" + corr.variable)
        if lx is None:
            continue
        y = c["mean_log"] - _log_function(an.terms, claim, c) - corr.offset(lx, c.get("run"))
        if math.isfinite(y):
            pts.append((xpos(c["log_" + v0]), y / LN10))
    if pts:
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o", mfc="none", color="tab:green", ms=6,
                label=f"cell means, correction {fits[0].term} taken off")
    return [p[1] * LN10 for p in pts]


def _cell_inside(res, summary: dict):
    """A function of a fit cell: does it lie inside the claim's window (True where the window is unknown)?"""
    an = res.analysis
    inside = _inside_lookup(summary)
    traj = summary.get("experiment_trajectory", False)

    projected: dict[tuple, dict] = {}  # per set of variables: each window cell's values of them -> all inside

    def cell_inside(c):
        """Every window cell that agrees with ``c`` on the fitted variables lies inside (a lookup: a scan per cell took
        61 of 90 s at 7,700 cells)."""
        if traj or not inside:
            return all(inside.values()) if inside else True
        key = tuple(sorted((v, float(c[v])) for v in an.variables if c.get(v) is not None))
        names = tuple(v for v, _ in key)
        if names not in projected:
            index: dict[tuple, bool] = {}
            for k, ins in inside.items():
                values = dict(k)
                if all(n in values for n in names):
                    proj = tuple((n, values[n]) for n in names)
                    index[proj] = index.get(proj, True) and bool(ins)
            projected[names] = index
        return projected[names].get(key, True)

    return cell_inside


MAX_RUN_LABELS = 10  # a trajectory plot names its first runs in the legend; the rest are counted


def _natural(key: tuple) -> list:
    """A sort key that reads the numbers in a label as numbers ("seed 2" before "seed 10")."""
    return [int(t) if t.isdigit() else t for part in key for t in re.split(r"(\d+)", str(part))]


def _loglog_figure(res, summary: dict, claim, out: str, tag: str) -> str:
    """Log-log: raw seeds faint, cell means bold (hollow outside the window), fitted line, theory slope dotted."""
    import matplotlib.pyplot as plt  # heavy: matplotlib

    an = res.analysis
    fit = an.fit
    v0, others = an.variables[0], an.variables[1:]
    cell_inside = _cell_inside(res, summary)
    srows, _ = seed_rows(res.data, an.variables, an.offsets)
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    groups: dict[tuple, list] = {}
    by_run = not others and any("run" in c for c in fit.cells)  # a trajectory: each run (cell and seed) its own colour
    for c in fit.cells:
        groups.setdefault((str(c.get("run")),) if by_run else tuple(round(c["log_" + o], 9) for o in others), []).append(c)
    colors = plt.get_cmap("viridis")(np.linspace(0, 0.85, max(1, len(groups))))
    ordered = sorted(groups.items(), key=lambda kv: _natural(kv[0])) if by_run else sorted(groups.items())  # seed 2 before seed 10
    for i, ((key, cells), col) in enumerate(zip(ordered, colors)):
        # every group its own colour; past MAX_RUN_LABELS, one legend line says how many more (77 lines overflowed it)
        more = f"... {len(ordered) - MAX_RUN_LABELS} more{' runs' if by_run else ''}, one colour each" if i == MAX_RUN_LABELS else None
        if by_run:
            lab = f"run {key[0]}" if i < MAX_RUN_LABELS else more
            raw = [r for r in srows if str(r.get("run")) == key[0]]
        else:
            lab = (", ".join(f"{o}={math.exp(k):.4g}" for o, k in zip(others, key)) or "cells") if i < MAX_RUN_LABELS else more
            raw = [r for r in srows if all(abs(r["log_" + o] - k) < 1e-9 for o, k in zip(others, key))]
        ax.scatter([r["log_" + v0] / LN10 for r in raw], [r["lm"] / LN10 for r in raw], s=8, color=col, alpha=0.25)
        xs = np.array([c["log_" + v0] for c in cells])
        ys = np.array([c["mean_log"] for c in cells])
        ins = np.array([cell_inside(c) for c in cells])
        ax.plot(xs[ins] / LN10, ys[ins] / LN10, "o", color=col, ms=6, label=lab)
        ax.plot(xs[~ins] / LN10, ys[~ins] / LN10, "o", mfc="none", color=col, ms=6,
                label=(lab + " (outside window)") if lab and (~ins).any() else None)
        _censor_arrows(ax, [r["log_" + v0] / LN10 for r in raw], [r["lm"] / LN10 for r in raw], [r["side"] for r in raw], col)
        # the fitted function with every term it states (log factors included), and the claim's own function (dotted,
        # its constant set by the cells' mean): a straight line would sit decades away for a claim with log terms
        fitted = np.array([fit.intercept + _log_function(an.terms, fit.estimate, c) for c in cells])
        claimed = np.array([_log_function(an.terms, an.predicted, c) for c in cells])
        ax.plot(xs / LN10, fitted / LN10, "-", color=col, lw=1.5)
        ax.plot(xs / LN10, (claimed + float(np.mean(ys - claimed))) / LN10, ":", color=col, lw=1.2)
    ins_x = [c["log_" + v0] / LN10 for c in fit.cells if cell_inside(c)]
    if ins_x and len(ins_x) < len(fit.cells):
        ax.axvspan(min(ins_x), max(ins_x), color="tab:green", alpha=0.08, label="hypotheses hold")
    elif not ins_x:
        ax.text(0.02, 0.02, "the hypotheses fail at every cell (extrapolated)", transform=ax.transAxes, fontsize=7, color="tab:red")
    off = " - polylog offset" if any(p or q for p, q in an.offsets.values()) else ""
    ax.set_xlabel(f"log10 {v0}")
    ax.set_ylabel(f"log10 {res.quantity}{off}")
    title = (f"{claim.id}: {res.quantity} {res.kind}({res.expr})" + (f" [{res.reading}]" if res.reading else "")
             + f"\nfitted function (solid, every term) vs the claim's (dotted): {an.verdict}")
    name = f"{tag}_loglog.png"
    save_figure(fig, ax, os.path.join(out, name), title, legend_fontsize=6)
    return name


def _local_figure(res, out: str, tag: str) -> str:
    """Local exponent against scale, with the prediction as a line."""
    import matplotlib.pyplot as plt  # heavy: matplotlib

    an = res.analysis
    v0 = an.variables[0]
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    for v, col in zip(an.variables, plt.get_cmap("tab10").colors):
        le = an.drift[v].local
        if not le:
            continue
        xs = [e.log_center / LN10 for e in le]
        ys = [e.estimate for e in le]
        err = [[e.estimate - e.ci[0] if e.ci else 0 for e in le], [e.ci[1] - e.estimate if e.ci else 0 for e in le]]
        ax.errorbar(xs, ys, yerr=err, fmt="o-", color=col, capsize=3, label=f"local exponent in {v} (95% CI)")
        ax.axhline(an.predicted[v], color=col, ls=":", lw=1.2, label=f"prediction {an.predicted[v]:g}")
        ex = an.extrapolated[v]
        if ex.estimate is not None and ex.ci and all(math.isfinite(x) for x in ex.ci):
            ax.axhspan(ex.ci[0], ex.ci[1], color=col, alpha=0.08, label=f"extrapolated {ex.estimate:.2f} {_ci(ex.ci, '.2f')}")
    ax.set_xlabel("log10 scale (window centre)")
    ax.set_ylabel("local exponent")
    dr = an.drift[v0]
    name = f"{tag}_local.png"
    save_figure(fig, ax, os.path.join(out, name),
                f"local exponents; drift p = {_fmt(dr.p_value, '.2g')} "
                f"(moving {dr.direction}{' from' if dr.direction == 'away' else ''} the prediction)", legend_fontsize=6)
    return name


def collapse_points(res) -> tuple[list[float], list[float], list[int], bool]:
    """(x, y, side, constant) of the collapse figure: y = log10 of each seed row's measure, x = log10 of the claim's
    function g at it (stated exponents, constants 1), or log10 of the first variable where g is constant along the
    swept variables (``constant``); side marks a censored row (+1 AtLeast, -1 AtMost). Rows where g or the measure is
    undefined are left out."""
    an = res.analysis
    v0 = an.variables[0]
    srows, _ = seed_rows(res.data, an.variables, an.offsets)
    exps = {t.name: an.predicted.get(t.name, 0.0) for t in an.terms}
    pts = [(_log_function(an.terms, exps, r) / LN10, r["lm"] / LN10, int(r["side"]), r["log_" + v0] / LN10) for r in srows]
    pts = [p for p in pts if math.isfinite(p[0]) and math.isfinite(p[1]) and math.isfinite(p[3])]
    constant = bool(pts) and max(p[0] for p in pts) - min(p[0] for p in pts) < 1e-12
    return [p[3] if constant else p[0] for p in pts], [p[1] for p in pts], [p[2] for p in pts], constant


def _collapse_figure(res, claim, out: str, tag: str) -> str:
    """Collapse: log10 of the measure against log10 of the claim's function g (its stated exponents, constants 1),
    each seed's row, censored ones as arrows; on one line of slope 1 where the theory's form holds. A constant g (no
    stated exponent along the swept variables) is plotted against the first variable instead, on one flat line.

    Pitfall avoided: g evaluated in floats from the raw rows left 8 of 17 plots empty: along a trajectory T reaches
    1e800 (kept as log10 T), and a claim's constants or held values (gamma) are not in the rows. The same log rows and
    log g as the ratio figure are used here."""
    import matplotlib.pyplot as plt  # heavy: matplotlib

    v0 = res.analysis.variables[0]
    b = res.bound
    expr = b.expr.subs({s: 1 for s in b.expr.free_symbols if s.name in claim.constants})
    xs, ys, sides, constant = collapse_points(res)
    fig, ax = plt.subplots(figsize=(5.2, 4.2))
    title = "collapse: points on one line of slope 1 if the theory's form holds"
    if xs:
        ax.scatter(xs, ys, s=10, alpha=0.5, color="tab:blue", label=f"each seed's row ({len(xs)})")
        _censor_arrows(ax, xs, ys, sides, "tab:blue")
        k = float(np.median([y - (0.0 if constant else x) for x, y in zip(xs, ys)]))
        lo, hi = min(xs), max(xs)
        ax.plot([lo, hi], [k, k] if constant else [k + lo, k + hi], "k--", lw=1,
                label="flat (the constant bound)" if constant else "slope 1 (median offset)")
    else:
        ax.text(0.5, 0.5, "no row with a finite measure and claim value", ha="center", va="center", transform=ax.transAxes)
    if constant:
        title = "collapse for a constant bound: points on one flat line if it holds"
        ax.set_xlabel(f"log10 {v0}")
    else:
        ax.set_xlabel(f"log10 of the theory's function: {sp.sstr(expr)} (constants 1)")
    ax.set_ylabel(f"log10 {res.quantity}")
    name = f"{tag}_collapse.png"
    save_figure(fig, ax, os.path.join(out, name), title, legend_fontsize=7)
    return name


def _residual_figure(res, out: str, tag: str) -> str:
    """Residuals of the fit against the first variable, with the curvature test in the title."""
    import matplotlib.pyplot as plt  # heavy: matplotlib

    an = res.analysis
    fit, v0 = an.fit, an.variables[0]
    fig, ax = plt.subplots(figsize=(5.2, 3.4))
    ax.axhline(0, color="gray", lw=1)
    ax.plot([c["log_" + v0] / LN10 for c in fit.cells], [c["residual"] for c in fit.cells], "o")
    ax.set_xlabel(f"log10 {v0}")
    ax.set_ylabel("residual of mean log measure")
    curv = fit.curvature.get(v0)
    name = f"{tag}_residuals.png"
    save_figure(fig, ax, os.path.join(out, name),
                f"residuals; curvature in log {v0}: {curv['coef']:.3g} (p = {curv['p_value']:.2g})" if curv else "residuals")
    return name


def _failures(summary: dict, most: int = 20) -> list[str]:
    """Each failed row with its run (cell, seed) and reason: a failure is never only a count."""
    rows = summary.get("failures") or []
    if not rows:
        return []
    out = [f"Failed rows ({len(rows)}; not measurements, counted in the cell table):", ""]
    for f in rows[:most]:
        cell = ", ".join(f"{k}={v}" for k, v in f["cell"].items())
        out.append(f"- {markdown_text(cell)}, seed {f['seed']}: {markdown_text(f['kind'])}: {markdown_text(f['error'])}")
    if len(rows) > most:
        out.append(f"- ... and {len(rows) - most} more (summary.json lists every one)")
    return out + [""]


def _cell_table(summary: dict, results: list[BoundAnalysis]) -> list[str]:
    app = summary.get("applicability")
    if not app or not app["cells"]:
        return []
    hyps = [h for h, v in app["per_hypothesis"].items() if not v["qualitative"] and not v["skipped"]]
    q = results[0]
    measure = {}
    traj = summary.get("experiment_trajectory", False)
    if not traj:
        for c in q.analysis.fit.cells:
            measure[tuple(round(c["log_" + v], 9) for v in q.analysis.variables)] = (c["mean_log"], c["n_seeds"])
    md = ["## Hypotheses at every cell", "",
          f"{app['cells_inside']} of {app['cells_total']} cells lie inside the hypotheses' window. Constants: "
          + (", ".join(f"{k}={v:g}" for k, v in app["constants"].items()) or "none set") + f" ({app['constants_note']}). "
          + (f"Assumed (qualitative, not evaluated): {markdown_text(', '.join(app['assumed']))}. " if app["assumed"] else "")
          + "".join(f"Not evaluated by this design: {markdown_text(h)} ({markdown_text(why)}). " for h, why in app["skipped"].items()), ""]
    if hyps:
        # the parsed formula (sympy syntax, as code), never the user's raw text: LaTeX or Markdown in it stays literal
        md.append("Hypotheses: " + "; ".join(f"{markdown_text(h)}: `{_hypothesis_text(app['per_hypothesis'][h])}` (fails at "
                                             f"{app['per_hypothesis'][h]['fails']} cells)" for h in hyps) + ".")
        md.append("")
    cols = list(app["cells"][0]["cell"])
    rows = []
    for c in app["cells"]:
        hv = ["yes" if c["hypotheses"].get(h) else "no" if c["hypotheses"].get(h) is False else "?" for h in hyps]
        key = tuple(round(math.log(float(c["cell"][v])), 9) for v in q.analysis.variables if v in c["cell"])
        m = measure.get(key)
        mtxt = f"{math.exp(m[0]):.4g}" if m and not any(p or qq for p, qq in q.analysis.offsets.values()) else \
            (f"exp({m[0]:.4g}) after offset" if m else "(trajectory)" if traj else "-")
        rows.append([f"{c['cell'][v]:g}" for v in cols] + ["**yes**" if c["inside"] else "no"] + hv + [mtxt, str(c["seeds"])])
    return md + [markdown_table([dict(zip(range(len(r)), r)) for r in rows], None, cols + ["inside"] + [markdown_text(h) for h in hyps]
                                + [f"{q.label} (geometric mean)", "seeds"]), ""]


def _records_text(cell: dict) -> str:
    """Per sample: the engine's running extremum at its end and the start that made its last record, e.g.
    ``10.55 (23/120)``."""
    out = []
    for r in cell.get("running_max") or []:
        vals = [float(x) if isinstance(x, (int, float)) else float("nan") for x in r]
        lr = last_record(vals)
        out.append(f"{_fmt(vals[-1], '.4g') if vals else '-'} ({'-' if lr is None else lr + 1}/{len(vals)})")
    return ", ".join(out) or "-"


def _families_text(cell: dict) -> str:
    """Per sample: its distinct points and their near-copy families (outputs within 2%), e.g. ``17/4, 1/1``."""
    pts, fams = cell.get("distinct") or [], cell.get("families") or []
    return ", ".join(f"{p}/{f}" for p, f in zip(pts, fams)) or "-"


def _kkt_section(summary: dict) -> list[str]:
    """Claims about every KKT point: per cell, the certified networks, the distinct points per sample, what the
    certificates rest on (ties), each distinct point's flip norm, and the transfer test on fresh points with its
    negative controls."""
    kkt = summary.get("kkt")
    if not kkt:
        return []
    transfer = {tuple(sorted(t["cell"].items())): t for t in summary.get("transfer") or []}
    rows = []
    for c in kkt:
        t = transfer.get(tuple(sorted(c["cell"].items())), {})
        norms = [", ".join(_fmt(x, ".3g") if isinstance(x, (int, float)) else ">= " + ", ".join(f"{v:.3g}" for v in dict(x).values())
                           for x in f) for f in c.get("flip_norms") or []]
        ctl = "; ".join(f"{k.replace('_', ' ')} {v['ucb'] if v.get('ucb') is not None else v['lcb']:.3f}"
                        + (" (fails, as it must)" if v.get("failed") else " (**passes**)") for k, v in (t.get("controls") or {}).items())
        near = "; ".join(f"{v['ucb'] if v.get('ucb') is not None else v['lcb']:.3f}" + (" (fails)" if v.get("failed") else " (passes)")
                         for v in (t.get("near_kkt") or {}).values())
        rows.append({"cell": ", ".join(f"{k}={v:g}" for k, v in c["cell"].items()),
                     "certified / candidates": f"{c['networks_certified']}/{c['networks_trained']}",
                     "distinct per sample": ", ".join(str(x) for x in c.get("distinct") or []) or "-",
                     "ties": f"{min(c['ties'])}-{max(c['ties'])}" if c.get("ties") else "-",
                     "largest residual": _fmt(c.get("max_eps"), ".1e"),
                     "engine ran in full": "yes" if c.get("complete") else "no",
                     "search per sample (unseen estimate, stop)": ", ".join(
                         f"{_fmt(u, '.2f')} ({st})" for u, st in zip(c.get("unseen") or [], c.get("stops") or [])) or "-",
                     "points / families per sample": _families_text(c),
                     "running extremum per sample (its last record: start / starts)": _records_text(c),
                     "depth stability (largest flip norm)": c.get("depth_note") or "-",
                     "flip norms of the distinct points (samples split by ;)": "; ".join(norms) or "-",
                     "spread (largest / smallest)": ", ".join(f"{x:.3g}" for x in c.get("spread") or []) or "-",
                     "own z on fresh points (bound)": _fmt(t.get("own_lcb"), ".3f"),
                     "transfer: smallest fraction (upper bound)": (f"{_fmt(t.get('fraction_min'), '.3f')} ({_fmt(t.get('fraction_ucb'), '.3f')})"
                                                                   if t.get("tested") else "not tested"),
                     "negative controls (upper bound)": ctl or "-",
                     "resolution (largest r refuted)": ("-" if "shortened_z" not in (t.get("controls") or {}) else
                                                        "none refuted" if t.get("resolution") is None else f"{t['resolution']:g}"
                                                        + (" (finest tried)" if t["resolution"] >= max(t.get("shortenings") or [1]) else "")),
                     "raw GD, not a control (upper bound)": near or "-",
                     "transfer reading": ("withheld: " + t["withheld"]) if t.get("withheld") else
                     ("-" if not t.get("tested") else "transferable" if t.get("transferable") else "refuted")})
    return ["## KKT points", "",
            "The claim is about every KKT point of (P): per cell, the KKT engine's candidates (the trained networks and the "
            "engine's own pattern sources, below), each a KKT point only when its certificate holds at a relative residual "
            "of 1e-6 (ties by the Clarke rule), grouped into distinct points by function (outputs within 1e-3); whether the "
            "engine ran in full; per sample its points and their near-copy families (outputs on the sample within 2%: the "
            "points multiply with the depth of the search as near copies, so they are reported, never counted), the "
            "Good-Turing estimate that one more GD start finds a new point (reported; it sees only basins reached more than "
            "once) and why the starts stopped (stopped: the record rule held, no record of the largest flip norm beyond "
            "0.5% in the last half of at least 20 starts; cap: the budget's most starts with the extremum still rising); "
            "the depth stability of the cell's class (bench/kkt_recall.py --depth: the budget's largest flip norm within "
            "max(2%, twice its resolution) of a reference at least 4x deeper on 90% of 30 instances at the cells' own n, "
            "with a 95% lower bound of 80%; the row counts only there, and where every sample's extremum stopped); the "
                        "flip norm of each distinct point and their spread; "
            "each point's own z on 2000 fresh points (its one-sided 95% lower bound), and the transfer of the most robust point's z "
            "to every other point: the smallest fraction and its one-sided 95% upper bound (Bonferroni over the pairs), which "
            "refutes the transfer where it lies below 1 - eps; the negative controls must fail that way (their upper bound "
            "below 1 - eps: the robust construction at k >= 4, and the most robust point's own z at half its norm), and where "
            "one passes the cell's transfer reading is withheld; the resolution is the largest r at which that point's own z "
            "shortened to r times its norm is refuted (r in 0.5, 0.8, 0.9, 0.95, 0.98, 0.99); the raw GD networks are shown beside "
            "them, not as a control (they are not KKT points, and approach one in direction). "
            "delta is not reported (multipliers on active points only: at most 1e-6 by construction).", "",
            markdown_table(rows), ""] + _search_section(kkt)


def _search_section(kkt: list[dict]) -> list[str]:
    """The search for more KKT points, per cell and origin: candidates tried, certified, and samples where the origin
    reached a point no GD network reached; and what the dual check's lower bound says of global optimality."""
    rows = []
    for c in kkt:
        for x in c.get("search") or []:
            rows.append({"cell": ", ".join(f"{k}={v:g}" for k, v in c["cell"].items()), "origin": x["origin"], "tried": x["tried"],
                         "certified": x["certified"], "new KKT points": x["new_points"],
                         "uncertified, polished into a known point": x.get("reached_known", 0),
                         "uncertified: distance to a known point": ("-" if not x.get("known_distance") else
                                                                    "{:.2g}-{:.2g}".format(*x["known_distance"]))})
    if not rows:
        return []
    lbs = [c["dual_lower_bound"] for c in kkt if c.get("dual_lower_bound") is not None]
    refuted = sum(sum(c.get("not_global") or []) for c in kkt)
    glob = (f"no distinct point is certified global (the exact dual check enumerates the support points' activation patterns, "
            f"2^n of them at n <= d); a fixed-pattern ascent bounds the dual check from below: largest bound {max(lbs):.6g}, "
            f"{refuted} point(s) proved not global (bound above 1)" if lbs else "not computed")
    return ["### The search for more KKT points", "",
            "Each origin's candidates, certified from scratch under one policy: `start:gd`, the networks trained by GD (the "
            "claim's own); `gd:per-cluster`, GD in the data's span from per-cluster initializations at scales 1-3, bias 0 or "
            "-0.5, one or two neurons per cluster; `cone:partition`, every partition of each class's clusters among its "
            "neurons (sub-averaging cones; where the budget enumerates them); `cone:<family>` the named families and "
            "leave-one-out cones beyond. From each pattern the tie-aware polish solves (P) on its activation cone, certifies "
            "the optimum, and flips only the walls (P) does not admit (a tie is admitted where the neuron's sign is opposite "
            "the point's label and its multiplier at most the point's), certifying between programs; it stops early where its "
            "function reaches a point already found. Identical cones are solved once.", "",
            markdown_table(rows), "", f"Global optimality: {glob}.", ""]


def _settings(values: dict) -> str:
    """:func:`~theory.result.settings_text`, escaped for Markdown."""
    return markdown_text(settings_text(values))


def _rounds_table(summary: dict) -> list[str]:
    rounds = summary.get("rounds") or []
    if not summary.get("budget"):
        return [f"One look at level alpha = {summary['alpha']:g} (no --budget: a fixed design).", ""]
    label = summary["results"][0]["label"]
    md = ["## Rounds", "",
          f"Budget {summary['budget']:.4g} s of work (reference seconds: each task weighted by the experiment's declared cost, the "
          f"same under any machine load); alpha spending: {summary['spending']} (Lan-DeMets), each look tested at the nominal level "
          "of the exact group-sequential boundary at the information fractions (work over budget) of all looks so far, so that the "
          "chance of any false decision over all looks is 0.05.", ""]
    rows = [{"round": r["round"], "added": r["added"], "tasks run": r["tasks_run"], "seconds": f"{r['seconds']:.1f}",
             "budget used": _fmt(r["look"]["fraction"] if r.get("look") else None, ".0%"), "alpha of the look": f"{r['alpha']:.4g}",
             "look": (r["look"].get("note") or "-") if r.get("look") else "-",
             f"CI width of {label}": ", ".join(f"{v}: {x:.3f}" for v, x in r["ci_width"].get(label, {}).items()),
             "verdict": r["verdicts"].get(label, "-")} for r in rounds]
    return md + [markdown_table(rows), ""]


def _untested(summary: dict) -> str:
    """" Untested: k held at 4 in every cell: ..." for the bounds whose formula names a variable the design holds fixed."""
    texts = dict.fromkeys(held_text(summary.get("grid"), r["expr"], [f["variable"] for f in r["fits"]])
                          for r in summary.get("results") or [])
    return "".join(f" Untested: {markdown_text(t)}." for t in texts if t)


def _fit_text(summary: dict, results: list[BoundAnalysis]) -> str:
    """How the exponents were fitted, in one paragraph (what the reader needs to trust a CI)."""
    an = results[0].analysis if results else None
    fv = ", ".join(summary["fit_variables"])
    terms = ", ".join(an.term_names) if an is not None else fv
    if an is not None and an.fit.trajectory:
        how = (f"each run's log measure regressed on the terms {terms} along its trajectory; the {an.fit.runs} runs' coefficients "
               f"combined (mean, CI from their spread, {an.fit.df} degrees of freedom): one run is one observation")
    else:
        how = (f"OLS of the seed-averaged log measure on the terms {terms} over the cells "
               f"({'inside the window only' if summary['inside_only'] else 'all cells'}), t-based CIs (BCa bootstrap over cells beside "
               "them); censored rows enter the cell means through a Tobit likelihood")
    logs = "every stated exponent, log factors included, is fitted"
    if any(r.analysis.offsets for r in results):
        logs = "log factors entered as **known offsets by request** (their exponents are assumed, not tested)"
    frm = summary.get("fit_from")
    restricted = f" Restricted by request to {', '.join(f'{v} >= {x:g}' for v, x in frm.items())}." if frm else ""
    tol = ("no tolerance: each bound is decided at the sweep's own resolution" if summary.get("margin") is None and
           summary.get("margin_log") is None else
           f"explicit tolerances {summary.get('margin')} for a power factor and {summary.get('margin_log')} for a log factor")
    return (f"Verdict: the ratio of the measure to the claim's function, tested along every variable and ray of the window "
            f"({tol}). Descriptive fit: {how}; {logs}.{restricted}")


def _function_section(an) -> list[str]:
    """The function test of one bound: every direction and family, its slope, resolution and target, the corrections
    fitted, and attainment."""
    ft = an.function
    if ft is None:
        return []
    rows = []
    for t in ft.tests:
        state = ("**violation**" if t.violates(ft.kind) else "holds" if t.holds(ft.kind) else "undetermined")
        rows.append({"family": t.family, "direction": t.direction, "slope": f"{t.estimate:.3g}", "se": f"{t.se:.2g}",
                     "deviation": t.factor(t.estimate), "resolution (95% power)": t.factor(),
                     "target (a log log factor)": t.factor(t.target) if t.target is not None else "-",
                     "trend": ("rises" if t.rises else "falls" if t.falls else "-"), "correction": t.levels or "-", "state": state})
    md = ["**The test.** The ratio r = log(measure) - log(claim's function), constants free, fitted along each direction against "
          f"each family of alternative factors; a violation is significant at {ft.level:.2g} (Bonferroni over the directions); the "
          "resolution is the deviation detected with 95% power; a decision needs it within the target. "
          + (f"Attained: **{ft.attained}**. " if ft.kind != "Theta" else ""), "", markdown_table(rows), ""]
    if ft.corrections:
        md += ["Corrections to scaling (the ratio levelling off, against it moving; statistic: chi^2 difference across cells, "
               "or the runs' t along trajectories):", "",
               markdown_table([{"variable": c.variable, "family": c.family, "correction": c.term, "b": f"{c.coefficient:.3g}",
                                "statistic": f"{c.statistic:+.3g}", "p (a steady move)": f"{c.p_moving:.2g}",
                                "p (levelling off)": f"{c.p_level:.2g}", "decision": c.decision} for c in ft.corrections]), ""]
    if ft.notes:
        md += ["; ".join(ft.notes) + ".", ""]
    return md


def write_report(result, out: str) -> dict:
    """report.md, report.html and the PNGs of one comparison (a :class:`~simulate.compare.result.ComparisonResult`:
    its record, its per-bound analyses, its claim and what was measured); returns their paths."""
    claim, exp, results = result.claim, result.experiment, list(result.results)
    summary = {**result.record.as_json(), "experiment_trajectory": exp.trajectory}  # the report is part of saving: JSON from here on
    md = [f"# {claim.id}: theory against simulation", "",
          (f"*{markdown_text(claim.title)}*" if claim.title else "A claim without a title")
          + (f" ({markdown_text(claim.paper)})" if claim.paper else "") + f"; status **{claim.status}**"
          + (f"; flags: {markdown_text(', '.join(claim.flags))}" if claim.flags else ""), "",
          f"**Verdict: {summary['verdict']}**. {summary['reason']}", "",
          f"Experiment: {markdown_text(exp.description)}. Grid: {_settings(summary['grid'])}; {summary['seeds']} seed(s) per cell at "
          f"the start; fixed settings: {_settings(summary['fixed']) or 'none'}." + _untested(summary),
          _fit_text(summary, results), "",
          f"Provenance: {markdown_text(summary['provenance'])}. Tasks: {_settings(summary['task_status'])}.", ""]
    md += _failures(summary)
    md += _cell_table(summary, results)
    md += _kkt_section(summary)
    md += _rounds_table(summary)
    files = {}
    if any(c.get("running_max") for c in summary.get("kkt") or []):
        files["kkt_running_max"] = _running_max_figure(summary["kkt"], out, _claim_scale(results))
        md += ["### Has the running extremum stopped?", "",
               "Per sample, the largest value of the claim's quantity over the distinct KKT points found so far, divided by "
               "the claim's function at the cell, against every start in search order (the given networks, the cones, the "
               "cover starts, GD starts, SLSQP and the moves over activation patterns), each record marked by the source that "
               "made it. A sample counts only where no record beyond 0.5% came in the last half of at least 20 starts; a "
               "short bar beside a line's end is a 4x deeper reference's value on the same sample (bench/kkt_recall.py), "
               "where one is on record.", "",
               f"![running extremum]({files['kkt_running_max']})", ""]
    if summary.get("flow_control"):
        files["flow_control"] = _flow_figure(summary["flow_control"], out)
        md += _flow_section(summary["flow_control"], files["flow_control"])
    if summary.get("would_decide"):
        md += ["## What would decide the undecided exponents", ""]
        md += [f"- {markdown_text(w['label'])}, {w['variable']}: {w['text']}." for w in summary["would_decide"]]
        md.append("")
    for i, (res, rj) in enumerate(zip(results, summary["results"])):
        an = res.analysis
        # a file name from a user's quantity and reading: only [A-Za-z0-9_-] (a path never leaves --out)
        tag = re.sub(r"[^A-Za-z0-9_-]", "_", f"{res.quantity}" + (f"_{res.reading}" if res.reading else "")) + f"_{i}"
        pf = _plots(res, summary, claim, out, tag)
        files.update({f"{tag}_{k}": v for k, v in pf.items()})
        reading = f" — reading {markdown_code(res.reading)}" if res.reading else ""
        md += [f"## {markdown_text(res.quantity)} {res.kind}({markdown_code(res.expr)})" + reading, "",
               f"**Verdict: {rj['verdict']}**. {rj['reason']}", ""]
        md += _function_section(an) + [
               "Descriptive: the exponent of every term the bound states, fitted jointly with its CIs (the band verdict in the last "
               "columns is the engine before the function test, kept for comparison; it does not decide). "
               f"Look level alpha = {an.alpha:.4g}.", "",
               "| term | predicted | band | estimate | 95% CI (t) | CI at the look's level | 95% CI (BCa) | local exponent "
               "(first -> last window) | drift p | direction | extrapolated (correction to scaling) | band verdict | why |",
               "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for f in rj["fits"]:
            v = f["variable"]
            dr = an.drift.get(v)
            loc = f"{dr.local[0].estimate:.3f} -> {dr.local[-1].estimate:.3f}" if dr is not None and dr.local else "-"
            ex = an.extrapolated.get(v)
            ext = (f"{ex.estimate:.3f} {_ci(ex.ci)}" if ex.estimate is not None else ex.note) if ex is not None else "-"
            bca = f"[{f['bca_low']:.3f}, {f['bca_high']:.3f}]" if f["bca_low"] is not None else (f.get("bca_note") or "-")
            dci = f"{_ci(f['decision_ci'])} ({f['decision_level']:.4g})" if f.get("decision_ci") else "-"
            md.append(f"| {v} | {f['predicted']:g} | {f.get('margin') or 0.1:g} | {f['estimate']:.3f} | "
                      f"[{f['ci_low']:.3f}, {f['ci_high']:.3f}] | {dci} | {bca} | {loc} | "
                      f"{_fmt(dr.p_value, '.2g') if dr else '-'} | {dr.direction if dr else '-'} | {ext} | {f['verdict']} | {f['reason']} |")
        extra = [f"curvature in log {v}: {c['coef']:.3g} (p = {c['p_value']:.2g})" for v, c in an.fit.curvature.items()]
        if an.fit.interaction:
            extra.append(f"log d x log k interaction: {an.fit.interaction['coef']:.3g} (p = {an.fit.interaction['p_value']:.2g})")
        md += ["", "; ".join(extra) + f". {an.fit.n_cells} cells, {an.fit.df} degrees of freedom.", "",
               f"![ratio to the claim's function]({pf['ratio']})", f"![loglog]({pf['loglog']})", f"![local exponents]({pf['local']})",
               f"![collapse]({pf['collapse']})",
               f"![residuals]({pf['residuals']})", ""]
        if "exp" in pf:
            md[-1:-1] = [f"![log(1/y) against h, an exp-type bound on its own scale]({pf['exp']})"]
    text = "\n".join(md) + "\n"
    write_text(os.path.join(out, "report.md"), report_markdown(text))
    files["markdown"] = os.path.join(out, "report.md")
    files["html"] = write_html(text, out, "report.html", f"{claim.id}: theory against simulation", images=_images(files))
    return files


SOURCE_MARKERS = {"start": ("o", "given networks"), "cone": ("s", "cones"), "cover": ("^", "cover starts"),
                  "gd": (".", "GD starts"), "slsqp": ("x", "SLSQP"), "move": ("*", "moves")}


def _source_group(kind: str) -> str:
    """A start's source kind (``cone:per-class``, ``cover``, ``gd:groups``, ``move:split``...) as its marker's group."""
    head = kind.split(":")[0]
    return head if head in SOURCE_MARKERS else "gd"


def _running_max_figure(kkt: list[dict], out: str, scale=None) -> str:
    """Per sample, the running extremum of the claim's quantity over the points found against every start in search
    order (one line a sample, coloured by cell), divided by the claim's function at the cell (``scale``: cell ->
    the function's value, None: undivided); each record marked by its source, and the reference's value at the same
    sample (a deeper search, bench/kkt_recall.py) drawn beside the line's end where one is on record."""
    import matplotlib.pyplot as plt  # heavy: matplotlib

    fig, ax = plt.subplots(figsize=(8.4, 4.2))
    seen: set[str] = set()
    palette = plt.get_cmap("tab20" if len(kkt) > 10 else "tab10").colors  # one colour a cell (12 cells repeated tab10's)
    for i, c in enumerate(kkt):
        col = palette[i % len(palette)]
        label = ", ".join(f"{k}={v:g}" for k, v in c["cell"].items())
        f = float(scale(c["cell"])) if scale is not None else 1.0
        refs = c.get("references") or []
        for j, r in enumerate(c.get("running_max") or []):
            pts = [(t + 1, x / f) for t, x in enumerate(r) if isinstance(x, (int, float)) and x == x]
            if not pts:
                continue
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "-", color=col, lw=0.9, alpha=0.8,
                    label=label if j == 0 else None)
            srcs = (c.get("sources") or [[]] * (j + 1))[j] if j < len(c.get("sources") or []) else []
            prev = float("nan")
            for t, x in pts:
                if not prev == prev or x > prev * (1 + 1e-12):
                    grp = _source_group(srcs[t - 1]) if t - 1 < len(srcs) else "gd"
                    mk, what = SOURCE_MARKERS[grp]
                    ax.plot([t], [x], mk, color=col, ms=6 if mk != "." else 8, mfc="none" if mk in "os^" else None,
                            label=f"record from {what}" if grp not in seen else None)
                    seen.add(grp)
                prev = x
            ref = refs[j] if j < len(refs) else None
            if isinstance(ref, (int, float)) and ref == ref:
                ax.plot([pts[-1][0] * 1.04], [ref / f], "_", color=col, ms=14, mew=2,
                        label="the reference's value (4x deeper)" if "ref" not in seen else None)
                seen.add("ref")
    ax.set_xlabel("starts in search order (every source)")
    ax.set_ylabel("largest value so far / the claim's function" if scale is not None else "largest value so far")
    name = "kkt_running_max.png"
    save_figure(fig, ax, os.path.join(out, name), "the KKT search: the running extremum of the claim's quantity",
                legend_fontsize=6, outside=True)
    return name


def _claim_scale(results):
    """cell -> the claim's function at the cell (its predicted exponents, constants free), from the first bound; None
    where it cannot be evaluated."""
    if not results:
        return None
    an = results[0].analysis
    claim = {t.name: an.predicted.get(t.name, 0.0) for t in an.terms}

    def scale(cell: dict) -> float:
        logs = {"log_" + k: math.log(float(v)) for k, v in cell.items() if float(v) > 0}
        try:
            v = math.exp(_log_function(an.terms, claim, logs))
        except (KeyError, ValueError, OverflowError):
            return 1.0
        return v if math.isfinite(v) and v > 0 else 1.0
    return scale


def _flow_section(flow: list[dict], png: str) -> list[str]:
    """The step-halving control in words and its figure: per run, how far it follows the flow."""
    rtol = flow[0]["rtol"]
    lines = []
    for f in flow:
        kept = [t for t, k in zip(f["log10_T"], f["inside"]) if k is True]
        run = ", ".join(f"{k}={v:g}" for k, v in f["cell"].items())
        lines.append(f"- {run}, seed {f['seed']}: " + (f"follows the flow from T = 10^{min(kept):.3g} to 10^{max(kept):.3g} "
                                                        f"({len(kept)} of {len(f['log10_T'])} points)" if kept else
                                                        f"no point follows the flow ({len(f['log10_T'])} points)"))
    return ["## Step-halving control", "",
            "Each run is repeated at half the step (same data, init and schedule). At equal T = sum of steps, a point is inside the "
            f"theorem's regime where the two losses agree within {rtol:.0%} (|ln L(eta) - ln L(eta/2)| <= {rtol:g}), up to the run's "
            "first disagreement; only those points are fitted.", "", *lines, "", f"![step-halving control]({png})", ""]


def _flow_figure(flow: list[dict], out: str) -> str:
    """|ln L(eta) - ln L(eta/2)| against log10 T, one line per run, the points kept filled, the tolerance dashed."""
    import matplotlib.pyplot as plt  # heavy: matplotlib

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for i, f in enumerate(flow):
        pts = [(t, abs(g), k) for t, g, k in zip(f["log10_T"], f["gap"], f["inside"] or [None] * len(f["gap"])) if g is not None]
        if not pts:
            continue
        c = f"C{i % 10}"
        ax.plot([p[0] for p in pts], [max(p[1], 1e-8) for p in pts], "-", color=c, lw=0.8, alpha=0.6, label=f"seed {f['seed']}")
        ins = [p for p in pts if p[2] is True]
        ax.plot([p[0] for p in ins], [max(p[1], 1e-8) for p in ins], "o", color=c, ms=3)
    rtol = flow[0]["rtol"]
    ax.axhline(rtol, color="black", ls="--", lw=1, label=f"tolerance {rtol:g} (the loss within {rtol:.0%})")
    ax.set_yscale("log")
    if min((t for f in flow for t in f["log10_T"]), default=0.0) > 0:
        ax.set_xscale("log")  # log10 T spans 2..800: the flow's part (2..30) would be a sliver
    ax.set_xlabel("log10 T (sum of step sizes), log scale")
    ax.set_ylabel("|ln L(eta) - ln L(eta/2)| at equal T")
    name = "flow_control.png"
    save_figure(fig, ax, os.path.join(out, name), "step-halving control: filled points follow the flow and are fitted", legend_fontsize=6)
    return name


def _images(files: dict) -> set[str]:
    """The PNG names this report wrote (the only images its HTML inlines)."""
    out: set[str] = set()
    for v in files.values():
        for x in (v.values() if isinstance(v, dict) else [v]):
            if isinstance(x, str) and x.endswith(".png"):
                out.add(os.path.basename(x))
    return out


def _hypothesis_text(h: dict) -> str:
    """A hypothesis as code in the report: its formula (sympy syntax), else its text, without backticks."""
    return str(h.get("formula") or h.get("text") or "").replace("`", "'")
