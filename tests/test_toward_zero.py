"""Variables that tend to 0 (eps, delta): the exponent tests run in the theorem's direction.

As eps -> 0, eps^a = O(eps^b) iff a >= b. A quantity that decays like eps breaks O(eps^2); the
plain "exponent <= 2" test would call it consistent.
"""
import math

import numpy as np
import pytest

from ibcheck.simulate.experiments.design import bound_specs
from ibcheck.simulate.experiments.terms import Term, parse_term, term_spec
from ibcheck.simulate.stats.drift import drift_test
from ibcheck.simulate.verdict.analysis import analyze
from ibcheck.simulate.verdict.rounds import next_value
from ibcheck.simulate.verdict.rules import term_kind
from ibcheck.theory import InputError
from ibcheck.theory.registry import current

EPS = [2.0 ** -i for i in range(1, 9)]


def _rows(f, xs=EPS, seeds=4, noise=0.03, seed=0):
    rng = np.random.default_rng(seed)
    return [{"eps": x, "seed": s, "value": f(x) * math.exp(noise * rng.standard_normal())} for x in xs for s in range(seeds)]


def test_term_kind_mirrors_only_the_power_of_a_vanishing_variable():
    assert term_kind("O", Term("eps", 0, True)) == "Omega"
    assert term_kind("Omega", Term("eps", 0, True)) == "O"
    assert term_kind("<=", Term("eps", 0, True)) == ">="
    assert term_kind("Theta", Term("eps", 0, True)) == "Theta"
    assert term_kind("O", Term("eps", 1, True)) == "O"  # log(1/eps) grows: its direction is the bound's
    assert term_kind("O", Term("d", 0)) == "O"


def test_an_upper_bound_in_eps_is_tested_as_eps_goes_to_zero():
    slow = analyze(_rows(lambda e: e), ["eps"], "O", {"eps": 2.0}, toward_zero=frozenset({"eps"}))
    assert slow.judgements["eps"].verdict == "inconsistent"  # eps >> eps^2 as eps -> 0
    assert slow.judgements["eps"].plain.kind == "Omega"
    assert any("eps tends to 0" in n for n in slow.notes)
    attained = analyze(_rows(lambda e: 3 * e ** 2), ["eps"], "O", {"eps": 2.0}, toward_zero=frozenset({"eps"}))
    assert attained.verdict == "consistent"
    # without the direction the same data would pass an upper bound they break
    assert analyze(_rows(lambda e: e), ["eps"], "O", {"eps": 2.0}).judgements["eps"].plain.verdict == "consistent"


def test_a_lower_bound_in_eps_is_mirrored_too():
    fast = analyze(_rows(lambda e: e ** 3), ["eps"], "Omega", {"eps": 2.0}, toward_zero=frozenset({"eps"}))
    assert fast.verdict == "inconsistent"  # eps^3 << eps^2 as eps -> 0


def test_log_factor_of_a_vanishing_variable_is_log_one_over_eps():
    t = parse_term("log(1/eps)")
    assert t == Term("eps", 1, True) and t.name == "log(1/eps)"
    assert t.regressor(math.log(1e-3)) == pytest.approx(math.log(math.log(1e3)))
    assert math.isnan(Term("eps", 1).regressor(math.log(1e-3)))  # log(eps) < 0 has no log
    spec = term_spec(["eps"], {"eps": 1}, {"eps": 1}, toward_zero=frozenset({"eps"}))
    assert [t.name for t in spec.terms] == ["eps", "log(1/eps)"]
    an = analyze(_rows(lambda e: e * math.log(1 / e)), ["eps"], "O", {"eps": 1.0, "log(1/eps)": 1.0},
                 toward_zero=frozenset({"eps"}))
    assert an.fit.estimate["log(1/eps)"] == pytest.approx(1.0, abs=0.3)
    with pytest.raises(InputError, match="log\\(1/eps\\)"):
        analyze(_rows(lambda e: e), ["eps"], "O", {"eps": 1.0, "log(eps)": 1.0}, toward_zero=frozenset({"eps"}))


def test_drift_and_grid_extension_head_for_the_limit():
    # the local exponent rises with eps (slope > 0); the prediction lies above the estimate:
    # as eps decreases the exponent falls, away from the prediction
    assert drift_test({"coef": 0.2, "se": 0.01, "p_value": 1e-6}, "eps", 1.5, 2.0, [], toward_zero=True).direction == "away"
    assert drift_test({"coef": 0.2, "se": 0.01, "p_value": 1e-6}, "d", 1.5, 2.0, []).direction == "toward"
    assert next_value([0.25, 0.5, 1.0], toward_zero=True) == pytest.approx(0.125)
    assert next_value([64, 128, 256]) == 512


def test_ssttm18_lower_bound_sweeps_eps_with_its_stated_exponent():
    from ibcheck.simulate.experiments.builtin import BUILTIN

    exp = BUILTIN["SSTTM18.cor.robust_lower"]
    assert len(exp.quick_grid["eps"]) >= 3 and "eps" not in exp.fixed
    (spec,) = bound_specs(current().claims["SSTTM18.cor.robust_lower"], ["d", "eps"], ("robust_sample_threshold",))
    assert spec.toward_zero == {"eps"} and spec.predicted() == {"d": 0.5, "log(d)": -1.0, "eps": 2.0}
