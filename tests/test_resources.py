"""Bounded resources (issue 58, item 4): what `verdict --data` holds grows with the cells, not their square, and a
design past the limit is refused in one line that names it."""
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

import ibcheck


def test_the_bootstrap_over_cells_holds_batches_not_a_cells_by_cells_matrix():
    """The BCa interval's jackknife resamples every cell but one: unbatched, scipy holds a cells x cells index matrix and
    its data (3000 cells: 72 MB each; 10^4 cells took 2.1 GB). In batches of BCA_BATCH it holds BCA_BATCH x cells."""
    from ibcheck.simulate.stats.fit import _bca

    rng = np.random.default_rng(0)
    n = 3000
    X = np.column_stack([np.ones(n), rng.normal(size=n), rng.normal(size=n)])
    y = X @ [1.0, 0.5, -0.5] + 0.1 * rng.normal(size=n)
    tracemalloc.start()
    try:
        ci, note = _bca(X, y, ["d", "k"], 0.95, 0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert note is None and ci["d"][0] < 0.5 < ci["d"][1] and ci["k"][0] < -0.5 < ci["k"][1]
    assert peak < 20e6, peak  # a cells x cells matrix of indices alone is 72 MB


def test_a_verdict_on_your_measurements_never_loads_torch(tmp_path):
    """The verdict path is statistics and a report: torch (300 MB of a process's memory) is not imported."""
    path = tmp_path / "m.csv"
    rows = ["d,seed,value"] + [f"{d},{s},{(d ** 0.5) * (1 + 0.01 * s):.6g}" for d in (16, 32, 64, 128, 256) for s in range(3)]
    path.write_text("\n".join(rows) + "\n")
    code = ("import sys, ibcheck\n"
            f"r = ibcheck.verdict({str(path)!r}, predict='d=1/2', kind='Theta')\n"
            "print(r.record.bounds[0].verdict, 'torch' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-1] == "False", out.stdout


def test_more_cells_than_the_limit_are_refused_in_one_line_naming_it(tmp_path, monkeypatch):
    from ibcheck.simulate.compare import from_csv

    monkeypatch.setattr(from_csv, "MAX_CELLS", 4)
    path = tmp_path / "m.csv"
    path.write_text("d,seed,value\n" + "".join(f"{d},0,{d ** 0.5:.6g}\n" for d in (16, 32, 64, 128, 256)))
    with pytest.raises(ibcheck.InputError) as err:
        ibcheck.verdict(str(path), predict="d=1/2", kind="Theta")
    msg = str(err.value)
    assert "5 distinct cells" in msg and "at most 4" in msg and "\n" not in msg


def test_the_kkt_time_cap_counts_from_the_call_and_the_radii_past_it_are_not_measured():
    """`kkt --time T` (issue 58, item 4): the cap counts from the call (imports, the separability check, the GD start,
    the radii), not from the search's start; at n = d = 1000, T = 20 the command took 46 s, now 23 s (bench/kkt_time_cap.py
    measures it). A cap that has passed by the time the search would start (the checks and the GD start used it) starts
    no pattern, and the result says the search stopped at the cap, incomplete."""
    res = ibcheck.kkt_points(d=12, k=4, n=24, starts=2, max_starts=4, time=1e-6)
    js = res.as_json()
    assert js["engine"]["stop"] == "time" and js["engine"]["starts"] == 0 and not js["engine"]["complete"]
    assert js["points"] == [] and js["distinct_kkt_points_by_function"] == 0
    # the control, the same search under a cap it never meets (points found, their radii measured), is
    # test_kkt_cli.py::test_kkt_runs_the_engine_on_clusters_and_refuses_a_one_class_file (`kkt --time 600`)


def test_the_gd_start_gets_a_share_of_the_cap_and_the_line_names_the_users_cap(monkeypatch):
    """Second pass, family 4: `kkt --data sphere --d 1000 --n 1000 --time 20` took 100 s on a contended machine and said
    "stopped at the time cap of 0 s after 0 starts": the trained GD start ran its 2000 steps outside any cap, and the line
    named what was left for the engine as the cap. The start now gets at most GD_START_SHARE of the cap left (none once
    it has passed), and the line names the user's cap and what was left of it."""
    from ibcheck.simulate.tools import kkt_search as ks

    seen = []
    original = ks._gd_start

    def spy(cfg, seconds=None):
        seen.append(seconds)
        return original(cfg, seconds)

    monkeypatch.setattr(ks, "_gd_start", spy)
    ibcheck.kkt_points(data="sphere", d=20, n=20, starts=2, time=2.0)
    assert len(seen) == 1 and seen[0] is not None and 0 < seen[0] <= ks.GD_START_SHARE * 2.0
    res = ibcheck.kkt_points(data="sphere", d=20, n=20, starts=2, time=1e-6)
    assert len(seen) == 1  # past the cap: no trained start at all
    assert res.search.stop == "time" and "stopped at the time cap of 1e-06 s (0 s of it left for the search" in res.text()


def test_separability_is_proven_by_an_interpolating_witness_or_left_to_the_svm():
    from ibcheck.simulate.tools.kkt_search import _separating_witness, check_separable

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 60))
    y = np.where(rng.random(40) < 0.5, -1.0, 1.0)
    assert _separating_witness(X, y)
    xor = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    assert not _separating_witness(xor, np.array([1.0, 1.0, -1.0, -1.0]))
    assert check_separable(xor, np.array([1.0, 1.0, -1.0, -1.0]), capped=True)["linearly_separable"] is False


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


def _verdicts_rss(tmp_path, calls: int, new_claims: bool) -> list[float]:
    import gc

    path = tmp_path / "m.csv"
    path.write_text("d,seed,value\n" + "".join(f"{d},{s},{(d ** 0.5) * (1 + 0.01 * s):.6g}\n"
                                               for d in (16, 32, 64, 128, 256) for s in range(3)))
    out = []
    for i in range(calls):
        ibcheck.verdict(str(path), predict=f"d={0.5 + 0.001 * i * new_claims}", kind="Theta")
        gc.collect()
        out.append(_rss_mb())
    return out


def test_verdicts_in_one_process_keep_a_flat_memory(tmp_path):
    """No state grows between API calls (issue 58, item 4): after the first calls (imports, caches), ten more verdicts
    add under 8 MB (measured: 141 MB at every one of 50 calls; a new claim each call: -m slow)."""
    rss = _verdicts_rss(tmp_path, 8, new_claims=False)
    assert rss[-1] - rss[2] < 8.0, rss


@pytest.mark.slow
def test_fifty_verdicts_in_one_process_keep_a_flat_memory(tmp_path):
    rss = _verdicts_rss(tmp_path, 50, new_claims=True)
    assert rss[-1] - rss[2] < 8.0, rss


def test_a_search_on_features_far_from_unit_scale_names_the_scale():
    """Issue 58, item 2: the same 10 points at 1e-30 certified nothing, and the output never named the scale. Below
    2^-12 the search now runs at unit scale and continues its points to the data's scale, certified in extended
    precision (tests/test_kkt_extended.py); the note says how. Far above unit scale the note names the cone programs'
    absolute tolerances; at unit scale there is none."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(10, 3))
    y = np.where(X[:, 0] + 0.1 >= 0, 1.0, -1.0)
    unit = ibcheck.kkt_points(X=X, y=y, width=4, starts=4, max_starts=8)
    assert unit.distinct >= 1 and unit.as_json()["scale_note"] is None
    tiny = ibcheck.kkt_points(X=X * 1e-30, y=y, width=4, starts=4, max_starts=8)
    note = tiny.as_json()["scale_note"]
    assert note.startswith("the features' scale is about 2^-98: the search ran on X 2^98") and note in tiny.heading()
    assert "in 80-digit arithmetic" in note and tiny.distinct >= 1  # 20 + 2 * 98 log10 2, rounded up
    big = ibcheck.kkt_points(X=X * 2.0**40, y=y, width=4, starts=4, max_starts=8)
    assert "absolute tolerances" in big.as_json()["scale_note"]


def _trajectory_table(runs: int, points: int):
    from ibcheck.simulate.compare.from_csv import Table

    rng = np.random.default_rng(1)
    rows = [{"row": i, "seed": str(s), "t": float(t), "value": float(2 / np.log(t + 2) * np.exp(0.05 * rng.normal()))}
            for i, (s, t) in enumerate((s, t) for s in range(runs) for t in range(1, points + 1))]
    return Table("traj.csv", ["t"], rows)


def test_a_long_trajectory_is_binned_in_log_time_within_each_run(monkeypatch):
    """Past MAX_POINTS rows, each run's points are averaged (geometric means of time and value) in bins [2^(i/b),
    2^((i+1)/b)), the finest b that fits; runs are never pooled; a shorter table is left as it is."""
    from ibcheck.simulate.compare import binning

    table = _trajectory_table(3, 64)
    assert binning.log_time_bins(table, "t") == (table, None)  # 192 rows: fitted point by point
    monkeypatch.setattr(binning, "MAX_POINTS", 60)
    binned, how = binning.log_time_bins(table, "t")
    count = {b: len({(r["seed"], np.floor(np.log2(r["t"]) * b)) for r in table.rows}) for b in (16, 8, 4, 2, 1)}
    assert count[8] > 60 >= count[4]  # the data make the choice: b = 8 leaves too many, b = 4 fits
    assert (how.rows, how.per_octave, how.points) == (192, 4, len(binned.rows)) == (192, 4, count[4])
    for r in binned.rows:
        first = table.rows[r["row"]]  # a bin's point names its first row
        members = [q for q in table.rows if q["seed"] == r["seed"] and np.floor(np.log2(q["t"]) * 4) == np.floor(np.log2(first["t"]) * 4)]
        assert r["seed"] == first["seed"] and (len(members) > 1 or (r["t"], r["value"]) == (first["t"], first["value"]))
        assert len(members) == r["binned"]
        assert np.isclose(np.log(r["value"]), np.mean([np.log(q["value"]) for q in members]), rtol=1e-12)
        assert np.isclose(np.log(r["t"]), np.mean([np.log(q["t"]) for q in members]), rtol=1e-12)
    assert sum(r["binned"] for r in binned.rows) == 192
    assert f"192 rows -> {count[4]} points, 4 bin(s) per octave" in how.text()
    monkeypatch.setattr(binning, "MAX_POINTS", count[1] - 1)
    with pytest.raises(ibcheck.InputError, match=f"at one bin per octave they are still {count[1]} points, over the {count[1] - 1}"):
        binning.log_time_bins(table, "t")


def test_a_trajectory_csv_past_the_point_limit_answers_binned_and_says_so(tmp_path):
    """A trajectory of MAX_POINTS + 4 rows is binned (a 10^6-point one took 33 s and 0.61 GB here, against 140 s and
    0.74 GB for 10^5 points fitted one by one); the verdict, summary.json and the reason name the binning."""
    from ibcheck.simulate.compare.binning import MAX_POINTS

    runs, points = 4, MAX_POINTS // 4 + 1
    table = _trajectory_table(runs, points)
    path = tmp_path / "traj.csv"
    path.write_text("t,seed,value\n" + "".join(f"{r['t']:g},{r['seed']},{r['value']:.6g}\n" for r in table.rows))
    res = ibcheck.verdict(str(path), predict="t=0,log(t)=-1", kind="Theta", trajectory=True)
    rec = res.record
    assert rec.rows == runs * points and rec.binning and f"{runs * points} rows -> " in rec.binning
    assert rec.bounds[0].verdict == "consistent", rec.bounds[0].reason
    assert "binned in log-time" in rec.bounds[0].reason and rec.as_json()["binning"] == rec.binning
    assert len(res.rows) <= MAX_POINTS and {r["seed"] for r in res.rows} == {str(s) for s in range(runs)}


def test_the_reports_inside_lookup_agrees_with_the_scan_it_replaced():
    """The log-log figure asked, per cell, whether every window cell agreeing on the fitted variables lies inside: a scan
    of all window cells per cell (61 of 90 s at 7,700 cells; 16 s in all now). The lookup gives the scan's answer,
    window cells with more variables than the fit (a held n) and cells the window does not know included."""
    from types import SimpleNamespace

    from ibcheck.simulate.report.comparison import _cell_inside

    rng = np.random.default_rng(0)
    cells = [{"d": float(d), "k": float(k), "n": float(n)} for d in (8, 16, 32) for k in (2, 4) for n in (100, 200)]
    summary = {"applicability": {"cells": [{"cell": c, "inside": bool(rng.random() < 0.7)} for c in cells]}}
    inside = {tuple(sorted(c["cell"].items())): c["inside"] for c in summary["applicability"]["cells"]}
    res = SimpleNamespace(analysis=SimpleNamespace(variables=["d", "k"]))
    look = _cell_inside(res, summary)
    for c in [*({"d": d, "k": k} for d in (8.0, 16.0, 32.0, 64.0) for k in (2.0, 4.0)), {"d": 8.0}, {"k": 4.0}]:
        key = tuple(sorted(c.items()))
        matches = [ins for k, ins in inside.items() if set(key) <= set(k)]
        assert look(c) == (all(matches) if matches else True), c
