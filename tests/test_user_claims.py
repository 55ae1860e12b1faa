"""A user's own claims, written by this test into a file (not copied from the built-ins), go through
the CLI and the API like the built-in ones; LaTeX and sympy strings give the same exponents; every
malformed claim file is one line and exit status 2."""
import json
import os
import subprocess
import sys

import pytest
import sympy as sp

import ibcheck

CLAIMS = r'''
import ibcheck

toy = ibcheck.Claim(
    id="TOY26.thm.1", title="A toy radius bound", paper="the README's toy",
    variables=["d", "k", "n"],
    hypotheses={"H1": r"n \geq k \ln^2 d", "H2": "k <= sqrt(d)"},
    bounds=[ibcheck.Bound("flip_radius", "O", "sqrt(d/k)"),
            ibcheck.Bound("robust_radius", latex=r"\Omega(\sqrt{d}\,\log^2 d)")],
    uses=["LPLL25.thm.nonrobust"],
)
'''


@pytest.fixture(autouse=True)
def _restore_registry():
    """Each test gets its own registry (the built-ins and what earlier code registered): the claims
    and experiments it registers are gone after it."""
    from ibcheck.theory import registry as R

    with R.using(R.current().copy()):
        yield


def _cli(*args, env=None):
    from tests.conftest import run_cli

    return run_cli(*args, env=env)


@pytest.fixture()
def claims_file(tmp_path):
    path = tmp_path / "my_claims.py"
    path.write_text(CLAIMS)
    return str(path)


def test_a_users_claim_through_the_cli(claims_file):
    out = _cli("--claims", claims_file, "bounds", "TOY26.thm.1", "--at", "d=10000,k=10,n=1000", "--json")
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    assert info["applies"] is True
    exps = {b["quantity"]: {v: x for v, x in b["exponents"].items() if x != "0"} for b in info["bounds"]}
    assert exps == {"flip_radius": {"d": "1/2", "k": "-1/2"}, "robust_radius": {"d": "1/2"}}
    w = json.loads(_cli("window", "TOY26.thm.1", "--free", "d", "--at", "k=10,n=1000", "--json", env={"IBCHECK_CLAIMS": claims_file}).stdout)
    assert w["intervals"] == [[100, 22026]] and w["binding"] == [{"low": "H2", "high": "H1"}] and w["verified"]
    assert "LPLL25.thm.nonrobust" in _cli("--claims", claims_file, "graph", "--rests-on", "TOY26.thm.1").stdout
    assert "TOY26.thm.1" in _cli("--claims", claims_file, "claims").stdout
    tex = _cli("--claims", claims_file, "bounds", "TOY26.thm.1", "--latex").stdout
    assert r"\Omega" in tex and "TOY26.thm.1" in tex


def test_a_users_claim_through_the_api(claims_file):
    import ibcheck

    ibcheck.load_claims(claims_file)
    ibcheck.load_claims(claims_file)  # the same file again: no clash
    w = ibcheck.window("TOY26.thm.1", free="d", at={"k": 10, "n": 1000})
    assert w.intervals == [(100, 22026)]
    assert ibcheck.bounds("TOY26.thm.1", at={"d": 10**4, "k": 10, "n": 1000}).applies is True


def test_latex_and_sympy_strings_give_the_same_exponents():
    import ibcheck
    from ibcheck.theory.describe import bound_exponents

    pairs = [("sqrt(d)*log(d)**2", r"\Omega(\sqrt{d}\,\log^2 d)"), ("sqrt(d/k)", r"O(\sqrt{d/k})"),
             ("d**(1/4)/(eps**2*sqrt(n))", r"\Theta(\frac{d^{1/4}}{\varepsilon^2 \sqrt{n}})"), ("k*log(log(d))", r"O(k \log\log d)")]
    for i, (plain, tex) in enumerate(pairs):
        kind = tex[:tex.index("(")].lstrip("\\")
        c = ibcheck.Claim(id=f"TEX.{i}", variables=["d", "k", "n", "eps"],
                          bounds=[ibcheck.Bound("q", kind, plain), ibcheck.Bound("q2", latex=tex)])
        a, b = (bound_exponents(c, x) for x in c.bounds)
        assert c.bounds[0].kind == c.bounds[1].kind
        assert (a["exponents"], a["log_exponents"], a["loglog_exponents"]) == (b["exponents"], b["log_exponents"], b["loglog_exponents"])


MALFORMED = [
    ('ibcheck.Claim(id="B.1", variables=["d"], bounds=[ibcheck.Bound("r", "O", "sqrt(d")])', "bounds[0]: cannot parse the formula 'sqrt(d' at position 5"),
    ('ibcheck.Claim(id="B.1", variables=["d"], bounds=[ibcheck.Bound("r", "Big", "d")])', "kind='Big' is not one of"),
    ('ibcheck.Claim(id="B.1", variables=["d"], bounds=[ibcheck.Bound("r", "O", "d*q")])', "bounds[0] uses undeclared symbols q"),
    ('ibcheck.Claim(id="B.1", variables=["d"], hypotheses={"H1": "d + 2"})', "hypotheses['H1']: 'd + 2' is not a relation"),
    ('ibcheck.Claim(id="B.1", variables=["d"], hypotheses={"H1": r"d \\geq \\frac{1}{"})',
     "hypotheses['H1']: cannot parse the LaTeX 'd \\geq \\frac{1}{': the '{' at position 16 is never closed"),
    ('ibcheck.Claim(id="FVBS23.thm.4_2", variables=["d"])', "clashes with a claim from built-in"),
    ('ibcheck.Claim(id="B.1", status="maybe")', "status='maybe' is not one of"),
    ('ibcheck.Claim(id="B.1", variables=["d"], bounds=["sqrt(d)"])', "bounds[0] is a str, not an ibcheck.Bound"),
    ('None\nraise RuntimeError("oops")', "RuntimeError: oops"),
    ('ibcheck.Claim(id="B.1", variables=["d"], bounds=[ibcheck.Bound("r", latex=r"\\sqrt{d}")])', "is not of the form O(...)"),
    ('ibcheck.Claim(id="B.1", variables=["2d"])', "variable '2d' is not a name"),
]


@pytest.mark.parametrize("body, message", MALFORMED)
def test_malformed_claim_files_are_one_line_and_exit_2(tmp_path, body, message):
    path = tmp_path / "bad.py"
    path.write_text("import ibcheck\nx = " + body + "\n")
    res = _cli("--claims", str(path), "claims")
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.stderr and str(path) in lines[0] and message in lines[0], lines


def test_a_missing_claims_file_is_one_line():
    res = _cli("--claims", "/nonexistent/claims.py", "claims")
    assert res.returncode == 2 and "does not exist" in res.stderr and len(res.stderr.strip().splitlines()) == 1


EXPERIMENT = r'''
import math
import random

import ibcheck

toy = ibcheck.Claim(id="TOY26.thm.2", title="A toy radius", variables=["d", "k"],
                    hypotheses={"H1": "k <= d"}, bounds=[ibcheck.Bound("radius", "Theta", "sqrt(d/k)")])


@ibcheck.experiment("TOY26.thm.2", grid={"d": [64, 128, 256, 512], "k": [2, 4, 8]}, seeds=2)
def measure(cell, seed):
    if cell["d"] == 128 and cell["k"] == 2 and seed == 0:
        raise ValueError("no data here")
    if cell["d"] == 256 and cell["k"] == 4 and seed == 1:
        return {"radius": float("nan")}
    if cell["d"] == 512 and cell["k"] == 8 and seed == 0:
        return {"something else": 1.0}
    rnd = random.Random(cell["d"] * 1000 + cell["k"] * 10 + seed + 1)
    return {"radius": math.sqrt(cell["d"] / cell["k"]) * math.exp(rnd.gauss(0, 0.03))}
'''


def test_a_users_experiment_runs_on_the_sweep_machinery(tmp_path):
    """The experiment's draws are shifted by one (``+ 1``) since the max-T level: the former draw is in the tail of
    this true claim's null at that level (its ray k = d^0.5 falls by d^-0.034, t = 2.85 at 9 degrees of freedom,
    significant at 0.015, not at Bonferroni's 0.005): over 300 fresh draws of this design (3 cells at one seed) the
    claim is inconsistent in 4 at the max-T level (1.3%) and in 1 at Bonferroni's."""
    path = tmp_path / "toy.py"
    path.write_text(EXPERIMENT)
    out = tmp_path / "c"
    res = _cli("--claims", str(path), "compare", "TOY26.thm.2", "--workers", "2", "--out", str(out), "--json")
    assert res.returncode == 0, res.stderr
    s = json.loads(res.stdout)
    assert s["verdict"] == "consistent" and {f["variable"]: f["predicted"] for f in s["fits"]} == {"d": 0.5, "k": -0.5}
    # the raising, non-finite and incomplete measurements are failed rows with their reasons, counted in the report
    assert s["task_status"] == {"ok": 21, "failed": 3}
    import sqlite3

    errors = sorted(e.splitlines()[0] for (e,) in sqlite3.connect(out / "sweep.sqlite").execute("SELECT error FROM results WHERE status='failed'"))
    assert errors == ["ValueError: no data here", "quantity 'radius' is nan, not a finite number (a bound is ibcheck.AtLeast(r) or "
                      "ibcheck.AtMost(r))",
                      "quantity 'radius' missing from the measure's result (it returned something else)"]
    assert "Tasks: ok = 21; failed = 3." in (out / "report.md").read_text()
    again = json.loads(_cli("--claims", str(path), "compare", "TOY26.thm.2", "--out", str(out), "--json").stdout)
    assert again["tasks"]["ran"] == 0  # resumable: every row reused


def test_a_users_experiment_through_the_api_and_a_verdict_on_a_csv(tmp_path):
    import ibcheck

    path = tmp_path / "toy.py"
    path.write_text(EXPERIMENT)
    ibcheck.load_claims(str(path))
    c = ibcheck.compare("TOY26.thm.2", seeds=2)
    assert c.verdict == "consistent" and c.record.task_status["failed"] == 3
    rows = ["d,k,seed,value"] + [f"{d},{k},{s},{(d / k) ** 0.5 * (1 + 0.01 * s)}" for d in (64, 128, 256) for k in (2, 4, 8) for s in range(2)]
    (tmp_path / "m.csv").write_text("\n".join(rows) + "\n")
    v = _cli("--claims", str(path), "verdict", "--claim", "TOY26.thm.2", "--data", str(tmp_path / "m.csv"), "--out", str(tmp_path / "v"), "--json")
    assert v.returncode == 0, v.stderr
    assert json.loads(v.stdout)["verdict"] == "consistent"


def test_the_readme_tutorial_runs(tmp_path):
    """The README's "Check your own theorem" block, executed as written."""
    readme = open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")).read()
    section = readme[readme.index("### Check your own theorem"):]
    code = section[section.index("```python") + len("```python"):section.index("```", section.index("```python") + 9)]
    assert len([line for line in code.strip().splitlines() if line.strip()]) <= 12
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.strip().splitlines()
    assert lines[0] == "[(100, None)]" and lines[1].startswith("consistent - ")
    assert os.listdir(tmp_path) == []  # nothing written


def test_new_claim_writes_a_template_that_runs(tmp_path):
    path = tmp_path / "my_claims.py"
    assert _cli("new-claim", "ABC25.thm.1", "--out", str(path)).returncode == 0
    assert _cli("new-claim", "ABC25.thm.1", "--out", str(path)).returncode == 2  # never overwrites by default
    w = json.loads(_cli("--claims", str(path), "window", "ABC25.thm.1", "--free", "d", "--at", "k=10", "--json").stdout)
    assert w["intervals"] == [[100, None]]
    s = json.loads(_cli("--claims", str(path), "compare", "ABC25.thm.1", "--out", str(tmp_path / "c"), "--json").stdout)
    assert s["verdict"] == "consistent"


@pytest.mark.slow
def test_a_users_experiment_on_a_dask_local_cluster(tmp_path):
    path = tmp_path / "toy.py"
    path.write_text(EXPERIMENT)
    res = _cli("--claims", str(path), "compare", "TOY26.thm.2", "--dask", "--workers", "2", "--out", str(tmp_path / "c"), "--json")
    assert res.returncode == 0, res.stderr
    s = json.loads(res.stdout)
    assert s["verdict"] == "consistent" and s["task_status"] == {"ok": 21, "failed": 3}


def test_claims_registered_by_an_installed_package(tmp_path):
    """The entry-point group ibcheck.claims: a package's claims are there without --claims."""
    (tmp_path / "toypkg.py").write_text('import ibcheck\nCLAIMS = [ibcheck.Claim(id="PKG26.thm.1", variables=["d"], '
                                        'bounds=[ibcheck.Bound("r", "O", "sqrt(d)")])]\n')
    info = tmp_path / "toypkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toypkg\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[ibcheck.claims]\ntoy = toypkg:CLAIMS\n")
    env = {"PYTHONPATH": str(tmp_path) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    from tests.conftest import run_cli_subprocess  # a fresh interpreter sees the package on its path

    res = run_cli_subprocess("bounds", "PKG26.thm.1", "--json", env=env)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["bounds"][0]["exponents"]["d"] == "1/2"


def test_a_verdict_on_a_users_claim_from_the_api(tmp_path):
    import ibcheck

    path = tmp_path / "toy.py"
    path.write_text(EXPERIMENT.replace("TOY26.thm.2", "TOY26.thm.4"))  # the registry is per process: an id of its own
    ibcheck.load_claims(str(path))
    rows = ["d,k,seed,value"] + [f"{d},{k},{s},{(d / k) ** 0.5 * (1 + 0.01 * s)}" for d in (64, 128, 256) for k in (2, 4, 8) for s in range(2)]
    (tmp_path / "m.csv").write_text("\n".join(rows) + "\n")
    v = ibcheck.verdict(str(tmp_path / "m.csv"), claim="TOY26.thm.4")
    assert v.verdict == "consistent" and v.record.applicability.inside == 9


def test_every_claim_a_file_builds_is_registered(tmp_path):
    """A claim written as a bare expression, or built in a loop, is not dropped (issue 19, section 6)."""
    path = tmp_path / "bare.py"
    path.write_text('import ibcheck\n'
                    'ibcheck.Claim(id="BARE26.thm.1", variables=["d"], bounds=[ibcheck.Bound("r", "O", "sqrt(d)")])\n'
                    'for i in (2, 3):\n'
                    '    ibcheck.Claim(id=f"BARE26.thm.{i}", variables=["d"], bounds=[ibcheck.Bound("r", "O", "d")])\n'
                    'ibcheck.register(ibcheck.Claim(id="BARE26.thm.4", variables=["d"], bounds=[ibcheck.Bound("r", "O", "d")]))\n')
    res = _cli("--claims", str(path), "claims", "--json")
    assert res.returncode == 0, res.stderr
    ids = {c["claim"] for c in json.loads(res.stdout)}
    assert {f"BARE26.thm.{i}" for i in (1, 2, 3, 4)} <= ids


def test_latex_with_the_kind_given_and_subscripts():
    import ibcheck

    wrapped = ibcheck.Claim(id="SUB26.thm.1", variables=["d", "k"], constants=["C1"],
                            bounds=[ibcheck.Bound("r", latex=r"O(C_1 \sqrt{d/k}\,\log d)")])
    plain = ibcheck.Claim(id="SUB26.thm.2", variables=["d", "k"], constants=["C1"],
                          bounds=[ibcheck.Bound("r", "O", latex=r"C_{1} \sqrt{d/k}\,\log d")])
    assert wrapped.bounds[0].kind == plain.bounds[0].kind == "O"
    assert wrapped.bounds[0].expr == plain.bounds[0].expr
    assert {s.name for s in plain.bounds[0].expr.free_symbols} == {"C1", "d", "k"}
    with pytest.raises(ibcheck.InputError, match="subscript"):
        ibcheck.Claim(id="SUB26.thm.3", variables=["d"], bounds=[ibcheck.Bound("r", "O", latex=r"c_{\mathrm{max}} d")])


@pytest.mark.parametrize("reference", ["d=100", 5, [("a",)], {"a": 1}])
def test_a_reference_that_is_not_name_text_pairs_is_refused_when_built(reference):
    """Second pass of issue 58: reference="..." (a string) was accepted, then `ibcheck bounds` crashed on dict(...)."""
    with pytest.raises(ibcheck.InputError, match=r"reference=.* is not a mapping of names to text"):
        ibcheck.Claim(id="REF26.thm.1", title="t", variables=["d"], bounds=[ibcheck.Bound("r", "O", "d")], reference=reference)
    ok = ibcheck.Claim(id="REF26.thm.2", title="t", variables=["d"], bounds=[ibcheck.Bound("r", "O", "d")], reference={"config": "d=3"})
    assert ok.reference == (("config", "d=3"),)


@pytest.mark.parametrize("definitions", ["q=d/k", [("q",)], {"q": ["d"]}, {"q": "import os"}, 5])
def test_definitions_that_are_not_name_formula_pairs_are_refused_when_built(definitions, isolated_registry):
    """Round 2 of issue 58's second pass: definitions={"q": "d/k"} was accepted, then `ibcheck bounds` crashed ("internal
    error: ValueError: not enough values to unpack"). A dict or pairs of (name, formula) are read; anything else is one
    line naming the value."""
    with pytest.raises(ibcheck.InputError, match=r"definitions"):
        ibcheck.Claim(id="DEF26.thm.1", variables=["d", "k"], bounds=[ibcheck.Bound("r", "O", "d")], definitions=definitions)
    ok = ibcheck.Claim(id="DEF26.thm.2", variables=["d", "k"], bounds=[ibcheck.Bound("r", "O", "d")], definitions={"q": "d/k"})
    ibcheck.register(ok)
    assert ok.definitions == (("q", sp.Symbol("d", positive=True) / sp.Symbol("k", positive=True)),)
    assert ibcheck.bounds("DEF26.thm.2").as_json()["definitions"] == {"q": "d/k"}
