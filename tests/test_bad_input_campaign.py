"""A bad-input campaign over every subcommand.

Every malformed value must end with exit status 2 and one line on stderr that names the value
(and, for a number, the accepted range), with no traceback, no output directory left behind, and
no change to existing results. The cases run in-process (``ibcheck.cli.main``) so that the
campaign stays fast; ``test_campaign_size`` pins how many distinct bad inputs it tries (the README
quotes the number).
"""
import hashlib
import os
import shutil

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ibcheck.cli import main

POS_INT = ["-1", "0", "1.5", "nan", "inf", "1e400", "abc", ""]
NONNEG_INT = ["-1", "1.5", "nan", "1e400", "abc", ""]
POS_FLOAT = ["-1", "0", "nan", "inf", "-inf", "1e400", "abc", ""]
NONNEG_FLOAT = ["-1", "nan", "inf", "-inf", "abc", ""]
FINITE_FLOAT = ["nan", "inf", "-inf", "abc", ""]

TRAIN = ["train", "--setting", "fa", "--d", "8", "--k", "2", "--n", "8", "--m", "2", "--steps", "2", "--quiet"]
KKT = ["kkt", "--setting", "sphere", "--d", "2", "--n", "6", "--width", "3", "--starts", "1"]
COMPARE = ["compare", "SSTTM18.cor.robust_upper", "--quick"]
CALIBRATE = ["calibrate", "--trials", "1"]
REPORT = ["report", "--only", "SSTTM18.cor.robust_upper"]

# (base command, flag, bad values); the base is valid and fast, with --out added where it writes
NUMERIC = [
    *[(TRAIN, f, POS_INT) for f in ("--d", "--k", "--n", "--m", "--seeds", "--n-test")],
    (TRAIN, "--steps", NONNEG_INT),
    *[(TRAIN, f, NONNEG_INT) for f in ("--seed0", "--checkpoints", "--data-seed")],
    *[(TRAIN, f, POS_FLOAT) for f in ("--lr", "--init-scale", "--max-seconds")],
    (TRAIN, "--sigma", NONNEG_FLOAT),
    (TRAIN, "--target-log10-loss", FINITE_FLOAT),
    *[(KKT, f, POS_INT) for f in ("--d", "--n", "--width", "--starts", "--max-patterns")],
    (KKT, "--sigma", NONNEG_FLOAT),
    (KKT, "--seed", NONNEG_INT),
    (COMPARE, "--seeds", POS_INT),
    (COMPARE, "--workers", POS_INT),
    (COMPARE, "--margin", POS_FLOAT),
    (COMPARE, "--budget", POS_FLOAT),
    (CALIBRATE, "--trials", POS_INT),
    (CALIBRATE, "--budget", POS_FLOAT),
    (CALIBRATE, "--seed", NONNEG_INT),
    (REPORT, "--workers", POS_INT),
    (REPORT, "--budget", POS_FLOAT),
]
RUN_FLAGS = [  # on a run directory
    (["radius", "{run}"], "--points", POS_INT),
    (["radius", "{run}"], "--seed", NONNEG_INT),
    (["radius", "{run}"], "--time-limit", POS_FLOAT),
    (["radius", "{run}"], "--flip-norm", POS_FLOAT),
    (["kkt-check", "{run}"], "--seed", NONNEG_INT),
]
POINT_VALUES = [  # values inside --at / --constants / --grid / --predict strings
    (["bounds", "FVBS23.thm.4_2", "--at"], "d=1000,k=10,n=100000,delta=0.1,eps={v}", ["-1", "0", "1", "1.5", "nan", "inf", "abc", ""]),
    (["bounds", "FVBS23.thm.4_2", "--at"], "d={v},k=10,n=100000,delta=0.1,eps=0.1", ["-5", "0", "1.5", "nan", "abc", ""]),
    (["window", "FVBS23.thm.4_2", "--free", "d", "--at"], "k=10,n={v},eps=0.1,delta=0.1", ["-5", "0", "2.5", "nan", "abc"]),
    (COMPARE + ["--grid"], "d={v}", ["0,1,2", "-1,2,3", "a,b,c", "1,1,2", "nan,1,2", "inf,1,2"]),
    (COMPARE + ["--constants"], "{v}", ["C=0", "C=-1", "C=nan", "C=abc", "Q=1", "C"]),
    (["verdict", "--data", "{csv}", "--kind", "Theta", "--predict"], "{v}", ["d=abc", "d=1/0", "d", "", "q=1/2"]),
]
FILES = [  # malformed files and directories
    (["radius", "{missing}"], "does not exist"),
    (["radius", "{emptydir}"], "not a run directory"),
    (["radius", "{file}"], "not a run directory"),
    (["kkt-check", "{corrupt_npz}"], "weights.npz"),
    (["radius", "{corrupt_npz}"], "weights.npz"),
    (["radius", "{corrupt_config}"], "config.json"),
    (["kkt-check", "{emptydir}"], "not a run directory"),
    (["kkt-check", "{corrupt_config}"], "config.json"),
    (["construct", "fvbs23", "--from", "{emptydir}"], "not a run directory"),
    (["construct", "fvbs23", "--from", "{corrupt_npz}"], "weights.npz"),
    (["verdict", "--claim", "LPLL25.thm.nonrobust", "--data", "{empty_csv}"], "is empty"),
    (["verdict", "--claim", "LPLL25.thm.nonrobust", "--data", "{truncated_csv}"], "row"),
    (["verdict", "--claim", "LPLL25.thm.nonrobust", "--data", "{emptydir}"], "no such file"),
    (COMPARE, "sweep.sqlite"),  # --out holds a corrupted database
]
IDS = [
    (["bounds", "FVBS23.thm.4_3"], "did you mean"),
    (["window", "NOPE.thm.1", "--free", "d", "--at", "k=10"], "unknown claim"),
    (["compare", "LL20.thm.ratez", "--quick"], "did you mean"),
    (["compare", "LL20.def.P", "--quick"], "has no experiment"),
    (["reproduce", "fa-synthetik", "--quick"], "fa-synthetic"),
    (["report", "--only", "NOPE.x"], "unknown claim"),
    (["verdict", "--data", "{csv}", "--claim", "NOPE.x"], "unknown claim"),
    (["verdict", "--data", "{csv_dn}", "--claim", "VYS22.thm.main", "--quantity", "nope"], "--quantity"),
    (["verdict", "--data", "{csv_dn}", "--claim", "VYS22.thm.main", "--quantity", "universal_flip_norm", "--reading", "nope"], "--reading"),
]
FORMULAS = [
    (["growth", "d+", "d"], "cannot parse the formula 'd+'"),
    (["growth", "d", "k", "--coupling", "k="], "cannot parse the formula"),
    (["growth", "d", "k", "--over", "d,q"], "variable 'q'"),
    (["scaling", "NOPE.x"], "unknown claim id 'NOPE.x'"),
    (["bounds", "FVBS23.thm.4_2", "--reading", "nope"], "nope"),
    (["graph", "--rests-on", "NOPE.x"], "NOPE.x"),
]
CONFLICTS = [
    (["verdict", "--data", "{csv}", "--claim", "LPLL25.thm.nonrobust", "--predict", "d=1/2"], "(claim, --claim) or a prediction"),
    (["verdict", "--data", "{csv}", "--claim", "LPLL25.thm.nonrobust", "--kind", "O"], "--kind O goes with predict (--predict)"),
    (["verdict", "--data", "{csv}"], "(claim, --claim) or a prediction"),
    (["compare", "SSTTM18.cor.robust_upper", "--quick", "--spending", "bonferroni"], "--spending"),
    (TRAIN + ["--data", "idx"], "--idx-images"),
    (["graph", "--format", "png"], "--out"),
]


def _cases():
    out = []
    for base, flag, values in NUMERIC:
        out += [("numeric", tuple(base), flag, v) for v in values]
    for base, flag, values in RUN_FLAGS:
        out += [("run", tuple(base), flag, v) for v in values]
    for base, template, values in POINT_VALUES:
        out += [("point", tuple(base), template, v) for v in values]
    out += [("file", tuple(a), "", w) for a, w in FILES]
    out += [("id", tuple(a), "", w) for a, w in IDS]
    out += [("formula", tuple(a), "", w) for a, w in FORMULAS]
    out += [("conflict", tuple(a), "", w) for a, w in CONFLICTS]
    return out


CASES = _cases()


def _digest(path) -> str:
    h = hashlib.sha256()
    for dirpath, dirnames, files in sorted(os.walk(path)):
        dirnames.sort()
        for f in sorted(files):
            p = os.path.join(dirpath, f)
            h.update(p.encode())
            with open(p, "rb") as fh:
                h.update(fh.read())
    return h.hexdigest()


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory):
    base = tmp_path_factory.mktemp("campaign")
    run = base / "run"
    assert main(TRAIN + ["--out", str(run)]) == 0
    paths = {"run": str(run), "missing": str(base / "missing"), "emptydir": str(base / "emptydir"), "file": str(base / "file.txt")}
    os.mkdir(paths["emptydir"])
    open(paths["file"], "w").write("not a run\n")
    for name, victim in (("corrupt_npz", "weights.npz"), ("corrupt_config", "config.json")):
        d = base / name
        shutil.copytree(run, d)
        data = open(d / victim, "rb").read()
        open(d / victim, "wb").write(data[: len(data) // 3])  # truncated
        paths[name] = str(d)
    paths["empty_csv"] = str(base / "empty.csv")
    open(paths["empty_csv"], "w").close()
    paths["truncated_csv"] = str(base / "trunc.csv")
    open(paths["truncated_csv"], "w").write("d,k,value\n64,2,1.0\n128,2,1.4\n256,")
    rng = np.random.default_rng(0)
    paths["csv"] = str(base / "ok.csv")
    with open(paths["csv"], "w") as f:
        f.write("d,k,n,value\n" + "".join(f"{d},{k},8,{(d / k) ** 0.5 * np.exp(0.05 * rng.standard_normal())}\n"
                                           for d in (64, 128, 256) for k in (2, 4, 8)))
    paths["csv_dn"] = str(base / "dn.csv")
    with open(paths["csv_dn"], "w") as f:
        f.write("d,n,value\n" + "".join(f"{d},{n},{(d / n) ** 0.5}\n" for d in (64, 128, 256) for n in (2, 4, 8)))
    return paths


def _run(argv, capsys):
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as e:  # argparse's own errors
        rc = e.code
    err = capsys.readouterr().err
    return rc, err


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}:{' '.join(c[1][:2])}:{c[2]}={c[3]!r}" for c in CASES])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(case, fixtures, tmp_path, capsys):
    kind, base, flag, value = case
    argv = [a.format(**fixtures) for a in base]
    out = tmp_path / "out"
    before = _digest(fixtures["run"])
    if kind in ("numeric", "run"):
        argv += [flag, value]
    elif kind == "point":
        argv.append(flag.format(v=value))
    if kind == "file" and base == tuple(COMPARE):
        out.mkdir()
        (out / "sweep.sqlite").write_bytes(b"this is not a database" * 100)
        corrupt_before = _digest(out)
    writes = argv[0] in ("train", "kkt", "compare", "calibrate", "report", "verdict", "reproduce", "construct", "scaling")
    if writes:
        argv += ["--out", str(out)]
    rc, err = _run(argv, capsys)
    lines = err.strip().splitlines()
    assert rc == 2, (argv, rc, err[-1500:])
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("ibcheck: error:")
    if kind in ("numeric", "run") and value not in ("",):
        named = value.replace("1e400", "inf")  # a float that overflows is named as what it parsed to
        assert value in lines[0] or named in lines[0], lines[0]
        assert flag in lines[0], lines[0]
    if kind in ("file", "id", "conflict", "formula"):
        assert value in lines[0], lines[0]
    if kind == "file" and base == tuple(COMPARE):
        assert _digest(out) == corrupt_before  # the existing (corrupted) results are left alone
    elif writes:
        assert not out.exists(), f"a partial output directory was left: {os.listdir(out)}"
    assert _digest(fixtures["run"]) == before  # existing results untouched


def test_campaign_size():
    """The README quotes this number: keep them in step."""
    assert len(CASES) == 336


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.floats(allow_nan=True, allow_infinity=True).filter(lambda x: not (0 < x < 1)),
                 st.text(alphabet="abcxyz,;= -+eE.", max_size=6).filter(lambda s: s.strip() not in ("",))))
def test_random_bad_eps_in_a_point(fixtures, capsys, x):
    """eps must be a number in (0, 1): anything else, drawn at random, is one line and exit 2."""
    text = repr(x) if isinstance(x, float) else x
    rc, err = _run(["bounds", "FVBS23.thm.4_2", "--at", f"d=1000,k=10,n=100000,delta=0.1,eps={text}"], capsys)
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, (text, err)


FLAG_KINDS = [  # (command, flag, kind) for the property test: cheap commands only
    (TRAIN, "--lr", "pos_float"), (TRAIN, "--sigma", "nonneg_float"), (TRAIN, "--d", "pos_int"), (TRAIN, "--seed0", "nonneg_int"),
    (KKT, "--width", "pos_int"), (KKT, "--sigma", "nonneg_float"), (CALIBRATE, "--budget", "pos_float"),
    (CALIBRATE, "--trials", "pos_int"), (COMPARE, "--margin", "pos_float"),
]


def _bad_for(kind):
    floats = st.floats(allow_nan=True, allow_infinity=True)
    words = st.text(alphabet="abcxyz,;=+_. ", min_size=1, max_size=6).filter(lambda t: t.strip() and t.strip() not in ("inf", "nan"))
    if kind == "pos_float":
        bad = floats.filter(lambda x: not (x > 0 and x == x and abs(x) != float("inf"))).map(repr)
    elif kind == "nonneg_float":
        bad = floats.filter(lambda x: not (x >= 0 and abs(x) != float("inf"))).map(repr)
    elif kind == "pos_int":
        bad = st.one_of(st.integers(max_value=0).map(str), floats.filter(lambda x: x != int(x) if x == x and abs(x) != float("inf") else True).map(repr))
    else:  # nonneg_int
        bad = st.one_of(st.integers(max_value=-1).map(str), floats.filter(lambda x: x != int(x) if x == x and abs(x) != float("inf") else True).map(repr))
    return st.one_of(bad, words)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.data())
def test_random_bad_numbers_on_every_kind_of_flag(fixtures, tmp_path_factory, capsys, data):
    base, flag, kind = data.draw(st.sampled_from(FLAG_KINDS))
    value = data.draw(_bad_for(kind))
    out = tmp_path_factory.mktemp("prop") / "out"
    rc, err = _run(list(base) + [flag, value, "--out", str(out)], capsys)
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, (flag, value, err)
    assert flag in err and not out.exists()
