"""The bound scaling report: Markdown plus PNG plots, from the claim registry alone.

For each claim with a bound that depends on d it draws the bound against d on log-log
axes, with its exponent; it draws the robust/non-robust gap (``sqrt(d)`` against
``sqrt(d/k)``, ratio ``sqrt(k)``); and it tabulates every claim's applicability window at
a default point, plus the window of FVBS23.thm.4_2 as n varies. Symbolic constants (C, C1..)
are set to 1 in the plots, and the report says so.
"""
from __future__ import annotations

import math
import os
from datetime import datetime, timezone

import sympy as sp

from .atomic import save_figure_file, write_text
from .claim import Claim, tex
from .describe import bound_exponents
from .errors import InputError
from .evaluate import bound_value, make_point
from .growth import compare
from .registry import all_claims, get_claim
from .window import applicability_window

# A default point for every variable; a claim whose domain excludes one gets a value inside it.
DEFAULTS = {
    "d": "1000", "k": "10", "n": "10000", "m": "5", "eps": "0.1", "delta": "0.1", "gamma": "0.1",
    "c": "0.5", "sigma": "1", "T": "1000", "t": "1000", "L": "2", "max_ip": "10", "max_mean_ip": "1",
    "cp": "0.5", "kappa": "0.25", "ks": "5", "q": "1", "beta": "0.1", "tau": "0.25", "lam": "0.01",
    "p": "1", "rho": "1", "q_min": "1", "Lsum": "0.1", "Lsum_t0": "0.5", "ell_0": "1", "normalized_margin": "0.01",
}
D_GRID = [10 ** (1 + 0.25 * i) for i in range(21)]  # 10 .. 1e6


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


def _d_bounds(claim: Claim):
    """Bounds whose leading exponent in d (power or log) is nonzero."""
    out = []
    for b in claim.bounds:
        if b.kind == "->" or "d" not in claim.variable_names:
            continue
        ex = bound_exponents(claim, b)
        if ex["exponents"] is None:
            continue
        if ex["exponents"].get("d", "0") != "0" or ex["log_exponents"].get("d", "0") != "0":
            out.append((b, ex))
    return out


def _plot_bounds(claim: Claim, items, out_dir: str) -> str:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    raw = default_raw(claim, skip=("d",))
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    for b, ex in items:
        ys = []
        for d in D_GRID:
            point = make_point(claim, {**raw, "d": str(int(round(d)))})
            _, lg = bound_value(b.expr, point)
            ys.append(10**lg if lg is not None and lg < 300 else float("nan"))
        slope = ex["exponents"]["d"]
        logp = ex["log_exponents"].get("d", "0")
        lab = f"{b.quantity} {b.kind}({sp.sstr(b.expr)})" + (f" [{b.reading}]" if b.reading else "")
        lab += f"  slope {slope}" + (f", log^{logp} d" if logp != "0" else "")
        ax.loglog(D_GRID, ys, marker="o", ms=3, label=lab)
    fixed = ", ".join(f"{k}={v}" for k, v in raw.items())
    ax.set_xlabel("d")
    ax.set_ylabel("bound (constants = 1)")
    ax.set_title(f"{claim.id}\n(at {fixed})" if fixed else claim.id, fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    name = f"bound_{claim.id.replace('.', '_')}.png"
    save_figure_file(fig, os.path.join(out_dir, name))
    plt.close(fig)
    return name


GAPS = (
    ("LPLL25.prop.robust_exists", "robust_radius", "LPLL25.thm.nonrobust", "flip_radius_median"),
    ("FVBS23.thm.4_1", "robust_radius", "FVBS23.thm.4_2", "universal_flip_norm"),
)


def _gap_section(out_dir: str) -> tuple[list[str], str]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lines = ["## The robust / non-robust gap", ""]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    ks = [2, 4, 10, 40, 100]
    for rob_id, rob_q, non_id, non_q in GAPS:
        rob = next(b for b in get_claim(rob_id).bounds if b.quantity == rob_q)
        non = next(b for b in get_claim(non_id).bounds if b.quantity == non_q)
        ratio = sp.simplify(rob.expr / non.expr)
        tends = {"d": "oo", "k": "oo"}
        cmp_k = compare(non.expr, rob.expr, {"k": "oo"})
        cmp_dk = compare(non.expr, rob.expr, tends)
        lines += [
            f"- `{non_id}` {non_q} ${tex(non.expr)}$ against `{rob_id}` {rob_q} ${tex(rob.expr)}$:",
            f"  ratio ${tex(ratio)}$; as k grows: `{cmp_k.relation}` ({cmp_k.reason}); "
            f"as d and k grow: `{cmp_dk.relation}` ({cmp_dk.reason}).",
        ]
    for k in ks:
        ax1.loglog(D_GRID, [math.sqrt(d / k) for d in D_GRID], label=f"sqrt(d/k), k={k}")
    ax1.loglog(D_GRID, [math.sqrt(d) for d in D_GRID], "k--", lw=2, label="sqrt(d) (robust construction)")
    ax1.set_xlabel("d")
    ax1.set_ylabel("radius (constants = 1)")
    ax1.set_title("non-robust O(sqrt(d/k)) vs robust Omega(sqrt(d))", fontsize=9)
    ax1.legend(fontsize=7)
    ax1.grid(True, which="both", alpha=0.3)
    kk = [2**i for i in range(1, 11)]
    ax2.loglog(kk, [math.sqrt(k) for k in kk], marker="o")
    ax2.set_xlabel("k")
    ax2.set_ylabel("sqrt(d) / sqrt(d/k)")
    ax2.set_title("the gap: a ratio of sqrt(k), independent of d (slope 1/2)", fontsize=9)
    ax2.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    name = "gap_sqrt_k.png"
    save_figure_file(fig, os.path.join(out_dir, name))
    plt.close(fig)
    lines += ["", f"![gap]({name})", ""]
    return lines, name


def _windows_section(claims: list[Claim], out_dir: str) -> list[str]:
    lines = ["## Applicability windows at a default point", "",
             "| claim | free | fixed at | window (integers) | binding (low / high) | verified |", "|---|---|---|---|---|---|"]
    for c in claims:
        numeric = [h for h in c.hypotheses if h.expr is not None]
        if not numeric:
            continue
        syms = {s.name for h in numeric for s in h.expr.free_symbols}
        ints = [v.name for v in c.variables if v.integer and v.name in syms]
        if not ints:
            continue
        free = "d" if "d" in ints else ints[0]
        needed = syms - {free}
        raw = {k: v for k, v in default_raw(c, skip=(free,)).items() if k in needed}
        w = applicability_window(c, free, raw)
        ivs = "; ".join(f"[{a}, {'oo' if b is None else _short(b)}]" for a, b in w.intervals) or f"empty: {w.empty_because}"
        bind = "; ".join(f"{b['low']} / {b['high'] or '-'}" for b in w.binding) or "-"
        flag = " (unverified)" if c.unverified else ""
        assumed = f" (assumes {', '.join(f'{k}=1' for k in w.assumed_constants)})" if w.assumed_constants else ""
        fixed = ", ".join(f"{k}={v}" for k, v in raw.items())
        lines.append(f"| `{c.id}`{flag} | {free} | {fixed}{assumed} | {ivs} | {bind} | {'yes' if w.verified else 'no'} |")
    lines.append("")
    return lines


def _short(x) -> str:
    if isinstance(x, int) and x > 10**12:
        return f"{x:.4e} (exact integer in JSON)"
    return str(x)


def _window_vs_n(out_dir: str) -> list[str]:
    """Where FVBS23.thm.4_2 starts and stops applying in d, as n grows (k=10, eps=delta=0.1)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    claim = get_claim("FVBS23.thm.4_2")
    ns = [10 ** (2 + 0.5 * i) for i in range(15)]
    lo, hi, used, bind_lo, bind_hi = [], [], [], set(), set()
    for n in ns:
        w = applicability_window(claim, "d", {"k": "10", "n": str(int(n)), "eps": "0.1", "delta": "0.1", "c": "0.5"})
        if w.log10_intervals:
            a, b = w.log10_intervals[0]
            used.append(n)
            lo.append(a)
            hi.append(b)
            bind_lo.add(str(w.binding[0]["low"]))
            bind_hi.add(str(w.binding[0]["high"]))
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    ax.loglog(used, lo, marker="o", label=f"lowest d (binding: {', '.join(sorted(bind_lo))})")
    ax.loglog(used, hi, marker="s", label=f"highest d (binding: {', '.join(sorted(bind_hi))})")
    ax.fill_between(used, lo, hi, alpha=0.15)
    ax.set_xlabel("n")
    ax.set_ylabel("log10 d")
    ax.set_title("FVBS23.thm.4_2: the window of d (k=10, eps=delta=0.1)", fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    name = "window_FVBS23_thm_4_2_vs_n.png"
    save_figure_file(fig, os.path.join(out_dir, name))
    plt.close(fig)
    rows = ["| n | lowest d (log10) | highest d (log10) |", "|---|---|---|"]
    rows += [f"| {int(n)} | {a:.3f} | {b:.3f} |" for n, a, b in zip(used, lo, hi)]
    return ["## Where FVBS23.thm.4_2 starts to apply", "", f"![window]({name})", "", *rows, ""]


def scaling_report(claim_ids: list[str] | None, out_dir: str) -> str:
    """Write ``scaling.md`` and its PNGs into ``out_dir`` (created); return the Markdown path."""
    claims = [get_claim(c) for c in claim_ids] if claim_ids else all_claims()
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise InputError(f"--out {out_dir} exists and is not a directory")
    os.makedirs(out_dir, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    md = [
        "# ibcheck: bound scaling report", "",
        f"Generated {stamp} by `ibcheck scaling`, from the claim registry alone (no simulation yet).",
        "Symbolic constants (C, C1..C4) are set to 1 in the plots: for claims of status *order* only",
        "the slopes are meaningful, not the heights. Claims flagged *unverified* are marked.", "",
        "## Bounds and exponents", "",
        "| claim | status | quantity | kind | bound | exponents | log powers |", "|---|---|---|---|---|---|---|",
    ]
    plotted = []
    for c in claims:
        for b in c.bounds:
            if b.kind == "->":
                continue
            ex = bound_exponents(c, b)
            if ex["exponents"] is None:
                continue
            exps = ", ".join(f"{v}: {x}" for v, x in ex["exponents"].items() if x != "0") or "0"
            logs = ", ".join(f"log {v}: {x}" for v, x in ex["log_exponents"].items() if x != "0")
            logs += "".join(f", loglog {v}: {x}" for v, x in ex["loglog_exponents"].items() if x != "0")
            flag = " **unverified**" if (c.unverified or b.unverified) else ""
            rd = f" [{b.reading}]" if b.reading else ""
            md.append(f"| `{c.id}`{flag} | {c.status} | {b.quantity}{rd} | {b.kind} | ${tex(b.expr)}$ | {exps} | {logs.strip(', ') or '0'} |")
        items = _d_bounds(c)
        if items:
            plotted.append((c, _plot_bounds(c, items, out_dir)))
    md += ["", "## Bounds against d (log-log)", ""]
    for c, name in plotted:
        md += [f"### {c.id}" + (" (unverified)" if c.unverified else ""), "", f"![{c.id}]({name})", ""]
    gap_lines, _ = _gap_section(out_dir)
    md += gap_lines
    md += _windows_section(claims, out_dir)
    if not claim_ids or "FVBS23.thm.4_2" in claim_ids:
        md += _window_vs_n(out_dir)
    path = os.path.join(out_dir, "scaling.md")
    write_text(path, "\n".join(md) + "\n")
    return path
