"""The first stage of a comparison: a frozen :class:`Design` says what is measured and tested.

A design names the claim and its experiment, the grid, the seeds, the fixed settings and the code
version (which together key every stored row), and per tested bound its fit terms with the exponents
as exact ``Fraction`` objects from the theory layer (:func:`ibcheck.theory.describe.exponent_fractions`).
Nothing downstream reads exponents from strings.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Literal, Mapping

import sympy as sp

from ibcheck.simulate.experiments.terms import Term, TermSpec, term_spec
from ibcheck.theory.argtypes import refused
from ibcheck.theory.describe import exponent_fractions, tends_to_map
from ibcheck.theory.errors import InputError
from ibcheck.theory.evaluate import make_point
from ibcheck.theory.exptype import exp_form
from ibcheck.theory.growth import GrowthError

TESTABLE = ("O", "o", "<=", "Omega", "omega", ">=", "Theta")
PARAMS = {"L": "2"}  # parameters that enter exponents, at the value the experiments use (two-layer: L = 2)
Offsets = Literal["fit", "known"]
LOG_INVERSE = "log(1/y)"


@dataclass(frozen=True)
class BoundSpec:
    """One tested bound: its quantity, kind, reading and fit terms.

    ``offsets == "known"`` (explicit request only) moves the stated log factors to the left-hand
    side as known offsets; the fit then tests only the power exponents, and the report says so."""

    quantity: str
    kind: str
    reading: str | None
    expr: str
    spec: TermSpec
    offsets: Offsets = "fit"
    bound: object = field(default=None, compare=False, repr=False)
    transform: str | None = None  # LOG_INVERSE: an exp-type bound, tested on log(1/y) (theory.exptype)
    untested: tuple[str, ...] = ()  # variables the bound's function depends on that are not fitted here (their terms untested)

    def untested_note(self, varied: set[str] | frozenset[str] = frozenset(), trajectory: bool = False) -> str | None:
        """The reason's clause for a bound whose function depends on variables that vary across the sweep (``varied``)
        but are not fitted (a trajectory's grid variable, n = {20, 40}): their terms are not tested, and the verdict
        says so. A variable the design holds fixed (a constant's value, eps) is not named: the sweep does not vary it."""
        vs = [v for v in self.untested if v in varied]
        if not vs:
            return None
        names = ", ".join(vs)
        why = "a trajectory is fitted along its time alone" if trajectory else "a fitted variable needs 3 or more values"
        return (f"the bound's terms in {names} are not tested: {names} varies across the runs but is not fitted ({why}); each run "
                f"of each cell is one observation")

    @property
    def label(self) -> str:
        q = f"log(1/{self.quantity})" if self.transform == LOG_INVERSE else self.quantity
        return q + (f"[{self.reading}]" if self.reading else "")

    def tested_rows(self, rows: list[dict]) -> list[dict]:
        """The rows the test reads: as measured, or for an exp-type bound ``log(1/y)`` in place of y (a censored row's side
        flips: y <= u is log(1/y) >= log(1/u)); a row with y <= 0 keeps a nan there, so the fit counts it as dropped,
        never silently. A row with y >= 1 keeps its z = log(1/y) <= 0: the exp-type test (simulate.verdict.exp_test) is
        linear in z and reads it (leaving such rows out selected the seeds by their noise, where A > 1); the descriptive
        power-law fit of z drops it, counted."""
        if self.transform != LOG_INVERSE:
            return rows
        flip = {"at_most": "at_least", "at_least": "at_most"}
        out = []
        for r in rows:
            lv = r.get("log_value")
            if lv is None:
                v = r.get("value")
                lv = math.log(v) if isinstance(v, (int, float)) and v > 0 else math.nan
            q = {k: x for k, x in r.items() if k not in ("value", "log_value")}
            q["value"] = -lv if math.isfinite(lv) else math.nan  # y >= 1 (a prefactor A > 1): z <= 0, fitted by exp_test
            if r.get("censor") in flip:
                q["censor"] = flip[r["censor"]]
            out.append(q)
        return out

    @property
    def terms(self) -> list[Term]:
        return [t for t in self.spec.terms if self.offsets == "fit" or t.order == 0]

    @property
    def toward_zero(self) -> frozenset[str]:
        """The fitted variables that tend to 0 (their power exponents are tested mirrored)."""
        return frozenset(t.variable for t in self.spec.terms if t.toward_zero)

    def predicted(self) -> dict[str, float]:
        """The exponent per fitted term (floats for the numerical fit; exact in :attr:`spec`)."""
        return {t.name: float(self.spec.exponent(t)) for t in self.terms}

    def offset_table(self) -> dict[str, tuple[float, float]]:
        """(log power, loglog power) per variable: non-empty only with ``offsets="known"``."""
        if self.offsets != "known":
            return {}
        out: dict[str, tuple[float, float]] = {}
        for t, x in self.spec.predicted:
            if t.order:
                p, q = out.get(t.variable, (0.0, 0.0))
                out[t.variable] = (p + float(x), q) if t.order == 1 else (p, q + float(x))
        return out


def bound_specs(claim, fit_variables: list[str], quantities: tuple[str, ...] | None = None, offsets: Offsets = "fit",
                reading: str | None = None) -> list[BoundSpec]:
    """Every testable bound of ``claim`` (of ``quantities`` when given) as a :class:`BoundSpec`."""
    if offsets not in ("fit", "known"):
        raise refused("offsets", offsets, "is not one of fit, known")
    point = make_point(claim, {k: v for k, v in PARAMS.items() if k in claim.variable_names})
    zero = frozenset(v for v, w in tends_to_map(claim).items() if w == "0") & set(fit_variables)
    out = []
    for b in claim.bounds:
        if b.kind not in TESTABLE or (quantities is not None and b.quantity not in quantities):
            continue
        if reading is not None and b.reading != reading:
            continue
        kind, transform, tested = b.kind, None, b
        try:
            e = exponent_fractions(claim, b, point)
        except GrowthError as err:
            form = exp_form(b.expr, b.kind, set(claim.variable_names))
            if form is None:
                raise InputError(f"{claim.id}: the bound on {b.quantity} has no power-law exponents to fit ({err}), and is not of the "
                                 f"form A exp(-c h(x)) with h a product of powers") from None
            kind, transform, tested = form.kind, LOG_INVERSE, replace(b, expr=form.h, kind=form.kind)
            e = exponent_fractions(claim, tested, point)
        untested = tuple(sorted({v for table in (e.power, e.log, e.loglog) for v, x in table.items()
                                 if v not in fit_variables and v not in PARAMS and x != 0}))
        tables = []
        for table in (e.power, e.log, e.loglog):
            row = {}
            for v in fit_variables:
                x = table.get(v, Fraction(0))
                if not isinstance(x, Fraction):
                    raise InputError(f"{claim.id}: the exponent of {v} in the bound on {b.quantity} is {x}, not a number; "
                                     f"give the claim's parameters a value")
                row[v] = x
            tables.append(row)
        out.append(BoundSpec(b.quantity, kind, b.reading, sp.sstr(tested.expr), term_spec(fit_variables, *tables, toward_zero=zero), offsets, b,
                             transform, untested))
    return out


@dataclass(frozen=True)
class Design:
    """What one comparison measures and tests (frozen: every later stage reads it, none changes it)."""

    claim: str
    experiment: str
    grid: Mapping[str, tuple]
    seeds: int
    fixed: Mapping[str, object]
    code_version: str
    fit_variables: tuple[str, ...]
    trajectory: bool
    bounds: tuple[BoundSpec, ...]
    restriction: Mapping[str, float] = field(default_factory=dict)
    margin: float = 0.1
    margin_log: float = 0.25
