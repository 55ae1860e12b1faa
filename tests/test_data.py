import gzip

import numpy as np
import pytest

from ibcheck.simulate.substrate import data as D
from ibcheck.theory import InputError


def test_orthogonal_clusters_have_exact_geometry():
    ds = D.clusters(64, 8, 100, sigma=1.0, seed=3)
    G = ds.means @ ds.means.T
    assert np.allclose(G, 64 * np.eye(8), atol=1e-9)
    assert ds.info["max_abs_cos_means"] < 1e-12
    assert np.allclose(ds.X, ds.means[ds.cluster] + ds.noise)
    assert set(np.unique(ds.y)) == {-1.0, 1.0}
    assert all((ds.y[ds.cluster == j] == (1.0 if j in ds.J_plus else -1.0)).all() for j in range(8))


def test_near_orthogonal_reports_largest_cosine():
    ds = D.clusters(50, 10, 20, seed=1, orthogonal=False)
    U = ds.means / np.linalg.norm(ds.means, axis=1, keepdims=True)
    C = np.abs(U @ U.T - np.eye(10))
    assert ds.info["max_abs_cos_means"] == pytest.approx(C.max())
    assert 0 < ds.info["max_abs_cos_means"] < 1
    assert np.allclose(np.linalg.norm(ds.means, axis=1), np.sqrt(50))


def test_splits_and_determinism():
    assert D.parse_split(6, "half") == (0, 1, 2)
    assert D.parse_split(6, "alternate") == (0, 2, 4)
    assert D.parse_split(6, "1,5") == (1, 5)
    a, b = D.clusters(32, 4, 10, seed=9), D.clusters(32, 4, 10, seed=9)
    assert np.array_equal(a.X, b.X) and np.array_equal(a.y, b.y)
    Xt, yt = a.sample(5, 1)
    Xt2, _ = a.sample(5, 1)
    assert np.array_equal(Xt, Xt2) and Xt.shape == (5, 32)


@pytest.mark.parametrize("call, word", [
    (lambda: D.clusters(8, 9, 10), "k=9 is out of range: orthogonal means need k <= d=8"),
    (lambda: D.clusters(0, 2, 10), "d=0 is out of range"),
    (lambda: D.clusters(8, 2, -1), "n=-1 is out of range"),
    (lambda: D.parse_split(4, "0,1,2,3"), "leaves one class empty"),
    (lambda: D.parse_split(4, "7"), "cluster ids in 0..3"),
    (lambda: D.bernoulli(10, 5, tau=0.7), "tau=0.7 is out of range"),
    (lambda: D.digits(n=5000), "n must be at most"),
])
def test_bad_parameters(call, word):
    with pytest.raises(InputError) as e:
        call()
    assert word in str(e.value)


def test_sphere_gaussian_bernoulli_separable():
    s = D.sphere(30, 41, seed=0)
    assert np.allclose(np.linalg.norm(s.X, axis=1), np.sqrt(30))
    assert abs(s.y.sum()) <= 1
    g = D.gaussian(100, 500, sigma=2.0, seed=0)
    theta = g.info["theta_star"]
    assert np.linalg.norm(theta) == pytest.approx(10.0)
    assert np.mean(np.sign(g.X @ theta) == g.y) > 0.9
    b = D.bernoulli(200, 300, tau=0.2, seed=0)
    agree = (b.X * b.y[:, None] * b.info["theta_star"] > 0).mean()
    assert agree == pytest.approx(0.7, abs=0.02)
    sep = D.separable(10, 200, gap=1.0, seed=0)
    assert (sep.y * (sep.X @ sep.info["w_star"])).min() >= 0.5 - 1e-12


def test_digits_binary_and_ten_class():
    b = D.digits(n=500, seed=0, split="odd")
    assert b.X.shape == (500, 64) and set(np.unique(b.y)) == {-1.0, 1.0}
    Xt, yt = b.sample(200, 0)
    assert Xt.shape == (200, 64)
    mc = D.digits(n=300, seed=0, multiclass=True)
    assert mc.n_classes == 10 and set(np.unique(mc.y)) <= set(range(10))


def test_idx_reader_on_a_file_the_test_writes(tmp_path):
    rng = np.random.default_rng(0)
    imgs = rng.integers(0, 256, (30, 5, 4)).astype(np.uint8)
    labs = rng.integers(0, 10, 30).astype(np.uint8)
    D.write_idx(str(tmp_path / "img.idx"), imgs)
    D.write_idx(str(tmp_path / "lab.idx"), labs)
    assert np.array_equal(D.read_idx(str(tmp_path / "img.idx")), imgs)
    with open(tmp_path / "img.idx", "rb") as f, gzip.open(tmp_path / "img.idx.gz", "wb") as g:
        g.write(f.read())
    assert np.array_equal(D.read_idx(str(tmp_path / "img.idx.gz")), imgs)
    ds = D.idx(str(tmp_path / "img.idx"), str(tmp_path / "lab.idx"), n=20, seed=0)
    assert ds.X.shape == (20, 20) and set(np.unique(ds.y)) <= {-1.0, 1.0}
    (tmp_path / "bad.idx").write_bytes(b"\x01\x02\x03\x04junk")
    with pytest.raises(InputError):
        D.read_idx(str(tmp_path / "bad.idx"))


def test_one_seed_draws_independent_streams_at_every_cell():
    """Issue 57, item 5: the same seed at two cells draws independent numbers (streams version 2). Under version 1
    (``default_rng(seed)`` at every cell) n = 50 and n = 100 shared their cluster means and the first cluster labels, d = 8
    and d = 16 the first coordinates of every sphere draw and the first row of W at init."""
    import torch

    from ibcheck.simulate.substrate import data as D
    from ibcheck.simulate.substrate.models import ModelConfig, init_model
    from ibcheck.simulate.substrate.seeds import stream

    a, b = D.clusters(8, 2, 50, seed=0), D.clusters(8, 2, 100, seed=0)
    assert not np.allclose(a.means, b.means) and not np.array_equal(a.cluster, b.cluster[:50])
    again = D.clusters(8, 2, 50, seed=0)  # the same cell and seed: the same draws
    assert np.array_equal(a.X, again.X) and a.key == again.key != b.key
    s8, s16 = D.sphere(8, 20, seed=3), D.sphere(16, 20, seed=3)
    assert np.abs(np.corrcoef(s8.X[:, 0], s16.X[:, 0])[0, 1]) < 0.9
    assert not np.allclose(a.sample(30, 7)[0], D.clusters(8, 2, 60, seed=0).sample(30, 7)[0][:, :8])  # fresh points too
    with pytest.raises(InputError, match="not a seed"):  # a generator's draws would not read the cell's key
        a.sample(30, np.random.default_rng(7))
    w8 = init_model(ModelConfig("two-layer", width=3), 8, [0], cell=1).params["W"][0]
    w16 = init_model(ModelConfig("two-layer", width=3), 16, [0], cell=1).params["W"][0]
    assert not torch.allclose(w8[0] / w8[0].norm(), w16[0, :8] / w16[0, :8].norm())
    w_other = init_model(ModelConfig("two-layer", width=3), 8, [0], cell=2).params["W"][0]  # another cell's data
    assert not torch.allclose(w8, w_other)
    # a stream is still the spawned child it was: SeedSequence(seed).spawn(...)[purpose], spawned again per index
    ss = np.random.SeedSequence(5).spawn(9)[0].spawn(4)[3]
    assert stream("test-points", 5, 3) == int(ss.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))


def test_a_k_class_task_labels_the_same_draws_as_the_binary_one():
    """A reproduction compares a 2-class and a k-class model on one sample (LPLL25's figures): the k-class labels are
    the clusters of the same points, so both tasks draw the same X (make report's fa-synthetic read a k-class model
    trained on other points: median radius 0)."""
    from ibcheck.simulate.substrate import data as D

    two, many = D.clusters(16, 4, 40, seed=3), D.clusters(16, 4, 40, seed=3, multiclass=True)
    assert np.array_equal(two.X, many.X) and np.array_equal(many.y, many.cluster) and two.key == many.key
    b, m = D.digits(200, seed=1), D.digits(200, seed=1, multiclass=True)
    assert np.array_equal(b.X, m.X)
