"""Designs from the applicability window (issue 20, section 1)."""
import json

from ibcheck.simulate.experiments.applicability import applicability
from ibcheck.simulate.experiments.base import Row
from ibcheck.simulate.experiments.registry import EXPERIMENTS
from ibcheck.simulate.experiments.window import run_cell_keys, window_design
from ibcheck.theory import get_claim


def _inside(exp, claim, cell, n):
    """Every hypothesis of the claim at ``cell`` with the free setting forced to ``n``."""
    from dataclasses import replace

    forced = replace(exp, free=None, hypothesis_values=lambda c: {**exp.hypothesis_values(c), "n": n})
    return applicability(claim, forced, [Row(dict(cell), 0, "ok", {})], list(cell), exp.fixed).cells[0]["inside"]


def test_every_run_cell_is_inside_at_the_smallest_inside_n():
    exp, claim = EXPERIMENTS["FVBS23.thm.4_2"], get_claim("FVBS23.thm.4_2")
    d = window_design("FVBS23.thm.4_2")
    assert d.cells and all(c.inside for c in d.run_cells)
    for c in d.run_cells:
        n = c.settings["n"]
        assert _inside(exp, claim, c.cell, n) and not _inside(exp, claim, c.cell, n - 1)  # H1 binds just below
        assert "H1" in c.binding


def test_a_design_never_runs_an_outside_cell_where_an_inside_cell_exists():
    exp, claim = EXPERIMENTS["FVBS23.thm.4_2"], get_claim("FVBS23.thm.4_2")
    grid = {"d": [128, 256, 512], "k": [2, 8]}  # d = 128 is outside for every n; (256, 8) too (H4 < H1)
    d = window_design("FVBS23.thm.4_2", grid=grid)
    outside = {tuple(sorted(c.cell.items())) for c in d.cells if not c.inside}
    assert {(("d", 128), ("k", 2)), (("d", 128), ("k", 8)), (("d", 256), ("k", 8))} <= outside
    runs = run_cell_keys(exp, claim, grid)
    assert runs and not (runs & outside)
    for c in d.cells:  # where the window is non-empty the design put the cell inside
        if not c.binding.startswith("empty"):
            assert c.inside


def test_no_inside_cell_names_the_smallest_inside_one():
    d = window_design("FVBS23.thm.4_2", grid={"d": [64, 128], "k": [2, 4]})
    assert not any(c.inside for c in d.cells) and d.run_cells == list(d.cells)
    assert d.smallest_inside is not None and d.smallest_inside.inside and d.smallest_inside.cell["d"] >= 256
    assert "No cell of the grid is inside" in d.heading()


def test_design_cli(cli):
    res = cli("design", "FVBS23.thm.4_2", "--budget", "1000", "--json", check_rc=0)
    data = json.loads(res.stdout)
    assert data["free"] == "n" and data["seeds_within_budget"] >= 1
    # every quick cell is inside but (256, 8): no n satisfies H1, H3-H5 together there, and it does not run
    outside = [c for c in data["cells"] if not c["inside"]]
    assert [c["cell"] for c in outside] == [{"d": 256, "k": 8}] and not outside[0]["runs"] and "never all together" in outside[0]["binding"]
    assert all(c["cost_seconds"] > 0 for c in data["cells"])
    text = cli("design", "FVBS23.thm.4_2", check_rc=0).stdout
    assert "H1 binds below" in text and "inside" in text
    bad = cli("design", "FVBS23.thm.9_9")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
