"""The t law's quantiles and tails at scalar arguments, for the verdict engine's many single-number calls: the same
numbers as ``scipy.stats.t`` (tests/test_laws.py checks them equal), without its per-call argument handling.

Takes a probability or a statistic and the degrees of freedom; returns a float. Quantiles are cached by (q, df), since
a sweep's tests ask the same few levels at the same few df thousands of times; tails are ``scipy.special.stdtr``, which
``scipy.stats.t`` calls itself (scipy 1.17: ``t.sf(x, df) = stdtr(df, -x)``).

Pitfall avoided: ``scipy.stats.t.sf`` and ``.ppf`` cost about 100 us a call in their argument checks; the test suite's
verdicts made 125,000 calls of ``t.sf`` and 90,000 of ``t.ppf`` (about 4% of its time).
"""
from __future__ import annotations

import functools
import math


@functools.lru_cache(maxsize=4096)
def t_quantile(q: float, df: float) -> float:
    """The q quantile of Student's t with ``df`` degrees of freedom (``scipy.stats.t.ppf(q, df)``)."""
    from scipy import stats  # heavy: scipy (loaded on first use)

    return float(stats.t.ppf(q, df))


def t_sf(x: float, df: float) -> float:
    """P[T > x] for Student's t with ``df`` degrees of freedom (``scipy.stats.t.sf(x, df)``)."""
    from scipy import special  # heavy: scipy (loaded on first use)

    if math.isnan(x) or not df > 0:
        return math.nan
    return float(special.stdtr(df, -x))


def t_cdf(x: float, df: float) -> float:
    """P[T <= x] for Student's t with ``df`` degrees of freedom (``scipy.stats.t.cdf(x, df)``)."""
    from scipy import special  # heavy: scipy (loaded on first use)

    if math.isnan(x) or not df > 0:
        return math.nan
    return float(special.stdtr(df, x))
