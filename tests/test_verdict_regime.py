"""Issue 36: verdicts in the theorem's own regime. Synthetic data with known truth, fixed seeds; each test fails if its
class of error comes back."""
from __future__ import annotations

import math

import numpy as np

from ibcheck.simulate.verdict.analysis import analyze


def _grid_rows(f, ds=(64, 128, 256, 512, 1024, 2048, 4096, 8192), ks=(2, 4, 8), seeds=3, sd=0.15, seed=0, inside=None):
    rng = np.random.default_rng(seed)
    return [{"d": d, "k": k, "seed": s, "value": f(d, k) * math.exp(sd * rng.standard_normal())}
            for d in ds for k in ks if inside is None or inside(d, k) for s in range(seeds)]


def test_a_capped_correction_on_a_large_transient_is_cannot_tell_never_a_violation():
    """A true Omega(sqrt(d/k)) whose ratio starts 5.7x above its limit (1 + 300/d): no correction within its cap (x3 at
    the smallest scale) levels it, and no steady deviation fits it either (it flattens): undecided, said so. Before,
    'keeps moving' against the capped correction made it inconsistent."""
    rows = _grid_rows(lambda d, k: 3 * math.sqrt(d / k) * (1 + 300 / d))
    an = analyze(rows, ["d", "k"], "Omega", {"d": 0.5, "k": -0.5}, bootstrap=False, extrapolate=False)
    assert an.verdict == "inconclusive", an.reason
    assert "cap" in an.reason and "never a violation" in an.reason and "--from d=" in an.reason
    assert any(c.capped for c in an.function.corrections)
    # the same claim tested past the transient (the user's --from) is not inconsistent
    late = analyze(rows, ["d", "k"], "Omega", {"d": 0.5, "k": -0.5}, bootstrap=False, extrapolate=False, restriction={"d": 1024})
    assert late.verdict != "inconsistent", late.reason


def test_a_deviation_beyond_the_cap_that_fits_a_steady_move_is_a_violation_and_says_the_cap():
    """sqrt(d) k^-0.5 times d^0.3 against Theta: a steady deviation fits, every correction within its cap fails; the
    violation stands, and its reason names the capped correction and the --from check."""
    rows = _grid_rows(lambda d, k: 3 * math.sqrt(d / k) * d ** 0.3, sd=0.05)
    an = analyze(rows, ["d", "k"], "Theta", {"d": 0.5, "k": -0.5}, bootstrap=False, extrapolate=False)
    assert an.verdict == "inconsistent", an.reason
    assert "within its cap" in an.reason and "lack-of-fit p" in an.reason and "--from d=" in an.reason


def test_an_additive_constant_is_a_correction_in_the_claims_own_scale():
    """flip = 0.99 sqrt(d/k) + 1.47 (measured on FVBS23) inside k <= sqrt(d), against O(sqrt(d/k)): along d the ratio
    falls, and the correction y = g (c + b g^-1) in g = sqrt(d/k) levels it off; per-variable shapes d^-w alone left
    it moving. No violation."""
    rows = _grid_rows(lambda d, k: 0.99 * math.sqrt(d / k) + 1.47, ds=(64, 128, 256, 512, 1024, 2048, 4096), ks=(2, 4, 8, 16),
                      sd=0.05, inside=lambda d, k: k * k <= d)
    an = analyze(rows, ["d", "k"], "O", {"d": 0.5, "k": -0.5}, bootstrap=False, extrapolate=False)
    assert an.verdict != "inconsistent", an.reason
    along_d = [c for c in an.function.corrections if c.variable == "d"]
    assert along_d and all("g(x)" in c.term and c.decision == "levels off" for c in along_d), [c.term for c in along_d]


def test_log_corrections_only_where_the_claim_states_a_log_factor():
    """A power-law claim is corrected by powers only: a (1 + b / log d) correction mimics a missing power over decades.
    A claim with a log factor may be corrected by logs."""
    rows = _grid_rows(lambda d, k: 3 * math.sqrt(d / k) * (1 + 3 / math.log(d)), sd=0.05)
    plain = analyze(rows, ["d", "k"], "Theta", {"d": 0.5, "k": -0.5}, bootstrap=False, extrapolate=False)
    assert plain.function.corrections and not any("log(" in c.term for c in plain.function.corrections)
    from ibcheck.simulate.stats.ratio import LOG_CORRECTIONS
    from ibcheck.simulate.verdict.function_test import function_test
    assert LOG_CORRECTIONS  # the family exists, and is used on request:
    asked = function_test(rows, ["d", "k"], "Theta", {"d": 0.5, "k": -0.5}, plain.terms, log_corrections=True)
    assert any("log(" in c.term for c in asked.corrections)


def _exp_claim(tmp_path, cid: str, bound: str, latex: bool = False) -> None:
    import ibcheck

    arg = f'latex=r"{bound}"' if latex else f'expr="{bound}"'
    (tmp_path / f"{cid.replace('.', '_')}.py").write_text(
        "import ibcheck\n"
        f'ibcheck.register(ibcheck.Claim(id="{cid}", variables=["n", "d"], constants=["c"], '
        f'bounds=[ibcheck.Bound("test_error", "O", {arg})]))\n')
    ibcheck.load_claims(str(tmp_path / f"{cid.replace('.', '_')}.py"))


def _exp_csv(tmp_path, f, seed=0) -> str:
    rng = np.random.default_rng(seed)
    rows = ["n,d,seed,value"]
    for n in (40, 80, 160, 320, 640):
        for d in (100, 200, 400):
            for s in range(3):
                rows.append(f"{n},{d},{s},{f(n, d) * math.exp(0.05 * rng.standard_normal())!r}")
    path = tmp_path / f"exp{seed}.csv"
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def test_an_exp_type_bound_is_tested_on_log_one_over_y(tmp_path, isolated_registry):
    """test_error <= exp(-c n / d) (was refused: "no power-law exponents to fit"): tested as log(1/y) >= c n/d - log A,
    an Omega bound on log(1/y) with h = n/d. True data (A = 2, c = 3) are not inconsistent; data whose exponent grows
    only as sqrt(n)/d are inconsistent. LaTeX input gives the same bound."""
    import ibcheck

    _exp_claim(tmp_path, "EXP26.thm.1", "exp(-c*n/d)")
    good = ibcheck.verdict(_exp_csv(tmp_path, lambda n, d: 0.5 * math.exp(-3 * n / d)), claim="EXP26.thm.1", quantity="test_error")
    b = good.bounds[0]
    assert b.label.startswith("log(1/test_error)") and b.kind == "Omega", (b.label, b.kind)
    assert good.verdict != "inconsistent", b.reason
    bad = ibcheck.verdict(_exp_csv(tmp_path, lambda n, d: 0.5 * math.exp(-3 * math.sqrt(n) / d), seed=1), claim="EXP26.thm.1",
                          quantity="test_error")
    assert bad.verdict == "inconsistent", bad.bounds[0].reason
    _exp_claim(tmp_path, "EXP26.thm.2", r"\exp\left(-c\,\frac{n}{d}\right)", latex=True)
    tex = ibcheck.verdict(_exp_csv(tmp_path, lambda n, d: 0.5 * math.exp(-3 * n / d)), claim="EXP26.thm.2", quantity="test_error")
    assert tex.bounds[0].kind == "Omega" and tex.verdict == good.verdict


def test_the_window_cone_of_fvbs23_bounds_k_alone_and_admits_the_rays_it_states():
    from ibcheck.theory import get_claim
    from ibcheck.theory.cone import claim_cone

    claims = [get_claim("FVBS23.thm.4_2"), get_claim("FVBS23.asm.2_2")]
    cone = claim_cone(claims, ["d", "k"], held={"d": 512, "k": 2}, values={"kappa": 0.5})
    assert cone.alone == {"d": True, "k": False}
    assert cone.rays[("d", "k")] == (0.0, 0.5)  # k = d^1/2 is on the boundary, admitted exactly
    assert claim_cone(claims, ["d", "k"], held={"d": 512, "k": 2}, values={"kappa": 0.25}).rays[("d", "k")] == (0.0, 0.25)
    # thm.4_2's own hypotheses speak of n (picked per cell by the design): they do not bound the directions
    assert claim_cone(claims[:1], ["d", "k"], held={"d": 512, "k": 2}) is None


def _fvbs_like(f, sd=0.05, seed=0):
    return _grid_rows(f, ds=(64, 128, 256, 512, 1024, 2048, 4096), ks=(2, 4, 8, 16), sd=sd, seed=seed, inside=lambda d, k: k * k <= d)


def _fvbs_cone():
    from ibcheck.theory import get_claim
    from ibcheck.theory.cone import claim_cone
    return claim_cone([get_claim("FVBS23.thm.4_2"), get_claim("FVBS23.asm.2_2")], ["d", "k"], held={"d": 64, "k": 2}, values={"kappa": 0.5})


def test_a_bounded_direction_is_reported_and_does_not_decide():
    """0.99 sqrt(d/k) + 1.47 against O(sqrt(d/k)) inside k <= sqrt(d) (FVBS23's measured shape): along k alone, which
    the window bounds, the ratio rises (the constant grows relative to sqrt(d/k) as k grows at fixed d) and decided
    'cannot tell'; along d and the admissible rays the correction in g levels it off. With the cone it is consistent,
    and k alone is reported as bounded."""
    rows = _fvbs_like(lambda d, k: 0.99 * math.sqrt(d / k) + 1.47)
    without = analyze(rows, ["d", "k"], "O", {"d": 0.5, "k": -0.5}, bootstrap=False, extrapolate=False)
    assert without.verdict == "inconclusive" and "along k" in without.reason, without.reason
    an = analyze(rows, ["d", "k"], "O", {"d": 0.5, "k": -0.5}, bootstrap=False, extrapolate=False, cone=_fvbs_cone())
    assert an.verdict == "consistent", an.reason
    assert any(t.bounded and t.direction == "k" for t in an.function.tests)
    assert any("k is a direction the window bounds" in n and "not deciding" in n for n in an.function.notes)
    assert not any(t.bounded for t in an.function.tests if t.direction.startswith("k = d^"))


def test_a_wrong_exponent_is_caught_along_the_admissible_rays():
    """sqrt(d) k^-0.25 against Theta(sqrt(d/k)) inside k <= sqrt(d): k alone does not decide, the rays do."""
    rows = _fvbs_like(lambda d, k: 3 * math.sqrt(d) * k ** -0.25)
    an = analyze(rows, ["d", "k"], "Theta", {"d": 0.5, "k": -0.5}, bootstrap=False, extrapolate=False, cone=_fvbs_cone())
    assert an.verdict == "inconsistent", an.reason
    assert "along k = d^" in an.reason


def _trajectory(f, ts, runs=3, sd=0.02, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for r in range(runs):
        level, e = 0.1 * rng.standard_normal(), 0.0
        for t in ts:
            e = 0.9 * e + sd * rng.standard_normal()
            rows.append({"t": t, "seed": r, "run": r, "value": f(t) * math.exp(level + e)})
    return rows


def test_the_asymptotic_end_decides_past_a_transient():
    """t^-1 data (1/(t + 5), 1000 steps) against O(t^-5/4): inconsistent (the issue saw it inconclusive, the first steps
    reading as a correction), with the upper half of the range tested beside the whole; the true O(t^-1) on the same
    data is never inconsistent: its start is beyond any correction's cap, which is undecided, never a violation."""
    rows = _trajectory(lambda t: 1 / (t + 5), [float(t) for t in range(1, 1001)])
    an = analyze(rows, ["t"], "O", {"t": -1.25}, trajectory=True, bootstrap=False, extrapolate=False)
    assert an.verdict == "inconsistent", an.reason
    assert any(t.part for t in an.function.tests) and an.function.test_json()["upper_half"].startswith("t >= ")
    ok = analyze(rows, ["t"], "O", {"t": -1.0}, trajectory=True, bootstrap=False, extrapolate=False)
    assert ok.verdict != "inconsistent", ok.reason


def test_a_late_rise_is_a_violation_of_an_upper_bound():
    """d^0.5 times a ratio that falls over the first half of the range and rises over the second (a minimum at
    d = 2^10): against O(sqrt(d)) the whole range's slope falls, the upper half rises: inconsistent there."""
    f = lambda d: math.sqrt(d) * math.exp(0.04 * (math.log2(d) - 10) ** 2)  # noqa: E731
    rows = [{"d": 2.0 ** i, "seed": s, "value": f(2.0 ** i) * math.exp(0.03 * z)}
            for i in range(4, 17) for s, z in enumerate(np.random.default_rng(3).standard_normal(3))]
    an = analyze(rows, ["d"], "O", {"d": 0.5}, bootstrap=False, extrapolate=False)
    assert an.verdict == "inconsistent" and "asymptotic end" in an.reason, an.reason


def test_a_trajectory_grid_keeps_every_run_of_every_cell():
    """n = {20, 40} x 3 seeds along t: six runs, not three (runs were keyed by the seed alone, so the cells' runs merged
    and the fit read 2 degrees of freedom)."""
    from types import SimpleNamespace

    from ibcheck.simulate.experiments.base import Row
    from ibcheck.simulate.sweep.measurements import Measurements

    exp = SimpleNamespace(trajectory=True, description="toy")
    rows = [Row({"n": n}, s, "ok", {"trajectory": [{"T": float(t), "train_loss": 1.0 / (n * t)} for t in range(1, 40)]})
            for n in (20, 40) for s in range(3)]
    meas = Measurements.from_store(exp, rows, "train_loss", ["T"], cell_variables=["n"])
    runs = {r["run"] for r in meas.fit_rows(["T"])}
    assert len(runs) == 6 and "n=20, seed 0" in runs
    an = analyze(meas.fit_rows(["T"]), ["T"], "O", {"T": -1.0}, trajectory=True, bootstrap=False, extrapolate=False)
    assert an.fit.runs == 6 and an.fit.df == 5


def test_a_bound_term_in_a_variable_not_fitted_is_named_as_untested():
    from ibcheck.simulate.experiments.design import bound_specs
    from ibcheck.theory.claim import Bound, Claim
    from ibcheck.theory.variables import T as T_VAR
    from ibcheck.theory.variables import n as N_VAR

    c = Claim(id="TRJ26.thm.1", variables=(T_VAR, N_VAR), bounds=(Bound("train_loss", "O", "log(n)/T"),))
    spec = bound_specs(c, ["T"])[0]
    assert spec.untested == ("n",) and spec.untested_note() is None  # n held fixed: the sweep does not vary it
    assert "terms in n are not tested" in spec.untested_note({"n"}, trajectory=True)
    assert bound_specs(c, ["T", "n"])[0].untested == ()


def test_the_step_halving_control_keeps_only_points_that_follow_the_flow():
    """A run whose half-step control agrees at equal T is inside; where the step has grown past the flow (the loss at
    eta/2 lags by more than 5% of the loss), outside; beyond the control's reach, unresolved. The comparison's reason
    states the counts."""
    from ibcheck.simulate.compare.driver import flow_note
    from ibcheck.simulate.experiments.base import Row
    from ibcheck.simulate.experiments.trajectories import _flow_kept, follows_flow

    main = [(t, -2.0 * t) for t in (1.0, 2.0, 3.0, 4.0, 5.0)]
    half = [(t, -2.0 * t) for t in (0.5, 1.0, 2.0, 3.0)] + [(3.5, -6.2)]  # agrees to T = 3, lags after
    assert follows_flow(main, half) == [True, True, True, None, None]
    lagging = [(t, -2.0 * t if t <= 3 else -1.8 * t) for t in (0.5, 1.0, 2.0, 3.0, 4.0, 5.0)]
    assert follows_flow(main, lagging) == [True, True, True, False, False]
    kept, rec = _flow_kept([{"i": i} for i in range(5)], follows_flow(main, lagging))
    assert [r["i"] for r in kept] == [0, 1, 2] and rec["outside"] == 2 and rec["inside"] == 3
    note = flow_note([Row({"run": 0}, 0, "ok", {"flow_control": rec}), Row({"run": 0}, 1, "ok", {"flow_control": rec})])
    assert note.startswith("step-halving control") and "6 of 10 points follow the flow" in note and "4 outside" in note


def test_the_step_halving_control_holds_the_loss_itself_within_its_tolerance_and_a_run_does_not_return():
    """LL20's runs at eta and eta/2 differ by 0.47 decades at a loss of 1e-350: outside, though that is within 1% of
    |log10 loss| (the old rule, which let those rows decide the verdict). The tolerance is on the loss (5%), the same at
    every depth; and a run that disagreed once stays outside where the two runs cross again."""
    from ibcheck.simulate.experiments.trajectories import follows_flow

    deep = [(345.0, -349.0)]
    assert follows_flow(deep, [(300.0, -303.53), (400.0, -403.53)]) == [False]  # 0.47 decades apart
    assert follows_flow(deep, [(300.0, -303.99), (400.0, -404.01)]) == [True]  # 0.01 decades: 2.3%
    assert follows_flow([(2.0, -2.0)], [(1.0, -1.03), (3.0, -3.03)]) == [False]  # 0.03 decades = 7% of the loss
    main = [(t, -t) for t in (1.0, 2.0, 3.0, 4.0)]
    crossing = [(1.0, -1.0), (2.0, -2.1), (3.0, -3.0), (4.0, -4.0)]  # apart at T = 2, together again after
    assert follows_flow(main, crossing) == [True, False, False, False]
    assert follows_flow(list(reversed(main)), crossing) == [False, False, False, True]  # order of the points is free


def test_log_corrections_are_a_documented_option_of_verdict_and_compare(cli, tmp_path):
    """Issue 36, item 2: logarithmic corrections only where the claim states a log factor, or where the user declares
    one. A true Theta(sqrt d) with a correction 1 + 3/log d over 2^6..2^16 (noise sd 0.05; at sd 0.02 the design lets power
    corrections down to d^-1/4 in, and one of them levels it without the option): without the option the power family cannot
    tell it (inconclusive, never a wrong verdict); with --log-corrections it levels off (consistent)."""
    import json
    import math
    import random
    rnd = random.Random(1)
    rows = ["d,seed,value"] + [f"{2 ** e},{s},{math.sqrt(2 ** e) * (1 + 3 / math.log(2 ** e)) * math.exp(rnd.gauss(0, 0.05))}"
                               for e in range(6, 17) for s in range(3)]
    (tmp_path / "m.csv").write_text("\n".join(rows) + "\n")
    base = ["verdict", "--data", str(tmp_path / "m.csv"), "--predict", "d=1/2", "--kind", "Theta", "--json", "--plan-trials", "0"]
    plain = json.loads(cli(*base, "--out", str(tmp_path / "a"), check_rc=0).stdout)
    logs = json.loads(cli(*base, "--log-corrections", "--out", str(tmp_path / "b"), check_rc=0).stdout)
    assert plain["verdict"] == "inconclusive" and "log(d)^-" not in plain["reason"]
    assert logs["verdict"] == "consistent" and "log(d)^-" in logs["reason"]  # a logarithmic correction levels it
    from ibcheck.simulate.compare.driver import CompareOptions
    assert CompareOptions(log_corrections=True).log_corrections is True


def test_a_slow_true_correction_over_a_wide_range_is_not_a_violation():
    """A true Theta(sqrt(d/k)) with the correction 1 + 5 d^-0.3, over d = 2^6..2^20 with 3 seeds. The engine tried
    no correction slower than d^-1/2, so 5 of 40 seeds were called inconsistent (seed 0 among them). Corrections down to
    d^-0.3 are always tried now, so it is not."""
    from ibcheck.simulate.stats.separation import slowest_separable

    rows = _grid_rows(lambda d, k: 3 * math.sqrt(d / k) * (1 + 5 * d ** -0.3), ds=tuple(2 ** i for i in range(6, 21)), seed=0)
    an = analyze(rows, ["d", "k"], "Theta", {"d": 0.5, "k": -0.5}, bootstrap=False, extrapolate=False)
    assert an.verdict != "inconsistent", an.reason
    assert min(c.slowest for c in an.function.corrections) == 0.3
    wide = 2.0 ** np.arange(6, 21)
    narrow = 2.0 ** np.arange(6, 17)
    # slower ones level the ratio only where the design tells them from a log-log factor, the function test's target
    # (from a whole log factor, d^-1/4 was told apart here at 97-99%, and then levelled a log log d deviation at 941
    # seeds per cell: tests/test_plan_check.py)
    assert slowest_separable(wide, 9, 0.15)[0] is None  # the default d^-0.3 stays
    assert slowest_separable(wide, 9 * 400, 0.15)[0] == 0.25
    assert slowest_separable(narrow, 9, 0.15, candidates=(0.25,))[0] is None
    # a missing log factor over the wide range is still rejected
    bad = analyze(_grid_rows(lambda d, k: 3 * math.sqrt(d / k) / math.log(d), ds=tuple(2 ** i for i in range(6, 21)), seed=1),
                  ["d", "k"], "Theta", {"d": 0.5, "k": -0.5}, bootstrap=False, extrapolate=False)
    assert bad.verdict == "inconsistent", bad.reason


def test_a_true_slow_correction_from_below_is_never_a_violation_and_a_violation_names_the_slowest_tried():
    """A true sqrt(d/k) (1 + 5 d^-0.3)^-1 over 2^6..2^16 rises toward its limit like an extra log d. With corrections no
    slower than d^-1/2 tried at this design, the engine called it inconsistent in 66% of trials (seed 1 among them).
    A true claim may carry a correction as slow as d^-0.3 (the calibration's correction_03), so that is always tried
    now: undecided at every seed here. A violation that survives names the slowest correction it was held against."""
    ds = tuple(2 ** i for i in range(6, 17))
    for seed in range(6):
        an = analyze(_grid_rows(lambda d, k: 3 * math.sqrt(d / k) / (1 + 5 * d ** -0.3), ds=ds, seed=seed), ["d", "k"], "Theta",
                     {"d": 0.5, "k": -0.5}, bootstrap=False, extrapolate=False)
        assert an.verdict != "inconsistent", (seed, an.reason)
        assert min(c.slowest for c in an.function.corrections) == 0.3
    # an extra log d at the same design (seed 1: one the design decides) is a violation beyond every such correction
    bad = analyze(_grid_rows(lambda d, k: 3 * math.sqrt(d / k) * math.log(d), ds=ds, seed=1), ["d", "k"], "Theta",
                  {"d": 0.5, "k": -0.5}, bootstrap=False, extrapolate=False)
    assert bad.verdict == "inconsistent", bad.reason
    assert "beyond every correction to scaling that decays like d^-0.3 or faster" in bad.reason, bad.reason


def test_a_slow_correction_excuses_a_move_but_never_levels_it(monkeypatch):
    """A correction slower than the design tells from a log factor (here d^-0.3 at d = 64..256) may keep a move from
    being a violation, never make it consistent: a false claim whose data carry log log d (the calibration's
    extra_loglog, its trial 22) is levelled by (1 + b d^-0.3)^2 alone. As evidence for the claim, that correction makes
    the trial consistent (measured over 300 trials at Bonferroni's level: 15 consistent, against 7 with this rule; at
    the max-T level, 12 of 300 with it). Trial 60, the witness at Bonferroni's level, stays inconclusive at the max-T
    level with the rule undone (why was not looked into), so the witness moved."""
    import ibcheck.simulate.verdict.function_test as ft
    from ibcheck.simulate.compare.calibrate import SCENARIOS, run_trial
    from ibcheck.simulate.substrate.seeds import stream

    sd = stream("calibration", 0, list(SCENARIOS).index("extra_loglog"), 22)
    tr = run_trial(SCENARIOS["extra_loglog"], sd)
    assert tr.verdict == "inconclusive" and "(1+b d^-0.3)^2" in tr.reason, tr.reason
    monkeypatch.setattr(ft, "EVIDENCE_DECAY", ft.MIN_DECAY)  # the rule undone: every correction tried is evidence
    assert run_trial(SCENARIOS["extra_loglog"], sd).verdict == "consistent"


def test_the_collapse_plots_a_trajectory_past_float_and_a_constant_bound():
    """The collapse figure once evaluated the claim's function in floats from the raw rows: 8 of the report's 17 were
    empty (LL20's T reaches 1e800, kept as log T; a held value such as gamma is not in the rows). It now takes the
    ratio figure's log rows: every seed row is a point, on slope 1 when the data follow the claim."""
    from ibcheck.simulate.experiments.design import bound_specs
    from ibcheck.simulate.report.comparison import collapse_points
    from ibcheck.simulate.verdict.analysis import BoundAnalysis
    from ibcheck.theory.claim import Bound, Claim
    from ibcheck.theory.variables import T as T_VAR

    c = Claim(id="TRJ26.thm.2", variables=(T_VAR,), bounds=(Bound("train_loss", "Theta", "1/(T*log(T))"),
                                                             Bound("gap", "O", "1")))
    rng = np.random.default_rng(0)
    lts = np.linspace(5.0, 1840.0, 40)  # T up to e^1840: no float holds it
    rows = [{"log_T": float(lt), "log_value": float(-lt - math.log(lt) + 0.05 * rng.normal()), "seed": s, "run": s}
            for s in range(3) for lt in lts]
    loss, gap = bound_specs(c, ["T"])
    an = analyze(rows, ["T"], loss.kind, loss.predicted(), trajectory=True, bootstrap=False, extrapolate=False)
    xs, ys, _, constant = collapse_points(BoundAnalysis(loss, an, tuple(rows)))
    assert len(xs) == len(rows) and not constant and min(xs) < -700
    slope = np.polyfit(xs, ys, 1)[0]
    assert abs(slope - 1) < 0.01  # on the line of slope 1
    an = analyze(rows, ["T"], gap.kind, gap.predicted(), trajectory=True, bootstrap=False, extrapolate=False)
    xs, _, _, constant = collapse_points(BoundAnalysis(gap, an, tuple(rows)))
    assert constant and len(xs) == len(rows) and max(xs) > 790  # against log10 T


def test_the_report_shows_the_step_halving_control_run_by_run(tmp_path):
    """Issue 36: the report shows the control. Each run's gap ln L(eta) - ln L(eta/2) at equal T reaches summary.json
    (FlowRun) and the claim page: a section saying how far each run follows the flow, and its figure."""
    from ibcheck.simulate.compare.record import flow_runs
    from ibcheck.simulate.experiments.base import Row
    from ibcheck.simulate.experiments.trajectories import _flow_kept, flow_gaps, follows_flow
    from ibcheck.simulate.report.comparison import _flow_figure, _flow_section

    main = [(t, -t) for t in (2.0, 3.0, 4.0, 5.0, 6.0)]
    half = [(t, -t - (0.001 if t <= 4 else 0.5)) for t in (1.5, 2.0, 3.0, 4.0, 5.0, 6.0)]  # apart from T = 10^5 on
    _, rec = _flow_kept([{"i": i} for i in range(5)], follows_flow(main, half), main, flow_gaps(main, half))
    runs = flow_runs([Row({"run": 0}, 1, "ok", {"flow_control": rec}), Row({"run": 0}, 0, "ok", {"flow_control": rec}),
                      Row({"run": 0}, 2, "failed", {})], ["run"])
    assert [r.seed for r in runs] == [0, 1] and runs[0].inside == (True, True, True, False, False)
    assert abs(runs[0].gap[0] - 0.001 * math.log(10)) < 1e-6 and abs(runs[0].gap[-1] - 0.5 * math.log(10)) < 1e-4
    flow = [r.as_json() for r in runs]
    text = "\n".join(_flow_section(flow, "flow_control.png"))
    assert "seed 0: follows the flow from T = 10^2 to 10^4 (3 of 5 points)" in text and "within 5%" in text
    assert (tmp_path / _flow_figure(flow, str(tmp_path))).stat().st_size > 10_000


def test_a_from_past_every_run_says_how_far_the_runs_reach():
    """LL20's runs follow the flow to T of about 1e13: --from T=1e20 leaves no point, and "give more seeds" was the
    advice. The error now says how far the runs reach."""
    import pytest

    import ibcheck

    rows = [{"log_T": float(lt), "log_value": float(-lt), "seed": s, "run": s} for s in range(3) for lt in np.linspace(5, 30, 20)]
    with pytest.raises(ibcheck.InputError, match=r"no run has a point at T >= 1e\+20 \(the runs reach T = 1e13\): move --from"):
        analyze(rows, ["T"], "O", {"T": -1.0}, trajectory=True, bootstrap=False, extrapolate=False, restriction={"T": 1e20})
