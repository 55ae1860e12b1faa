"""Faults of the verdict engine found by users (issue 27, section 11, the ones fixed so far): stale rows of a changed
measure, CSV seeds compared as text, an all-failed sweep without a reason, growth ignoring where eps goes."""
from __future__ import annotations

import os

import pytest

import ibcheck

CLAIMS = '''
import ibcheck
import helper_{tag} as helper
claim = ibcheck.Claim("MY.stale.{tag}", title="stale", variables=("d",), bounds=[ibcheck.Bound("r", "O", "sqrt(d)")], status="order")

@ibcheck.experiment("MY.stale.{tag}", grid={{"d": [64, 128, 256]}}, seeds=2)
def measure(cell, seed):
    return {{"r": helper.scale() * float(cell["d"]) ** 0.5 * (1 + 0.01 * seed)}}
'''


def test_a_changed_helper_module_is_measured_again_not_read_from_old_rows(cli, tmp_path, isolated_registry, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "helper_a.py").write_text("def scale():\n    return 1.0\n")
    claims = tmp_path / "mine.py"
    claims.write_text(CLAIMS.format(tag="a"))
    out = tmp_path / "c"
    first = cli("--claims", claims, "compare", "MY.stale.a", "--out", out, "--json", check_rc=0)
    again = cli("--claims", claims, "compare", "MY.stale.a", "--out", out, "--json", check_rc=0)
    assert '"ran": 6' in first.stdout and '"ran": 0' in again.stdout  # the same code reuses every row
    (tmp_path / "helper_a.py").write_text("def scale():\n    return 2.0\n")  # the helper changed, the claims file did not
    import importlib
    import sys

    sys.modules.pop("helper_a", None)
    importlib.invalidate_caches()
    changed = cli("--claims", claims, "compare", "MY.stale.a", "--out", out, "--json", check_rc=0)
    assert '"ran": 6' in changed.stdout


def test_a_measure_redefined_in_a_session_is_measured_again(tmp_path):
    store = str(tmp_path / "s.sqlite")
    with ibcheck.using_registry(ibcheck.Registry()):
        ibcheck.register(ibcheck.Claim("MY.api.1", variables=("d",), bounds=[ibcheck.Bound("r", "O", "sqrt(d)")]))

        @ibcheck.experiment("MY.api.1", grid={"d": [64, 128, 256]}, seeds=2)
        def measure(cell, seed):
            return {"r": float(cell["d"]) ** 0.5 * (1 + 0.01 * seed)}

        a = ibcheck.compare("MY.api.1", store=store)

        @ibcheck.experiment("MY.api.1", grid={"d": [64, 128, 256]}, seeds=2)  # noqa: F811  (the user edits the measure)
        def measure(cell, seed):  # noqa: F811
            return {"r": float(cell["d"]) ** 0.25 * (1 + 0.01 * seed)}

        b = ibcheck.compare("MY.api.1", store=store)
    assert a.record.tasks.ran == 6 and b.record.tasks.ran == 6  # the old rows are not this measure's
    assert abs(a.conf_int("r")[0] - 0.5) < 0.05 and abs(b.conf_int("r")[0] - 0.25) < 0.05


def test_csv_seeds_are_compared_as_numbers(tmp_path):
    csv = tmp_path / "m.csv"
    csv.write_text("d,seed,value\n64,1,8\n64,1.0,8.1\n128,2,11\n256,3,16\n")
    with pytest.raises(ibcheck.InputError, match="seed"):  # "1" and "1.0" are one run measured twice
        ibcheck.verdict(str(csv), predict="d=1/2", kind="Theta")
    csv.write_text("t,seed,value\n" + "".join(f"{t},{s},{1 / t}\n" for t in (10, 100, 1000, 10000) for s in ("1", "1.0", "01")[:1])
                   + "".join(f"{t},{s},{1.1 / t}\n" for t, s in zip((10, 100, 1000, 10000), ("2", "2.0", "02", "2.00"))))
    v = ibcheck.verdict(str(csv), predict="t=-1", kind="Theta", trajectory=True)
    assert v.bounds[0].analysis.fit.runs == 2  # seed 2 written four ways is one run


def test_a_sweep_where_every_row_fails_says_why(cli, tmp_path, isolated_registry):
    claims = tmp_path / "fail.py"
    claims.write_text('''
import ibcheck
claim = ibcheck.Claim("MY.fail.1", variables=("d",), bounds=[ibcheck.Bound("r", "O", "sqrt(d)")])

@ibcheck.experiment("MY.fail.1", grid={"d": [64, 128, 256]}, seeds=1)
def measure(cell, seed):
    raise ValueError("the simulator ran out of patience")
''')
    res = cli("--claims", claims, "compare", "MY.fail.1", "--out", tmp_path / "c")
    assert res.returncode == 2 and "3 x ValueError" in res.stderr and "ran out of patience" in res.stderr, res.stderr


def test_growth_sends_eps_to_zero_by_default(cli):
    assert ibcheck.growth("eps", "eps**2").relation == ">"  # eps^2 = o(eps) as eps -> 0
    assert ibcheck.growth("eps", "eps**2", over=["eps"]).relation == "<"  # asked to grow, it grows
    assert ibcheck.growth("eps**2*sqrt(d)", "sqrt(d)").relation == "<"
    assert ">" in cli("growth", "eps", "eps**2", check_rc=0).stdout


def _eps_csv(path, power: float) -> str:
    import math
    import random

    rnd = random.Random(0)
    rows = ["eps,seed,value"] + [f"{e},{s},{e ** power * math.exp(rnd.gauss(0, 0.05))}" for e in (0.05, 0.1, 0.2, 0.4) for s in range(3)]
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def test_a_prediction_in_eps_is_tested_as_eps_tends_to_zero(tmp_path):
    """eps^2 data against O(eps) was 'inconsistent' (eps fitted as if it grew); as eps -> 0, eps^2 = O(eps) holds."""
    data = _eps_csv(tmp_path / "eps.csv", 2.0)
    assert ibcheck.verdict(data, predict="eps=1", kind="O").verdict != "inconsistent"
    assert ibcheck.verdict(data, predict="eps=2", kind="O").verdict == "consistent"
    assert ibcheck.verdict(_eps_csv(tmp_path / "eps1.csv", 1.0), predict="eps=2", kind="O").verdict == "inconsistent"  # eps breaks O(eps^2)
    v = ibcheck.verdict(data, predict="eps=2,log(1/eps)=1", kind="Theta")  # log(1/eps) was refused
    assert [t.term for t in v.bounds[0].terms] == ["eps", "log(1/eps)"]


def test_from_keeps_the_small_values_of_a_variable_that_tends_to_zero(tmp_path):
    data = _eps_csv(tmp_path / "eps.csv", 2.0)
    v = ibcheck.verdict(data, predict="eps=2", kind="O", fit_from={"eps": 0.2})
    an = v.bounds[0].analysis
    assert sorted(round(c["eps"], 3) for c in an.fit.cells) == [0.05, 0.1, 0.2]  # eps <= 0.2: the late, small values
    assert any("eps <= 0.2" in n for n in an.notes)


def test_a_nearly_collinear_design_widens_the_interval_instead_of_collapsing_it(tmp_path):
    """Theta(sqrt(d) log d log log d) on its own data over d = 1000..1100 was 'inconsistent': pinv(X'X) dropped the
    collinear direction and the log(d) SE read tens where the SVD of X gives ten thousand."""
    import math
    import random

    rnd = random.Random(1)
    rows = ["d,seed,value"] + [f"{d},{s},{math.sqrt(d) * math.log(d) * math.log(math.log(d)) * math.exp(rnd.gauss(0, 0.01))}"
                               for d in (1000, 1020, 1040, 1060, 1080, 1100) for s in range(3)]
    (tmp_path / "c.csv").write_text("\n".join(rows) + "\n")
    v = ibcheck.verdict(str(tmp_path / "c.csv"), predict="d=1/2,log(d)=1,log(log(d))=1", kind="Theta", plan_trials=0)
    assert v.verdict == "inconclusive"
    assert v.bounds[0].term("log(d)").se > 1e3


def test_an_exactly_collinear_coefficient_has_an_infinite_standard_error():
    import numpy as np

    from ibcheck.simulate.stats.estimate import LeastSquares, ols

    X = np.column_stack([np.ones(5), np.arange(5.0), 2 * np.arange(5.0)])
    assert LeastSquares(X).unidentified() == [1, 2]
    e = ols(X, np.arange(5.0) + np.array([0.1, -0.1, 0.05, 0.0, -0.05]))
    assert np.isinf(e.se(1)) and np.isinf(e.se(2)) and np.isfinite(e.se(0))


def test_a_bound_in_a_csv_is_written_ge_and_enters_the_fit_as_a_bound(tmp_path):
    """37 identical values at a search limit were fitted as values, and every marker tried was refused."""
    import math
    import random

    rnd = random.Random(2)
    rows = ["d,seed,value"]
    for d in (64, 128, 256, 512, 1024, 2048):
        for s in range(4):
            r = math.sqrt(d) * math.exp(rnd.gauss(0, 0.05))
            rows.append(f"{d},{s},{'>=30' if r > 30 else r}")  # no flip found up to the search limit 30
    (tmp_path / "b.csv").write_text("\n".join(rows) + "\n")
    v = ibcheck.verdict(str(tmp_path / "b.csv"), predict="d=1/2", kind="Theta", plan_trials=0)  # the fit is the point
    assert v.bounds[0].analysis.fit.censored >= 8
    assert abs(v.bounds[0].term("d").estimate - 0.5) < 0.05  # the bounds pull the fit up; as values they would flatten it
    flat = "\n".join(row.replace(">=", "") for row in rows) + "\n"
    (tmp_path / "v.csv").write_text(flat)
    assert ibcheck.verdict(str(tmp_path / "v.csv"), predict="d=1/2", kind="Theta", plan_trials=0).bounds[0].term("d").estimate < 0.45
    (tmp_path / "x.csv").write_text("d,seed,value\n64,0,>=abc\n128,0,3\n256,0,4\n")
    with pytest.raises(ibcheck.InputError, match="a bound is written >=25"):
        ibcheck.verdict(str(tmp_path / "x.csv"), predict="d=1/2", kind="Theta")


def test_the_planner_does_not_extend_a_grid_past_cells_where_the_measure_fails():
    """The budget planner extended a grid where the measure failed on 60-100% of rows."""
    from ibcheck.simulate.stats.fit import fit_exponents
    from ibcheck.simulate.sweep.tasks import cell_key
    from ibcheck.simulate.verdict.rounds import plan_round

    rows = [{"d": d, "seed": s, "value": d ** 0.5 * (1 + 0.01 * s)} for d in (64, 128, 256) for s in range(3)]
    fit = fit_exponents(rows, ["d"], bootstrap=False)
    undecided = [(fit.cells, list(fit.terms), "d", True)]  # a drifting exponent: the planner would extend d
    cells = {cell_key({"d": d}): 3 for d in (64, 128, 256)}
    grows = plan_round(undecided, cells, ["d"], lambda c: 1.0, 100.0, {}, 3, False)
    assert grows.extended.get("d") == 512
    held = plan_round(undecided, cells, ["d"], lambda c: 1.0, 100.0, {}, 3, False, failing=frozenset({cell_key({"d": 256})}))
    assert "d" not in held.extended and not any(dict(k)["d"] == 512 for k in held.new_cells)


WINDOWED = '''
import ibcheck
claim = ibcheck.Claim("MY.win.1", title="a bound inside k <= sqrt(d)", variables=("d", "k"), hypotheses={"H1": "k <= sqrt(d)"},
                      bounds=[ibcheck.Bound("r", "Theta", "sqrt(d/k)")], status="order")

@ibcheck.experiment("MY.win.1", grid={"d": [64, 256, 1024], "k": [2, 4, 8, 16, 32]}, seeds=2)
def measure(cell, seed):
    d, k = float(cell["d"]), float(cell["k"])
    inside = k <= d ** 0.5
    return {"r": ((d / k) ** 0.5 if inside else 1.0) * (1 + 0.01 * seed)}  # saturates outside the window
'''


def test_cells_outside_the_hypotheses_are_run_but_not_fitted_by_default(cli, tmp_path, isolated_registry):
    """A claim under k <= sqrt(d) whose measure saturates outside: the outside cells decided it."""
    import json

    path = tmp_path / "win.py"
    path.write_text(WINDOWED)
    inside = json.loads(cli("--claims", path, "compare", "MY.win.1", "--out", tmp_path / "a", "--json", check_rc=0).stdout)
    assert inside["verdict"] == "consistent" and inside["results"][0]["cells_used"] == "inside"
    assert inside["applicability"]["cells_inside"] == 12 and inside["applicability"]["cells_total"] == 15
    outside = json.loads(cli("--claims", path, "compare", "MY.win.1", "--include-outside", "--plan-trials", "0", "--out", tmp_path / "b", "--json",
                             check_rc=0).stdout)
    assert outside["verdict"] != "consistent" and outside["results"][0]["cells_used"] == "all" and outside["include_outside"]


def test_design_and_compare_agree_on_every_cell(cli, tmp_path, isolated_registry):
    import json

    path = tmp_path / "win.py"
    path.write_text(WINDOWED)
    d = json.loads(cli("--claims", path, "design", "MY.win.1", "--full", "--json", check_rc=0).stdout)
    c = json.loads(cli("--claims", path, "compare", "MY.win.1", "--out", tmp_path / "a", "--json", check_rc=0).stdout)
    ran = {(cell["d"], cell["k"]) for cell in (x["cell"] for x in c["applicability"]["cells"])}
    fitted = {(round(row["d"]), round(row["k"])) for row in c["results"][0]["cell_table"]}
    assert {(x["cell"]["d"], x["cell"]["k"]) for x in d["cells"] if x["runs"]} == ran  # 15 run
    assert {(x["cell"]["d"], x["cell"]["k"]) for x in d["cells"] if x["fitted"]} == fitted and len(fitted) == 12


def test_a_long_trajectory_is_thinned_to_a_bounded_number_of_points_per_run(tmp_path, isolated_registry):
    """Section 11: 3 runs x 1e5 points took 282 s and 1.8 GB after the sweep; each run is now read as at most
    MAX_POINTS points, evenly spaced in log t, so the analysis does not grow with the length of a trajectory."""
    import math

    from ibcheck.simulate.sweep.measurements import MAX_POINTS, thin_run

    pts = [{"t": 10.0 ** (2 + 38 * i / 49999), "value": 1.0} for i in range(50000)]
    thin = thin_run(pts, "t")
    assert len(thin) <= MAX_POINTS + 1 and thin[0] is pts[0] and thin[-1] is pts[-1]
    logs = [math.log10(p["t"]) for p in thin]
    gaps = [b - a for a, b in zip(logs, logs[1:])]
    assert max(gaps) < 3 * 38 / MAX_POINTS  # evenly spread in log t
    assert thin_run(pts[:10], "t") == pts[:10]
    claims = tmp_path / "claims.py"
    claims.write_text('''
import math, random
import ibcheck
ibcheck.Claim("my.long", "a gap closing like 1/log t", variables=[ibcheck.Variable("t", "real", low=1)],
              bounds=[ibcheck.Bound("margin_gap", "O", "1/log(t)")])
@ibcheck.experiment("my.long", grid={"width": [8]}, seeds=3, trajectory=True)
def measure(cell, seed):
    rnd = random.Random(seed)
    ts = [10.0 ** (2 + 38 * i / 19999) for i in range(20000)]
    e, out = 0.0, []
    for t in ts:
        e = 0.999 * e + 0.003 * rnd.gauss(0, 1)
        out.append((1 + 0.05 * seed) / math.log(t) * math.exp(e))
    return {"t": ts, "margin_gap": out}
''')
    ibcheck.load_claims(str(claims))
    s = ibcheck.compare("my.long", quick=False).as_json()
    runs = s["results"][0]["per_run"]
    assert len(runs) == 3 and all(r["points"] <= MAX_POINTS + 1 for r in runs)
    assert s["verdict"] == "consistent", s["reason"]


def test_the_code_version_hashes_every_source_file_and_changes_with_one(tmp_path):
    """Rows are keyed by the code version: it must cover theory/, solvers/ and simulate/ (it once hashed none, so a
    changed KKT engine reused the old engine's rows) and change when any of their files does."""
    import shutil

    from ibcheck.simulate.sweep.tasks import code_version, package_root, source_files

    files = source_files()
    assert len(files) > 50 and any(f.endswith(os.path.join("solvers", "kkt", "engine.py")) for f in files)
    for pkg in ("theory", "solvers", "simulate"):
        shutil.copytree(os.path.join(package_root(), pkg), tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    before = code_version(str(tmp_path))
    with open(tmp_path / "solvers" / "kkt" / "flip.py", "a") as f:
        f.write("# a change\n")
    assert code_version(str(tmp_path)) != before
