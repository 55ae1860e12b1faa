"""Verdicts: does a fitted exponent agree with a claim's prediction?

Each bound kind has its own test, at level alpha = 0.05 and equivalence margin ``margin``
(0.1 by default), with ``L, U`` the one-sided (1 - alpha) bounds from the t distribution:

* ``O`` (also ``o``, ``<=``): the exponent is not above the prediction.
  consistent if ``U <= pred + margin``; inconsistent if ``L > pred + margin``.
* ``Omega`` (also ``omega``, ``>=``): mirror image.
  consistent if ``L >= pred - margin``; inconsistent if ``U < pred - margin``.
* ``Theta``: two one-sided tests (TOST). consistent if ``pred - margin < L`` and
  ``U < pred + margin``; inconsistent if the two-sided (1 - alpha) CI lies outside the band.

Anything else is ``inconclusive``, a valid outcome. The negative control tests the same fit
against a wrong, stronger prediction (O: pred - 0.5; Omega and Theta: pred + 0.5); it must come
out inconsistent, or the comparison has no power.

:func:`judge_exponent` turns the plain verdict into the reported one, with two rules:

* **drift**: an ``inconsistent`` fit whose curvature is significant and whose local exponent
  moves toward the prediction is ``inconclusive`` ("pre-asymptotic: ..."), unless the
  largest-scale window alone is already ``inconsistent``. A straight power law with the wrong
  exponent (no significant drift) stays ``inconsistent``, and so does one drifting away. A
  ``consistent`` fit that drifts significantly away from the prediction, with its
  largest-scale window not consistent, is ``inconclusive``.
* **power**: a ``consistent`` exponent whose negative control is not rejected is
  ``inconclusive`` ("no power: a stronger exponent is not rejected either").
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, cast, get_args

from ibcheck.simulate.stats.laws import t_quantile
from ibcheck.theory.exptype import MIRROR

UPPER = ("O", "o", "<=")
LOWER = ("Omega", "omega", ">=")
TWO = ("Theta",)
Verdict = Literal["consistent", "inconsistent", "inconclusive"]
VERDICTS: tuple[str, ...] = get_args(Verdict)


@dataclass
class ExponentTest:
    """One exponent's test: its verdict, the bound kind, prediction, estimate, one-sided bounds, margin and why."""

    verdict: Verdict
    kind: str
    predicted: float
    estimate: float
    lower: float  # one-sided (1 - alpha) lower bound
    upper: float
    margin: float
    reason: str

    def as_json(self) -> dict:
        return dict(self.__dict__)


def exponent_verdict(kind: str, estimate: float, se: float, df: int, predicted: float, margin: float = 0.1, alpha: float = 0.05) -> ExponentTest:
    """The verdict for one exponent (see the module docstring for the rules)."""
    t1 = t_quantile(1 - alpha, df)
    t2 = t_quantile(1 - alpha / 2, df)
    L, U = estimate - t1 * se, estimate + t1 * se
    lo2, hi2 = estimate - t2 * se, estimate + t2 * se
    if kind in UPPER:
        if U <= predicted + margin:
            v, why = "consistent", f"upper bound {U:.3f} <= {predicted:g} + {margin:g}"
        elif L > predicted + margin:
            v, why = "inconsistent", f"lower bound {L:.3f} > {predicted:g} + {margin:g}"
        else:
            v, why = "inconclusive", f"[{L:.3f}, {U:.3f}] straddles {predicted + margin:g}"
    elif kind in LOWER:
        if L >= predicted - margin:
            v, why = "consistent", f"lower bound {L:.3f} >= {predicted:g} - {margin:g}"
        elif U < predicted - margin:
            v, why = "inconsistent", f"upper bound {U:.3f} < {predicted:g} - {margin:g}"
        else:
            v, why = "inconclusive", f"[{L:.3f}, {U:.3f}] straddles {predicted - margin:g}"
    elif kind in TWO:
        if predicted - margin < L and U < predicted + margin:
            v, why = "consistent", f"[{L:.3f}, {U:.3f}] inside {predicted:g} +- {margin:g} (TOST)"
        elif lo2 > predicted + margin or hi2 < predicted - margin:
            v, why = "inconsistent", f"CI [{lo2:.3f}, {hi2:.3f}] outside {predicted:g} +- {margin:g}"
        else:
            v, why = "inconclusive", f"CI [{lo2:.3f}, {hi2:.3f}] overlaps the band {predicted:g} +- {margin:g} without lying in it"
    else:
        raise ValueError(f"no exponent test for bound kind {kind!r}")
    return ExponentTest(cast(Verdict, v), kind, predicted, estimate, L, U, margin, why)




def term_kind(kind: str, term) -> str:
    """The direction in which one fitted exponent is tested: the bound's kind, mirrored for the power
    of a variable that tends to 0.

    Pitfall avoided: as ``eps -> 0``, ``eps^a = O(eps^b)`` iff ``a >= b`` (the smaller power is the
    larger quantity), so testing an ``O(eps^2)`` bound as "exponent <= 2" accepts exactly the data
    that break it. Log factors are in ``log(1/eps)``, which grows: their direction is the bound's."""
    if getattr(term, "toward_zero", False) and getattr(term, "order", 0) == 0:
        return MIRROR.get(kind, kind)
    return kind


def negative_control_exponent(kind: str, predicted: float, shift: float = 0.5) -> float:
    """A wrong, stronger prediction the data must reject (``shift``: 0.5 for a power, 1 for a log exponent)."""
    return predicted - shift if kind in UPPER else predicted + shift


@dataclass
class Judgement:
    """The reported verdict of one exponent, with every input it rests on."""

    variable: str
    verdict: Verdict
    reason: str
    plain: ExponentTest
    negative_control: ExponentTest
    has_power: bool
    detectable_deviation: float  # one-sided (1 - alpha) CI half-width: t_{1-alpha, df} * se
    last_window: ExponentTest | None = None

    def as_json(self) -> dict:
        return {"variable": self.variable, "verdict": self.verdict, "reason": self.reason, "plain": self.plain.as_json(),
                "negative_control": self.negative_control.as_json(), "has_power": self.has_power,
                "detectable_deviation": self.detectable_deviation,
                "last_window": self.last_window.as_json() if self.last_window else None}


def judge_exponent(variable: str, kind: str, estimate: float, se: float, df: int, predicted: float, drift=None,
                   margin: float = 0.1, alpha: float = 0.05, shift: float = 0.5) -> Judgement:
    """The reported verdict of one exponent: the plain test, then the drift and power rules.

    ``drift`` is a :class:`simulate.stats.drift.Drift` (or None): its significance, direction and the
    last local exponent (the largest-scale window) enter the drift rule.
    """
    plain = exponent_verdict(kind, estimate, se, df, predicted, margin, alpha)
    nc = exponent_verdict(kind, estimate, se, df, negative_control_exponent(kind, predicted, shift), margin, alpha)
    has_power = nc.verdict == "inconsistent"
    half = float(t_quantile(1 - alpha, df) * se) if df > 0 else float("inf")
    last = None
    le = drift.asymptotic_window if drift is not None else None
    if le is not None and le.se is not None and le.df > 0:
        last = exponent_verdict(kind, le.estimate, le.se, le.df, predicted, margin, alpha)
    verdict, reason = plain.verdict, plain.reason
    drifting = drift is not None and drift.significant
    if plain.verdict == "inconsistent" and drifting and drift.direction == "toward":
        if last is not None and last.verdict == "inconsistent":
            reason = (f"{plain.reason}; {drift.describe()} (drift p = {drift.p_value:.2g}), but the largest-scale cells alone "
                      f"already decide: {last.reason}")
        else:
            verdict = "inconclusive"
            reason = f"pre-asymptotic: {drift.describe()} (drift p = {drift.p_value:.2g}); the plain fit says {plain.reason}"
    elif plain.verdict == "inconsistent" and drifting:
        reason = f"{plain.reason}; {drift.describe()} (drift p = {drift.p_value:.2g})"
    elif plain.verdict == "consistent" and drifting and drift.direction == "away" and (last is None or last.verdict != "consistent"):
        verdict = "inconclusive"
        reason = f"drifting away: {drift.describe()} (drift p = {drift.p_value:.2g}); the plain fit says {plain.reason}"
    if verdict == "consistent" and not has_power:
        verdict = "inconclusive"
        reason = (f"no power: a stronger exponent ({nc.predicted:g}) is not rejected either ({nc.reason}); "
                  f"the plain fit says {plain.reason}")
    return Judgement(variable, verdict, reason, plain, nc, has_power, half, last)


def pinned(v: ExponentTest) -> bool:
    """Is the exponent equivalent to its prediction (both one-sided bounds inside the margin)?"""
    return pinned_interval(v.lower, v.upper, v.predicted, v.margin)


def judge_variable(kind: str, chain: list[tuple[str, Judgement]]) -> tuple[str, str]:
    """The verdict of one variable whose bound states several factors, ``chain`` ordered as
    x, log x, log log x: (verdict, reason).

    Growth is lexicographic: ``x^a (log x)^b`` is ``O(x^a0 (log x)^b0)`` iff ``a < a0``, or
    ``a = a0`` and ``b <= b0``. So for ``O`` a power decided below its band (or above it, for
    ``Omega``) settles the variable by itself; a power pinned to its prediction (both one-sided
    bounds inside the band) hands the test to the log exponent; a power neither pinned nor
    decided leaves it ``inconclusive``. ``Theta`` needs every factor consistent.

    Pitfall avoided: a constant quantity has the power exponent 0 that ``O(1/log t)`` predicts;
    only the log exponent (0 against -1) tells them apart.
    """
    if len(chain) == 1:
        return chain[0][1].verdict, chain[0][1].reason
    if kind in TWO:
        verdict = combine([j.verdict for _, j in chain])
        return verdict, "; ".join(f"{name}: {j.reason}" for name, j in chain)
    parts: list[str] = []
    for i, (name, j) in enumerate(chain):
        last = i == len(chain) - 1
        p = j.plain
        beyond = beyond_band(p.kind, p.lower, p.upper, p.predicted, p.margin)  # the term's own direction (Theta returned above)
        if last or j.verdict == "inconsistent" or beyond:
            why = "" if last or j.verdict == "inconsistent" else " (beyond its band, so the factors after it do not matter)"
            return j.verdict, "; ".join(parts + [f"{name}: {j.reason}{why}"])
        if not pinned(p):
            nxt = chain[i + 1][0]
            return "inconclusive", "; ".join(parts + [f"{name}: [{p.lower:.3f}, {p.upper:.3f}] is not pinned to {p.predicted:g} +- "
                                                      f"{p.margin:g}, so the {nxt} exponent cannot decide yet"])
        parts.append(f"{name}: pinned, [{p.lower:.3f}, {p.upper:.3f}] inside {p.predicted:g} +- {p.margin:g}")
    raise AssertionError("unreachable")


def combine(verdicts: list[str]) -> str:
    """Overall: inconsistent if any is, consistent if all are, inconclusive otherwise."""
    if "inconsistent" in verdicts:
        return "inconsistent"
    if verdicts and all(v == "consistent" for v in verdicts):
        return "consistent"
    return "inconclusive"


def pinned_interval(lower: float, upper: float, predicted: float, margin: float) -> bool:
    """Both ends of an interval strictly inside ``predicted +- margin``: the exponent is pinned to its prediction
    (the bound is attained). One rule for the verdict's chains and the readings."""
    return predicted - margin < lower and upper < predicted + margin


def beyond_band(kind: str, lower: float, upper: float, predicted: float, margin: float) -> bool:
    """The interval lies strictly on the bound's own side of its band: an upper bound (O, o, <=) holding with room
    (upper < predicted - margin), a lower bound (Omega, omega, >=) likewise (lower > predicted + margin)."""
    if kind in UPPER:
        return upper < predicted - margin
    if kind in LOWER:
        return lower > predicted + margin
    return False


def holm(p_values: list[float], alpha: float = 0.05) -> list[tuple[bool, float]]:
    """Holm's step-down across a family of tests: per test (rejected, its adjusted level). The i-th smallest p is
    compared with alpha / (m - i), and rejection stops at the first that fails; the family-wise error of all the
    rejections together is at most alpha. Used across the index's rows: a row stays inconsistent only if its
    violation survives this step."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    out: list[tuple[bool, float]] = [(False, alpha)] * m
    going = True
    for rank, i in enumerate(order):
        level = alpha / (m - rank)
        going = going and p_values[i] <= level
        out[i] = (going, level)
    return out


MIN_INSIDE = 0.8  # the fraction of a row's cells that must lie inside the claim's hypotheses for the row to count


@dataclass(frozen=True)
class RowEvidence:
    """What the counting rule reads of one tested bound: its verdict, the cells inside the claim's hypotheses, whether
    the row is trivial, how log factors entered, and (claims about KKT points) whether every inside cell is certified."""

    verdict: Verdict
    cells_inside: int
    cells_total: int
    trivial: str | None = None
    offsets: str = "fit"
    kkt_certified: bool | None = None  # None: the claim speaks of no KKT point
    kkt_search: str | None = None  # a claim about every KKT point: why the engine's search does not count (None: it does)
    family_rejected: bool | None = None  # an inconsistent row: does its violation survive Holm across the index's rows?
    kkt_depth: str = ""  # a claim about every KKT point that counts: its classes' depth stability, in words


def counted(e: RowEvidence) -> tuple[bool, str]:
    """Does the index count this row as decided? (counted, why not / how).

    Only when its verdict is consistent or inconsistent; at least 80% of its cells are inside the claim's
    hypotheses; for a claim about KKT points, every inside cell holds certified KKT points; and it tests the
    claim's own exponents (log exponents fitted, not taken as known offsets; not a trivial row); a claim about every KKT
    point also needs the KKT engine run in full at every inside cell, the running extremum of the claim's quantity stopped
    on every sample, and each cell's class depth-stable for that quantity
    (:func:`~ibcheck.simulate.verdict.kkt.every_point_searched`)."""
    if not e.cells_total or e.cells_inside / e.cells_total < MIN_INSIDE:
        return False, f"extrapolated: {e.cells_inside}/{e.cells_total} cells inside the hypotheses (at least {MIN_INSIDE:.0%} needed)"
    if e.trivial:
        return False, e.trivial
    if e.verdict not in ("consistent", "inconsistent"):
        return False, "undecided"
    if e.offsets != "fit":
        return False, "log factors taken as known offsets: not the claim's own exponents"
    if e.kkt_certified is False:
        return False, "a cell inside the hypotheses holds no certified KKT point"
    if e.kkt_search:
        return False, e.kkt_search
    if e.verdict == "inconsistent" and e.family_rejected is False:
        return False, "inconsistent at its own level, not at the family level across the index's rows (Holm, 0.05)"
    return True, (f"{e.cells_inside}/{e.cells_total} cells inside" + (", certified KKT points at every cell" if e.kkt_certified else "")
                  + (f"; {e.kkt_depth}" if e.kkt_depth else ""))
