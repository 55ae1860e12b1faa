"""A reproduction as a result: :func:`run_reproduction` runs one of :mod:`simulate.reproduce` in a
scratch directory, reads back its criteria and figures, and removes the scratch; nothing of the
user's is written until ``Reproduction.save``."""
from __future__ import annotations

import base64
import html
import os
import tempfile
from dataclasses import dataclass
from typing import ClassVar

from ibcheck.theory.result import Result


@dataclass(frozen=True)
class Reproduction(Result):
    """One reproduction of a source's experiment: the criteria rows (quantity, source value,
    measured, verdict, note), the parameters, and the figures (PNG bytes by file name)."""

    name: ClassVar[str] = "reproduce"
    reproduction: str
    title: str
    quick: bool
    params: dict
    seconds: float
    rows: tuple[dict, ...]
    markdown: str
    figures: dict[str, bytes]

    def as_json(self) -> dict:
        return {"name": self.reproduction, "title": self.title, "quick": self.quick, "params": self.params, "seconds": self.seconds,
                "rows": list(self.rows)}

    def heading(self) -> str:
        counts = {v: sum(r["verdict"] == v for r in self.rows) for v in ("consistent", "inconsistent", "inconclusive")}
        return f"reproduce {self.reproduction}: {self.title} ({', '.join(f'{n} {v}' for v, n in counts.items() if n)})"

    def table(self) -> list[dict]:
        return [dict(r) for r in self.rows]

    def _repr_html_(self) -> str:
        imgs = "".join(f'<img src="data:image/png;base64,{base64.b64encode(b).decode()}" title="{html.escape(n)}"/>'
                       for n, b in self.figures.items())
        return super()._repr_html_() + imgs

    def extra_files(self, directory: str) -> dict[str, str]:
        from ibcheck.theory.atomic import write_bytes, write_text

        from .reporting import write_html

        files = {"markdown": os.path.join(directory, "reproduce.md")}
        write_text(files["markdown"], self.markdown)
        for n, b in self.figures.items():
            write_bytes(os.path.join(directory, n), b)
        files["html"] = write_html(self.markdown, directory, "reproduce.html", f"reproduce {self.reproduction}")
        return files


def run_reproduction(name: str, quick: bool = True, idx_dir: str | None = None) -> Reproduction:
    """Run the reproduction ``name`` (see ``REPRODUCTIONS``) and return it as a :class:`Reproduction`."""
    from .reproduce import reproduce

    with tempfile.TemporaryDirectory(prefix="ibcheck-reproduce-") as tmp:
        s = reproduce(name, quick, tmp, idx_dir)
        with open(s["files"]["markdown"]) as f:
            md = f.read()
        figures = {}
        for path in s["files"]["figures"]:
            with open(path, "rb") as f:
                figures[os.path.basename(path)] = f.read()
    return Reproduction(s["name"], s["title"], s["quick"], s["params"], s["seconds"], tuple(s["rows"]), md, figures)
