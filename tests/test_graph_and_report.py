import os

from ibcheck.simulate.report.figures import scaling_report
from ibcheck.theory.graph import claim_graph, conclusions_at, rests_on, to_dot, to_mermaid


def test_edges_listed_in_theory_md():
    g = claim_graph()
    want = [
        ("FVBS23.cor.nonrobust_gf", "LL20.thm.kkt", "uses"),
        ("VYS22.thm.main", "LL20.thm.kkt", "uses"),
        ("FVBS23.cor.nonrobust_gf", "FVBS23.thm.3_1", "uses"),
        ("FVBS23.cor.nonrobust_gf", "FVBS23.thm.4_1", "uses"),
        ("FVBS23.cor.nonrobust_gf", "FVBS23.thm.4_2", "uses"),
        ("FVBS23.thm.4_2", "VYS22.thm.main", "generalizes"),
        ("FVBS23.rem.generalizes_VYS22", "VYS22.thm.main", "generalizes"),
        ("LPLL25.thm.nonrobust", "LPLL25.thm.feature_averaging", "uses"),
        ("LPLL25.thm.nonrobust", "LPLL25.prop.robust_exists", "compared-with"),
        ("LPLL25.thm.nonrobust", "LPLL25.thm.5_5", "compared-with"),
        ("LPLL25.thm.feature_averaging", "MV24.conj", "resolves"),
        ("LPLL25.prop.robust_exists", "SOK17.lemma.lipschitz_radius", "uses"),
    ]
    for u, v, r in want:
        assert g.has_edge(u, v) and g.edges[u, v]["relation"] == r, (u, v, r)
    assert len(g) == 45


def test_rests_on_is_transitive():
    deps = rests_on("FVBS23.cor.nonrobust_gf")
    assert "LL20.def.P" in deps  # via FVBS23.thm.4_2 -> LL20.def.P
    assert "FVBS23.cor.nonrobust_gf" not in deps


def test_conclusions_follow_only_when_the_chain_holds():
    ok = conclusions_at({"d": "100000", "k": "10", "n": "10000", "eps": "0.1", "delta": "0.1"}, ["FVBS23.thm.4_2"])[0]
    assert ok.follows is True
    bad = conclusions_at({"d": "500", "k": "10", "n": "10000", "eps": "0.1", "delta": "0.1"}, ["FVBS23.thm.4_2"])[0]
    assert bad.follows is False and bad.failed
    # The corollary rests on the unverified assumption, whose variables are not given.
    und = conclusions_at({"d": "100000", "k": "10", "n": "10000", "eps": "0.1", "delta": "0.1"}, ["FVBS23.cor.nonrobust_gf"])[0]
    assert und.follows is None and any("FVBS23.asm.2_2" in u for u in und.undetermined)


def test_exports():
    g = claim_graph()
    dot, mer = to_dot(g), to_mermaid(g)
    assert dot.count("->") == g.number_of_edges()
    assert mer.count("|uses|") == sum(1 for *_, r in g.edges(data="relation") if r == "uses")


def test_scaling_report_writes_markdown_and_pngs(tmp_path):
    path = scaling_report(["FVBS23.thm.4_2", "LPLL25.thm.nonrobust", "LPLL25.prop.robust_exists"], str(tmp_path))
    text = open(path).read()
    assert "FVBS23.thm.4_2" in text and r"\sqrt{k}" in text
    pngs = [f for f in os.listdir(tmp_path) if f.endswith(".png")]
    assert "gap_sqrt_k.png" in pngs and "window_FVBS23.thm.4_2_vs_n.png" in pngs
    assert "bound_FVBS23.thm.4_2.png" in pngs
    for f in pngs:
        assert open(tmp_path / f, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    # Every PNG the Markdown names exists.
    import re
    for name in re.findall(r"\]\(([^)]+\.png)\)", text):
        assert name in pngs


def test_an_html_page_links_the_html_of_a_sibling_report(tmp_path):
    """The probability claim's report links its base claim's report.md in a sibling folder; its HTML must link the
    report.html there (a browser shows .md raw). Nothing beyond the parent folder is rewritten."""
    from ibcheck.simulate.report.figures import markdown_to_html

    (tmp_path / "r" / "a").mkdir(parents=True)
    (tmp_path / "r" / "b").mkdir()
    (tmp_path / "r" / "b" / "report.html").write_text("<html></html>")
    (tmp_path / "x.html").write_text("<html></html>")  # beyond the parent folder r/: left as it is
    html = markdown_to_html("[base](../b/report.md) and [far](../../x.md)", str(tmp_path / "r" / "a"), ())
    assert 'href="../b/report.html"' in html and 'href="../../x.md"' in html


def test_the_forest_plot_keeps_its_longest_label_inside_the_saved_png():
    """The index's forest plot, saved at 110 dpi, keeps every y label inside the image. Its layout used to be measured
    at 100 dpi, where hinted 7 pt glyphs are narrower, and the longest label (SSTTM18.cor.robust_lower's, with its
    correction) lost about ten characters at the left edge of the PNG."""
    import math

    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from ibcheck.simulate.report.figures import SAVE_DPI, ForestRow, forest_figure
    from ibcheck.simulate.verdict.analysis import analyze

    rng = np.random.default_rng(0)
    rows = [{"d": d, "k": k, "seed": s, "value": math.sqrt(d / k) * math.exp(0.1 * rng.standard_normal())}
            for d in (64, 128, 256, 512) for k in (2, 4, 8) for s in range(3)]
    ft = analyze(rows, ["d", "k"], "Theta", {"d": 0.5, "k": -0.5}, bootstrap=False, extrapolate=False).function
    forest = [ForestRow(f"LPLL25.thm.nonrobust{i}", "flip_radius_median", "consistent", True, ft) for i in range(13)]
    forest.append(ForestRow("SSTTM18.cor.robust_lower", "robust_sample_threshold: d [levels off with +g(x)^-0.75]", "consistent", True, ft))
    fig = forest_figure(forest)
    fig.set_dpi(SAVE_DPI)  # measured as the PNG is written
    renderer = FigureCanvasAgg(fig).get_renderer()
    assert min(t.get_window_extent(renderer).x0 for t in fig.axes[0].get_yticklabels()) >= 0


def test_the_index_says_a_search_found_one_point_not_that_a_sample_holds_one():
    """With no second point to transfer to, the index's note must not claim the sample holds one point (at k = 8 the
    quick search finds one where the recall's reference knows up to 13): it says what the search found."""
    from types import SimpleNamespace

    from ibcheck.simulate.report.index import _claim_notes

    cell = SimpleNamespace(pairs=0, own_lcb=0.88, fresh_points=2000, controls={}, near_kkt=None, resolution=None, shortenings=())
    rec = SimpleNamespace(reading=None, kkt=SimpleNamespace(transfer=[cell, cell], half=None))
    text = " ".join(_claim_notes("FVBS23.thm.4_2", rec))
    assert "transferability: not tested" in text and "found one distinct certified KKT point on every sample" in text
    assert "holds one distinct" not in text and "not evidence that a sample holds one" in text
