"""Reports carry only what they wrote (issue 26, section 7): user text is escaped, only the report's own images
are inlined, and file names from user text stay inside the output directory."""
from __future__ import annotations

import base64
import os

import ibcheck
from ibcheck.simulate.report.figures import markdown_to_html
from ibcheck.theory.result import markdown_text

SECRET = "SECRET-TOKEN-7f3a"


def _csv(path: str) -> None:
    rows = ["d,seed,value"]
    for d in (64, 128, 256, 512):
        for s in range(3):
            rows.append(f"{d},{s},{d ** 0.5 * (1 + 0.01 * s)}")
    with open(path, "w") as f:
        f.write("\n".join(rows) + "\n")


def test_a_data_path_that_spells_an_image_does_not_carry_a_file_into_the_report(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    data = f"{tmp_path}/![x]({secret})/d.csv"  # the issue's ./![x](/etc/hostname)/d.csv, with a file of our own
    os.makedirs(os.path.dirname(data))
    _csv(data)
    out = tmp_path / "v"
    res = ibcheck.verdict(data, predict="d=1/2", kind="Theta")
    files = res.save(str(out))
    page = open(files["html"]).read()
    for leaked in (SECRET, base64.b64encode(SECRET.encode()).decode(), base64.b64encode(secret.read_bytes()).decode()[:12]):
        assert leaked not in page
    assert f'src="{secret}"' not in page  # not even as a link to the file
    md = open(files["markdown"]).read()
    assert f"![x]({secret})" not in md and r"!\[x\](" in md  # shown as the literal text it is


def test_only_the_reports_own_images_are_inlined(tmp_path):
    (tmp_path / "own.png").write_bytes(b"\x89PNG own")
    (tmp_path / "other.png").write_bytes(b"\x89PNG other")
    html = markdown_to_html("![a](own.png) ![b](other.png) ![c](../x.png)", str(tmp_path), images={"own.png"})
    assert base64.b64encode(b"\x89PNG own").decode() in html
    assert base64.b64encode(b"\x89PNG other").decode() not in html


def test_markdown_text_escapes_every_syntax_character():
    s = markdown_text("a*b_c [l](u) ![i](p) `x` <b> | O(sqrt(d/k))\nnext")
    assert s == r"a\*b\_c \[l\](u) !\[i\](p) \`x\` \<b\> \| O(sqrt(d/k)) next"
    assert "<img" not in markdown_to_html(s, ".") and "<a " not in markdown_to_html(s, ".")


def test_a_pipe_inside_a_table_cell_does_not_shift_the_columns():
    from ibcheck.theory.result import markdown_table

    md = markdown_table([{"cell": "d=256", "norms": "12.8 | 12.7", "own": "0.890"}])
    row = md.splitlines()[-1]
    cells = [c.strip() for c in row.strip("|").split(" | ")]
    assert cells == ["d=256", "12.8 \\| 12.7", "0.890"]


def test_text_from_a_claim_is_drawn_as_written_in_figures_never_as_mathtext(tmp_path):
    """A bound quantity or title with an unbalanced ``$`` (``cost_$x^{``) reached a matplotlib title as mathtext, and
    the layout raised "internal error": exit 1, no report. Titles, axis labels, legend entries and the forest plot's row
    labels are now drawn as written; a log axis keeps its mathtext tick labels."""
    from ibcheck.simulate.report.figures import save_figure, series_figure
    from ibcheck.theory.atomic import save_figure_file
    from ibcheck.theory.result import new_figure

    payload = "cost_$x^{ and $\\frac{1"
    fig = series_figure({payload: [(1.0, 2.0), (10.0, 3.0)]}, payload, payload, payload)
    save_figure_file(fig, str(tmp_path / "a.png"))
    ax = fig.axes[0]
    assert ax.get_title() == payload and not ax.title.get_parse_math() and not ax.xaxis.label.get_parse_math()
    assert all(not t.get_parse_math() for t in ax.get_legend().get_texts())
    assert (tmp_path / "a.png").stat().st_size > 1000
    fig2, ax2 = new_figure()
    ax2.plot([1, 100], [1, 2], label=payload)
    ax2.set_xscale("log")
    save_figure(fig2, ax2, str(tmp_path / "b.png"), payload)
    assert (tmp_path / "b.png").exists()
    assert all(t.get_parse_math() for t in ax2.get_xticklabels())  # 10^k ticks stay mathtext
