"""Seeded, validated data generators for every setting of THEORY.md.

Each generator returns a :class:`Dataset` (numpy float64): training inputs and labels,
and a ``sampler`` that draws fresh test points from the same distribution. Generators
that have latent structure keep it: the cluster means, the training noise vectors and the
cluster index of every point (needed by the feature decomposition of LPLL25).

Every dataset draws from its own stream per (arguments, seed): ``seeds.rng("training-data", seed, key)`` with
``key = seeds.cell_key(kind, ...)`` over the generator's arguments, and its fresh points mix the same key into the
seed they are given. So one seed at two cells (n = 50 and n = 100, or d = 8 and d = 16) draws independent data.
"""
from __future__ import annotations

import gzip
import os
import struct
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from ibcheck.simulate.substrate.seeds import cell_key
from ibcheck.simulate.substrate.seeds import rng as stream_rng
from ibcheck.theory.argtypes import refused
from ibcheck.theory.errors import InputError

DATA_KINDS = ("clusters", "sphere", "gaussian", "bernoulli", "separable", "digits", "idx")


@dataclass
class Dataset:
    """Training data plus what the measurements need.

    ``y`` is in {-1, +1} for binary tasks and in {0..k-1} for multiclass tasks
    (``multiclass=True``). ``means`` (k, d), ``noise`` (n, d) and ``cluster`` (n,) are set
    for cluster data; ``J_plus`` lists the clusters labelled +1.
    """

    X: np.ndarray
    y: np.ndarray
    kind: str
    multiclass: bool = False
    n_classes: int = 2
    means: np.ndarray | None = None
    noise: np.ndarray | None = None
    cluster: np.ndarray | None = None
    J_plus: tuple[int, ...] = ()
    info: dict = field(default_factory=dict)
    sampler: Callable[[int, np.random.Generator], tuple[np.ndarray, np.ndarray]] | None = None
    key: int = 0  # the cell key its draws were made under (seeds.cell_key of its arguments)

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def d(self) -> int:
        return self.X.shape[1]

    def sample(self, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """Fresh points from the same distribution (a held-out split for real data), from ``seed`` and this dataset's
        own key: the same ``seed`` at another cell draws other points. (A seed, never a generator: a generator's draws
        would not read the cell's key.)"""
        if self.sampler is None:
            raise InputError(f"data kind {self.kind} has no sampler for fresh test points")
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
            raise InputError(f"seed {seed!r} is not a seed: fresh points take an integer >= 0 (mixed with the cell's key)")
        return self.sampler(n, np.random.default_rng(np.random.SeedSequence((int(seed), int(self.key)))))


def _stream(seed: int, *parts) -> tuple[np.random.Generator, int]:
    """(the generator, the key) of a dataset drawn with ``seed`` at the cell ``parts`` (its kind and arguments)."""
    key = cell_key(*parts)
    return stream_rng("training-data", int(seed), key), key


def _positive_int(name: str, v, low: int = 1) -> int:
    if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < low:
        raise refused(name, v, f"is out of range: must be an integer >= {low}")
    return int(v)


def _positive(name: str, v) -> float:
    if not (isinstance(v, (int, float)) and np.isfinite(v) and v > 0):
        raise refused(name, v, "is out of range: must be a number > 0")
    return float(v)


def cluster_means(d: int, k: int, rng: np.random.Generator, orthogonal: bool = True) -> np.ndarray:
    """k means of norm sqrt(d): exactly orthogonal (QR of a Gaussian matrix) or random on the sphere."""
    if orthogonal:
        if k > d:
            raise refused("k", k, f"is out of range: orthogonal means need k <= d={d}")
        Q, R = np.linalg.qr(rng.standard_normal((d, k)))
        Q = Q * np.sign(np.diag(R))  # a Haar-distributed orthonormal frame
        return np.sqrt(d) * Q.T
    G = rng.standard_normal((k, d))
    return np.sqrt(d) * G / np.linalg.norm(G, axis=1, keepdims=True)


def max_abs_cosine(means: np.ndarray) -> float:
    """Largest |cos| between distinct means: how near-orthogonal they are (FVBS23.asm.2_2)."""
    if len(means) < 2:
        return 0.0
    U = means / np.linalg.norm(means, axis=1, keepdims=True)
    C = np.abs(U @ U.T)
    np.fill_diagonal(C, 0.0)
    return float(C.max())


SPLIT_WORDS = ("half", "alternate", "odd", "even")


def split_items(split: str | Sequence) -> list[int]:
    """The explicit ids of a split (``"0,2"`` or ``[0, 2]``); anything but integers is refused in one line."""
    parts: Sequence = split.split(",") if isinstance(split, str) else split
    try:
        if any(isinstance(s, float) and not s.is_integer() for s in parts):
            raise ValueError("not an integer")
        return [int(s) for s in parts]
    except (TypeError, ValueError):
        raise refused("split", split, f"is not accepted: give {', '.join(SPLIT_WORDS)} or comma-separated ids such as 0,2") from None


def parse_split(k: int, split: str | Sequence[int] | None) -> tuple[int, ...]:
    """J+ from ``"half"`` (the first k//2 clusters), ``"alternate"`` (even ones) or explicit ids."""
    if split is None or split == "half":
        J = tuple(range(k // 2)) if k > 1 else (0,)
    elif split == "alternate":
        J = tuple(range(0, k, 2))
    else:
        items = split_items(split)
        if not items or any(j < 0 or j >= k for j in items) or len(set(items)) != len(items):
            raise refused("split", split, f"is out of range: give distinct cluster ids in 0..{k - 1}")
        J = tuple(sorted(items))
    if len(J) in (0, k) and k > 1:
        raise refused("split", split, f"leaves one class empty: J+ must be a proper subset of 0..{k - 1}")
    return J


def clusters(d: int, k: int, n: int, sigma: float = 1.0, seed: int = 0, orthogonal: bool = True,
             split: str | Sequence[int] | None = "half", multiclass: bool = False) -> Dataset:
    """FVBS23.def.D_clusters / LPLL25.def.data: ``x = mu_j + xi``, j uniform, ``xi ~ N(0, sigma^2 I)``.

    Binary labels are +1 on J+ and -1 elsewhere; ``multiclass=True`` labels by cluster.
    """
    d, k, n = _positive_int("d", d, 1), _positive_int("k", k, 1), _positive_int("n", n, 1)
    sigma = float(sigma)
    if not np.isfinite(sigma) or sigma < 0:
        raise refused("sigma", sigma, "is out of range: must be a number >= 0")
    # the labels are not draws: a k-class task labels the same points by cluster, so it shares the binary task's key
    # (the last slot reads False for both), and a reproduction's 2-class and k-class models train on one sample
    rng, key = _stream(seed, "clusters", d, k, n, sigma, orthogonal, parse_split(k, split), False)
    means = cluster_means(d, k, rng, orthogonal)
    J = parse_split(k, split)
    label_of = np.where(np.isin(np.arange(k), J), 1.0, -1.0)

    def draw(m: int, r: np.random.Generator):
        c = r.integers(0, k, size=m)
        xi = sigma * r.standard_normal((m, d))
        return c, xi

    c, xi = draw(n, rng)

    def sampler(m, r):
        cc, xx = draw(m, r)
        return means[cc] + xx, (cc if multiclass else label_of[cc])

    return Dataset(
        X=means[c] + xi, y=(c.astype(np.int64) if multiclass else label_of[c]), kind="clusters",
        multiclass=multiclass, n_classes=k if multiclass else 2, means=means, noise=xi, cluster=c, J_plus=J,
        info={"max_abs_cos_means": max_abs_cosine(means), "orthogonal": orthogonal, "sigma": sigma, "J_plus": list(J)},
        sampler=sampler, key=key,
    )


def sphere_points(m: int, d: int, r: np.random.Generator) -> np.ndarray:
    G = r.standard_normal((m, d))
    return np.sqrt(d) * G / np.linalg.norm(G, axis=1, keepdims=True)


def balanced_labels(m: int, r: np.random.Generator) -> np.ndarray:
    y = np.where(np.arange(m) < (m + 1) // 2, 1.0, -1.0)
    return r.permutation(y)


def sphere(d: int, n: int, seed: int = 0) -> Dataset:
    """VYS22.exp: uniform points on the sphere of radius sqrt(d) with balanced random labels."""
    d, n = _positive_int("d", d), _positive_int("n", n)
    rng, key = _stream(seed, "sphere", d, n)
    X = sphere_points(n, d, rng)
    G = X @ X.T
    np.fill_diagonal(G, 0.0)
    return Dataset(X=X, y=balanced_labels(n, rng), kind="sphere",
                   info={"max_ip": float(np.abs(G).max()) if n > 1 else 0.0},
                   sampler=lambda m, r: (sphere_points(m, d, r), balanced_labels(m, r)), key=key)


def gaussian(d: int, n: int, sigma: float = 1.0, seed: int = 0) -> Dataset:
    """SSTTM18.def.gaussian: y uniform on {-1,+1}, ``x ~ N(y theta*, sigma^2 I)``, ``||theta*|| = sqrt(d)``."""
    d, n, sigma = _positive_int("d", d), _positive_int("n", n), _positive("sigma", sigma)
    rng, key = _stream(seed, "gaussian", d, n, sigma)
    theta = sphere_points(1, d, rng)[0]

    def draw(m, r):
        y = r.choice([-1.0, 1.0], size=m)
        return y[:, None] * theta + sigma * r.standard_normal((m, d)), y

    X, y = draw(n, rng)
    return Dataset(X=X, y=y, kind="gaussian", info={"theta_star": theta, "sigma": sigma}, sampler=draw, key=key)


def bernoulli(d: int, n: int, tau: float = 0.1, seed: int = 0) -> Dataset:
    """SSTTM18.bernoulli: ``x_i = y theta*_i`` with probability 1/2 + tau, else ``-y theta*_i``."""
    d, n = _positive_int("d", d), _positive_int("n", n)
    if not (0 < tau <= 0.5):
        raise refused("tau", tau, "is out of range: must be a number in (0, 0.5]")
    rng, key = _stream(seed, "bernoulli", d, n, tau)
    theta = rng.choice([-1.0, 1.0], size=d)

    def draw(m, r):
        y = r.choice([-1.0, 1.0], size=m)
        agree = r.random((m, d)) < 0.5 + tau
        return np.where(agree, 1.0, -1.0) * y[:, None] * theta, y

    X, y = draw(n, rng)
    return Dataset(X=X, y=y, kind="bernoulli", info={"theta_star": theta, "tau": tau}, sampler=draw, key=key)


def separable(d: int, n: int, gap: float = 1.0, seed: int = 0) -> Dataset:
    """SHNGS18: Gaussian inputs labelled by a random direction w*, pushed apart by ``gap`` along w*."""
    d, n, gap = _positive_int("d", d), _positive_int("n", n), _positive("gap", gap)
    rng, key = _stream(seed, "separable", d, n, gap)
    w = rng.standard_normal(d)
    w /= np.linalg.norm(w)

    def draw(m, r):
        X = r.standard_normal((m, d))
        y = np.where(X @ w >= 0, 1.0, -1.0)
        return X + (gap / 2) * y[:, None] * w, y

    X, y = draw(n, rng)
    return Dataset(X=X, y=y, kind="separable", info={"w_star": w, "gap": gap}, sampler=draw, key=key)


def random_net_inputs(d: int, n: int, seed: int = 0) -> Dataset:
    """BCGT21: inputs on the sphere of radius sqrt(d); labels are set later by the network's sign."""
    d, n = _positive_int("d", d), _positive_int("n", n)
    rng, key = _stream(seed, "random-net-inputs", d, n)
    X = sphere_points(n, d, rng)
    return Dataset(X=X, y=np.ones(n), kind="sphere", sampler=lambda m, r: (sphere_points(m, d, r), np.ones(m)), key=key)


def _split_real(X, y, n, seed, kind, multiclass, n_classes, info):
    """A deterministic train subset of size n; the rest is the held-out pool the sampler draws from."""
    rng, key = _stream(seed, kind, len(X), n, tuple(info.get("J_plus", ())))  # one train subset for 2 and 10 classes
    order = rng.permutation(len(X))
    if n > len(X) - 1:
        raise refused("n", n, f"is out of range: {kind} has {len(X)} images, n must be at most {len(X) - 1}")
    tr, te = order[:n], order[n:]

    def sampler(m, r):
        idx = te if m >= len(te) else r.choice(te, size=m, replace=False)
        return X[idx], y[idx]

    return Dataset(X=X[tr], y=y[tr], kind=kind, multiclass=multiclass, n_classes=n_classes, info=info, sampler=sampler,
                   key=key)


def digits(n: int = 1000, seed: int = 0, split: str | Sequence[int] | None = "odd", multiclass: bool = False) -> Dataset:
    """scikit-learn's bundled 8x8 digits (no download), scaled to [0, 1] and centred.

    Binary: +1 for the digits in ``split`` (``"odd"``, ``"even"`` or explicit digits), -1 else.
    ``multiclass=True`` gives the 10-class task.
    """
    from sklearn.datasets import load_digits  # heavy: sklearn (loaded on first use)

    n = _positive_int("n", n)
    data = load_digits()
    X = data.data.astype(np.float64) / 16.0
    X = X - X.mean(axis=0)
    labels = data.target.astype(np.int64)
    plus = _digit_split(split)
    if multiclass:
        ds = _split_real(X, labels, n, seed, "digits", True, 10, {"classes": 10, "J_plus": list(plus)})
        ds.J_plus = plus  # the binary read-out's positive digits
        return ds
    y = np.where(np.isin(labels, plus), 1.0, -1.0)
    return _split_real(X, y, n, seed, "digits", False, 2, {"J_plus": list(plus)})


def _digit_split(split) -> tuple[int, ...]:
    if split in (None, "odd"):
        return (1, 3, 5, 7, 9)
    if split == "even":
        return (0, 2, 4, 6, 8)
    items = split_items(split)
    if not items or any(j < 0 or j > 9 for j in items) or len(set(items)) in (0, 10):
        raise refused("split", split, "is out of range: give distinct digits in 0..9, not all of them")
    return tuple(sorted(set(items)))


# ---------------------------------------------------------------------------------------------
# MNIST-format IDX files that a user already has on disk.

_IDX_TYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path: str) -> np.ndarray:
    """Read an IDX file (optionally gzipped): magic ``0 0 type ndim``, big-endian dims, data."""
    if not os.path.isfile(path):
        raise InputError(f"IDX file {path!r} does not exist")
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_TYPES:
        raise InputError(f"{path!r} is not an IDX file (bad magic number)")
    ndim = raw[3]
    dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    dtype = np.dtype(_IDX_TYPES[raw[2]])
    count = int(np.prod(dims)) if dims else 0
    body = raw[4 + 4 * ndim:]
    if len(body) != count * dtype.itemsize:
        raise InputError(f"{path!r}: header says {dims} x {dtype.itemsize} bytes, file has {len(body)} bytes of data")
    return np.frombuffer(body, dtype=dtype).reshape(dims)


def write_idx(path: str, array: np.ndarray) -> None:
    """Write a uint8 IDX file (used by the tests to make a small MNIST-format file)."""
    arr = np.ascontiguousarray(array, dtype=np.uint8)
    with open(path, "wb") as f:
        f.write(bytes([0, 0, 0x08, arr.ndim]))
        f.write(struct.pack(">" + "I" * arr.ndim, *arr.shape))
        f.write(arr.tobytes())


def idx(images: str, labels: str, n: int = 1000, seed: int = 0, split: str | Sequence[int] | None = "odd",
        multiclass: bool = False) -> Dataset:
    """An MNIST-format pair of IDX files, flattened and scaled to [0, 1] then centred."""
    imgs, labs = read_idx(images), read_idx(labels)
    if imgs.shape[0] != labs.shape[0]:
        raise InputError(f"{images!r} has {imgs.shape[0]} images but {labels!r} has {labs.shape[0]} labels")
    X = imgs.reshape(len(imgs), -1).astype(np.float64) / 255.0
    X = X - X.mean(axis=0)
    labs = labs.astype(np.int64)
    plus = _digit_split(split)
    if multiclass:
        k = int(labs.max()) + 1
        ds = _split_real(X, labs, n, seed, "idx", True, k, {"classes": k, "J_plus": list(plus)})
        ds.J_plus = plus
        return ds
    return _split_real(X, np.where(np.isin(labs, plus), 1.0, -1.0), n, seed, "idx", False, 2, {"J_plus": list(plus)})
