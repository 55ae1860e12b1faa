"""Look claims up by id, with near-miss suggestions for typos."""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import ClassVar

from .claim import Claim
from .claims import ALL
from .errors import InputError
from .result import Result

_BY_ID: dict[str, Claim] = {}
for _c in ALL:
    if _c.id in _BY_ID:
        raise RuntimeError(f"duplicate claim id {_c.id}")
    _BY_ID[_c.id] = _c


def all_claims() -> list[Claim]:
    """Every registered claim, in THEORY.md order."""
    return list(ALL)


@dataclass(frozen=True)
class ClaimList(Result):
    """Claims, one row each: id, status, kind, title and the unverified flag."""

    name: ClassVar[str] = "claims"
    claims: tuple[Claim, ...]

    def as_json(self) -> list[dict]:  # type: ignore[override]
        return [{"claim": c.id, "title": c.title, "status": c.status, "kind": c.kind, "flags": c.flags,
                 "unverified": c.unverified, "source": c.source} for c in self.claims]

    def table(self) -> list[dict]:
        return [{"claim": c.id, "status": c.status, "kind": c.kind, "title": c.title + ("  [UNVERIFIED]" if c.unverified else "")}
                for c in self.claims]

    def heading(self) -> str:
        return f"{len(self.claims)} claims"

    def __len__(self) -> int:
        return len(self.claims)

    def __iter__(self):
        return iter(self.claims)


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
