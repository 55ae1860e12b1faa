"""The bound any test obeys at a design (simulate.stats.separation) and the power targets it limits."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ibcheck.simulate.compare.calibrate import POWER_TARGETS, power_limit
from ibcheck.simulate.stats.separation import confirm_floor, nearest_corrected, np_power, seeds_needed

D = 2.0 ** np.arange(6, 17)


def test_a_member_of_the_family_is_at_distance_zero_and_is_recovered():
    log_y = 0.7 + np.log1p(4.0 * D ** -0.5)
    sep = nearest_corrected(log_y, D, 9, 0.15, 0.3)
    assert sep.delta < 0.05  # q's grid step is 1% (a coarser member only raises the bound: it stays an upper one)
    assert sep.w == pytest.approx(0.5, abs=0.011) and sep.q == pytest.approx(4.0, rel=0.03)


def test_the_cap_is_applied_exactly():
    # a factor 10 at d = 64 is beyond the cap (3): the nearest member sits at the cap, far from the curve
    log_y = np.log1p(80.0 * D ** -0.5)
    sep = nearest_corrected(log_y, D, 9, 0.15, 0.3)
    f = _member(sep)
    assert abs(f[0]) <= np.log(3.0) + 1e-9 and abs(f[-1]) <= np.log(1.25) + 1e-9
    assert sep.delta > 5


def _member(sep):
    """log of the nearest member's factor along D (its form: (1 + q d^-w)^p or exp(q d^-w))."""
    z = D ** -sep.w
    return sep.q * z if sep.form == "additive" else sep.p * np.log1p(sep.q * z)


def test_the_bound_is_the_power_of_the_likelihood_ratio_test_it_bounds():
    """Monte Carlo: the most powerful test between the missing-log curve and its nearest true curve (intercept free,
    noise known) rejects at the rate np_power gives, and its size is 5%."""
    target = next(t for t in POWER_TARGETS if t.scenario == "missing_log_wide")
    m1 = target.log_factor(D)
    sep = nearest_corrected(m1, D, 9, 0.15, 0.3)
    m0 = _member(sep)
    n, sigma = 9, 0.15
    u = (m1 - m1.mean()) - (m0 - m0.mean())  # the difference with the intercept profiled (equal weights)
    assert np.sqrt(n * (u ** 2).sum()) / sigma == pytest.approx(sep.delta, rel=1e-9)
    rng = np.random.default_rng(0)
    trials = 20000

    def statistic(mean):
        ybar = mean + 2.0 + rng.standard_normal((trials, len(D))) * sigma / np.sqrt(n)  # cell means, any intercept
        ybar -= ybar.mean(axis=1, keepdims=True)
        return ybar @ u

    t0, t1 = statistic(m0), statistic(m1)
    crit = np.quantile(t0, 0.95)
    power = float((t1 > crit).mean())
    se = np.sqrt(power * (1 - power) / trials)
    assert abs(power - np_power(sep.delta)) < 4 * se + 0.01
    assert np_power(0.0) == pytest.approx(0.05)


def test_the_floor_and_the_seeds_follow_from_the_same_distance():
    assert confirm_floor(0.0, 0.8) == pytest.approx(0.8)
    assert confirm_floor(2.0, 0.8) == pytest.approx(stats.norm.cdf(stats.norm.ppf(0.8) - 2.0))
    need = stats.norm.ppf(0.95) + stats.norm.ppf(0.8)
    assert np_power(need) == pytest.approx(0.8)
    s = seeds_needed(1.0, 3)
    assert np_power(np.sqrt(s / 3)) >= 0.8 > np_power(np.sqrt((s - 1) / 3))


def test_two_power_targets_are_beyond_any_test_at_their_design_and_two_are_within_it():
    """The finding behind issue 36's unmet targets: over d = 2^6..2^16 with 3 seeds a missing 1/log d lies within 0.8
    noise units of a true sqrt(d) (1 + 51 d^-0.45)^1/2, and the true 1 + 5 d^-0.3 within 1.4 of a false
    sqrt(d)/log d exp(-0.93 d^-0.3): no test reaches 80% on either (bounds 20% and 40%); d up to 2^19 (or 31 and 10
    seeds) would. d^0.62 and an extra log d are within the design's reach (bounds 99.9% and 89%)."""
    lim = {t.scenario: power_limit(t) for t in POWER_TARGETS}
    assert lim["power_062"].bound > 0.99 and lim["power_062"].top_for_80 == 16
    assert 0.8 <= lim["extra_log_wide"].bound < 0.95 and lim["extra_log_wide"].top_for_80 == 16
    assert 0.1 < lim["missing_log_wide"].bound < 0.3 and lim["missing_log_wide"].top_for_80 == 19
    assert 0.3 < lim["correction_03"].bound < 0.5 and lim["correction_03"].top_for_80 == 19
    assert 25 <= lim["missing_log_wide"].seeds_for_80 <= 40 and 8 <= lim["correction_03"].seeds_for_80 <= 12
    assert lim["correction_03"].nearest.endswith("(false)") and "log(d)" in lim["correction_03"].nearest


