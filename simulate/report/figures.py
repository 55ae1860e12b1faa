"""The reporting module: figures (matplotlib) and, for the reports, Markdown and HTML."""
from __future__ import annotations

import base64
import io
import math
import os
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Collection

import numpy as np
from jinja2 import Environment
from markdown_it import MarkdownIt
from markupsafe import Markup

from ibcheck.theory import scaling as S
from ibcheck.theory.atomic import FIGURE_DPI, literal_text, save_figure_file, write_text
from ibcheck.theory.outdir import check_out, inside, slug
from ibcheck.theory.registry import all_claims, get_claim
from ibcheck.theory.result import markdown_table, new_figure, report_markdown

SAVE_DPI = FIGURE_DPI  # the dpi every PNG is written at (theory.atomic); figures are laid out at it too


def figure_png(fig) -> bytes:
    """A figure as PNG bytes (110 dpi), for a result that keeps its figures in memory until saved."""
    literal_text(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=SAVE_DPI)
    return buf.getvalue()


def finish(fig, ax, title: str, legend_fontsize: int = 8, ncol: int = 1, grid_which: str = "both", outside: bool = False):
    """Title, grid, legend (``outside``: to the right of the axes, where many lines would hide behind it), tight layout:
    the common end of every figure. Returns ``fig``."""
    ax.set_title(title, fontsize=9)
    ax.grid(True, which=grid_which, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        if outside:
            ax.legend(fontsize=legend_fontsize, ncol=ncol, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
        else:
            ax.legend(fontsize=legend_fontsize, ncol=ncol)
    literal_text(fig)  # text from a claim or a file is drawn as written (an unbalanced $ crashed the layout)
    fig.tight_layout()
    return fig


def save_figure(fig, ax, path: str, title: str, legend_fontsize: int = 8, ncol: int = 1, grid_which: str = "both",
                outside: bool = False) -> None:
    """:func:`finish`, then save at 110 dpi (and close, for a pyplot figure)."""
    save_figure_file(finish(fig, ax, title, legend_fontsize, ncol, grid_which, outside), path)
    import matplotlib.pyplot as plt  # heavy: matplotlib (loaded on first use)

    plt.close(fig)


def series_figure(series: dict, xlabel: str, ylabel: str, title: str, logy: bool = False):
    """One line per label through ``series[label] = [(x, y), ...]`` on a log x axis."""
    fig, ax = new_figure()
    for label, pts in series.items():
        pts = sorted(pts)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", ms=3, label=label)
    ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return finish(fig, ax, title, legend_fontsize=7, ncol=2)


def robust_accuracy_figure(curves: dict[str, tuple[np.ndarray, np.ndarray]], markers: dict[str, float] | None = None,
                           title: str = "robust accuracy against the l2 radius"):
    """Several models overlaid: ``curves[label] = (eps_grid, accuracy)``; vertical markers at e.g. sqrt(d/k), sqrt(d)."""
    fig, ax = new_figure(6.4, 4.4)
    for label, (eps, acc) in curves.items():
        ax.plot(eps, acc, label=label, lw=2)
    for name, x in (markers or {}).items():
        ax.axvline(x, ls="--", color="gray", lw=1)
        ax.text(x, 1.02, name, rotation=0, ha="center", va="bottom", fontsize=8, transform=ax.get_xaxis_transform())
    ax.set_xlabel("l2 radius eps")
    ax.set_ylabel("robust accuracy  P[r(x) > eps]")
    ax.set_ylim(-0.02, 1.05)
    ax.set_title(title, fontsize=9, pad=16)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    literal_text(fig)
    fig.tight_layout()
    return fig


_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>{{ title }}</title>
<style>body{font-family:sans-serif;max-width:{{ width }};margin:2em auto;}table{border-collapse:collapse;}
td,th{border:1px solid #ccc;padding:4px 8px;font-size:13px;vertical-align:top;}img{max-width:100%;}
.badge{display:inline-block;padding:1px 8px;border-radius:9px;font-weight:bold;font-size:12px;white-space:nowrap;}
.b-consistent{background:#d7f0d9;color:#1b5e20;}.b-inconsistent{background:#f8d3d0;color:#8e1b10;}
.b-inconclusive{background:#e6e6e6;color:#444;}</style></head>
<body>{{ body }}</body></html>"""


def markdown_to_html(markdown: str, base: str, images: Collection[str] = ()) -> str:
    """Markdown (CommonMark plus tables, by markdown-it-py) to HTML, the report's own ``images`` (paths relative
    to ``base`` that the report wrote) inlined as base64.

    Pitfall avoided: a report that links its PNGs breaks when the HTML file is copied alone; an inlined image
    travels with it. Only the images the report itself wrote are read: inlining every ``src`` would put any
    readable file a user's text names (``![x](/etc/hostname)`` in a path or a title) into the page. Raw HTML in
    the Markdown is escaped, not passed through. A link to a ``.md`` file with an ``.html`` beside it points to the HTML,
    in the page's folder or a sibling folder (a probability claim links its base claim's report)."""
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = md.parse(markdown)
    for tok in tokens:
        for child in tok.children or []:
            href = str(child.attrGet("href") or "") if child.type == "link_open" else ""
            if href.endswith(".md") and "://" not in href and _inside(os.path.dirname(os.path.abspath(base)), os.path.join(base, href)) \
                    and os.path.isfile(os.path.join(base, href[:-3] + ".html")):  # a sibling report too (../claim/report.md)
                child.attrSet("href", href[:-3] + ".html")  # a page links the HTML beside a Markdown file (a browser shows .md raw)
            if child.type == "image":
                src = str(child.attrGet("src") or "")
                path = os.path.join(base, src)
                if src in images and _inside(base, path) and os.path.isfile(path):
                    with open(path, "rb") as f:
                        child.attrSet("src", "data:image/png;base64," + base64.b64encode(f.read()).decode())
                else:  # not one of the report's own images: its alt text, never an <img> that loads from elsewhere
                    child.type, child.tag, child.content, child.attrs = "text", "", f"[image: {child.content or src}]", {}
                    child.children = None
            if child.type == "link_open" and re.match(r"^(?:[A-Za-z][A-Za-z0-9+.-]*:|//|/|\\)", href):
                child.attrs = {}  # a link that leaves the report: its text stays, the target goes (rendered as <a>)
    return md.renderer.render(tokens, md.options, {})


def _inside(base: str, path: str) -> bool:
    root = os.path.realpath(base)
    return os.path.commonpath([root, os.path.realpath(path)]) == root


# a verdict in bold (``**consistent**``, written by the report itself; user text has its ``*`` escaped) as a coloured badge
_BADGE = re.compile(r"<strong>(consistent|inconsistent|inconclusive)</strong>")


def write_html(markdown: str, out: str, name: str, title: str, images: Collection[str] = (), wide: bool = False) -> str:
    """A self-contained HTML page (a Jinja2 template around :func:`markdown_to_html`, with the report's own
    ``images`` inlined), written atomically. ``wide``: the page takes the window's width (a table of many columns,
    whose last one was cut off at 1100 pixels)."""
    body = _BADGE.sub(r'<span class="badge b-\1">\1</span>', markdown_to_html(report_markdown(markdown), out, images))
    page = Environment(autoescape=True).from_string(_PAGE).render(title=title, body=Markup(body), width="98vw" if wide else "1100px")
    path = os.path.join(out, name)
    write_text(path, page)
    return path


# -- the bound scaling report (``ibcheck scaling``), from theory/scaling.py's data -------------------
def scaling_report(claim_ids: list[str] | None, out_dir: str) -> str:
    """Write ``scaling.md`` and its PNGs into ``out_dir`` (created); return the Markdown path."""
    claims = [get_claim(c) for c in claim_ids] if claim_ids else all_claims()
    check_out(out_dir)
    for c in claims:
        slug(c.id)  # every file name checked before anything is written
    os.makedirs(out_dir, exist_ok=True)
    md = ["# ibcheck: bound scaling report", "",
          f"Generated {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')} by `ibcheck scaling`, from the claim registry alone "
          "(no simulation yet).",
          "Symbolic constants (C, C1..C4) are set to 1 in the plots: for claims of status *order* only",
          "the slopes are meaningful, not the heights. Claims flagged *unverified* are marked.", "",
          "## Bounds and exponents", "", markdown_table(S.bounds_table(claims)), "", "## Bounds against d (log-log)", ""]
    for c in claims:
        raw, curves = S.bound_curves(c)
        if not curves:
            continue
        fig, ax = new_figure(6.4, 4.4)
        for label, ys in curves:
            ax.loglog(S.D_GRID, ys, marker="o", ms=3, label=label)
        fixed = ", ".join(f"{k}={v}" for k, v in raw.items())
        ax.set_xlabel("d")
        ax.set_ylabel("bound (constants = 1)")
        name = f"bound_{slug(c.id)}.png"
        save_figure_file(finish(fig, ax, f"{c.id}\n(at {fixed})" if fixed else c.id, legend_fontsize=7), inside(out_dir, name))
        md += [f"### {c.id}" + (" (unverified)" if c.unverified else ""), "", f"![{c.id}]({name})", ""]
    md += ["## The robust / non-robust gap", "", *S.gap_lines(), "", "![gap](gap_sqrt_k.png)", ""]
    save_figure_file(_gap_figure(S.D_GRID), os.path.join(out_dir, "gap_sqrt_k.png"))
    md += ["## Applicability windows at a default point", "", markdown_table(S.window_rows(claims)), ""]
    if not claim_ids or "FVBS23.thm.4_2" in claim_ids:
        w = S.window_vs_n()
        fig, ax = new_figure(6.4, 4.4)
        ax.loglog(w["n"], w["log10_low"], marker="o", label=f"lowest d (binding: {', '.join(sorted(w['binding_low']))})")
        ax.loglog(w["n"], w["log10_high"], marker="s", label=f"highest d (binding: {', '.join(sorted(w['binding_high']))})")
        ax.fill_between(w["n"], w["log10_low"], w["log10_high"], alpha=0.15)
        ax.set_xlabel("n")
        ax.set_ylabel("log10 d")
        name = "window_FVBS23.thm.4_2_vs_n.png"
        save_figure_file(finish(fig, ax, "FVBS23.thm.4_2: the window of d (k=10, eps=delta=0.1)"), os.path.join(out_dir, name))
        table = [{"n": n, "lowest d (log10)": f"{a:.3f}", "highest d (log10)": f"{b:.3f}"}
                 for n, a, b in zip(w["n"], w["log10_low"], w["log10_high"])]
        md += ["## Where FVBS23.thm.4_2 starts to apply", "", f"![window]({name})", "", markdown_table(table), ""]
    path = os.path.join(out_dir, "scaling.md")
    write_text(path, report_markdown("\n".join(md) + "\n"))
    return path


def _gap_figure(d_grid: list[float]):
    """Non-robust sqrt(d/k) for several k against the robust sqrt(d); and their ratio sqrt(k)."""
    from matplotlib.figure import Figure  # heavy: matplotlib (loaded on first use)

    fig = Figure(figsize=(11, 4.2))
    ax1, ax2 = fig.subplots(1, 2)
    for k in [2, 4, 10, 40, 100]:
        ax1.loglog(d_grid, [math.sqrt(d / k) for d in d_grid], label=f"sqrt(d/k), k={k}")
    ax1.loglog(d_grid, [math.sqrt(d) for d in d_grid], "k--", lw=2, label="sqrt(d) (robust construction)")
    ax1.set_xlabel("d")
    ax1.set_ylabel("radius (constants = 1)")
    finish(fig, ax1, "non-robust O(sqrt(d/k)) vs robust Omega(sqrt(d))", legend_fontsize=7)
    kk = [2**i for i in range(1, 11)]
    ax2.loglog(kk, [math.sqrt(k) for k in kk], marker="o")
    ax2.set_xlabel("k")
    ax2.set_ylabel("sqrt(d) / sqrt(d/k)")
    return finish(fig, ax2, "the gap: a ratio of sqrt(k), independent of d (slope 1/2)")


VERDICT_COLOURS = {"consistent": "#2e7d32", "inconsistent": "#c62828", "inconclusive": "#ef8f00"}


@dataclass(frozen=True)
class ForestRow:
    """One row of the index's forest plot: a claim's bound, its verdict, whether the index counts it, and its
    function test (:class:`simulate.verdict.function_test.FunctionTest`)."""

    claim: str
    label: str
    verdict: str
    counted: bool
    function: Any


def forest_figure(rows: list[ForestRow]):
    """Per row and direction (a variable, or a ray k = d^b of the window), the ratio's plain slope against the power
    and the log families of alternative factors
    (estimate and +-2 se), in units of the row's target (the deviation a factor of log log x makes over the sweep's
    range: +-1, dashed), over the resolution (a grey bar: the deviation the sweep detects; a decision needs it
    inside +-1) and 0 (the claim's own function), in the verdict's colour; rows the index does not count have grey
    labels. Slopes beyond the axis are arrows at its edge with their value. A direction the window bounds (FVBS23's
    k alone) is drawn dotted and hollow and labelled "not deciding"; a direction whose ratio levels off with a
    correction in the claim's scale says which (its plain slope then overstates the deviation the verdict judged).

    Pitfall avoided: slopes in raw units put a trajectory over 800 decades (resolution t^0.0009) and a grid over
    one decade (d^0.05) on scales 50 times apart; in units of their targets every row reads the same way, and a
    table of text hides which claims are pinned and which merely undecided."""
    from matplotlib.figure import Figure  # heavy: matplotlib (loaded on first use)

    lines = [(r, d) for r in rows for d in dict.fromkeys(t.direction for t in r.function.tests if not t.part
                                                          and t.target and math.isfinite(t.target))]  # a direction with a slope to draw
    n = len(lines)
    labels, drawn = [], []
    for r, d in lines:
        tests = [t for t in r.function.tests if t.direction == d and not t.part]
        bounded = any(t.bounded for t in tests)
        drawn.append((tests, bounded))
        levels = next((c.term for c in r.function.corrections if c.variable == d and c.decision == "levels off"), None)
        labels.append(f"{r.claim} {r.label}: {d}" + (" (bounded: not deciding)" if bounded else "")
                      + (f" [levels off with {levels}]" if levels and not bounded else ""))
    # the figure widens with its longest label (7 pt: about 0.055 in a character), so tight_layout never clips one
    # at the dpi it is saved at (110): hinted 7 pt glyphs are wider there than at 100 dpi, so a layout measured at
    # 100 dpi cut the longest label at the left edge of the PNG
    fig = Figure(figsize=(max(10.0, 6.0 + 0.055 * max(map(len, labels), default=0)), max(2.6, 0.3 * n + 1.4)), dpi=SAVE_DPI)
    ax = fig.subplots()
    lim = 4.0
    for i, ((r, _), (tests, bounded)) in enumerate(zip(lines, drawn)):
        y = n - 1 - i
        colour = VERDICT_COLOURS.get(r.verdict, "grey")
        for fam, dy, marker in (("power", 0.15, "o"), ("log", -0.15, "s")):
            m = next((t for t in tests if t.family == fam), None)
            if m is None or not m.target or not math.isfinite(m.target):
                continue
            u = m.target
            if math.isfinite(m.resolution):
                ax.barh(y + dy, 2 * min(m.resolution / u, lim), left=-min(m.resolution / u, lim), height=0.26, color="0.87", zorder=1)
            est, half = m.estimate / u, 2 * m.se / u
            ax.plot([max(est - half, -lim), min(est + half, lim)], [y + dy] * 2, color=colour, lw=1.5, zorder=3,
                    ls=":" if bounded else "-")
            if abs(est) <= lim:
                ax.plot(est, y + dy, marker, color=colour, ms=4, zorder=4, mfc="white" if bounded else colour)
            else:
                x = lim if est > 0 else -lim
                ax.annotate(f"{est:.3g}", (x, y + dy), xytext=(-22 if x > 0 else 22, 0), textcoords="offset points", fontsize=6,
                            color=colour, va="center", ha="right" if x > 0 else "left",
                            arrowprops={"arrowstyle": "->", "color": colour, "lw": 1})
    ax.axvline(0, color="black", lw=0.8)
    for x in (-1, 1):
        ax.axvline(x, color="0.4", lw=0.8, ls="--")
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_yticks(range(n))
    ax.set_yticklabels(labels[::-1], fontsize=7)
    for tick, (r, _) in zip(ax.get_yticklabels(), lines[::-1]):
        tick.set_parse_math(False)  # a row's label is a claim's text: drawn as written
        if not r.counted:
            tick.set_color("0.55")
    ax.set_xlabel("slope of log(measure / claim), in units of a log log x factor over the sweep's range\n"
                  "(circles: as a power x^delta; squares: as a log factor (log x)^delta)", fontsize=8)
    ax.grid(True, axis="x", alpha=0.3)
    handles = [matplotlib_patch(c, v) for v, c in VERDICT_COLOURS.items()] + [matplotlib_patch("0.87", "resolution")]
    ax.legend(handles=handles, fontsize=7, loc="lower right")
    ax.set_title("The ratio of the measure to the claim's function (0: the claim; grey labels: not counted)", fontsize=9)
    literal_text(fig)
    fig.tight_layout()
    _fit_tick_labels(fig, ax)
    return fig


def _fit_tick_labels(fig, ax, pad_px: float = 8.0) -> None:
    """Widen the left margin until every y tick label is inside the figure, measured on a renderer at the figure's dpi
    (the one it is saved at): the longest label of the index's forest plot was cut at the left edge."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # heavy: matplotlib (loaded on first use)

    renderer = FigureCanvasAgg(fig).get_renderer()
    x0 = min((t.get_window_extent(renderer).x0 for t in ax.get_yticklabels() if t.get_text()), default=0.0)
    if x0 < pad_px:
        width = fig.get_figwidth() * fig.dpi
        fig.subplots_adjust(left=min(fig.subplotpars.left + (pad_px - x0) / width, 0.8))


def matplotlib_patch(colour, label: str):
    from matplotlib.patches import Patch  # heavy: matplotlib (loaded on first use)

    return Patch(color=colour, label=label)
