"""GD as the engine's pattern source (:func:`ibcheck.solvers.kkt.gd.gd_pattern`): the pre-activation step through the
Gram matrix and the step in the span's coordinates are one iteration, whichever the cost picks."""
from __future__ import annotations

import numpy as np
import pytest

from ibcheck.simulate.substrate.data import clusters
from ibcheck.solvers.kkt.gd import _softmax_neg, gd_pattern, inits
from ibcheck.solvers.kkt.polish import data_span


def _reference(L, y, init, steps, lr=2.5, lr_out=0.02):
    """The iteration written out in the span's coordinates (C, a), as the engine ran it before issue 48."""
    scale = float(np.sqrt(np.mean(np.sum(L * L, axis=1))))
    Ln = L / scale
    C, a = np.array(init.C, float) * scale, np.array(init.a, float)
    for _ in range(steps):
        Z = Ln @ C.T
        H = np.maximum(Z, 0.0)
        g = -(_softmax_neg(y * (H @ a)) * y)
        C -= lr * (((g[:, None] * a[None, :]) * (Z > 0)).T @ Ln)
        a -= lr_out * (H.T @ g)
    return (Ln @ C.T > 0).astype(float), np.sign(a)


@pytest.mark.parametrize("d,k,n", [(64, 4, 40), (8, 4, 60)])  # n <= 2r (through K) and n > 2r (the coordinates)
def test_gd_in_the_gram_space_is_the_iteration_in_coordinates(d, k, n):
    ds = clusters(d, k, n, 1.0, seed=3)
    Q, L = data_span(ds.X)
    assert (n <= 2 * L.shape[1]) == (d == 64)
    for init in inits(Q, ds.X, ds.cluster, ds.y, 4, np.random.default_rng(0), True):
        D, s = gd_pattern(L, ds.y, init, steps=300)
        D_ref, s_ref = _reference(L, ds.y, init, 300)
        assert (s == s_ref).all()
        assert (D != D_ref).mean() <= 0.01  # the same iterates to rounding (a pre-activation at 0 may fall either side)
