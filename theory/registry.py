"""Look claims up by id, with near-miss suggestions for typos."""
from __future__ import annotations

import contextlib
import difflib
import os
import runpy
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import ClassVar

from . import statement
from .claim import Claim
from .claims import ALL
from .errors import InputError
from .result import Result


class Registry:
    """Claims, and the experiments bound to them, by id.

    One default instance serves the command line and the API (:func:`current`); a test or a
    notebook builds its own (``Registry()`` starts with THEORY.md's claims, ``copy()`` with
    everything registered so far) and makes it current for a block: ``with using(Registry()):``.
    Experiments are kept opaque here (the simulate layer defines them; theory never imports it)."""

    def __init__(self, claims=ALL):
        self.claims: dict[str, Claim] = {}
        self.sources: dict[str, str] = {}
        self.experiments: dict[str, object] = {}
        for c in claims:
            if c.id in self.claims:
                raise RuntimeError(f"duplicate claim id {c.id}")
            self.claims[c.id], self.sources[c.id] = c, "built-in"

    def copy(self) -> Registry:
        other = Registry(())
        other.claims, other.sources, other.experiments = dict(self.claims), dict(self.sources), dict(self.experiments)
        return other

    def all_claims(self) -> list[Claim]:
        return list(self.claims.values())

    def register(self, claims, source: str = "the API") -> list[Claim]:
        if isinstance(claims, (str, bytes)) or not (isinstance(claims, Claim) or hasattr(claims, "__iter__")):
            raise InputError(f"{source}: register takes an ibcheck.Claim or a list of them, not {type(claims).__name__}")
        claims = [claims] if isinstance(claims, Claim) else list(claims)
        batch: dict[str, Claim] = {}
        for c in claims:
            if not isinstance(c, Claim):
                raise InputError(f"{source}: {c!r} is not an ibcheck.Claim")
            if c.id in self.claims and not self.claims[c.id] == c:
                raise InputError(f"{source}: claim id {c.id!r} clashes with a claim from {self.sources[c.id]}")
            twin = next((i for i in (*self.claims, *batch) if i != c.id and i.lower() == c.id.lower()), None)
            if twin is not None:  # one folder on a case-insensitive file system (the id names the report's folder)
                raise InputError(f"{source}: claim id {c.id!r} differs from {twin!r} only in case; give it another id "
                                 "(report folders are named by id, and some file systems do not tell case apart)")
            if c.id in batch and not batch[c.id] == c:  # two different claims under one id: neither may win silently
                raise InputError(f"{source}: claim id {c.id!r} is defined twice, with different contents")
            batch[c.id] = c
        known = set(self.claims) | set(batch)
        for c in claims:
            for field in ("uses", "generalizes", "compared_with", "resolves"):
                unknown = [i for i in getattr(c, field) if i not in known]
                if unknown:
                    raise InputError(f"{source}: claim {c.id}: {field}={list(getattr(c, field))!r} names unknown claim(s) "
                                     f"{', '.join(unknown)} (register them first, or in the same file)")
        for c in claims:
            if c.id not in self.claims:
                self.claims[c.id], self.sources[c.id] = c, source
        return claims

    def suggest(self, claim_id: str, n: int = 3) -> list[str]:
        lower = {i.lower(): i for i in self.claims}
        hits = difflib.get_close_matches(claim_id.lower(), list(lower), n=n, cutoff=0.3)
        if not hits:
            prefix = claim_id.split(".")[0].lower()
            hits = [i for i in lower if i.startswith(prefix)][:n]
        return [lower[h] for h in hits]

    def get_claim(self, claim_id: str) -> Claim:
        if not isinstance(claim_id, str):
            raise InputError(f"claim id {claim_id!r} is not a string such as 'FVBS23.thm.4_2' (see `ibcheck claims`)")
        if claim_id in self.claims:
            return self.claims[claim_id]
        near = self.suggest(claim_id)
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        raise InputError(f"unknown claim id {claim_id!r}{hint} (see `ibcheck claims`)", value=claim_id)


_STACK: list[Registry] = [Registry()]


def current() -> Registry:
    """The registry every lookup uses now: the default one, unless a block made another current."""
    return _STACK[-1]


@contextlib.contextmanager
def using(registry: Registry):
    """Make ``registry`` current for a block (a test's own claims and experiments, gone after it)."""
    _STACK.append(registry)
    try:
        yield registry
    finally:
        _STACK.remove(registry)


def all_claims() -> list[Claim]:
    """Every registered claim: THEORY.md's in order, then the user's in the order they were loaded."""
    return current().all_claims()


def register(claims, source: str = "the API") -> list[Claim]:
    """Add a user's claims to the registry, so that every command and API call finds them by id.
    Re-registering the same claim (equal in every field) is a no-op; any other id clash is an error."""
    return current().register(claims, source)


statement.REGISTER = register  # a Claim built at a user module's top level registers itself (theory.statement)


def claim_files() -> list[str]:
    """The claims files named in IBCHECK_CLAIMS (``path1:path2``), in order; the one place that reads it."""
    return [p for p in os.environ.get("IBCHECK_CLAIMS", "").split(os.pathsep) if p]


def load_claims(path: str) -> list[Claim]:
    """Run a Python file of claims (and experiments) and register every ibcheck.Claim it defines at
    module level (alone or in a list or tuple). A file that fails to run is a one-line error naming it."""
    if not isinstance(path, (str, os.PathLike)):
        raise InputError(f"load_claims: path is a {type(path).__name__}: give the path of a Python file of claims, as a string")
    path = os.fspath(path)
    if os.path.isdir(path):
        raise InputError(f"claims file {path!r} is a directory: give the Python file of your claims")
    if not os.path.isfile(path):
        raise InputError(f"claims file {path!r} does not exist")

    outer, statement._BUILT = statement._BUILT, []
    try:
        ns = runpy.run_path(path, run_name="ibcheck_user_claims")
        built = statement._BUILT
    except InputError as err:
        raise InputError(f"{path}: {err}") from None
    except Exception as err:  # the user's file: any error, as one line naming it
        raise InputError(f"{path}: {type(err).__name__}: {err}") from None
    finally:
        statement._BUILT = outer
    found: list[Claim] = [c for c in built if not any(c is o for o in built[:built.index(c)])]
    for value in ns.values():
        for c in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(c, Claim) and c not in found:
                found.append(c)
    return register(found, path)


def load_entry_points(group: str = "ibcheck.claims") -> list[Claim]:
    """Claims that installed packages register under the entry-point group ``ibcheck.claims``
    (each entry point: a list of claims, or a function returning one)."""
    out: list[Claim] = []
    for ep in entry_points(group=group):
        try:
            obj = ep.load()
            out += register(obj() if callable(obj) else obj, f"entry point {ep.name} ({ep.value})")
        except InputError:
            raise
        except Exception as err:
            raise InputError(f"entry point {ep.name} ({ep.value}): {type(err).__name__}: {err}") from None
    return out


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
    return current().suggest(claim_id, n)


def get_claim(claim_id: str) -> Claim:
    """The claim with this id, or an :class:`InputError` that suggests the nearest ids."""
    return current().get_claim(claim_id)
