"""Issue 57, item 3: a plan is checked by simulation before it is printed (simulate.verdict.plan_check).

The data: sqrt(d)/log d against Theta(sqrt(d)) over d = 2^6..2^12, k = 2, 4, 8, 3 seeds: inconclusive (the best
correction sits at its cap). The envelope says any test needs d up to 2^20; the engine, simulated there, does not
decide often enough, so the plan names a larger design that did decide in simulation."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

from ibcheck.simulate.verdict.analysis import reanalyze
from ibcheck.simulate.verdict.plan_check import check_plan
from ibcheck.simulate.verdict.planner import DesignPlan

TRIALS = 5  # the planner's trials per truth in these tests (4 of 5 must be right); the CLI's default is 20


@pytest.fixture(scope="module")
def inconclusive(tmp_path_factory):
    import ibcheck

    path = tmp_path_factory.mktemp("plan") / "p.csv"
    with open(path, "w") as f:
        f.write("d,k,seed,value\n")
        for d in [2 ** i for i in range(6, 13)]:
            for k in (2, 4, 8):
                for s in range(3):
                    g = np.random.default_rng(d * 100 + k * 10 + s).standard_normal()
                    f.write(f"{d},{k},{s},{3 * math.sqrt(d) / math.log(d) * math.exp(0.15 * g)!r}\n")
    r = ibcheck.verdict(str(path), predict="d=1/2,k=-1/2", kind="Theta", plan_trials=TRIALS)
    return r


def test_a_named_plan_decided_in_simulation_and_decides_in_fresh_trials(inconclusive):
    """The plan printed is the first design whose simulation decided the right way in at least 4 of 5 trials under each
    story; run again at that design with other draws (seed 7, not the planner's), the engine still decides the right way
    under each story (at least 5 of 8): the check is of the design named, not of another."""
    r = inconclusive
    b = r.record.bounds[0]
    assert b.verdict == "inconclusive"
    plan = r.record.would_decide[0].plan
    ok = plan.check.passed
    assert ok is not None and all(x >= 4 for x in ok.right)
    assert "plan, checked by simulation: d up to 2^" in b.reason and "at least 4 of 5 simulated trials" in b.reason
    top = round(math.log2(ok.values[-1]))
    assert f"d up to 2^{top} at {ok.seeds} seeds per cell" in b.reason
    # the envelope's own design (d up to 2^20) is a bound, not the plan, and the engine fell short of it here
    assert plan.top == 2.0 ** 20 and ok.values[-1] > plan.top and not plan.check.tried[0].passed
    # the plan is the cheapest design that passed, after one bisection step between it and the last that failed
    assert all(not t.passed for t in plan.check.tried if t.work < ok.work)
    ranged = sorted(len(t.values) for t in plan.check.tried if t.seeds == 3)
    assert len(ranged) >= 3, ranged  # the envelope's range, its 2x (or 4x), and the midpoint between the last two
    an = r.results[0].analysis
    data = list(r.results[0].data)
    rng = np.random.default_rng(7)
    for story in plan.check.truths:  # 8 fresh sweeps per story, every one run (no early stop)
        right = sum(reanalyze(an, story.draw(an, data, "d", ok.values, ok.seeds, 0.15, rng)).verdict == story.verdict
                    for _ in range(8))
        assert right >= 5, (story.name, right)  # the sweep's own design: 0 of 8 (inconclusive)


def test_a_plan_that_does_not_decide_in_simulation_is_not_printed(inconclusive):
    """Offered only the sweep's own design (where the verdict was inconclusive) and one seed more, the check finds no
    design that decides, and the text names none: "no plan is named", with the best rates it saw."""
    r = inconclusive
    an, data = r.results[0].analysis, list(r.results[0].data)
    plan = r.record.would_decide[0].plan
    xs = sorted({float(row["d"]) for row in data})
    check = check_plan(an, data, "d", [(xs, 3, 1.0), (xs, 4, 4 / 3)], 0.15, 0.3, lambda rows: reanalyze(an, rows).verdict, TRIALS)
    assert check.passed is None and len(check.tried) == 2
    text = DesignPlan(plan.variable, plan.power_now, plan.top, plan.top_work, plan.seeds, plan.seeds_now, plan.seeds_work,
                      plan.capped_at, check).text()
    assert text.startswith("no plan is named: no design simulated decided") and "(2 simulated" in text
    assert "checked by simulation:" not in text
    assert "right where the data's ratio is" in text


def test_no_plan_names_less_than_the_sweep_has_and_one_sentence_says_it(inconclusive):
    """Every design simulated keeps the sweep's values and at least its seeds; the reason names one plan (no second
    count such as "about 2x the seeds would decide" from the resolution)."""
    r = inconclusive
    plan = r.record.would_decide[0].plan
    xs = sorted({float(row["d"]) for row in r.results[0].data})
    for t in plan.check.tried:
        assert t.seeds >= 3 and set(xs) <= set(t.values) and t.work >= 1.0
    b = r.record.bounds[0]
    assert not re.search(r"about [\d.]+x the seeds", b.reason)
    assert b.reason.count("plan, checked by simulation") == 1 and "no plan is named" not in b.reason
    js = r.record.would_decide[0].as_json()
    assert js["text"] == plan.text() and js["plan"]["simulation"]["tried"][-1]["passed"] is True
    assert js["factor"] == pytest.approx(plan.check.passed.work)


def test_plan_trials_is_checked_at_the_boundary(tmp_path, cli):
    """--plan-trials outside 0..200 is refused in one line naming the value and the range; 0 names no plan."""
    import ibcheck

    path = tmp_path / "p.csv"
    path.write_text("d,seed,value\n" + "".join(f"{d},{s},{d ** 0.5 * (1 + 0.01 * s)}\n" for d in (8, 16, 32, 64) for s in range(2)))
    with pytest.raises(ibcheck.InputError, match=r"plan_trials.*201"):
        ibcheck.verdict(str(path), predict="d=1/2", kind="Theta", plan_trials=201)
    res = cli("verdict", "--data", str(path), "--predict", "d=1/2", "--kind", "Theta", "--plan-trials", "-1", "--out", str(tmp_path / "o"))
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1 and "-1" in res.stderr
    assert not (tmp_path / "o").exists()


def test_calibrate_reports_how_often_a_named_plan_decided_when_it_was_run(monkeypatch):
    """calibrate(plan_trials=N): each inconclusive trial's plan is checked and, where one is named, its design is swept
    from the scenario's own truth (not the planner's stories) and judged; the table counts the plans named and those
    that decided the right way and the wrong way when run. The scenario: a missing 1/log d over d = 2^6..2^12 at 3 seeds,
    d free to grow to 2^30 (one look: no budget for rounds)."""
    from ibcheck.simulate.compare import calibrate as cal

    sc = cal.Scenario("missing_log_short", cal._times(lambda d, k: 1 / math.log(d)), False, grid={"d": [2 ** i for i in range(6, 13)],
                      "k": [2, 4, 8]}, seeds=3, max_grid={"d": 2 ** 30, "k": 8}, budget=1e-9)
    monkeypatch.setitem(cal.SCENARIOS, sc.name, sc)
    r = cal.calibrate(trials=1, scenarios=[sc.name], plan_trials=3, seed=0)
    p = r["scenarios"][sc.name]["plans"]
    assert p["inconclusive"] == 1 and p["named"] == 1 and p["plan_trials"] == 3
    assert p["decided_right"] + p["decided_wrong"] <= p["named"]
    md = cal.calibration_markdown(r)
    assert "Named plans, run" in md and f"| {sc.name} | 1 | 1 |" in md


def test_a_log_log_deviation_is_not_confirmed_at_many_seeds():
    """sqrt(d) log log d against Theta(sqrt(d)) over d = 2^6..2^13 at 59 seeds per cell (the design a plan named for
    extra_loglog, run by calibrate): the confirmation test rejected (log d)^+0.56 while the claim's corrected fit
    c (1 - 1.58 d^-0.3) took up the log log d, and called it consistent in 6 of 30 trials (these two among them). The
    alternatives include the claim times (log log d)^+-1 now (simulate.verdict.confirm): 0 of 30."""
    from ibcheck.simulate.compare import calibrate as cal
    from ibcheck.simulate.substrate.seeds import stream

    sc = cal.Scenario("extra_loglog_59", cal._times(lambda d, k: math.log(math.log(d))), False,
                      grid={"d": [2 ** i for i in range(6, 14)], "k": [2, 4, 8]}, seeds=59)
    for t in (6, 8):
        tr = cal.run_trial(sc, stream("calibration", 0, 2, t), 20.0)
        assert tr.verdict != "consistent", tr.reason


def test_a_log_log_deviation_is_not_levelled_by_a_slow_correction_at_very_many_seeds():
    """sqrt(d) log log d against Theta(sqrt(d)) over d = 2^6..2^12 at 941 seeds per cell (a design a plan named for
    extra_loglog): the resolution rule said consistent (6 of 6 datasets), a (1 + b d^-0.25)^2 correction taken as
    evidence because the design told d^-0.25 from a whole log factor, though not from a log-log factor, the function
    test's own target. The slowest decay is separated from that target now (slowest_separable): d^-0.4 here."""
    from ibcheck.simulate.stats.separation import slowest_separable
    from ibcheck.simulate.verdict.analysis import analyze

    rng = np.random.default_rng(0)
    rows = [{"d": 2.0 ** i, "k": float(k), "seed": s,
             "value": 3 * 2.0 ** (i / 2) * k ** -0.5 * math.log(i * math.log(2)) * math.exp(0.15 * rng.standard_normal())}
            for i in range(6, 13) for k in (2, 4, 8) for s in range(941)]
    an = analyze(rows, ["d", "k"], "Theta", {"d": 0.5, "k": -0.5}, bootstrap=False, extrapolate=False)
    assert an.verdict != "consistent", an.reason
    assert slowest_separable(2.0 ** np.arange(6, 13), 941 * 3, 0.15)[0] == 0.4


def _gauss_csv(path, top: int, seeds: int, seed: int, power: float = 1.0, prefactor: bool = True) -> str:
    """y = 0.4 h^-1/2 exp(-0.3 h^power) (``prefactor=False``: exp(-0.3 h^power)), h = m/1000, m = 50 * 2^i up to 50 * 2^top,
    log-normal seed noise sd 0.15."""
    rng = np.random.default_rng(seed)
    lines = ["m,seed,value"]
    for i in range(top + 1):
        m = 50 * 2 ** i
        h = m / 1000
        for s in range(seeds):
            z = 0.3 * h ** power - ((math.log(0.4) - 0.5 * math.log(h)) if prefactor else 0.0) + 0.15 * rng.standard_normal()
            lines.append(f"{m},{s},{math.exp(-z)!r}")
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.mark.parametrize("truth", ["gaussian_tail", "slower"])
def test_an_exp_type_plan_is_sized_from_its_own_test_and_decides_when_run(tmp_path, isolated_registry, truth):
    """Issue 57, item 2: an exp-type bound's reason said "no plan is named (not checked by simulation: the planner's
    simulation does not cover exp-type bounds)". Its plan is now checked on log(1/y)'s own two stories. Over m = 50..3,200
    with 4 seeds the true 0.4 h^-1/2 exp(-0.3 h) and the false exp(-0.3 h^0.8) are inconclusive; the plan names a wider
    range of m, and fresh sweeps at that design (other seeds, the truth's own generator) decide the right way."""
    import ibcheck

    ibcheck.register(ibcheck.Claim(id="EXPPLAN.thm.1", variables=["m"], constants=["c"], bounds=[ibcheck.Bound("err", "O", "exp(-c*m/1000)")]))
    kw = {"power": 1.0, "prefactor": True} if truth == "gaussian_tail" else {"power": 0.8, "prefactor": False}
    right = "consistent" if truth == "gaussian_tail" else "inconsistent"
    v = ibcheck.verdict(_gauss_csv(tmp_path / "d.csv", 6, 4, 1, **kw), claim="EXPPLAN.thm.1", plan_trials=TRIALS)
    assert v.verdict == "inconclusive", v.reason
    assert "plan, checked by simulation: m up to" in v.reason and "power envelope does not apply" in v.reason, v.reason
    top = int(re.search(r"plan, checked by simulation: m up to (\d+) at 4 seeds", v.reason).group(1))
    assert top > 3200
    steps = round(math.log2(top / 50))
    fresh = [ibcheck.verdict(_gauss_csv(tmp_path / f"f{s}.csv", steps, 4, 100 + s, **kw), claim="EXPPLAN.thm.1", plan_trials=0).verdict
             for s in range(5)]
    assert fresh.count(right) >= 4, fresh  # the planner's own bar, 80%, on draws it never saw


def test_an_exp_type_bound_without_a_plan_check_names_no_ratio_envelope(tmp_path, isolated_registry):
    """With --plan-trials 0 an exp-type bound's reason named the ratio's power envelope ("any test needs at least m up to
    409600 at 4 seeds ... or 348 seeds per cell"), which bounds a test against a log factor of the ratio and says nothing
    about log(1/y); the planner computed that envelope's range search for every exp-type verdict and then set it aside
    (two thirds of the verdict's time). Now neither: the reason says the envelope does not apply, and the JSON plan
    carries no envelope numbers."""
    import ibcheck

    ibcheck.register(ibcheck.Claim(id="EXPPLAN.thm.2", variables=["m"], constants=["c"], bounds=[ibcheck.Bound("err", "O", "exp(-c*m/1000)")]))
    v = ibcheck.verdict(_gauss_csv(tmp_path / "d.csv", 6, 4, 1), claim="EXPPLAN.thm.2", plan_trials=0)
    assert v.verdict == "inconclusive", v.reason
    assert "not checked by simulation: plan_trials = 0" in v.reason and "power envelope does not apply" in v.reason, v.reason
    assert "any test needs" not in v.reason and "any test has at most" not in v.reason, v.reason
    plan = v.as_json()["would_decide"][0]["plan"]
    assert plan["power_now"] is None and plan["top"] is None and plan["seeds_work"] is None, plan
