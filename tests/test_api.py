"""The public API: one call per capability, each a frozen dataclass that renders in a notebook, gives
JSON, and writes files only when saved; bad arguments name the parameter and the accepted range."""
import dataclasses
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import ibcheck
from ibcheck.errors import InputError

AT = {"k": 10, "n": 5000, "eps": 0.1, "delta": 0.1}


def _check_result(res, tmp_path, expect_png: bool):
    assert dataclasses.is_dataclass(res)
    field = dataclasses.fields(res)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(res, field, None)
    json.loads(res.to_json())
    html = res._repr_html_()
    assert "<table" in html
    assert ("data:image/png;base64," in html) == expect_png
    out = tmp_path / type(res).__name__
    files = res.save(str(out))
    assert files and all(os.path.isfile(p) for p in files.values() if isinstance(p, str))
    return files


def test_theory_calls_return_displayable_results(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = ibcheck.window("FVBS23.thm.4_2", free="d", at=AT)
    b = ibcheck.bounds("FVBS23.thm.4_2", at={**AT, "d": 1000})
    g = ibcheck.growth("sqrt(d/k)", "sqrt(d)", over=["d", "k"])
    cl = ibcheck.claims()
    assert os.listdir(tmp_path) == []  # computing wrote nothing
    assert w.intervals and w.verified and w.intervals[0][0] == 709
    assert b.applies is True and "begin{align*}" in b._repr_latex_()
    assert g.relation == "<" and g.a == "sqrt(d)/sqrt(k)"  # k grows too: sqrt(d/k) = o(sqrt(d))
    assert len(cl) == len(ibcheck.claims().claims) and any(c.id == "FVBS23.thm.4_2" for c in cl)
    _check_result(w, tmp_path, expect_png=True)
    _check_result(b, tmp_path, expect_png=False)
    _check_result(g, tmp_path, expect_png=False)
    assert json.loads(cl.to_json())[0]["claim"] == cl.claims[0].id
    assert ibcheck.claim("FVBS23.thm.4_2").heading().startswith("FVBS23.thm.4_2")


def test_window_api_matches_the_cli_string_form():
    from ibcheck.theory import get_claim
    from ibcheck.theory.window import applicability_window

    api = ibcheck.window("FVBS23.thm.4_2", free="d", at=AT)
    cli = applicability_window(get_claim("FVBS23.thm.4_2"), "d", "k=10,n=5000,eps=0.1,delta=0.1")
    assert api.intervals == cli.intervals and api.binding == cli.binding


def test_train_radii_and_kkt_calls(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = ibcheck.RunConfig(setting="fa", data=ibcheck.DataConfig(d=32, k=2, n=20, n_test=50), model=ibcheck.ModelConfig("fa", width=2),
                            train=ibcheck.TrainConfig(steps=100, progress=False), seeds=2)
    run = ibcheck.train(cfg)
    r = ibcheck.radii(run, methods=("universal", "attack", "certified"), points=15)
    pts = ibcheck.kkt_points(data="sphere", d=2, n=6, width=3, starts=2, max_starts=8, include_global=True)  # 5.7 s, not 12.7
    assert os.listdir(tmp_path) == []
    assert len(run.seeds) == 2 and r.networks == 2 and r.points == 15
    # the bracket: certified <= attack <= universal at every point
    pp = r.per_point
    assert np.all(pp["certified"] <= pp["attack"] + 1e-9) and np.all(pp["attack"] <= pp["universal"] + 1e-12)
    files = _check_result(r, tmp_path, expect_png=True)
    assert os.path.basename(files["png"]) == "robust_accuracy.png" and files["csv"].endswith("radii.csv")
    run_dir = tmp_path / "run"
    run.save(str(run_dir))
    back = ibcheck.load_run(str(run_dir))
    assert type(back) is type(run) and back.path == str(run_dir) and len(back.seeds) == 2
    assert pts.global_optimum is not None and pts.global_optimum.certified
    _check_result(pts, tmp_path, expect_png=True)
    ds = __import__("ibcheck.simulate.substrate.data", fromlist=["sphere"]).sphere(2, 6, seed=0)
    cert = ibcheck.kkt_certificate(pts.networks[0], ds.X, ds.y)
    assert cert.solver_status == "optimal"
    glob = ibcheck.global_max_margin(ds.X, ds.y)
    assert glob.certified and abs(glob.value - pts.global_optimum.value) < 1e-6 * glob.value
    _check_result(glob, tmp_path, expect_png=False)
    # one network at given points
    single = ibcheck.radii(pts.networks[0], ds.X, ds.y, methods=("universal", "attack"))
    assert single.networks == 1 and single.points == len(ds.X)


def test_verdict_and_compare_write_nothing_until_saved(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rows = ["d,seed,value"] + [f"{d},{s},{np.sqrt(d) * (1 + 0.01 * s)}" for d in (64, 128, 256, 512) for s in range(3)]
    (tmp_path / "m.csv").write_text("\n".join(rows) + "\n")
    v = ibcheck.verdict(str(tmp_path / "m.csv"), predict="d=1/2", kind="Theta")
    c = ibcheck.compare("SSTTM18.cor.robust_upper", grid={"d": [256, 512, 1024]}, seeds=2)
    assert sorted(os.listdir(tmp_path)) == ["m.csv"]
    assert v.verdict == "consistent"
    assert c.verdict in ("consistent", "inconsistent", "inconclusive") and c.reason
    files = v.save(str(tmp_path / "v"))
    assert {"markdown", "html", "parquet"} <= set(files) and os.path.isfile(tmp_path / "v" / "summary.json")
    assert "<table" in c._repr_html_()


@pytest.mark.parametrize("call, message", [
    (lambda: ibcheck.kkt_points(d=0), "d=0 is out of range: d must be an integer in [1, 10000]"),
    (lambda: ibcheck.kkt_points(width=2.5), "width=2.5 is out of range"),
    (lambda: ibcheck.kkt_points(data="moons"), "data='moons' is out of range"),
    (lambda: ibcheck.kkt_points(colour=1), "unexpected keyword argument 'colour'"),
    (lambda: ibcheck.window("FVBS23.thm.4_2", at="k=10"), "at='k=10' is not a mapping"),
    (lambda: ibcheck.bounds("FVBS23.thm.4_2", at={"eps": [1]}), "at['eps']=[1] is not a number"),
    (lambda: ibcheck.bounds("FVBS23.thm.4_2", reading="nope"), "reading='nope' is not a reading"),
    (lambda: ibcheck.claim("FVBS23.thm.4.2"), "did you mean FVBS23.thm.4_2"),
    (lambda: ibcheck.compare("SSTTM18.cor.robust_upper", grid={"d": [0, 64]}), "grid['d']=[0, 64] is out of range"),
    (lambda: ibcheck.train({"setting": "fa"}), "config=dict is not a RunConfig"),
    (lambda: ibcheck.reproduce("nosuch"), "available are"),
])
def test_bad_arguments_name_the_parameter(call, message):
    with pytest.raises(InputError) as err:
        call()
    assert message in str(err.value)
    assert isinstance(err.value, ValueError)


def test_radii_argument_ranges():
    from ibcheck.solvers.networks import TwoLayerReLU

    net = TwoLayerReLU(W=np.array([[1.0, 0.0], [-1.0, 0.0]]), a=np.array([1.0, -1.0]), b=np.array([0.0, 0.0]))  # any network
    X, y = np.eye(2), np.array([1.0, -1.0])
    for kw, msg in [({"points": 0}, "points=0 is out of range"), ({"time_limit": -1.0}, "time_limit=-1.0 is out of range"),
                    ({"methods": ("magic",)}, "methods=['magic'] is out of range"), ({"flip_norms": [0.0]}, "flip_norm=0.0 is out of range")]:
        with pytest.raises(InputError, match=msg.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")):
            ibcheck.radii(net, X, y, **kw)


def test_the_cli_maps_api_parameters_to_its_flags():
    import argparse

    from ibcheck.cli import as_flags
    from ibcheck.theory.argtypes import refused

    args = argparse.Namespace(time_limit=1.0, points=3, width=2)
    err = refused("time_limit", -1.0, "is out of range: must be > 0")
    assert str(err) == "time_limit=-1.0 is out of range: time_limit must be > 0"
    assert as_flags(err, args) == "--time-limit -1.0 is out of range: must be > 0"
    # the alias and the value as the user typed them
    assert as_flags(refused("width", 0, "is out of range: must be an integer >= 1"), args, ["train", "--m", "0"], ["--width", "--m"]) == \
        "--m 0 is out of range: must be an integer >= 1"
    assert as_flags(refused("time_limit", 0.0, "is out of range: x"), args, ["radius", "--time-limit=0"]) == "--time-limit 0 is out of range: x"
    assert as_flags(refused("colour", 1, "is out of range: x"), args) == "colour=1 is out of range: x"  # not a flag of this command
    # an error that names no one parameter is said as it is: the CLI never reads a message back
    assert as_flags(InputError("width=0 looks like a parameter but is only text"), args) == "width=0 looks like a parameter but is only text"


def test_import_ibcheck_is_light():
    code = "import sys, ibcheck; ibcheck.window('FVBS23.thm.4_2', at={'k': 10, 'n': 5000, 'eps': 0.1, 'delta': 0.1}); " \
           "print('torch' in sys.modules, 'cvxpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]


def test_the_api_and_the_cli_agree_on_the_quick_default():
    import argparse
    import inspect

    from ibcheck.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, fn in (("compare", ibcheck.compare), ("reproduce", ibcheck.reproduce)):
        cli_default = sub.choices[name].parse_known_args(["X", "--out", "o"])[0].quick
        assert inspect.signature(fn).parameters["quick"].default is cli_default is False
