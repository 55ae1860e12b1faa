"""``ibcheck new-claim``: a commented template of a user's claim and experiment that runs as written."""
from __future__ import annotations

import re

from ibcheck.theory.errors import InputError
from ibcheck.theory.outdir import check_claim_id, slug

TEMPLATE = '''"""Your own claim for ibcheck. Edit the formulas and the measure, then:

    ibcheck --claims {file} bounds {id} --at d=1000,k=10
    ibcheck --claims {file} window {id} --free d --at k=10
    ibcheck --claims {file} compare {id} --out compare-{slug}
"""
import math
import random

import ibcheck

claim = ibcheck.Claim(
    id="{id}",
    title="A radius that scales like sqrt(d/k)",
    paper="your paper",
    status="order",                            # "exact" when the constants are known
    variables=["d", "k"],                      # d, k, n, eps, delta, ... are ibcheck's; other names are positive reals
    constants=["C"],                           # unnamed constants: 1 unless set (compare/verdict: --constants C=0.5; window/bounds: --at C=0.5)
    hypotheses={{"H1": r"k \\leq \\sqrt{{d}}"}},     # sympy syntax (k <= sqrt(d)) or LaTeX, as in the paper
    bounds=[ibcheck.Bound("radius", latex=r"\\Theta(C \\sqrt{{d/k}})")],   # or ibcheck.Bound("radius", "Theta", "C*sqrt(d/k)")
)


@ibcheck.experiment("{id}", grid={{"d": [64, 128, 256, 512], "k": [2, 4, 8]}}, seeds=3)
def measure(cell, seed):
    """One measurement per cell and seed: return every quantity of the claim's bounds (finite numbers).
    Replace the synthetic value below with yours (ibcheck.train, ibcheck.radii, or your own code)."""
    rnd = random.Random(f"{{cell['d']}}-{{cell['k']}}-{{seed}}")
    return {{"radius": math.sqrt(cell["d"] / cell["k"]) * math.exp(rnd.gauss(0, 0.05))}}
'''


def claim_template(claim_id: str, file: str) -> str:
    """The template for ``claim_id``, mentioning ``file`` in its usage lines."""
    if not isinstance(claim_id, str) or not re.fullmatch(r"[A-Za-z][\w-]*(\.[\w-]+)*", claim_id or ""):
        raise InputError(f"claim id {claim_id!r} is not of the form ABC25.thm.1 (letters, digits, _ and -, separated by dots)")
    check_claim_id(claim_id)  # the rule Claim applies (at most 100 characters): a template Claim would refuse is never written
    return TEMPLATE.format(id=claim_id, file=file, slug=slug(claim_id))
