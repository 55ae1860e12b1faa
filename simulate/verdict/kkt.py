"""What summary.json says of KKT claims and ambiguous claims: ``kkt``, ``transfer`` and ``reading``.

* ``kkt``: per cell, the networks trained, the networks certified, and the largest eps and delta
  of the certified ones (FVBS23.thm.4_2 and VYS22.thm.main are about every KKT point of (P));
* :func:`at_thresholds`: the rows again with every network re-judged at other thresholds, the
  fitted value the largest over the networks still certified (the verdict at half thresholds);
* ``transfer``: per cell, the fraction of test points that the z of one certified KKT point
  flips on another (FVBS23.thm.4_2, "transferable"), against 1 - eps;
* ``reading``: which reading of an ambiguous claim the data support (:func:`decide_reading`).
"""
from __future__ import annotations

import math
from typing import Any

from ibcheck.simulate.stats.censored import decode
from ibcheck.simulate.verdict.rules import beyond_band, combine, pinned_interval


def _by_cell(rows: list[dict], cell_vars: list[str]) -> dict[tuple, list[dict]]:
    out: dict[tuple, list[dict]] = {}
    for r in rows:
        out.setdefault(tuple(r[v] for v in cell_vars), []).append(r)
    return out


def kkt_cells(rows: list[dict], cell_vars: list[str]) -> list[dict]:
    """Per cell: samples, networks trained and certified, samples with no certified network (failed rows, never
    fitted), and the largest eps and delta over the certified networks."""
    out = []
    for key, rs in sorted(_by_cell(rows, cell_vars).items()):
        vals = [r["value"] for r in rs if r.get("status") in ("ok", "diverged") and isinstance(r.get("value"), dict)]
        uncertified = sum(1 for r in rs if r.get("status") == "failed" and r.get("failure") == "UncertifiedSample")
        eps = [v["kkt_eps"] for v in vals if v.get("kkt_eps") is not None]
        delta = [v["kkt_delta"] for v in vals if v.get("kkt_delta") is not None]
        out.append({"cell": dict(zip(cell_vars, key)), "samples": len(rs), "samples_uncertified": uncertified,
                    "networks_trained": sum(int(v.get("kkt_trained") or 0) for v in vals),
                    "networks_certified": sum(int(v.get("kkt_certified") or 0) for v in vals),
                    "networks_polished": sum(int(v.get("kkt_polished") or 0) for v in vals),
                    "max_eps": max(eps) if eps else None, "max_delta": max(delta) if delta else None,
                    "eps_threshold": vals[0].get("kkt_eps_threshold") if vals else None,
                    "delta_threshold": vals[0].get("kkt_delta_threshold") if vals else None})
    return out


def certified_everywhere(kkt: list[dict], inside: set[tuple] | None = None) -> bool:
    """Every (inside) cell holds at least one certified KKT point in every sample that entered the fit."""
    cells = [c for c in kkt if inside is None or tuple(sorted(c["cell"].items())) in inside]
    return bool(cells) and all(c["networks_certified"] > 0 for c in cells)


def at_thresholds(rows: list[dict], quantity: str, eps: float, delta: float) -> list[dict]:
    """The rows with each network re-judged at (eps, delta): the value is the largest ``quantity`` over the
    networks still certified; a row with none left fails (it never enters the fit)."""
    out = []
    for r in rows:
        v = r.get("value")
        if r.get("status") not in ("ok", "diverged") or not isinstance(v, dict) or "kkt_networks" not in v:
            out.append(r)
            continue
        kept = [n for n in v["kkt_networks"] if n.get(quantity) is not None and n.get("solver_status") == "optimal"
                and n.get("feasible") and n["eps"] <= eps and n["delta"] <= delta]
        if not kept:
            out.append({**r, "status": "failed", "value": None, "failure": "UncertifiedSample",
                        "error": f"UncertifiedSample: no network certifies at eps={eps:g}, delta={delta:g}"})
            continue
        decoded = [decode(n[quantity]) for n in kept]
        top = max(decoded, key=lambda x: x[0])
        out.append({**r, "value": {**v, quantity: {top[1]: top[0]} if top[1] else top[0]}})
    return out


def transfer_cells(rows: list[dict], cell_vars: list[str], tolerance_points: int = 200) -> list[dict]:
    """Per cell: the smallest and mean fraction flipped over ordered pairs of certified KKT points and samples,
    judged against ``1 - eps`` less two binomial standard errors of a fraction over the test points."""
    out = []
    for key, rs in sorted(_by_cell(rows, cell_vars).items()):
        vals = [r["value"] for r in rs if isinstance(r.get("value"), dict) and r["value"].get("transfer_pairs")]
        if not vals:
            out.append({"cell": dict(zip(cell_vars, key)), "pairs": 0, "fraction_min": None, "fraction_mean": None,
                        "target": None, "transferable": None})
            continue
        target = float(vals[0]["transfer_target"])
        slack = 2 * math.sqrt(target * (1 - target) / tolerance_points)
        lo = min(v["transfer_min"] for v in vals)
        pairs = sum(int(v["transfer_pairs"]) for v in vals)
        mean = sum(v["transfer_mean"] * v["transfer_pairs"] for v in vals) / pairs
        out.append({"cell": dict(zip(cell_vars, key)), "pairs": pairs, "fraction_min": lo, "fraction_mean": mean,
                    "target": target, "slack": slack, "transferable": lo >= target - slack})
    return out


def _tight(fits: list[dict]) -> bool:
    """Every fitted exponent's decision interval is pinned to its prediction (the bound is attained)."""
    return all(pinned_interval(f["decision_ci"][0], f["decision_ci"][1], f["predicted"], f["margin"]) for f in fits)


def _loose(fits: list[dict], kind: str) -> list[str]:
    """The exponents decided strictly inside the bound by more than the margin (an upper bound far from attained)."""
    out = []
    for f in fits:
        lo, hi = f["decision_ci"]
        k = f.get("tested_as", kind)  # the term's own direction (mirrored where its variable tends to 0)
        if beyond_band(k, lo, hi, f["predicted"], f["margin"]):
            out.append(f"{f['variable']} {f['estimate']:.2f} [{lo:.2f}, {hi:.2f}] against {f['predicted']:g}")
    return out


def decide_reading(results: list[dict]) -> dict | None:
    """Which reading of an ambiguous claim the data support, with the evidence of each (None: no readings).

    A reading with an inconsistent bound is rejected. Of the readings left, one whose bounds are all attained
    (every exponent pinned to its prediction) is supported over one that holds only as a loose upper bound
    (an exponent decided below its prediction by more than the margin): the loose reading states a rate the
    data do not follow. Anything else cannot tell yet, and the record says what would tell them apart."""
    readings: dict[str, list[dict]] = {}
    for r in results:
        if r.get("reading"):
            readings.setdefault(r["reading"], []).append(r)
    if len(readings) < 2:
        return None
    evidence: dict[str, dict[str, Any]] = {}
    for name, rs in readings.items():
        overall = combine([r["verdict"] for r in rs])
        loose = [f"{r['quantity']}: {x}" for r in rs for x in _loose(r["fits"], r["kind"])]
        evidence[name] = {"verdict": overall, "bounds": {r["label"]: r["verdict"] for r in rs},
                          "exponents": {r["label"]: {f["variable"]: {"estimate": f["estimate"], "decision_ci": f["decision_ci"],
                                                                     "predicted": f["predicted"]} for f in r["fits"]} for r in rs},
                          "attained": all(_tight(r["fits"]) for r in rs), "loose": loose}
    alive = [n for n, e in evidence.items() if e["verdict"] != "inconsistent"]
    decided = all(e["verdict"] != "inconclusive" for e in evidence.values())
    if not alive and decided:
        return {"reading": "neither", "reason": "every reading has an inconsistent bound", "evidence": evidence}
    if len(alive) == 1 and decided:
        other = ", ".join(n for n in evidence if n != alive[0])
        return {"reading": alive[0], "reason": f"{alive[0]} is consistent; {other} is inconsistent", "evidence": evidence}
    attained = [n for n in alive if evidence[n]["attained"] and evidence[n]["verdict"] == "consistent"]
    loose = [n for n in alive if evidence[n]["loose"]]
    if len(attained) == 1 and set(alive) - set(attained) <= set(loose):
        w = attained[0]
        why = "; ".join(f"{n} holds only as a loose upper bound ({'; '.join(evidence[n]['loose'])})" for n in alive if n != w)
        return {"reading": w, "reason": f"{w} is consistent and attained (every exponent pinned to its prediction); {why}",
                "evidence": evidence}
    pending = [n for n, e in evidence.items() if e["verdict"] == "inconclusive"]
    what = (f"a decision on {', '.join(pending)} (more seeds or a larger grid)" if pending else
            "exponents pinned tightly enough that one reading is attained and the other is not")
    return {"reading": "cannot tell yet", "reason": f"the readings differ in their predicted exponents, but {what} would tell them apart",
            "evidence": evidence}
