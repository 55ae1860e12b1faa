"""simulate.stats.laws: the t law's quantiles and tails give scipy.stats.t's own numbers, bit for bit (the verdict
engine's thresholds and p-values must not move with the speed-up), including the edges (inf, nan, df <= 0)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ibcheck.simulate.stats.laws import t_cdf, t_quantile, t_sf


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


@pytest.mark.parametrize("df", [1, 2, 3, 7, 30, 1000, 2.5, math.inf])
def test_the_tails_are_scipy_stats_own(df):
    xs = [*np.random.default_rng(0).standard_normal(400) * 6, 0.0, 1e-300, 40.0, -40.0, 1e6, math.inf, -math.inf, math.nan]
    assert all(_same(t_sf(x, df), float(stats.t.sf(x, df))) for x in xs)
    assert all(_same(t_cdf(x, df), float(stats.t.cdf(x, df))) for x in xs)


def test_the_quantiles_are_scipy_stats_own_and_cached():
    for df in (1, 2, 5, 17, 200, math.inf, 0, -1):
        for q in (0.5, 0.8, 0.9, 0.95, 0.975, 0.995, 1 - 0.05 / 14, 1e-9, 0.0, 1.0):
            assert _same(t_quantile(q, df), float(stats.t.ppf(q, df))), (q, df)
    before = t_quantile.cache_info().hits
    t_quantile(0.975, 17)
    assert t_quantile.cache_info().hits == before + 1


def test_a_tail_at_a_bad_df_is_nan_as_scipy_says():
    for df in (0, -1, math.nan):
        assert math.isnan(t_sf(1.0, df)) and math.isnan(float(stats.t.sf(1.0, df)))
