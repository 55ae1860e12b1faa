"""Activation-cone families of (P) on cluster data: the patterns whose optimum may be a distinct KKT point.

(P) restricted to fixed activation patterns ``D`` (n, m) and output signs ``s`` (m) is convex
(:func:`.polish.cone_polish`). A family names a pattern by what the data are, not by a network's
pre-activations:

* ``per-cluster``: neuron j fires exactly on cluster j's points, output sign y^(j);
* ``per-class``: one neuron per class, firing exactly on that class (the feature-averaging pattern);
* ``mixture``: the positive class averaged in one neuron, the negative class one neuron per cluster;
* ``partial``: the clusters of each class split in two halves, one neuron per half (a partial averaging);
* ``robust``: the pattern of FVBS23.thm.4_1's network (one neuron per cluster with a negative bias) on the sample.

Pitfall avoided: a family read off a network (``w = mu_j``, bias 0) is not the family: with the
noise, a bias-free per-cluster neuron fires on about half the other clusters' points, so its cone is
a mixture of everything. The patterns here are exact.
"""
from __future__ import annotations

import numpy as np

FAMILIES = ("per-cluster", "per-class", "mixture", "partial", "robust")


def cluster_labels(y: np.ndarray, cluster: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(each point's cluster as 0..k-1, each cluster's label): the one place the cones, GD's inits and the ascent read
    the clusters. A cluster's label is the sign of its labels' sum (+1 on a tie; a cluster holding both labels is
    refused at the API's boundary)."""
    y, cluster = np.asarray(y, float), np.asarray(cluster)
    ks = np.unique(cluster)
    labels = np.array([np.sign(y[cluster == c].sum()) or 1.0 for c in ks])
    return np.asarray(np.searchsorted(ks, cluster)), labels


def _groups_pattern(cluster: np.ndarray, groups: list[list[int]]) -> np.ndarray:
    """(n, len(groups)): neuron g fires exactly on the points whose cluster is in ``groups[g]``."""
    return np.stack([np.isin(cluster, g).astype(float) for g in groups], axis=1)


def family_cone(name: str, cluster: np.ndarray, labels: np.ndarray, robust_preact: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """The cone ``(D, s)`` of family ``name`` on a sample whose point i lies in cluster ``cluster[i]``, cluster j having
    label ``labels[j]`` (+-1). ``robust`` needs the construction's pre-activations on the sample (n, k)."""
    cluster = np.asarray(cluster)
    labels = np.asarray(labels, float)
    pos = [int(j) for j in np.flatnonzero(labels > 0)]
    neg = [int(j) for j in np.flatnonzero(labels < 0)]
    if name == "per-cluster":
        groups = [[j] for j in range(len(labels))]
    elif name == "per-class":
        groups = [pos, neg]
    elif name == "mixture":
        groups = [pos] + [[j] for j in neg]
    elif name == "partial":
        groups = [g for c in (pos, neg) for g in (c[: (len(c) + 1) // 2], c[(len(c) + 1) // 2:]) if g]
    elif name == "robust":
        if robust_preact is None:
            raise ValueError("the robust family needs the construction's pre-activations on the sample")
        return (np.asarray(robust_preact) > 0).astype(float), labels.copy()
    else:
        raise ValueError(f"unknown cone family {name!r}: one of {', '.join(FAMILIES)}")
    s = np.array([labels[g[0]] for g in groups])
    return _groups_pattern(cluster, groups), s


POINT_FAMILIES = ("per-point", "per-class")


def point_cone(name: str, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A cone of data without clusters (VYS22's nearly orthogonal points): ``per-point`` (neuron i fires exactly on
    point i, output sign y_i: the memorizing pattern) or ``per-class`` (one neuron per label, firing on its class)."""
    y = np.asarray(y, float)
    if name == "per-point":
        return np.eye(len(y)), y.copy()
    if name == "per-class":
        return np.stack([y > 0, y < 0], axis=1).astype(float), np.array([1.0, -1.0])
    raise ValueError(f"unknown cone family {name!r} for points: one of {', '.join(POINT_FAMILIES)}")


def split_move(preact: np.ndarray, s: np.ndarray, cluster: np.ndarray, labels: np.ndarray, tried=frozenset()
               ) -> tuple[np.ndarray, np.ndarray, str] | None:
    """A local move to an adjacent cluster-level cone with less averaging: the network's pattern ``preact > 0``
    (n, m; output signs ``s``), with one cluster taken off the neuron that fires on the most clusters of its own
    class and given a neuron of its own (firing exactly on that cluster, sign its label). The cluster is the one
    nearest that neuron's wall (the smallest mean pre-activation over its points), skipping the moves in ``tried``
    (their descriptions). None when no neuron fires on two clusters of its class (nothing to split).

    Pitfall avoided: a move across a single point's wall keeps what the neuron averages; a cluster moves whole,
    so the new cone differs in it (on FVBS23's samples, the moved cones still led back toward the GD point)."""
    preact, s, cluster, labels = np.asarray(preact, float), np.asarray(s, float), np.asarray(cluster), np.asarray(labels, float)
    D = (preact > 0).astype(float)
    options = []
    for j in range(D.shape[1]):
        own = [int(c) for c in np.unique(cluster[D[:, j] > 0]) if labels[c] == s[j]]
        if len(own) >= 2:
            for c in own:
                what = f"split cluster {c} off neuron {j} (averaging {len(own)} clusters)"
                if what not in tried:
                    options.append((-len(own), float(preact[cluster == c, j].mean()), j, c, what))
    if not options:
        return None
    _, _, j, c, what = min(options)
    D[cluster == c, j] = 0.0
    return np.hstack([D, (cluster == c).astype(float)[:, None]]), np.append(s, labels[c]), what


def set_partitions(items: list[int]):
    """Every partition of ``items`` into non-empty blocks (Bell(len(items)) of them), each a list of lists."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for p in set_partitions(rest):
        yield [[first]] + p
        for i in range(len(p)):
            yield p[:i] + [[first] + p[i]] + p[i + 1:]


def bell(m: int) -> int:
    """The number of partitions of m items (Bell's triangle)."""
    row = [1]
    for _ in range(m):
        nxt = [row[-1]]
        for v in row:
            nxt.append(nxt[-1] + v)
        row = nxt
    return row[0]


def partition_count(labels: np.ndarray) -> int:
    """How many cluster-level cones :func:`partition_cones` enumerates: Bell(#positive clusters) x Bell(#negative)."""
    labels = np.asarray(labels, float)
    return bell(int((labels > 0).sum())) * bell(int((labels < 0).sum()))


def partition_cones(cluster: np.ndarray, labels: np.ndarray):
    """Every cluster-level cone in which each class's clusters are partitioned among that class's neurons (a neuron per
    block, firing exactly on its clusters, output sign the class): per-cluster, per-class, leave-one-out, every
    sub-averaging in between. Yields ``(name, D, s)``. Their count is :func:`partition_count` (225 at k = 8)."""
    cluster, labels = np.asarray(cluster), np.asarray(labels, float)
    pos = [int(j) for j in np.flatnonzero(labels > 0)]
    neg = [int(j) for j in np.flatnonzero(labels < 0)]
    for pp in set_partitions(pos):
        for pn in set_partitions(neg):
            groups = pp + pn
            yield ("partition " + " ".join("{" + ",".join(map(str, g)) + "}" for g in groups),
                   _groups_pattern(cluster, groups), np.array([labels[g[0]] for g in groups]))


def sub_averaging_cones(cluster: np.ndarray, labels: np.ndarray):
    """Where the partitions are too many to enumerate: the named families and, per cluster c, the leave-one-out cone
    (c's class averaged without c in one neuron, c alone in another, the other class averaged). Yields ``(name, D, s)``."""
    cluster, labels = np.asarray(cluster), np.asarray(labels, float)
    for name in ("per-cluster", "per-class", "mixture", "partial"):
        D, s = family_cone(name, cluster, labels)
        yield name, D, s
    pos = [int(j) for j in np.flatnonzero(labels > 0)]
    neg = [int(j) for j in np.flatnonzero(labels < 0)]
    for c in range(len(labels)):
        own, other = (pos, neg) if labels[c] > 0 else (neg, pos)
        rest = [j for j in own if j != c]
        if not rest:
            continue
        groups = [rest, [c], other]
        yield (f"leave-one-out {c}", _groups_pattern(cluster, groups), np.array([labels[rest[0]], labels[c], labels[other[0]]]))
