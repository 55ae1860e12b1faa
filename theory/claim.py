"""The claim data model: a claim is hypotheses (sympy relations) and bounds on named quantities.

Everything here is declarative: a claim module builds :class:`Claim` objects and the rest of
ibcheck (evaluation, windows, growth, graph, experiments) reads them. Formulas are sympy
expressions over the shared symbols of :mod:`theory.variables`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Literal

import sympy as sp

from .result import Result
from .variables import Variable

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
    names = {s: _TEX_NAMES[s.name] for s in sp.sympify(expr).free_symbols if s.name in _TEX_NAMES}
    return sp.latex(expr, symbol_names=names, ln_notation=True)


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

    @property
    def qualitative(self) -> bool:
        return self.expr is None


@dataclass(frozen=True)
class Bound:
    """A conclusion: ``quantity  kind  expr``, e.g. ``flip_radius_median O(sqrt(d/k))``.

    ``reading`` names the reading of an ambiguous claim this bound belongs to (None when
    there is only one). ``probability`` is the stated confidence, e.g. ``1 - delta``.
    """

    quantity: str
    kind: str
    expr: sp.Basic
    reading: str | None = None
    note: str = ""
    probability: sp.Basic | None = None
    unverified: bool = False

    def __post_init__(self):
        if self.kind not in BOUND_KINDS:
            raise ValueError(f"bound kind {self.kind!r} is not one of {BOUND_KINDS}")

    def latex(self) -> str:
        e = tex(self.expr)
        q = r"\mathrm{" + self.quantity.replace("_", r"\_") + "}"
        if self.kind in ("O", "Theta", "Omega", "o", "omega"):
            op = {"O": "O", "Theta": r"\Theta", "Omega": r"\Omega", "o": "o", "omega": r"\omega"}[self.kind]
            return rf"{q} = {op}\left({e}\right)"
        op = {"<=": r"\le", ">=": r"\ge", "->": r"\to"}[self.kind]
        return rf"{q} {op} {e}"


@dataclass(frozen=True)
class Claim(Result):
    """One result of THEORY.md, keyed by its id (e.g. ``FVBS23.thm.4_2``).

    In a notebook it shows its hypotheses and bounds as a table, and as LaTeX (``_repr_latex_``)."""

    name: ClassVar[str] = "claim"

    id: str
    title: str
    paper: str
    seeds: tuple[str, ...]
    status: ClaimStatus
    kind: str
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
        if self.status not in STATUSES:
            raise ValueError(f"{self.id}: status {self.status!r} is not one of {STATUSES}")
        if self.kind not in KINDS:
            raise ValueError(f"{self.id}: kind {self.kind!r} is not one of {KINDS}")
        names = {v.name for v in self.variables}
        allowed = names | set(self.constants)
        for h in self.hypotheses:
            if h.expr is not None:
                extra = {s.name for s in h.expr.free_symbols} - allowed
                if extra:
                    raise ValueError(f"{self.id}.{h.name}: undeclared symbols {sorted(extra)}")
        if self.status == "ambiguous" and len(self.readings) < 2:
            raise ValueError(f"{self.id}: an ambiguous claim carries every reading (>= 2)")
        for b in self.bounds:
            if b.reading is not None and b.reading not in self.readings:
                raise ValueError(f"{self.id}: bound reading {b.reading!r} not declared")

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
        if self.status == "order":
            out.append("constants unknown (order only)")
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
        return f"{self.paper}; seeds: {', '.join(self.seeds) or 'none (paper only)'}"

    # -- display (theory.result.Result) -----------------------------------------------
    def as_json(self) -> dict:
        from .describe import describe

        return describe(self)

    def heading(self) -> str:
        return f"{self.id}: {self.title} ({self.status}{'; ' + '; '.join(self.flags) if self.flags else ''})"

    def table(self) -> list[dict]:
        rows = [{"part": h.name, "statement": sp.sstr(h.expr) if h.expr is not None else h.text + " (qualitative)"} for h in self.hypotheses]
        return rows + [{"part": "=> " + b.quantity + (f" [{b.reading}]" if b.reading else ""), "statement": f"{b.kind}({sp.sstr(b.expr)})"}
                       for b in self.bounds]

    def _repr_latex_(self) -> str:
        from .describe import latex

        body = latex(self)
        return "$$" + body[body.index(r"\begin{align*}"):body.index(r"\end{align*}") + len(r"\end{align*}")] + "$$"
