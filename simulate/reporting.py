"""The reporting module: figures (matplotlib) and, for the reports, Markdown and HTML."""
from __future__ import annotations

import base64
import os

import numpy as np

from ibcheck.theory.atomic import save_figure_file, write_text


def figure_png(fig) -> bytes:
    """A figure as PNG bytes (110 dpi), for a result that keeps its figures in memory until saved."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    return buf.getvalue()


def cosine_heatmap(mats: list[np.ndarray], result, path: str) -> None:
    """:func:`cosine_figure`, saved to ``path``."""
    save_figure_file(cosine_figure(mats, result), path)


def cosine_figure(mats: list[np.ndarray], result):
    """Seed 0's cosine matrix, neurons sorted by class, with the same-class prediction in the title."""
    from matplotlib.figure import Figure

    cfg = result.config
    C = mats[0]
    row = result.summary[0]
    n_show = min(len(mats), 3)
    fig = Figure(figsize=(4.2 * n_show + 1, 0.22 * C.shape[0] + 2.2))
    axes = fig.subplots(1, n_show, squeeze=False)
    for i in range(n_show):
        ax = axes[0, i]
        im = ax.imshow(mats[i], cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
        ax.set_xlabel("feature j (cluster mean)")
        ax.set_xticks(range(mats[i].shape[1]))
        ax.set_ylabel("neuron")
        ax.set_title(f"seed {result.summary[i]['seed']}", fontsize=9)
        for (r, c), v in np.ndenumerate(mats[i]):
            if mats[i].size <= 400:
                ax.text(c, r, f"{v:.2f}", ha="center", va="center", fontsize=6)
    fig.colorbar(im, ax=axes[0, -1], fraction=0.05)
    same = row.get("cosine_same_class_mean")
    other = row.get("cosine_other_class_mean")
    fig.suptitle(f"cos(w_r, mu_j): {cfg.setting}, d={cfg.data.d}, k={cfg.data.k}, n={cfg.data.n}, width={cfg.model.width}, "
                 f"init_scale={cfg.model.init_scale}; same-class mean {same:.3f}, other-class mean "
                 f"{other if other is None else round(other, 3)}", fontsize=9)
    fig.tight_layout()
    return fig


def finish(fig, ax, title: str, legend_fontsize: int = 8, ncol: int = 1, grid_which: str = "both"):
    """Title, grid, legend, tight layout: the common end of every figure. Returns ``fig``."""
    ax.set_title(title, fontsize=9)
    ax.grid(True, which=grid_which, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=legend_fontsize, ncol=ncol)
    fig.tight_layout()
    return fig


def save_figure(fig, ax, path: str, title: str, legend_fontsize: int = 8, ncol: int = 1, grid_which: str = "both") -> None:
    """:func:`finish`, then save at 110 dpi (and close, for a pyplot figure)."""
    save_figure_file(finish(fig, ax, title, legend_fontsize, ncol, grid_which), path)
    import matplotlib.pyplot as plt

    plt.close(fig)


def series_figure(series: dict, xlabel: str, ylabel: str, title: str, logy: bool = False):
    """One line per label through ``series[label] = [(x, y), ...]`` on a log x axis."""
    from ibcheck.theory.result import new_figure

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
    from ibcheck.theory.result import new_figure

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
    fig.tight_layout()
    return fig


def plot_robust_accuracy(curves: dict[str, tuple[np.ndarray, np.ndarray]], path: str, markers: dict[str, float] | None = None,
                         title: str = "robust accuracy against the l2 radius") -> None:
    """:func:`robust_accuracy_figure`, saved to ``path``."""
    save_figure_file(robust_accuracy_figure(curves, markers, title), path)


_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>{{ title }}</title>
<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;}table{border-collapse:collapse;}
td,th{border:1px solid #ccc;padding:4px 8px;font-size:13px;}img{max-width:100%;}</style></head>
<body>{{ body }}</body></html>"""


def markdown_to_html(markdown: str, base: str) -> str:
    """Markdown (CommonMark plus tables, by markdown-it-py) to HTML, images under ``base`` inlined as base64.

    Pitfall avoided: a report that links its PNGs breaks when the HTML file is copied alone; an
    inlined image travels with it. Raw HTML in the Markdown is escaped, not passed through."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = md.parse(markdown)
    for tok in tokens:
        for child in tok.children or []:
            if child.type == "image":
                src = child.attrGet("src") or ""
                path = os.path.join(base, src)
                if not src.startswith("data:") and os.path.isfile(path):
                    with open(path, "rb") as f:
                        child.attrSet("src", "data:image/png;base64," + base64.b64encode(f.read()).decode())
    return md.renderer.render(tokens, md.options, {})


def write_html(markdown: str, out: str, name: str, title: str) -> str:
    """A self-contained HTML page (a Jinja2 template around :func:`markdown_to_html`), written atomically."""
    from jinja2 import Environment
    from markupsafe import Markup

    page = Environment(autoescape=True).from_string(_PAGE).render(title=title, body=Markup(markdown_to_html(markdown, out)))
    path = os.path.join(out, name)
    write_text(path, page)
    return path


def markdown_table(rows: list[dict], columns: list[str] | None = None) -> str:
    """Rows as a Markdown table (pandas ``to_markdown``); None shows as '-'."""
    import pandas as pd

    df = pd.DataFrame(rows, columns=columns)
    return df.to_markdown(index=False, missingval="-")
