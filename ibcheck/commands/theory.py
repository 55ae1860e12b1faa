"""``ibcheck`` subcommands of the symbolic layer: claims, bounds, window, graph, compare, scaling."""
from __future__ import annotations

import os
import sys
import tempfile

from ibcheck.theory import graph as G
from ibcheck.theory.atomic import write_bytes, write_text
from ibcheck.theory.errors import InputError
from ibcheck.theory.evaluate import parse_assignments
from ibcheck.theory.registry import all_claims
from ibcheck.theory.result import dumps

from .args import common


def register(sub) -> None:
    p = sub.add_parser("claims", help="list the claims", parents=[common(out=None)])
    p.set_defaults(func=cmd_claims)

    p = sub.add_parser("bounds", help="a claim's hypotheses and bounds, with exponents; evaluated at --at")
    p.add_argument("claim")
    p.add_argument("--at", default=None, help="parameter point, e.g. d=1000,k=10,n=5000,eps=0.1,delta=0.1")
    p.add_argument("--reading", default=None, help="only this reading of an ambiguous claim")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true")
    fmt.add_argument("--latex", action="store_true")
    p.set_defaults(func=cmd_bounds)

    p = sub.add_parser("window", help="the exact integer window of one free variable where every hypothesis holds", parents=[common(out=None)])
    p.add_argument("claim")
    p.add_argument("--free", required=True, help="the free variable, usually d: an integer gives integer ends; a real one (eps, a step size) real intervals")
    p.add_argument("--at", default="", help="values of every other variable the hypotheses use, e.g. k=10,n=5000,eps=0.1,delta=0.1 "
                                           "(none for a claim whose hypotheses use only --free)")
    p.set_defaults(func=cmd_window)

    p = sub.add_parser("graph", help="the claim graph; queries with --rests-on and --follows-at",
                       parents=[common(out="file", out_required=False, out_help="write to FILE (required for png)")])
    p.add_argument("--format", default="mermaid", choices=("dot", "mermaid", "json", "png"))
    p.add_argument("--rests-on", default=None, metavar="CLAIM", help="list what CLAIM rests on")
    p.add_argument("--follows-at", default=None, metavar="POINT", help="which conclusions follow at this point")
    p.set_defaults(func=cmd_graph)

    p = sub.add_parser("growth", help="compare the growth of two bounds as variables go to infinity (or 0) jointly", parents=[common(out=None)])
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--over", default=None, help="variables that tend to infinity, e.g. d,k (default: all in a and b)")
    p.add_argument("--to-zero", default=None, help="variables that tend to 0, e.g. eps,delta (default: eps, delta, gamma, as the registry has them)")
    p.add_argument("--coupling", default=None, help="e.g. k=d**(1/2)")
    p.set_defaults(func=cmd_growth)

    p = sub.add_parser("new-claim", help="write a commented template of your own claim and experiment (runs as written)",
                       parents=[common(out="file", json=False, out_help="the Python file to write (then: ibcheck --claims FILE ...)")])
    p.add_argument("claim_id", metavar="ID", help="e.g. ABC25.thm.1")
    p.add_argument("--overwrite", action="store_true")
    p.set_defaults(func=cmd_new_claim)

    p = sub.add_parser("scaling", help="the bound scaling report: Markdown + PNG plots", parents=[common(json=False)])
    p.add_argument("claims", nargs="*", help="claim ids (default: every claim with a d-dependent bound)")
    p.set_defaults(func=cmd_scaling)


def _emit(text: str, out: str | None = None) -> None:
    if out is None:
        sys.stdout.write(text)
        return
    write_atomic(out, text.encode())


def write_atomic(path: str, data: bytes) -> None:
    """Write a file all at once (temp file + rename): never half-written."""
    write_bytes(path, data)


def cmd_claims(args) -> int:
    from ibcheck import api  # heavy: torch (loaded on first use)

    claims = api.claims()
    if args.json:
        _emit(claims.to_json() + "\n")
        return 0
    w = max(len(c.id) for c in claims)
    lines = [f"{'id':<{w}}  {'status':<10} {'kind':<11} title"]
    for c in claims:
        flag = "  [UNVERIFIED]" if c.unverified else ""
        lines.append(f"{c.id:<{w}}  {c.status:<10} {c.kind:<11} {c.title}{flag}")
    _emit("\n".join(lines) + "\n")
    return 0


def cmd_bounds(args) -> int:
    from ibcheck import api  # heavy: torch (loaded on first use)

    res = api.bounds(args.claim, parse_assignments(args.at) or None, args.reading)
    if args.json:
        _emit(dumps(res.as_json(), indent=2) + "\n")
    elif args.latex:
        _emit(res.latex)
    else:
        _emit(_bounds_text(res.as_json()))
    return 0


def _bounds_text(info: dict) -> str:
    out = [f"{info['claim']}: {info['title']}", f"  status: {info['status']}  kind: {info['kind']}  source: {info['source']}"]
    for f in info["flags"]:
        out.append(f"  FLAG: {f}")
    if info["hypotheses"]:
        out.append("  hypotheses:")
    for h in info["hypotheses"]:
        if h["qualitative"]:
            out.append(f"    {h['name']}: {h['text']}  (qualitative: assumed)")
            continue
        state = {True: "holds", False: "FAILS", None: "-"}[h["holds"]]
        sides = ""
        if h["log10_lhs"] is not None or h["log10_rhs"] is not None:
            fmt = lambda x: "-" if x is None else x if isinstance(x, str) else f"{x:.6g}"  # noqa: E731 (a str: beyond float)
            sides = f"  [log10 lhs {fmt(h['log10_lhs'])}, log10 rhs {fmt(h['log10_rhs'])}]"
        extra = f"  (needs {', '.join(h['missing'])})" if h["missing"] and info["point"] else ""
        assumed = f"  (assumes {', '.join(f'{k}=1' for k in h['assumed_constants'])})" if h["assumed_constants"] else ""
        unv = "  [unverified]" if h["unverified"] else ""
        out.append(f"    {h['name']}: {h['expr']}  {state}{sides}{extra}{assumed}{unv}")
    if info["bounds"]:
        out.append("  bounds:")
    for b in info["bounds"]:
        rd = f" [{b['reading']}]" if b["reading"] else ""
        ex = ""
        if b["exponents"] is not None:
            parts = [f"{v}:{x}" for v, x in b["exponents"].items() if x != "0"]
            parts += [f"log {v}:{x}" for v, x in (b["log_exponents"] or {}).items() if x != "0"]
            parts += [f"loglog {v}:{x}" for v, x in (b.get("loglog_exponents") or {}).items() if x != "0"]
            ex = "  exponents " + (", ".join(parts) or "none (constant in every variable)")
        val = f"  value {b['value']:.6g}" if b["value"] is not None else ""
        out.append(f"    {b['quantity']} {b['kind']} {b['expr']}{rd}{ex}{val}")
    if info["applies"] is not None:
        out.append(f"  applies at this point: {'yes' if info['applies'] else 'no'}")
    return "\n".join(out) + "\n"


def cmd_window(args) -> int:
    from ibcheck import api  # heavy: torch (loaded on first use)

    claim = api.claim(args.claim)
    w = api.window(args.claim, args.free, parse_assignments(args.at))
    if args.json:
        _emit(dumps(w.as_json(), indent=2) + "\n")
        return 0
    out = [f"{claim.id}: window of {args.free} at {args.at}"]
    for f in claim.flags:
        out.append(f"  FLAG: {f}")
    if not w.intervals:
        out.append(f"  empty: no {'value' if w.real else 'integer'} satisfies every hypothesis ({w.empty_because})")
    for i, b in enumerate(w.binding):
        out.append(f"  {w.interval_text(i)}   binding: low {b['low']}, high {b['high'] or '-'}")
    how = "a relative 1e-10 inside and outside" if w.real else "one step inside and outside"
    out.append(f"  endpoints verified {how}: {'yes' if w.verified else 'no'}")
    if w.assumed_constants:
        out.append(f"  assumed constants: {w.assumed_constants}")
    for q in w.assumed_qualitative:
        out.append(f"  assumed (qualitative) {q}")
    _emit("\n".join(out) + "\n")
    return 0


def cmd_graph(args) -> int:
    g = G.claim_graph()
    if args.rests_on:
        deps = G.rests_on(args.rests_on, g)
        _emit(dumps({"claim": args.rests_on, "rests_on": deps}, indent=2) + "\n" if args.json else "\n".join(deps) + "\n", args.out)
        return 0
    if args.follows_at is not None:
        raw = parse_assignments(args.follows_at)
        if not raw:
            raise InputError("--follows-at expects a point such as d=1000,k=10,n=5000,eps=0.1,delta=0.1")
        rows = G.conclusions_at(raw, _claims_with_vars(raw))
        if args.json:
            _emit(dumps([r.as_json() for r in rows], indent=2) + "\n", args.out)
        else:
            lines = []
            for r in rows:
                state = {True: "follows", False: "does not follow", None: "undetermined"}[r.follows]
                why = f"  (fails: {', '.join(r.failed)})" if r.failed else (f"  ({'; '.join(r.undetermined)})" if r.undetermined else "")
                lines.append(f"{r.claim}: {state}{why}")
            _emit("\n".join(lines) + "\n", args.out)
        return 0
    if args.format == "png":
        if not args.out:
            raise InputError("--format png needs --out FILE")
        d = os.path.dirname(os.path.abspath(args.out))
        if not os.path.isdir(d):
            raise InputError(f"--out {args.out}: directory {d} does not exist")
        fd, tmp = tempfile.mkstemp(dir=d, suffix=".png", prefix=".ibcheck-")
        os.close(fd)
        try:
            how = G.render_png(g, tmp)
            os.replace(tmp, args.out)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        print(f"wrote {args.out} ({how})", file=sys.stderr)
        return 0
    text = {"dot": G.to_dot, "mermaid": G.to_mermaid, "json": G.to_json}[args.format](g)
    _emit(text, args.out)
    return 0


def _claims_with_vars(raw) -> list[str]:
    """Claims that have numeric hypotheses and whose variables include a given one."""
    return [c.id for c in all_claims() if any(h.expr is not None for h in c.hypotheses) and set(raw) & set(c.variable_names)]


def cmd_growth(args) -> int:
    from ibcheck import api  # heavy: torch (loaded on first use)

    if args.coupling and "=" not in args.coupling:
        raise InputError(f"--coupling expects VAR=EXPR such as k=d**(1/2), got {args.coupling!r}")
    coupling = dict([[p.strip() for p in args.coupling.split("=", 1)]]) if args.coupling else None
    res = api.growth(args.a, args.b, [v for v in args.over.split(",") if v] if args.over else None,
                     [v for v in args.to_zero.split(",") if v] if args.to_zero is not None else None, coupling)
    if args.json:
        _emit(res.to_json() + "\n")
    else:
        _emit(f"{res.a}  {res.relation}  {res.b}    ({res.reason})\n")
    return 0


def cmd_scaling(args) -> int:
    from ibcheck import api  # heavy: torch (loaded on first use)

    path = api.scaling_report(args.out, args.claims or None)
    print(f"wrote {path}", file=sys.stderr)
    return 0


def cmd_new_claim(args) -> int:
    from ibcheck import api  # heavy: torch (loaded on first use)

    if os.path.exists(args.out) and not args.overwrite:
        raise InputError(f"--out {args.out} exists (pass --overwrite to replace it)")
    write_text(args.out, api.claim_template(args.claim_id, args.out))
    print(f"wrote {args.out}; try: ibcheck --claims {args.out} compare {args.claim_id} --out compare-{args.claim_id}")
    return 0
