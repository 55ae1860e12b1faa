"""What every result of the public API shares: JSON, notebook display, and saving as a separate step.

A result is a frozen dataclass that says three things about itself:

* ``as_json()``: plain data (dicts, lists, numbers, strings; no numpy, no NaN);
* ``table()``: rows for a table (a list of dicts), or an empty list;
* ``figure()``: a matplotlib figure, or None.

From these the mixin gives ``to_json()`` (text), ``_repr_html_()`` (a notebook shows the table
and the plot inline) and ``save(directory)``. Computing never writes files: only ``save`` does,
each file atomically (:mod:`theory.atomic`).
"""
from __future__ import annotations

import base64
import html
import io
import os
import re
from typing import Any, ClassVar, Mapping

from .atomic import FIGURE_DPI, literal_text, save_figure_file, visible_text, write_text
from .jsonsafe import dumps, plain
from .outdir import check_out

__all__ = ["JsonText", "Result", "dumps", "markdown_table", "markdown_text", "new_figure", "plain"]


class JsonText:
    """``to_json()``: the JSON text of ``as_json()``, the one meaning of the name everywhere.

    Pitfall avoided: ``to_json()`` returned a string on results and a dict on records; a record's plain data is
    ``as_json()``, as on results."""

    def as_json(self) -> Any:
        raise NotImplementedError

    def to_json(self, indent: int | None = 2) -> str:
        """The JSON text of :meth:`as_json`."""
        return dumps(self.as_json(), indent=indent)


class Result(JsonText):
    """Mixin for the API's frozen dataclasses (see the module docstring)."""

    name: ClassVar[str] = "result"
    figure_name: ClassVar[str | None] = None  # the PNG's name when it differs from ``name``

    def as_json(self) -> Any:
        """Plain data: a dict for most results, a list for a list of rows."""
        raise NotImplementedError

    def table(self) -> list[dict]:
        return []

    def figure(self):
        return None

    def heading(self) -> str:
        return type(self).__name__

    def extra_files(self, directory: str) -> dict[str, str]:
        """Files beyond ``NAME.json`` and ``NAME.png`` (CSV, Markdown, HTML); none by default."""
        return {}

    # -- derived -----------------------------------------------------------------------
    def text(self) -> str:
        """The heading and the table as plain text, for a terminal (the command line prints this)."""
        rows = self.table()
        if not rows:
            return self.heading()
        import pandas as pd  # heavy: pandas (loaded on first use)

        return self.heading() + "\n" + pd.DataFrame(_cells(rows)).to_string(index=False)

    def _repr_html_(self) -> str:
        parts = [f"<h4>{html.escape(self.heading())}</h4>"]
        rows = self.table()
        if rows:
            import pandas as pd  # heavy: pandas (loaded on first use)

            parts.append(pd.DataFrame(_cells(rows)).to_html(index=False))
        fig = self.figure()
        if fig is not None:
            parts.append(f'<img src="data:image/png;base64,{figure_png_base64(fig)}"/>')
        return "\n".join(parts)

    def save(self, directory: str) -> dict[str, str]:
        """Write ``NAME.json`` (and ``NAME.png`` when there is a plot, plus the result's own files)
        into ``directory``, created with its missing parents (as ``--out`` everywhere). Returns the paths written."""
        check_out(directory, flag="directory")
        os.makedirs(directory, exist_ok=True)
        files = self.extra_files(directory)
        fig = self.figure()
        if fig is not None:
            files["png"] = os.path.join(directory, f"{self.figure_name or self.name}.png")
            save_figure_file(fig, files["png"])
        files["json"] = os.path.join(directory, f"{self.name}.json")
        write_text(files["json"], self.to_json() + "\n")
        return files


def _cells(rows: list[dict]) -> list[dict]:
    """Table rows as text: floats to 5 significant digits, None (and NaN) as '-'."""
    def cell(v):
        v = plain(v)
        return "-" if v is None else f"{v:.5g}" if isinstance(v, float) else v if isinstance(v, (int, str)) else str(v)

    return [{k: cell(v) for k, v in r.items()} for r in rows]


def figure_png_base64(fig) -> str:
    """A figure as base64 PNG text, for inline HTML."""
    literal_text(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    return base64.b64encode(buf.getvalue()).decode()


def new_figure(width: float = 6.4, height: float = 4.2):
    """A figure and its axes for ``Result.figure``, outside pyplot.

    Pitfall avoided: pyplot keeps every figure alive until closed and needs a backend; a bare
    ``Figure`` needs neither, so figures built for display or saving never leak or pop up. The figure has the dpi
    its PNG is written at (110), so tight_layout measures hinted text as it will be drawn."""
    from matplotlib.figure import Figure  # heavy: matplotlib (loaded on first use)

    fig = Figure(figsize=(width, height), dpi=FIGURE_DPI)
    return fig, fig.subplots()


def markdown_table(rows: list[dict], columns: list | None = None, header: list[str] | None = None) -> str:
    """Rows as a Markdown table (pandas ``to_markdown``, every cell as text); None shows as '-'.
    ``header`` renames the columns (for rows keyed by position). A ``|`` inside a cell is escaped: unescaped, it
    ends the cell and shifts every column after it (the KKT table's flip norms per sample did)."""
    import pandas as pd  # heavy: pandas (loaded on first use)

    df = pd.DataFrame(rows, columns=columns)
    if header is not None:
        df.columns = header
    text = df.astype(object).where(df.notna(), "-").astype(str)
    text = text.apply(lambda col: col.map(_cell))
    text.columns = [_cell(str(c)) for c in text.columns]  # a header is user text too (a hypothesis named "a|b")
    return text.to_markdown(index=False, disable_numparse=True)


_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")


def _cell(text: str) -> str:
    """A table cell: ``|`` escaped (it would end the cell), and a ``<`` that could open raw HTML (``<script>``, ``</a>``,
    ``<!--``) escaped, so that a name cannot put markup into the Markdown file; ``<=`` and ``< 1`` stay as they are."""
    return _TAG_START.sub(r"\\<", re.sub(r"(?<!\\)\|", r"\\|", text))


_MARKDOWN_SPECIAL = set("\\`*_[]<>|$")  # code, emphasis, links and images, raw HTML, table cells, math (GitHub's $..$)


def held_text(grid: Mapping | None, expr: str, fitted: list[str]) -> str:
    """What a bound's verdict did not test: each variable of its formula ``expr`` that the design holds at one value and
    does not fit, e.g. ``k held at 4 in every cell: the claim's dependence on k is not tested by this design`` ("" where
    none is). Pitfall avoided: data with k at one value were judged along d alone, and nothing said k went untested."""
    held = [(v, vals[0]) for v, vals in (grid or {}).items()
            if len(vals) == 1 and v not in fitted and re.search(rf"\b{re.escape(str(v))}\b", expr)]
    if not held:
        return ""
    names = ", ".join(f"{v} held at {setting_value(x)}" for v, x in held)
    which = " and ".join(v for v, _ in held)
    return f"{names} in every cell: the claim's dependence on {which} is not tested by this design"


def settings_text(values: Mapping | None) -> str:
    """``d = 64, 128, 256; k = 2, 4`` from ``{"d": [64, 128, 256], "k": [2, 4]}`` (a grid, fixed settings or task counts):
    the provenance line and the claim page read as text, not as a Python dict."""
    return "; ".join(f"{k} = {setting_value(v)}" for k, v in (values or {}).items())


def setting_value(v) -> str:
    """One setting's value as :func:`settings_text` writes it: ``64, 128`` for a list, ``0.5`` for a float."""
    if isinstance(v, (list, tuple)):
        return ", ".join(setting_value(x) for x in v)
    return f"{v:g}" if isinstance(v, float) else str(v)


def markdown_code(text: object) -> str:
    """User text as one inline code span: fenced by one backtick more than its longest run of backticks (CommonMark),
    padded where it starts or ends with one, newlines as spaces, controls shown escaped. Pitfall avoided: a reading
    ``a`<script>`` in a single-backtick span closed it, and the rest reached report.md as raw HTML."""
    body = visible_text(text).replace("\r", " ").replace("\n", " ")
    runs = [len(m) for m in re.findall("`+", body)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if body.startswith("`") or body.endswith("`") or (body.startswith(" ") and body.endswith(" ") and body.strip()) else ""
    return f"{fence}{pad}{body}{pad}{fence}"


# a link or an image whose target leaves the report: a URL scheme (http:, javascript:, data:, file:), a network path or
# an absolute one. The report writes only relative targets inside its own folder tree.
_TARGET = re.compile(r"(!?)\[((?:[^\[\]\\]|\\.)*)\]\(\s*<?([^)\s>]*)>?(?:\s+[^)]*)?\)")
_OUTSIDE = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*:|//|/|\\)")


def report_markdown(text: str) -> str:
    """A generated page's Markdown as it is written: every link or image that points outside the report (a URL, an
    absolute path) written as literal text, and every control or bidi character shown escaped. Applied to every page
    wherever a page is written (its Markdown file and :func:`simulate.report.figures.write_html`), behind the escaping of each
    field, so that no page loads or links anything from outside its own folder, whatever a field let through."""
    def literal(m: re.Match) -> str:
        if not _OUTSIDE.match(m.group(3)):
            return m.group(0)
        return "".join("\\" + ch if ch in "![]()" else ch for ch in m.group(0))
    return _TARGET.sub(literal, visible_text(text))


def markdown_text(text: object) -> str:
    """User text (a title, a path, a description) as literal Markdown: the characters that open code, emphasis, a
    link or an image, raw HTML or a table cell backslash-escaped, newlines as spaces. Pitfall avoided: a path such as ``./![x](/etc/hostname)/d.csv`` written
    into a report as is becomes an image (or a link) there."""
    return "".join("\\" + ch if ch in _MARKDOWN_SPECIAL else (" " if ch in "\r\n" else ch) for ch in visible_text(text))
