"""An experiment's assumption claims are part of "inside": FVBS23.asm.2_2 (its recalled forms, marked unverified) is
decided in log space at every FVBS23.thm.4_2 row, from the sample's measured means, and names the (d, k) rays it allows."""
from __future__ import annotations

from ibcheck.simulate.experiments.applicability import applicability
from ibcheck.simulate.experiments.base import Row
from ibcheck.simulate.experiments.registry import EXPERIMENTS
from ibcheck.theory import get_claim


def _rows(max_mean_ip: float, k: int = 4):
    exp = EXPERIMENTS["FVBS23.thm.4_2"]
    fixed = exp.fixed_at(True)
    rows = []
    for d in (256, 512, 1024):
        cell = {"d": d, "k": k}
        n = exp.settings_at({**fixed, **cell})["n"]
        rows.append(Row(cell, 0, "ok", {"max_mean_ip": max_mean_ip, "n": n}))
    return exp, fixed, rows


def test_assumption_2_2_enters_inside_and_is_marked_unverified():
    exp, fixed, rows = _rows(1e-12)
    app = applicability(get_claim("FVBS23.thm.4_2"), exp, rows, ["d", "k"], fixed)
    names = [h for h in app.hypotheses if h.startswith("FVBS23.asm.2_2")]
    assert names == ["FVBS23.asm.2_2 H1", "FVBS23.asm.2_2 H2", "FVBS23.asm.2_2 H3"]
    assert all(app.hypotheses[h]["unverified"] for h in names) and app.inside == 3
    assert "counted with forms marked unverified" in app.describe()
    # means far from orthogonal: max |<mu_i, mu_j>| = d at the largest cell breaks A1 (<= d / k) everywhere
    _, _, bad = _rows(1024.0)
    app_bad = applicability(get_claim("FVBS23.thm.4_2"), exp, bad, ["d", "k"], fixed)
    assert app_bad.inside == 0 and app_bad.hypotheses["FVBS23.asm.2_2 H1"]["fails"] == 3


def test_assumption_2_2_names_the_rays_it_allows():
    exp, fixed, rows = _rows(1e-12)
    app = applicability(get_claim("FVBS23.thm.4_2"), exp, rows, ["d", "k"], fixed)
    assert "FVBS23.asm.2_2 allows the rays k = d^beta with beta <= 0.5" in app.rays  # k <= C3 d^kappa, kappa = 1/2
    wider = applicability(get_claim("FVBS23.thm.4_2"), exp, rows, ["d", "k"], fixed, constants={"C3": 1e6})
    assert "beta <= 0.55" in wider.rays  # C3 = 1e6 admits beta <= 0.56 at d = 1e100: a constant shifts a finite check only
    assert applicability(get_claim("LPLL25.thm.nonrobust"), EXPERIMENTS["LPLL25.thm.nonrobust"], [], ["d", "k"]).rays == ""
