"""Bounded resources (issue 58, item 4): what `verdict --data` holds grows with the cells, not their square, and a
design past the limit is refused in one line that names it."""
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

import ibcheck


def test_the_bootstrap_over_cells_holds_batches_not_a_cells_by_cells_matrix():
    """The BCa interval's jackknife resamples every cell but one: unbatched, scipy holds a cells x cells index matrix and
    its data (3000 cells: 72 MB each; 10^4 cells took 2.1 GB). In batches of BCA_BATCH it holds BCA_BATCH x cells."""
    from ibcheck.simulate.stats.fit import _bca

    rng = np.random.default_rng(0)
    n = 3000
    X = np.column_stack([np.ones(n), rng.normal(size=n), rng.normal(size=n)])
    y = X @ [1.0, 0.5, -0.5] + 0.1 * rng.normal(size=n)
    tracemalloc.start()
    try:
        ci, note = _bca(X, y, ["d", "k"], 0.95, 0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert note is None and ci["d"][0] < 0.5 < ci["d"][1] and ci["k"][0] < -0.5 < ci["k"][1]
    assert peak < 20e6, peak  # a cells x cells matrix of indices alone is 72 MB


def test_a_verdict_on_your_measurements_never_loads_torch(tmp_path):
    """The verdict path is statistics and a report: torch (300 MB of a process's memory) is not imported."""
    path = tmp_path / "m.csv"
    rows = ["d,seed,value"] + [f"{d},{s},{(d ** 0.5) * (1 + 0.01 * s):.6g}" for d in (16, 32, 64, 128, 256) for s in range(3)]
    path.write_text("\n".join(rows) + "\n")
    code = ("import sys, ibcheck\n"
            f"r = ibcheck.verdict({str(path)!r}, predict='d=1/2', kind='Theta')\n"
            "print(r.record.bounds[0].verdict, 'torch' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-1] == "False", out.stdout


def test_more_cells_than_the_limit_are_refused_in_one_line_naming_it(tmp_path, monkeypatch):
    from ibcheck.simulate.compare import from_csv

    monkeypatch.setattr(from_csv, "MAX_CELLS", 4)
    path = tmp_path / "m.csv"
    path.write_text("d,seed,value\n" + "".join(f"{d},0,{d ** 0.5:.6g}\n" for d in (16, 32, 64, 128, 256)))
    with pytest.raises(ibcheck.InputError) as err:
        ibcheck.verdict(str(path), predict="d=1/2", kind="Theta")
    msg = str(err.value)
    assert "5 distinct cells" in msg and "at most 4" in msg and "\n" not in msg
