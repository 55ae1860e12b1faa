"""The hostile-input campaign's classes (issue 26, section 7), each fixed at its cause: claims that cannot mean what
they say, damaged or unwritable stores, oversized CSV fields, two commands on one --out, a solver that cannot prove."""
from __future__ import annotations

import fcntl
import os
import sqlite3
import subprocess
import sys

import numpy as np
import pytest
import sympy as sp

import ibcheck
from ibcheck.solvers.kkt.global_opt import NotProven, _dual_max, augment
from ibcheck.theory.expressions import parse_latex_formula

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAST = "SSTTM18.cor.robust_upper"  # a quick comparison of a few seconds


def _cli(*args, env=None):
    """The command line in process (the same main() a shell runs; a fresh interpreter per call cost 3.5 s each)."""
    from tests.conftest import run_cli

    return run_cli(*args, env=env)


@pytest.mark.parametrize("expr, says", [("-d", "not positive"), ("0", "not positive"), ("oo", "not finite"),
                                        (sp.I * sp.sqrt(sp.Symbol("d", positive=True)), "not real")])
def test_a_bound_that_is_not_a_positive_function_is_refused(expr, says):
    with pytest.raises(ibcheck.InputError, match=says):
        ibcheck.Claim("U.x.1", variables=("d",), bounds=[ibcheck.Bound("r", "O", expr)])


def test_exact_inequalities_and_limits_may_speak_of_zero():
    c = ibcheck.Claim("U.x.2", variables=("d",), bounds=[ibcheck.Bound("gap", ">=", 0), ibcheck.Bound("err", "->", 0)])
    assert [b.kind for b in c.bounds] == [">=", "->"]


def test_two_claims_with_one_id_and_different_bounds_are_refused():
    a = ibcheck.Claim("U.dup.1", variables=("d",), bounds=[ibcheck.Bound("r", "O", "sqrt(d)")])
    b = ibcheck.Claim("U.dup.1", variables=("d",), bounds=[ibcheck.Bound("r", "O", "d")])
    with ibcheck.using_registry(ibcheck.Registry()):
        with pytest.raises(ibcheck.InputError, match="defined twice"):
            ibcheck.register([a, b])
        ibcheck.register([a, a])  # the same claim twice is one claim


def test_uses_naming_an_unknown_claim_is_refused_and_graph_keeps_working():
    c = ibcheck.Claim("U.uses.1", variables=("d",), bounds=[ibcheck.Bound("r", "O", "d")], uses=("NOPE.thm.1",))
    with ibcheck.using_registry(ibcheck.Registry()):
        with pytest.raises(ibcheck.InputError, match="names unknown claim.*NOPE.thm.1"):
            ibcheck.register(c)
        from ibcheck.theory.graph import claim_graph

        assert "U.uses.1" not in claim_graph().nodes  # nothing half-registered; the graph still builds


@pytest.mark.parametrize("latex, expected", [(r"d \log d", "d*log(d)"), (r"\sqrt{d k}", "sqrt(d)*sqrt(k)"), (r"dk", "d*k"),
                                             (r"\sqrt{d/k}\,\log d", "sqrt(d)*log(d)/sqrt(k)"), (r"\delta d", "d*delta")])
def test_latex_d_before_a_letter_is_the_variable_not_a_differential(latex, expected):
    assert sp.sstr(parse_latex_formula(latex)) == expected


def test_the_dual_check_that_cannot_prove_says_so():
    rng = np.random.default_rng(0)
    X, y, lam = rng.normal(size=(6, 3)), np.sign(rng.normal(size=6)), np.abs(rng.normal(size=6)) * 5
    with pytest.raises(NotProven, match="user_limit"):  # one interior-point iteration cannot end optimal
        _dual_max(augment(X, True), y, lam, 5000, solver_opts={"max_iter": 1})


def test_a_csv_field_over_the_csv_limit_is_one_line(tmp_path):
    data = tmp_path / "big.csv"
    data.write_text("d,value\n64,1\n128," + "9" * 200_000 + "\n")
    res = _cli("verdict", "--data", str(data), "--predict", "d=1/2", "--kind", "Theta", "--out", str(tmp_path / "v"))
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "line 3 cannot be read as CSV" in res.stderr, res.stderr
    assert not (tmp_path / "v").exists()


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    out = tmp_path_factory.mktemp("store") / "c"
    res = _cli("compare", FAST, "--quick", "--budget", "1", "--out", str(out))
    assert res.returncode == 0, res.stderr
    return out


@pytest.mark.parametrize("damage, says", [
    ("UPDATE results SET cell = '[1, 2]' WHERE rowid = 1", "not a mapping"),
    ("UPDATE ledger SET fraction = 'abc'", "the ledger's look"),
])
def test_a_damaged_store_is_one_line_naming_the_damage(stored, tmp_path, damage, says):
    out = tmp_path / "c"
    os.makedirs(out)
    with open(stored / "sweep.sqlite", "rb") as f:
        (out / "sweep.sqlite").write_bytes(f.read())
    con = sqlite3.connect(out / "sweep.sqlite")
    con.execute(damage)
    con.commit()
    con.close()
    res = _cli("compare", FAST, "--quick", "--budget", "1", "--out", str(out))
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "internal error" not in res.stderr, res.stderr
    assert says in res.stderr


SMALL_DISK = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a file-size limit: writes past it fail with EFBIG, as on a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
from ibcheck.cli import main
sys.exit(main({argv!r}))
"""


@pytest.mark.parametrize("limit", [20_000, 60_000])
def test_a_full_disk_is_one_line_not_an_internal_error(tmp_path, limit):
    out = tmp_path / "c"
    code = SMALL_DISK.format(limit=limit, argv=["compare", FAST, "--quick", "--out", str(out)])
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 1 and res.stderr.count("\n") == 1, res.stderr
    assert res.stderr.startswith("ibcheck: run failed:") and "internal error" not in res.stderr


def test_verdict_beside_a_running_command_on_its_out_is_refused(tmp_path):
    data = tmp_path / "m.csv"
    data.write_text("d,seed,value\n" + "".join(f"{d},{s},{d ** 0.5}\n" for d in (64, 128, 256) for s in range(2)))
    out = tmp_path / "o"
    out.mkdir()
    (out / "report.md").write_text("another command's report")
    fd = os.open(out, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # what a running compare holds on its --out
    try:
        res = _cli("verdict", "--data", str(data), "--predict", "d=1/2", "--kind", "Theta", "--out", str(out))
    finally:
        os.close(fd)
    assert res.returncode == 2 and "is in use by another comparison or command" in res.stderr, res.stderr
    assert (out / "report.md").read_text() == "another command's report"
