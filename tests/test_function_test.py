"""The function test (issue 27): each case the fixed-band engine got wrong, and others of the same classes.

Every case is synthetic data with a known truth, drawn with a fixed seed; the old per-term band verdict
(``term_verdict``, kept as a description) is asserted beside the new one where it was wrong, so that a test fails if
the engine slides back."""
from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

import ibcheck
from ibcheck.simulate.verdict.analysis import analyze
from ibcheck.simulate.verdict.function_test import TARGET


def _rows(f, ds, seeds=3, sd=0.05, seed=0, var="d"):
    rng = np.random.default_rng(seed)
    return [{var: x, "seed": s, "value": f(x) * math.exp(sd * rng.standard_normal())} for x in ds for s in range(seeds)]


def _pow2(lo, hi, step=1):
    return [2 ** i for i in range(lo, hi + 1, step)]


def test_a_missing_log_factor_does_not_pass():
    """sqrt(d)/log d against Theta(sqrt(d)) over d = 2^14..2^24: the band engine passed it (power 0.42 in 0.5 +- 0.1).
    It is not consistent; nor is it inconsistent here, since a true claim may carry a correction as slow as d^-0.3 and
    the nearest such curve, sqrt(d) (1 + 56 d^-0.3)^(1/2), lies 0.97 noise units from it at this design: no test that
    calls that true curve inconsistent at most 5% of the time rejects this one in more than 25% of trials
    (simulate.stats.separation.nearest_corrected). Over 2^14..2^40 the design tells them, and it is rejected."""
    from ibcheck.simulate.stats.separation import nearest_corrected

    an = analyze(_rows(lambda d: d ** 0.5 / math.log(d), _pow2(14, 24, 2)), ["d"], "Theta", {"d": 0.5}, bootstrap=False)
    assert an.term_verdict == "consistent"  # the old engine
    assert an.verdict == "inconclusive" and "correction to scaling" in an.reason, an.reason
    d = 2.0 ** np.arange(14, 25, 2)
    assert nearest_corrected(-np.log(np.log(d)), d, 3, 0.05, 0.3).delta < 1.645  # below any 5% test's threshold
    wide = analyze(_rows(lambda d: d ** 0.5 / math.log(d), _pow2(14, 40, 2)), ["d"], "Theta", {"d": 0.5}, bootstrap=False)
    assert wide.verdict == "inconsistent" and "log d" in wide.reason, wide.reason


def test_a_missing_log_log_factor_is_caught_where_the_claim_states_log_factors():
    """A claim with a log-log factor is tested against (log log x)^delta too; dropping that factor from the data is
    seen over d = 2^4..2^40 (log log d from 1.0 to 3.3)."""
    ds = _pow2(4, 40, 4)
    good = analyze(_rows(lambda d: d ** 0.5 * math.log(math.log(d)), ds), ["d"], "Theta", {"d": 0.5, "log(log(d))": 1.0},
                   bootstrap=False)
    assert "loglog" in good.function.resolution["d"]
    assert good.verdict == "consistent", good.reason
    bad = analyze(_rows(lambda d: d ** 0.5, ds), ["d"], "Theta", {"d": 0.5, "log(log(d))": 1.0}, bootstrap=False)
    assert bad.verdict == "inconsistent", bad.reason


def test_a_true_log_factor_claim_is_decided_over_two_decades():
    """Theta(sqrt(d)/log d) on its own data over d = 64..4096 with 3 seeds: the band engine waited for the power to be
    pinned (CI [-0.07, 0.79]) and was inconclusive."""
    rows = _rows(lambda d: d ** 0.5 / math.log(d), _pow2(6, 12))
    an = analyze(rows, ["d"], "Theta", {"d": 0.5, "log(d)": -1.0}, bootstrap=False)
    assert an.term_verdict == "inconclusive"
    assert an.verdict == "consistent", an.reason
    res = an.function.resolution["d"]
    assert res["log"] <= TARGET and 0 < res["power"] < 0.1
    # and O(sqrt(d) log d) on the same scale of data, one decade: consistent too (the band engine: inconclusive)
    o = analyze(_rows(lambda d: d ** 0.5 * math.log(d), [100, 200, 400, 800, 1600]), ["d"], "O", {"d": 0.5, "log(d)": 1.0}, bootstrap=False)
    assert o.verdict == "consistent", o.reason


def test_a_wrong_power_is_rejected():
    """d^0.62 against Theta(sqrt(d)): the band engine's CI overlapped 0.5 +- 0.1 and it stayed inconclusive."""
    an = analyze(_rows(lambda d: d ** 0.62, _pow2(6, 16)), ["d"], "Theta", {"d": 0.5}, bootstrap=False)
    assert an.verdict == "inconsistent", an.reason
    # an upper bound that the data exceed by d^0.12 is rejected the same way; a lower bound it exceeds is not
    assert analyze(_rows(lambda d: d ** 0.62, _pow2(6, 16)), ["d"], "O", {"d": 0.5}, bootstrap=False).verdict == "inconsistent"
    assert analyze(_rows(lambda d: d ** 0.62, _pow2(6, 16)), ["d"], "Omega", {"d": 0.5}, bootstrap=False).verdict == "consistent"


def test_a_loose_bound_is_consistent_and_not_attained():
    """eps^3 against O(eps^2) as eps -> 0: the band engine refused it ("no power"); a bound that holds with room holds."""
    rows = _rows(lambda e: e ** 3, [2.0 ** -i for i in range(1, 9)], var="eps")
    an = analyze(rows, ["eps"], "O", {"eps": 2.0}, bootstrap=False, toward_zero=frozenset({"eps"}))
    assert an.term_verdict == "inconclusive"
    assert an.verdict == "consistent", an.reason
    assert an.function.attained is False and "loose" in an.reason
    tight = analyze(_rows(lambda e: e ** 2, [2.0 ** -i for i in range(1, 9)], var="eps"), ["eps"], "O", {"eps": 2.0}, bootstrap=False,
                    toward_zero=frozenset({"eps"}))
    assert tight.verdict == "consistent" and tight.function.attained is True
    # the mirror: O(eps^3) on eps^2 data is violated (the data are larger as eps -> 0)
    bad = analyze(_rows(lambda e: e ** 2, [2.0 ** -i for i in range(1, 9)], var="eps"), ["eps"], "O", {"eps": 3.0}, bootstrap=False,
                  toward_zero=frozenset({"eps"}))
    assert bad.verdict == "inconsistent"


@pytest.mark.parametrize("b, w", [(3.0, 0.5), (-0.5, 1.0), (-0.5, 0.3), pytest.param(1.0, 0.3, marks=pytest.mark.slow),
                                  pytest.param(1.0, 1.0, marks=pytest.mark.slow), pytest.param(3.0, 1.0, marks=pytest.mark.slow)])
# (-0.5, 0.3): the slowest correction a true claim may carry (MIN_DECAY), from below, where it reads as an extra log
def test_a_vanishing_correction_is_not_called_a_violation(b, w):
    """sqrt(d) (1 + b d^-w) against Theta(sqrt(d)) over d = 16..2048: over 6 draws, never inconsistent."""
    verdicts = [analyze(_rows(lambda d: d ** 0.5 * (1 + b * d ** -w), _pow2(4, 11), seed=s), ["d"], "Theta", {"d": 0.5},
                        bootstrap=False).verdict for s in range(6)]
    assert "inconsistent" not in verdicts, verdicts


def test_a_correction_that_levels_off_is_named_and_decided():
    # 1 + 6/d (was 3/d: at alpha/2, the level since the upper half of the range is tested too, that slope is no longer
    # significant, so no correction is needed to call it consistent)
    an = analyze(_rows(lambda d: d ** 0.5 * (1 + 6.0 / d), _pow2(4, 11)), ["d"], "Theta", {"d": 0.5}, bootstrap=False)
    assert an.verdict == "consistent", an.reason
    c = an.as_json()["correction"]
    assert c is not None and c["levels_off"], c


def test_a_non_vanishing_deviation_is_not_excused():
    """sqrt(d) (log d)^-1/2 against Theta(sqrt(d)): a correction to scaling must not absorb it. Over d = 2^4..2^24 it is
    inconsistent. Over 2^4..2^16 the design tells corrections down to d^-1/4 from a whole log factor, so they are tried
    (simulate.verdict.function_test.slowest_decay), and one of them, (1 + b d^-0.25)^2, describes a half log factor about
    as well: undecided there (it was inconsistent when nothing slower than d^-1/2 was tried), never consistent."""
    wide = analyze(_rows(lambda d: d ** 0.5 / math.log(d) ** 0.5, _pow2(4, 24)), ["d"], "Theta", {"d": 0.5}, bootstrap=False)
    assert wide.verdict == "inconsistent", wide.reason
    mid = analyze(_rows(lambda d: d ** 0.5 / math.log(d) ** 0.5, _pow2(4, 16)), ["d"], "Theta", {"d": 0.5}, bootstrap=False)
    # the resolution rule alone leaves it open; the intersection-union test (issue 57) rejects (log d)^+-0.62 (as far as
    # a factor of log log d moves over this range) but not the claim times (log log d)^-1, which follows the half log
    # factor here: not confirmed (it was, with the margin stated, before the log-log alternative was added)
    assert mid.verdict == "inconclusive", mid.reason
    for s in range(5):
        narrow = analyze(_rows(lambda d: d ** 0.5 / math.log(d) ** 0.5, _pow2(4, 9), seed=s), ["d"], "Theta", {"d": 0.5}, bootstrap=False)
        assert narrow.verdict != "consistent", narrow.reason
    # a ratio that keeps falling (a missing power) is not excused either: over 2^4..2^16 it beats every correction down
    # to d^-0.3 at the family's max-T level (0.01 here; it was undecided at Bonferroni's 0.0063, "a wider range of d
    # would" tell, with a slow correction describing it about as well), and over 2^4..2^24 as well
    short = analyze(_rows(lambda d: d ** 0.45, _pow2(4, 16)), ["d"], "Theta", {"d": 0.5}, bootstrap=False)
    assert short.verdict == "inconsistent" and "beyond every correction to scaling that decays like d^-0.3" in short.reason, short.reason
    assert analyze(_rows(lambda d: d ** 0.45, _pow2(4, 24)), ["d"], "Theta", {"d": 0.5}, bootstrap=False).verdict == "inconsistent"


def test_two_variables_are_tested_along_the_window_rays():
    rows = []
    rng = np.random.default_rng(1)
    for d in (256, 512, 1024, 2048, 4096):
        for k in (2, 4, 8, 16, 32, 64):
            if k * k <= d:
                rows += [{"d": d, "k": k, "seed": s, "value": d ** 0.5 / k ** 0.5 * math.exp(0.05 * rng.standard_normal())} for s in range(3)]
    an = analyze(rows, ["d", "k"], "Theta", {"d": 0.5, "k": -0.5}, bootstrap=False)
    rays = [t for t in an.function.tests if len(t.variables) == 2 and t.family == "power" and not t.part]  # whole range
    assert {t.direction for t in rays} == {"k = d^0.0833", "k = d^0.5"}  # the smallest and largest log k / log d of the cells
    assert an.verdict == "consistent", an.reason
    # k's exponent wrong: the k direction (and the rays through it) reject it
    bad = analyze([dict(r, value=r["value"] * r["k"] ** 0.3) for r in rows], ["d", "k"], "Theta", {"d": 0.5, "k": -0.5}, bootstrap=False)
    assert bad.verdict == "inconsistent", bad.reason
    assert any(t.violates("Theta") for t in bad.function.tests if t.direction == "k = d^0.5")


def test_an_explicit_tolerance_replaces_the_resolution():
    rows = _rows(lambda d: d ** 0.55, _pow2(6, 14))
    assert analyze(rows, ["d"], "Theta", {"d": 0.5}, bootstrap=False).verdict == "inconsistent"
    lenient = analyze(rows, ["d"], "Theta", {"d": 0.5}, bootstrap=False, margin=0.2, margin_log=2.0)
    assert lenient.verdict == "consistent", lenient.reason
    assert "tolerance" in lenient.reason and lenient.function.test_json()["tolerance"] == {"power": 0.2, "log": 2.0, "loglog": 4.0}


def test_the_resolution_and_its_keys_reach_summary_json(tmp_path, cli):
    path = tmp_path / "d.csv"
    rng = np.random.default_rng(2)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["d", "seed", "value"])
        for d in _pow2(6, 12):
            for s in range(3):
                w.writerow([d, s, d ** 0.5 / math.log(d) * math.exp(0.05 * rng.standard_normal())])
    out = tmp_path / "out"
    cli("verdict", "--data", str(path), "--predict", "d=0.5,log(d)=-1", "--kind", "Theta", "--out", str(out), check_rc=0)
    s = json.loads((out / "summary.json").read_text())
    b = s["results"][0]
    assert b["verdict"] == "consistent"
    assert set(b["resolution"]["d"]) == {"power", "log"} and b["resolution"]["d"]["log"] < 1
    assert b["test"]["statistic"].startswith("r = log(measure)") and b["test"]["directions"] == ["d"]
    assert b["attained"] is True and b["correction"] is None
    assert "fits" in b and "reason" in b


def test_the_api_rejects_a_bad_tolerance():
    with pytest.raises(ibcheck.InputError, match="margin"):
        ibcheck.verdict("nonexistent.csv", predict="d=0.5", kind="Theta", margin=-1.0)


def test_budgets_buy_resolution_where_it_limits():
    """Section 6: a correction that cannot be told from a deviation asks for a wider range (the grid is extended);
    a noisy sweep whose resolution misses its target by a little asks for seeds."""
    from ibcheck.simulate.sweep.tasks import cell_key
    from ibcheck.simulate.verdict.rounds import plan_round

    ds = _pow2(4, 12)
    # seed 1: at seed 0 the upper half (d >= 256) alone resolves its own, looser, target at the max-T level (d^0.076
    # against d^0.077) and reads the whole range's move as a transient: consistent there (9 of 200 seeds at the max-T
    # level, 12 of 200 at Bonferroni's: a weakness of the upper-half rule, docs/verdict.md)
    unsure = analyze(_rows(lambda d: d ** 0.45, ds, seed=1), ["d"], "Theta", {"d": 0.5}, bootstrap=False)
    assert unsure.verdict == "inconclusive" and unsure.open_exponents() == [("d", True)]
    design = {cell_key({"d": d}): 3 for d in ds}
    plan = plan_round([(unsure.fit.cells, unsure.terms, v, ext) for v, ext in unsure.open_exponents()], design, ["d"],
                      lambda c: 0.01, 100.0, {"d": 2 ** 20}, 3, False)
    assert plan.extended == {"d": 2 ** 13}
    noisy = analyze(_rows(lambda d: d ** 0.5, [64, 128, 256], seeds=2, sd=0.3, seed=4), ["d"], "Theta", {"d": 0.5}, bootstrap=False)
    assert noisy.verdict == "inconclusive" and "resolution" in noisy.reason
    assert all(v == "d" for v, _ in noisy.open_exponents())
    # a decided bound asks for nothing
    assert analyze(_rows(lambda d: d ** 0.5, ds), ["d"], "Theta", {"d": 0.5}, bootstrap=False).open_exponents() == []
