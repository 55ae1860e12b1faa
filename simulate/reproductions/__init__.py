"""Reproductions of the sources' experiments, side by side with their numbers: one small module each.

Every module has ``measure(quick) -> Measured`` (``measure(quick, known)`` where it compares claims,
listed in its ``COMPARES``: ``known`` holds comparisons the report already ran): it runs the experiment at the source's size
(``quick=False``) or a smaller one, and states its criteria declaratively (quantity, the source's
value, ibcheck's measurement, the rule that compares them; :mod:`.criteria`). A number is compared
with the source's only where the run is at the source's size; otherwise the rule checks the
source's qualitative claim. :func:`run_reproduction` times a module and returns a
:class:`Reproduction`; its ``save`` is the one renderer (Markdown, HTML, PNGs, JSON).
"""
from __future__ import annotations

import base64
import html
import importlib
import os
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, Sequence

from ibcheck.simulate.report.figures import figure_png, write_html
from ibcheck.simulate.reproductions.criteria import Criterion
from ibcheck.theory.atomic import write_bytes, write_json, write_text
from ibcheck.theory.errors import InputError
from ibcheck.theory.result import Result, markdown_table, report_markdown

REPRODUCTIONS = {"fa-synthetic": "fa_synthetic", "fa-digits": "fa_digits", "ll20-margin": "ll20_margin", "shngs18": "shngs18",
                 "vys22": "vys22", "fvbs23": "fvbs23", "bcgt21": "bcgt21", "ssttm18": "ssttm18", "mv24": "mv24"}
_COMPARISON_FIGURES = ("_loglog", "_collapse")


@dataclass(frozen=True)
class Reproduction(Result):
    """One reproduction: its criteria (with verdicts computed from their rules), the parameters, the
    figures (PNG bytes by file name), notes, and the comparisons it ran (by subdirectory)."""

    name: ClassVar[str] = "reproduce"
    reproduction: str
    title: str
    quick: bool
    params: dict
    seconds: float
    criteria: tuple[Criterion, ...]
    figures: dict[str, bytes] = field(repr=False, default_factory=dict)
    notes: tuple[str, ...] = ()
    comparisons: dict[str, Any] = field(repr=False, default_factory=dict)

    @property
    def rows(self) -> list[dict]:
        return [c.as_json() for c in self.criteria]

    def as_json(self) -> dict:
        return {"name": self.reproduction, "title": self.title, "quick": self.quick, "params": self.params, "seconds": self.seconds,
                "rows": self.rows}

    def heading(self) -> str:
        counts = {v: sum(c.verdict == v for c in self.criteria) for v in ("consistent", "inconsistent", "inconclusive")}
        return f"reproduce {self.reproduction}: {self.title} ({', '.join(f'{n} {v}' for v, n in counts.items() if n)})"

    def table(self) -> list[dict]:
        return self.rows

    def _repr_html_(self) -> str:
        imgs = "".join(f'<img src="data:image/png;base64,{base64.b64encode(b).decode()}" title="{html.escape(n)}"/>'
                       for n, b in self.figures.items())
        return super()._repr_html_() + imgs

    def markdown(self, comparison_figures: Sequence[str] = ()) -> str:
        """The report section: parameters, the criteria table, notes, figures."""
        rows = [{**r, "measured": _show(r["measured"]), "verdict": f"**{r['verdict']}**"} for r in self.rows]
        md = [f"# reproduce {self.reproduction}: {self.title}", "",
              f"{'Quick' if self.quick else 'Full'} size, parameters {self.params}; {self.seconds:.0f} s.", "",
              markdown_table(rows, ["quantity", "source_value", "measured", "rule", "verdict", "note"]), ""]
        for note in self.notes:
            md += [note, ""]
        md += [f"![{f}]({f})\n" for f in list(self.figures) + list(comparison_figures)]
        return "\n".join(md) + "\n"

    def save(self, directory: str) -> dict:  # type: ignore[override]
        """reproduce.md, reproduce.html (self-contained), the PNGs, reproduce.json, and each comparison in its subdirectory."""
        from ibcheck.simulate.substrate.rundir import clean  # heavy: torch (loaded on first use)

        os.makedirs(directory, exist_ok=True)
        extra = []
        for sub, comparison in self.comparisons.items():
            files = comparison.save(os.path.join(directory, sub))
            extra += sorted(os.path.join(sub, v) for k, v in files.items() if k.endswith(_COMPARISON_FIGURES))
        for n, b in self.figures.items():
            write_bytes(os.path.join(directory, n), b)
        text = self.markdown(extra)
        files = {"markdown": os.path.join(directory, "reproduce.md")}
        write_text(files["markdown"], report_markdown(text))
        files["html"] = write_html(text, directory, "reproduce.html", f"reproduce {self.reproduction}", images=set(self.figures) | set(extra))
        out = {**files, "figures": [os.path.join(directory, f) for f in list(self.figures) + extra]}
        write_json(os.path.join(directory, "reproduce.json"), clean({**self.as_json(), "files": out}))
        return out


def _show(x) -> str:
    if isinstance(x, float):
        return f"{x:.4g}"
    if isinstance(x, list):
        return ", ".join(f"{v:.3g}" if isinstance(v, float) else str(v) for v in x)
    return str(x)


def run_reproduction(name: str, quick: bool = True, idx_dir: str | None = None,
                     known: Mapping[str, Any] | None = None) -> Reproduction:
    """Run the reproduction ``name`` (one of ``REPRODUCTIONS``) at the quick or the source's size.

    ``known``: comparisons already run, by claim id (the report's own); a module that compares one of
    them (its ``COMPARES``) uses it instead of sweeping it again."""
    if not isinstance(name, str) or name not in REPRODUCTIONS:
        raise InputError(f"unknown reproduction {name!r}: available are {', '.join(REPRODUCTIONS)}")
    if idx_dir is not None and name != "fa-digits":
        raise InputError("--idx-dir applies to fa-digits only")
    module = importlib.import_module(f"{__name__}.{REPRODUCTIONS[name]}")
    t0 = time.perf_counter()
    if name == "fa-digits":
        m = module.measure(quick, idx_dir)
    elif getattr(module, "COMPARES", ()):
        m = module.measure(quick, {c: known[c] for c in module.COMPARES if known and c in known})
    else:
        m = module.measure(quick)
    secs = time.perf_counter() - t0
    figures = {n: figure_png(f) for n, f in m.figures.items()}
    return Reproduction(name, m.title, quick, m.params, secs, tuple(m.criteria), figures, tuple(m.notes), dict(m.comparisons))


@dataclass(frozen=True)
class ReproductionOutcome:
    """One reproduction of a suite: its result, or why it did not run (one line)."""

    name: str
    reproduction: Reproduction | None
    error: str | None = None

    def counts(self) -> tuple[int, int, int] | None:
        """Rows consistent, inconsistent, inconclusive (None when it did not run)."""
        if self.reproduction is None:
            return None
        rows = self.reproduction.rows
        return tuple(sum(r["verdict"] == v for r in rows) for v in ("consistent", "inconsistent", "inconclusive"))  # type: ignore[return-value]


def run_all(quick: bool, known: Mapping[str, Any], log=None) -> tuple[ReproductionOutcome, ...]:
    """Every reproduction, reusing the comparisons in ``known``; one that is refused is an outcome with its error.
    ``log`` receives one progress line per reproduction. Nothing is written (``Reproduction.save`` renders)."""
    t0 = time.perf_counter()
    out = []
    for name in REPRODUCTIONS:
        if log:
            log(f"[{time.perf_counter() - t0:6.1f} s] reproducing {name} ...")
        try:
            out.append(ReproductionOutcome(name, run_reproduction(name, quick, known=known)))
        except InputError as err:
            out.append(ReproductionOutcome(name, None, str(err)))
    return tuple(out)


def comparison(m, claim_id: str, quick: bool, known: Mapping[str, Any], **fields):
    """The comparison of ``claim_id`` for the reproduction ``m``: the one in ``known`` (already run by the
    report, with its design and budget; ``m`` notes the reuse) or a fresh :func:`compare_claim` with ``fields``.

    Pitfall avoided: a report whose reproductions swept their claims again spent that time twice
    (FVBS23.thm.4_2's full design: 79 min)."""
    if claim_id in known:
        m.notes.append(f"{claim_id}: the report's own comparison (its design and budget, the index row's numbers), not run again.")
        return known[claim_id]
    from ibcheck.simulate.compare.driver import compare_claim  # heavy: scipy (loaded on first use)

    return compare_claim(claim_id, quick=quick, progress=False, **fields)


def comparison_rows(m, comparison, quantity: str, source: str, note: str = "", first_only: bool = False) -> None:
    """One criterion per bound of a comparison (only the primary one with ``first_only``), judged by the comparison itself."""
    from ibcheck.simulate.reproductions.criteria import Judged  # heavy: scipy (loaded on first use)

    results = [b.as_json() for b in comparison.record.bounds]  # the reproduction's rows are written: JSON from here on
    for r in results[:1] if first_only else results:
        f = r["fits"][0]
        rd = f" [{r['reading']}]" if r["reading"] else ""
        m.add(quantity.format(quantity=r["quantity"], reading=rd), source.format(kind=r["kind"], expr=r["expr"]),
              [x["estimate"] for x in r["fits"]] if len(r["fits"]) > 1 else f["estimate"], Judged(r["verdict"]),
              "; ".join(f"{x['variable']}: {x['estimate']:.3f} [{x['ci_low']:.3f}, {x['ci_high']:.3f}] vs {x['predicted']:g}"
                        for x in r["fits"]) + f"; resolution {_resolution_text(r)}" + note)


def _resolution_text(r: dict) -> str:
    """A bound's resolution in one phrase: per variable, the smallest power and log factor the sweep detects."""
    return "; ".join(f"{v}: " + ", ".join(f"{fam} {x:.2g}" for fam, x in per.items()) for v, per in (r.get("resolution") or {}).items())
