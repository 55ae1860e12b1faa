"""Issue 37, round four of the hostile-input campaign: each case that gave a wrong answer or a crash.

Each test fails if its case comes back (or another of its class written here)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ibcheck
from ibcheck.errors import InputError

X4 = np.array([[1.0, 0.3], [2.0, 1.0], [-1.0, -0.5], [-2.0, 0.2]])
Y4 = np.array([1.0, 1.0, -1.0, -1.0])


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("scale", [1e300, 1e200, 1e155, 1e-155, 1e-160, 1e-170, 1e-300])
def test_svm_margin_scales_with_the_data_at_any_scale(scale, bias):
    """Separable points scaled by 1e300 were "infeasible"; at 1e-160 "optimal" with margin 0.0."""
    ref = ibcheck.svm(X4, Y4, bias=bias)
    r = ibcheck.svm(X4 * scale, Y4, bias=bias)
    assert r.separable and r.status == "optimal"
    assert r.margin / (scale * ref.margin) == pytest.approx(1.0, rel=1e-6)
    assert np.allclose(r.direction, ref.direction, atol=1e-6)


def test_svm_says_when_w_cannot_be_held_but_the_margin_is_proven():
    r = ibcheck.svm(X4 * 1e-310, Y4)
    assert r.separable and r.w is None and "overflows float64" in r.status
    assert r.margin > 0 and math.isfinite(r.margin)


def _net():
    from ibcheck.solvers.networks import TwoLayerReLU
    return TwoLayerReLU(W=np.eye(2), b=None, a=np.array([1.0, -1.0]))


@pytest.mark.parametrize("call", [
    lambda: ibcheck.svm(X4 + 0j, Y4),
    lambda: ibcheck.svm([[1 + 1j, 0.0], [1.0, 2.0]], [1, -1]),
    lambda: ibcheck.global_max_margin(X4.astype(complex), Y4),
    lambda: ibcheck.direction_error(np.array([1 + 0j, 2]), [1.0, 2.0]),
    lambda: ibcheck.direction_error([1.0, 2j], [1.0, 2.0]),
    lambda: ibcheck.svm(X4, Y4.astype(complex)),
    lambda: ibcheck.normalized_margin(_net(), X4 + 1j, Y4),
    lambda: ibcheck.radii(_net(), X4.astype(complex), Y4, methods=("universal",)),
])
def test_complex_input_is_refused_not_truncated(call):
    with pytest.raises(InputError, match="complex"):
        call()


@pytest.mark.parametrize("scale", [1e-200, 1e200])
def test_direction_error_is_scale_free(scale):
    assert ibcheck.direction_error(np.array([1.0, 2.0]) * scale, [2.0, 4.0]) == pytest.approx(0.0, abs=1e-12)


# -- the sweep store: unreadable rows are failed rows, counted and named; a foreign store is left untouched ---------
STORE_CLAIM = "SSTTM18.cor.robust_upper"  # a quick comparison of a few seconds, 6 rows
QUANTITY = "robust_sample_threshold"


def _compare(store):
    return ibcheck.compare(STORE_CLAIM, quick=True, budget=1, store=str(store), progress=False)


@pytest.fixture(scope="module")
def base_store(tmp_path_factory):
    path = tmp_path_factory.mktemp("store") / "sweep.sqlite"
    _compare(path)
    return path


def _damaged(base_store, tmp_path, *sql, params=()):
    import shutil
    import sqlite3
    path = tmp_path / "sweep.sqlite"
    shutil.copy(base_store, path)
    con = sqlite3.connect(path)
    for q in sql:
        con.execute(q, params) if "?" in q else con.execute(q)
    con.commit()
    con.close()
    return path


@pytest.mark.parametrize("stored, why", [
    ('{"robust_sample_threshold": NaN}', "not a finite number > 0"),
    ('{"robust_sample_threshold": 1e999}', "not a finite number > 0"),
    ('{"robust_sample_threshold": 0}', "not a finite number > 0"),
    ('{"robust_sample_threshold": -5}', "not a finite number > 0"),
    ('{"robust_sample_threshold": "7.7"}', "not a number"),
    ('{"robust_sample_threshold": [7.7]}', "not a number"),
    ('{"robust_sample_threshold": null}', "not a number"),
    ('{"other": 7.7}', "is missing"),
    ('[' * 100_000 + ']' * 100_000, "nested too deep"),
    ('{not json', "not JSON"),
    ('"a string"', "not a mapping"),
])
def test_an_unreadable_stored_row_is_a_failed_row_counted_with_its_reason(base_store, tmp_path, stored, why):
    """A stored NaN, inf, 0, -5, string, list or null (or a missing key) was left out of the fit while the table said
    "failed 0"; a row nested 100,000 deep was a RecursionError."""
    clean = _compare(base_store)
    path = _damaged(base_store, tmp_path, "UPDATE results SET value = ? WHERE rowid = 1", params=(stored,))
    import sqlite3

    from ibcheck.simulate.sweep.store import row_digest
    con = sqlite3.connect(path)  # signed as the measure that wrote it would sign it: not an edit (an edit is measured again)
    cols = "key, claim, experiment, cell, seed, status, value, error, seconds, code_version, failure"
    con.execute("UPDATE results SET digest = ? WHERE rowid = 1",
                (row_digest(*con.execute(f"SELECT {cols} FROM results WHERE rowid = 1").fetchone()),))
    con.commit()
    con.close()
    res = _compare(path)
    assert res.record.task_status == {"ok": clean.record.task_status["ok"] - 1, "failed": 1}
    (f,) = res.record.failures
    assert f.kind == "UnreadableRow" and why in f.error and f.cell and f.seed in (0, 1)
    assert sum(c.failed for c in res.record.censored) == 1


def test_a_foreign_store_is_refused_before_anything_is_written(tmp_path):
    """It was refused as "left untouched" after a column had been added and the journal switched to WAL."""
    import hashlib
    import sqlite3
    path = tmp_path / "sweep.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE results (key TEXT, value TEXT)")
    con.execute("INSERT INTO results VALUES ('a', '1')")
    con.commit()
    con.close()
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(InputError, match="not a sweep store of ibcheck.*left untouched"):
        _compare(path)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert not (tmp_path / "sweep.sqlite-wal").exists()


@pytest.mark.parametrize("sql, says", [
    ("UPDATE ledger SET alpha = -1", "alpha=-1"),
    ("UPDATE ledger SET spent = 2", "spent=2"),
    ("DROP TABLE ledger; CREATE TABLE ledger (design TEXT, look INTEGER)", "its ledger table has the columns design, look"),
    ("CREATE TABLE notes (a TEXT)", "holds the table(s) notes"),
])
def test_a_damaged_or_foreign_ledger_is_one_input_error(base_store, tmp_path, sql, says):
    path = _damaged(base_store, tmp_path, *sql.split("; "))
    with pytest.raises(InputError) as err:
        _compare(path)
    assert says in str(err.value)


# -- crashes that became one line --------------------------------------------------------------------------------
@pytest.mark.parametrize("call, says", [
    (lambda: ibcheck.AtLeast(10**400), "finite number > 0"),
    (lambda: ibcheck.AtMost(10**400), "finite number > 0"),
    (lambda: ibcheck.load_claims(None), "path is a NoneType"),
    (lambda: ibcheck.register(None), "not NoneType"),
    (lambda: ibcheck.register("FVBS23.thm.4_2"), "not str"),
    (lambda: ibcheck.compare(STORE_CLAIM, grid={"d": [1e300, 1e301, 1e302]}, progress=False), "at most 2^53"),
    (lambda: ibcheck.compare(STORE_CLAIM, quick=True, workers=10_000, progress=False), "workers=10000 is out of range"),
])
def test_api_calls_that_crashed_raise_input_error(call, says):
    with pytest.raises(InputError) as err:
        call()
    assert says in str(err.value)


def test_workers_are_bounded_by_the_local_cores():
    from ibcheck.simulate.compare.inputs import check_workers, local_cores
    assert check_workers(local_cores()) == local_cores()
    with pytest.raises(InputError, match="at most"):
        check_workers(local_cores() + 1)
    assert check_workers(64, scheduler="tcp://10.0.0.5:8786") == 64  # a remote cluster: its own workers


# -- names: one folder per claim id, escaped table cells -----------------------------------------------------------
def _toy(claim_id: str, quantity: str = "radius", hypothesis: str = "H1"):
    return ibcheck.Claim(id=claim_id, variables=["d"], hypotheses={hypothesis: "d >= 2"},
                         bounds=[ibcheck.Bound(quantity, "Theta", "sqrt(d)")])


def test_report_folders_are_one_per_claim_id(isolated_registry, tmp_path):
    """COL.thm.1 and COL_thm_1 shared compare/COL_thm_1: the index linked the first row to the second's report."""
    import random

    from ibcheck.theory.outdir import slug
    ids = ["COL.thm.1", "COL_thm_1"]
    assert len({slug(i) for i in ids + ["COL.thm_1", "col.thm.1"]}) == 4
    for i, cid in enumerate(ids):
        ibcheck.register(_toy(cid))
        slope = 0.5 if i != 1 else 0.8  # the second claim's data violate it

        def measure(cell, seed, slope=slope):
            return {"radius": cell["d"] ** slope * (1 + 0.01 * random.Random(f"{cell}{seed}").gauss(0, 1))}
        ibcheck.experiment(cid, grid={"d": [64, 256, 1024]}, seeds=2)(measure)
    ibcheck.report(str(tmp_path / "r"), only=ids, workers=1)
    index = (tmp_path / "r" / "index.md").read_text()
    for cid in ids:
        summary = (tmp_path / "r" / "compare" / cid / "summary.json").read_text()
        assert f'"claim": "{cid}"' in summary
        row = next(line for line in index.splitlines() if f"(compare/{cid}/report.md)" in line)
        verdict = "inconsistent" if cid == "COL_thm_1" else "consistent"
        assert f"**{verdict}**" in row, row


def test_ids_that_differ_only_in_case_are_refused(isolated_registry):
    ibcheck.register(_toy("CASE.thm.1"))
    with pytest.raises(InputError, match="only in case"):
        ibcheck.register(_toy("case.thm.1"))


def test_names_cannot_break_a_table_or_inject_markup(isolated_registry, tmp_path):
    """A '|' in a hypothesis name shifted the per-cell table's columns; report.md carried raw <script> from names."""
    ibcheck.register(_toy("ESC.thm.1", quantity="r|<script>alert(1)</script>", hypothesis="H|<b>1"))
    data = tmp_path / "m.csv"
    data.write_text("d,seed,value\n" + "".join(f"{d},{s},{d ** 0.5 * (1 + 0.01 * s)}\n" for d in (64, 128, 256, 512) for s in range(3)))
    res = ibcheck.verdict(str(data), claim="ESC.thm.1")
    res.save(str(tmp_path / "v"))
    md = (tmp_path / "v" / "report.md").read_text()
    import re
    assert not re.search(r"(?<!\\)<(script|/script|b)>", md), re.findall(r".{20}<(?:script|b)>.{20}", md)
    for block in md.split("\n\n"):
        rows = [line for line in block.splitlines() if line.startswith("|")]
        if rows:  # every row of a table has as many cells as its header
            widths = {len([c for c in __import__("re").split(r"(?<!\\)\|", line)]) for line in rows}
            assert len(widths) == 1, rows


# -- the first hour ------------------------------------------------------------------------------------------------
def test_importing_a_claims_module_registers_its_claims(tmp_path):
    """`import my_claims` registered the experiments but not the claims: every later call said "unknown claim id"."""
    import subprocess
    import sys
    (tmp_path / "my_claims.py").write_text(
        "import ibcheck\n"
        "claim = ibcheck.Claim(id='IMP.thm.1', variables=['d', 'k'], hypotheses={'H1': r'k \\leq \\sqrt{d}'},\n"
        "                      bounds=[ibcheck.Bound('radius', latex=r'\\Theta(\\sqrt{d/k})')])\n"
        "more = [ibcheck.Claim(id=f'IMP.thm.{i}', variables=['d'], bounds=[ibcheck.Bound('r', 'O', 'd')]) for i in (2, 3)]\n"
        "def helper():\n"
        "    return ibcheck.Claim(id='IMP.thm.4', variables=['d'], bounds=[ibcheck.Bound('r', 'O', 'd')])\n"
        "helper()\n")
    code = ("import my_claims, ibcheck\n"
            "print(ibcheck.window('IMP.thm.1', free='d', at={'k': 10}).intervals)\n"
            "ids = {c.id for c in ibcheck.claims().claims}\n"
            "print(sorted(i for i in ids if i.startswith('IMP')))\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    # module-level claims are registered (a list comprehension's too); one built inside a function is not
    assert res.stdout.splitlines() == ["[(100, None)]", "['IMP.thm.1', 'IMP.thm.2', 'IMP.thm.3']"]


def test_out_creates_its_parents_and_a_refusal_removes_them(tmp_path, cli):
    out = tmp_path / "cmp" / "deeper" / "x"
    cli("compare", STORE_CLAIM, "--quick", "--budget", "1", "--out", str(out), check_rc=0)
    assert (out / "summary.json").is_file()
    bad = tmp_path / "new" / "y"
    cli("compare", STORE_CLAIM, "--quick", "--spending", "nope", "--out", str(bad), check_rc=2)
    assert not (tmp_path / "new").exists()


def test_to_json_is_json_text_everywhere_and_as_json_plain_data(base_store):
    import json
    res = _compare(base_store)
    for obj in (res, res.record, res.record.bounds[0]):
        assert isinstance(obj.to_json(), str) and isinstance(json.loads(obj.to_json()), dict)
        assert isinstance(obj.as_json(), dict)


def test_the_api_names_parameters_and_the_cli_names_flags(cli, tmp_path):
    with pytest.raises(InputError) as err:
        ibcheck.compare(STORE_CLAIM, quick=True, constants={"zz": 1}, progress=False)
    assert str(err.value).startswith("constants={'zz': 1} names 'zz'") and "--" not in str(err.value)
    with pytest.raises(InputError) as err:
        ibcheck.compare(STORE_CLAIM, quick=True, fit_from={"zz": 1}, progress=False)
    assert str(err.value).startswith("fit_from={'zz': 1.0} names zz") and "--" not in str(err.value)
    res = cli("compare", STORE_CLAIM, "--quick", "--constants", "zz=1", "--out", str(tmp_path / "c"), check_rc=2)
    assert res.stderr.startswith("ibcheck: error: --constants zz=1 names 'zz'")
    res = cli("compare", STORE_CLAIM, "--quick", "--from", "zz=1", "--out", str(tmp_path / "c"), check_rc=2)
    assert res.stderr.startswith("ibcheck: error: --from zz=1 names zz")


@pytest.mark.parametrize("make, says", [
    (lambda: ibcheck.Bound(quantity=""), "Bound(quantity='')"),
    (lambda: ibcheck.Bound(quantity="   "), "non-empty"),
    (lambda: ibcheck.Claim(id="ZZ.thm.1", variables=["d"], bounds=[ibcheck.Bound("r", latex=r"O(\frac{d}{0})")]), "division by zero"),
    (lambda: ibcheck.Claim(id="Z" * 101, variables=["d"], bounds=[ibcheck.Bound("r", "O", "d")]), "at most 100"),
])
def test_claims_refuse_what_they_cannot_hold(make, says):
    with pytest.raises(InputError, match=__import__("re").escape(says)):
        make()


def test_new_claim_refuses_an_id_claim_would_refuse(cli, tmp_path):
    res = cli("new-claim", "A" + "b" * 100, "--out", str(tmp_path / "c.py"), check_rc=2)
    assert "at most 100" in res.stderr and not (tmp_path / "c.py").exists()


# -- one validation for every claim: the probability claim and report --only ----------------------------------------
@pytest.mark.parametrize("args, says", [
    (["--from", "d=1e999"], "--from d=1e999 is out of range"),
    (["--spending", "nope"], "--spending nope"),
    (["--margin", "-1"], "--margin -1 is out of range"),
    (["--constants", "eps=2"], "neither FVBS23.thm.3_1 nor the claim it is measured on"),
    (["--inside-only", "--include-outside"], "--include-outside is not accepted together with inside_only"),
])
def test_the_probability_claim_checks_every_flag(cli, tmp_path, args, says):
    res = cli("compare", "FVBS23.thm.3_1", "--quick", *args, "--out", str(tmp_path / "p"), check_rc=2)
    assert says in res.stderr and res.stderr.count("\n") == 1
    assert not (tmp_path / "p").exists()


@pytest.mark.parametrize("args, says", [
    (["--only"], "expected at least one argument"),
    (["--only", STORE_CLAIM, STORE_CLAIM], "is given twice"),
    (["--only", "NOPE.x"], "unknown claim id"),
])
def test_report_only_needs_distinct_claims(cli, tmp_path, args, says):
    res = cli("report", *args, "--out", str(tmp_path / "r"), check_rc=2)
    assert says in res.stderr and not (tmp_path / "r").exists()


def test_report_only_accepts_the_probability_claim():
    from ibcheck.simulate.compare.suite import SuiteOptions
    assert SuiteOptions(only=("FVBS23.thm.3_1",)).names() == ["FVBS23.thm.4_2"]


def test_the_readme_is_a_first_screen_and_its_links_resolve():
    """Issue 37: the README was 748 lines (a reference, a design document and a measurement log at once); reference
    material lives in docs/, and every relative link resolves."""
    import os
    import re
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    text = open(os.path.join(root, "README.md")).read()
    assert len(text.splitlines()) <= 150
    head = "\n".join(text.splitlines()[:25])
    assert "make report" in head and "make test" in head  # the two commands on the first screen
    for page in ("cli", "api", "verdict", "kkt", "reproductions", "performance"):
        assert f"docs/{page}.md" in text
    for base, name in [(root, "README.md")] + [(os.path.join(root, "docs"), f) for f in os.listdir(os.path.join(root, "docs"))]:
        body = open(os.path.join(base, name)).read()
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", body):
            if not target.startswith(("http://", "https://", "mailto:")):
                assert os.path.exists(os.path.join(base, target)), (name, target)


def test_a_grid_entry_is_named_as_its_flag_and_token(cli, tmp_path):
    with pytest.raises(InputError) as err:
        ibcheck.compare(STORE_CLAIM, grid={"d": [64, 1e300]}, progress=False)
    assert str(err.value).startswith("grid['d']=")
    res = cli("compare", STORE_CLAIM, "--grid", "d=64,1e300", "--out", str(tmp_path / "g"), check_rc=2)
    assert res.stderr.startswith("ibcheck: error: --grid d=64,1e300 is out of range: grid values must be at most 2^53")


def test_an_unknown_keyword_is_an_input_error_with_a_suggestion():
    """ibcheck.compare("X", seed=3) was a bare TypeError."""
    with pytest.raises(InputError, match=r"unexpected keyword argument 'seed'; did you mean seeds\?"):
        ibcheck.compare(STORE_CLAIM, seed=3)
    with pytest.raises(InputError, match="missing a required argument: 'claim'"):
        ibcheck.compare()


def test_save_returns_every_path_it_wrote(base_store, tmp_path):
    import os
    files = _compare(base_store).save(str(tmp_path / "deep" / "c"))
    assert files["summary"].endswith("summary.json")
    assert all(os.path.isfile(p) for p in files.values()), files


def test_refusals_of_one_value_carry_it_for_scripts():
    """InputError.parameter/value name what was refused where one parameter was: svm's labels, an unknown variable
    in ``at``; an unknown claim id carries the id (the parameter's name differs between calls: claim, id)."""
    import ibcheck

    with pytest.raises(ibcheck.InputError) as e:
        ibcheck.svm([[1.0, 2.0], [3.0, 4.0]], [1, 2])
    assert (e.value.parameter, e.value.value) == ("y", 2.0)
    with pytest.raises(ibcheck.InputError) as e:
        ibcheck.bounds("LPLL25.thm.nonrobust", at={"zz": 3})
    assert (e.value.parameter, e.value.value) == ("at", "zz")
    with pytest.raises(ibcheck.InputError) as e:
        ibcheck.compare("NOPE.thm.1")
    assert e.value.value == "NOPE.thm.1" and "unknown claim id" in str(e.value)


def test_every_call_of_the_api_is_in_the_package_namespace():
    """Every command calls the API, so every API call is ``ibcheck.<name>``: ``ibcheck calibrate`` is
    ``ibcheck.calibrate(...)`` (seven calls, calibrate among them, were only under ibcheck.api). Importing them loads
    neither torch nor cvxpy."""
    import subprocess
    import sys

    import ibcheck
    import ibcheck.api as api

    assert [n for n in api.__all__ if not hasattr(ibcheck, n) or n not in ibcheck.__all__] == []
    code = "import sys, ibcheck; print(any(m in sys.modules for m in ('torch', 'cvxpy')))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"
