"""Log factors are tested as exponents, and one run is one observation along a trajectory."""
from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest

import ibcheck
from ibcheck.simulate.compare.from_csv import parse_predict
from ibcheck.simulate.experiments.terms import Term, parse_term
from ibcheck.simulate.stats.fit import fit_exponents
from ibcheck.simulate.verdict.analysis import analyze

TS = [10.0 ** e for e in range(6, 13)]  # t = 1e6 ... 1e12


def _runs(f, runs: int = 6, noise: float = 0.02, points=TS, seed: int = 0) -> list[dict]:
    """Trajectory rows: each run has its own level (a run effect) plus a little point noise."""
    rng = np.random.default_rng(seed)
    rows = []
    for r in range(runs):
        level = rng.normal(0, 0.3)
        for t in points:
            rows.append({"t": t, "value": f(t) * math.exp(level + noise * rng.standard_normal()), "seed": r, "run": r})
    return rows


def test_terms_are_named_like_predict():
    assert [parse_term(s) for s in ("t", "log(t)", "ln( t )", "log(log(t))")] == [Term("t"), Term("t", 1), Term("t", 1), Term("t", 2)]
    assert Term("T", 2).name == "log(log(T))"
    assert parse_predict("t=0,log(t)=-1") == {"t": 0.0, "log(t)": -1.0}
    with pytest.raises(ibcheck.InputError):
        parse_term("log(log(log(t)))")
    with pytest.raises(ibcheck.InputError, match="one '=' in each .* got 'k=='"):  # not "'k=' is not a fit term"
        parse_predict("d=1/2,k==")


def test_a_constant_does_not_pass_O_one_over_log_t():
    """The issue's case: a margin gap constant over t = 1e6 ... 1e12 was called consistent with O(1/log t)."""
    rows = _runs(lambda t: 0.3)
    an = analyze(rows, ["t"], "O", {"t": 0.0, "log(t)": -1.0}, trajectory=True)
    assert an.judgements["log(t)"].verdict == "inconsistent"
    assert an.verdict == "inconsistent"
    # while 1/log t itself passes, with power (the stronger (log t)^-2 is rejected)
    good = analyze(_runs(lambda t: 1 / math.log(t)), ["t"], "O", {"t": 0.0, "log(t)": -1.0}, trajectory=True)
    assert good.verdict == "consistent", good.reason
    assert good.judgements["log(t)"].has_power


def test_a_smaller_power_settles_an_upper_bound_without_its_log_factor():
    rows = _runs(lambda t: t ** -0.5)
    an = analyze(rows, ["t"], "O", {"t": 0.0, "log(t)": -1.0}, trajectory=True)
    assert an.variable_verdicts["t"][0] in ("consistent", "inconclusive")  # never inconsistent: t^-1/2 = O(1/log t)
    assert an.verdict != "inconsistent"


def test_log_exponent_is_estimated_with_the_power_over_a_long_range():
    rows = _runs(lambda t: 1 / (t * math.log(t)), points=[10.0 ** e for e in range(2, 300, 10)])
    fit = fit_exponents(rows, [Term("t"), Term("t", 1)], trajectory=True, bootstrap=False)
    assert fit.estimate["t"] == pytest.approx(-1.0, abs=0.01)
    assert fit.estimate["log(t)"] == pytest.approx(-1.0, abs=0.15)
    lo, hi = fit.conf_int("log(t)", 0.05)
    assert lo < -1.0 < hi


def test_trajectory_ci_counts_runs_not_points():
    """Points along one run share the run's level and its slope: pooling them as independent gives
    a CI from hundreds of points. The fit's degrees of freedom are runs - 1, and its CI covers the
    spread of the per-run slopes."""
    rng = np.random.default_rng(3)
    rows = []
    slopes = rng.normal(-1.0, 0.05, size=4)
    for r, b in enumerate(slopes):
        for t in np.geomspace(1e2, 1e8, 200):
            rows.append({"t": float(t), "value": float(t ** b * math.exp(0.01 * rng.standard_normal())), "run": r, "seed": r})
    traj = fit_exponents(rows, ["t"], trajectory=True, bootstrap=False)
    assert traj.df == 3 and traj.runs == 4
    assert traj.se["t"] == pytest.approx(np.std(slopes, ddof=1) / 2, rel=0.05)
    pooled = fit_exponents(rows, ["t"], bootstrap=False)  # treating every point as its own cell
    assert pooled.df > 100
    assert traj.se["t"] > 3 * pooled.se["t"]


def test_one_run_is_not_a_trajectory_fit():
    rows = [r for r in _runs(lambda t: 1.0, runs=1)]
    with pytest.raises(ibcheck.InputError, match="at least 2"):
        fit_exponents(rows, ["t"], trajectory=True)


def _write_csv(path, rows, cols=("t", "seed", "value")):
    with open(path, "w") as f:
        f.write(",".join(cols) + "\n")
        for r in rows:
            f.write(",".join(str(r[c]) for c in cols) + "\n")


def test_verdict_accepts_log_terms_in_predict(tmp_path, cli):
    rows = _runs(lambda t: 0.3)
    _write_csv(tmp_path / "gap.csv", rows)
    res = cli("verdict", "--data", str(tmp_path / "gap.csv"), "--predict", "t=0,log(t)=-1", "--kind", "O", "--trajectory",
              "--out", str(tmp_path / "v"), "--json")
    s = json.loads(res.stdout)
    assert s["verdict"] == "inconsistent"
    assert [f["variable"] for f in s["results"][0]["fits"]] == ["t", "log(t)"]
    assert [f["variable"] for f in s["fits"]] == ["t", "log(t)"]


def test_from_restricts_the_fit_and_says_so(tmp_path, cli):
    rows = _runs(lambda t: 1 / math.log(t))
    _write_csv(tmp_path / "d.csv", rows)
    res = cli("verdict", "--data", str(tmp_path / "d.csv"), "--predict", "t=0,log(t)=-1", "--kind", "O", "--trajectory",
              "--from", "t=1e8", "--out", str(tmp_path / "v"), "--json")
    s = json.loads(res.stdout)
    assert s["fit_from"] == {"t": 1e8}
    assert "Restricted by request to t >= 1e+08" in (tmp_path / "v" / "report.md").read_text()
    assert any("fit restricted to t >= 1e+08" in n for n in s["results"][0]["notes"])
    bad = cli("verdict", "--data", str(tmp_path / "d.csv"), "--predict", "t=0", "--kind", "O", "--from", "x=3",
              "--out", str(tmp_path / "w"), check_rc=2)
    assert "--from x" in bad.stderr and "\n" == bad.stderr[-1] and bad.stderr.count("\n") == 1


def test_known_offsets_only_on_request():
    rows = _runs(lambda t: 0.3)
    an = analyze(rows, ["t"], "O", {"t": 0.0}, offsets={"t": (-1.0, 0.0)}, trajectory=True)
    assert any("known offsets (by request)" in n for n in an.notes)


def test_the_comparison_result_is_typed(tmp_path):
    rows = _runs(lambda t: 1 / math.log(t))
    _write_csv(tmp_path / "d.csv", rows)
    c = ibcheck.verdict(str(tmp_path / "d.csv"), predict="t=0,log(t)=-1", kind="O", trajectory=True)
    assert isinstance(c, ibcheck.ComparisonResult)
    b = c.bound("value")
    assert [t.term for t in b.terms] == ["t", "log(t)"]
    lo95, hi95 = c.conf_int("value", 0.05, term="log(t)")
    lo50, hi50 = c.conf_int("value", 0.5, term="log(t)")
    assert lo95 < lo50 < hi50 < hi95 and (lo95, hi95) == pytest.approx(b.term("log(t)").ci)
    text = c.summary()
    assert "log(t)" in text and "95% CI" in text and c.verdict in text
    assert json.loads(c.to_json())["results"][0]["fits"][1]["variable"] == "log(t)"
    with pytest.raises(ibcheck.InputError):
        c.conf_int("nosuch")
    with pytest.raises(ibcheck.InputError):
        c.conf_int("value", 0.05, term="log(q)")


def test_a_predicted_exponent_is_taken_exactly_as_written(tmp_path):
    """--predict d=0.542 was refused: 'the exponent of d ... is 2*2**(257/737)*3**(437/737)*..., not a number'
    (sympy's nsimplify read the float as a product of radicals). Each exponent is the fraction written."""
    import ibcheck

    assert parse_predict("d=0.542,log(d)=1/3") == {"d": Fraction(271, 500), "log(d)": Fraction(1, 3)}
    path = tmp_path / "m.csv"
    path.write_text("d,seed,value\n" + "".join(f"{d},{s},{(d ** 0.542) * (1 + 0.01 * s):.6g}\n"
                                               for d in (16, 32, 64, 128, 256) for s in range(3)))
    res = ibcheck.verdict(str(path), predict="d=0.542", kind="Theta")
    assert "d**(271/500)" in res.claim.title and res.record.bounds[0].verdict != "inconsistent"


def test_an_exp_type_prediction_is_pointed_to_the_claims_file():
    """Second pass of issue 58: --predict 'exp(-n/d)=1' was refused accurately, without saying where such a bound is
    stated (a claims file); a plain bad term is not sent there."""
    from ibcheck.simulate.compare.from_csv import parse_predict

    with pytest.raises(ibcheck.InputError, match=r"is not a fit term.*exp-type bound .* is stated in a claims file"):
        parse_predict("exp(-n/d)=1")
    with pytest.raises(ibcheck.InputError, match=r"is not a fit term") as err:
        parse_predict("d-1=1")
    assert "claims file" not in str(err.value)
