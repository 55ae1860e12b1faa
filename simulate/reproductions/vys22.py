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
    from ibcheck.solvers.kkt.search import kkt_search, random_start  # heavy: scipy (loaded on first use)

    R = Measured("VYS22: universal flipping perturbation of nets trained on random sphere data; which reading holds?")
    R.comparisons["compare"] = c = comparison(R, "VYS22.thm.main", quick, known or {})
    comparison_rows(R, c, "{quantity}{reading}", "O({expr})")
    rd = c.record.reading
    chosen = rd.reading if rd is not None and rd.reading not in ("cannot tell yet", "neither") else None
    R.add("reading supported by the data (the reading rule: consistent, and attained where the other is loose)", "ambiguous in the sources",
          chosen or "undecided", Judged("consistent" if chosen else "inconclusive", "the readings' comparisons"),
          rd.reason if rd is not None else "no reading decided")
    # cross-check at small n: KKT points of (P) found by the search
    ds = sphere(20, 6, seed=3)
    g = np.random.default_rng(3)
    res = kkt_search(ds.X, ds.y, [(f"r{i}", random_start(20, 6, g)) for i in range(4)])
    v = universal_directions("vys22", X_train=ds.X, y_train=ds.y)
    norms = [float(universal_radius(r.net, ds.X, ds.y, v).max()) for r in res if r.certificate.is_kkt(1e-5)]
    R.add("KKT points at d=20, n=6: universal norm flipping every training point (median)", "o(sqrt(d)) = o(4.47)",
          float(np.median(norms)) if norms else None, AtMost(math.sqrt(20)) if norms else Reported(),
          f"{len(norms)} certified KKT points of {len(res)} starts")
    return R
