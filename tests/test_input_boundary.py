"""The one validation boundary (issue 26, sections 4 and 7): every value the hostile-input campaign found
crashing, or silently accepted, is an InputError naming the parameter, at the API and the command line alike."""
from __future__ import annotations

import math
import os
import subprocess
import sys
from fractions import Fraction

import pytest

import ibcheck
from ibcheck.simulate.compare.driver import CompareOptions

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLAIM = "BCGT21.thm.one_step"
GRID = {"d": [64, 128, 256], "k": [50]}


@pytest.mark.parametrize("kw, parameter", [
    ({"store": 123}, "store"), ({"store": ""}, "store"), ({"workers": 10**100}, "workers"), ({"workers": 0}, "workers"),
    ({"quick": "no"}, "quick"), ({"inside_only": math.nan}, "inside_only"), ({"seeds": 10**20}, "seeds"),
    ({"margin": "0.1"}, "margin"), ({"budget": math.inf}, "budget"), ({"budget": 1e308}, "budget"), ({"offsets": "guess"}, "offsets"),
    ({"spending": "bonferroni"}, "spending"), ({"fit_from": [1]}, "fit_from"), ({"constants": {"C1": -1}}, "constants['C1']"),
    ({"grid": {"zz": [1, 2, 3]}}, "grid"), ({"grid": {"d": [64, 128, 256]}}, "grid"), ({"grid": {"d": [64.5, 128], "k": [50]}}, "d"),
    ({"grid": None, "max_seconds": -1}, "max_seconds"),
])
def test_compare_refuses_at_the_boundary_naming_the_parameter(kw, parameter):
    with pytest.raises(ibcheck.InputError) as err:
        ibcheck.compare(CLAIM, **{"grid": GRID, **kw})
    assert err.value.parameter == parameter, (kw, str(err.value))
    assert "Traceback" not in str(err.value) and "\n" not in str(err.value)


def test_fractions_are_numbers_and_are_stored_as_floats():
    o = CompareOptions(margin=Fraction(1, 10), budget=Fraction(3, 2), margin_log=Fraction(1, 4))
    assert (o.margin, o.budget, o.margin_log) == (0.1, 1.5, 0.25) and all(type(x) is float for x in (o.margin, o.budget))


def test_a_grid_without_one_of_the_experiments_variables_names_it():
    """FVBS23.thm.4_2 --grid d=256,512,1024 (k omitted) was 'internal error: KeyError'."""
    with pytest.raises(ibcheck.InputError, match="gives no k: FVBS23.thm.4_2's experiment sweeps d, k"):
        ibcheck.compare("FVBS23.thm.4_2", grid={"d": [256, 512, 1024]})


@pytest.mark.parametrize("call, parameter", [
    (lambda: ibcheck.experiment("X.y", grid=None), "grid"),
    (lambda: ibcheck.experiment([], grid={"d": [1, 2, 3]}), None),
    (lambda: ibcheck.experiment(123, grid={"d": [1, 2, 3]}), None),
    (lambda: ibcheck.experiment("X.y", grid={"d": [1, 2, 3]}, quantities="r"), "quantities"),
    (lambda: ibcheck.load_run(1.5), "path"),
    (lambda: ibcheck.TrainConfig(records="abc"), "records"),
    (lambda: ibcheck.TrainConfig(records=-1), "records"),
    (lambda: ibcheck.TrainConfig(device=[1]), "device"),
    (lambda: ibcheck.DataConfig(split="abc"), "split"),
    (lambda: ibcheck.DataConfig(split=[0.5, 1]), "split"),
])
def test_the_api_raises_input_error_for_the_campaigns_cases(call, parameter):
    with pytest.raises(ibcheck.InputError) as err:
        call()
    if parameter is not None:
        assert err.value.parameter == parameter, str(err.value)


def test_the_experiment_docstring_names_every_option():
    doc = ibcheck.experiment.__doc__
    for option in ("cost", "trajectory", "quick_grid", "fixed", "max_grid", "quantities"):
        assert option in doc


def _cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "ibcheck.cli", *args], capture_output=True, text=True, cwd=cwd)


def _planted_link(tmp_path, name: str, target: str):
    """(--out, the folder outside it): --out holds ``name``, a dangling link into that folder."""
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    os.symlink(elsewhere / target, out / name)
    return out, elsewhere


def test_a_dangling_link_at_the_store_is_refused_and_nothing_is_written_outside_out(tmp_path):
    out, elsewhere = _planted_link(tmp_path, "sweep.sqlite", "stolen.sqlite")
    res = _cli("compare", CLAIM, "--quick", "--out", str(out))
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    assert "symbolic link" in res.stderr
    assert os.listdir(elsewhere) == []


def test_a_planted_wal_link_beside_the_store_is_named_as_such_not_blamed_on_disk_space(tmp_path, cli):
    """Issue 58, item 5: a symbolic link at sweep.sqlite-wal (SQLite's journal beside the store) read "could not be
    written ... free space"; it is named as a link, and nothing is written through it."""
    out, elsewhere = _planted_link(tmp_path, "sweep.sqlite-wal", "stolen-wal")
    res = cli("compare", CLAIM, "--quick", "--out", str(out))
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    assert "sweep.sqlite-wal is a symbolic link beside the sweep store" in res.stderr and "free space" not in res.stderr
    assert os.listdir(elsewhere) == []
    assert sorted(os.listdir(out)) == ["sweep.sqlite-wal"]  # "nothing was written": the store's lock file was created first


@pytest.mark.parametrize("args, says", [
    (["compare", "FVBS23.thm.4_2", "--grid", "d=256,512,1024"], "--grid d=256,512,1024 gives no k"),
    (["compare", CLAIM, "--grid", "zz=1,2,3"], "--grid zz=1,2,3 names zz, which is not a variable"),
    (["compare", CLAIM, "--quick", "--seeds", "100000000000000000000"], "--seeds 100000000000000000000 is out of range"),
    (["compare", CLAIM, "--quick", "--workers", "100000"], "--workers 100000 is out of range"),
    (["compare", CLAIM, "--quick", "--budget", "1e308"], "--budget 1e308 is out of range"),
])
def test_the_command_line_refuses_alike_in_one_line_writing_nothing(tmp_path, cli, args, says):
    out = tmp_path / "o"
    res = cli(*args, "--out", str(out))  # in process: the same main() a shell runs (the subprocess path is tested above)
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "Traceback" not in res.stderr, res.stderr
    assert says in res.stderr, res.stderr
    assert not out.exists()
