"""The typed result of a comparison (``ibcheck compare``, ``ibcheck verdict``), modelled on statsmodels' results.

:class:`ComparisonResult` is the only producer of summary.json; :class:`BoundResult` and
:class:`TermResult` give each tested bound and each fitted exponent, with ``conf_int(alpha)`` at
any level.
"""
from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass, field
from typing import ClassVar

from ibcheck.simulate.compare.record import BoundRecord, ComparisonRecord
from ibcheck.simulate.experiments.base import Row
from ibcheck.simulate.verdict.analysis import Analysis
from ibcheck.theory.argtypes import require_float
from ibcheck.theory.atomic import atomic_file, write_json
from ibcheck.theory.errors import InputError
from ibcheck.theory.result import Result, new_figure
from ibcheck.theory.result import plain as clean  # the JSON-safe copy (rundir re-exports it, but imports torch)


@dataclass(frozen=True)
class TermResult:
    """One fitted exponent: its term (``T``, ``log(T)``), prediction, estimate and CIs."""

    term: str
    predicted: float
    estimate: float
    se: float
    df: int
    ci: tuple[float, float]  # 95%
    decision_ci: tuple[float, float]  # at the level of the look that decided (1 - alpha)
    decision_level: float
    margin: float
    verdict: str
    reason: str


@dataclass(frozen=True)
class BoundResult:
    """One tested bound of the claim: its quantity, kind and reading, the verdict with its reason,
    and every fitted term. ``conf_int(term, alpha)`` gives any level from the fit."""

    label: str
    quantity: str
    kind: str
    reading: str | None
    expr: str
    verdict: str
    reason: str
    terms: tuple[TermResult, ...]
    analysis: Analysis = field(repr=False, compare=False)

    def term(self, name: str) -> TermResult:
        for t in self.terms:
            if t.term == name:
                return t
        raise InputError(f"{self.label} has no fitted term {name!r}; its terms are {', '.join(t.term for t in self.terms)}")

    def conf_int(self, term: str | None = None, alpha: float = 0.05) -> tuple[float, float]:
        """The two-sided (1 - alpha) CI of one term's exponent (default: the first variable's power)."""
        require_float("alpha", alpha, 0.0, strict=True, high=1.0)
        return self.analysis.fit.conf_int(term or self.terms[0].term, alpha)


def _bound_results(records: tuple[BoundRecord, ...]) -> tuple[BoundResult, ...]:
    """The typed bounds, read from each bound's record (its analysis, and the reported reason with the
    extrapolation and censoring notes)."""
    out = []
    for rec in records:
        r, an = rec.result, rec.analysis
        terms = tuple(TermResult(n, an.predicted[n], an.fit.estimate[n], an.fit.se[n], an.fit.df, an.fit.ci[n], an.conf_int(n),
                                 1 - an.alpha, an.margins.get(n, an.margin), an.judgements[n].verdict, an.judgements[n].reason)
                      for n in an.term_names)
        out.append(BoundResult(r.label, r.quantity, r.kind, r.reading, r.expr, an.verdict, rec.reason, terms, an))
    return tuple(out)


@dataclass(frozen=True)
class ComparisonResult(Result):
    """One claim against simulation (or your measurements), typed like a statsmodels results object.

    ``verdict`` and ``reason``; ``bounds`` (one :class:`BoundResult` per tested bound and reading);
    ``conf_int(quantity, alpha, term=..., reading=...)``; ``summary()`` (text); ``to_json()`` (the
    summary.json contract, which :meth:`save` writes beside the Markdown, HTML, PNGs and a Parquet
    file of the raw rows). ``record`` is the typed record (:class:`~ibcheck.simulate.compare.record.ComparisonRecord`)
    everything else is read from; JSON is made only by ``to_json()`` and ``save()``."""

    name: ClassVar[str] = "summary"
    record: ComparisonRecord = field(repr=False)
    results: tuple = field(repr=False, default=())
    rows: tuple = field(repr=False, default=())
    claim: object = field(repr=False, default=None)
    experiment: object = field(repr=False, default=None)

    @property
    def verdict(self) -> str:
        return self.record.verdict

    @property
    def reason(self) -> str:
        return self.record.reason

    @property
    def bounds(self) -> tuple[BoundResult, ...]:
        return _bound_results(self.record.bounds)

    def bound(self, quantity: str, reading: str | None = None) -> BoundResult:
        """The tested bound on ``quantity`` (and ``reading``, for an ambiguous claim)."""
        found = [b for b in self.bounds if b.quantity == quantity and (reading is None or b.reading == reading)]
        if not found:
            have = ", ".join(b.label for b in self.bounds)
            raise InputError(f"no tested bound on {quantity!r}" + (f" with reading {reading!r}" if reading else "") + f"; the bounds are {have}")
        if len(found) > 1:
            raise InputError(f"{quantity!r} has several readings ({', '.join(b.reading or '-' for b in found)}): give reading=")
        return found[0]

    def conf_int(self, quantity: str, alpha: float = 0.05, term: str | None = None, reading: str | None = None) -> tuple[float, float]:
        """The two-sided (1 - alpha) CI of one exponent of the bound on ``quantity`` (default term: its first variable's power)."""
        return self.bound(quantity, reading).conf_int(term, alpha)

    @property
    def summary(self) -> SummaryText:
        """``c.summary()``: a text summary (the verdict, then per bound and term the prediction, estimate, CIs and
        verdict). ``c.summary["verdict"]`` (the dict of earlier versions) still reads the record, with a
        DeprecationWarning, for one release."""
        return SummaryText(self)

    def summary_text(self) -> str:
        """The text of :attr:`summary`."""
        lines = [self.heading(), ""]
        for b in self.bounds:
            lines.append(f"{b.label}  {b.kind}({b.expr}): {b.verdict}")
            for t in b.terms:
                lines.append(f"  {t.term:<14} predicted {t.predicted:>7.4g}  estimate {t.estimate:>8.4f}  95% CI (t) [{t.ci[0]:.4f}, "
                             f"{t.ci[1]:.4f}]  (descriptive: the verdict above comes from the ratio test in 'why')")
            lines.append(f"  why: {b.reason}")
        return "\n".join(lines) + "\n"

    def as_json(self) -> dict:
        return clean(self.record.as_json())

    def heading(self) -> str:
        return f"{self.record.claim}: {self.verdict} ({self.reason})"

    def table(self) -> list[dict]:
        return [{"quantity": b.label, "kind": b.kind, "term": t.term, "estimate": t.estimate,
                 "ci": f"[{t.ci[0]:.3f}, {t.ci[1]:.3f}]", "predicted": t.predicted, "verdict": t.verdict, "bound verdict": b.verdict}
                for b in self.bounds for t in b.terms]

    def figure(self):
        """Measured log quantity against log of the first fit variable, with the fitted and predicted slopes."""
        if not self.results:
            return None
        r = self.results[0]
        an = r.analysis
        v = an.variables[0]
        fig, ax = new_figure()
        xs = [c["log_" + v] for c in an.fit.cells]
        ys = [c["mean_log"] for c in an.fit.cells]
        ax.scatter(xs, ys, s=14, label="cell means")
        if xs:
            x0, y0 = min(xs), ys[xs.index(min(xs))]
            xx = [min(xs), max(xs)]
            ax.plot(xx, [y0 + an.fit.estimate[v] * (x - x0) for x in xx], label=f"fit {an.fit.estimate[v]:.3f}")
            ax.plot(xx, [y0 + an.predicted[v] * (x - x0) for x in xx], "--", label=f"predicted {an.predicted[v]:g}")
        ax.set_xlabel(f"log {v}")
        ax.set_ylabel(f"log {r.label}")
        ax.legend(fontsize=7)
        ax.set_title(self.heading()[:110], fontsize=8)
        return fig

    def save(self, directory: str) -> dict[str, str]:  # type: ignore[override]
        """Write report.md, report.html, the PNGs, results.parquet and summary.json (its only producer)."""
        from ibcheck.simulate.report.comparison import write_report  # heavy: scipy (loaded on first use)

        os.makedirs(directory, exist_ok=True)
        # every path as written (the plots' names joined to their folder, as the other files are), summary.json included
        files = {k: os.path.join(directory, v) if isinstance(v, str) and not os.path.dirname(v) else v
                 for k, v in write_report(self, directory).items()}
        files["parquet"] = _rows_parquet(self.rows, os.path.join(directory, "results.parquet"))
        files["summary"] = os.path.join(directory, "summary.json")
        write_json(files["summary"], clean({**self.record.as_json(), "files": files}))
        return files


Comparison = ComparisonResult  # the name earlier versions exported


class SummaryText:
    """What ``ComparisonResult.summary`` is: call it for the text; index it as the dict it used to be (deprecated).

    Pitfall avoided: ``summary`` changed from a dict to a method, so ``c.summary["verdict"]`` in an old script failed
    with "'method' object is not subscriptable" and no hint; now it works for one release and says what replaces it."""

    _HINT = ("ComparisonResult.summary is a method now: c.summary() is the text; read the record with c.verdict, c.bounds, "
             "c.conf_int(...) or c.to_json(). Indexing c.summary will be removed in the next release")

    def __init__(self, result: ComparisonResult):
        self._result = result

    def __call__(self) -> str:
        return self._result.summary_text()

    def __str__(self) -> str:
        return self._result.summary_text()

    def __repr__(self) -> str:
        return self._result.summary_text()

    def _record(self) -> dict:
        warnings.warn(self._HINT, DeprecationWarning, stacklevel=3)
        return self._result.as_json()

    def __getitem__(self, key: str):
        return self._record()[key]

    def __contains__(self, key: object) -> bool:
        return key in self._record()

    def __iter__(self):
        return iter(self._record())

    def keys(self):
        return self._record().keys()

    def get(self, key: str, default=None):
        return self._record().get(key, default)


def _rows_parquet(rows, path: str) -> str | None:
    """The comparison's raw rows (one per cell and seed) as Parquet; None without pyarrow."""
    try:
        import pandas as pd  # heavy: pandas (and pyarrow, optional)

        plain_rows = [r.as_json() if isinstance(r, Row) else dict(r) for r in rows]  # a sweep's stored rows, or a CSV's fit rows
        df = pd.DataFrame([{**{k: v for k, v in r.items() if k != "value"}, "value": json.dumps(r["value"])} for r in plain_rows])
        with atomic_file(path, "wb") as f:
            df.to_parquet(f, index=False)
        return path
    except ImportError:
        return None
