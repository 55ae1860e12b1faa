"""Censored measurements are bounds: used through a Tobit likelihood, counted, never dropped.
And a user's trajectory experiment runs once per seed."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ibcheck
from ibcheck.simulate.stats.fit import fit_exponents
from ibcheck.simulate.substrate.censored import AtLeast, censored_quantile, decode, encode
from ibcheck.simulate.verdict.analysis import analyze

DS = [64, 128, 256, 512, 1024]


def _censored_rows(limit: float, seeds: int = 40, slope: float = 0.5, seed: int = 0) -> tuple[list[dict], int]:
    """y = d^slope with log-normal noise; every value above ``limit`` is reported as AtLeast(limit),
    as a radius search capped at ``limit`` would."""
    rng = np.random.default_rng(seed)
    rows, cens = [], 0
    for d in DS:
        for s in range(seeds):
            y = 0.2 * d ** slope * math.exp(0.4 * rng.standard_normal())
            if y > limit:
                rows.append({"d": d, "value": limit, "censor": "at_least", "seed": s})
                cens += 1
            else:
                rows.append({"d": d, "value": y, "seed": s})
    return rows, cens


def test_tobit_recovers_the_slope_that_dropping_censored_rows_biases():
    rows, cens = _censored_rows(limit=5.0)
    assert cens > 0.15 * len([r for r in rows if r["d"] == DS[-1]])  # a real share of the largest cell is censored
    fit = fit_exponents(rows, ["d"], bootstrap=False)
    assert fit.censored == cens and fit.dropped == 0
    lo, hi = fit.ci["d"]
    assert lo < 0.5 < hi
    dropped = fit_exponents([r for r in rows if "censor" not in r], ["d"], bootstrap=False)
    naive = fit_exponents([{k: v for k, v in r.items() if k != "censor"} for r in rows], ["d"], bootstrap=False)
    # dropping them, or taking the bound as the value, pulls the exponent down
    assert dropped.estimate["d"] < fit.estimate["d"] - 0.05
    assert naive.estimate["d"] < fit.estimate["d"] - 0.05


def test_a_fully_censored_cell_is_named_and_still_pulls_the_fit():
    rows, _ = _censored_rows(limit=1e9, seeds=6)  # nothing censored yet
    top = [r for r in rows if r["d"] == DS[-1]]
    cap = 0.5 * min(r["value"] for r in top)  # a search limit below every value of the largest cell
    rows = [r for r in rows if r["d"] != DS[-1]] + [{"d": DS[-1], "value": cap, "censor": "at_least", "seed": r["seed"]} for r in top]
    an = analyze(rows, ["d"], "Omega", {"d": 0.5})
    assert an.fit.unidentified and any("d=1024" in n and "Tobit" in n for n in an.notes)
    as_values = analyze([{k: v for k, v in r.items() if k != "censor"} for r in rows], ["d"], "Omega", {"d": 0.5})
    # taking the bounds as values pulls the slope down; the likelihood keeps it where the other cells put it
    assert as_values.fit.estimate["d"] < an.fit.estimate["d"] - 0.05
    assert abs(an.fit.estimate["d"] - 0.5) < 0.1


def test_censored_quantile_never_drops_infinite_radii():
    r = np.array([1.0, 2.0, 3.0, np.inf, np.inf])
    assert censored_quantile(r, 0.5) == pytest.approx(3.0)
    assert censored_quantile(r, 0.9, limit=100.0) == AtLeast(100.0)
    assert censored_quantile(np.array([1.0, 2.0, 3.0, 4.0]), 0.5) == pytest.approx(2.5)  # numpy's median where all are finite
    assert decode(encode({"r": AtLeast(4.0)})["r"]) == (4.0, "at_least")
    with pytest.raises(ibcheck.InputError):
        ibcheck.AtLeast(float("nan"))


def test_a_user_measure_may_return_bounds_and_the_summary_counts_them(tmp_path, isolated_registry):
    claims = tmp_path / "claims.py"
    claims.write_text('''
import math, random
import ibcheck

ibcheck.Claim("my.censored", "a radius that grows like sqrt(d)", variables=[ibcheck.Variable("d", "int", low=2)],
              bounds=[ibcheck.Bound("radius", "Omega", "sqrt(d)")])

@ibcheck.experiment("my.censored", grid={"d": [64, 128, 256, 512, 1024]}, seeds=8)
def measure(cell, seed):
    rnd = random.Random(seed * 7919 + cell["d"])
    y = 0.2 * math.sqrt(cell["d"]) * math.exp(0.3 * rnd.gauss(0, 1))
    return {"radius": ibcheck.AtLeast(5.0) if y > 5.0 else y}
''')
    ibcheck.load_claims(str(claims))
    c = ibcheck.compare("my.censored", quick=False)
    s = c.as_json()
    cens = {c_["cell"]["d"]: c_["censored"]["radius"] for c_ in s["censored"]}
    assert cens[1024] > 0 and sum(cens.values()) > 0
    assert s["results"][0]["dropped_rows"] == 0
    assert "censored" in s["results"][0]["reason"]  # above 5% of the largest cell: named


def test_a_user_trajectory_experiment_runs_once_per_seed(tmp_path, isolated_registry):
    calls = tmp_path / "calls.txt"
    claims = tmp_path / "claims.py"
    claims.write_text(f'''
import math
import ibcheck

ibcheck.Claim("my.rate", "a margin gap that closes like 1/log t", variables=[ibcheck.Variable("t", "real", low=1)],
              bounds=[ibcheck.Bound("margin_gap", "O", "1/log(t)")])

@ibcheck.experiment("my.rate", grid={{"width": [8]}}, seeds=5, trajectory=True)
def measure(cell, seed):
    with open({str(calls)!r}, "a") as f:
        f.write("x\\n")
    ts = [10.0 ** e for e in range(2, 40, 2)]
    return {{"t": ts, "margin_gap": [(1 + 0.05 * seed) / math.log(t) for t in ts]}}
''')
    ibcheck.load_claims(str(claims))
    c = ibcheck.compare("my.rate", quick=False)
    s = c.as_json()
    assert calls.read_text().count("x") == 5  # one run per seed, not one per point
    fit = {f["variable"]: f for f in s["results"][0]["fits"]}
    assert set(fit) == {"t", "log(t)"}
    assert s["results"][0]["runs"] == 5 and s["results"][0]["df"] == 4
    assert s["verdict"] == "consistent", s["reason"]


def test_workers_receive_the_measure_not_a_name_to_look_up(tmp_path, isolated_registry):
    """The claims file is gone before the sweep starts: spawned workers cannot load it, so they must
    run the measure they were sent (a user's function, carried by value)."""
    claims = tmp_path / "gone.py"
    claims.write_text('''
import math
import ibcheck

ibcheck.Claim("my.gone", "sqrt growth", variables=[ibcheck.Variable("d", "int", low=2)],
              bounds=[ibcheck.Bound("y", "Theta", "sqrt(d)")])

@ibcheck.experiment("my.gone", grid={"d": [16, 64, 256, 1024]}, seeds=3)
def measure(cell, seed):
    return {"y": math.sqrt(cell["d"]) * (1 + 0.01 * seed)}
''')
    ibcheck.load_claims(str(claims))
    claims.unlink()
    c = ibcheck.compare("my.gone", workers=2)
    assert c.record.task_status == {"ok": 12}
    assert c.verdict == "consistent"
