"""The exponents of every registered bound, against a hand-written table."""
import pytest

from ibcheck.theory import all_claims
from ibcheck.theory.describe import bound_exponents

# (claim, quantity, reading) -> nonzero power exponents, nonzero log powers, nonzero loglog powers
TABLE = {
    ("LL20.def.smoothed_margin", "smoothed_margin", None): [({"normalized_margin": "1"}, {"n": "1"}, {}), ({"normalized_margin": "1"}, {}, {})],
    ("LL20.thm.rates", "train_loss", None): ({"T": "-1"}, {"T": "-2 + 2/L"}, {}),
    ("LL20.thm.rates", "param_norm", None): ({}, {"T": "1/L"}, {}),
    ("SHNGS18.thm.direction", "direction_error", "almost_every_dataset"): ({}, {"t": "-1"}, {}),
    ("SHNGS18.thm.direction", "direction_error", "every_dataset"): ({}, {"t": "-1"}, {"t": "1"}),
    ("SHNGS18.thm.direction", "residual_norm", None): ({}, {}, {"t": "1"}),
    ("SHNGS18.thm.direction", "train_loss", None): ({"t": "-1"}, {}, {}),
    ("SHNGS18.thm.direction", "param_norm", None): ({}, {"t": "1"}, {}),
    ("SOK17.lemma.lipschitz_radius", "robust_radius", None): ({"q": "1", "beta": "-1"}, {}, {}),
    ("FVBS23.thm.3_1", "test_error", None): ({"eps": "1"}, {}, {}),
    ("FVBS23.thm.4_1", "robust_radius", None): ({"d": "1/2"}, {}, {}),
    ("FVBS23.thm.4_2", "universal_flip_norm", None): ({"d": "1/2", "k": "-1/2", "c": "-1"}, {}, {}),
    ("FVBS23.cor.nonrobust_gf", "universal_flip_norm", None): ({"d": "1/2", "k": "-1/2", "c": "-1"}, {}, {}),
    ("FVBS23.cor.nonrobust_gf", "robust_radius", None): ({"d": "1/2"}, {}, {}),
    ("FVBS23.cor.nonrobust_gf", "test_error", None): ({"eps": "1"}, {}, {}),
    ("LPLL25.thm.nonrobust", "flip_radius_median", None): ({"d": "1/2", "k": "-1/2"}, {}, {}),
    ("LPLL25.prop.robust_exists", "robust_radius", None): ({"d": "1/2"}, {}, {}),
    ("LPLL25.thm.5_5", "robust_radius", None): ({"d": "1/2"}, {}, {}),
    ("LPLL25.thm.feature_averaging", "cosine_same_class", None): ({"ks": "-1/2"}, {}, {}),
    ("LPLL25.exp.cosine_matrix", "cosine_same_class", None): ({"ks": "-1/2"}, {}, {}),  # ks (|J_s|) is declared there too
    ("LPLL25.exp.robust_accuracy", "collapse_radius_2class", None): ({"d": "1/2", "k": "-1/2"}, {}, {}),
    ("LPLL25.exp.robust_accuracy", "collapse_radius_kclass", None): ({"d": "1/2"}, {}, {}),
    ("VYS22.thm.robust_exists", "robust_radius", None): ({"d": "1/2"}, {}, {}),
    ("VYS22.thm.main", "universal_flip_eta", "eta_bound"): ({"d": "1/2", "n": "-1/2", "c": "-1"}, {}, {}),
    ("VYS22.thm.main", "universal_flip_norm", "eta_bound"): ({"d": "1", "c": "-1"}, {}, {}),
    ("VYS22.thm.main", "universal_flip_norm", "norm_bound"): ({"d": "1/2", "n": "-1/2", "c": "-1"}, {}, {}),
    ("VYS22.cor.random_sphere", "max_ip", None): ({"d": "1/2"}, {"d": "1"}, {}),
    ("VYS22.cor.random_sphere", "universal_flip_norm", None): ({"d": "1/2"}, {}, {}),
    ("VYS22.exp", "universal_flip_eta_max", None): ({"d": "1/2", "n": "-1/2"}, {}, {}),
    ("BCGT21.thm.one_step", "flip_norm", None): ({}, {"gamma": "1/2"}, {}),
    ("BCGT21.exp", "flip_norm", None): ({}, {}, {}),
    ("SSTTM18.cor.robust_upper", "robust_sample_threshold", None): ({"d": "1/2", "eps": "2"}, {}, {}),
    ("SSTTM18.cor.robust_lower", "robust_sample_threshold", None): ({"d": "1/2", "eps": "2"}, {"d": "-1"}, {}),
    ("SSTTM18.cor.robust_lower", "robust_error", None): ({}, {}, {}),
    ("SSTTM18.bernoulli", "robust_sample_threshold", "linear"): ({"eps": "2", "gamma": "2", "tau": "-4"}, {"d": "-1"}, {}),
    ("LL20.def.eps_delta_kkt", "kkt_stationarity_residual", None): ({"eps": "1"}, {}, {}),
    ("LL20.def.eps_delta_kkt", "complementary_slackness", None): ({"delta": "1"}, {}, {}),
    ("MV24.conj", "num_effective_neurons", "p_ge_3"): ({"k": "1"}, {}, {}),
}


def _nonzero(m):
    return {v: x for v, x in m.items() if x != "0"}


def _rows():
    for c in all_claims():
        for b in c.bounds:
            yield c, b


def test_every_bound_has_exponents():
    for c, b in _rows():
        ex = bound_exponents(c, b)
        assert ex["exponents"] is not None, (c.id, b.quantity, ex.get("exponent_error"))
        assert set(ex["exponents"]) == set(c.variable_names), (c.id, b.quantity)


@pytest.mark.parametrize("key", sorted(TABLE, key=str))
def test_exponents_match_the_table(key):
    cid, q, reading = key
    rows = [(c, b) for c, b in _rows() if c.id == cid and b.quantity == q and b.reading == reading]
    assert rows, key
    expected = TABLE[key] if isinstance(TABLE[key], list) else [TABLE[key]] * len(rows)
    for (c, b), (pw, lg, llg) in zip(rows, expected):
        ex = bound_exponents(c, b)
        assert _nonzero(ex["exponents"]) == pw, (key, ex)
        assert _nonzero(ex["log_exponents"]) == lg, (key, ex)
        assert _nonzero(ex["loglog_exponents"]) == llg, (key, ex)


def test_remaining_bounds_are_constants_or_limits():
    """Bounds not in the table have no nonzero exponent (constants, 1 - eps, limits ->)."""
    for c, b in _rows():
        if (c.id, b.quantity, b.reading) in TABLE:
            continue
        ex = bound_exponents(c, b)
        assert not _nonzero(ex["exponents"]) and not _nonzero(ex["log_exponents"]), (c.id, b.quantity, ex)
