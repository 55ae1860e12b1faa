"""The helpers a user needs to write a measure of their own (issue 19, section 4): ibcheck.svm,
ibcheck.normalized_margin and ibcheck.direction_error."""
import math

import numpy as np
import pytest

import ibcheck
from ibcheck.solvers.networks import TwoLayerReLU


def _separable(seed=0, n=30, d=4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, np.where(X[:, 0] + 0.2 * X[:, 1] > 0, 1.0, -1.0)


def test_svm_margin_is_the_distance_of_the_closest_point():
    X, y = _separable()
    s = ibcheck.svm(X, y, bias=False)
    assert s.status == "optimal"
    dist = y * (X @ s.w) / np.linalg.norm(s.w)
    assert math.isclose(dist.min(), s.margin, rel_tol=1e-6)
    assert (y * (X @ s.w) >= 1 - 1e-6).all()


def test_direction_error_is_scale_free_and_bounded():
    X, y = _separable(1)
    w = ibcheck.svm(X, y, bias=False).w
    assert ibcheck.direction_error(7.5 * w, w) < 1e-12
    assert math.isclose(ibcheck.direction_error(w, -w), 2.0)
    assert math.isclose(ibcheck.direction_error([1, 0], [0, 1]), math.sqrt(2))


def test_normalized_margin_does_not_depend_on_the_scale_of_theta():
    rng = np.random.default_rng(2)
    net = TwoLayerReLU(W=rng.standard_normal((4, 3)), a=rng.standard_normal(4), b=rng.standard_normal(4))
    X = rng.standard_normal((10, 3))
    y = np.sign(net.forward(X))
    scaled = TwoLayerReLU(W=net.W * 3.0, a=net.a * 3.0, b=net.b * 3.0)
    assert ibcheck.normalized_margin(net, X, y) > 0
    assert math.isclose(ibcheck.normalized_margin(net, X, y), ibcheck.normalized_margin(scaled, X, y), rel_tol=1e-9)


@pytest.mark.parametrize("call", [lambda: ibcheck.svm([[np.nan, 1.0]], [1.0]), lambda: ibcheck.svm([[1.0, 0.0]], [2.0]),
                                  lambda: ibcheck.direction_error([0, 0], [1, 0]), lambda: ibcheck.direction_error([1, 0], [1, 0, 0]),
                                  lambda: ibcheck.normalized_margin("net", [[1.0]], [1.0]), lambda: ibcheck.svm([[1.0]], [1.0], bias="no")])
def test_bad_input_is_an_input_error(call):
    with pytest.raises(ibcheck.InputError):
        call()
