"""The applicability window: the exact set of integers (of reals, for a real variable) where every hypothesis holds.

With one integer variable free (usually d) and the others fixed, each hypothesis
``lhs REL rhs`` becomes ``g(u) = log lhs - log rhs REL 0`` in ``u = ln(free)``. The
window is computed from the roots of the g's, not by scanning integers:

1. the roots come from sympy's ``solve`` in u, done once per hypothesis with the other
   variables symbolic (cached), which returns every branch, e.g. both roots of
   ``(ln d)^2 - ln d = c``; a sampled sign check in u-space, refined by a bracketing root finder, backs
   it up for equations sympy cannot solve;
2. between consecutive roots every hypothesis keeps its truth value, tested once per
   segment;
3. the real ends become integers at a precision of (digits + 20), and each end is
   verified by evaluating one step inside it and one step outside it, which also names
   the hypothesis that binds there.

The window is the set of integers in (domain and hypotheses): the domain's ends are the exact rationals written
(0.5 is 1/2), rounded inward (``(1, 4)`` holds 2 and 3; ``[0.5, 0.7]`` none, an empty window that says so), and an
end is checked in the domain too. Integers <= 0 (a domain reaching 0 or below, or unbounded below) come from the exact
real construction of a real window over that part, the ends rounded inward exactly; the positive ones from the roots
in u as above, with the exact roots of each relation that is a rational function of the free variable added (a double
root such as ``(x - 3)**2 > 0`` changes no sign) and the integers next to every root checked one by one.

Ends beyond 4300 digits (Python's int-to-str limit) are given as ``~10^x`` strings. Comparisons at
an end that is an equality point (``d >= n*k`` at d = n*k) are decided exactly
(:func:`theory.evaluate.relation_holds`). A real-valued variable (a step size, a signal strength)
gets real intervals whose ends are roots to 17 digits, open or closed by the relation.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from decimal import Decimal
from fractions import Fraction
from functools import cmp_to_key, lru_cache
from typing import Callable, ClassVar, Mapping, Sequence, cast

import mpmath
import sympy as sp

from .claim import Claim
from .errors import InputError
from .evaluate import Point, make_point, parse_assignments, relation_holds
from .result import Result, new_figure
from .variables import Variable

U = sp.Symbol("u", real=True)
MAX_DIGITS = 4300
_SCAN_POINTS = 48


@dataclass(frozen=True)
class Window(Result):
    """The result of :func:`applicability_window`: closed integer intervals of ``free`` (in its domain) where every
    hypothesis holds, each end checked one step inside and one step outside; a low end ``"-oo"`` where the domain is
    unbounded below."""

    name: ClassVar[str] = "window"

    claim: str
    free: str
    at: dict[str, str]
    intervals: list[tuple[int | str, int | str | None]]
    log10_intervals: list[tuple[float | None, float | None]]
    binding: list[dict[str, str | None]]
    checks: list[dict]
    verified: bool
    assumed_constants: dict[str, int] = field(default_factory=dict)
    assumed_qualitative: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    empty_because: str | None = None
    flags: list[str] = field(default_factory=list)
    real: bool = False  # a real-valued variable: the ends are decimals (17 digits), open or closed per ``closed``
    closed: list[tuple[bool, bool]] = field(default_factory=list)
    exact_intervals: list[tuple[str | None, str | None]] = field(default_factory=list)  # a real window's ends exactly, where sympy has them

    def as_json(self) -> dict:
        return {
            "claim": self.claim, "flags": self.flags, "free": self.free, "at": self.at,
            "intervals": [list(iv) for iv in self.intervals],
            "log10_intervals": [list(iv) for iv in self.log10_intervals],
            "binding": self.binding, "verified": self.verified, "checks": self.checks,
            "assumed_constants": self.assumed_constants,
            "assumed_qualitative": self.assumed_qualitative,
            "independent_of_free": self.ignored, "empty_because": self.empty_because,
            "real": self.real, "closed": [list(c) for c in self.closed],
            "exact_intervals": [list(iv) for iv in self.exact_intervals],
        }

    def interval_text(self, i: int) -> str:
        """Interval ``i`` in bracket notation: ``[22, oo)`` for integers, ``(0, 0.0476...]`` or ``[2, 2]`` (a point) for a
        real variable, each end open or closed as it is."""
        lo, hi = self.intervals[i]
        cl = self.closed[i] if self.real else (lo != "-oo", hi is not None)
        return f"{'[' if cl[0] else '('}{lo}, {'oo' if hi is None else hi}{']' if cl[1] else ')'}"

    def heading(self) -> str:
        at = ", ".join(f"{k}={v}" for k, v in self.at.items())
        return f"{self.claim}: window of {self.free} at {at}" + ("" if self.intervals else f" -- empty ({self.empty_because})")

    def table(self) -> list[dict]:
        return [{"interval": self.interval_text(i), "log10 low": lg[0], "log10 high": lg[1],
                 "binding low": b["low"], "binding high": b["high"], "verified": self.verified}
                for i, (lg, b) in enumerate(zip(self.log10_intervals, self.binding))]

    def figure(self):
        """The window on a log10 axis (an open end drawn to the right edge)."""
        if not self.intervals:
            return None

        fig, ax = new_figure(6.4, 1.6)
        ends = [x for lg in self.log10_intervals for x in lg if x is not None] or [0.0]
        left, right = min(ends) - 1, max(ends) + 1
        for lo, hi in self.log10_intervals:
            ax.plot([left if lo is None else lo, right if hi is None else hi], [0, 0], lw=8, solid_capstyle="butt", color="tab:green")
        ax.set_yticks([])
        ax.set_xlabel(f"log10 {self.free}")
        ax.set_title(self.heading(), fontsize=8)
        return fig


def _atoms(rel: sp.Basic) -> list[sp.Basic]:
    if isinstance(rel, (sp.And, sp.Or)):
        return [a for r in rel.args for a in _atoms(r)]
    return [rel]


@lru_cache(maxsize=1024)
def _g_in_u(atom: sp.Basic, free: str) -> sp.Expr:
    """log lhs - log rhs with the free variable x written as exp(u). A side that is 0 (``(x-1)*(x-3) >= 0``, whose
    log is undefined) is first moved over: the positive terms of lhs - rhs against the negative ones, ``x**2 + 3``
    against ``4*x``; where every term has one sign, the result is nan (no root for positive x)."""
    x = next(s for s in atom.free_symbols if s.name == free)
    lhs, rhs = atom.lhs, atom.rhs
    if lhs == 0 or rhs == 0:
        terms = sp.Add.make_args(sp.expand(lhs - rhs))
        pos = [t for t in terms if t.as_coeff_Mul()[0] > 0]
        lhs, rhs = sp.Add(*pos), -sp.Add(*[t for t in terms if t not in pos])
        if lhs == 0 or rhs == 0:
            return sp.nan
    g = sp.expand_log(sp.log(lhs), force=False) - sp.expand_log(sp.log(rhs), force=False)
    return sp.expand_log(g.subs(x, sp.exp(U)), force=False)


@lru_cache(maxsize=1024)
def _u_solutions(atom: sp.Basic, free: str) -> tuple[sp.Expr, ...] | None:
    """Every branch sympy finds for g(u) = 0, exact, in the other variables; None if unsolved. A branch through an
    undefined value (``log 0``: a side that is 0, as in ``(x-1)*(x-3) >= 0``) is left out."""
    g = _g_in_u(atom, free)
    if g.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
        return None
    try:
        # check=False keeps every branch (a spurious root only adds a harmless cut).
        sols = sp.solve(g, U, check=False, simplify=False, rational=False)
    except (NotImplementedError, ValueError, TypeError):
        return None
    if not isinstance(sols, list):
        return None
    return tuple(s for s in sols if not s.has(sp.zoo, sp.nan, sp.oo, -sp.oo))


@lru_cache(maxsize=1024)
def _symbolic_roots(atom: sp.Basic, free: str):
    """Every branch sympy finds for g(u) = 0, as mpmath functions of the other variables; None if unsolved."""
    sols = _u_solutions(atom, free)
    if not sols:
        return sols
    out = []
    for s in sols:
        syms = sorted(s.free_symbols, key=lambda z: z.name)
        try:
            out.append((tuple(z.name for z in syms), sp.lambdify(syms, s, modules="mpmath")))
        except (KeyError, TypeError, ValueError):  # a value mpmath has no name for
            continue
    return tuple(out)


@lru_cache(maxsize=1024)
def _g_function(atom: sp.Basic, free: str):
    g = _g_in_u(atom, free)
    syms = sorted(g.free_symbols - {U}, key=lambda z: z.name)
    return tuple(z.name for z in syms), sp.lambdify([U, *syms], g, modules="mpmath")


def _roots_for(atom, free, values, u_lo, u_hi=None) -> list[mpmath.mpf]:
    """Every root in u > u_lo (and < u_hi where given: a real variable's scan range) of log lhs = log rhs for one
    relation, at the working precision."""
    roots: list[mpmath.mpf] = []
    sym = _symbolic_roots(atom, free)
    for names, fn in sym or ():
        try:
            r = fn(*[values[n] for n in names])
        except (ZeroDivisionError, ValueError, OverflowError):
            continue
        r = mpmath.mpc(r)
        if abs(r.imag) <= mpmath.mpf(10) ** (-20) * max(1, abs(r.real)) and r.real > u_lo and (u_hi is None or r.real < u_hi):
            roots.append(mpmath.mpf(r.real))
    # Sampled sign check in u-space (backs up the symbolic roots; sole source if unsolved).
    if _g_in_u(atom, free).has(sp.zoo, sp.nan):  # every term of one sign: no root
        return roots
    names, gf = _g_function(atom, free)
    args = [values[n] for n in names]

    def g(u):
        try:
            v = gf(u, *args)
        except (ZeroDivisionError, ValueError, OverflowError):  # a pole at a sample (1/(x - 1) at u = 0)
            return mpmath.nan
        return mpmath.re(v) if isinstance(v, mpmath.mpc) and abs(v.imag) < 1e-20 else (v if not isinstance(v, mpmath.mpc) else mpmath.nan)

    if u_hi is None:
        top = max([u_lo + 64] + [2 * r for r in roots])
        grid = [u_lo + (top - u_lo) * (mpmath.mpf(i) / _SCAN_POINTS) ** 2 for i in range(_SCAN_POINTS + 1)]
        grid += [top * 10, top * 1000]
    else:
        grid = [u_lo + (u_hi - u_lo) * mpmath.mpf(i) / (8 * _SCAN_POINTS) for i in range(1, 8 * _SCAN_POINTS)]
    prev_u, prev_g = None, None
    for u in grid:
        gu = g(u)
        if mpmath.isnan(gu):
            prev_u, prev_g = None, None
            continue
        if prev_g is not None and (prev_g < 0) != (gu < 0) and not any(prev_u <= r <= u for r in roots):
            roots.append(_root_between(g, prev_u, u))
        prev_u, prev_g = u, gu
    return roots


def _root_between(g, a, b):
    """A root of ``g`` in ``[a, b]``, where ``g(a)`` and ``g(b)`` differ in sign, to the working precision.

    ``mpmath.findroot`` with a bracketing solver (Anderson-Bjorck: the bracket always keeps the sign
    change, and converges superlinearly); plain bisection (mpmath's too) if it does not converge.
    Pitfall avoided: an open (secant, Newton) iteration may leave the bracket and return another root."""
    tol = mpmath.mpf(10) ** (-mpmath.mp.dps + 5) * max(1, abs(a))
    for solver in ("anderson", "bisect"):
        try:
            r = mpmath.findroot(g, (a, b), solver=solver, tol=tol**2, verify=False, maxsteps=10 * mpmath.mp.dps)
        except (ValueError, ZeroDivisionError):
            continue
        if a <= r <= b:
            return r
    return (a + b) / 2


def _refine(atom, free, raw, u: mpmath.mpf, dps: int) -> mpmath.mpf:
    """The root near u recomputed at ``dps`` digits: the closest symbolic branch, else a bracketed root."""
    with mpmath.workdps(dps):
        values = _values(raw)
        best = None
        for names, fn in _symbolic_roots(atom, free) or ():
            try:
                r = mpmath.mpc(fn(*[values[n] for n in names]))
            except (ZeroDivisionError, ValueError, OverflowError):
                continue
            if abs(r.imag) < mpmath.mpf(10) ** (-dps // 2) and (best is None or abs(r.real - u) < abs(best - u)):
                best = mpmath.mpf(r.real)
        if best is not None and abs(best - u) <= mpmath.mpf(10) ** -25 * max(1, abs(u)):
            return best
        names, gf = _g_function(atom, free)
        args = [values[n] for n in names]
        g = lambda x: mpmath.re(gf(x, *args))  # noqa: E731
        w = mpmath.mpf(10) ** -30 * max(1, abs(u))
        a, b = u - w, u + w
        while (g(a) < 0) == (g(b) < 0) and w < abs(u) * mpmath.mpf(10) ** -10:
            w *= 100
            a, b = u - w, u + w
        return _root_between(g, a, b) if (g(a) < 0) != (g(b) < 0) else u


def _end(root, free, raw, up: bool) -> int:
    """ceil/floor of exp(u) at the root, exact: the root is recomputed at (digits + 20) digits."""
    u, atom = root
    digits = int(u / mpmath.log(10)) + 1
    dps = max(40, digits + 20)
    u = _refine(atom, free, raw, u, dps)
    with mpmath.workdps(dps):
        x = mpmath.exp(u)
        return int(mpmath.ceil(x) if up else mpmath.floor(x))


def _values(raw: Mapping[str, object]) -> dict[str, object]:
    """Variable values at the current precision: ints stay exact, decimals are re-read from their text."""
    return {n: (v if isinstance(v, int) else mpmath.mpf(v)) for n, v in raw.items()}


def _failing(hyps, raw, free, x: int) -> str | None:
    """The first hypothesis that fails at integer ``x`` (None if all hold), at exact-enough precision; one with a side
    undefined or not real there (1/0, log 0, the root of a negative) fails, as in a real window."""
    digits = int(x.bit_length() * 0.30103) + 1
    exact = {**{n: exact_number(v) for n, v in raw.items()}, free: sp.Integer(x)}
    with mpmath.workdps(max(30, digits + 20)):
        vals = {**_values(raw), free: mpmath.mpf(x)}
        return next((name for name, rel in hyps if not _holds_defined(rel, vals, exact)), None)


def _holds_defined(rel: sp.Basic, vals: dict, exact: dict | None) -> bool:
    """:func:`theory.evaluate.relation_holds` at ``vals``, a relation counting as failed where it cannot be evaluated,
    or where a side is undefined or not real at the exact values ``exact`` (log 0, 1/0, sqrt of a negative; not
    checked where ``exact`` is None)."""
    if isinstance(rel, (sp.And, sp.Or)):
        parts = [_holds_defined(a, vals, exact) for a in rel.args]
        return all(parts) if isinstance(rel, sp.And) else any(parts)
    if exact is not None:
        for side in (rel.lhs, rel.rhs):  # a polynomial is defined everywhere: only the others are evaluated here
            if not side.is_polynomial() and _sign(side.xreplace({s: exact[s.name] for s in side.free_symbols if s.name in exact})) is None:
                return False
    try:
        return bool(relation_holds(rel, vals)[0])
    except (ZeroDivisionError, ValueError, TypeError, ArithmeticError):
        return False


def applicability_window(claim: Claim, free: str, at: Mapping[str, str] | str) -> Window:
    """The integers ``free`` where every hypothesis of ``claim`` holds (flags attached)."""
    return replace(_window(claim, free, at), flags=list(claim.flags))


def _window(claim: Claim, free: str, at: Mapping[str, str] | str) -> Window:
    """The integers ``free`` where every hypothesis of ``claim`` holds, others fixed by ``at``.

    Returns closed integer intervals; an empty list means the claim never applies there.
    An upper end of None means the window is unbounded above.
    """
    raw = parse_assignments(at) if isinstance(at, str) else dict(at)
    if free not in [v.name for v in claim.variables]:
        raise InputError(f"--free {free!r} is not a variable of {claim.id}: choose one of "
                         f"{', '.join(v.name for v in claim.variables) or 'none'}")
    var = claim.variable(free)
    if free in raw:
        raise InputError(f"free={free!r} must not also be fixed in at (--free, --at)")
    point: Point = make_point(claim, raw)
    numeric = [(h.name, h.expr) for h in claim.hypotheses if h.expr is not None]
    qualitative = [f"{h.name}: {h.text}" for h in claim.hypotheses if h.expr is None]
    needed = sorted({s.name for _, e in numeric for s in e.free_symbols} - {free})
    missing = [n for n in needed if point.get(n) is None]
    if missing:
        raise InputError(f"{claim.id} needs values for {', '.join(missing)} in at (--at; the window fixes every variable but {free})")
    # Exact ints stay ints; decimals keep their text so each precision re-reads them exactly.
    raw_vals = {n: (point.get(n) if isinstance(point.get(n), int) else (raw.get(n) or str(point.get(n)))) for n in needed}
    assumed = {c: v for c, v in point.assumed.items() if c in needed}
    at_json = {k: str(v) for k, v in raw.items()}
    if not var.integer:
        return _real_window(claim, var, numeric, raw_vals, at_json, assumed, qualitative)
    depends = [(n, e) for n, e in numeric if any(s.name == free for s in e.free_symbols)]
    constant = [(n, e) for n, e in numeric if (n, e) not in depends]
    ignored = [n for n, _ in constant]
    lo_int, hi_int = _integer_domain(var)
    if lo_int is not None and hi_int is not None and lo_int > hi_int:
        return Window(claim.id, free, at_json, [], [], [], [], True, assumed, qualitative, ignored,
                      f"no integer in the domain of {free} ({var.domain_text()})")
    with mpmath.workdps(40):
        values = _values(raw_vals)
        for n, e in constant:
            if not relation_holds(e, values)[0]:
                return Window(claim.id, free, at_json, [], [], [], [], True, assumed, qualitative, ignored,
                              f"{n} fails at this point whatever {free} is")
    ints = _IntegerDomain(free, lo_int, hi_int, depends, raw_vals)
    raw_ivs: list[tuple[object, object]] = []
    ever = {n: False for n, _ in depends}
    some_real = False
    if lo_int is None or lo_int <= 0:  # integers <= 0: the exact real construction (any sign), then its integers
        part, part_ever, part_real = _signed_integer_part(var, depends, raw_vals, values, ints)
        raw_ivs += part
        ever = {n: ever[n] or part_ever.get(n, False) for n in ever}
        some_real = some_real or part_real
    if hi_int is None or hi_int >= 1:  # positive integers: roots in u = ln x (ends far beyond 10^300 too)
        lo_pos = 1 if lo_int is None else max(lo_int, 1)
        exact_roots = _rational_roots(depends, raw_vals, free)
        with mpmath.workdps(40):
            real_ivs, pos_ever, roots = _real_intervals(depends, values, free, lo_pos, exact_roots)
        raw_ivs += _positive_integer_part(real_ivs, roots, exact_roots, depends, raw_vals, free, lo_pos, hi_int)
        ever = {n: ever[n] or pos_ever[n] for n in ever}
        some_real = some_real or bool(real_ivs)
    intervals, log_ivs, binding, checks, verified = _finish(_merge_integer(raw_ivs), ints, var)
    why = None
    if not intervals:
        never = [n for n, t in ever.items() if not t]
        why = (f"{', '.join(never)} never hold(s) for {free} {ints.text()}" if never
               else f"{', '.join(ever)} hold together only between integers of {free} {ints.text()}" if some_real
               else f"{', '.join(ever)} each hold for some {free} but never all together")
    return Window(claim.id, free, at_json, intervals, log_ivs, binding, checks, verified, assumed, qualitative, ignored, why)


def _integer_domain(var) -> tuple[int | None, int | None]:
    """The smallest and largest integer in an integer variable's domain (None: unbounded), exactly: an end is the
    rational it was written as (0.5 is 1/2), rounded inward, an open end that is an integer excluded (``(1, 4)`` is
    2..3, ``[0.5, 2.5]`` is 1..2). Pitfall avoided: ``int(low)`` truncated 0.5 to 0 and 2.5 to 2 and kept open ends."""
    def rounded(v, up: bool, open_: bool) -> int:
        q = exact_number(v)
        fl, ce = int(sp.floor(q)), int(sp.ceiling(q))
        if up:
            return fl + 1 if open_ else ce
        return ce - 1 if open_ else fl

    lo = None if var.low is None else rounded(var.low, True, var.low_open)
    hi = None if var.high is None else rounded(var.high, False, var.high_open)
    return lo, hi


class _IntegerDomain:
    """An integer variable's domain [lo, hi] (None: unbounded) and the exact test of one integer in it: the first
    hypothesis that fails there, or the domain where the integer is outside it."""

    def __init__(self, free: str, lo: int | None, hi: int | None, depends: list, raw_vals: dict):
        self.free, self.lo, self.hi, self.depends, self.raw_vals = free, lo, hi, depends, raw_vals
        self.signed_failing: Callable[[sp.Rational], str | None] | None = None  # integers <= 0 (set by the signed part)

    def text(self) -> str:
        if self.lo is not None and self.hi is not None:
            return f"in [{self.lo}, {self.hi}]"
        if self.lo is not None:
            return f">= {self.lo}"
        return "any integer" if self.hi is None else f"<= {self.hi}"

    def outside(self, x: int) -> str | None:
        """The domain's text where ``x`` is outside it, else None."""
        if self.lo is not None and x < self.lo:
            return f"domain ({self.free} >= {self.lo})"
        if self.hi is not None and x > self.hi:
            return f"domain ({self.free} <= {self.hi})"
        return None

    def failing(self, x: int) -> str | None:
        """What excludes integer ``x`` from the window: the domain, or the first hypothesis that fails there; None if
        ``x`` is in the domain and every hypothesis holds."""
        out = self.outside(x)
        if out is not None:
            return out
        if x >= 1:
            return _failing(self.depends, self.raw_vals, self.free, x)
        assert self.signed_failing is not None  # x <= 0 is in the domain only where the signed part ran
        with mpmath.workdps(_DPS):
            return self.signed_failing(sp.Integer(x))


@dataclass(frozen=True)
class _Far:
    """An end beyond 10^4300 digits: written ``~10^x``, not checked at integers."""

    text: str
    log10: float
    binding: str | None = None


def _signed_integer_part(var, depends: list, raw_vals: dict, values: dict,
                         ints: _IntegerDomain) -> tuple[list[tuple[object, object]], dict[str, bool], bool]:
    """The integers <= 0 of the domain where every hypothesis holds: the exact real window over [lo, min(hi, 0)]
    (the construction of :func:`_real_window`), each of its intervals narrowed to the integers in it (ceil/floor of
    an exact end done exactly, a numeric one settled by exact checks at the integers next to it). Returns the
    (low, high) pairs (None: unbounded), per hypothesis whether it ever holds there, and whether any real interval was
    found."""
    top = 0 if ints.hi is None else min(ints.hi, 0)
    part_var = Variable(var.name, var.description, low=ints.lo, high=top)
    with mpmath.workdps(_DPS):
        core = _real_core(part_var, depends, raw_vals, values)
        ints.signed_failing = core.checker.failing
        out: list[tuple[object, object]] = []
        for first, last in core.runs:
            lo = _integer_end(core.elements, first, "low", ints)
            hi = _integer_end(core.elements, last, "high", ints)
            if lo is not None and hi is not None and lo > hi:
                continue
            out.append((lo, hi))
    return out, core.ever, bool(core.runs)


def _integer_end(elements: list[dict], k: int, side: str, ints: _IntegerDomain) -> int | None:
    """The integer end of a real run: the least integer at or above (above, for an open end) its low end, the
    greatest at or below its high end, exactly where the end is exact (a rational by integer arithmetic, an
    irrational by sympy's floor/ceiling), else from its value; then settled by exact checks at the integers next to
    it, never past the domain. None for an unbounded end."""
    end = _end_of(elements, k, side)
    if end is None:
        return None
    cut, closed = end
    low = side == "low"
    n: int | None = None
    if cut.exact:
        try:
            fl, ce = int(sp.floor(cut.x)), int(sp.ceiling(cut.x))
            n = (ce if closed else fl + 1) if low else (fl if closed else ce - 1)
        except (TypeError, ValueError, ArithmeticError):
            n = None
    if n is None:
        n = int(mpmath.ceil(cut.num) if low else mpmath.floor(cut.num))
    step = 1 if low else -1
    for _ in range(3):  # a numeric end next to an integer: move inward past an integer that fails,
        if ints.failing(n) is None:
            break
        n += step
    for _ in range(3):  # and outward over one that holds
        if ints.failing(n - step) is not None:
            break
        n -= step
    return n


def _merge_integer(ivs: list[tuple[object, object]]) -> list[tuple[object, object]]:
    """The integer intervals in order, overlapping or adjacent ones joined (``[.., 0]`` and ``[1, ..]``; two real
    intervals apart by less than one integer step)."""
    def low_key(iv):
        lo = iv[0]
        return (0, 0) if lo is None else (2, lo.log10) if isinstance(lo, _Far) else (1, lo)

    out: list[list[object]] = []
    for lo, hi in sorted(ivs, key=low_key):
        if out:
            prev = out[-1]
            if prev[1] is None or (isinstance(prev[1], _Far) and isinstance(lo, int)):
                continue  # unbounded above, or above every written integer: it holds every later one
            if isinstance(prev[1], int) and isinstance(lo, int) and lo <= prev[1] + 1:
                if hi is None or isinstance(hi, _Far) or (isinstance(hi, int) and hi > prev[1]):
                    prev[1] = hi
                continue
        out.append([lo, hi])
    return [(lo, hi) for lo, hi in out]


def _finish(ivs: list[tuple[object, object]], ints: _IntegerDomain, var) -> tuple[list, list, list, list, bool]:
    """Each integer end checked exactly: in the domain and every hypothesis holding at it, and the integer one step
    outside it excluded (by the domain, or by a hypothesis: the binding). Returns (intervals, log10 intervals,
    bindings, checks, whether every end verified)."""
    intervals: list[tuple[int | str, int | str | None]] = []
    log_ivs: list[tuple[float | None, float | None]] = []
    binding: list[dict[str, str | None]] = []
    checks: list[dict] = []
    verified = True
    unbounded = f"domain ({var.domain_text()})"
    for lo, hi in ivs:
        ends: list[tuple[int | str | None, float | None, str | None]] = []
        for side, x in (("low", lo), ("high", hi)):
            if x is None:
                ends.append(("-oo" if side == "low" else None, None, unbounded))
            elif isinstance(x, _Far):
                checks.append({"side": side, "note": f"end beyond 10^{MAX_DIGITS}: not verified at integers"})
                verified = False
                ends.append((x.text, x.log10, x.binding))
            else:
                assert isinstance(x, int)
                beyond = x - 1 if side == "low" else x + 1
                at_end, outside = ints.failing(x), ints.failing(beyond)
                in_domain = ints.outside(x) is None
                checks.append({"at": x, "side": side, "in_domain": in_domain, "inside": at_end is None,
                               "outside_fails": outside})
                verified = verified and in_domain and at_end is None and outside is not None
                ends.append((x, _log10(x) if x > 0 else None, outside))
        intervals.append((cast("int | str", ends[0][0]), ends[1][0]))
        log_ivs.append((ends[0][1], ends[1][1]))
        binding.append({"low": ends[0][2], "high": ends[1][2]})
    return intervals, log_ivs, binding, checks, verified


def _real_intervals(depends: list, values: dict, free: str, lo_dom: int,
                    exact_roots: Sequence[tuple[sp.Expr, sp.Basic]] = ()) -> tuple[list[tuple], dict[str, bool], list[tuple]]:
    """The real intervals of log ``free`` (from log ``lo_dom``) where every hypothesis that depends on it holds, cut
    at the roots of their atoms (inside ``mpmath.workdps``) and at ``exact_roots`` (a rational function's, exact), per
    hypothesis whether it ever holds (on an open piece), and the roots (u, atom) themselves."""
    u_lo = mpmath.log(lo_dom)
    roots: list[tuple[mpmath.mpf, sp.Basic]] = []
    for _, e in depends:
        for atom in _atoms(e):
            if any(s.name == free for s in atom.free_symbols):
                roots += [(r, atom) for r in _roots_for(atom, free, values, u_lo)]
    tol = mpmath.mpf(10) ** (10 - mpmath.mp.dps)
    for x, atom in exact_roots:
        u = mpmath.log(_num(x))
        if u > u_lo and not any(abs(r - u) <= tol * max(1, abs(u)) for r, _ in roots):
            roots.append((u, atom))
    roots.sort(key=lambda ra: ra[0])
    cuts: list[tuple[mpmath.mpf, sp.Basic | None]] = [(u_lo, None)] + roots
    real_ivs: list[tuple] = []
    ever = {n: False for n, _ in depends}
    for i, a in enumerate(cuts):
        b = cuts[i + 1] if i + 1 < len(cuts) else None
        if b is not None and b[0] == a[0]:
            continue
        mid = (a[0] + b[0]) / 2 if b is not None else (a[0] + 1 if a[0] < 1 else 2 * a[0])
        vals = dict(values)
        vals[free] = mpmath.exp(mid)
        truth = {n: _holds_defined(e, vals, None) for n, e in depends}
        ever = {n: ever[n] or t for n, t in truth.items()}
        if not all(truth.values()):
            continue
        if real_ivs and real_ivs[-1][1] is not None and real_ivs[-1][1][0] == a[0]:
            real_ivs[-1] = (real_ivs[-1][0], b)
        else:
            real_ivs.append((a, b))
    return real_ivs, ever, roots


def _rational_roots(depends: list, raw_vals: dict, free: str) -> list[tuple[sp.Expr, sp.Basic]]:
    """The positive real roots and poles, exact (sympy's), of every relation that is a rational function of ``free``
    at the fixed values, with the relation: the pieces of a positive integer window are cut there, and the integers
    next to each are checked one by one, so a double root (``(x - 3)**2 > 0``, ``-(x - 2)**2 >= 0``) that changes
    no sign is not missed."""
    fixed = {n: exact_number(v) for n, v in raw_vals.items()}
    out: list[tuple[sp.Expr, sp.Basic]] = []
    for _, e in depends:
        for atom in _atoms(e):
            if not any(s.name == free for s in atom.free_symbols):
                continue
            r = _exact(atom, _subs(atom, free, fixed))
            if not isinstance(r, sp.core.relational.Relational):
                continue
            f = r.lhs - r.rhs
            if not f.has(X) or not f.is_rational_function(X):
                continue
            num, den = sp.fraction(sp.together(f))
            try:
                found = (_real_roots(sp.Poly(num, X)) or []) + (_real_roots(sp.Poly(den, X)) or [])
            except (sp.PolynomialError, NotImplementedError, ValueError, TypeError):
                continue
            out += [(x, atom) for x in found if _sign(x) == 1]
    return out


def _floor_points(x: sp.Expr) -> set[int]:
    """The integers next to a positive exact number: its floor and the one above, exactly for a rational, else from
    its value to (digits + 20) digits (both neighbours of an integer it may be)."""
    if isinstance(x, sp.Rational):
        fl = int(x.p) // int(x.q)
        return {fl, fl + 1}
    v = _num(x)
    dps = max(40, (int(mpmath.log10(v)) + 1 if v >= 1 else 1) + 20)
    with mpmath.workdps(dps):
        try:
            fl = int(mpmath.floor(mpmath.mpf(sp.N(x, dps)._mpf_)))
        except (AttributeError, TypeError, ValueError, ArithmeticError):  # not a plain real Float: its 60 digits
            fl = int(mpmath.floor(v))
    return {fl, fl + 1}


def _positive_integer_part(real_ivs: list[tuple], roots: list[tuple], exact_roots: list[tuple], depends: list,
                           raw_vals: dict, free: str, lo_dom: int, hi_dom: int | None) -> list[tuple[object, object]]:
    """The real intervals of the positive integers [lo_dom, hi_dom] (hi_dom None: unbounded) as integer ends, cut to
    that range, and the integers at a root (or at lo_dom) where everything holds while the pieces on both sides fail
    (``x <= 3`` over [3, 3]; ``x >= 3`` and ``x <= 3``): (low, high) pairs, high None for unbounded, an end beyond
    10^4300 a :class:`_Far`. Pitfalls avoided: the ends were settled by stepping while a hypothesis held, past the
    domain's high end ([1, 13] for [1, 10] and ``x <= 20``); a point window was reported empty."""
    out: list[tuple[object, object]] = []
    huge = mpmath.mpf(MAX_DIGITS) * mpmath.log(10)
    ln10 = mpmath.log(10)
    u_top = None if hi_dom is None else mpmath.log(hi_dom)
    for a, b in real_ivs:
        if u_top is not None and a[1] is not None and a[0] > u_top:
            continue  # starts above the domain
        if a[0] > huge:
            binding = next((n for n, e in depends if b is not None and b[1] in _atoms(e)), None)
            out.append((_Far(_approx(a[0]), float(a[0] / ln10)),
                        None if b is None else _Far(_approx(b[0]), float(b[0] / ln10), binding)))
            continue
        lo = lo_dom if a[1] is None else max(lo_dom, _end(a, free, raw_vals, up=True))
        hi_exact = b is not None and b[0] <= huge
        hi = _end(b, free, raw_vals, up=False) if hi_exact else None
        if hi_dom is not None:
            hi = hi_dom if hi is None else min(hi, hi_dom)
        lo, hi = _settle(depends, raw_vals, free, lo, hi, lo_dom, hi_dom)
        if hi is not None and lo > hi:
            continue
        if hi is None and b is not None:
            binding = next((n for n, e in depends if b[1] in _atoms(e)), None)
            out.append((lo, _Far(_approx(b[0]), float(b[0] / ln10), binding)))
        else:
            out.append((lo, hi))
    points = {lo_dom}
    for u, atom in roots:
        if u <= huge:
            fl = _end((u, atom), free, raw_vals, up=False)
            points |= {fl, fl + 1}
    for x, _ in exact_roots:
        if mpmath.log(_num(x)) <= huge:
            points |= _floor_points(x)
    for p in sorted(points):
        if p < lo_dom or (hi_dom is not None and p > hi_dom):
            continue
        if _failing(depends, raw_vals, free, p) is None:
            out.append((p, p))  # joined with an interval that holds it by _merge_integer
        else:  # a root the pieces on both sides hold around ((x - 3)**2 > 0 at 3): not in the window
            out = [piece for lo, hi in out for piece in _without(lo, hi, p)]
    return out


def _without(lo, hi, p: int) -> list[tuple[object, object]]:
    """The integer interval [lo, hi] (hi None or :class:`_Far`: beyond every written integer) less the integer p."""
    if not isinstance(lo, int) or p < lo or (isinstance(hi, int) and p > hi):
        return [(lo, hi)]
    return [iv for iv in ((lo, p - 1), (p + 1, hi)) if not (isinstance(iv[0], int) and isinstance(iv[1], int) and iv[0] > iv[1])]


def _settle(hyps, values, free, lo, hi, lo_dom, hi_dom, steps=3):
    """Correct integer ends by a few exact steps where rounding or equality at a root moved them, never past the
    domain [lo_dom, hi_dom]."""
    for _ in range(steps):
        if _failing(hyps, values, free, lo) is None:
            break
        lo += 1
    while lo > lo_dom and _failing(hyps, values, free, lo - 1) is None and steps:
        lo, steps = lo - 1, steps - 1
    if hi is not None:
        s = 3
        while s and _failing(hyps, values, free, hi) is not None:
            hi, s = hi - 1, s - 1
        s = 3
        while s and (hi_dom is None or hi < hi_dom) and _failing(hyps, values, free, hi + 1) is None:
            hi, s = hi + 1, s - 1
    return lo, hi


def _approx(u: mpmath.mpf) -> str:
    """An end too large to write out: ``~10^x`` from its natural log u."""
    return f"~10^{mpmath.nstr(u / mpmath.log(10), 15)}"


def _log10(x: int) -> float:
    return float(mpmath.log10(mpmath.mpf(x)))


REAL_SCAN_DECADES = 300  # a real variable unbounded at an end is scanned to 10^(+-300) there (sympy's roots reach further)
REAL_DIGITS = 17  # significant digits of a real window's end where it is not a short exact decimal
REAL_STEP = mpmath.mpf(10) ** -10  # the relative offset of each end's inside and outside check
_DPS = 60  # working digits of a real window's numeric steps
X = sp.Symbol("x", real=True)  # the free variable of a real window: any sign, as its domain allows
_HOLDS = {sp.GreaterThan: lambda s: s >= 0, sp.StrictGreaterThan: lambda s: s > 0,
          sp.LessThan: lambda s: s <= 0, sp.StrictLessThan: lambda s: s < 0}


@dataclass
class _Atom:
    """One relation of a hypothesis with every other variable fixed: ``f = lhs - rhs`` in X, the relation it is
    compared by (with 0), the relation itself over the claim's symbols (for sympy's roots in u = ln x), and its cuts:
    (point, exact, sign of f there: -1, 0, 1, or None where f is undefined)."""

    rel: type
    f: sp.Expr
    symbolic: sp.Basic
    cuts: list[tuple[sp.Expr, bool, int | None]] = field(default_factory=list)

    def holds(self, sign: int | None) -> bool:
        return sign is not None and bool(_HOLDS[self.rel](sign))


@dataclass
class _Cut:
    """A point where some atom's sign may change, or a domain end; ``signs`` has the sign there of each atom it is a
    cut of."""

    x: sp.Expr
    exact: bool
    num: mpmath.mpf
    signs: dict[int, int | None] = field(default_factory=dict)
    domain: bool = False


def exact_number(v) -> sp.Rational:
    """A number as the exact rational it was written as: an int as itself, a float or a decimal text as its decimal
    (0.1 is 1/10, not the double next to it; 1e-400 is 10^-400, not 0.0), a Fraction or a sympy rational as itself.
    Pitfall avoided: float rounding moved an end (``x >= 1e-320`` gave (0, oo)), or made a domain end 0.50000000000000001."""
    if isinstance(v, sp.Rational):
        return v
    if isinstance(v, sp.Basic) and v.is_number and not isinstance(v, sp.Float):  # exact already (sqrt(2), pi): as it is
        return v
    if isinstance(v, bool):
        raise TypeError(f"{v!r} is not a number")
    if isinstance(v, int):
        return sp.Integer(v)
    if isinstance(v, Fraction):
        return sp.Rational(v.numerator, v.denominator)
    if isinstance(v, sp.Float):
        return sp.Rational(Fraction(Decimal(str(v))))
    if isinstance(v, float):
        return sp.Rational(Fraction(Decimal(float.__repr__(v))))
    if isinstance(v, mpmath.mpf):
        return _rat(v)
    return sp.Rational(Fraction(Decimal(str(v))))


def _rat(m) -> sp.Rational:
    """The exact rational value of an mpf (binary, so exact)."""
    m = mpmath.mpf(m)
    if not mpmath.isfinite(m):
        raise ValueError(f"{m} is not a finite number")
    sign, man, exp, _ = m._mpf_
    man = -int(man) if sign else int(man)
    return sp.Integer(man) * sp.Integer(2) ** exp if exp >= 0 else sp.Rational(man, sp.Integer(2) ** -exp)


def _exact(expr: sp.Basic, subs: Mapping) -> sp.Basic:
    """``expr`` with its decimals exact (Float -> Rational, as written) and ``subs`` made, in one simultaneous pass."""
    return expr.xreplace({**{f: exact_number(f) for f in expr.atoms(sp.Float)}, **subs})


def _num(x) -> mpmath.mpf:
    """An exact real number at the working precision (its real part: callers have checked it is real)."""
    if isinstance(x, sp.Rational):
        return mpmath.mpf(int(x.p)) / int(x.q)
    v = sp.N(x, _DPS + 10)
    return mpmath.mpf(sp.re(v)._mpf_) if not isinstance(v, sp.Float) else mpmath.mpf(v._mpf_)


def _sign(v: sp.Basic) -> int | None:
    """The sign of an exact number: -1, 0 or 1 (a rational's at once; else from its value to 60 digits, which sympy's
    evalf gets by raising its precision, and 0 where no digit shows at 240); None where it is undefined (a pole, 0/0)
    or not real (the log or root of a negative)."""
    if v.is_Rational:
        return int(sp.sign(v))
    if v.has(sp.zoo, sp.nan) or not v.is_number:
        return None
    if v in (sp.oo, -sp.oo):
        return 1 if v is sp.oo else -1
    try:
        n = v.evalf(_DPS)
        re, im = n.as_real_imag()
    except (ValueError, TypeError, ArithmeticError, RecursionError):
        return None
    if im != 0 and not (isinstance(im, sp.Float) and im._prec <= 1) and abs(im) > sp.Float(10, _DPS) ** -_DPS * max(1, abs(re)):
        return None
    if isinstance(re, sp.Float) and re._prec > 1 and re != 0:
        return 1 if re > 0 else -1
    if re.is_Rational:
        return int(sp.sign(re))
    try:  # no digit at 60 digits (evalf raised its own precision far beyond): read it at four times that
        far = v.evalf(4 * _DPS).as_real_imag()[0]
    except (ValueError, TypeError, ArithmeticError, RecursionError):
        return 0
    return 0 if not isinstance(far, sp.Float) or far._prec <= 1 or far == 0 else (1 if far > 0 else -1)


def _real_roots(p: sp.Poly) -> list[sp.Expr] | None:
    """The distinct real roots of a polynomial in X, exact: every one for rational coefficients (rationals, radicals,
    CRootOf), the formula's for degree <= 2 with other real coefficients; None where only a numeric search can say."""
    if p.is_zero or p.degree() <= 0:
        return []
    coeffs = p.all_coeffs()
    if all(c.is_Rational for c in coeffs):
        return list(dict.fromkeys(p.real_roots()))
    signs = [_sign(c) for c in coeffs]
    if any(s is None for s in signs) or signs[0] == 0 or p.degree() > 2:
        return None
    if p.degree() == 1:
        return [-coeffs[1] / coeffs[0]]
    a, b, c = coeffs
    disc = b**2 - 4 * a * c
    s = _sign(disc)
    if s is None:
        return None
    if s < 0:
        return []
    if s == 0:
        return [-b / (2 * a)]
    try:  # sympy's roots write them plainly where it factors the polynomial: sqrt(2), not the formula's nested radicals
        nice = list(sp.roots(p))
    except (NotImplementedError, ValueError, TypeError):
        nice = []
    return nice if len(nice) == 2 else [(-b - sp.sqrt(disc)) / (2 * a), (-b + sp.sqrt(disc)) / (2 * a)]


def _atom_cuts(atom: _Atom, free: str, fixed: Mapping, lo, hi) -> list[tuple[sp.Expr, bool, int | None]]:
    """Where one atom's sign may change: exact for a rational function of x (the real roots of its numerator and
    denominator, sympy's), else a numeric search (:func:`_numeric_cuts`)."""
    f = atom.f
    if not f.has(X):
        return []
    if f.is_rational_function(X):
        num, den = sp.fraction(sp.together(f))
        try:
            zeros, poles = _real_roots(sp.Poly(num, X)), _real_roots(sp.Poly(den, X))
        except (sp.PolynomialError, NotImplementedError, ValueError, TypeError):
            zeros = poles = None
        if zeros is not None and poles is not None:
            out: list[tuple[sp.Expr, bool, int | None]] = [(r, True, None) for r in poles]
            return out + [(r, True, 0) for r in zeros if not any(r == p for p in poles)]
    return _numeric_cuts(atom, free, fixed, lo, hi)


def _numeric_cuts(atom: _Atom, free: str, fixed: Mapping, lo, hi) -> list[tuple[sp.Expr, bool, int | None]]:
    """The cuts of a relation that is not a rational function of x (logs, roots, exponentials): sympy's exact roots
    (of f in x, and of log lhs = log rhs in u = ln x) where it finds them, and a scan of the sign of f on a grid in
    ln|x| over the domain (dense near |x| = 1), each change of sign or of definedness bisected to ~50 digits, a bracket
    that changes more than once rescanned finer. 0 is a cut where the domain spans it."""
    f = atom.f
    try:
        fn = sp.lambdify(X, f, modules="mpmath")
    except (KeyError, TypeError, ValueError):
        fn = None

    def value(x: mpmath.mpf):
        try:
            v = fn(x) if fn is not None else complex(sp.N(f.xreplace({X: _rat(x)}), _DPS))
            return mpmath.mpc(v)
        except (ZeroDivisionError, ValueError, OverflowError, TypeError):
            return None

    def cls(x: mpmath.mpf) -> int | None:
        v = value(x)
        if v is None or not mpmath.isfinite(v.real) or abs(v.imag) > mpmath.mpf(10) ** (15 - _DPS) * max(1, abs(v.real)):
            return None
        return 0 if v.real == 0 else (1 if v.real > 0 else -1)

    out: list[tuple[sp.Expr, bool, int | None]] = []
    span = REAL_SCAN_DECADES * mpmath.log(10)
    lo_n = None if lo is None else _num(lo)
    hi_n = None if hi is None else _num(hi)
    if (lo_n is None or lo_n < 0) and (hi_n is None or hi_n > 0):
        out.append((sp.Integer(0), True, _sign(f.xreplace({X: 0}))))
    zeros: list[mpmath.mpf] = []
    for x, sign in _exact_candidates(atom, free, fixed):
        n = _num(x)
        if (lo_n is None or n >= lo_n) and (hi_n is None or n <= hi_n):
            out.append((x, True, sign))
            if sign == 0 and n != 0:
                zeros.append(n)
    for side in (1, -1):  # x = side * exp(u)
        near = lo_n if side == 1 else hi_n  # the domain end nearer 0 on this side
        far = hi_n if side == 1 else lo_n
        if far is not None and far * side <= 0:
            continue
        u_near = mpmath.log(near * side) if near is not None and near * side > 0 else None
        u_far = mpmath.log(far * side) if far is not None else None
        skip = [mpmath.log(abs(z)) for z in zeros if z * side > 0]
        a = u_near if u_near is not None else min([-span] + [u - 2 for u in skip])
        b = u_far if u_far is not None else max([span] + [u + 2 for u in skip])
        grid = [a + (b - a) * mpmath.mpf(i) / (8 * _SCAN_POINTS) for i in range(8 * _SCAN_POINTS + 1)]
        grid = sorted(set(grid) | {mpmath.mpf(i) / 10 for i in range(-120, 121) if a < mpmath.mpf(i) / 10 < b})
        out += _scan(cls, value, side, grid, skip, 0)
    return out


def _scan(cls, value, side: int, grid: list, skip: list, depth: int) -> list[tuple[sp.Expr, bool, int | None]]:
    """Every change of class between consecutive grid points (in u = ln|x|) but across a proven root in ``skip``."""
    out: list[tuple[sp.Expr, bool, int | None]] = []
    prev: tuple | None = None
    for u in grid:
        c = cls(side * mpmath.exp(u))
        if prev is not None and prev[1] != c and not any(prev[0] <= r <= u for r in skip):
            cut, (b, cb) = _bisect(cls, value, side, prev, (u, c))
            out.append(cut)
            if cb != c and depth < 6 and u - b > 0:  # the bracket changes class again after this cut: look closer
                out += _scan(cls, value, side, [b + (u - b) * mpmath.mpf(i) / 32 for i in range(33)], skip, depth + 1)
        prev = (u, c)
    return out


def _bisect(cls, value, side: int, left: tuple, right: tuple) -> tuple[tuple[sp.Expr, bool, int | None], tuple]:
    """The first change of class from ``left`` toward ``right`` (grid points in u = ln|x|) narrowed to ~50 digits:
    (the cut, the point just past it with its class). Its sign: 0 at a root (f changes sign through values far smaller
    than a relative 1e-20 away), undefined at a pole (through far larger ones), else the class at the point."""
    (a, ca), (b, cb) = left, right
    for _ in range(10 * _DPS):
        if b - a <= mpmath.mpf(10) ** (10 - _DPS) * max(1, abs(a)):
            break
        m = (a + b) / 2
        cm = cls(side * mpmath.exp(m))
        if cm == ca:
            a = m
        else:
            b, cb = m, cm
    u = (a + b) / 2
    x = side * mpmath.exp(u)
    sign = cls(x)
    if ca is not None and cb is not None and ca * cb <= 0:
        here = value(x)
        near = [value(side * mpmath.exp(u + d)) for d in (-mpmath.mpf(10) ** -20, mpmath.mpf(10) ** -20)]
        if here is not None and all(n is not None for n in near):
            if abs(here) <= mpmath.mpf(10) ** -10 * min(abs(n) for n in near):
                sign = 0
            elif abs(here) >= mpmath.mpf(10) ** 10 * max(abs(n) for n in near):
                sign = None
    return (sp.Float(x, _DPS), False, sign), (b, cb)


def _exact_candidates(atom: _Atom, free: str, fixed: Mapping) -> list[tuple[sp.Expr, int | None]]:
    """sympy's exact real roots of f in x, of log lhs = log rhs in u = ln x (positive x), and of the arguments of its
    logs and roots and the bases of its negative powers (where f may become undefined), at the fixed values: (x, the
    sign of f there). A root written with complex radicals (a cubic's) is made plain where it is real."""
    found = [sp.exp(sol.xreplace(_subs(sol, None, fixed))) for sol in _u_solutions(atom.symbolic, free) or ()]
    found += list(_x_solutions(atom.f))
    edges = [a.args[0] for a in atom.f.atoms(sp.log)]  # where f may start or stop being defined: log 0, 1/0, sqrt 0
    edges += [p.base for p in atom.f.atoms(sp.Pow) if p.exp.is_negative or (p.exp.is_Rational and not p.exp.is_integer)]
    for e in edges:
        if e.has(X):
            found += list(_x_solutions(e))
    out: list[tuple[sp.Expr, int | None]] = []
    for x in found:
        if x.has(sp.I) or any(isinstance(p, sp.Pow) and p.base.is_negative for p in x.atoms(sp.Pow)):
            try:  # exp(-5*(-1)**(1/3) + 5*(-1)**(5/6)*sqrt(3)) is exp(-10)
                plain = sp.expand_complex(x)
                x = plain if not plain.has(sp.I) else x
            except (ValueError, TypeError, ArithmeticError, RecursionError):
                pass
        try:
            re, im = sp.N(x, _DPS).as_real_imag()
        except (ValueError, TypeError, ArithmeticError):
            continue
        if not re.is_number or (im != 0 and abs(im) > sp.Float(10, _DPS) ** (10 - _DPS) * max(1, abs(re))):
            continue
        if any(x == y for y, _ in out):
            continue
        out.append((x, _sign(atom.f.xreplace({X: x}))))
    return out


@lru_cache(maxsize=256)
def _x_solutions(f: sp.Expr) -> tuple[sp.Expr, ...]:
    """sympy's exact real roots of f (in the real X) where it finds them; () where it does not."""
    try:
        sols = sp.solve(f, X, rational=False)
    except (NotImplementedError, ValueError, TypeError, AttributeError, RecursionError):
        return ()
    if not isinstance(sols, list):
        return ()
    return tuple(s for s in sols if isinstance(s, sp.Expr) and not s.has(sp.zoo, sp.nan, sp.oo, -sp.oo, X))


def _cmp(a: _Cut, b: _Cut) -> int:
    """The order of two cuts: by value, two exact ones that look equal settled by sympy."""
    d = a.num - b.num
    if abs(d) > mpmath.mpf(10) ** (20 - _DPS) * max(abs(a.num), abs(b.num)):
        return 1 if d > 0 else -1
    if not (a.exact and b.exact):
        return 0
    s = 0 if a.x == b.x else _sign(a.x - b.x)
    return 0 if s is None else s


def _merge(cuts: list[_Cut], x: sp.Expr, exact: bool, atom: int | None, sign: int | None, domain: bool = False) -> _Cut:
    """Add a cut, or merge it into an equal one (an exact value replaces a numeric one); return the cut it is now."""
    new = _Cut(x, exact, _num(x))
    for c in cuts:
        if _cmp(c, new) == 0:
            if exact and not c.exact:
                c.x, c.exact, c.num = x, True, new.num
            break
    else:
        cuts.append(new)
        c = new
    if atom is not None and not (c.exact and not exact and atom in c.signs):  # an exact point's own sign stays
        c.signs[atom] = sign
    c.domain = c.domain or domain
    return c


def _between(a: _Cut | None, b: _Cut | None) -> sp.Rational:
    """An exact rational strictly between two cuts (None: -oo or +oo)."""
    if a is None and b is None:
        return sp.Integer(0)
    if a is None:
        assert b is not None
        return _rat(b.num - max(1, abs(b.num)))
    if b is None:
        return _rat(a.num + max(1, abs(a.num)))
    q = _rat((a.num + b.num) / 2)
    if (a.exact and _sign(q - a.x) != 1) or (b.exact and _sign(b.x - q) != 1):
        with mpmath.workdps(4 * _DPS):  # so close that the working precision does not separate them
            q = _rat((_num(a.x) + _num(b.x)) / 2)
    return q


def _tree(e: sp.Basic, atoms: list[_Atom], free: str, fixed: Mapping[str, sp.Rational]) -> object:
    """A hypothesis as nested ("and"/"or", parts), atom indices and booleans (an atom that the values decide)."""
    if isinstance(e, (sp.And, sp.Or)):
        return ("and" if isinstance(e, sp.And) else "or", [_tree(a, atoms, free, fixed) for a in e.args])
    r = e.xreplace(_subs(e, free, fixed))
    if r in (sp.true, sp.false):
        return bool(r)
    atoms.append(_Atom(type(r), r.lhs - r.rhs, e))
    return len(atoms) - 1


def _subs(e: sp.Basic, free: str | None, fixed: Mapping[str, sp.Rational]) -> dict:
    """The substitution of ``e``'s symbols, by name: the free one by X, the others by their exact values."""
    return {s: X if s.name == free else fixed[s.name] for s in e.free_symbols if s.name == free or s.name in fixed}


def _truth(t: object, atom_truth: Mapping[int, bool]) -> bool:
    if isinstance(t, bool):
        return t
    if isinstance(t, int):
        return atom_truth[t]
    kind, parts = cast("tuple[str, list[object]]", t)
    vals = [_truth(p, atom_truth) for p in parts]
    return all(vals) if kind == "and" else any(vals)


def _real_window(claim: Claim, var, numeric: list, raw_vals: dict, at_json: dict, assumed: dict, qualitative: list) -> Window:
    """The window of a real-valued variable (a step size, a signal strength, eps): a union of intervals, points
    included, each end open or closed as it is, over the variable's domain (any sign).

    Every decimal is the exact rational it was written as. Each hypothesis is cut into relations f(x) REL 0; a
    rational function of x is cut at the real roots of its numerator and denominator, exactly (sympy's: rationals,
    radicals, algebraic numbers); any other at sympy's exact roots in u = ln x and numeric roots (~50 digits) of a
    scan. Between consecutive cuts every relation keeps its sign, decided at one rational point (exactly where f is a
    rational function); at each cut its sign is known (0 at a root, undefined at a pole) or its neighbours'. Each end
    is then checked again by :func:`theory.evaluate.relation_holds` (the evaluator ``bounds`` uses): at the end (a
    rational one), and a relative 1e-10 inside and outside (less where another cut is nearer).

    Pitfalls avoided: float rounding of thresholds and domain ends, a scan that stopped at 10^-300, a lower end
    pinned at 0, ``x >= 2`` and ``x <= 2`` reported empty, and a crash on a side that is 0 (``(x-1)*(x-3) >= 0``)."""
    free = var.name
    depends = [(n, e) for n, e in numeric if any(s.name == free for s in e.free_symbols)]
    ignored = [n for n, e in numeric if (n, e) not in depends]
    with mpmath.workdps(40):
        values = _values(raw_vals)
        for n, e in numeric:
            if (n, e) not in depends and not relation_holds(e, values)[0]:
                return Window(claim.id, free, at_json, [], [], [], [], True, assumed, qualitative, ignored,
                              f"{n} fails at this point whatever {free} is", real=True)
    with mpmath.workdps(_DPS):
        core = _real_core(var, depends, raw_vals, values)
        elements, runs, checker, ever = core.elements, core.runs, core.checker, core.ever
        intervals: list[tuple[int | str, int | str | None]] = []
        exact_ivs: list[tuple[str | None, str | None]] = []
        log_ivs: list[tuple[float | None, float | None]] = []
        binding: list[dict[str, str | None]] = []
        checks: list[dict] = []
        closed: list[tuple[bool, bool]] = []
        verified = True
        for first, last in runs:
            ends: list[tuple[str | None, str | None, float | None, bool, str]] = []
            for side, k in (("low", first), ("high", last)):
                end = _end_of(elements, k, side)
                if end is None:
                    ends.append(("-oo" if side == "low" else None, "-oo" if side == "low" else None, None, False,
                                 f"domain ({var.domain_text()})"))
                    continue
                cut, closed_end = end
                ok, check, bind = checker.check(elements, first, last, cut, side, closed_end)
                verified = verified and ok
                checks.append(check)
                text = _end_text(cut)
                ends.append((text, _exact_text(cut),
                             float(mpmath.log10(cut.num)) if cut.num > 0 else None, closed_end, bind))
            intervals.append((ends[0][0] or "-oo", ends[1][0]))
            exact_ivs.append((ends[0][1], ends[1][1]))
            log_ivs.append((ends[0][2], ends[1][2]))
            closed.append((ends[0][3], ends[1][3]))
            binding.append({"low": ends[0][4], "high": ends[1][4]})
    why = None
    if not intervals:
        never = [n for n, t in ever.items() if not t]
        why = (f"{', '.join(never)} never hold(s) for {free} in {var.domain_text()}" if never
               else f"{', '.join(ever)} each hold for some {free} but never all together")
    return Window(claim.id, free, at_json, intervals, log_ivs, binding, checks, verified, assumed, qualitative, ignored,
                  why, real=True, closed=closed, exact_intervals=exact_ivs)


@dataclass
class _RealCore:
    """The exact real construction over a variable's domain: its elements (cuts and the segments between them, each
    hypothesis's truth there), the runs where everything holds, the exact checker, and per hypothesis whether it
    ever holds in the domain."""

    elements: list[dict]
    runs: list[tuple[int, int]]
    checker: _Checker
    ever: dict[str, bool]


def _real_core(var, depends: list, raw_vals: dict, values: dict) -> _RealCore:
    """Cut the domain of ``var`` (any sign, ends open or closed as they are) at every relation's exact or numeric
    roots and poles, decide every hypothesis on each piece, and find the runs where all hold (inside
    ``mpmath.workdps(_DPS)``)."""
    free = var.name
    fixed = {n: exact_number(v) for n, v in raw_vals.items()}
    lo = None if var.low is None else exact_number(var.low)
    hi = None if var.high is None else exact_number(var.high)
    atoms: list[_Atom] = []
    exact_hyps = [(n, _exact(e, {})) for n, e in depends]
    trees = [(n, _tree(e, atoms, free, fixed)) for n, e in exact_hyps]
    cuts: list[_Cut] = []
    lo_cut = None if lo is None else _merge(cuts, lo, True, None, None, domain=True)
    hi_cut = None if hi is None else _merge(cuts, hi, True, None, None, domain=True)
    for i, atom in enumerate(atoms):
        for x, exact, sign in _atom_cuts(atom, free, fixed, lo, hi):
            _merge(cuts, x, exact, i, sign)
    cuts = [c for c in cuts if (lo_cut is None or c is lo_cut or _cmp(c, lo_cut) > 0)
            and (hi_cut is None or c is hi_cut or _cmp(c, hi_cut) < 0)]
    cuts.sort(key=cmp_to_key(_cmp))
    elements = _elements(cuts, atoms, trees, var, lo_cut, hi_cut)
    ever = {n: any(e["truth"][n] for e in elements if e["in_domain"]) for n, _ in trees}
    return _RealCore(elements, _runs(elements), _Checker(exact_hyps, values, fixed, free, var, lo_cut, hi_cut), ever)


def _elements(cuts: list[_Cut], atoms: list[_Atom], trees: list, var, lo_cut, hi_cut) -> list[dict]:
    """The cuts and the open segments between them, in order, each with every hypothesis's truth there."""
    elements: list[dict] = []
    bounds = ([None] if lo_cut is None else []) + cuts + ([None] if hi_cut is None else [])
    for i, c in enumerate(bounds):
        if c is not None:
            elements.append({"cut": c})
        if i + 1 < len(bounds):
            elements.append({"seg": _between(c, bounds[i + 1]), "left": c, "right": bounds[i + 1]})
    for e in elements:
        if "seg" in e:
            q = e["seg"]
            e["atoms"] = {i: a.holds(_sign(a.f.xreplace({X: q}))) for i, a in enumerate(atoms)}
    for k, e in enumerate(elements):
        if "cut" in e:
            c = e["cut"]
            nb = elements[k + 1] if k + 1 < len(elements) else (elements[k - 1] if k > 0 else None)
            e["atoms"] = {i: (a.holds(c.signs[i]) if i in c.signs else
                              nb["atoms"][i] if nb is not None else a.holds(_sign(a.f.xreplace({X: c.x}))))
                          for i, a in enumerate(atoms)}
            e["in_domain"] = not ((c is lo_cut and var.low_open) or (c is hi_cut and var.high_open))
        else:
            e["in_domain"] = True
        e["truth"] = {n: _truth(t, e["atoms"]) for n, t in trees}
        e["holds"] = e["in_domain"] and all(e["truth"].values())
    return elements


def _runs(elements: list[dict]) -> list[tuple[int, int]]:
    """Maximal runs of consecutive elements where everything holds: (first, last) indices."""
    runs, start = [], None
    for k, e in enumerate(elements):
        if e["holds"] and start is None:
            start = k
        if not e["holds"] and start is not None:
            runs.append((start, k - 1))
            start = None
    if start is not None:
        runs.append((start, len(elements) - 1))
    return runs


def _end_of(elements: list[dict], k: int, side: str) -> tuple[_Cut, bool] | None:
    """The end of a run at element ``k``: (its cut, closed); None for -oo or +oo."""
    e = elements[k]
    if "cut" in e:
        return e["cut"], True
    c = e["left"] if side == "low" else e["right"]
    return None if c is None else (c, False)


def _end_text(c: _Cut) -> str:
    """An end as written: an integer or a terminating decimal of at most 17 significant digits exactly (``2``,
    ``0.5``, ``1e-320``), any other to 17 significant digits."""
    short = _short_decimal(c.x) if c.exact else None
    return short if short is not None else mpmath.nstr(c.num, REAL_DIGITS)


def _exact_text(c: _Cut) -> str | None:
    """An exact end as sympy writes it (``1/147``, ``sqrt(2)``, ``exp(-10)``), a short decimal as one (``1e-5000``);
    None for a numeric end or one too long to write."""
    if not c.exact:
        return None
    short = _short_decimal(c.x)
    if short is not None:
        return short
    if isinstance(c.x, sp.Rational) and max(int(c.x.p).bit_length(), int(c.x.q).bit_length()) > 3000:
        return None
    try:
        text = sp.sstr(c.x)
    except ValueError:  # an integer past Python's int-to-str limit inside
        return None
    return text if len(text) <= 2000 else None


def _short_decimal(x: sp.Expr) -> str | None:
    """A rational whose decimal ends within 17 significant digits, written so (``2``, ``0.5``, ``-3.25``, ``1e-320``);
    None for any other number."""
    if not isinstance(x, sp.Rational):
        return None
    p, q = int(x.p), int(x.q)
    twos = (q & -q).bit_length() - 1
    rest, fives = q >> twos, 0
    while rest % 5 == 0:
        rest, fives = rest // 5, fives + 1
    if rest != 1:
        return None
    n = max(twos, fives)
    mant, exp = abs(p) * 2 ** (n - twos) * 5 ** (n - fives), -n
    if mant.bit_length() > 4 * 4300:  # 10^k with huge k: strip the zeros in big steps first
        return None
    while mant and mant % 10 == 0:
        mant, exp = mant // 10, exp + 1
    if mant >= 10**REAL_DIGITS:
        return None
    d = Decimal((1 if p < 0 else 0, tuple(int(ch) for ch in str(mant)), exp))
    if exp >= 0 and d.adjusted() < REAL_DIGITS:
        return str(int(d))
    if -6 <= d.adjusted() < REAL_DIGITS:
        return format(d, "f")
    return format(d, "e").replace("e+", "e")


class _Checker:
    """Each end checked again, at exact rational points, by :func:`theory.evaluate.relation_holds` (the evaluator of
    ``bounds``), a relation counting as failed where a side is undefined or not real: at the end (a rational one), a
    relative 1e-10 inside it (or half way to a nearer cut), and outside it: a relative 1e-10 beyond a closed end, the
    end itself for an open one (the construction's verdict for an irrational end next to an interval)."""

    def __init__(self, hyps, values, fixed, free, var, lo_cut, hi_cut):
        self.hyps, self.values, self.fixed, self.free, self.var = hyps, values, fixed, free, var
        self.lo_cut, self.hi_cut = lo_cut, hi_cut
        self.domain = f"domain ({var.domain_text()})"

    def failing(self, q: sp.Rational) -> str | None:
        """The first hypothesis that fails at ``free = q`` (None if all hold)."""
        vals, exact = {**self.values, self.free: q}, {**self.fixed, self.free: q}
        return next((name for name, rel in self.hyps if not self._holds(rel, vals, exact)), None)

    def _holds(self, rel: sp.Basic, vals: dict, exact: dict) -> bool:
        return _holds_defined(rel, vals, exact)  # log 0, 1/0, sqrt of a negative: the relation does not hold there

    def check(self, elements, first, last, cut: _Cut, side: str, closed: bool) -> tuple[bool, dict, str]:
        """(verified, the check's record, the binding: what fails just outside) for one end of a run."""
        out = -1 if side == "low" else 1
        k = first if side == "low" else last
        j = k if closed else k + out  # the end's cut
        rational = cut.exact and isinstance(cut.x, sp.Rational)
        in_domain = not ((cut is self.lo_cut and self.var.low_open) or (cut is self.hi_cut and self.var.high_open))
        at_end = self.failing(cut.x) if rational and in_domain else None
        inside_ok = True
        if first != last or not closed:  # a point interval has no inside but its point
            seg = elements[j - out]
            inside_ok = self.failing(self._offset(cut, seg["right" if side == "low" else "left"], -out)) is None
        domain_end = cut is (self.lo_cut if side == "low" else self.hi_cut)
        beyond = elements[j + out] if 0 <= j + out < len(elements) else None
        if closed:
            end_ok = not rational or at_end is None
            outside = self.domain if domain_end or beyond is None else \
                self.failing(self._offset(cut, beyond["left" if side == "low" else "right"], out))
        else:
            end_ok = True
            if not in_domain:
                outside = self.domain
            elif rational:
                outside = at_end
            elif beyond is not None and beyond["holds"]:  # an irrational point missing between two intervals
                outside = next((n for n, t in elements[j]["truth"].items() if not t), None)
            else:
                outside = self.failing(self._offset(cut, None if beyond is None else beyond["left" if side == "low" else "right"], out))
        check = {"at": _end_text(cut), "side": side, "exact": cut.exact, "closed": closed,
                 "at_end": ("outside the domain" if not in_domain else "holds" if at_end is None else f"{at_end} fails")
                 if rational else "not evaluated (an irrational end)",
                 "inside": inside_ok, "outside_fails": outside}
        return bool(end_ok and inside_ok and outside is not None), check, outside or "-"

    @staticmethod
    def _offset(cut: _Cut, other: _Cut | None, direction: int) -> sp.Rational:
        """A rational a relative 1e-10 from the cut toward ``direction``, or half way to ``other`` if that is nearer."""
        step = REAL_STEP * (abs(cut.num) if cut.num != 0 else 1)
        if other is not None and other is not cut:
            step = min(step, abs(other.num - cut.num) / 2)
        base = cut.x if isinstance(cut.x, sp.Rational) else _rat(cut.num)
        return base + direction * _rat(step)
