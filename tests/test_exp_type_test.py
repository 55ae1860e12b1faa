"""The exp-type bound's own test (simulate.verdict.exp_test): log(1/y) = a + c h(x) with a = -log A free. Its rates on
synthetic data with known truth, in one and three variables, prefactors 0.01 to 100 (issue 49, item 0)."""
from __future__ import annotations

import itertools
import math
import os
import re

import numpy as np
import pytest

from ibcheck.simulate.verdict.analysis import analyze

G3 = {"n": [100, 200, 400, 800], "m": [1, 2, 4], "d": [100, 200, 400]}
H3 = {"n": 1.0, "m": 2.0, "d": -1.0}
G1 = {"n": [2 ** e for e in range(4, 13)]}


def _rows(A: float, grid: dict, h, rng, seeds: int = 3, sd: float = 0.15) -> list[dict]:
    rows = []
    for combo in itertools.product(*grid.values()):
        cell = dict(zip(grid, combo))
        for s in range(seeds):
            y = A * math.exp(-0.3 * h(cell)) * math.exp(rng.normal(0, sd))
            rows.append({**{v: float(x) for v, x in cell.items()}, **{"log_" + v: math.log(x) for v, x in cell.items()}, "seed": s,
                         "value": -math.log(y), "run": f"{combo}/{s}"})
    return rows


def _rates(A, grid, h, predicted, trials, seed):
    rng = np.random.default_rng(seed)
    out = {"consistent": 0, "inconsistent": 0, "inconclusive": 0}
    for _ in range(trials):
        an = analyze(_rows(A, grid, h, rng), list(grid), "Omega", predicted, bootstrap=False, extrapolate=False, free_constant=True)
        out[an.verdict] += 1
    return out


@pytest.mark.parametrize("A", [0.01, 100.0])
def test_a_true_exp_type_bound_is_called_inconsistent_at_most_five_percent_of_the_time(A):
    """Measured with 100 trials per case: 0-1% false inconsistent over A = 0.01..100 (one and three variables), 89-99%
    consistent; here 60 trials each. The capped-correction test called A = 0.01 inconsistent every time."""
    three = _rates(A, G3, lambda c: c["n"] * c["m"] ** 2 / c["d"], H3, 60, 1)
    one = _rates(A, G1, lambda c: c["n"] / 100, {"n": 1.0}, 60, 2)
    assert three["inconsistent"] <= 3 and three["consistent"] >= 54
    assert one["inconsistent"] <= 3 and one["consistent"] >= 48


def test_a_false_exp_type_bound_is_refuted_in_three_variables_and_never_called_consistent():
    """Data exp(-0.3 h^(1/2)) against O(exp(-c h)), prefactors 0.01 and 100: refuted in 90-95% of trials in three
    variables (36 cells); in one variable (9 cells) a lower-order term of log(1/y) beside c h mimics part of the move, so
    it is mostly inconclusive (18-28% refuted), and never consistent. One prefactor per design: with the same draws
    (each _rates call seeds its own) the two prefactors differ only in the free intercept a = -log A, and a prefactor's
    invariance has its own test (test_one_path's exp-type bound with any prefactor, A = 0.01 to 100)."""
    three = _rates(0.01, G3, lambda c: (c["n"] * c["m"] ** 2 / c["d"]) ** 0.5, H3, 12, 3)
    one = _rates(100.0, G1, lambda c: (c["n"] / 100) ** 0.5, {"n": 1.0}, 12, 4)
    assert three["inconsistent"] >= 9 and three["consistent"] == 0
    assert one["consistent"] == 0


def test_the_review_cases_a_lower_order_term_censored_rows_and_an_unresolved_growth_are_never_refuted():
    """An independent review found three wrong verdicts of the exact form: log(1/y) with a lower-order term (a prefactor
    h^-1/2: y = h^-1/2 exp(-0.3 h)), censored rows left out at large h, and c near 0 (the standard error collapsed). None
    may be called inconsistent now; a flat y (a false claim, c = 0) is never called consistent."""
    rng = np.random.default_rng(7)
    for _ in range(4):  # the review's faults were systematic (a collapsed standard error, rows dropped), not rare draws
        rows = _rows(1.0, G1, lambda c: c["n"] / 100 + 1 / 0.3 * 0.5 * math.log(c["n"] / 100 + 1), rng)  # z = 0.3 h + 0.5 log(h+1)
        assert analyze(rows, ["n"], "Omega", {"n": 1.0}, bootstrap=False, extrapolate=False, free_constant=True).verdict != "inconsistent"
        cens = _rows(1.0, G1, lambda c: c["n"] / 100, rng)
        for r in cens:
            if r["value"] > 30:  # y below a search limit: a bound, not a value
                r["censor"], r["value"] = "at_least", 30.0
        an = analyze(cens, ["n"], "Omega", {"n": 1.0}, bootstrap=False, extrapolate=False, free_constant=True)
        assert an.verdict != "inconsistent" and (an.verdict != "consistent" or not any(r.get("censor") for r in cens))
        weak = _rows(1.0, G1, lambda c: 1e-5 * c["n"], rng)
        assert analyze(weak, ["n"], "Omega", {"n": 1.0}, bootstrap=False, extrapolate=False, free_constant=True).verdict == "inconclusive"
        flat = _rows(0.5, G1, lambda c: 0.0, rng)
        assert analyze(flat, ["n"], "Omega", {"n": 1.0}, bootstrap=False, extrapolate=False, free_constant=True).verdict != "consistent"


def test_the_headline_reason_names_the_lower_order_term_that_stands_in_the_way():
    """Issue 57, item 2: an exp-type move that a lower-order term b log h explains was reported as "the slope -0.218 +-
    0.012 is neither a significant deviation nor below the resolution" (18 standard errors), the cause only in the notes.
    The reason now says what stands in the way, and what would separate it."""
    rng = np.random.default_rng(7)
    explained = 0
    for _ in range(12):
        an = analyze(_rows(1.0, G1, lambda c: (c["n"] / 100) ** 0.5, rng), ["n"], "Omega", {"n": 1.0}, bootstrap=False,
                     extrapolate=False, free_constant=True)
        if any("lower-order term" in n for n in an.notes) and an.verdict == "inconclusive":
            assert "neither a significant deviation" not in an.reason
            if "cannot be fitted beside c h" in an.reason:  # one term could not be fitted here: the move is not shown to survive it
                assert "more values of n would fit one" in an.reason, an.reason
                continue
            explained += 1
            assert "a lower-order term b log h" in an.reason and "a wider range of n" in an.reason, an.reason
    assert explained >= 1


def test_the_claims_page_of_an_exp_type_bound_draws_log_1_over_y_against_h(tmp_path, isolated_registry):
    """Issue 57, item 6: an exp-type bound's page has the picture on its own scale, log(1/y) against h per cell with the
    claim's fit a + c h and the lower-order term beside it; a PNG the page links, from the report's own folder."""
    import ibcheck

    p = tmp_path / "claims.py"
    p.write_text('import ibcheck\nibcheck.Claim(id="EXPFIG.thm.1", variables=["n"], constants=["c"], '
                 'bounds=[ibcheck.Bound("err", "O", "exp(-c*n)")])\n')
    ibcheck.load_claims(str(p))
    rng = np.random.default_rng(0)

    @ibcheck.experiment("EXPFIG.thm.1", grid={"n": [2, 4, 8, 16, 32]}, seeds=3)
    def measure(cell, seed):
        return {"err": 0.5 * math.exp(-0.3 * cell["n"]) * math.exp(0.15 * rng.standard_normal())}

    c = ibcheck.compare("EXPFIG.thm.1", progress=False, plan_trials=0)  # the picture, not the plan, is tested here
    files = c.save(str(tmp_path / "out"))
    pngs = [f for f in os.listdir(tmp_path / "out") if f.endswith("_exp.png")]
    assert len(pngs) == 1 and os.path.getsize(tmp_path / "out" / pngs[0]) > 5000
    md = (tmp_path / "out" / "report.md").read_text()
    assert f"]({pngs[0]})" in md and "log(1/y) against h" in md
    assert files is not None


@pytest.mark.parametrize("shape", ["one", "growing", "two", "half"])
def test_an_exp_type_bound_against_data_that_do_not_decay_is_judged_not_refused(tmp_path, isolated_registry, shape):
    """Issue 58, item 3: O(exp(-c n/d)) against data equal to 1, or growing with n/d, was refused ("variable n has 0 grid
    value(s) with data", though every n and d had data). The data violate the bound: inconsistent, with why. Round 2 of
    the second pass: data equal to 2 (or 0.5) everywhere were inconclusive, "c = -2.77e-18 +- 2.5e-18", a fit of float64's
    rounding of log(1/y) read as noise."""
    import ibcheck

    ibcheck.register(ibcheck.Claim(id="EXPONE.thm.1", variables=["n", "d"], constants=["c"],
                                   bounds=[ibcheck.Bound("err", "O", "exp(-c*n/d)")]))
    rng = np.random.default_rng(0)

    @ibcheck.experiment("EXPONE.thm.1", grid={"n": [8, 16, 32, 64], "d": [8, 16, 32]}, seeds=3)
    def measure(cell, seed):
        flat = {"one": 1.0, "two": 2.0, "half": 0.5}
        return {"err": flat[shape] if shape in flat else math.exp(0.3 * cell["n"] / cell["d"] + 0.1 * rng.standard_normal())}

    c = ibcheck.compare("EXPONE.thm.1", progress=False)
    assert c.verdict == "inconsistent" and "does not decay like exp(-c h)" in c.reason, c.reason
    assert c.results[0].analysis.function.p_violation < 0.05


@pytest.mark.parametrize("noise", ["lognormal", "per_seed"])
def test_an_exp_type_bound_against_data_flat_at_one_with_noise_says_what_the_data_allow(isolated_registry, noise):
    """Second pass, family 3: data equal to 1 with noise (exp(N(0, 0.05)), or 0.999/1/1.001 by seed at every cell) were
    inconclusive for "the exp-type fit is singular". With c free, flat data over a finite range leave a small c > 0
    open: inconclusive, with c's estimate, the largest c the data allow and what would resolve a smaller one. The seeds'
    own spread floors the fit's noise, so identical cell means are not read as a noise-free fit (c's t was 1.4 there)."""
    import ibcheck

    ibcheck.register(ibcheck.Claim(id="EXPFLAT.thm.1", variables=["n", "d"], constants=["c"],
                                   bounds=[ibcheck.Bound("err", "O", "exp(-c*n/d)")]))
    rng = np.random.default_rng(0)

    @ibcheck.experiment("EXPFLAT.thm.1", grid={"n": [8, 16, 32, 64], "d": [8, 16, 32]}, seeds=3)
    def measure(cell, seed):
        return {"err": math.exp(0.05 * rng.standard_normal()) if noise == "lognormal" else [0.999, 1.0, 1.001][seed % 3]}

    c = ibcheck.compare("EXPFLAT.thm.1", progress=False)
    assert c.verdict == "inconclusive" and "singular" not in c.reason, c.reason
    assert "does not resolve its growth with h over h = 0.25..8" in c.reason and "no finite design refutes every c > 0" in c.reason
    cup = float(re.search(r"allow at most c = ([-0-9.e+]+)", c.reason).group(1))
    t = float(re.search(r", t = ([-0-9.e+]+),", c.reason).group(1))
    assert 0 < cup < 0.05 and abs(t) < 1, c.reason  # 0.05 sd over h up to 8 and 36 rows: c below about 0.01


def test_a_true_exp_type_bound_with_a_prefactor_above_one_is_not_called_a_non_decaying_measure():
    """The rule above reads c's sign only: y = 100 exp(-0.3 h) (y > 1 at the smallest cells) still decays."""
    rng = np.random.default_rng(1)
    rows = _rows(100.0, G1, lambda c: c["n"] / 100, rng)
    an = analyze(rows, ["n"], "Omega", {"n": 1.0}, bootstrap=False, extrapolate=False, free_constant=True)
    assert an.verdict != "inconsistent", an.reason


def _gauss_rows(rng, top: int, seeds: int, power: float = 1.0, prefactor: bool = True) -> list[dict]:
    """log(1/y) for y = 0.4 h^-1/2 exp(-0.3 h^power) (a Gaussian-tail prefactor; ``prefactor=False``: none), h = m/1000,
    m = 50 * 2^i up to 50 * 2^top, log-normal seed noise sd 0.15."""
    rows = []
    for m in (50 * 2 ** i for i in range(top + 1)):
        h = m / 1000
        for s in range(seeds):
            z = 0.3 * h ** power - ((math.log(0.4) - 0.5 * math.log(h)) if prefactor else 0.0) + 0.15 * rng.standard_normal()
            rows.append({"m": float(m), "log_m": math.log(m), "seed": s, "run": f"{m}/{s}", "value": z})
    return rows


def _gauss_verdicts(trials: int, seed: int, **kw) -> tuple[dict, list[str]]:
    rng = np.random.default_rng(seed)
    out, reasons = {"consistent": 0, "inconsistent": 0, "inconclusive": 0}, []
    for _ in range(trials):
        an = analyze(_gauss_rows(rng, **kw), ["m"], "Omega", {"m": 1.0}, bootstrap=False, extrapolate=False, free_constant=True)
        out[an.verdict] += 1
        reasons.append(an.reason)
    return out, reasons


def test_a_gaussian_tail_prefactor_is_part_of_the_claims_family_and_confirmed_where_the_data_resolve_it():
    """Issue 57, item 2: 0.4 h^-1/2 exp(-0.3 h) against O(exp(-c h)) was never confirmed (0 of 60 at m up to 204,800 with 4
    seeds), the move that b log h explains left undetermined. The lower-order term is now part of the claim's family: 60 of
    60 confirmed there, the reason naming the term. The false exp(-0.3 h^0.8) at that design stays refuted (59 of 60) and is
    never confirmed."""
    true, reasons = _gauss_verdicts(10, 21, top=12, seeds=4)
    assert true["consistent"] >= 8 and true["inconsistent"] == 0, true
    assert all("with a lower-order term b log h of log(1/y) beside c h" in r for r, in zip(reasons) if r.startswith("no deviation"))
    false, _ = _gauss_verdicts(10, 22, top=12, seeds=4, power=0.8, prefactor=False)
    assert false["consistent"] == 0 and false["inconsistent"] >= 8, false


def test_a_move_no_lower_order_term_could_be_fitted_beside_is_no_violation():
    """The same true Gaussian-tail bound at m up to 3,200 with 16 seeds was called inconsistent in 11 of 60 trials: the
    upper half of the range (4 cells) is too few to fit b log h beside c h, and a move that no lower-order term could be
    tried against was taken as a violation. Now it is undetermined, and the reason says so: 2 of 180 trials inconsistent
    (1%), each a whole-range move that survives both terms. At 20 trials, at most 1 inconsistent: the old rule (18%) passes
    that in 10% of seeds."""
    res, reasons = _gauss_verdicts(20, 23, top=6, seeds=16)
    assert res["inconsistent"] <= 1, res
    assert any("cannot be fitted beside c h" in r or "a lower-order term b log h" in r for r in reasons), reasons[:3]
