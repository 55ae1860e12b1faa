"""Moves over activation patterns: from a KKT point toward a larger value of the quantity a claim bounds.

The polish heads to the nearest KKT point whatever its value of the claim's quantity; the rare robust basins (at
k = 8 one start in 680 reached the largest flip norm of one sample) lie next to points already found, at cluster
level. From a point's pattern read at cluster level (neuron j fires on cluster c where it fires on most of c's points;
on data without clusters each point is its own group), each move is an exact group-level cone:

* ``drop``: neuron j removed;
* ``split``: group c taken off neuron j and given a neuron of its own (less averaging);
* ``loo``: group c taken off neuron j (a leave-one-out neuron; j keeps the rest);
* ``merge``: two neurons of one output sign made one, firing on the union of their groups.

(A neuron doubled on the same groups is no move: the engine solves a cone once up to repeated neurons.)

A move applied to the point a move reached is a combination of moves. :func:`pattern_moves` yields them in an order
that puts the kinds that have made records first (``weights``), so the engine spends its continuation where records
come from (:mod:`.engine`).
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np

MOVE_KINDS = ("split", "loo", "drop", "merge")


def group_pattern(preact: np.ndarray, groups: np.ndarray, s: np.ndarray) -> tuple[list[frozenset[int]], np.ndarray]:
    """The pattern of a network (pre-activations ``preact`` (n, m) on the sample, output signs ``s``) at group level:
    per live neuron the groups it fires on (on most of the group's points), with its sign; dead neurons dropped."""
    preact, groups = np.asarray(preact, float), np.asarray(groups)
    ids = np.unique(groups)
    sets, signs = [], []
    for j in range(preact.shape[1]):
        on = frozenset(int(c) for c in ids if np.mean(preact[groups == c, j] > 0) > 0.5)
        if on and s[j] != 0:
            sets.append(on)
            signs.append(float(s[j]))
    return sets, np.array(signs)


def _cone(groups: np.ndarray, sets: list[frozenset[int]], signs: list[float]) -> tuple[np.ndarray, np.ndarray]:
    D = np.stack([np.isin(groups, sorted(g)).astype(float) for g in sets], axis=1)
    return D, np.array(signs, float)


def pattern_moves(preact: np.ndarray, s: np.ndarray, groups: np.ndarray, labels: np.ndarray,
                  weights: Mapping[str, float] | None = None, rng: np.random.Generator | None = None
                  ) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    """Every single move from the pattern ``preact > 0`` (signs ``s``; ``groups``: each point's group 0..g-1, of label
    ``labels[g]``), as ``(name, D, s)``, kinds in decreasing ``weights`` (records made; ties in MOVE_KINDS order), moves
    of one kind in a random order (``rng``). A neuron's groups of the other label are kept as they are."""
    sets, signs = group_pattern(preact, groups, np.asarray(s, float))
    if not sets:
        return
    labels = np.asarray(labels, float)
    by_kind: dict[str, list[tuple[str, list[frozenset[int]], list[float]]]] = {k: [] for k in MOVE_KINDS}
    m = len(sets)
    for j in range(m):
        rest = [sets[i] for i in range(m) if i != j]
        rsig = [float(signs[i]) for i in range(m) if i != j]
        if rest:
            by_kind["drop"].append((f"drop neuron {j}", rest, rsig))
        own = sorted(c for c in sets[j] if labels[c] == signs[j])
        if len(own) >= 2:
            for c in own:
                less = sets[:j] + [sets[j] - {c}] + sets[j + 1:]
                by_kind["split"].append((f"split {c} off neuron {j}", less + [frozenset({c})], list(signs) + [float(labels[c])]))
                by_kind["loo"].append((f"leave {c} off neuron {j}", less, list(signs)))
        for i in range(j + 1, m):
            if signs[i] == signs[j]:
                merged = [sets[t] for t in range(m) if t not in (i, j)] + [sets[i] | sets[j]]
                msig = [float(signs[t]) for t in range(m) if t not in (i, j)] + [float(signs[j])]
                by_kind["merge"].append((f"merge neurons {i},{j}", merged, msig))
    w = dict(weights or {})
    order = sorted(MOVE_KINDS, key=lambda k: (-w.get(k, 0.0), MOVE_KINDS.index(k)))
    for kind in order:
        items = by_kind[kind]
        idx = rng.permutation(len(items)) if rng is not None else range(len(items))
        for t in idx:
            name, gs, sg = items[int(t)]
            D, sv = _cone(groups, gs, sg)
            yield f"move:{kind} {name}", D, sv


__all__ = ["MOVE_KINDS", "group_pattern", "pattern_moves"]
