"""Issue 57, item 5: binomial counts fitted with their own variance (simulate.verdict.exp_test.binomial_weights).

An error rate y = k/N of N test points has ``Var log(1/y) ~ (1 - p)/(N p)``: over h = 0.16..20 against O(exp(-c h)) its
noise differs a hundredfold between cells, and one variance pooled over them called a true bound inconsistent in 7.8% of
400 trials (N = 2000) and 13% (N = 10,000). Rows that carry their ``trials`` are weighted by that variance (plus the seeds'
own, estimated beside it): 1.8% and 0.8% (docs/verdict.md, "Binomial counts")."""
from __future__ import annotations

import math

import numpy as np
import pytest

from ibcheck.simulate.verdict.analysis import analyze
from ibcheck.simulate.verdict.exp_test import _cells, _claim_fit, binomial_weights

NS = [2 ** e for e in range(4, 12)]  # h = n/100 = 0.16 .. 20.5


def _rows(rng, N: int, seeds: int = 3, power: float = 1.0, trials: bool = True) -> list[dict]:
    """Counts k ~ Binomial(N, exp(-0.3 h^power)) per seed (a zero count drawn again: such a row is left out of the fit,
    which is its own known limit), as rows of log(1/y)."""
    rows = []
    for n in NS:
        p = math.exp(-0.3 * (n / 100) ** power)
        for s in range(seeds):
            k = 0
            while k == 0:
                k = int(rng.binomial(N, p))
            rows.append({"n": float(n), "log_n": math.log(n), "seed": s, "run": f"{n}/{s}", "value": -math.log(k / N),
                         **({"trials": N} if trials else {})})
    return rows


def _verdicts(rows_of, trials: int) -> dict[str, int]:
    out = {"consistent": 0, "inconsistent": 0, "inconclusive": 0}
    for rows in rows_of(trials):
        an = analyze(rows, ["n"], "Omega", {"n": 1.0}, bootstrap=False, extrapolate=False, free_constant=True)
        out[an.verdict] += 1
    return out


def test_heteroscedastic_counts_are_not_called_inconsistent_when_they_carry_their_trials():
    """N = 10,000 test points, 3 seeds, 60 trials of a true bound: with the trials 0.8% inconsistent and 98% consistent
    at 400 trials; the same draws without them, 13% and 78% (this test fails on a fit that pools one variance)."""
    def draws(with_trials):
        def rows_of(t):
            rng = np.random.default_rng(11)
            return [_rows(rng, 10_000, trials=with_trials) for _ in range(t)]
        return rows_of

    weighted, pooled = _verdicts(draws(True), 60), _verdicts(draws(False), 60)
    assert weighted["inconsistent"] <= 2 and weighted["consistent"] >= 54, weighted
    assert pooled["inconsistent"] >= 4, pooled  # the case is the heteroscedastic one: pooling errs on these draws


def test_a_false_bound_on_counts_is_still_refuted_and_never_called_consistent():
    """exp(-0.3 h^0.8) from counts of N = 10,000: refuted in 96% of 400 trials with the trials (90% pooled); here 20."""
    def rows_of(t):
        rng = np.random.default_rng(12)
        return [_rows(rng, 10_000, power=0.8) for _ in range(t)]

    res = _verdicts(rows_of, 20)
    assert res["inconsistent"] >= 16 and res["consistent"] == 0, res


def test_the_weights_are_the_delta_method_variance_at_the_claims_fitted_rate():
    """A cell of n seeds with N_s trials each weighs n^2 / sum_s (s0 + (1 - p)/(N_s p)) at the claim's own fitted p; with
    no spread beyond the binomial's s0 is 0. Rows without trials keep their seeds as weights."""
    rows = []
    for n in NS:
        for s, N in enumerate((1000, 4000)):
            rows.append({"z": 0.3 * n / 100 + 0.01 * (s - 0.5), "h": n / 100, "log_n": math.log(n), "trials": float(N)})
    cells = _cells(rows, ["n"])
    assert binomial_weights(cells)
    fit = _claim_fit(cells)
    for c in cells:
        p = math.exp(-(fit.a + fit.c * c["h"]))
        v = [(1 - p) / (N * p) for N in (1000, 4000)]
        spread = 0.01 ** 2 / 2  # z_ss of the two seeds about their mean
        s0 = max(0.0, sum(cc["z_ss"] - float(np.mean([(1 - math.exp(-(fit.a + fit.c * cc["h"]))) / (N * math.exp(-(fit.a + fit.c * cc["h"])))
                                                          for N in (1000, 4000)])) for cc in cells) / len(cells))
        assert c["weight"] == pytest.approx(4 / sum(s0 + x for x in v), rel=1e-6)
        assert c["z_ss"] == pytest.approx(spread)
    plain = _cells([{k: v for k, v in r.items() if k != "trials"} for r in rows], ["n"])
    assert not binomial_weights(plain) and all("weight" not in c for c in plain)


def _csv(path, rows: list[str]) -> str:
    path.write_text("\n".join(["n,seed,value,trials", *rows]) + "\n")
    return str(path)


def test_a_csv_with_a_trials_column_is_weighted_and_bad_trials_are_refused(tmp_path, isolated_registry):
    """The CSV route: a ``trials`` column (matched without case, like seed and value) marks each value as a proportion
    of that many trials; the notes say the cells were weighted. A count that is not an integer in [1, 2^53], or a value
    above 1 beside it, is refused in one line naming the row and the accepted range."""
    import ibcheck

    ibcheck.register(ibcheck.Claim(id="BINOM.thm.1", variables=["n"], constants=["c"], bounds=[ibcheck.Bound("err", "O", "exp(-c*n/100)")]))
    rng = np.random.default_rng(3)
    lines = [f"{int(r['n'])},{r['seed']},{math.exp(-r['value'])!r},{r['trials']}" for r in _rows(rng, 10_000)]
    v = ibcheck.verdict(_csv(tmp_path / "ok.csv", lines), claim="BINOM.thm.1", plan_trials=0)
    notes = " ".join(v.bounds[0].analysis.notes)
    assert "binomial counts" in notes and v.verdict != "inconsistent", (v.verdict, v.reason)
    head = lines[0].rsplit(",", 1)[0]
    for bad, words in (("0", "[1, 2^53]"), ("1.5", "[1, 2^53]"), ("ten", "[1, 2^53]"), ("1e30", "[1, 2^53]")):
        with pytest.raises(ibcheck.InputError, match=r"row 2, column 'trials'.*not a count of trials") as err:
            ibcheck.verdict(_csv(tmp_path / "bad.csv", [f"{head},{bad}", *lines[1:]]), claim="BINOM.thm.1", plan_trials=0)
        assert words in str(err.value) and "\n" not in str(err.value)
    zero = f"{head.rsplit(',', 1)[0]},0,100"
    with pytest.raises(ibcheck.InputError, match=r"row 2, column 'value': 0 beside trials 100 is a zero count"):
        ibcheck.verdict(_csv(tmp_path / "zero.csv", [zero, *lines[1:]]), claim="BINOM.thm.1", plan_trials=0)
    over = f"{head.rsplit(',', 1)[0]},1.5,100"
    with pytest.raises(ibcheck.InputError, match=r"row 2: value 1.5 with trials 100 is not a proportion of its trials \(a value in \(0, 1\]"):
        ibcheck.verdict(_csv(tmp_path / "over.csv", [over, *lines[1:]]), claim="BINOM.thm.1", plan_trials=0)


def test_an_experiment_that_returns_its_trials_is_weighted_and_a_bad_count_is_a_failed_row(isolated_registry):
    """The compare route: a measure returning ``<quantity>_trials`` beside the rate is weighted alike; a count that is no
    integer turns its row into a failure that says why (never read as a weight)."""
    import ibcheck

    ibcheck.register(ibcheck.Claim(id="BINOM.thm.2", variables=["n"], constants=["c"], bounds=[ibcheck.Bound("err", "O", "exp(-c*n/100)")]))

    @ibcheck.experiment("BINOM.thm.2", grid={"n": NS}, seeds=3)
    def measure(cell, seed):
        rng = np.random.default_rng(int(cell["n"]) * 10 + int(seed))
        k = 0
        while k == 0:
            k = int(rng.binomial(10_000, math.exp(-0.3 * cell["n"] / 100)))
        return {"err": k / 10_000, "err_trials": 10_000 if cell["n"] != 16 or seed != 0 else 2.5}

    c = ibcheck.compare("BINOM.thm.2", progress=False, plan_trials=0)
    an = c.results[0].analysis
    assert "binomial counts" in " ".join(an.notes), an.notes  # the cell of the failed row has its other two seeds' trials
    assert c.record.task_status == {"ok": 23, "failed": 1}, c.record.task_status
    (f,) = c.record.failures
    assert f.kind == "UnreadableRow" and "err_trials is 2.5, not a count of trials (an integer in [1, 2^53])" in f.error


def test_compare_and_a_csv_of_the_same_counts_give_the_same_verdict_and_reason(tmp_path, isolated_registry):
    """One path: a measure returning ``err`` and ``err_trials`` and a CSV of the same rows with a ``trials`` column are
    weighted alike, and give the same verdict and reason."""
    import ibcheck

    ibcheck.register(ibcheck.Claim(id="BINOM.thm.3", variables=["n"], constants=["c"], bounds=[ibcheck.Bound("err", "O", "exp(-c*n/100)")]))

    def k_of(n: int, s: int) -> int:
        rng, k = np.random.default_rng(n * 10 + s), 0
        while k == 0:
            k = int(rng.binomial(10_000, math.exp(-0.3 * n / 100)))
        return k

    @ibcheck.experiment("BINOM.thm.3", grid={"n": NS}, seeds=3)
    def measure(cell, seed):
        return {"err": k_of(int(cell["n"]), int(seed)) / 10_000, "err_trials": 10_000}

    c = ibcheck.compare("BINOM.thm.3", progress=False, plan_trials=0)
    lines = [f"{n},{s},{k_of(n, s) / 10_000!r},10000" for n in NS for s in range(3)]
    v = ibcheck.verdict(_csv(tmp_path / "same.csv", lines), claim="BINOM.thm.3", plan_trials=0)
    assert c.verdict == v.verdict and c.reason == v.reason, (c.reason, v.reason)
    assert "binomial counts" in " ".join(c.results[0].analysis.notes) and "binomial counts" in " ".join(v.bounds[0].analysis.notes)
