"""Gradient descent as a pattern source for the KKT engine (numpy, in the data's span).

GD on ``F(theta) = log sum_i exp(-q_i(theta))`` (the exponential loss in log space: a fixed step on F is the
loss-based step ``eta / L`` on the summed loss) from a chosen initialization. Its end point is not a KKT point; its
activation pattern and output signs are where the engine's tie-aware polish starts (:mod:`.engine`).

Inits (:func:`inits`): per cluster (one neuron along each cluster mean, output sign the cluster's label, at scale 1-3,
bias 0 or -0.5, optionally twice as wide), random groupings of each class's clusters, and random Gaussian ones (data
without clusters); the cover starts (:func:`cover_inits`), every combination of each class's overlapping covers of its
clusters.

Pitfalls avoided: the loss is never exponentiated (log-sum-exp, so a margin of 1e3 is no overflow); the network lives
in the span of ``[X 1]`` (its outputs on the sample depend on nothing else) and is stepped in its pre-activations through
the Gram matrix (or in the span's r = min(n, d + 1) coordinates, where 2r < n), so a step costs ``n x min(n, 2r) x width``
whatever d; GD at one width and scale from small random inits finds the same point again and again (at d = 64, k = 8:
per-cluster inits at scales 1-3 with bias 0 or -0.5 found 30 distinct points in 48 runs).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .cones import cluster_labels


@dataclass(frozen=True)
class Init:
    """One GD initialization, in the coordinates of the data's span: ``C`` (m, r) the rows ``Q^T [w_j, b_j]``, ``a`` (m,)."""

    name: str
    C: np.ndarray
    a: np.ndarray


def _softmax_neg(q: np.ndarray) -> np.ndarray:
    e = np.exp(-(q - q.min()))
    return e / e.sum()


CLOCK_EVERY = 50  # GD steps between two readings of the clock (a step at n = d = 1000 costs about 1 ms)


def gd_pattern(L: np.ndarray, y: np.ndarray, init: Init, steps: int = 2000, lr: float = 2.5,
               lr_out: float = 0.02, deadline: float | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """(D, s): the activation pattern (n, m) and output signs (m) where GD on ``log sum exp(-q)`` from ``init`` ends.
    ``L`` (n, r): the data in span coordinates (``[X 1] = L Q^T``). The first layer's step ``lr`` is taken on the data
    rescaled to unit RMS row norm (the pattern does not depend on the scale; the init's pre-activations are kept), so one
    step size serves every d: at d = 64 it is 0.02 on the raw FVBS23 data, and a raw 0.02 diverged at d = 1024 (rows of
    norm 45); the output layer's gradient does not grow with d (pre-activations of order the init's scale): ``lr_out``.
    A run whose loss stops being finite ends where it is. Past ``deadline`` (a ``time.perf_counter()`` value, read every
    :data:`CLOCK_EVERY` steps) it is abandoned: None, no pattern (a search's time cap ends inside a run, not after it).

    Measured (issue 48): at n = 1107 (d = 4096, k = 16) the 2000 steps cost 0.96 s a start stepped through K (below;
    20-35 s in the span's coordinates, 90% of a start); the pattern has not settled by then (50-90 of the n m entries change every 100 steps at d = 256, k = 8),
    so stopping at a settled pattern saves nothing. The margins grow geometrically under the fixed step (1e49 after
    2000 steps), so this GD behaves like a subgradient method on the smallest margin.

    Where n <= 2r the first layer is stepped in the pre-activations ``Z = Ln C^T`` (the step ``C -= lr G^T Ln`` is
    ``Z -= lr K G`` with ``K = Ln Ln^T``): one n x n x m product a step where the coordinates take two n x r x m ones;
    with many more points than dimensions (n > 2r) the coordinates are the cheaper, and are stepped."""
    scale = float(np.sqrt(np.mean(np.sum(L * L, axis=1)))) or 1.0
    Ln = L / scale
    n, r = Ln.shape
    C, a = np.array(init.C, float) * scale, np.array(init.a, float)
    through_gram = n <= 2 * r  # the cheaper step: n x n x m through K, or two n x r x m through the coordinates
    K = Ln @ Ln.T if through_gram else None
    Z = Ln @ C.T
    for step in range(steps):
        if deadline is not None and step % CLOCK_EVERY == 0 and time.perf_counter() > deadline:
            return None
        H = np.maximum(Z, 0.0)
        q = y * (H @ a)
        if not np.isfinite(q).all():
            break
        p = _softmax_neg(q)
        g = -(p * y)  # dF / d output_i
        G = (g[:, None] * a[None, :]) * (Z > 0)
        if K is not None:
            Z -= lr * (K @ G)  # = Ln (C - lr G^T Ln)^T: the step on C, carried to the pre-activations
        else:
            C -= lr * (G.T @ Ln)
            Z = Ln @ C.T
        a -= lr_out * (H.T @ g)
    return (Z > 0).astype(float), np.sign(a)


def inits(Q: np.ndarray, X: np.ndarray, cluster: np.ndarray | None, y: np.ndarray, count: int,
          rng: np.random.Generator, bias: bool = True, width: int | None = None) -> list[Init]:
    """``count`` initializations in span coordinates (``Q`` from :func:`.polish.data_span`): cycling over width one or two
    neurons per group, bias 0 and -0.5, and scale 1, 2, 3 (width varying fastest). With clusters, even starts are per cluster (neuron j along
    the mean of cluster j with a little noise, output weight its label times 0.3 scale; pre-activations on its own
    cluster of order the scale) and odd starts a random grouping of each class's clusters (:func:`_random_groups`: a
    neuron per group along the group's mean, an averaging start); without clusters, Gaussian inits of width ``width``
    (default 2 sqrt(n)), or twice that, at the same scales.

    Pitfall avoided: per-cluster starts alone at n = 246 (d = 256, k = 8) reach the same one or two points again and
    again; the grouped starts reached 2 of the 4 points found on one such sample in 48 starts. At d = 256, k = 6, n = 185
    two of three points were reached only from two neurons per cluster with bias -0.5 at scale 2 or 3, which the old
    order (scale fastest, width slowest) first tried at its 20th start."""
    X, y = np.asarray(X, float), np.asarray(y, float)
    n, d = X.shape
    out = []
    if cluster is not None:
        remap, labels = cluster_labels(y, cluster)
        means = _cluster_means(X, remap, labels)
    for t in range(count):
        c = t // 2 if cluster is not None else t  # with clusters, even starts per cluster and odd ones grouped
        twice = c % 2 == 1  # width, bias and scale in that order of variation: the first 12 cover every combination
        b0 = (0.0, -0.5)[(c // 2) % 2] if bias else 0.0
        scale = (1.0, 2.0, 3.0)[(c // 4) % 3]
        if cluster is not None:
            reps = 2 if twice else 1
            if t % 2 == 0:  # one neuron (or two) per cluster
                groups = [[c] for c in range(len(labels))]
                name = f"gd:per-cluster x{reps} scale {scale:g} bias {b0:g}"
            else:  # a random grouping of each class's clusters, a neuron per group along its mean (an averaging start)
                groups = _random_groups(labels, rng)
                name = f"gd:groups {'|'.join(','.join(map(str, g)) for g in groups)} x{reps} scale {scale:g} bias {b0:g}"
            W, a = _along_means(means, labels, [g for g in groups for _ in range(reps)], scale, rng)
        else:
            m = (width or 2 * max(int(np.sqrt(n)), 2)) * (2 if twice else 1)
            size = float(np.sqrt(np.mean(np.sum(X * X, axis=1))))
            W = scale * rng.standard_normal((m, d)) / max(size, 1e-300)
            a = 0.3 * scale * np.where(np.arange(m) % 2 == 0, 1.0, -1.0)
            name = f"gd:random width {m} scale {scale:g} bias {b0:g}"
        Wt = np.hstack([W, np.full((len(W), 1), b0)]) if bias else W
        out.append(Init(name, Wt @ Q, a))
    return out


def cover_inits(Q: np.ndarray, X: np.ndarray, cluster: np.ndarray, y: np.ndarray, scales: tuple[float, ...],
                rng: np.random.Generator, bias: bool = True) -> list[Init]:
    """The cover starts (clusters only): per class one of its :func:`covers` (one neuron per covered set of clusters,
    along the set's mean), every combination of the two classes' covers, at each of ``scales`` (bias -0.5, the per-cluster
    starts' noise); named ``cover <positive>|<negative> scale s``. (c + 2)^2 combinations a scale at c >= 3 clusters
    per class (25 at k = 6, 36 at k = 8, 100 at k = 16; 4 at k = 4, 1 at k = 2).

    Why: at d = 512, k = 8, n = 312 the KKT points are combinations, per class, of one neuron averaging all its clusters
    or several each averaging all but one (leave-one-out neurons that overlap); random per-cluster and grouped starts
    reach one of them (the full averaging) 87% of the time, 600 of them found 13 points in 406 s, while the 36 cover
    starts at scale 2 found 12 in 10 s and at scales 1 and 3 15."""
    X, y = np.asarray(X, float), np.asarray(y, float)
    remap, labels = cluster_labels(y, cluster)
    means = _cluster_means(X, remap, labels)
    return [_cover_init(Q, means, labels, name, groups, scale, rng, bias) for scale in scales for name, groups in cover_combos(labels)]


def cover_combos(labels: np.ndarray) -> list[tuple[str, list[list[int]]]]:
    """Every combination of the two classes' :func:`covers`, as ``(name, sets)`` (``full|loo-no3``...)."""
    pos, neg = ([int(j) for j in np.flatnonzero(labels == sign)] for sign in (1.0, -1.0))
    return [(f"{pn}|{nn}", pg + ng) for pn, pg in covers(pos) for nn, ng in covers(neg)]


def _cover_init(Q, means, labels, name: str, groups: list[list[int]], scale: float, rng, bias: bool = True) -> Init:
    W, a = _along_means(means, labels, groups, scale, rng)
    Wt = np.hstack([W, np.full((len(W), 1), -0.5)]) if bias else W
    return Init(f"cover {name} scale {scale:.3g}", Wt @ Q, a)


def random_covers(Q: np.ndarray, X: np.ndarray, cluster: np.ndarray, y: np.ndarray, rng: np.random.Generator,
                  favoured=lambda: None, low: float = 0.75, high: float = 3.25, bias: bool = True):
    """Cover starts without end (the continuation's cover source): a combination drawn uniformly, or the one
    ``favoured()`` names (the combination whose start made the last record, where one did) half the time, at a scale
    drawn uniformly in [low, high], with fresh noise.

    Why: at d = 512, k = 8, n = 312 (seed 14) the largest flip norm (11.26, against 10.55 from the 108 cover starts at
    scales 1, 2 and 3) was reached by one cover start in 360, at scale 2.25; its neurons fire on parts of the other
    class's clusters, so no cluster-level cone reaches it, only more cover starts at other scales and noise."""
    X, y = np.asarray(X, float), np.asarray(y, float)
    remap, labels = cluster_labels(y, cluster)
    means = _cluster_means(X, remap, labels)
    combos = cover_combos(labels)
    names = [c[0] for c in combos]
    while True:
        fav = favoured()
        pick = names.index(fav) if fav in names and rng.random() < 0.5 else int(rng.integers(len(combos)))
        name, groups = combos[pick]
        yield _cover_init(Q, means, labels, name, groups, float(rng.uniform(low, high)), rng, bias)


def covers(own: list[int]) -> list[tuple[str, list[list[int]]]]:
    """One class's covers of its clusters ``own`` by overlapping sets, each a neuron: all of them in one ("full"), every
    leave-one-out set ("loo"), every leave-one-out set but the one that leaves out c ("loo-no c"; from 3 clusters). Each
    as (name, sets). A class with no clusters has the one empty cover."""
    if not own:
        return [("none", [])]
    out = [("full", [list(own)])]
    loo = [[j for j in own if j != i] for i in own]
    if len(own) >= 2:
        out.append(("loo", loo))
    if len(own) >= 3:
        out += [(f"loo-no{c}", [g for g, i in zip(loo, own) if i != c]) for c in own]
    return out


def _cluster_means(X: np.ndarray, remap: np.ndarray, labels: np.ndarray) -> np.ndarray:
    return np.stack([X[remap == c].mean(axis=0) for c in range(len(labels))])


def _along_means(means: np.ndarray, labels: np.ndarray, groups: list[list[int]], scale: float,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(W, a): a neuron per group of clusters, along the group's mean with a little noise (``<w, mean> = scale``), output
    weight the group's label times 0.3 scale."""
    d = means.shape[1]
    M = np.stack([means[g].mean(axis=0) for g in groups])
    norms = np.maximum(np.linalg.norm(M, axis=1, keepdims=True), 1e-300)
    W = scale * (M / norms + 0.3 * rng.standard_normal(M.shape) / np.sqrt(d)) / norms
    return W, np.array([labels[g[0]] for g in groups]) * 0.3 * scale


def _random_groups(labels: np.ndarray, rng: np.random.Generator) -> list[list[int]]:
    """A random grouping of each class's clusters: each class split into a uniformly drawn number of groups (1 to its
    clusters), every cluster in a uniformly drawn group, empty groups dropped."""
    out: list[list[int]] = []
    for sign in (1.0, -1.0):
        own = [int(j) for j in np.flatnonzero(labels == sign)]
        if not own:
            continue
        g = int(rng.integers(1, len(own) + 1))
        which = rng.integers(0, g, size=len(own))
        out += [[c for c, w in zip(own, which) if w == b] for b in range(g) if (which == b).any()]
    return out
