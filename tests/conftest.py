import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_cli(*args, check_rc=None):
    """Run the installed ``ibcheck`` entry point (as a user would) and return the result."""
    exe = os.path.join(os.path.dirname(sys.executable), "ibcheck")
    cmd = [exe, *args] if os.path.exists(exe) else [sys.executable, "-m", "ibcheck.cli", *args]
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=120)
    if check_rc is not None:
        assert res.returncode == check_rc, (res.returncode, res.stdout[-2000:], res.stderr[-2000:])
    return res


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def float64_default():
    """torch's default dtype set to float64 for one test, then restored."""
    import torch

    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(old)
