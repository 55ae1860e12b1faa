"""VYS22: networks trained on random sphere data are flipped by a universal perturbation; which of the
two readings of the bound holds (VYS22.thm.main)? Cross-checked on certified KKT points of (P)."""
from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from ibcheck.simulate.reproductions.criteria import AtMost, Judged, Measured, Reported
from ibcheck.simulate.substrate.data import sphere
from ibcheck.solvers.radius.universal import universal_directions, universal_radius

COMPARES = ("VYS22.thm.main",)


def measure(quick: bool, known: Mapping[str, Any] | None = None) -> Measured:
    from ibcheck.simulate.reproductions import comparison, comparison_rows  # heavy: scipy (loaded on first use)
    from ibcheck.solvers.kkt.engine import Budget, search  # heavy: cvxpy (loaded on first use)

    R = Measured("VYS22: universal flipping perturbation of nets trained on random sphere data; which reading holds?")
    R.comparisons["compare"] = c = comparison(R, "VYS22.thm.main", quick, known or {})
    comparison_rows(R, c, "{quantity}{reading}", "O({expr})")
    rd = c.record.reading
    chosen = rd.reading if rd is not None and rd.reading not in ("cannot tell yet", "neither") else None
    R.add("reading supported by the data (the reading rule: consistent, and attained where the other is loose)", "ambiguous in the sources",
          chosen or "undecided", Judged("consistent" if chosen else "inconclusive", "the readings' comparisons"),
          rd.reason if rd is not None else "no reading decided")
    # cross-check at small n: the KKT points of (P) the engine finds (the one policy: certified at 1e-6, distinct points)
    ds = sphere(20, 6, seed=3)
    res = search(ds.X, ds.y, None, (), Budget(gd=6, width=6), seed=3)
    v = universal_directions("vys22", X_train=ds.X, y_train=ds.y)
    norms = [float(universal_radius(net, ds.X, ds.y, v).max()) for net in res.points]
    R.add("KKT points at d=20, n=6: universal norm flipping every training point (median over distinct points)", "o(sqrt(d)) = o(4.47)",
          float(np.median(norms)) if norms else None, AtMost(math.sqrt(20)) if norms else Reported(),
          f"{res.distinct} distinct KKT points from {len(res.candidates)} candidates (the KKT engine)")
    return R
