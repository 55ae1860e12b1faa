"""FVBS23: KKT points and GD limits generalize yet flip at sqrt(d/k) (FVBS23.thm.3_1, thm.4_2), while a
sqrt(d)-robust network exists (thm.4_1); and where does Theorem 4.2 apply?"""
from __future__ import annotations

import math
from typing import Any, Mapping

from ibcheck.simulate.reproductions.criteria import AtMost, Measured, Reported
from ibcheck.simulate.substrate.data import clusters
from ibcheck.simulate.substrate.measure import test_accuracy
from ibcheck.simulate.substrate.seeds import stream
from ibcheck.solvers.radius.universal import flip_rate, universal_directions, universal_radius
from ibcheck.theory import get_claim
from ibcheck.theory.window import applicability_window

COMPARES = ("FVBS23.thm.4_2", "FVBS23.thm.4_1")


def measure(quick: bool, known: Mapping[str, Any] | None = None) -> Measured:
    from ibcheck.simulate.reproductions import comparison, comparison_rows  # heavy: scipy (loaded on first use)
    from ibcheck.solvers.kkt.engine import Budget, search  # heavy: cvxpy (loaded on first use)

    R = Measured("FVBS23: KKT points and GD limits generalize but flip at sqrt(d/k); a sqrt(d)-robust network exists")
    for cid in COMPARES:
        # Theorem 4.2's comparison trains and certifies KKT points at every cell: the report's own, or one seed here
        kw = {"seeds": 1, "workers": 2} if quick and cid == "FVBS23.thm.4_2" else {}
        R.comparisons[cid.replace(".", "_")] = c = comparison(R, cid, quick, known or {}, **kw)
        comparison_rows(R, c, cid + ": {quantity} exponents (GD limits / construction)", "{kind}({expr})", first_only=True)
    d, k, n = 10, 4, 24
    ds = clusters(d, k, n, 0.3, seed=5)
    found = search(ds.X, ds.y, ds.cluster, (), Budget(gd=6), seed=5)  # the KKT engine: one policy, distinct points
    res = list(found.points)
    Xt, yt = ds.sample(500, stream("reproduction", 5))
    if res:
        errs = [1 - test_accuracy(net, Xt, yt) for net in res]
        v = universal_directions("fvbs23", means=ds.means, J_plus=ds.J_plus)
        rates = [flip_rate(universal_radius(net, Xt, yt, v), math.sqrt(d / k)) for net in res]
        R.add(f"KKT points (d={d}, k={k}, n={n}): test error (max)", "<= eps (FVBS23.thm.3_1)", float(max(errs)), AtMost(0.05),
              f"{len(res)} distinct KKT points (the KKT engine, certified at 1e-6)")
        R.add(f"KKT points: universal flip rate at ||z|| = sqrt(d/k) = {math.sqrt(d / k):.2f} (min)", ">= 1 - eps, for C of order 1",
              float(min(rates)), Reported(), "the theorem's constant C is unknown")
    w = applicability_window(get_claim("FVBS23.thm.4_2"), "d", {"k": str(k), "n": str(n), "eps": "0.1", "delta": "0.1"})
    inside = any(lo <= d and (hi is None or isinstance(hi, str) or d <= hi) for lo, hi in w.intervals)
    R.add(f"Theorem 4.2 applies at the simulated point d={d}, k={k}, n={n}?", "needs d in its window", "yes" if inside else "no", Reported(),
          f"window of d: {w.intervals or 'empty'} ({w.empty_because or 'binding ' + str(w.binding)}); "
          "the simulation is outside it, so it tests the scaling, not the theorem's guarantee")
    return R
