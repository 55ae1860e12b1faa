"""What the index counts as decided (issue 20, section 5), and which reading the data support (section 3)."""
from dataclasses import replace

import pytest

from ibcheck.simulate.experiments.base import Row
from ibcheck.simulate.verdict.kkt import KKTCell, ReadingInput, certified_everywhere, decide_reading
from ibcheck.simulate.verdict.rules import RowEvidence, counted


def counted_as_decided(r: dict, s: dict) -> tuple[bool, str]:
    """The counting rule on a row's typed evidence, built the way the index builds it from a comparison's record."""
    app = s.get("applicability") or {}
    kkt = None
    if "kkt" in s:
        inside = {tuple(sorted(c["cell"].items())) for c in app.get("cells", []) if c["inside"]}
        kkt = certified_everywhere(s["kkt"], inside)
    return counted(RowEvidence(r["verdict"], app.get("cells_inside", 0), app.get("cells_total", 0), r["trivial"], s["offsets"], kkt))


def _summary(inside, total, kkt=None, offsets="fit"):
    cells = [{"cell": {"d": i}, "inside": i < inside} for i in range(total)]
    s = {"applicability": {"cells_total": total, "cells_inside": inside, "cells": cells}, "offsets": offsets}
    if kkt is not None:
        s["kkt"] = tuple(KKTCell({"d": i}, 1, 0, 2, kkt[i], 0, None, None, None, None) for i in range(total))
    return s


def _result(verdict="consistent", trivial=None):
    return {"verdict": verdict, "trivial": trivial}


def test_an_extrapolated_row_is_never_counted():
    assert counted_as_decided(_result(), _summary(0, 15)) == (False, "extrapolated: 0/15 cells inside the hypotheses (at least 80% needed)")
    assert not counted_as_decided(_result("inconsistent"), _summary(7, 10))[0]
    assert counted_as_decided(_result(), _summary(8, 10))[0]  # 80% is enough
    assert counted_as_decided(_result("inconsistent"), _summary(10, 10))[0]
    assert not counted_as_decided(_result("inconclusive"), _summary(10, 10))[0]
    assert not counted_as_decided(_result(), {"applicability": None, "offsets": "fit"})[0]  # nothing known about the hypotheses


def test_trivial_known_offsets_and_uncertified_rows_are_not_counted():
    assert not counted_as_decided(_result(trivial="trivial: n = 1 at every cell"), _summary(3, 3))[0]
    assert not counted_as_decided(_result(), _summary(3, 3, offsets="known"))[0]
    ok, why = counted_as_decided(_result(), _summary(3, 3, kkt=[2, 1, 2]))
    assert ok and "certified KKT" in why
    assert not counted_as_decided(_result(), _summary(3, 3, kkt=[2, 0, 2]))[0]
    assert counted_as_decided(_result(), _summary(4, 5, kkt=[2, 1, 2, 1, 0]))[0]  # the uncertified cell is outside


def _fit(variable, estimate, lo, hi, predicted, margin=0.1):
    return {"variable": variable, "estimate": estimate, "decision_ci": [lo, hi], "predicted": predicted, "margin": margin}


def _res(quantity, reading, verdict, fits, kind="O", attained=None):
    return ReadingInput(f"{quantity}[{reading}]", quantity, reading, kind, verdict, tuple(fits), attained)


def test_the_attained_reading_is_supported_over_a_loose_one():
    results = [_res("eta", "eta_bound", "consistent", [_fit("d", 0.0, -0.05, 0.05, 0.5)], attained=False),
               _res("norm", "eta_bound", "consistent", [_fit("d", 0.5, 0.45, 0.55, 1.0)], attained=False),
               _res("norm", "norm_bound", "consistent", [_fit("d", 0.5, 0.45, 0.55, 0.5)], attained=True)]
    r = decide_reading(results)
    assert r.reading == "norm_bound" and "loose" in r.reason
    assert r.evidence["norm_bound"].attained and r.evidence["eta_bound"].loose
    # attainment undetermined on one side: no reading is preferred
    assert decide_reading([results[0], results[1], replace(results[2], attained=None)]).reading == "cannot tell yet"


def test_the_reading_rule_reads_attainment_from_the_function_test():
    """End to end: data following sqrt(d) support O(sqrt(d)) (attained) over O(d) (consistent, but the ratio falls)."""
    import math

    import numpy as np

    from ibcheck.simulate.experiments.design import BoundSpec
    from ibcheck.simulate.experiments.terms import term_spec
    from ibcheck.simulate.verdict.analysis import BoundAnalysis, analyze

    rng = np.random.default_rng(5)
    rows = [{"d": d, "seed": s, "value": d ** 0.5 * math.exp(0.05 * rng.standard_normal())} for d in (64, 128, 256, 512, 1024) for s in range(3)]
    out = []
    for reading, p in (("tight", 0.5), ("loose", 1.0)):
        an = analyze(rows, ["d"], "O", {"d": p}, bootstrap=False)
        spec = BoundSpec("q", "O", reading, f"d**{p}", term_spec(["d"], {"d": p}), "fit", None)
        out.append(ReadingInput.of(BoundAnalysis(spec, an)))
    assert [r.verdict for r in out] == ["consistent", "consistent"]
    assert [r.attained for r in out] == [True, False]
    r = decide_reading(out)
    assert r.reading == "tight" and "loose" in r.reason


def test_readings_rejected_undecided_or_absent():
    a = _res("q", "a", "inconsistent", [_fit("d", 1.0, 0.9, 1.1, 0.5)])
    b = _res("q", "b", "consistent", [_fit("d", 1.0, 0.95, 1.05, 1.0)])
    assert decide_reading([a, b]).reading == "b"
    assert decide_reading([a, replace(b, verdict="inconsistent")]).reading == "neither"
    pending = decide_reading([a, replace(b, verdict="inconclusive")])
    assert pending.reading == "cannot tell yet" and "b" in pending.reason
    assert decide_reading([b]) is None and decide_reading([replace(b, reading=None)]) is None


def test_ssttm18_upper_inside_h1_is_trivial_and_the_lower_bound_is_not():
    from ibcheck.simulate.compare.driver import _trivial
    from ibcheck.simulate.experiments.applicability import applicability
    from ibcheck.simulate.experiments.registry import EXPERIMENTS
    from ibcheck.theory import get_claim

    up, low = EXPERIMENTS["SSTTM18.cor.robust_upper"], EXPERIMENTS["SSTTM18.cor.robust_lower"]
    rows = [Row({"d": d}, 0, "ok", up.measure({**up.fixed, "d": d}, 0)) for d in up.quick_grid["d"]]
    assert all(r.value["robust_sample_threshold"] == 1.0 for r in rows)
    assert applicability(get_claim(up.claim), up, rows, ["d"], up.fixed).inside == len(rows)  # sigma <= d^(1/4)/32 holds
    assert _trivial(rows).startswith("trivial")
    lrows = [Row({"d": d}, 0, "ok", low.measure({**low.fixed, "d": d}, 0)) for d in low.quick_grid["d"][:2]]
    assert _trivial(lrows) is None and all(r.value["robust_sample_threshold"] > 1 for r in lrows)


def test_holm_across_the_index_rows():
    from ibcheck.simulate.verdict.rules import holm

    assert [r for r, _ in holm([0.001, 0.02, 0.04])] == [True, True, True]
    assert [lv for _, lv in holm([0.001, 0.02, 0.04])] == pytest.approx([0.05 / 3, 0.025, 0.05])
    assert [r for r, _ in holm([0.02, 0.03, 0.9])] == [False, False, False]  # 0.02 > 0.05 / 3: the step stops at once
    assert [r for r, _ in holm([0.9, 0.001, 0.3])] == [False, True, False]


def test_an_inconsistent_row_counts_only_at_the_family_level():
    import math

    import numpy as np

    from ibcheck.simulate.verdict.analysis import analyze

    rng = np.random.default_rng(0)
    rows = [{"d": d, "seed": s, "value": d ** 0.62 * math.exp(0.05 * rng.standard_normal())} for d in (2 ** i for i in range(6, 17))
            for s in range(3)]
    bad = analyze(rows, ["d"], "Theta", {"d": 0.5}, bootstrap=False).function
    good = analyze(rows, ["d"], "Theta", {"d": 0.62}, bootstrap=False).function
    assert bad.verdict == "inconsistent" and bad.p_violation < 0.05
    assert good.verdict == "consistent" and good.p_violation == 1.0
    ok, _ = counted(RowEvidence("inconsistent", 5, 5, family_rejected=True))
    no, why = counted(RowEvidence("inconsistent", 5, 5, family_rejected=False))
    assert ok and not no and "family level" in why
