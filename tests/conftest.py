import contextlib
import io
import os
import subprocess
import sys
from dataclasses import dataclass

import pytest
from hypothesis import settings

# property tests draw the same examples on every run (make test is deterministic): a failing example is found by a
# deliberate search (HYPOTHESIS_PROFILE=explore), never by chance in CI
settings.register_profile("ci", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("IBCHECK_DASK_TIMEOUT", "2s")  # the unreachable-scheduler tests wait this long, not 10 s
if os.environ.get("PYTEST_XDIST_WORKER"):
    # one thread per test process: pytest-xdist already runs a process per core, and BLAS, torch
    # and the solvers each starting a thread per core would oversubscribe them (and time unevenly)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS"):
        os.environ.setdefault(var, "1")


def pytest_configure(config):
    if os.environ.get("PYTEST_XDIST_WORKER"):
        import torch

        torch.set_num_threads(1)


@dataclass
class CliResult:
    """What a finished ``ibcheck`` call left: the same fields as ``subprocess.CompletedProcess``."""

    args: list
    returncode: int
    stdout: str
    stderr: str


@contextlib.contextmanager
def _process_state_restored():
    """The registry, the environment, the working directory and torch's default dtype as they were:
    an in-process ``ibcheck`` call leaves nothing behind for the next test."""
    from ibcheck.theory import registry as R

    env, cwd = dict(os.environ), os.getcwd()
    torch = sys.modules.get("torch")
    dtype = torch.get_default_dtype() if torch is not None else None
    try:
        with R.using(R.current().copy()):  # the call's own registry: its claims and experiments go with it
            yield
    finally:
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)
        if dtype is not None:
            torch.set_default_dtype(dtype)


def run_cli(*args, check_rc=None, env=None):
    """Run ``ibcheck`` in this process (``ibcheck.cli.main``), from the repository root, with its
    output captured. The subprocess path (the installed entry point) is tested where it is the
    point: Ctrl-C, kill -9, spawned workers and the namespace test."""
    from ibcheck.cli import main

    out, err = io.StringIO(), io.StringIO()
    with _process_state_restored(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        os.chdir(ROOT)
        os.environ.update(env or {})
        try:
            rc = main([str(a) for a in args])
        except SystemExit as stop:  # argparse's usage errors and --help
            rc = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 2)
    res = CliResult(list(args), int(rc), out.getvalue(), err.getvalue())
    if check_rc is not None:
        assert res.returncode == check_rc, (res.returncode, res.stdout[-2000:], res.stderr[-2000:])
    return res


def run_cli_subprocess(*args, check_rc=None, env=None, timeout=120):
    """Run the installed ``ibcheck`` entry point as a separate process, as a user would."""
    exe = os.path.join(os.path.dirname(sys.executable), "ibcheck")
    cmd = [exe, *args] if os.path.exists(exe) else [sys.executable, "-m", "ibcheck.cli", *args]
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=timeout, env={**os.environ, **(env or {})})
    if check_rc is not None:
        assert res.returncode == check_rc, (res.returncode, res.stdout[-2000:], res.stderr[-2000:])
    return res


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def isolated_registry():
    """Claims and experiments a test registers (ibcheck.load_claims) are gone after it."""
    with _process_state_restored():
        yield


@pytest.fixture
def float64_default():
    """torch's default dtype set to float64 for one test, then restored."""
    import torch

    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(old)


@pytest.fixture(autouse=True)
def _own_registry():
    """Every test registers its claims and experiments in a copy of the registry: a claim built by one test (``Claim``
    registers itself) never shows in another's (the claim graph's 45 nodes were 50 after a test registered five)."""
    from ibcheck.theory import registry as R

    with R.using(R.current().copy()):
        yield


def file_digests(out) -> dict:
    """Every file under ``out`` and the sha256 of its bytes (to assert that a refused command touched nothing)."""
    import hashlib

    found = {}
    for d, _, names in os.walk(out):
        for n in names:
            p = os.path.join(d, n)
            with open(p, "rb") as f:
                found[os.path.relpath(p, out)] = hashlib.sha256(f.read()).hexdigest()
    return found


def refused_in_one_line(res, *words):
    """A CLI result refused as bad input: exit 2, one line on stderr with every one of ``words``, no traceback."""
    assert res.returncode == 2, (res.stdout[-500:], res.stderr[-500:])
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr, res.stderr
    for w in words:
        assert w in res.stderr, res.stderr
