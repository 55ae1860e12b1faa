"""One namespace: the installed distribution puts only ``ibcheck`` at the top level."""
import importlib.metadata
import re
import subprocess
import sys


def test_only_ibcheck_is_installed_at_the_top_level():
    # the installed distribution (not the egg-info an editable build leaves in the checkout)
    dists = [d for d in importlib.metadata.distributions()
             if d.metadata["Name"] == "ibcheck" and "site-packages" in str(getattr(d, "_path", ""))]
    assert len(dists) == 1, dists
    dist = dists[0]
    assert dist.read_text("top_level.txt").split() == ["ibcheck"]
    for f in dist.files:
        text = str(f)
        if text.endswith("_finder.py"):  # an editable install: its module map names every package
            mapping = f.read_text()
            names = set(re.findall(r"'([\w.]+)': '", mapping))
            assert names and all(n == "ibcheck" or n.startswith("ibcheck.") for n in names), names
        top = text.split("/")[0]
        assert top in ("..", "ibcheck") or top.startswith(("ibcheck-", "__editable__", "__pycache__")) \
            or text.startswith("__editable___ibcheck"), text


def test_layers_import_as_ibcheck_subpackages_and_not_at_the_top_level(tmp_path):
    code = ("import importlib.util, ibcheck.theory, ibcheck.solvers, ibcheck.simulate; "
            "print([importlib.util.find_spec(n) is None for n in ('theory', 'solvers', 'simulate')])")
    res = subprocess.run([sys.executable, "-c", code], cwd=str(tmp_path), capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[True, True, True]"  # outside the checkout, no generic top-level names
