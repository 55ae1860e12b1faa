import os
import re

import pytest
import sympy as sp

from ibcheck.theory import InputError, all_claims, get_claim, suggest
from ibcheck.theory.claim import BOUND_KINDS, KINDS, STATUSES

THEORY = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "THEORY.md")

# Every id of THEORY.md (LPLL25.exp.* is expanded into three experiments).
EXPECTED = """
LL20.def.normalized_margin LL20.def.smoothed_margin LL20.thm.monotone LL20.thm.rates LL20.thm.kkt LL20.def.P
LL20.def.kkt LL20.def.eps_delta_kkt LL20.exp.margin_growth SHNGS18.thm.direction R04.thm.reg_path
SOK17.lemma.lipschitz_radius FVBS23.def.D_clusters FVBS23.asm.2_2 FVBS23.lemma.2_1 FVBS23.thm.3_1 FVBS23.thm.4_1
FVBS23.thm.4_2 FVBS23.cor.nonrobust_gf FVBS23.rem.generalizes_VYS22 LPLL25.def.data LPLL25.def.net
LPLL25.lemma.decomposition LPLL25.thm.feature_averaging LPLL25.thm.nonrobust LPLL25.prop.robust_exists LPLL25.thm.5_5
LPLL25.exp.cosine_matrix LPLL25.exp.robust_accuracy LPLL25.exp.real_images MV24.conj VYS22.def.setting
VYS22.thm.robust_exists VYS22.thm.main VYS22.cor.random_sphere VYS22.exp BCGT21.def.net BCGT21.thm.one_step
BCGT21.facts BCGT21.exp SSTTM18.def.gaussian SSTTM18.thm.one_sample SSTTM18.cor.robust_upper SSTTM18.cor.robust_lower
SSTTM18.bernoulli
""".split()


def test_every_expected_id_is_registered_once():
    ids = [c.id for c in all_claims()]
    assert len(ids) == len(set(ids))
    assert sorted(ids) == sorted(EXPECTED)


@pytest.mark.skipif(not os.path.exists(THEORY), reason="shared/THEORY.md not beside the checkout")
def test_every_id_in_theory_md_is_registered():
    text = open(THEORY).read()
    found = set(re.findall(r"`([A-Z][A-Za-z0-9]+\d\d\.[a-z_]+(?:\.[A-Za-z0-9_]+)?)`", text))
    found = {f for f in found if not f.endswith(".*")}
    missing = found - {c.id for c in all_claims()}
    assert not missing, missing


def test_claim_fields_are_valid():
    for c in all_claims():
        assert c.status in STATUSES and c.kind in KINDS
        assert c.paper and c.title
        for b in c.bounds:
            assert b.kind in BOUND_KINDS
            assert isinstance(b.expr, sp.Basic)
        names = [h.name for h in c.hypotheses]
        assert names == [f"H{i + 1}" for i in range(len(names))], (c.id, names)


def test_fvbs23_thm_4_2_hypotheses_are_the_slide_ones():
    c = get_claim("FVBS23.thm.4_2")
    d, k, n, eps, delta = sp.symbols("d k n eps delta", positive=True)
    H = {h.name: h.expr for h in c.hypotheses}
    assert H["H1"] == sp.GreaterThan(n, k * sp.log(d) ** 2)
    assert sp.simplify(H["H3"].rhs - sp.sqrt(delta / 3) * sp.exp(d / 32)) == 0
    assert sp.simplify(H["H5"].rhs - eps / 4 * d ** (sp.log(d) / 2)) == 0
    assert sp.simplify(H["H2"].rhs - d ** (sp.log(d) - 1) / 3) == 0


def test_ambiguous_claim_carries_both_readings():
    c = get_claim("VYS22.thm.main")
    assert c.status == "ambiguous"
    readings = {b.reading for b in c.bounds if b.quantity == "universal_flip_norm"}
    assert readings == {"eta_bound", "norm_bound"}
    assert any("ambiguous" in f for f in c.flags)


def test_unverified_flag_is_carried():
    assert get_claim("FVBS23.asm.2_2").unverified
    assert "unverified" in get_claim("FVBS23.asm.2_2").flags
    assert not get_claim("FVBS23.thm.4_2").unverified


def test_unknown_id_suggests_nearest():
    with pytest.raises(InputError) as e:
        get_claim("FVBS23.thm.4_3")
    assert "FVBS23.thm.4_2" in str(e.value)
    assert "LPLL25.thm.nonrobust" in suggest("LPLL25.thm.nonrobst")


def test_a_test_builds_its_own_registry():
    import ibcheck
    from ibcheck.simulate.experiments.registry import EXPERIMENTS

    mine = ibcheck.Registry()
    with ibcheck.using_registry(mine):
        ibcheck.register(ibcheck.Claim("own.claim", variables=["d"], bounds=[ibcheck.Bound("y", "O", "d")]))

        @ibcheck.experiment("own.claim", grid={"d": [2, 4, 8]})
        def measure(cell, seed):
            return {"y": float(cell["d"])}

        assert ibcheck.claim("own.claim").id == "own.claim" and "own.claim" in EXPERIMENTS
        assert "FVBS23.thm.4_2" in EXPERIMENTS  # the built-ins are in every registry
    assert "own.claim" in mine.claims and "own.claim" in mine.experiments
    with pytest.raises(ibcheck.InputError, match="unknown claim id"):
        ibcheck.claim("own.claim")
    assert "own.claim" not in EXPERIMENTS
