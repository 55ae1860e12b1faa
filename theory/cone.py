"""The window's asymptotic cone: the directions along which the hypotheses let the fitted variables grow.

A verdict on an asymptotic claim tests the claim where its scale can grow inside the window. With the hypotheses
written in log space, the cone is read far beyond any sweep (each variable at 10^12 and 10^100 toward its limit, where
:func:`theory.evaluate.relation_holds` is exact), from the hypotheses that speak only of the fitted variables and the
constants (a hypothesis on a variable the design picks per cell, n say, constrains that variable, not the directions):

* a variable **grows alone** where every such hypothesis holds with it at 10^12 and 10^100 and the others held (at
  their smallest swept values);
* for two growing variables a and b, the **rays** ``b = a^beta`` (beta in 0..3, step 1/20) along which every such
  hypothesis holds at a = 10^12 and 10^100: the admissible interval ``[beta_lo, beta_hi]``.

FVBS23's Assumption 2.2 admits k = d^beta for beta <= 1/2 only: at fixed d the window bounds k, so k alone is a
bounded direction (its variation is reported; it does not decide), while d alone and the rays k = d^beta with
beta <= 1/2 grow.

Pitfall avoided: testing each variable alone lets a direction the theorem does not speak of (k growing at fixed d,
outside k <= sqrt(d)) decide the verdict.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Mapping

import mpmath
import sympy as sp

from .evaluate import exact_value, relation_holds

EXPONENTS = (12, 100)  # each variable at 10^12 and 10^100 (10^-12, 10^-100 toward 0)
BETAS = tuple(Fraction(i, 20) for i in range(0, 61))  # b = a^beta, beta in 0 .. 3


@dataclass(frozen=True)
class AsymptoticCone:
    """Which directions the window lets grow: ``alone[v]`` (v alone, the others held) and ``rays[(a, b)]``, the
    admissible ``(beta_lo, beta_hi)`` of ``b = a^beta`` (None: no ray of the grid is admissible)."""

    alone: Mapping[str, bool]
    rays: Mapping[tuple[str, str], tuple[float, float] | None] = field(default_factory=dict)
    hypotheses: tuple[str, ...] = ()  # the hypotheses read (names)

    def bounded(self, v: str) -> bool:
        """Is v alone a direction the window bounds?"""
        return not self.alone.get(v, True)

    def interval(self, a: str, b: str) -> tuple[float, float] | None:
        """The admissible beta interval of ``b = a^beta`` ((0, inf) where no hypothesis ties them)."""
        if (a, b) in self.rays:
            return self.rays[(a, b)]
        if (b, a) in self.rays:
            iv = self.rays[(b, a)]
            if iv is None:
                return None
            lo, hi = iv
            return (1 / hi if hi > 0 else 0.0, 1 / lo if lo > 0 else float("inf"))
        return (0.0, float("inf"))

    def describe(self) -> str:
        parts = [f"{v} {'grows alone' if ok else 'is bounded alone'}" for v, ok in self.alone.items()]
        parts += [f"{b} = {a}^beta for beta in [{iv[0]:g}, {iv[1]:g}]" if iv else f"no ray {b} = {a}^beta"
                  for (a, b), iv in self.rays.items()]
        return "; ".join(parts) + (f" (from {', '.join(self.hypotheses)})" if self.hypotheses else "")

    def as_json(self) -> dict:
        return {"alone": dict(self.alone), "rays": {f"{b} = {a}^beta": (list(iv) if iv else None) for (a, b), iv in self.rays.items()},
                "hypotheses": list(self.hypotheses), "checked_at": [f"10^{e}" for e in EXPONENTS]}


def _far(e: int | Fraction, toward_zero: bool) -> int | sp.Rational:
    """10^e (10^-e toward 0), exact: an integer power, a rational one rounded to an integer (sizes are counts)."""
    if isinstance(e, Fraction) and e.denominator != 1:
        x = max(2, round(10 ** float(e)))
    else:
        x = 10 ** int(e)
    return sp.Rational(1, x) if toward_zero else x


def _holds(hyps, values: dict) -> bool:
    """Every hypothesis at exact values (ints and sympy rationals: a tie is decided exactly)."""
    with mpmath.workdps(30):
        vals = {k: int(v) if isinstance(v, sp.Integer) else v for k, v in values.items()}
        return all(relation_holds(rel, vals)[0] for _, rel in hyps)


def asymptotic_cone(hypotheses: list[tuple[str, sp.Basic]], variables: list[str], toward_zero: frozenset[str] = frozenset(),
                    held: Mapping[str, object] | None = None, constants: Mapping[str, object] | None = None) -> AsymptoticCone | None:
    """The cone of ``variables`` under the ``hypotheses`` (name, relation) that use only them and the constants (others
    skipped); ``held``: a value per variable where it is held (default: its smallest swept value, given by the caller);
    ``constants``: the claim's constants with their values (1 where the claim gives none): a hypothesis with any other
    symbol (a variable the design picks, n or eps) is skipped. None where no hypothesis applies."""
    held = dict(held or {})
    consts = {k: v for k, v in (constants or {}).items()}
    names = set(variables)
    used = []
    for name, rel in hypotheses:
        if rel is None:
            continue
        free = {s.name for s in rel.free_symbols}
        var_free = free & names
        if var_free and free - names <= set(consts):
            used.append((name, rel))
    if not used:
        return None
    extra = {c: consts[c] for _, rel in used for c in {s.name for s in rel.free_symbols} - names}
    alone = {}
    for v in variables:
        ok = True
        for e in EXPONENTS:
            vals = {**extra, **{u: held.get(u, 2) for u in variables}, v: _far(e, v in toward_zero)}
            ok = ok and _holds(used, vals)
        alone[v] = ok
    rays: dict[tuple[str, str], tuple[float, float] | None] = {}
    grow = [v for v in variables if v not in toward_zero]
    for i, a in enumerate(grow):
        for b in grow[i + 1:]:
            if not any({a, b} <= {s.name for s in rel.free_symbols} for _, rel in used):
                continue  # no hypothesis ties them: every ray is admissible
            betas = [beta for beta in BETAS
                     if all(_holds(used, {**extra, **{u: held.get(u, 2) for u in variables}, a: _far(e, False), b: _far(e * beta, False)})
                            for e in EXPONENTS)]
            rays[(a, b)] = (float(min(betas)), float(max(betas))) if betas else None
    return AsymptoticCone(alone, rays, tuple(n for n, _ in used))



def claim_cone(claims: list, variables: list[str], toward_zero: frozenset[str] = frozenset(), held: Mapping[str, object] | None = None,
               values: Mapping[str, object] | None = None) -> AsymptoticCone | None:
    """The cone under the hypotheses of ``claims`` (a claim and the assumptions its experiment names): constants at
    ``values`` or 1, parameters (variables that tend to a constant, kappa) at ``values``; a hypothesis on any other
    variable (n, eps: picked per cell by the design) is skipped."""
    values = dict(values or {})
    consts: dict[str, object] = {}
    hyps = []
    for c in claims:
        for name in c.constants:
            consts[name] = _number(values.get(name, 1))
        for v in c.variables:
            if v.tends_to == "const" and v.name in values and v.name not in variables:
                consts[v.name] = _number(values[v.name])
        hyps += [(h.name if c is claims[0] else f"{c.id} {h.name}", h.expr) for h in c.hypotheses if h.expr is not None]
    return asymptotic_cone(hyps, variables, toward_zero, held, consts)


def _number(x):
    """An exact value for a parameter (a float such as 0.5 as the decimal it reads as); 1 for anything not a number."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return 1
    return exact_value(x)
