"""Repeated looks without an inflated error rate: alpha spending over the looks of a sweep.

A sweep that grows until it decides looks at its data several times. Testing every look at
level 0.05 would call a true claim ``inconsistent`` far more often than 5% of the time. The
Lan-DeMets spending functions fix the total:

* O'Brien-Fleming type: ``alpha*(t) = 2 (1 - Phi(z_{1 - alpha/2} / sqrt(t)))`` (strict early,
  close to alpha at the end; the default);
* Pocock type: ``alpha*(t) = alpha ln(1 + (e - 1) t)`` (even over the looks).

``t`` in (0, 1] is the information fraction; here it is the fraction of the time budget used
so far, which does not depend on the data. Look r is tested at level
``alpha*(t_r) - (alpha spent by the earlier looks)``; by the union bound the probability of any
false decision over all looks is at most alpha, whatever the correlation between the looks
(conservative: the exact group-sequential boundary would be a little wider).

Looks are stored in the sweep's SQLite file, so a rerun with a larger budget continues the
same ledger; a rerun that adds no data repeats the last look (same data, same level) instead
of spending again.
"""
from __future__ import annotations

import hashlib
import math
import sqlite3
import time
from dataclasses import dataclass

from scipy import stats

from ibcheck.theory.errors import InputError

RULES = ("obrien-fleming", "pocock")

SCHEMA = """
CREATE TABLE IF NOT EXISTS looks (
    design TEXT NOT NULL,
    look INTEGER NOT NULL,
    data_hash TEXT NOT NULL,
    fraction REAL NOT NULL,
    alpha REAL NOT NULL,
    spent REAL NOT NULL,
    rule TEXT NOT NULL,
    seconds REAL NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (design, look)
)
"""


def spending(rule: str, t: float, alpha: float = 0.05) -> float:
    """Cumulative alpha spent by information fraction ``t`` (Lan-DeMets); 0 at t = 0, alpha at t = 1."""
    if rule not in RULES:
        raise InputError(f"--spending {rule!r} is not one of {', '.join(RULES)}")
    t = min(max(float(t), 0.0), 1.0)
    if t == 0:
        return 0.0
    if rule == "pocock":
        return alpha * math.log(1 + (math.e - 1) * t)
    z = stats.norm.ppf(1 - alpha / 2)
    return float(2 * stats.norm.sf(z / math.sqrt(t)))


@dataclass
class Look:
    look: int
    fraction: float
    alpha: float  # the level this look is tested at
    spent: float  # cumulative alpha after this look
    rule: str
    repeated: bool = False  # the same data as the previous look: no new alpha spent

    def as_json(self) -> dict:
        return dict(self.__dict__)


def data_hash(keys) -> str:
    return hashlib.sha256("\n".join(sorted(keys)).encode()).hexdigest()[:16]


def previous_seconds(con: sqlite3.Connection, design: str) -> float:
    """Budget seconds used by earlier runs of the same design (the last look's clock)."""
    con.execute(SCHEMA)
    row = con.execute("SELECT seconds FROM looks WHERE design=? ORDER BY look DESC LIMIT 1", (design,)).fetchone()
    return float(row[0]) if row else 0.0


def preview_look(con: sqlite3.Connection, design: str, keys, fraction: float, rule: str, alpha: float = 0.05) -> Look:
    """The level a look at the data ``keys`` at information fraction ``fraction`` would get (nothing recorded)."""
    con.execute(SCHEMA)
    last = con.execute("SELECT look, data_hash, alpha, spent, fraction FROM looks WHERE design=? ORDER BY look DESC LIMIT 1",
                       (design,)).fetchone()
    if last and last[1] == data_hash(keys):
        return Look(last[0], last[4], last[2], last[3], rule, repeated=True)
    spent_before = last[3] if last else 0.0
    level = max(spending(rule, fraction, alpha) - spent_before, 0.0)
    return Look(last[0] + 1 if last else 1, min(max(fraction, 0.0), 1.0), level, spent_before + level, rule)


def take_look(con: sqlite3.Connection, design: str, keys, fraction: float, seconds: float, rule: str, alpha: float = 0.05) -> Look:
    """Record a look at the data ``keys`` at information fraction ``fraction`` and return its level.

    ``seconds`` is the budget clock (cumulative over runs of the same design)."""
    look = preview_look(con, design, keys, fraction, rule, alpha)
    if not look.repeated:
        with con:
            con.execute("INSERT INTO looks VALUES (?,?,?,?,?,?,?,?,?)",
                        (design, look.look, data_hash(keys), look.fraction, look.alpha, look.spent, rule, seconds, time.time()))
    return look
