"""The cone program solved by groups of coupled neurons, a lone neuron exactly (non-negative least squares): the same
optimum as the joint interior-point program, exact walls, and infeasible cones said to be infeasible."""
from __future__ import annotations

import numpy as np
import pytest

import ibcheck.solvers.kkt.polish as polish
from ibcheck.simulate.substrate.data import clusters
from ibcheck.solvers.kkt.cones import family_cone
from ibcheck.solvers.kkt.global_opt import augment


def _span(ds):
    Q, R = np.linalg.qr(augment(ds.X, True).T)
    return R.T


def _value(V: np.ndarray) -> float:
    return float(np.linalg.norm(V, axis=1).sum())


def test_groups_are_the_neurons_no_point_couples():
    D = np.array([[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [0, 0, 0, 1.0]])
    assert [list(g) for g in polish._components(D)] == [[0, 1], [2], [3]]
    D[2, 3] = 1.0  # point 2 now fires neurons 2 and 3: one group
    assert [list(g) for g in polish._components(D)] == [[0, 1], [2, 3]]


@pytest.mark.parametrize("family", ["per-cluster", "per-class", "mixture"])
def test_lone_neurons_reach_the_joint_programs_optimum_exactly_on_their_walls(family, monkeypatch):
    ds = clusters(12, 4, 40, 0.5, seed=3)
    labels = np.where(np.isin(np.arange(4), ds.J_plus), 1.0, -1.0)
    D, s = family_cone(family, ds.cluster, labels)
    L = _span(ds)
    status, V, nu, _ = polish._cone_program(L, ds.y, D, s)
    monkeypatch.setattr(polish, "SPLIT", False)
    status_joint, V_joint, nu_joint, _ = polish._cone_program(L, ds.y, D, s)
    assert status == "optimal" and status_joint in ("optimal", "optimal_inaccurate")
    assert _value(V) == pytest.approx(_value(V_joint), rel=1e-6)
    assert np.allclose(V, V_joint, atol=1e-5 * np.abs(V).max())  # a lone neuron's optimum is unique
    Z = L @ V.T
    on = D > 0
    assert (ds.y[:, None] * s[None, :] * Z)[on].min() >= 1 - 1e-9  # margins
    assert Z[~on].max() <= 1e-9 * np.abs(Z).max()  # walls, exactly
    binding = nu > 1e-8
    assert binding.any() and np.abs(Z[binding]).max() <= 1e-9 * np.abs(Z).max()  # a multiplier only on a tight wall
    # the multipliers are the joint program's: stationarity of ||v_j|| at the same optimum
    assert np.allclose(nu, nu_joint, atol=1e-4 * nu.max())


def test_coupled_neurons_go_to_the_interior_point_program_and_agree_with_the_joint_one(monkeypatch):
    ds = clusters(12, 4, 40, 0.5, seed=4)
    labels = np.where(np.isin(np.arange(4), ds.J_plus), 1.0, -1.0)
    D, s = family_cone("per-cluster", ds.cluster, labels)
    D = np.hstack([D, family_cone("per-class", ds.cluster, labels)[0]])  # per-class neurons overlap the clusters'
    s = np.concatenate([s, [1.0, -1.0]])
    L = _span(ds)
    assert len(polish._components(D)) == 2
    _, V, _, _ = polish._cone_program(L, ds.y, D, s)
    monkeypatch.setattr(polish, "SPLIT", False)
    _, V_joint, _, _ = polish._cone_program(L, ds.y, D, s)
    assert _value(V) == pytest.approx(_value(V_joint), rel=1e-6)


def test_infeasible_cones_are_said_to_be_infeasible():
    ds = clusters(12, 4, 40, 0.5, seed=3)
    labels = np.where(np.isin(np.arange(4), ds.J_plus), 1.0, -1.0)
    D, s = family_cone("per-cluster", ds.cluster, labels)
    L = _span(ds)
    status, V, _, _ = polish._cone_program(L, ds.y, D, -s)  # every lone neuron's sign is wrong on its points
    assert status == "infeasible" and V is None
    D[0] = 0.0  # point 0: no neuron fires, its margin is 0
    status, V, _, _ = polish._cone_program(L, ds.y, D, s)
    assert status == "infeasible" and V is None
