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


IMG = "![p](http://evil.example/x.png)"
LINK = "[c](https://evil.example/)"
PAYLOADS = [IMG, LINK, "a`b<script>alert(1)</script>`", "\u202efdp.exe", "bell\x07", "<img src=x onerror=alert(1)>"]


def _live(text: str, markdown: bool) -> list[str]:
    """What in a generated page could load or run something: external URLs in src/href attributes, on* attributes,
    raw script tags, (in Markdown) live images or links to a URL, raw control or bidi characters."""
    import re

    if markdown:  # code spans are literal text, and so is an escaped "\<"
        text = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", text)
        text = text.replace("\\<", "")
    bad = re.findall(r"(?:src|href)\s*=\s*[\"']?(?:https?:|//|javascript:)[^\"'\s>]*", text, flags=re.I)
    bad += re.findall(r"<[a-z][^>]*\son[a-z]+\s*=", text, flags=re.I)
    bad += re.findall(r"<script\b", text, flags=re.I)
    if markdown:
        bad += re.findall(r"(?<!\\)!\[[^\]]*\]\((?:https?:|//)", text)
        bad += re.findall(r"(?<![\\!])\[[^\]]*\]\((?:https?:|//|javascript:)", text)
    bad += re.findall("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u202a-\u202e\u2066-\u2069]", text)
    return bad


def test_a_report_with_payloads_in_every_field_loads_nothing_from_outside(tmp_path, isolated_registry):
    """Issue 58, item 1: a hypothesis name, a bound quantity, a reading, a title, a paper and a note written as a
    Markdown image, a link, a code-span breakout with a script, right-to-left and bell characters and an HTML tag:
    no .md or .html page of the comparison carries a live image, link, script, on* attribute or control character
    (the Markdown image became a live <img> in report.html, and a backtick in a reading broke out of its code span)."""
    claim = ibcheck.Claim(id="INJ26.thm.1", title=" ".join(PAYLOADS), paper=IMG, note=LINK, variables=["d"],
                          readings=(PAYLOADS[2], PAYLOADS[3] + PAYLOADS[4]),
                          hypotheses={IMG.replace("!", "H"): "d >= 2"},
                          bounds=[ibcheck.Bound("r" + IMG, "Theta", "sqrt(d)", reading=PAYLOADS[2]),
                                  ibcheck.Bound("s", "Theta", "sqrt(d)", reading=PAYLOADS[3] + PAYLOADS[4])])
    ibcheck.register(claim)

    @ibcheck.experiment("INJ26.thm.1", grid={"d": [64, 128, 256, 512]}, seeds=2)
    def measure(cell, seed):
        return {"r" + IMG: cell["d"] ** 0.5 * (1 + 0.01 * seed), "s": cell["d"] ** 0.5 * (1 + 0.02 * seed)}

    c = ibcheck.compare("INJ26.thm.1", progress=False)
    out = tmp_path / "out"
    c.save(str(out))
    pages = [os.path.join(d, f) for d, _, fs in os.walk(out) for f in fs if f.endswith((".md", ".html"))]
    assert pages
    for page in pages:
        text = open(page, encoding="utf-8").read()
        assert _live(text, page.endswith(".md")) == [], (page, _live(text, page.endswith(".md"))[:5])
    md = open(out / "report.md", encoding="utf-8").read()
    assert "\\u202e" in md and "\\u0007" in md  # shown as what they are, not acted on


def test_the_html_renderer_drops_images_and_links_that_leave_the_report(tmp_path):
    html = markdown_to_html(f"{IMG} {LINK} [ok](page.md)", str(tmp_path))
    assert "evil.example" not in html.split("[image:")[0] and "<img" not in html and 'href="https' not in html
    assert 'href="page.md"' in html


def test_a_code_span_holds_any_backticks():
    from ibcheck.theory.result import markdown_code

    html = markdown_to_html("x " + markdown_code("a`b``c<script>") + " y", ".")
    assert "<script>" not in html and "<code>a`b``c&lt;script&gt;</code>" in html


def test_control_and_bidi_characters_reach_the_terminal_escaped(tmp_path, cli, isolated_registry):
    """Issue 58, item 1, the terminal: a claim's title with a right-to-left override and a bell, listed and stated,
    prints them as escapes, never as the characters (which reorder the line, or ring)."""
    p = tmp_path / "c.py"
    p.write_text('import ibcheck\nibcheck.Claim(id="BIDI26.thm.1", title="safe \\u202efdp.exe \\x07 zero\\u200bwidth", variables=["d"], '
                 'bounds=[ibcheck.Bound("r", "O", "sqrt(d)")])\n')
    for args in (["--claims", str(p), "claims"], ["--claims", str(p), "bounds", "BIDI26.thm.1"]):
        res = cli(*args, check_rc=0)
        assert "\u202e" not in res.stdout and "\x07" not in res.stdout and "\u200b" not in res.stdout, res.stdout
    assert "\\u202e" in cli("--claims", str(p), "claims").stdout and "zero\\u200bwidth" in cli("--claims", str(p), "claims").stdout


def test_control_and_bidi_characters_in_a_figure_title_are_drawn_as_escapes(tmp_path):
    """Issue 58, item 1, plot titles: a claim title with a bell reached a matplotlib title ("Glyph 7 missing")."""
    import warnings

    from ibcheck.simulate.report.figures import save_figure, series_figure

    fig = series_figure({"a": [(1.0, 2.0), (10.0, 3.0)]}, "x", "y", "t\x07 \u202efdp")
    ax = fig.axes[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing glyph is a UserWarning
        save_figure(fig, ax, str(tmp_path / "t.png"), "bell\x07 \u202efdp")
    assert ax.get_title() == "bell\\u0007 \\u202efdp"


def test_a_hypothesis_name_with_backticks_or_dollars_stays_literal_in_every_table(tmp_path, isolated_registry):
    """The second pass (issue 58, round 2): a hypothesis named ``H`tick` $\\alpha$`` became a live code span in the
    per-cell table of report.md (``<th>H<code>tick</code>``) and in scaling.md's window table, though the
    "Hypotheses:" line beside it escaped the same name; ``$..$`` stayed as GitHub reads math. Every page of a
    comparison, a verdict on a CSV and the scaling report now show the name as written."""
    name = "H`tick` $\\alpha$"
    claim = ibcheck.Claim(id="TCK26.thm.1", variables=["d", "k"], hypotheses={name: r"k \leq \sqrt{d}"},
                          bounds=[ibcheck.Bound("radius", "O", "sqrt(d/k)")])
    ibcheck.register(claim)
    rows = ["d,k,seed,value"] + [f"{d},{k},{s},{(d / k) ** 0.5 * (1 + 0.01 * s)}" for d in (64, 128, 256, 512)
                                 for k in (2, 4, 8) for s in range(2)]
    (tmp_path / "data.csv").write_text("\n".join(rows) + "\n")
    ibcheck.verdict(str(tmp_path / "data.csv"), claim="TCK26.thm.1", plan_trials=0).save(str(tmp_path / "v"))
    ibcheck.scaling_report(str(tmp_path / "s"), claims=["TCK26.thm.1"])
    pages = [os.path.join(d, f) for d, _, fs in os.walk(tmp_path) for f in fs if f.endswith((".md", ".html"))]
    assert any(p.endswith("scaling.md") for p in pages) and any(p.endswith("report.html") for p in pages)
    for page in pages:
        text = open(page, encoding="utf-8").read()
        html = text if page.endswith(".html") else markdown_to_html(text, ".")
        assert "<code>tick</code>" not in html, page
        if page.endswith(".md"):
            assert "$\\alpha$" not in text, page  # written \$\alpha\$: no math in a Markdown viewer
