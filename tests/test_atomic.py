"""Every output is written whole or not at all: a kill -9 during writing leaves the old file or the new one."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from ibcheck.theory.atomic import save_npz, write_json

WRITER = """
import sys
sys.path.insert(0, {root!r})
from ibcheck.theory.atomic import write_json
big = ["x" * 1000] * 4000   # about 4 MB of JSON per write
i = 0
while True:
    write_json({path!r}, {{"version": i % 2, "data": big}})
    i += 1
"""


def test_kill_during_writing_leaves_a_whole_file(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = tmp_path / "summary.json"
    write_json(str(path), {"version": "old", "data": []})
    script = tmp_path / "writer.py"
    script.write_text(WRITER.format(root=root, path=str(path)))
    seen = set()
    for delay in (0.0, 0.013, 0.031, 0.057, 0.089, 0.2):
        before = path.stat().st_mtime_ns
        proc = subprocess.Popen([sys.executable, str(script)])
        t0 = time.time()
        while path.stat().st_mtime_ns == before and time.time() - t0 < 60:  # the writer is running
            time.sleep(0.002)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        obj = json.loads(path.read_text())  # never half a file: this parses
        assert obj["version"] in ("old", 0, 1)
        assert obj["version"] == "old" or len(obj["data"]) == 4000
        seen.add(obj["version"])
    assert seen & {0, 1}  # the writer did replace the file while it was being killed
    # interrupted temp files are dot-files no reader opens
    assert all(p.name.startswith(".ibcheck-") for p in tmp_path.iterdir() if p.name not in ("summary.json", "writer.py"))


def test_a_failing_write_keeps_the_old_file(tmp_path):
    path = tmp_path / "a.json"
    write_json(str(path), {"ok": 1})
    class Unwritable:
        def __str__(self):
            raise TypeError("cannot be written")

    with pytest.raises(TypeError):
        write_json(str(path), {"bad": Unwritable()})
    assert json.loads(path.read_text()) == {"ok": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]  # no temp left behind


def test_npz_keeps_its_name(tmp_path):
    import numpy as np

    save_npz(str(tmp_path / "w.npz"), a=np.arange(3))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.npz"]
    with np.load(tmp_path / "w.npz") as z:
        assert z["a"].tolist() == [0, 1, 2]
