"""Budgets count deterministic work: the same command gives the same rounds and verdict under any
load. One comparison at a time per store: a concurrent run is refused, never mixed into the ledger."""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import sqlite3
import subprocess
import sys
import time

from ibcheck.simulate.sweep.store import SweepStore


def _burn(seconds: float) -> None:
    end = time.time() + seconds
    x = 0
    while time.time() < end:
        x += 1


def _signature(s: dict) -> list:
    return [(r["added"], round(r["work"], 9), r["tasks_total"], round(r["alpha"], 12), r["look"]["fraction"], sorted(r["verdicts"].items()))
            for r in s["rounds"]] + [s["verdict"]]


NOISY = """
import math, os, random, time
import ibcheck

ibcheck.Claim("rep.noisy", "a quantity growing like sqrt(d), measured with noise", variables=[ibcheck.Variable("d", "int", low=2)],
              bounds=[ibcheck.Bound("y", "Theta", "sqrt(d)")])

@ibcheck.experiment("rep.noisy", grid={"d": [64, 128, 256]}, seeds=2, max_grid={"d": 4096}, cost=lambda cell: cell["d"] / 64)
def measure(cell, seed):
    end = time.process_time() + float(os.environ.get("REP_BURN", "0.02"))  # CPU per task: a wall-clock budget would feel the load
    while time.process_time() < end:
        pass
    rnd = random.Random(seed * 1000003 + cell["d"])
    return {"y": math.sqrt(cell["d"]) * math.exp(0.4 * rnd.gauss(0, 1))}
"""


def test_the_same_budgeted_command_gives_the_same_rounds_under_cpu_load(cli, tmp_path):
    claims = tmp_path / "noisy.py"
    claims.write_text(NOISY)
    argv = ["--claims", str(claims), "compare", "rep.noisy", "--budget", "60", "--plan-trials", "0", "--json"]
    quiet = json.loads(cli(*argv, "--out", str(tmp_path / "a"), check_rc=0).stdout)
    burners = [mp.get_context("spawn").Process(target=_burn, args=(120.0,)) for _ in range(3)]
    for b in burners:
        b.start()
    try:
        loaded = json.loads(cli(*argv, "--out", str(tmp_path / "b"), check_rc=0).stdout)
    finally:
        for b in burners:
            b.terminate()
            b.join()
    assert len(quiet["rounds"]) >= 2  # the budget grew the sweep: there were rounds to plan
    assert _signature(loaded) == _signature(quiet)
    assert quiet["work"]["used"] <= 60.0 + 1e-9  # never past the budget, in the units it is counted in


def test_a_second_comparison_on_the_same_store_is_refused(cli, tmp_path):
    out = tmp_path / "c"
    out.mkdir()
    with SweepStore(str(out / "sweep.sqlite")):  # another comparison holds the store
        res = cli("compare", "BCGT21.thm.one_step", "--quick", "--out", str(out))
    assert res.returncode == 2 and res.stderr.count("\n") == 1
    assert "in use by another comparison" in res.stderr
    assert not (out / "report.md").exists()
    # once it is free, the store opens again (a whole comparison after a refused one: test_concurrent_processes_...)
    with SweepStore(str(out / "sweep.sqlite")):
        pass


def test_concurrent_processes_never_mix_one_ledger(tmp_path):
    out = tmp_path / "d"
    claims = tmp_path / "noisy.py"
    claims.write_text(NOISY)
    exe = os.path.join(os.path.dirname(sys.executable), "ibcheck")
    cmd = [exe, "--claims", str(claims), "compare", "rep.noisy", "--budget", "60", "--plan-trials", "0", "--out", str(out), "--json"]
    env = {**os.environ, "REP_BURN": "0.1"}  # long enough that the two runs overlap
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    results = [(p.returncode, *p.communicate(timeout=300)) for p in procs]
    results = [(p.returncode, o, e) for p, (_, o, e) in zip(procs, results)]
    assert sorted(rc for rc, _, _ in results) == [0, 2], [(rc, e[-300:]) for rc, _, e in results]
    out1 = next(o for rc, o, _ in results if rc == 0)
    err2 = next(e for rc, _, e in results if rc == 2)
    assert "in use by another comparison" in err2
    db = out / "sweep.sqlite"
    looks = sqlite3.connect(str(db)).execute("SELECT look, fraction FROM ledger ORDER BY look").fetchall()
    assert [lk for lk, _ in looks] == list(range(1, len(looks) + 1))
    assert len(looks) == len(json.loads(out1)["rounds"])  # every look is the first run's


def _noisy_compare(cli, tmp_path, out, budget: str | None = None) -> dict:
    """``ibcheck compare rep.noisy`` (the NOISY claims file) into ``out``, with ``--budget`` where given: its JSON."""
    claims = tmp_path / "noisy.py"
    claims.write_text(NOISY)
    extra = ["--budget", budget] if budget else []
    return json.loads(cli("--claims", str(claims), "compare", "rep.noisy", "--plan-trials", "0", *extra, "--out", str(out), "--json", check_rc=0).stdout)


def test_a_rerun_without_budget_analyses_every_stored_row(cli, tmp_path):
    """The issue's case: a compare without --budget used only the initial seeds (45 of 568 stored rows)."""
    out = tmp_path / "e"
    grown = _noisy_compare(cli, tmp_path, out, "60")
    stored = sqlite3.connect(str(out / "sweep.sqlite")).execute("SELECT COUNT(*) FROM results").fetchone()[0]
    assert stored > 6 and grown["tasks"]["tasks"] == stored
    plain = _noisy_compare(cli, tmp_path, out)
    assert plain["tasks"]["tasks"] == stored and plain["tasks"]["ran"] == 0
    assert sum(c["n_seeds"] for c in plain["results"][0]["cell_table"]) == stored
    look = plain["rounds"][-1]["look"]
    assert look["repeated"] and look["alpha"] == grown["rounds"][-1]["alpha"]  # the same rows: the ledger's last level


def test_a_rerun_with_a_larger_budget_continues_the_sweep(cli, tmp_path):
    """Issue 27: a rerun with a larger --budget repeated the last look (the same rows), planned no round and ran 0 tasks."""
    out = tmp_path / "g"
    small = _noisy_compare(cli, tmp_path, out, "10")
    assert small["verdict"] == "inconclusive"  # the small budget cannot decide the noisy claim
    more = _noisy_compare(cli, tmp_path, out, "60")
    assert more["rounds"][0]["look"]["repeated"]  # it starts from the ledger's last look (no new alpha for the same rows)
    assert more["tasks"]["ran"] > 0 and len(more["rounds"]) > 1 and more["work"]["used"] > small["work"]["used"]
    assert small["budget"] == 10 and small["spending"] == "pocock"
    assert more["tasks"]["skipped"] >= small["tasks"]["tasks"]  # every earlier (cell, seed) reused
    con = sqlite3.connect(str(out / "sweep.sqlite"))
    looks = con.execute("SELECT look, alpha, spent, fraction FROM ledger ORDER BY look").fetchall()
    con.close()
    assert [lk for lk, *_ in looks] == list(range(1, len(looks) + 1))  # one ledger, its looks in order
    assert all(0 <= a <= 0.05 for _, a, _, _ in looks) and looks[-1][2] <= 0.05 + 1e-12
    md = (out / "report.md").read_text()
    assert "## Rounds" in md and "alpha spending: pocock" in md


def test_the_same_command_after_an_interruption_gives_the_uninterrupted_verdict(cli, tmp_path):
    """Issue 27: kill -9 during a round, then the same command, ended with other looks, cells and estimates than the
    uninterrupted run (d 0.50 against 0.57). The store is cut as a kill leaves it: the ledger up to look 2, and the
    rows of the rounds before it plus half of the next round's (in the order they were written)."""
    import shutil

    claims = tmp_path / "noisy.py"
    claims.write_text(NOISY)
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    args = ["--claims", str(claims), "compare", "rep.noisy", "--budget", "60", "--plan-trials", "0", "--json"]
    full = json.loads(cli(*args, "--out", str(whole), check_rc=0).stdout)
    assert len(full["rounds"]) >= 3
    cut.mkdir()
    shutil.copy(whole / "sweep.sqlite", cut / "sweep.sqlite")
    con = sqlite3.connect(str(cut / "sweep.sqlite"))
    kept = full["rounds"][1]["tasks_total"] + (full["rounds"][2]["tasks_total"] - full["rounds"][1]["tasks_total"]) // 2
    con.execute("DELETE FROM results WHERE key NOT IN (SELECT key FROM results ORDER BY created, rowid LIMIT ?)", (kept,))
    con.execute("DELETE FROM ledger WHERE look > 2")
    con.commit()
    con.close()
    again = json.loads(cli(*args, "--out", str(cut), check_rc=0).stdout)
    assert _signature(again) == _signature(full)
    assert again["fits"] == full["fits"] and again["tasks"]["tasks"] == full["tasks"]["tasks"]
    assert 0 < again["tasks"]["ran"] < full["tasks"]["ran"]  # only what the interruption lost is measured again
