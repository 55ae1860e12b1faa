import csv
import json
import os

import pytest

TRAIN = ["train", "--setting", "fa", "--d", "64", "--k", "4", "--n", "80", "--m", "3", "--steps", "300", "--lr", "0.5",
         "--init-scale", "0.1", "--quiet"]


@pytest.fixture(scope="module")
def fa_run(tmp_path_factory):
    from tests.conftest import run_cli

    out = tmp_path_factory.mktemp("runs") / "fa"
    run_cli(*TRAIN, "--out", str(out), check_rc=0)
    return out


def test_radius_json_contract(cli, fa_run, tmp_path):
    res = cli("radius", str(fa_run), "--method", "all", "--points", "15", "--time-limit", "5", "--out", str(tmp_path / "r"), "--json", check_rc=0)
    rep = json.loads(res.stdout)
    assert rep["points"] == 15
    assert set(rep["methods"]) == {"universal", "attack", "certified", "exact"}
    for st in rep["methods"].values():
        assert {"median", "mean", "min", "max", "fraction_certified_exact"} <= set(st)
    assert rep["methods"]["certified"]["median"] <= rep["methods"]["exact"]["median"] * (1 + 1e-6)
    assert rep["methods"]["exact"]["median"] <= rep["methods"]["attack"]["median"] * (1 + 1e-6)
    assert rep["methods"]["attack"]["median"] <= rep["methods"]["universal"]["median"]
    # the fraction proven is the CSV's (a point past --time-limit is an interval, not a radius; how many reach it depends
    # on the machine's speed, so only its agreement with the rows and a majority proven are asserted)
    with open(rep["files"]["csv"]) as f:
        proven = [r["exact_proven"] == "True" for r in csv.DictReader(f)]
    assert len(proven) == 15 and rep["methods"]["exact"]["fraction_certified_exact"] == pytest.approx(sum(proven) / 15)
    assert sum(proven) > 7
    accs = [r["accuracy"] for r in rep["robust_accuracy"]]
    assert accs == sorted(accs, reverse=True) and accs[0] > 0.9 and accs[-1] == 0.0
    assert all({"eps", "accuracy"} <= set(r) for r in rep["robust_accuracy"])
    assert os.path.isfile(rep["files"]["csv"]) and os.path.isfile(rep["files"]["png"])
    assert set(rep["universal"]) == {"fvbs23", "lpll25", "vys22"}
    rates = [fr["rate"] for fr in rep["universal"]["fvbs23"]["flip_rate"]]
    assert len(rates) == 2 and rates[0] <= rates[1]  # sqrt(d/k) <= sqrt(d)
    with open(rep["files"]["png"], "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_time_out_is_an_interval_never_exact(cli, fa_run, tmp_path):
    res = cli("radius", str(fa_run), "--method", "exact", "--points", "6", "--time-limit", "0.001", "--out", str(tmp_path / "r"), "--json", check_rc=0)
    ex = json.loads(res.stdout)["methods"]["exact"]
    assert ex["fraction_interval"] + ex["fraction_certified_exact"] == pytest.approx(1.0)
    import csv

    with open(tmp_path / "r" / "radii.csv") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        if r["exact_proven"] == "False":
            assert "interval" in r["exact_status"] or "no finite" in r["exact_status"]
            assert float(r["exact_lower"]) <= float(r["exact_upper"])


def test_construct_then_radius(cli, fa_run, tmp_path):
    out = tmp_path / "con"
    cli("construct", "fvbs23", "--from", str(fa_run), "--out", str(out), check_rc=0)
    rep = json.loads(cli("radius", str(out), "--method", "certified", "--points", "40", "--json", check_rc=0).stdout)
    # The construction's certified radius is of order sqrt(d) = 8 (about sqrt(d)/2 here).
    assert rep["methods"]["certified"]["median"] > 0.3 * rep["reference"]["sqrt_d"]
    out2 = tmp_path / "con2"
    cli("construct", "lpll25-robust", "--from", str(fa_run), "--out", str(out2), check_rc=0)
    assert os.path.isfile(out2 / "weights.npz")


@pytest.mark.parametrize("args, word", [
    (["radius", "/nonexistent/run"], "does not exist"),
    (["radius", "{tmp}"], "is not a run directory"),
    (["radius", "{run}", "--points", "0"], "--points 0 is out of range"),
    (["radius", "{run}", "--method", "magic"], "invalid choice"),
    (["construct", "fvbs23", "--from", "/nonexistent", "--out", "{tmp}/x"], "does not exist"),
])
def test_radius_bad_input(cli, fa_run, tmp_path, args, word):
    args = [a.format(tmp=tmp_path, run=fa_run) for a in args]
    res = cli(*args)
    assert res.returncode == 2, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr
    assert word in res.stderr
