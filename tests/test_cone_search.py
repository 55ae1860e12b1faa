"""The KKT engine's parts: exact cone families and partitions, the fixed cone's optimum, the polish, the maximum over
distinct points (a planted robust point must be found), the dual check's lower bound, and the ascent's split move."""
from __future__ import annotations

import numpy as np
import pytest

from ibcheck.simulate.experiments.kkt import KKTSample, kkt_row, point_norms
from ibcheck.simulate.substrate.data import clusters
from ibcheck.solvers.kkt.certificate import kkt_certificate
from ibcheck.solvers.kkt.cones import bell, family_cone, partition_cones, partition_count
from ibcheck.solvers.kkt.engine import Budget, search
from ibcheck.solvers.kkt.global_opt import dual_check, dual_lower_bound
from ibcheck.solvers.kkt.policy import is_point
from ibcheck.solvers.kkt.polish import cone_polish
from ibcheck.solvers.radius.universal import universal_directions


def test_cone_families_are_exact_patterns_of_the_clusters():
    cluster = np.array([0, 0, 1, 2, 3, 3, 1, 2])
    labels = np.array([1.0, 1.0, -1.0, -1.0])
    D, s = family_cone("per-cluster", cluster, labels)
    assert D.shape == (8, 4) and (D.sum(axis=1) == 1).all() and (D[np.arange(8), cluster] == 1).all()
    assert list(s) == [1, 1, -1, -1]
    D, s = family_cone("per-class", cluster, labels)
    assert list(s) == [1, -1] and (D[:, 0] == np.isin(cluster, [0, 1])).all()
    D, s = family_cone("mixture", cluster, labels)
    assert D.shape[1] == 3 and list(s) == [1, -1, -1]
    D, _ = family_cone("partial", np.arange(6), np.array([1, 1, 1, -1, -1, -1.0]))
    assert D.shape[1] == 4 and sorted(D.sum(axis=0)) == [1, 1, 2, 2]  # halves of each class
    with pytest.raises(ValueError, match="unknown cone family"):
        family_cone("every", cluster, labels)
    # every partition of each class's clusters: Bell(2) x Bell(2) = 4 here, 225 at k = 8; each covers every point once
    cones = list(partition_cones(cluster, labels))
    assert len(cones) == partition_count(labels) == 4 and [bell(m) for m in range(6)] == [1, 1, 2, 5, 15, 52]
    assert all((D.sum(axis=1) == 1).all() for _, D, _ in cones)
    assert len({tuple(map(tuple, D.T)) for _, D, _ in cones}) == 4


def test_the_fixed_cone_optimum_respects_its_pattern_and_a_wall_bound_one_is_not_certified():
    """The per-cluster cone's own optimum keeps every neuron off the other clusters (its walls), so its biases are pushed
    against them: the certificate must reject it; the polish (walls flipped) reaches a certified KKT point."""
    ds = clusters(8, 4, 24, 0.3, seed=1)
    labels = np.where(np.isin(np.arange(4), ds.J_plus), 1.0, -1.0)
    D, s = family_cone("per-cluster", ds.cluster, labels)
    p = cone_polish(ds.X, ds.y, D, s, rounds=1)
    assert p.solver_status == "optimal" and p.rounds == 1 and p.flips == 0
    Z = p.net.preactivations(ds.X)
    scale = np.abs(Z).max()
    for j in range(p.net.width):  # each neuron fires on one cluster only (up to the solver's tolerance)
        on = Z[:, j] > 1e-6 * scale
        assert len(set(ds.cluster[on])) <= 1
    assert not is_point(kkt_certificate(p.net, ds.X, ds.y))
    many = cone_polish(ds.X, ds.y, D, s, rounds=12)
    assert many.flips > 0


@pytest.mark.slow  # 7 s (a k = 8 search); the maximum over distinct points is checked by default in test_kkt_claims (on
# synthetic points, and on the engine's own points at FVBS23's quick cell)
def test_a_planted_robust_kkt_point_is_found_by_the_maximum():
    """The largest flip norm ranges over every distinct point: with the most robust one among the others the row's value
    is its norm; take it away and the value drops (so a maximum that missed it would be caught)."""
    ds = clusters(64, 8, 24, 1.0, seed=1)
    res = search(ds.X, ds.y, ds.cluster, (), Budget(gd=6, enumerate=0, programs=8), seed=1)
    assert res.distinct >= 2  # the instance holds several distinct KKT points
    sample = KKTSample(ds, res)
    X, y = ds.sampler(1000, np.random.default_rng(0))  # the points drawn before sample() took only a seed
    v = universal_directions("fvbs23", means=ds.means, J_plus=ds.J_plus)
    norms = point_norms(sample.points, X, y, v, 0.9)
    robust = int(np.argmax([float(x) for x in norms]))
    row = kkt_row(sample, norms, "universal_flip_norm")
    assert row["universal_flip_norm"] == pytest.approx(float(norms[robust]))
    from dataclasses import replace

    fewer = replace(res, points=tuple(p for i, p in enumerate(res.points) if i != robust),
                    values=tuple(x for i, x in enumerate(res.values) if i != robust),
                    candidates=tuple(c for c in res.candidates if c.point is None))
    without = KKTSample(ds, fewer)
    lower = kkt_row(without, [x for i, x in enumerate(norms) if i != robust], "universal_flip_norm")
    assert lower["universal_flip_norm"] < row["universal_flip_norm"]
    assert row["kkt_distinct"] == lower["kkt_distinct"] + 1


def test_the_dual_lower_bound_never_exceeds_the_exact_check_and_proves_a_point_not_global():
    """Any multipliers lambda >= 0 define the dual check; scaled so that the exact check is 1.3 (not global) or 0.9, the
    ascent's bound lies below the exact value, and above 1 in the first case (it proves "not global")."""
    ds = clusters(4, 4, 12, 0.5, seed=1)
    lam = np.random.default_rng(0).exponential(size=len(ds.X))  # one draw (an exact check is an enumeration, 1.5 s)
    unit = dual_check(ds.X, ds.y, lam)
    for target in (1.3, 0.9):
        lb = dual_lower_bound(ds.X, ds.y, lam * target / unit)
        assert lb <= target * (1 + 1e-9)  # a bound: every visited u is feasible
        assert (lb > 1 + 1e-3) == (target > 1)


def test_point_cones_and_the_vys22_sample_gets_the_engine():
    from ibcheck.simulate.experiments.registry import EXPERIMENTS
    from ibcheck.solvers.kkt.cones import point_cone

    y = np.array([1.0, -1.0, 1.0])
    D, s = point_cone("per-point", y)
    assert (D == np.eye(3)).all() and list(s) == [1, -1, 1]
    D, s = point_cone("per-class", y)
    assert list(D[:, 0]) == [1, 0, 1] and list(s) == [1, -1]
    with pytest.raises(ValueError, match="unknown cone family"):
        point_cone("per-cluster", y)
    exp = EXPERIMENTS["VYS22.thm.main"]
    cell = {**exp.fixed_at(True), "d": 2048, "n": 4}
    row = exp.measure({**cell, **exp.settings_at(cell)}, 0)
    origins = [n["origin"] for n in row["kkt_networks"]]
    assert any(o.startswith("gd:random") for o in origins) and all(n["trace"] for n in row["kkt_networks"])
    assert row["kkt_distinct"] >= 1 and len(row["kkt_dual_lb"]) == row["kkt_distinct"]


def test_the_full_design_spans_the_range_that_identifies_the_exponents_inside_the_window():
    """Issue 28, section 5: d over x16 (at least 5 values, up to 4096), k from 4 to 16, n from the window; enough samples
    for FVBS23.thm.3_1's binomial test (36 at delta = 0.1)."""
    from ibcheck.simulate.experiments.window import window_design
    from ibcheck.simulate.verdict.probability import samples_needed

    w = window_design("FVBS23.thm.4_2", quick=False)
    inside = [c.cell for c in w.cells if c.inside]
    ds, ks = sorted({c["d"] for c in inside}), sorted({c["k"] for c in inside})
    assert len(ds) >= 5 and ds[-1] >= 4096 and ds[-1] / ds[0] >= 16
    assert ks[0] == 4 and ks[-1] >= 16
    assert {"d": 4096, "k": 16} in inside
    assert len([c for c in inside if c["k"] == 4]) >= 5  # every d value at one k: the d exponent at fixed k
    assert len(w.run_cells) * w.seeds >= samples_needed(0.1, 0.025)


def test_a_split_move_takes_one_whole_cluster_off_an_averaging_neuron():
    from ibcheck.solvers.kkt.cones import split_move

    cluster = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    labels = np.array([1.0, 1.0, -1.0, -1.0])
    # neuron 0 averages clusters 0 and 1 (class +1), neuron 1 clusters 2 and 3 (class -1), nearer its wall
    preact = np.array([[2, -1], [2, -1], [1, -1], [1, -1], [-1, 3], [-1, 3], [-1, 0.5], [-1, 0.4]], float)
    D, s, what = split_move(preact, np.array([1.0, -1.0]), cluster, labels)
    assert "cluster 3 off neuron 1" in what  # the cluster nearest neuron 1's wall
    assert D.shape == (8, 3) and list(s) == [1, -1, -1]
    assert list(D[:, 1]) == [0, 0, 0, 0, 1, 1, 0, 0] and list(D[:, 2]) == [0, 0, 0, 0, 0, 0, 1, 1]
    assert list(D[:, 0]) == [1, 1, 1, 1, 0, 0, 0, 0]  # the other neuron unchanged
    D, s, what = split_move(preact, np.array([1.0, -1.0]), cluster, labels, tried={what})
    assert "cluster 1 off neuron 0" in what  # the next nearest wall
    one = np.array([[1], [1], [-1], [-1], [2], [2], [-1], [-1]], float)  # fires on cluster 0 (+) and 2 (-): nothing to split
    assert split_move(one, np.array([1.0]), cluster, labels) is None


def test_the_hill_climb_moves_to_a_more_robust_new_point():
    """Moves over activation patterns aimed at a larger objective (the engine's hill-climb): from the per-class
    (averaging) point of a small cluster instance, given as the only start, a split move certifies as a new point with a
    larger flip norm, and the record it makes is credited to its move kind (whatever the order the moves are tried in)."""
    from ibcheck.solvers.kkt.cones import cluster_labels
    from ibcheck.solvers.kkt.engine import polish_and_certify
    from ibcheck.solvers.kkt.flip import point_flip_norm
    from ibcheck.solvers.kkt.policy import function_probes
    from ibcheck.solvers.kkt.polish import data_span

    ds = clusters(8, 4, 24, 0.3, seed=4)
    v = universal_directions("fvbs23", means=ds.means, J_plus=ds.J_plus)

    def objective(net):
        return point_flip_norm(net, ds.X, ds.y, v, 0.9)[0]

    remap, labels = cluster_labels(ds.y, ds.cluster)
    D, s = family_cone("per-class", remap, labels)
    avg = polish_and_certify(ds.X, ds.y, D, s, "per-class", Budget(programs=6), data_span(ds.X, True), function_probes(ds.X), [])
    assert avg.certified
    for seed in (0, 1):  # the moves are tried in a random order
        res = search(ds.X, ds.y, ds.cluster, (("per-class", avg.net),), Budget(gd=0, enumerate=0, cones=False, slsqp=0, programs=6,
                     ascent=20, covers=(), starts_max=24), seed=seed, objective=objective)
        recs = res.records()
        assert recs.get("move:split", 0) >= 1 and set(recs) <= {"start:per-class", "move:split"}  # records credited to the split
        assert max(objective(p) for p in res.points) > objective(avg.net) + 0.1
