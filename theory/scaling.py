"""The data of the bound scaling report, from the claim registry alone (the report itself, Markdown
and PNGs, is drawn by :mod:`ibcheck.simulate.report.figures`).

For each claim with a bound that depends on d: the bound against d, with its exponent; the
robust/non-robust gap (``sqrt(d)`` against ``sqrt(d/k)``, ratio ``sqrt(k)``); every claim's
applicability window at a default point; and the window of FVBS23.thm.4_2 as n varies. Symbolic
constants (C, C1..) are set to 1.
"""
from __future__ import annotations

import sympy as sp

from .claim import Claim, tex
from .describe import bound_exponents
from .evaluate import bound_value, make_point
from .growth import compare
from .registry import get_claim
from .result import markdown_text
from .window import applicability_window

# A default point for every variable; a claim whose domain excludes one gets a value inside it.
DEFAULTS = {
    "d": "1000", "k": "10", "n": "10000", "m": "5", "eps": "0.1", "delta": "0.1", "gamma": "0.1",
    "c": "0.5", "sigma": "1", "T": "1000", "t": "1000", "L": "2", "max_ip": "10", "max_mean_ip": "1",
    "cp": "0.5", "kappa": "0.25", "ks": "5", "q": "1", "beta": "0.1", "tau": "0.25", "lam": "0.01",
    "p": "1", "rho": "1", "q_min": "1", "Lsum": "0.1", "Lsum_t0": "0.5", "ell_0": "1", "normalized_margin": "0.01",
}
D_GRID = [10 ** (1 + 0.25 * i) for i in range(21)]  # 10 .. 1e6
GAPS = (
    ("LPLL25.prop.robust_exists", "robust_radius", "LPLL25.thm.nonrobust", "flip_radius_median"),
    ("FVBS23.thm.4_1", "robust_radius", "FVBS23.thm.4_2", "universal_flip_norm"),
)


def default_raw(claim: Claim, skip: tuple[str, ...] = ()) -> dict[str, str]:
    """A valid default point for ``claim`` (every variable, minus ``skip``)."""
    raw = {}
    for v in claim.variables:
        if v.name in skip:
            continue
        val = DEFAULTS.get(v.name, "1")
        if not v.contains(float(val)):
            lo = v.low if v.low is not None else 0.0
            hi = v.high if v.high is not None else lo + 2
            val = str(int(lo) + 1 if v.integer else (lo + hi) / 2)
        raw[v.name] = val
    return raw


def bounds_table(claims: list[Claim]) -> list[dict]:
    """Every bound with its exponents (limit statements ``->`` left out)."""
    rows = []
    for c in claims:
        for b in c.bounds:
            ex = bound_exponents(c, b) if b.kind != "->" else {"exponents": None}
            if ex["exponents"] is None or ex["log_exponents"] is None or ex["loglog_exponents"] is None:
                continue
            logs = ", ".join(f"log {v}: {x}" for v, x in ex["log_exponents"].items() if x != "0")
            logs += "".join(f", loglog {v}: {x}" for v, x in ex["loglog_exponents"].items() if x != "0")
            rows.append({"claim": f"`{c.id}`" + (" **unverified**" if (c.unverified or b.unverified) else ""), "status": c.status,
                         "quantity": b.quantity + (f" [{b.reading}]" if b.reading else ""), "kind": b.kind, "bound": f"${tex(b.expr)}$",
                         "exponents": ", ".join(f"{v}: {x}" for v, x in ex["exponents"].items() if x != "0") or "0",
                         "log powers": logs.strip(", ") or "0"})
    return rows


def bound_curves(claim: Claim) -> tuple[dict[str, str], list[tuple[str, list[float]]]]:
    """The claim's d-dependent bounds on :data:`D_GRID` at its default point (NaN past 1e300):
    the fixed values, and ``(label with slope, values)`` per bound."""
    raw = default_raw(claim, skip=("d",))
    curves = []
    for b in claim.bounds:
        if b.kind == "->" or "d" not in claim.variable_names:
            continue
        ex = bound_exponents(claim, b)
        if ex["exponents"] is None or (ex["exponents"].get("d", "0") == "0" and ex["log_exponents"].get("d", "0") == "0"):
            continue
        ys = []
        for d in D_GRID:
            _, lg = bound_value(b.expr, make_point(claim, {**raw, "d": str(int(round(d)))}))
            ys.append(10**lg if isinstance(lg, float) and lg < 300 else float("nan"))  # a str log10 is beyond float
        logp = ex["log_exponents"].get("d", "0")
        label = f"{b.quantity} {b.kind}({sp.sstr(b.expr)})" + (f" [{b.reading}]" if b.reading else "")
        curves.append((label + f"  slope {ex['exponents']['d']}" + (f", log^{logp} d" if logp != "0" else ""), ys))
    return raw, curves


def gap_lines() -> list[str]:
    """Each non-robust bound against its robust counterpart: the ratio, and how they compare as k (and d) grow."""
    lines = []
    for rob_id, rob_q, non_id, non_q in GAPS:
        rob = next(b for b in get_claim(rob_id).bounds if b.quantity == rob_q)
        non = next(b for b in get_claim(non_id).bounds if b.quantity == non_q)
        cmp_k, cmp_dk = compare(non.expr, rob.expr, {"k": "oo"}), compare(non.expr, rob.expr, {"d": "oo", "k": "oo"})
        lines += [f"- `{non_id}` {non_q} ${tex(non.expr)}$ against `{rob_id}` {rob_q} ${tex(rob.expr)}$:",
                  f"  ratio ${tex(sp.simplify(rob.expr / non.expr))}$; as k grows: `{cmp_k.relation}` ({cmp_k.reason}); "
                  f"as d and k grow: `{cmp_dk.relation}` ({cmp_dk.reason})."]
    return lines


def window_rows(claims: list[Claim]) -> list[dict]:
    """Each claim with numeric hypotheses: its window in d (or its first integer variable) at the default point."""
    rows = []
    for c in claims:
        numeric = [h.expr for h in c.hypotheses if h.expr is not None]
        syms = {s.name for e in numeric for s in e.free_symbols}
        ints = [v.name for v in c.variables if v.integer and v.name in syms]
        if not ints:
            continue
        free = "d" if "d" in ints else ints[0]
        raw = {k: v for k, v in default_raw(c, skip=(free,)).items() if k in syms - {free}}
        w = applicability_window(c, free, raw)
        assumed = f" (assumes {', '.join(f'{k}=1' for k in w.assumed_constants)})" if w.assumed_constants else ""
        rows.append({"claim": f"`{c.id}`" + (" (unverified)" if c.unverified else ""), "free": free,
                     "fixed at": ", ".join(f"{k}={v}" for k, v in raw.items()) + assumed,
                     "window (integers)": "; ".join(f"[{a}, {'oo' if b is None else _short(b)}]" for a, b in w.intervals)
                     or f"empty: {w.empty_because}",
                     "binding (low / high)": "; ".join(f"{markdown_text(b['low'])} / {markdown_text(b['high']) if b['high'] else '-'}"
                                                       for b in w.binding) or "-",
                     "verified": "yes" if w.verified else "no"})
    return rows


def _short(x) -> str:
    return f"{x:.4e} (exact integer in JSON)" if isinstance(x, int) and x > 10**12 else str(x)


def window_vs_n() -> dict:
    """Where FVBS23.thm.4_2 starts and stops applying in d, as n grows (k=10, eps=delta=0.1):
    ``n``, ``log10_low``, ``log10_high`` and the binding hypotheses at each end."""
    claim = get_claim("FVBS23.thm.4_2")
    out: dict = {"n": [], "log10_low": [], "log10_high": [], "binding_low": set(), "binding_high": set()}
    for n in [10 ** (2 + 0.5 * i) for i in range(15)]:
        w = applicability_window(claim, "d", {"k": "10", "n": str(int(n)), "eps": "0.1", "delta": "0.1", "c": "0.5"})
        if w.log10_intervals:
            out["n"].append(int(n))
            out["log10_low"].append(w.log10_intervals[0][0])
            out["log10_high"].append(w.log10_intervals[0][1])
            out["binding_low"].add(str(w.binding[0]["low"]))
            out["binding_high"].add(str(w.binding[0]["high"]))
    return out
