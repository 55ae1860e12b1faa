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

Ends beyond 4300 digits (Python's int-to-str limit) are given as ``~10^x`` strings. Comparisons at
an end that is an equality point (``d >= n*k`` at d = n*k) are decided exactly
(:func:`theory.evaluate.relation_holds`). A real-valued variable (a step size, a signal strength)
gets real intervals whose ends are roots to 17 digits, open or closed by the relation.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import ClassVar, Mapping

import mpmath
import sympy as sp

from .claim import Claim
from .errors import InputError
from .evaluate import Point, make_point, parse_assignments, relation_holds
from .result import Result, new_figure

U = sp.Symbol("u", real=True)
MAX_DIGITS = 4300
_SCAN_POINTS = 48


@dataclass(frozen=True)
class Window(Result):
    """The result of :func:`applicability_window`: closed integer intervals of ``free`` where every
    hypothesis holds, each end checked one step inside and one step outside."""

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
        }

    def interval_text(self, i: int) -> str:
        """Interval ``i`` in bracket notation: ``[22, oo)`` for integers, ``(0, 0.0476...]`` for a real variable."""
        lo, hi = self.intervals[i]
        cl = self.closed[i] if self.real else (True, hi is not None)
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
    """log lhs - log rhs with the free variable x written as exp(u)."""
    x = next(s for s in atom.free_symbols if s.name == free)
    g = sp.expand_log(sp.log(atom.lhs), force=False) - sp.expand_log(sp.log(atom.rhs), force=False)
    return sp.expand_log(g.subs(x, sp.exp(U)), force=False)


@lru_cache(maxsize=1024)
def _symbolic_roots(atom: sp.Basic, free: str):
    """Every branch sympy finds for g(u) = 0, as mpmath functions of the other variables; None if unsolved."""
    g = _g_in_u(atom, free)
    try:
        # check=False keeps every branch (a spurious root only adds a harmless cut).
        sols = sp.solve(g, U, check=False, simplify=False, rational=False)
    except (NotImplementedError, ValueError, TypeError):
        return None
    if not isinstance(sols, list) or not sols:
        return None if not isinstance(sols, list) else ()
    out = []
    for s in sols:
        syms = sorted(s.free_symbols, key=lambda z: z.name)
        out.append((tuple(z.name for z in syms), sp.lambdify(syms, s, modules="mpmath")))
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
    names, gf = _g_function(atom, free)
    args = [values[n] for n in names]

    def g(u):
        v = gf(u, *args)
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
    """The first hypothesis that fails at integer ``x`` (None if all hold), at exact-enough precision."""
    digits = int(x.bit_length() * 0.30103) + 1
    with mpmath.workdps(max(30, digits + 20)):
        return _first_failing(hyps, {**_values(raw), free: mpmath.mpf(x)})


def _first_failing(hyps, vals: dict) -> str | None:
    """The name of the first hypothesis that fails at ``vals`` (None if all hold)."""
    return next((name for name, rel in hyps if not relation_holds(rel, vals)[0]), None)


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
    lo_dom = int(var.low) if var.low is not None else 1
    hi_dom = int(var.high) if var.high is not None else None
    depends = [(n, e) for n, e in numeric if any(s.name == free for s in e.free_symbols)]
    constant = [(n, e) for n, e in numeric if (n, e) not in depends]
    ignored = [n for n, _ in constant]

    with mpmath.workdps(40):
        values = _values(raw_vals)
        for n, e in constant:
            if not relation_holds(e, values)[0]:
                return Window(claim.id, free, at_json, [], [], [], [], True, assumed, qualitative, ignored,
                              f"{n} fails at this point whatever {free} is")
        real_ivs, ever = _real_intervals(depends, values, free, lo_dom)
    intervals, log_ivs, binding, checks, verified = _integer_intervals(real_ivs, depends, raw_vals, free, lo_dom, hi_dom)
    why = None
    if not intervals:
        never = [n for n, t in ever.items() if not t]
        why = (f"{', '.join(never)} never hold(s) for {free} >= {lo_dom}" if never
               else f"{', '.join(ever)} each hold for some {free} but never all together")
    return Window(claim.id, free, at_json, intervals, log_ivs, binding, checks, verified, assumed, qualitative, ignored, why)


def _real_intervals(depends: list, values: dict, free: str, lo_dom: int) -> tuple[list[tuple], dict[str, bool]]:
    """The real intervals of log ``free`` (from log ``lo_dom``) where every hypothesis that depends on it holds, cut
    at the roots of their atoms (inside ``mpmath.workdps``), and per hypothesis whether it ever holds."""
    u_lo = mpmath.log(lo_dom)
    roots: list[tuple[mpmath.mpf, sp.Basic]] = []
    for _, e in depends:
        for atom in _atoms(e):
            if any(s.name == free for s in atom.free_symbols):
                roots += [(r, atom) for r in _roots_for(atom, free, values, u_lo)]
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
        truth = {n: relation_holds(e, vals)[0] for n, e in depends}
        ever = {n: ever[n] or t for n, t in truth.items()}
        if not all(truth.values()):
            continue
        if real_ivs and real_ivs[-1][1] is not None and real_ivs[-1][1][0] == a[0]:
            real_ivs[-1] = (real_ivs[-1][0], b)
        else:
            real_ivs.append((a, b))
    return real_ivs, ever


def _integer_intervals(real_ivs: list[tuple], depends: list, raw_vals: dict, free: str, lo_dom: int,
                       hi_dom: int | None) -> tuple[list, list, list, list, bool]:
    """The real intervals as integer ends, each end checked exactly (inside, and failing one step outside):
    (intervals, log10 intervals, the binding hypothesis at each end, the checks, whether every end verified)."""
    intervals: list[tuple[int | str, int | str | None]] = []
    log_ivs: list[tuple[float, float | None]] = []
    binding: list[dict[str, str | None]] = []
    checks: list[dict] = []
    verified = True
    huge = mpmath.mpf(MAX_DIGITS) * mpmath.log(10)
    ln10 = mpmath.log(10)
    for a, b in real_ivs:
        if a[0] > huge:
            intervals.append((_approx(a[0]), None if b is None else _approx(b[0])))
            log_ivs.append((float(a[0] / ln10), None if b is None else float(b[0] / ln10)))
            binding.append({"low": None, "high": None})
            checks.append({"side": "both", "note": f"ends beyond 10^{MAX_DIGITS}: not verified at integers"})
            verified = False
            continue
        lo = lo_dom if a[1] is None else _end(a, free, raw_vals, up=True)
        hi_exact = b is not None and b[0] <= huge
        hi = _end(b, free, raw_vals, up=False) if hi_exact else None
        if hi_dom is not None:
            hi = hi_dom if hi is None else min(hi, hi_dom)
        lo, hi = _settle(depends, raw_vals, free, lo, hi, lo_dom)
        if hi is not None and lo > hi:
            continue
        fail_in_lo = _failing(depends, raw_vals, free, lo)
        fail_out_lo = _failing(depends, raw_vals, free, lo - 1) if lo > lo_dom else "domain"
        checks.append({"at": lo, "side": "low", "inside": fail_in_lo is None, "outside_fails": fail_out_lo})
        ok = fail_in_lo is None and fail_out_lo is not None
        b_lo = fail_out_lo if fail_out_lo != "domain" else f"domain ({free} >= {lo_dom})"
        b_hi = None
        if hi is not None:
            fail_in_hi = _failing(depends, raw_vals, free, hi)
            fail_out_hi = _failing(depends, raw_vals, free, hi + 1) if hi_dom is None or hi < hi_dom else "domain"
            checks.append({"at": hi, "side": "high", "inside": fail_in_hi is None, "outside_fails": fail_out_hi})
            ok = ok and fail_in_hi is None and fail_out_hi is not None
            b_hi = fail_out_hi if fail_out_hi != "domain" else f"domain ({free} <= {hi_dom})"
            high_end, high_log = hi, _log10(hi)
        elif b is not None:
            high_end, high_log = _approx(b[0]), float(b[0] / ln10)
            checks.append({"side": "high", "note": f"end beyond 10^{MAX_DIGITS}: not verified at integers"})
            ok = False
            b_hi = next((n for n, e in depends if b[1] in _atoms(e)), None)
        else:
            high_end, high_log = None, None
        verified = verified and ok
        intervals.append((lo, high_end))
        log_ivs.append((_log10(lo), high_log))
        binding.append({"low": b_lo, "high": b_hi})
    return intervals, log_ivs, binding, checks, verified


def _settle(hyps, values, free, lo, hi, lo_dom, steps=3):
    """Correct integer ends by a few exact steps where rounding or equality at a root moved them."""
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
        while s and _failing(hyps, values, free, hi + 1) is None:
            hi, s = hi + 1, s - 1
    return lo, hi


def _approx(u: mpmath.mpf) -> str:
    """An end too large to write out: ``~10^x`` from its natural log u."""
    return f"~10^{mpmath.nstr(u / mpmath.log(10), 15)}"


def _log10(x: int) -> float:
    return float(mpmath.log10(mpmath.mpf(x)))


REAL_SCAN_DECADES = 300  # a real variable unbounded at an end is scanned to 10^(+-300) there (symbolic roots reach further)
REAL_DIGITS = 17  # significant digits of a real window's ends


def _real_window(claim: Claim, var, numeric: list, raw_vals: dict, at_json: dict, assumed: dict, qualitative: list) -> Window:
    """The window of a real-valued variable (a step size, a signal strength, eps): real intervals, each end a root of
    one hypothesis (closed where that relation is non-strict) or a domain end, and each root end checked a relative
    10^-10 inside (every hypothesis holds) and outside (one fails).

    Pitfall avoided: rounding the ends to integers, or refusing the variable, for a quantity that is not a count."""
    free = var.name
    depends = [(n, e) for n, e in numeric if any(s.name == free for s in e.free_symbols)]
    ignored = [n for n, e in numeric if (n, e) not in depends]
    span = REAL_SCAN_DECADES * mpmath.log(10)
    with mpmath.workdps(40):
        values = _values(raw_vals)
        for n, e in numeric:
            if (n, e) not in depends and not relation_holds(e, values)[0]:
                return Window(claim.id, free, at_json, [], [], [], [], True, assumed, qualitative, ignored,
                              f"{n} fails at this point whatever {free} is", real=True)
        u_lo = mpmath.log(var.low) if var.low is not None and var.low > 0 else -span
        u_hi = mpmath.log(var.high) if var.high is not None else span
        roots: list[tuple[mpmath.mpf, sp.Basic]] = []
        for _, e in depends:
            for atom in _atoms(e):
                if any(s.name == free for s in atom.free_symbols):
                    roots += [(r, atom) for r in _roots_for(atom, free, values, u_lo, u_hi)]
        roots.sort(key=lambda ra: ra[0])
        cuts: list[tuple[mpmath.mpf, sp.Basic | None]] = [(u_lo, None)] + roots + [(u_hi, None)]
        segs: list[tuple] = []
        ever = {n: False for n, _ in depends}
        for a, b in zip(cuts, cuts[1:]):
            if b[0] <= a[0]:
                continue
            vals = dict(values)
            vals[free] = mpmath.exp((a[0] + b[0]) / 2)
            truth = {n: relation_holds(e, vals)[0] for n, e in depends}
            ever = {n: ever[n] or t for n, t in truth.items()}
            if all(truth.values()):
                if segs and segs[-1][1][0] == a[0]:
                    segs[-1] = (segs[-1][0], b)
                else:
                    segs.append((a, b))
        intervals: list[tuple[int | str, int | str | None]] = []
        log_ivs: list[tuple[float | None, float | None]] = []
        binding: list[dict[str, str | None]] = []
        checks: list[dict] = []
        closed: list[tuple[bool, bool]] = []
        verified = True
        for a, b in segs:
            ends: list[tuple[str | None, float | None, bool, str | None]] = []
            for end, side in ((a, "low"), (b, "high")):
                u, atom = end
                if atom is None:  # a domain end
                    ends.append(_domain_end(var, side))
                    continue
                name = next((n for n, e in depends if atom in _atoms(e)), None)
                x = mpmath.exp(u)
                step = mpmath.mpf(10) ** -10
                inner, outer = (x * (1 + step), x * (1 - step)) if side == "low" else (x * (1 - step), x * (1 + step))
                fail_in, fail_out = _failing_real(depends, values, free, inner), _failing_real(depends, values, free, outer)
                checks.append({"at": mpmath.nstr(x, REAL_DIGITS), "side": side, "inside": fail_in is None, "outside_fails": fail_out})
                verified = verified and fail_in is None and fail_out is not None
                strict = isinstance(atom, (sp.StrictGreaterThan, sp.StrictLessThan))
                ends.append((mpmath.nstr(x, REAL_DIGITS), float(u / mpmath.log(10)), not strict, fail_out or name))
            intervals.append((ends[0][0] or "0", ends[1][0]))
            log_ivs.append((ends[0][1], ends[1][1]))
            closed.append((ends[0][2], ends[1][2]))
            binding.append({"low": ends[0][3], "high": ends[1][3]})
    why = None
    if not intervals:
        never = [n for n, t in ever.items() if not t]
        why = (f"{', '.join(never)} never hold(s) for {free} in {var.domain_text()}" if never
               else f"{', '.join(ever)} each hold for some {free} but never all together")
    return Window(claim.id, free, at_json, intervals, log_ivs, binding, checks, verified, assumed, qualitative, ignored,
                  why, real=True, closed=closed)


def _domain_end(var, side: str) -> tuple[str | None, float | None, bool, str]:
    """(text, log10, closed, binding) of a real variable's domain end: 0 (open: variables are positive) below an
    unbounded or non-positive low, None (infinity) above an unbounded high."""
    dom = var.low if side == "low" else var.high
    why = f"domain ({var.domain_text()})"
    if side == "low" and (dom is None or dom <= 0):
        return "0", None, False, why
    if dom is None:
        return None, None, False, why
    return _real_text(dom), float(mpmath.log10(dom)), not (var.low_open if side == "low" else var.high_open), why


def _real_text(x) -> str:
    return mpmath.nstr(mpmath.mpf(x), REAL_DIGITS)


def _failing_real(hyps, values, free, x) -> str | None:
    """The first hypothesis that fails at the real value ``x`` (None if all hold), at the caller's precision."""
    return _first_failing(hyps, {**values, free: x})
