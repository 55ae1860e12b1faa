"""The claim data model: a claim is hypotheses (sympy relations) and bounds on named quantities.

Everything here is declarative: a claim module builds :class:`~ibcheck.theory.claim.Claim` objects
and the rest of ibcheck (evaluation, windows, growth, graph, experiments) reads them as their
:class:`ClaimStatement`, the data without the display. Formulas are sympy expressions over the
shared symbols of :mod:`theory.variables`.

Pitfall avoided: a data class that displays itself through the modules that read it imports them
and is imported by them (a cycle); the display is :class:`~ibcheck.theory.claim.Claim`'s, a subclass.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field, replace
from types import FrameType
from typing import Any, Callable, Literal

import sympy as sp

from .argtypes import shown_value
from .errors import InputError
from .expressions import _KINDS, as_sympy, parse_formula, parse_latex_bound, parse_latex_formula, parse_over_reals
from .outdir import check_claim_id
from .variables import Variable, check_name, shared_variable, symbol

ClaimStatus = Literal["exact", "order", "ambiguous", "unverified"]
STATUSES: tuple[str, ...] = ClaimStatus.__args__  # type: ignore[attr-defined]
KINDS = ("definition", "assumption", "lemma", "theorem", "corollary", "conjecture", "experiment", "remark")
# O, Omega, Theta: asymptotic, up to a constant; o, omega: strictly smaller/larger order;
# "<=", ">=": exact inequalities; "->": the quantity tends to expr (a limit statement).
BOUND_KINDS = ("O", "Omega", "Theta", "o", "omega", "<=", ">=", "->")


_TEX_NAMES = {
    "eps": r"\varepsilon", "delta": r"\delta", "gamma": r"\gamma", "sigma": r"\sigma", "lam": r"\lambda",
    "tau": r"\tau", "beta": r"\beta", "kappa": r"\kappa", "rho": r"\rho", "Lsum": r"\mathcal{L}",
    "Lsum_t0": r"\mathcal{L}(t_0)", "ell_0": r"\ell(0)", "q_min": r"q_{\min}", "cp": "c'", "ks": "|J_s|",
    "max_ip": r"\max_{i\neq j}|\langle x_i, x_j\rangle|", "max_mean_ip": r"\max_{i\neq j}|\langle \mu_i, \mu_j\rangle|",
    "normalized_margin": r"\bar\gamma",
}


def tex(expr) -> str:
    """LaTeX of a formula with the sources' notation (eps as \\varepsilon, ln for log)."""
    names = {s: _TEX_NAMES[s.name] for s in as_sympy(expr).free_symbols if s.name in _TEX_NAMES}
    return sp.latex(expr, symbol_names=names, ln_notation=True)


def _wrapped(latex: str) -> bool:
    """``\\Omega(...)``, ``O(...)``: the bound states its kind itself."""
    s = latex.strip()
    return any(s.startswith(name + opening) for name, _ in _KINDS for opening in ("(", "\\left(", "\\big("))


@dataclass(frozen=True)
class Hypothesis:
    """A named hypothesis (H1, H2, ...).

    ``expr`` is a sympy relation (or an ``And``/``Or`` of relations); ``None`` marks a
    qualitative hypothesis ("the model is L-homogeneous") that ibcheck cannot evaluate and
    reports as *assumed*.
    """

    name: str
    expr: sp.Basic | None
    text: str = ""
    unverified: bool = False

    def __post_init__(self):
        """Checked when built, as a claim checks the hypotheses it is given: a name, a relation (a string is parsed as in
        a claim's ``hypotheses`` dict) or None with the text it stands for. Pitfall avoided: ``Hypothesis(None, None)``
        was built, and failed far away (a table row named None, a hypothesis that states nothing)."""
        n = self.name
        if not isinstance(n, str) or not n.strip() or len(n) > 100 or not n.isprintable():
            raise InputError(f"Hypothesis(name={n!r}) is not accepted: the name is a non-empty printable string of at most 100 "
                             "characters (e.g. 'H1')")
        for field_, ok in (("text", isinstance(self.text, str)), ("unverified", isinstance(self.unverified, bool))):
            if not ok:
                raise InputError(f"Hypothesis {n!r}: {field_}={getattr(self, field_)!r} is not accepted: "
                                 + ("the text is a string" if field_ == "text" else "unverified must be True or False"))
        if self.expr is None:
            if not self.text.strip():
                raise InputError(f"Hypothesis {n!r} has neither a relation (expr) nor a text: a qualitative hypothesis (expr=None) "
                                 "is the text it states, e.g. Hypothesis('H1', None, 'the data are linearly separable')")
            return
        if isinstance(self.expr, str) and not self.text:
            object.__setattr__(self, "text", self.expr)  # frozen: set once, here, as the claim's hypotheses dict does
        object.__setattr__(self, "expr", _relation(self.expr, f"Hypothesis {n!r}"))

    @property
    def qualitative(self) -> bool:
        return self.expr is None


def _relation(h: object, where: str) -> sp.Basic:
    """A hypothesis's relation: a sympy relation (or an And/Or of relations), or a string parsed to one (sympy syntax or
    LaTeX); one that sympy decides for every positive value, and an equation, are refused."""
    expr = parse_formula(h, where) if isinstance(h, str) else h
    if expr is sp.true or expr is sp.false:  # sympy decided it: d >= 2*d is False for every positive d
        raise InputError(f"{where}: {h!r} is {'always true' if expr is sp.true else 'never true'} for positive values of its "
                         "variables, so it cannot restrict where the claim applies")
    if not isinstance(expr, (sp.Rel, sp.And, sp.Or)) or isinstance(expr, (sp.Eq, sp.Ne)):
        raise InputError(f"{where}: {h!r} is not a relation (write e.g. n >= k*log(d)**2, or n \\geq k \\ln^2 d)")
    return expr


@dataclass(frozen=True)
class Bound:
    """A conclusion: ``quantity  kind  expr``, e.g. ``flip_radius_median O(sqrt(d/k))``.

    ``reading`` names the reading of an ambiguous claim this bound belongs to (None when
    there is only one). ``probability`` is the stated confidence, e.g. ``1 - delta``.
    """

    quantity: str
    kind: str = ""
    expr: Any = None  # a sympy formula; a string (sympy syntax or LaTeX) until its claim parses it
    reading: str | None = None
    note: str = ""
    probability: sp.Basic | None = None
    unverified: bool = False
    latex: str | None = None  # the bound as written in a paper, e.g. r"\Omega(\sqrt{d}\,\log^2 d)"

    def __post_init__(self):
        """The quantity is checked when the bound is built: it names a measured column, a table's header and a figure."""
        q = self.quantity
        if not isinstance(q, str) or not q.strip() or len(q) > 100 or not q.isprintable():
            raise InputError(f"Bound(quantity={q!r}) is not accepted: the quantity is the name of what is measured, a "
                             "non-empty printable string of at most 100 characters (e.g. 'flip_radius')")

    def parsed(self, where: str) -> "Bound":
        """This bound with its formula parsed (a string in sympy syntax or LaTeX, or ``latex``),
        and its kind checked; errors name ``where`` (the claim and the field)."""
        kind, expr = self.kind, self.expr
        for name in ("quantity", "kind"):
            if not isinstance(getattr(self, name), str):
                raise InputError(f"{where}: {name}={getattr(self, name)!r} is not a string")
        if self.latex is not None and not isinstance(self.latex, str):
            raise InputError(f"{where}: latex={self.latex!r} is not a string")
        if self.reading is not None and not isinstance(self.reading, str):
            raise InputError(f"{where}: reading={self.reading!r} is not a string")
        if self.latex is not None and kind and not _wrapped(self.latex):
            expr = parse_latex_formula(self.latex, where)  # Bound("r", "O", latex=r"\sqrt{d/k}\,\log d"): the kind is given
        elif self.latex is not None:
            kind_tex, expr = parse_latex_bound(self.latex, where)
            kind = kind or kind_tex
        elif isinstance(expr, str):
            expr = parse_formula(expr, where)
        if expr is None:
            raise InputError(f"{where}: a bound needs a formula (expr=..., or latex=r'\\Omega(...)')")
        if kind not in BOUND_KINDS:
            raise InputError(f"{where}: kind={kind!r} is not one of {', '.join(BOUND_KINDS)}")
        if isinstance(expr, (sp.Rel, sp.And, sp.Or)):
            raise InputError(f"{where}: a bound is a formula, not a relation ({expr}); the relation goes in kind")
        expr = as_sympy(expr, where)
        if kind != "->":
            _check_bound_formula(expr, where, asymptotic=kind in ("O", "Omega", "Theta", "o", "omega"))
        return replace(self, kind=kind, expr=expr)

    def as_latex(self) -> str:
        e = tex(self.expr)
        q = r"\mathrm{" + self.quantity.replace("_", r"\_") + "}"
        if self.kind in ("O", "Theta", "Omega", "o", "omega"):
            op = {"O": "O", "Theta": r"\Theta", "Omega": r"\Omega", "o": "o", "omega": r"\omega"}[self.kind]
            return rf"{q} = {op}\left({e}\right)"
        op = {"<=": r"\le", ">=": r"\ge", "->": r"\to"}[self.kind]
        return rf"{q} {op} {e}"


def _check_bound_formula(expr: sp.Basic, where: str, asymptotic: bool) -> None:
    """A bound's formula is a finite real function of the (positive) variables, and positive for an asymptotic
    bound (O, Omega, Theta, o, omega): ``oo`` and ``I*sqrt(d)`` are refused everywhere, ``-d`` and ``0`` in an
    asymptotic bound (an exact inequality may compare with 0, a limit may tend to it). Pitfall avoided: the exponent
    algebra reads ``-d`` as ``d^1``, so a claim with a negative or complex bound was fitted as if it were another."""
    if expr.has(sp.oo, -sp.oo, sp.zoo, sp.nan):
        raise InputError(f"{where}: the bound {expr} is not finite: a bound is a positive function of the variables")
    if expr.has(sp.I) or expr.is_extended_real is False:
        raise InputError(f"{where}: the bound {expr} is not real: a bound is a positive function of the variables")
    if asymptotic and (expr.is_zero or expr.is_positive is False):
        raise InputError(f"{where}: the bound {expr} is not positive: an asymptotic bound is a positive function of "
                         "the variables (a limit to 0 is kind '->')")


# While a claims file runs (theory.registry.load_claims), every Claim it builds lands here, bound to a
# name or not: a claim written as a bare expression, or built in a loop, is registered all the same.
_BUILT: list | None = None
# The registry's register function, set by theory.registry when it is imported (it imports this module, so this
# module cannot import it): a claim built at a user module's top level is registered through it.
REGISTER: Callable[[Any, str], object] | None = None


def _caller_frame():
    """The first frame outside this module and the dataclass's generated ``__init__``: the code that built the claim."""
    f: FrameType | None = sys._getframe(1)
    while f is not None and (f.f_code.co_filename == __file__ or f.f_code.co_filename.startswith("<")
                             and f.f_code.co_name == "__init__"):
        f = f.f_back
    return f


def _user_module_building() -> str | None:
    """The module's name when the claim is built by the top-level code of a module that is not ibcheck's own (``import my_claims``,
    a notebook cell, a script), else None: such a claim is registered at once, as the README says of a claims file.

    Pitfall avoided: ``import my_claims`` registered the file's experiments (their decorator does) but not its claims,
    so every later call said "unknown claim id". A claim built inside a function (a test, a helper) is not registered
    until :func:`~ibcheck.theory.registry.register` is called."""
    f = _caller_frame()
    while f is not None and f.f_code.co_name in ("<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>"):
        f = f.f_back  # a comprehension at the top level: its own frame in Python < 3.12
    if f is None or f.f_code.co_name != "<module>":
        return None
    name = str(f.f_globals.get("__name__", ""))
    return None if name.startswith("ibcheck.") else name


@dataclass(frozen=True)
class ClaimStatement:
    """One result of THEORY.md as data, keyed by its id (e.g. ``FVBS23.thm.4_2``): what every reader
    of a claim takes (the display is :class:`~ibcheck.theory.claim.Claim`'s)."""

    id: str
    title: str = ""
    paper: str = ""
    seeds: tuple[str, ...] = ()
    status: ClaimStatus = "order"
    kind: str = "theorem"
    variables: tuple[Variable, ...] = ()
    constants: tuple[str, ...] = ()
    hypotheses: tuple[Hypothesis, ...] = ()
    bounds: tuple[Bound, ...] = ()
    definitions: tuple[tuple[str, sp.Basic], ...] = ()
    uses: tuple[str, ...] = ()
    generalizes: tuple[str, ...] = ()
    compared_with: tuple[str, ...] = ()
    resolves: tuple[str, ...] = ()
    readings: tuple[str, ...] = ()
    note: str = ""
    reference: tuple[tuple[str, str], ...] = ()
    unverified_parts: tuple[str, ...] = field(default=())

    def __post_init__(self):
        check_claim_id(self.id)
        _normalize(self)
        if self.status not in STATUSES:
            raise InputError(f"claim {self.id}: status={self.status!r} is not one of {', '.join(STATUSES)}")
        if self.kind not in KINDS:
            raise InputError(f"claim {self.id}: kind={self.kind!r} is not one of {', '.join(KINDS)}")
        allowed = {v.name for v in self.variables} | set(self.constants)
        parts = [(f"hypotheses[{h.name!r}]", h.expr) for h in self.hypotheses] + [(f"bounds[{i}]", b.expr) for i, b in enumerate(self.bounds)]
        for where, expr in parts:
            extra = {s.name for s in expr.free_symbols} - allowed if expr is not None else set()
            if extra:
                raise InputError(f"claim {self.id}: {where} uses undeclared symbols {', '.join(sorted(extra))} "
                                 f"(declare them in variables or constants; declared: {', '.join(sorted(allowed)) or 'none'})")
        if self.status == "ambiguous" and len(self.readings) < 2:
            raise InputError(f"claim {self.id}: an ambiguous claim carries every reading (>= 2)")
        for b in self.bounds:
            if b.reading is not None and b.reading not in self.readings:
                raise InputError(f"claim {self.id}: bound reading {b.reading!r} not declared in readings")
        if _BUILT is not None:
            _BUILT.append(self)
        elif REGISTER is not None and (module := _user_module_building()) is not None:
            REGISTER(self, f"module {module}")

    @property
    def unverified(self) -> bool:
        """True when any part is unverified; every output shows the flag."""
        return (
            self.status == "unverified"
            or bool(self.unverified_parts)
            or any(h.unverified for h in self.hypotheses)
            or any(b.unverified for b in self.bounds)
        )

    @property
    def flags(self) -> list[str]:
        out = []
        if self.unverified:
            out.append("unverified")
        if self.status == "order":  # "constants unknown" only where the claim has constants to be unknown
            out.append("constants unknown (order only)" if self.constants else "order only (up to constant factors)")
        if self.status == "ambiguous":
            out.append("ambiguous: readings " + ", ".join(self.readings))
        return out

    def variable(self, name: str) -> Variable:
        for v in self.variables:
            if v.name == name:
                return v
        raise KeyError(name)

    @property
    def variable_names(self) -> list[str]:
        return [v.name for v in self.variables]

    @property
    def source(self) -> str:
        return f"{self.paper}; source texts: {', '.join(self.seeds) or 'none (the paper only)'}"


def _admits_nonpositive(v: Variable) -> bool:
    """Does the variable's domain hold a value <= 0 (no low end, a negative one, or a closed 0)?"""
    return v.low is None or v.low < 0 or (v.low == 0 and not v.low_open)


def _same_over_reals(text: str, signed: dict, where: str, prose: bool = False) -> None:
    """A hypothesis over a variable whose domain admits values <= 0 must say the same over the reals as over the positive
    values its formula is parsed for (the shared symbols are positive): refused otherwise, in one line.

    Pitfall avoided: ``Abs(x) <= 1`` on the domain [-5, 5] was parsed as ``x <= 1`` (sympy simplifies Abs of a positive
    symbol) and its window was [-5, 1], not [-1, 1]; ``x + 1 > 0`` was refused as "always true". ``prose``: the text of a
    Hypothesis object, which may be words, not the formula (then nothing is checked)."""
    names = frozenset(n for n in signed if re.search(rf"\b{re.escape(n)}\b", text))
    if not names:
        return
    try:
        real = parse_over_reals(text, names, where)
    except InputError:
        if prose:  # a Hypothesis's text may be words beside its relation ('at some t the loss is below ell(0)'): not a formula
            return
        raise
    try:
        positive = parse_formula(text, where)
    except InputError:
        positive = None
    signed_symbols = {symbol(n): sp.Symbol(n, real=True) for n in names}  # (the other way, sympy simplifies Abs(x) again)
    if positive is None or positive.xreplace(signed_symbols) != real:
        shown = ", ".join(f"{n} in {signed[n].domain_text().removeprefix('a number in ').removeprefix('an integer in ')}"
                          for n in sorted(names))
        raise InputError(f"{where}: {text!r} reads differently for positive values than over the domain ({shown}): formulas "
                         f"are simplified for positive variables; restrict the domain to positive values, or write the "
                         f"hypothesis so it holds as written for every value of the domain (without Abs, sqrt(x**2), ...)")


def _named_pairs(value, second) -> tuple[tuple, ...] | None:
    """``value`` (a dict, or a list or tuple of 2-tuples) as (name, item) pairs with string names and every item passing
    ``second``; None where it is neither (the caller's one-line refusal names the field)."""
    pairs = list(value.items()) if isinstance(value, dict) else value
    if isinstance(pairs, (list, tuple)) and all(isinstance(p, (list, tuple)) and len(p) == 2 and isinstance(p[0], str) and second(p[1])
                                                for p in pairs):
        return tuple((a, b) for a, b in pairs)
    return None


def _reference(claim: ClaimStatement) -> tuple[tuple[str, str], ...]:
    """The source's reference values as (name, text) pairs, given as a dict or as pairs. Pitfall avoided: a string was
    accepted when built and crashed ``ibcheck bounds`` later (``dict("...")``), an internal error instead of one line."""
    pairs = _named_pairs(claim.reference, lambda x: isinstance(x, str))
    if pairs is None:
        raise InputError(f"claim {claim.id}: reference={shown_value(claim.reference)} is not a mapping of names to text, such as "
                         "{'config': 'd=3072, k=10'} or (('config', 'd=3072, k=10'),)")
    return pairs


def _definitions(claim: ClaimStatement) -> tuple[tuple[str, sp.Basic], ...]:
    """The claim's named definitions as (name, formula) pairs, given as a dict or as pairs; each formula text parsed as data
    (sympy syntax or LaTeX, :func:`~.expressions.as_sympy`). Pitfall avoided: ``definitions={"q": "d/k"}`` was accepted
    when built and crashed ``ibcheck bounds`` later ("not enough values to unpack"), an internal error instead of one line."""
    pairs = _named_pairs(claim.definitions, lambda x: True)
    if pairs is None:
        raise InputError(f"claim {claim.id}: definitions={shown_value(claim.definitions)} is not a mapping of names to formulas, "
                         "such as {'mean_norm': 'sqrt(d)'} or (('mean_norm', 'sqrt(d)'),)")
    return tuple((name, as_sympy(value, f"claim {claim.id}: definitions[{shown_value(name)}]")) for name, value in pairs)


def _normalize(claim: ClaimStatement) -> None:
    """A user's claim as the built-ins have it: variable names to the shared :class:`Variable`
    (or a positive real one), hypotheses given as ``{"H1": "n >= k*log(d)**2"}`` (sympy syntax or
    LaTeX) to :class:`Hypothesis`, bound formulas parsed, lists to tuples."""
    set_ = lambda name, value: object.__setattr__(claim, name, value)  # noqa: E731  (frozen: normalized once, here)
    for name in ("seeds", "constants", "uses", "generalizes", "compared_with", "resolves", "readings", "unverified_parts", "variables"):
        value = getattr(claim, name)
        value = (value,) if isinstance(value, str) else value
        if not isinstance(value, (list, tuple)) or (name != "variables" and not all(isinstance(x, str) for x in value)):
            raise InputError(f"claim {claim.id}: {name}={value!r} is not a list{' of names' if name != 'variables' else ''}")
        set_(name, tuple(value))
    for c in claim.constants:  # a constant is a name of the formulas, as a variable is: constants=["E"] read E as e
        check_name(c, f"claim {claim.id}: constants[{c!r}]")
    if not isinstance(claim.hypotheses, (dict, list, tuple)):
        raise InputError(f"claim {claim.id}: hypotheses={claim.hypotheses!r} is not a dict such as {{'H1': 'n >= k*log(d)**2'}}")
    if not isinstance(claim.bounds, (list, tuple)):
        raise InputError(f"claim {claim.id}: bounds={claim.bounds!r} is not a list of ibcheck.Bound(...)")
    for name in ("status", "kind", "title", "paper", "note"):
        if not isinstance(getattr(claim, name), str):
            raise InputError(f"claim {claim.id}: {name}={getattr(claim, name)!r} is not a string")
    set_("reference", _reference(claim))
    set_("definitions", _definitions(claim))
    set_("variables", tuple(v if isinstance(v, Variable) else shared_variable(v) for v in claim.variables))
    hyps = claim.hypotheses.items() if isinstance(claim.hypotheses, dict) else enumerate(claim.hypotheses)
    out = []
    signed = {v.name: v for v in claim.variables if _admits_nonpositive(v)}
    for key, h in hyps:
        where = f"claim {claim.id}: hypotheses[{key!r}]"
        text = h.text if isinstance(h, Hypothesis) and h.expr is not None else h
        if signed and isinstance(text, str):
            _same_over_reals(text, signed, where, prose=isinstance(h, Hypothesis))
        if isinstance(h, Hypothesis):  # checked when built (Hypothesis.__post_init__)
            out.append(h)
            continue
        expr = _relation(h, where)
        out.append(Hypothesis(str(key), expr, text=h if isinstance(h, str) else ""))
    set_("hypotheses", tuple(out))
    bounds = []
    for i, b in enumerate(claim.bounds):
        if not isinstance(b, Bound):
            raise InputError(f"claim {claim.id}: bounds[{i}] is a {type(b).__name__}, not an ibcheck.Bound(quantity, kind, expr)")
        bounds.append(b.parsed(f"claim {claim.id}: bounds[{i}]"))
    set_("bounds", tuple(bounds))
