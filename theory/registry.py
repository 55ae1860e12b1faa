"""Look claims up by id, with near-miss suggestions for typos."""
from __future__ import annotations

import difflib

from .claim import Claim
from .claims import ALL
from .errors import InputError

_BY_ID: dict[str, Claim] = {}
for _c in ALL:
    if _c.id in _BY_ID:
        raise RuntimeError(f"duplicate claim id {_c.id}")
    _BY_ID[_c.id] = _c


def all_claims() -> list[Claim]:
    """Every registered claim, in THEORY.md order."""
    return list(ALL)


def claim_ids() -> list[str]:
    return [c.id for c in ALL]


def suggest(claim_id: str, n: int = 3) -> list[str]:
    """The registered ids nearest to ``claim_id`` (case-insensitive)."""
    lower = {i.lower(): i for i in _BY_ID}
    hits = difflib.get_close_matches(claim_id.lower(), list(lower), n=n, cutoff=0.3)
    if not hits:
        prefix = claim_id.split(".")[0].lower()
        hits = [i for i in lower if i.startswith(prefix)][:n]
    return [lower[h] for h in hits]


def get_claim(claim_id: str) -> Claim:
    """The claim with this id, or an :class:`InputError` that suggests the nearest ids."""
    if claim_id in _BY_ID:
        return _BY_ID[claim_id]
    near = suggest(claim_id)
    hint = f"; did you mean {', '.join(near)}?" if near else ""
    raise InputError(f"unknown claim id {claim_id!r}{hint} (see `ibcheck claims`)")
