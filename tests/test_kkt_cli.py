import json

import pytest


def test_kkt_json_contract(cli, tmp_path):
    res = cli("kkt", "--setting", "sphere", "--d", "2", "--n", "8", "--width", "6", "--starts", "4", "--max-starts", "4", "--global", "--seed", "3",
              "--out", str(tmp_path / "k"), "--json", check_rc=0)
    rep = json.loads(res.stdout)
    assert rep["global"]["status"] == "optimal" and rep["global"]["value"] > 0
    keys = {"start", "solver_status", "stationarity_residual", "complementary_slackness", "min_margin", "normalized_margin",
            "is_global", "universal_flip_rate", "radius_median"}
    for p in rep["points"]:
        assert keys <= set(p)
    kkt = [p for p in rep["points"] if p["is_kkt"]]
    assert any(p["is_global"] for p in kkt) and any(p["is_global"] is False for p in kkt)
    for p in kkt:
        assert p["value"] >= rep["global"]["value"] * (1 - 1e-6)
    assert (tmp_path / "k" / "kkt.json").is_file() and (tmp_path / "k" / "points.csv").is_file()


def test_kkt_check_json_contract(cli, tmp_path):
    run = tmp_path / "run"
    cli("train", "--setting", "two-layer", "--d", "10", "--k", "4", "--n", "30", "--m", "10", "--loss", "exp", "--reduction", "sum",
        "--schedule", "loss-based", "--lr", "0.05", "--steps", "1000", "--checkpoints", "6", "--quiet", "--out", str(run), check_rc=0)
    rep = json.loads(cli("kkt-check", str(run), "--json", check_rc=0).stdout)
    assert rep["checkpoints"]
    for c in rep["checkpoints"]:
        assert {"step", "log10_loss", "epsilon", "delta", "solver_status"} <= set(c)
    feas = [c for c in rep["checkpoints"] if c["epsilon"] is not None]
    assert feas and all(c["solver_status"] == "optimal" for c in feas)
    assert (run / "kkt_check.png").is_file()


@pytest.mark.parametrize("args, word", [
    (["kkt", "--starts", "0", "--out", "{tmp}/x"], "--starts 0 is out of range"),
    (["kkt", "--global", "--max-patterns", "0", "--out", "{tmp}/x"], "--max-patterns 0 is out of range"),
    (["kkt-check", "/nonexistent"], "does not exist"),
])
def test_kkt_bad_input(cli, tmp_path, args, word):
    res = cli(*[a.format(tmp=tmp_path) for a in args])
    assert res.returncode == 2, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr
    assert word in res.stderr
    assert not (tmp_path / "x").exists()


def test_kkt_check_refuses_runs_without_checkpoints_and_non_homogeneous(cli, tmp_path):
    run = tmp_path / "plain"
    cli("train", "--setting", "fa", "--d", "16", "--k", "2", "--n", "20", "--steps", "50", "--quiet", "--out", str(run), check_rc=0)
    res = cli("kkt-check", str(run))
    assert res.returncode == 2 and "no checkpoints" in res.stderr
    rn = tmp_path / "rn"
    cli("train", "--setting", "random-net", "--d", "10", "--m", "5", "--activation", "tanh", "--quiet", "--out", str(rn), check_rc=0)
    res = cli("radius", str(rn), "--points", "5")
    assert res.returncode == 2 and "ReLU" in res.stderr


def test_non_separable_data_are_refused_before_any_solver():
    import numpy as np

    from ibcheck.simulate.tools.kkt_search import check_separable as _check_separable
    from ibcheck.theory import InputError

    X = np.array([[0.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    with pytest.raises(InputError) as e:
        _check_separable(X, np.array([1.0, -1.0, 1.0]))
    assert "not separable" in str(e.value)
    info = _check_separable(np.array([[0.0], [1.0], [2.0]]), np.array([1.0, -1.0, 1.0]))
    assert info["linearly_separable"] is False


def test_kkt_runs_the_engine_on_clusters_and_refuses_a_one_class_file(cli, tmp_path):
    """`ibcheck kkt`: the engine's candidates (a GD network, the partition cones, GD starts), each certified under one
    policy (1e-6) and grouped into distinct points; a bad `--data` file gets one line."""
    import json

    import numpy as np

    out = tmp_path / "k"
    res = cli("kkt", "--d", "12", "--k", "4", "--n", "24", "--width", "6", "--starts", "2", "--max-starts", "4", "--time", "600", "--out", str(out),
              "--json", check_rc=0)
    s = json.loads(res.stdout)
    # a cap it never meets (the control of test_resources.py's search capped at 1e-6 s, the same call): points, their radii
    assert s["engine"]["stop"] != "time"
    assert all(p["radius_median"] is not None and "robustness_note" not in p for p in s["points"] if p["is_kkt"])
    starts = [p["start"] for p in s["points"]]
    assert any(x.startswith("cone:partition") for x in starts) and any(x.startswith(("gd:per-cluster", "gd:groups")) for x in starts)
    assert s["policy"]["certified_at"] == 1e-6 and s["distinct_kkt_points_by_function"] >= 1
    assert all(p["is_kkt"] == (p["point"] is not None) for p in s["points"])
    from ibcheck.simulate.substrate.data import clusters

    ds = clusters(12, 4, 24, 0.3, seed=0)
    # the engine on a user's own arrays: test_kkt_on_a_users_file_reports_its_own_k_the_widths_used_and_how_saturated_it_is
    np.savez(tmp_path / "one.npz", X=ds.X, y=np.ones(24))
    bad = cli("kkt", "--data", str(tmp_path / "one.npz"), "--out", str(tmp_path / "b"))
    assert bad.returncode == 2 and "one class" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "b").exists()


def test_kkt_on_a_users_file_reports_its_own_k_the_widths_used_and_how_saturated_it_is(cli, tmp_path):
    """`kkt --data`: kkt.json names the data's own number of clusters (not the CLI's default --k) and the widths of the GD
    starts run; the search runs until saturated or capped and says which; `--time` caps it and says so."""
    import json

    import numpy as np

    from ibcheck.simulate.substrate.data import clusters

    ds = clusters(8, 3, 12, 0.3, seed=2)
    np.savez(tmp_path / "mine.npz", X=ds.X, y=ds.y, cluster=ds.cluster)
    out = json.loads(cli("kkt", "--data", str(tmp_path / "mine.npz"), "--starts", "2", "--max-starts", "6", "--saturation", "0.5",
                         "--enumerate", "0", "--programs", "3", "--out", str(tmp_path / "m"), "--json", check_rc=0).stdout)
    assert out["setting"] == "arrays" and out["n"] == 12 and out["distinct_kkt_points_by_function"] >= 1
    assert out["k"] == 3 and out["width"] is None  # its own 3 clusters; no GD network is trained on a user's arrays
    assert out["gd_widths"] and set(out["gd_widths"]) <= set(range(1, 7)) and 3 in out["gd_widths"]
    eng = out["engine"]
    assert eng["stop"] in ("unseen", "cap") and eng["gd_starts"] <= 6
    assert (eng["stop"] == "unseen") == (eng["unseen"] <= 0.5 and eng["gd_starts"] >= 2)
    # points and families, never "saturated" nor "every KKT point was found"
    assert out["saturation"].startswith(f"{eng['distinct']} point(s) in {eng['families']} famil")
    assert "more may exist" in out["saturation"] and "saturated" not in out["saturation"]
    assert out["families"] == eng["families"] <= out["distinct_kkt_points_by_function"]
    rec = json.loads(cli("kkt", "--data", str(tmp_path / "mine.npz"), "--starts", "2", "--max-starts", "30", "--enumerate", "0",
                         "--programs", "3", "--objective", "margin", "--out", str(tmp_path / "o"), "--json", check_rc=0).stdout)
    assert rec["engine"]["stop"] in ("stopped", "cap") and rec["engine"]["starts"] <= 30 + 1
    assert "running extremum of the normalized margin" in rec["saturation"] and len(rec["engine"]["running_max"]) == rec["engine"]["starts"]
    timed = json.loads(cli("kkt", "--data", str(tmp_path / "mine.npz"), "--time", "0.001", "--out", str(tmp_path / "t"), "--json",
                           check_rc=0).stdout)
    assert timed["engine"]["stop"] == "time" and not timed["engine"]["complete"] and "time cap" in timed["saturation"]
    bad = cli("kkt", "--data", str(tmp_path / "mine.npz"), "--saturation", "1.5", "--out", str(tmp_path / "b"))
    assert bad.returncode == 2 and "saturation" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "b").exists()
