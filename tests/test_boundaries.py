"""Exact group-sequential boundaries against published values and scipy's multivariate normal."""
from __future__ import annotations

import pytest
from scipy import stats

import ibcheck
from ibcheck.simulate.stats.boundaries import boundaries, crossing_probability, nominal_levels, spending


def test_obrien_fleming_type_matches_gsdesign_sfLDOF():
    # gsDesign::gsDesign(k = 5, test.type = 1, alpha = 0.025, sfu = sfLDOF)$upper$bound
    assert boundaries([i / 5 for i in range(1, 6)], "obrien-fleming", 0.025) == pytest.approx(
        [4.8769, 3.3570, 2.6803, 2.2898, 2.0310], abs=2e-4)


def test_pocock_type_matches_the_published_table():
    # Lan-DeMets Pocock-type spending, one-sided 0.025, 5 equally spaced looks (DeMets & Lan 1994)
    assert boundaries([i / 5 for i in range(1, 6)], "pocock", 0.025) == pytest.approx([2.438, 2.427, 2.410, 2.397, 2.386], abs=1e-3)


def test_unequal_looks_match_seqbounds():
    # SeqBounds.jl README: bounds([0.25, 0.5, 0.75, 1.0], 0.05), one-sided O'Brien-Fleming type
    assert boundaries([0.25, 0.5, 0.75, 1.0], "obrien-fleming", 0.05) == pytest.approx([3.74955, 2.53993, 2.01604, 1.72014], abs=5e-4)


@pytest.mark.parametrize("fractions", [[0.3, 1.0], [0.1, 0.13, 0.5, 1.0], [0.2, 0.4, 0.6, 0.8, 1.0]])
@pytest.mark.parametrize("rule", ["pocock", "obrien-fleming"])
def test_the_recursion_spends_exactly_alpha_by_the_multivariate_normal(fractions, rule):
    b = boundaries(fractions, rule, 0.05)
    for k in range(1, len(fractions) + 1):  # every look's cumulative crossing probability is the spending function
        assert crossing_probability(b[:k], fractions[:k]) == pytest.approx(spending(rule, fractions[k - 1]), abs=2e-5)


def test_repeated_unadjusted_testing_inflates_as_gsdesign_says():
    # gsDesign's unit test (Anderson 2008): testing 2, 4, 10 times at 0.025 gives 0.042, 0.063, 0.097
    for k, rate in ((2, 0.042), (4, 0.063), (10, 0.097)):
        assert round(crossing_probability([stats.norm.isf(0.025)] * k, [i / k for i in range(1, k + 1)]), 3) == rate


def test_four_pocock_looks_test_the_last_near_two_percent_not_bonferroni():
    ts = [0.25, 0.5, 0.75, 1.0]
    last = nominal_levels(ts, "pocock")[-1]
    assert last == pytest.approx(0.0209, abs=5e-4)
    assert spending("pocock", 1.0) - spending("pocock", 0.75) == pytest.approx(0.0086, abs=1e-4)


def test_bad_fractions_are_refused():
    with pytest.raises(ibcheck.InputError):
        boundaries([0.5, 0.4])
    with pytest.raises(ibcheck.InputError):
        boundaries([0.5, 1.2])
