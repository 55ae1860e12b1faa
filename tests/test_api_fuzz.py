"""Hypothesis-driven misuse of every public call (issue 18, item 10): each argument in turn replaced
by a wrong type or value, the others valid and cheap. The only exception allowed is InputError;
valid values (numpy scalars, Fractions, tiny floats) are accepted."""
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ibcheck
from ibcheck.solvers.networks import TwoLayerReLU

HOSTILE = [None, True, False, -1, 0, 1, 2.5, -0.5, 1e-300, 1e300, 10**30, -10**30, math.nan, math.inf, -math.inf, "x", "", "1/0", [], {}, (),
           object(), np.nan, np.int64(3), np.float64(2.5), np.bool_(True), Fraction(1, 3), b"x", 1 + 2j, [1, 2], {"d": 1}, np.array([]),
           np.array([[np.nan, 1.0]]), np.zeros((0, 2)), "../../etc", "FVBS23.thm.4_2", ["d"], ("universal",), {"d": [64, 128]}, {"d": math.nan},
           {"d": "1e999999999"}, {"eps": "1e-400"}, {"d": Fraction(1, 10)}, {"k": np.int64(4)}, {"d": np.float64(10.0)}, lambda: 1]

X0 = np.array([[1.0, 0.2], [-0.8, 0.1], [0.3, -1.0], [-0.2, 0.9]])
Y0 = np.array([1.0, -1.0, 1.0, -1.0])
NET = TwoLayerReLU(W=np.array([[1.0, 0.0], [-1.0, 0.0]]), a=np.array([1.0, -1.0]), b=np.array([0.0, 0.0]))


def _run():
    return ibcheck.train(ibcheck.RunConfig(setting="fa", data=ibcheck.DataConfig(d=8, k=2, n=8, n_test=16),
                                           model=ibcheck.ModelConfig("fa", width=1), train=ibcheck.TrainConfig(steps=2)))


CALLS = {
    "bounds": (ibcheck.bounds, {"id": "FVBS23.thm.4_2", "at": {"d": 1000, "k": 10, "n": 5000, "eps": 0.1, "delta": 0.1}, "reading": None}),
    "window": (ibcheck.window, {"id": "FVBS23.thm.4_2", "free": "d", "at": {"k": 10, "n": 5000, "eps": 0.1, "delta": 0.1}}),
    "growth": (ibcheck.growth, {"a": "sqrt(d/k)", "b": "sqrt(d)", "over": None, "to_zero": (), "coupling": None}),
    "claim": (ibcheck.claim, {"id": "FVBS23.thm.4_2"}),
    "radii": (ibcheck.radii, {"run_or_network": NET, "X": X0, "y": Y0, "methods": ("universal", "certified"), "points": 4, "seed": 0,
                              "direction": "auto", "time_limit": 1.0, "flip_norms": None}),
    "kkt_certificate": (ibcheck.kkt_certificate, {"network": NET, "X": X0, "y": Y0, "active_tol": 1e-6}),
    "global_max_margin": (ibcheck.global_max_margin, {"X": X0, "y": Y0, "bias": True, "max_patterns": 200, "candidates": ()}),
    "kkt_points": (ibcheck.kkt_points, {"data": "sphere", "d": 2, "n": 3, "width": 2, "starts": 1, "include_global": False, "bias": True,
                                        "seed": 0, "max_patterns": 100,
                                        "max_starts": 1}),  # one GD start at most: a valid call 3.3 s, not 9 s (the default 60)
    "DataConfig": (ibcheck.DataConfig, {"d": 8, "k": 2, "n": 8, "sigma": 1.0, "orthogonal": True, "seed": 0, "n_test": 16}),
    "ModelConfig": (ibcheck.ModelConfig, {"setting": "fa", "width": 1}),
    "TrainConfig": (ibcheck.TrainConfig, {"steps": 2}),
    "RunConfig": (ibcheck.RunConfig, {"setting": "fa", "seeds": 1, "seed0": 0}),
    "reproduce": (ibcheck.reproduce, {"name": "no-such-reproduction", "quick": True}),
    "verdict": (ibcheck.verdict, {"data": "DATA", "predict": "d=1/2", "kind": "O", "margin": 0.1, "constants": None}),
    "svm": (ibcheck.svm, {"X": X0, "y": Y0, "bias": True}),
    "normalized_margin": (ibcheck.normalized_margin, {"network": NET, "X": X0, "y": Y0}),
    "direction_error": (ibcheck.direction_error, {"w": [1.0, 2.0], "reference": [2.0, 1.0]}),
    "Claim": (ibcheck.Claim, {"id": "FUZZ26.thm.1", "variables": ["d"], "hypotheses": {"H1": "d >= 4"},
                              "bounds": [ibcheck.Bound("r", "O", "sqrt(d)")], "status": "order"}),
    "Bound": (lambda **kw: ibcheck.Claim(id="FUZZ26.thm.2", variables=["d"], bounds=[ibcheck.Bound(**kw)]),
              {"quantity": "r", "kind": "O", "expr": "sqrt(d)"}),
}
NAMES = sorted(CALLS)


def _call(name, param, value, tmp_path):
    fn, base = CALLS[name]
    kwargs = dict(base)
    if name == "verdict":
        path = tmp_path / "m.csv"
        path.write_text("d,value\n64,8\n128,11.3\n256,16\n")
        kwargs["data"] = str(path)
    if name == "reproduce" and param == "name" and isinstance(value, str) and value in ibcheck.simulate.reproductions.REPRODUCTIONS:
        return  # a real reproduction takes a minute: the valid names are tested elsewhere
    kwargs[param] = value
    try:
        fn(**kwargs)
    except ibcheck.InputError as err:
        assert str(err) and "\n" not in str(err).strip(), str(err)


@pytest.mark.filterwarnings("error::RuntimeWarning")  # issue 58, item 6: the solvers' handled overflow stays quiet
@settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_public_call_raises_only_input_error(data, tmp_path_factory):
    import ibcheck.simulate.reproductions  # noqa: F401  (the names above)

    name = data.draw(st.sampled_from(NAMES), label="call")
    param = data.draw(st.sampled_from(sorted(CALLS[name][1])), label="param")
    value = data.draw(st.sampled_from(HOSTILE), label="value")
    _call(name, param, value, tmp_path_factory.mktemp("fuzz"))


def test_radii_of_a_run_with_hostile_arguments(tmp_path):
    run = _run()
    for param, value in [("points", True), ("points", np.int64(3)), ("seed", -1), ("methods", "universal"), ("direction", 3),
                         ("X", np.array([[np.nan] * 8])), ("time_limit", math.inf), ("flip_norms", [math.nan])]:
        kwargs = {"methods": ("universal",), "points": 3}
        kwargs[param] = value
        try:
            ibcheck.radii(run, **kwargs)
        except ibcheck.InputError:
            pass


@pytest.mark.parametrize("value", [np.int64(64), np.float64(10.0), Fraction(1, 10), "1e-400"])
def test_valid_number_types_are_accepted(value):
    at = {"d": 1000, "k": 10, "n": 5000, "eps": 0.1, "delta": 0.1}
    key = "eps" if isinstance(value, (Fraction, str)) else "d" if isinstance(value, np.integer) else "k"
    at[key] = value
    assert ibcheck.bounds("FVBS23.thm.4_2", at=at).as_json()["hypotheses"]


def test_nan_and_bad_labels_are_refused_by_the_solvers_calls():
    with pytest.raises(ibcheck.InputError, match="finite"):
        ibcheck.radii(NET, np.array([[np.nan, 0.0], [1.0, 0.0]]), np.array([1.0, -1.0]), methods=("universal",))
    with pytest.raises(ibcheck.InputError, match="labels must be -1 or \\+1"):
        ibcheck.radii(NET, X0, np.array([0, 2, 0, 2]), methods=("universal",))
    with pytest.raises(ibcheck.InputError, match="shape"):
        ibcheck.global_max_margin(np.zeros((0, 2)), np.zeros(0))


def test_a_train_too_large_for_memory_is_refused_before_allocating():
    with pytest.raises(ibcheck.InputError, match="GiB"):
        ibcheck.DataConfig(d=10**6, n=10**6)


@pytest.mark.parametrize("grid", [{"d": [1e-300, 64, 128]}, {"d": [64.5, 128, 256]}, {"d": [64, math.nan, 256]}, {"d": "64,128"}])
def test_grid_values_outside_the_claims_domain_are_refused(grid):
    with pytest.raises(ibcheck.InputError, match="out of range|not a list"):
        ibcheck.compare("SSTTM18.cor.robust_upper", grid=grid, seeds=1)
