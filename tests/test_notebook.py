"""examples/tour.ipynb runs top to bottom through the public API (nbclient, a real kernel); a
capability that breaks, or an assertion inside the tour that fails, fails this test."""
import os

import nbformat
from nbclient import NotebookClient

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_tour_notebook_executes(tmp_path):
    nb = nbformat.read(os.path.join(ROOT, "examples", "tour.ipynb"), as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    # every result cell displays as HTML: a table, and for the run, the radii and the comparison a plot
    assert len(html) >= 9
    assert sum("data:image/png;base64" in h for h in html) >= 4
