"""Growth and exponent algebra on top of sympy (without ``sympy.Order``).

sympy's multivariate ``Order`` is unreliable (it declared ``O(d + k)`` to contain
``O(d k)``), so ibcheck reduces every bound to a sum of *terms*

    coeff * prod_v v^a_v * prod_v log(v)^b_v * prod_v log(log(v))^c_v

and reasons about terms exactly, with rational exponents:

* :func:`exponents` gives, for each variable alone (the others fixed), the exponent of the
  leading term: ``C*sqrt(d/k)*log(d)**2`` gives d: 1/2, k: -1/2, log d: 2.
* :func:`compare` decides ``<``, ``>``, ``~`` or ``incomparable`` as the chosen variables go
  to infinity *jointly*, along every ray ``v = exp(s r_v)`` with all ``r_v > 0``. The
  polynomial part is decided by exact linear programs over the simplex of rays (vertex
  enumeration with rationals); ties fall to the log and log-log powers.
* :func:`couple` substitutes a coupling such as ``k = d**alpha``.

A variable that tends to 0 (eps, delta, gamma) is handled as ``1/u`` with ``u -> oo``, so
``log(1/eps)`` counts as a growing log factor and ``eps**2`` keeps exponent 2 in eps.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from itertools import combinations
from typing import ClassVar, Iterable, Literal, Mapping

import sympy as sp

from .errors import InputError
from .expressions import as_sympy
from .result import Result


class GrowthError(ValueError):
    """An expression outside the term algebra (e.g. super-polynomial, or 1/(a + b) without a dominant term)."""


@dataclass(frozen=True)
class Term:
    """``coeff * prod v^power[v] * prod log(v)^logs[v] * prod loglog(v)^loglogs[v]``.

    Variables here all tend to infinity (variables tending to 0 were inverted first).
    """

    coeff: sp.Expr
    power: tuple[tuple[str, sp.Expr], ...] = ()
    logs: tuple[tuple[str, sp.Expr], ...] = ()
    loglogs: tuple[tuple[str, sp.Expr], ...] = ()

    def get(self, part: str, v: str) -> sp.Expr:
        return dict(getattr(self, part)).get(v, sp.Integer(0))

    def times(self, other: "Term") -> "Term":
        return Term(self.coeff * other.coeff, _add(self.power, other.power), _add(self.logs, other.logs), _add(self.loglogs, other.loglogs))

    def raised(self, ex: sp.Expr) -> "Term":
        return Term(self.coeff**ex, _scale(self.power, ex), _scale(self.logs, ex), _scale(self.loglogs, ex))

    def key(self, v: str) -> tuple:
        return (self.get("power", v), self.get("logs", v), self.get("loglogs", v))


def _add(a, b):
    out = dict(a)
    for v, e in b:
        out[v] = sp.nsimplify(out.get(v, 0) + e)
    return tuple(sorted((v, e) for v, e in out.items() if e != 0))


def _scale(a, ex):
    return tuple(sorted((v, sp.nsimplify(e * ex)) for v, e in a if e * ex != 0))


@dataclass(frozen=True)
class Growth:
    """An expression as a sum of terms in the asymptotic variables ``variables``."""

    terms: tuple[Term, ...]
    variables: tuple[str, ...]
    towards_zero: frozenset[str] = field(default_factory=frozenset)


def _var_symbols(expr: sp.Expr, names: Iterable[str]) -> dict[str, sp.Symbol]:
    by_name = {s.name: s for s in expr.free_symbols}
    return {n: by_name[n] for n in names if n in by_name}


def growth(expr: sp.Expr, tends_to: Mapping[str, str], signed: bool = True) -> Growth:
    """Reduce ``expr`` to terms. ``tends_to`` maps each asymptotic variable to ``"oo"`` or ``"0"``.

    Symbols not in ``tends_to`` are constants (``L`` in ``log(T)**(2 - 2/L)`` is a parameter when
    it is not asymptotic). An asymptotic variable inside an exponent (``2**d``, ``d**log(d)``) is
    super-polynomial, outside the term algebra: :class:`GrowthError`, never a silent constant.
    With ``signed`` (for comparisons) a negative term must be dominated by a positive one; without it
    (per-variable exponent tables) every term counts by its magnitude.
    """
    expr = as_sympy(expr)
    names = [v for v in tends_to if tends_to[v] in ("oo", "0")]
    for p in [*expr.atoms(sp.Pow), *expr.atoms(sp.exp)]:
        inside = {s.name for s in (p.exp if isinstance(p, sp.Pow) else p.args[0]).free_symbols} & set(names)
        if inside:
            raise GrowthError(f"super-polynomial factor {p}: {', '.join(sorted(inside))} appears in an exponent")
    syms = _var_symbols(expr, names)
    zero = frozenset(v for v in syms if tends_to[v] == "0")
    if zero:
        expr = expr.subs({syms[v]: 1 / syms[v] for v in zero}, simultaneous=True)
    terms = tuple(_terms(expr, syms, signed))
    return Growth(terms, tuple(syms), zero)


def _free(e: sp.Expr, syms: Mapping[str, sp.Symbol]) -> bool:
    return not (e.free_symbols & set(syms.values()))


def _terms(e: sp.Expr, syms: Mapping[str, sp.Symbol], signed: bool = True) -> list[Term]:
    if _free(e, syms):
        return [Term(e)]
    if e.is_Symbol:
        return [Term(sp.Integer(1), power=((e.name, sp.Integer(1)),))]
    if e.is_Add:
        terms = [t for a in e.args for t in _terms(a, syms, signed)]
        return _positive_part(terms, e) if signed else terms
    if e.is_Mul:
        out = [Term(sp.Integer(1))]
        for a in e.args:
            out = [x.times(y) for x in out for y in _terms(a, syms, signed)]
        return out
    if e.is_Pow:
        base, ex = e.args
        if not _free(ex, syms):
            raise GrowthError(f"super-polynomial factor {e}: the exponent depends on a variable")
        tb = _terms(base, syms, signed)
        if len(tb) == 1:
            return [tb[0].raised(ex)]
        if ex.is_Integer and ex > 0:
            out = [Term(sp.Integer(1))]
            for _ in range(int(ex)):
                out = [x.times(y) for x in out for y in tb]
            return out
        if ex.is_positive:
            # (a + b)^p is within constant factors of a^p + b^p for positive terms.
            return [t.raised(ex) for t in tb]
        dom = dominant(tb)
        if dom is None:
            raise GrowthError(f"{e}: the reciprocal of a sum without a dominant term")
        return [dom.raised(ex)]
    if isinstance(e, sp.exp):
        raise GrowthError(f"super-polynomial factor {e}")
    if isinstance(e, sp.log):
        return _log_terms(_terms(e.args[0], syms, signed), e)
    if isinstance(e, sp.Max):
        return [t for a in e.args for t in _terms(a, syms, signed)]
    raise GrowthError(f"{e}: {type(e).__name__} is outside the growth algebra")


def _positive_part(terms: list[Term], e) -> list[Term]:
    """The terms of a sum with the negative ones dropped, each only when a positive term is
    strictly larger on every ray. Pitfall avoided: ``sqrt(d) - d`` is not of order d (it is
    negative), and ``sqrt(d**2 + 1) - d`` cancels to order 1/d; both are refused, not guessed."""
    neg = [t for t in terms if t.coeff.is_negative]
    if not neg:
        return terms
    pos = [t for t in terms if not t.coeff.is_negative]
    names = sorted({v for t in terms for part in (t.power, t.logs, t.loglogs) for v, _ in part})
    for t in neg:
        if not any(_dominates(p, t, names) and not _dominates(t, p, names) for p in pos):
            raise GrowthError(f"{e}: the negative term {t.coeff}*{_term_text(t)} is not dominated by a positive term "
                              "(the sum may be negative or cancel to a smaller order)")
    return pos


def _term_text(t: Term) -> str:
    parts = [f"{v}^{a}" for v, a in t.power] + [f"log({v})^{b}" for v, b in t.logs] + [f"loglog({v})^{c}" for v, c in t.loglogs]
    return "*".join(parts) or "1"


def _log_terms(inner: list[Term], e) -> list[Term]:
    """log of a sum of terms, up to constant factors: log(a + b) ~ log a + log b for a, b >= 1."""
    dom = dominant(inner)
    pieces = [dom] if dom is not None else inner
    out: list[Term] = []
    for t in pieces:
        grow = [(v, a) for v, a in t.power if a.is_positive]
        if t.power and not grow:
            raise GrowthError(f"{e}: the log of a decreasing term tends to -oo")
        if grow:
            # log(d/gamma) ~ log d: a factor with a negative power only shifts the log where
            # the bound is meaningful (argument > 1), so only growing factors count.
            out += [Term(a, logs=((v, sp.Integer(1)),)) for v, a in grow]
        elif t.logs:
            out += [Term(b, loglogs=((v, sp.Integer(1)),)) for v, b in t.logs if b != 0]
        elif t.loglogs:
            raise GrowthError(f"{e}: log(log(log(.))) is outside the growth algebra")
        else:
            out.append(Term(sp.log(t.coeff)))
    return out


def dominant(terms: list[Term]) -> Term | None:
    """The term that is at least every other term along every ray, if one exists."""
    names = sorted({v for t in terms for part in (t.power, t.logs, t.loglogs) for v, _ in part})
    for cand in terms:
        if all(_dominates(cand, o, names) for o in terms):
            return cand
    return None


def _dominates(a: Term, b: Term, names: list[str]) -> bool:
    diff_p = [a.get("power", v) - b.get("power", v) for v in names]
    if any(x.is_nonnegative is not True for x in diff_p):  # a symbolic gap (L > 0 in rho**-L) counts when its sign is known
        return False
    if any(x.is_positive for x in diff_p):
        # Strictly larger power in a variable that may be the only one growing: still need
        # a >= b on every ray, which holds because every diff is >= 0.
        return True
    return _lex_ge([a.get("logs", v) for v in names], [b.get("logs", v) for v in names],
                   [a.get("loglogs", v) for v in names], [b.get("loglogs", v) for v in names])


def _lex_ge(la, lb, lla, llb) -> bool:
    dl = [x - y for x, y in zip(la, lb)]
    if any(x.is_negative for x in dl):
        return False
    if any(x.is_positive for x in dl):
        return True
    return all((x - y) >= 0 for x, y in zip(lla, llb))


# ---------------------------------------------------------------------------------------------
# Exponents of one expression, variable by variable.


@dataclass(frozen=True)
class Exponents:
    """Per-variable leading exponents, as the variable alone goes to its limit."""

    power: dict[str, sp.Expr]
    log: dict[str, sp.Expr]
    loglog: dict[str, sp.Expr]


def exponents(expr: sp.Expr, tends_to: Mapping[str, str]) -> Exponents:
    """Leading exponent of ``expr`` in each variable of ``tends_to``, the others held fixed.

    For a variable tending to 0 the power is reported in the variable itself (``eps**2``
    gives 2) and the log power counts ``log(1/eps)``. Variables absent from ``expr``, or held
    fixed because they appear in an exponent, get 0.
    """
    g = growth(expr, tends_to, signed=False)
    power, logp, loglogp = {}, {}, {}
    for v in tends_to:
        if v not in g.variables or not g.terms:
            power[v] = logp[v] = loglogp[v] = sp.Integer(0)
            continue
        best = _lex_max([t.key(v) for t in g.terms])
        sign = -1 if v in g.towards_zero else 1
        power[v] = sp.nsimplify(sign * best[0])
        logp[v], loglogp[v] = best[1], best[2]
    return Exponents(power, logp, loglogp)


def _lex_max(keys: list[tuple]) -> tuple:
    best = keys[0]
    for key in keys[1:]:
        for x, y in zip(key, best):
            diff = sp.simplify(x - y)
            if diff.is_positive:
                best = key
                break
            if diff.is_negative:
                break
            if diff != 0:
                raise InputError(f"exponent {x} is symbolic: give the parameters it depends on a value (--at)")
    return best


# ---------------------------------------------------------------------------------------------
# Growth relation of two bounds as variables go to infinity jointly.


Relation = Literal["<", ">", "~", "incomparable"]


@dataclass(frozen=True)
class GrowthRelation(Result):
    """How ``a`` compares with ``b`` as the variables of ``over`` tend to their limits jointly.

    ``relation`` is one of ``<`` (a = o(b)), ``>``, ``~`` (a = Theta(b)), ``incomparable``;
    ``reason`` says why. ``a`` and ``b`` are filled in by :func:`ibcheck.growth`."""

    name: ClassVar[str] = "growth"
    relation: Relation
    reason: str
    over: tuple[str, ...]
    a: str = ""
    b: str = ""

    def as_json(self) -> dict:
        return {"a": self.a, "b": self.b, "relation": self.relation, "reason": self.reason, "over": list(self.over)}

    def table(self) -> list[dict]:
        return [self.as_json()]

    def heading(self) -> str:
        return f"{self.a}  {self.relation}  {self.b}"


def couple(expr: sp.Expr, coupling: Mapping[str, sp.Expr]) -> sp.Expr:
    """Substitute a coupling such as ``{"k": d**alpha}`` into ``expr``."""
    by_name = {s.name: s for s in as_sympy(expr).free_symbols}
    return as_sympy(expr).subs({by_name[v]: as_sympy(e) for v, e in coupling.items() if v in by_name}, simultaneous=True)


def compare(a: sp.Expr, b: sp.Expr, tends_to: Mapping[str, str], coupling: Mapping[str, sp.Expr] | None = None) -> GrowthRelation:
    """Compare ``a`` and ``b`` as the variables of ``tends_to`` go to their limits jointly.

    ``<`` means a = o(b) along every ray; ``~`` means a = Theta(b) along every ray (up to
    the constants); ``incomparable`` gives two rays that disagree.
    """
    if coupling:
        a, b = couple(a, coupling), couple(b, coupling)
        tends_to = {v: w for v, w in tends_to.items() if v not in coupling}
    try:
        ga, gb = growth(a, tends_to), growth(b, tends_to)
    except GrowthError as err:
        return _compare_by_limit(a, b, tends_to, err)
    over = tuple(sorted(set(ga.variables) | set(gb.variables)))
    if not over:
        return GrowthRelation("~", "both are constants", over)
    A = [_vec(t, over) for t in ga.terms]
    B = [_vec(t, over) for t in gb.terms]
    P, rP = _sup_diff([x[0] for x in A], [y[0] for y in B])
    Q, rQ = _sup_diff([y[0] for y in B], [x[0] for x in A])
    if P is None or Q is None or rP is None or rQ is None:  # the simplex over >= 1 variable always has a vertex
        raise GrowthError("no vertex of the simplex of directions: nothing to compare")
    p = len(over)
    desc = lambda r: _ray_text(r, over, ga.towards_zero | gb.towards_zero)  # noqa: E731
    if P < 0:
        return GrowthRelation("<", f"a has a smaller polynomial order on every ray (exponent gap {-P})", over)
    if Q < 0:
        return GrowthRelation(">", f"a has a larger polynomial order on every ray (exponent gap {-Q})", over)
    if P > 0 and Q > 0:
        r1, r2 = _interior(rP, p, lambda r: _poly_gap(A, B, r) > 0), _interior(rQ, p, lambda r: _poly_gap(A, B, r) < 0)
        return GrowthRelation("incomparable", f"a > b along {desc(r1)}, a < b along {desc(r2)}", over)
    # Ties in the polynomial order somewhere: the log and log-log powers decide there.
    samples = _samples(p, [rP, rQ])
    signs = {_lex_sign(A, B, r) for r in samples}
    poly_tie = any(_poly_gap(A, B, r) == 0 for r in samples)
    how = "the log powers decide where the polynomial orders tie" if poly_tie else (
        "the polynomial orders tie only on the boundary, where a variable stays fixed")
    if signs == {-1}:
        return GrowthRelation("<", f"a < b on every ray with all of {', '.join(over)} growing; {how}", over)
    if signs == {1}:
        return GrowthRelation(">", f"a > b on every ray with all of {', '.join(over)} growing; {how}", over)
    if signs == {0}:
        return GrowthRelation("~", "same polynomial and log order on every ray", over)
    if signs >= {1, -1}:
        r1 = next(r for r in samples if _lex_sign(A, B, r) > 0)
        r2 = next(r for r in samples if _lex_sign(A, B, r) < 0)
        return GrowthRelation("incomparable", f"a > b along {desc(r1)}, a < b along {desc(r2)}", over)
    r0 = next(r for r in samples if _lex_sign(A, B, r) == 0)
    return GrowthRelation("incomparable", f"neither o nor Theta: same order along {desc(r0)}, strictly ordered elsewhere", over)


def _compare_by_limit(a: sp.Expr, b: sp.Expr, tends_to: Mapping[str, str], why: GrowthError) -> GrowthRelation:
    """Outside the term algebra (``2**d``, ``d**log(d)``, a sum that may cancel), one asymptotic
    variable is decided exactly by the limit of ``a/b`` (sympy's Gruntz algorithm, complete for
    exp-log functions of one variable); several variables are refused with the reason, never guessed.
    Pitfall avoided: treating a variable in an exponent as a constant answered ``2**d < d**100``."""
    a, b = as_sympy(a), as_sympy(b)
    present = sorted(v for v in tends_to if tends_to[v] in ("oo", "0") and any(s.name == v for s in (a.free_symbols | b.free_symbols)))
    if len(present) != 1:
        raise GrowthError(f"{why}; with {len(present)} asymptotic variables ({', '.join(present)}) this is outside what ibcheck "
                          "decides: couple them to one (e.g. --coupling k=d**(1/2))")
    v = present[0]
    x = next(s for s in (a.free_symbols | b.free_symbols) if s.name == v)
    u = sp.Dummy("u", positive=True)
    to = {x: 1 / u} if tends_to[v] == "0" else {x: u}
    fa, fb = a.subs(to), b.subs(to)
    if sp.count_ops(fa) + sp.count_ops(fb) > 200:
        raise GrowthError(f"{why}; the formulas are too large for an exact limit")
    try:
        sa_, sb_ = (sp.limit(sp.sign(f), u, sp.oo) for f in (fa, fb))
        ratio = sp.limit(fa / fb, u, sp.oo)
    except (NotImplementedError, ValueError, TypeError, RecursionError) as err:
        raise GrowthError(f"{why}; the exact limit failed ({type(err).__name__})") from None
    if sa_ != 1 or sb_ != 1:
        bad = a if sa_ != 1 else b
        raise GrowthError(f"{bad} is not eventually positive as {v} -> {'0' if tends_to[v] == '0' else 'oo'}: growth compares positive bounds")
    over, lim = (v,), "0" if tends_to[v] == "0" else "oo"
    if ratio == 0:
        return GrowthRelation("<", f"a/b -> 0 as {v} -> {lim} (exact limit; {why})", over)
    if ratio == sp.oo:
        return GrowthRelation(">", f"a/b -> oo as {v} -> {lim} (exact limit; {why})", over)
    if ratio.is_positive and ratio.is_finite:
        return GrowthRelation("~", f"a/b -> {ratio} as {v} -> {lim} (exact limit)", over)
    raise GrowthError(f"{why}; a/b has no limit ({ratio})")


def _vec(t: Term, over: tuple[str, ...]):
    vals = []
    for part in ("power", "logs", "loglogs"):
        row = []
        for v in over:
            x = t.get(part, v)
            if not x.is_Rational:
                raise InputError(f"exponent {x} is symbolic: give the parameters it depends on a value (--at)")
            row.append(Fraction(int(x.p), int(x.q)))
        vals.append(tuple(row))
    return tuple(vals)


def _dot(a, r):
    return sum(x * y for x, y in zip(a, r))


def _poly_gap(A, B, r) -> Fraction:
    return max(_dot(x[0], r) for x in A) - max(_dot(y[0], r) for y in B)


def _lex_sign(A, B, r) -> int:
    """Sign of log a - log b along the ray r (all r_v > 0), lexicographic in (power, log, loglog)."""
    def key(x):
        return (_dot(x[0], r), sum(x[1]), sum(x[2]))
    ka, kb = max(key(x) for x in A), max(key(y) for y in B)
    return (ka > kb) - (ka < kb)


def _sup_diff(A: list[tuple], B: list[tuple]) -> tuple[Fraction | None, tuple | None]:
    """max over the simplex of max_i a_i.r - max_j b_j.r, exactly, with a maximizer (None, None: no vertex)."""
    best: Fraction | None = None
    arg: tuple | None = None
    for a in A:
        val, r = _maxmin([tuple(x - y for x, y in zip(a, b)) for b in B], len(a))
        if val is not None and (best is None or val > best):
            best, arg = val, r
    return best, arg


def _maxmin(C: list[tuple], p: int) -> tuple[Fraction | None, tuple | None]:
    """max_{r in simplex} min_j c_j . r by enumerating the vertices of the arrangement (None, None: no vertex)."""
    hyper = [tuple(Fraction(int(i == v)) for i in range(p)) for v in range(p)]
    hyper += [tuple(x - y for x, y in zip(c1, c2)) for c1, c2 in combinations(C, 2)]
    ones = tuple(Fraction(1) for _ in range(p))
    best: Fraction | None = None
    arg: tuple | None = None
    for combo in combinations(hyper, p - 1):
        r = _solve([*combo, ones], [Fraction(0)] * (p - 1) + [Fraction(1)])
        if r is None or any(x < 0 for x in r):
            continue
        val = min(_dot(c, r) for c in C)
        if best is None or val > best:
            best, arg = val, r
    return best, arg


def _solve(M: list[tuple], rhs: list[Fraction]):
    """Exact Gaussian elimination; None when singular."""
    n = len(M)
    A = [list(row) + [rhs[i]] for i, row in enumerate(M)]
    for col in range(n):
        piv = next((i for i in range(col, n) if A[i][col] != 0), None)
        if piv is None:
            return None
        A[col], A[piv] = A[piv], A[col]
        for i in range(n):
            if i != col and A[i][col] != 0:
                f = A[i][col] / A[col][col]
                A[i] = [x - f * y for x, y in zip(A[i], A[col])]
    return tuple(A[i][n] / A[i][i] for i in range(n))


def _interior(r, p, ok, steps=12):
    """Move a maximizer into the open simplex while ``ok`` keeps holding."""
    cen = tuple(Fraction(1, p) for _ in range(p))
    tau = Fraction(1, 4)
    for _ in range(steps):
        x = tuple((1 - tau) * a + tau * c for a, c in zip(r, cen))
        if ok(x):
            return x
        tau /= 4
    return r


def _samples(p: int, extra: list) -> list[tuple]:
    """Interior rays: the centroid, points near each vertex and edge midpoint, and near the extremizers."""
    cen = tuple(Fraction(1, p) for _ in range(p))
    pts = [cen]
    base = [tuple(Fraction(int(i == v)) for i in range(p)) for v in range(p)]
    base += [tuple((x + y) / 2 for x, y in zip(u, w)) for u, w in combinations(base[:p], 2)]
    base += [r for r in extra if r is not None]
    for r in base:
        for tau in (Fraction(1, 10), Fraction(1, 1000)):
            pts.append(tuple((1 - tau) * a + tau * c for a, c in zip(r, cen)))
    return pts


def _ray_text(r, over, zero) -> str:
    """A ray as a coupling relative to the first variable: ``k = d^(3/2)``."""
    if len(over) == 1:
        return f"{over[0]} -> {'0' if over[0] in zero else 'oo'}"
    ref = over[0]
    parts = []
    for v, x in zip(over[1:], r[1:]):
        ex = Fraction(x) / Fraction(r[0])
        shown = f"{ref}^({ex})" if ex.denominator != 1 else f"{ref}^{ex}"
        parts.append(f"{'1/' if v in zero else ''}{v} = {shown}")
    return ", ".join(parts)
