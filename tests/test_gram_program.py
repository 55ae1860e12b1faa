"""The coupled group's cone program in Gram space (:mod:`ibcheck.solvers.kkt.gram`): the interior-point program's optimum
to rounding, with exact walls, multipliers that satisfy stationarity, dead neurons found, and nothing returned that it
did not verify (infeasible cones, a wrong working set)."""
from __future__ import annotations

import numpy as np
import pytest

import ibcheck.solvers.kkt.polish as polish
from ibcheck.simulate.substrate.data import clusters
from ibcheck.solvers.kkt import gram
from ibcheck.solvers.kkt.cones import family_cone
from tests.streams_v1 import clusters_v1


def _group(d: int, n: int, seed: int, extra: np.ndarray | None = None):
    """A coupled group on a cluster sample: the per-cluster neurons and the per-class ones overlap on every point."""
    ds = clusters(d, 4, n, 0.5, seed=seed)
    labels = np.where(np.isin(np.arange(4), ds.J_plus), 1.0, -1.0)
    D, s = family_cone("per-cluster", ds.cluster, labels)
    D = np.hstack([D, family_cone("per-class", ds.cluster, labels)[0]])
    s = np.concatenate([s, [1.0, -1.0]])
    if extra is not None:
        D, s = np.hstack([D, extra(ds)[0]]), np.concatenate([s, extra(ds)[1]])
    _, L = polish.data_span(ds.X)
    return ds, L, D, s


def _check_optimum(L, y, D, s, rows, out):
    status, V, nu, lam = out
    assert status == "optimal"
    Z = L @ V.T
    zs = np.abs(Z).max()
    margins = (y[:, None] * s[None, :] * D * Z).sum(axis=1)[rows]
    assert margins.min() >= 1 - 1e-9
    G = 2 * D - 1
    assert (G * Z).min() >= -1e-9 * zs  # walls
    assert (nu >= 0).all() and (lam >= 0).all()
    assert np.abs(Z[nu > 1e-9 * nu.max(initial=1.0)]).max(initial=0.0) <= 1e-9 * zs  # a multiplier only on a tight wall
    assert np.abs(margins - 1)[lam[rows] > 1e-9 * lam.max()].max() <= 1e-9  # and on a tight margin
    beta = lam[:, None] * y[:, None] * s[None, :] * D + nu * G
    norms = np.linalg.norm(V, axis=1)
    live = norms > 1e-9 * norms.max()
    # stationarity of sum_j ||v_j||: v_j / ||v_j|| = L^T beta_j on every live neuron
    assert np.allclose(V[live] / norms[live, None], (L.T @ beta).T[live], atol=1e-8)
    return float(norms.sum())


@pytest.mark.parametrize("d,n,seed", [(64, 40, 4), (64, 48, 5), (12, 40, 4), (32, 60, 1)])
def test_the_gram_program_reaches_the_interior_point_optimum(d, n, seed):
    """Square spans (n <= d + 1) and rank-deficient ones (n > d + 1) alike."""
    ds, L, D, s = _group(d, n, seed)
    groups = [g for g in polish._components(D) if len(g) > 1]
    assert groups
    for g in groups:
        rows = np.flatnonzero((D[:, g] > 0).any(axis=1))
        out = gram.gram_cone_program(L, ds.y, D[:, g], s[g], rows)
        assert out is not None
        value = _check_optimum(L, ds.y, D[:, g], s[g], rows, out)
        ref = polish._block_program(L, ds.y, D[:, g], s[g], rows)
        assert ref[0] in ("optimal", "optimal_inaccurate")
        assert value == pytest.approx(float(np.linalg.norm(ref[1], axis=1).sum()), rel=1e-8)
        assert value <= float(np.linalg.norm(ref[1], axis=1).sum()) * (1 + 1e-12)


def test_a_neuron_the_optimum_does_not_use_is_found_dead_and_checked():
    """A second + neuron on every + point duplicates the per-class one's reach with a larger norm: at the optimum
    some neurons carry nothing, and their dual feasibility (min over nu >= 0 of ||L^T beta_j|| <= 1) is checked."""
    def extra(ds):
        on = (ds.y > 0).astype(float)
        on[np.flatnonzero(ds.y > 0)[:3]] = 0.0  # a smaller pattern than the per-class neuron's
        return on[:, None], np.array([1.0])

    ds, L, D, s = _group(64, 48, 5, extra)
    rows = np.arange(len(ds.y))
    g = np.arange(D.shape[1])
    out = gram.gram_cone_program(L, ds.y, D, s, rows)
    assert out is not None
    norms = np.linalg.norm(out[1], axis=1)
    assert (norms <= 1e-9 * norms.max()).any()  # a dead neuron
    value = _check_optimum(L, ds.y, D[:, g], s[g], rows, out)
    ref = polish._block_program(L, ds.y, D, s, rows)
    assert value == pytest.approx(float(np.linalg.norm(ref[1], axis=1).sum()), rel=1e-8)


def test_an_infeasible_cone_is_not_answered_and_the_reference_says_infeasible():
    ds, L, D, s = _group(64, 40, 4)
    g = next(g for g in polish._components(D) if len(g) > 1)
    rows = np.flatnonzero((D[:, g] > 0).any(axis=1))
    assert gram.gram_cone_program(L, ds.y, D[:, g], -s[g], rows) is None
    status, V, _, _ = polish._cone_program(L, ds.y, D[:, g], -s[g])
    assert status.startswith("infeasible") and V is None


def test_a_wrong_working_set_is_never_returned():
    """The verification, not the iteration, decides: the optimum's working set passes; without one of its binding
    margins the Newton point violates that margin, and with a slack wall added a multiplier goes negative or a
    constraint fails."""
    ds, L, D, s = _group(64, 48, 5)
    g = next(g for g in polish._components(D) if len(g) > 1)
    D, s = D[:, g], s[g]
    rows = np.flatnonzero((D > 0).any(axis=1))
    _, V, nu, lam = gram.gram_cone_program(L, ds.y, D, s, rows)
    K = L @ L.T
    c = gram.constraints(ds.y, D, s, rows)
    mu = np.concatenate([lam[rows], nu.ravel()])
    F = np.flatnonzero(mu > 0)
    live = np.ones(D.shape[1], bool)
    t = np.linalg.norm(V, axis=1)
    got = gram._newton_norms(K, c, F, t, live)
    assert got is not None and gram._verified(L, K, c, got[3], got[0], got[1], got[2], D) is not None
    drop = F[np.argmax(mu[F][: (F < c.n_margin).sum()])]  # the margin with the largest multiplier
    got = gram._newton_norms(K, c, F[F != drop], t, live)
    assert got is None or gram._verified(L, K, c, got[3], got[0], got[1], got[2], D) is None


def test_the_polish_uses_it_and_falls_back_where_it_cannot_verify(monkeypatch):
    ds, L, D, s = _group(64, 40, 4)
    calls = []
    real = polish._block_program
    monkeypatch.setattr(polish, "_block_program", lambda *a: calls.append(1) or real(*a))
    status, V, _, _ = polish._cone_program(L, ds.y, D, s)
    assert status == "optimal" and V is not None and not calls  # every group verified in Gram space
    monkeypatch.setattr(polish, "gram_cone_program", lambda *a, **k: None)
    status2, V2, _, _ = polish._cone_program(L, ds.y, D, s)
    assert calls and V2 is not None
    assert np.linalg.norm(V2, axis=1).sum() == pytest.approx(np.linalg.norm(V, axis=1).sum(), rel=1e-8)


def test_a_wall_that_binds_once_a_neuron_dies_is_found_without_the_interior_point_fallback():
    """A 4-neuron cone from a GD network at (d, k, n) = (1024, 8, 600) (the polish-rate bench): two neurons die at the
    optimum and a live neuron's wall at one point binds only then (Newton's point violated it by 3e-5). The program
    used to loop on the same working set for 60 rounds (7.5 s) and hand the cone to Clarabel (8 s, 'inaccurate'); it
    must now verify its own optimum, at the norms Clarabel reports."""
    import os

    f = np.load(os.path.join(os.path.dirname(__file__), "data", "dead_neuron_wall.npz"))
    D, s = f["D"].astype(float), f["s"]
    ds = clusters_v1(1024, 8, 600, 1.0, seed=0)  # the points the fixture's cone was recorded on (streams version 1)
    _, L = polish.data_span(ds.X)
    rows = np.flatnonzero((D > 0).any(axis=1))
    out = gram.gram_cone_program(L, ds.y, D, s, rows)
    assert out is not None
    _check_optimum(L, ds.y, D, s, rows, out)
    norms = np.linalg.norm(out[1], axis=1)
    assert norms[[1, 3]].max() == 0.0
    assert norms[[0, 2]] == pytest.approx([0.06707051, 0.06660692], rel=1e-6)
