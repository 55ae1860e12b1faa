"""The claim graph: a networkx DiGraph over every claim id.

Edges point from a claim to what it relates to, with ``relation`` one of ``uses``,
``generalizes``, ``compared-with`` and ``resolves`` (as listed in THEORY.md, plus each
claim's own definitions and assumptions).
"""
from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import Mapping

import networkx as nx

from .atomic import FIGURE_DPI, literal_text
from .claim import Claim
from .evaluate import evaluate_claim, make_point
from .registry import all_claims, get_claim

RELATIONS = ("uses", "generalizes", "compared-with", "resolves")
_STYLE = {"uses": "solid", "generalizes": "bold", "compared-with": "dashed", "resolves": "dotted"}


def claim_graph(claims: list[Claim] | None = None) -> nx.DiGraph:
    """Every claim as a node (with status, kind, title), every relation as a labelled edge."""
    claims = claims if claims is not None else all_claims()
    g = nx.DiGraph()
    for c in claims:
        g.add_node(c.id, title=c.title, status=c.status, kind=c.kind, unverified=c.unverified)
    for c in claims:
        for rel, targets in (("uses", c.uses), ("generalizes", c.generalizes), ("compared-with", c.compared_with), ("resolves", c.resolves)):
            for t in targets:
                if t not in g:
                    raise ValueError(f"{c.id} {rel} unknown claim {t}")
                g.add_edge(c.id, t, relation=rel)
    return g


def rests_on(claim_id: str, g: nx.DiGraph | None = None) -> list[str]:
    """Every claim that ``claim_id`` rests on, following ``uses`` edges transitively."""
    g = g if g is not None else claim_graph()
    get_claim(claim_id)
    uses = nx.DiGraph((u, v) for u, v, r in g.edges(data="relation") if r == "uses")
    uses.add_nodes_from(g)
    return sorted(nx.descendants(uses, claim_id))


@dataclass
class ChainStatus:
    """Whether a claim's conclusions follow at a point: every hypothesis along its ``uses`` chain."""

    claim: str
    follows: bool | None
    failed: list[str] = field(default_factory=list)
    undetermined: list[str] = field(default_factory=list)
    assumed: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        return {"claim": self.claim, "follows": self.follows, "failed": self.failed,
                "undetermined": self.undetermined, "assumed": self.assumed}


def conclusions_at(raw: Mapping[str, str], claims: list[str] | None = None) -> list[ChainStatus]:
    """For each claim, whether its conclusions follow at the point ``raw``.

    ``follows`` is True when every numeric hypothesis of the claim and of everything it rests
    on holds there, False when one fails (listed as ``CLAIM.H``), and None when a needed
    variable is not given. Qualitative hypotheses are listed as ``assumed``.
    Variables not used by a claim are ignored for that claim.
    """
    g = claim_graph()
    ids = claims or [c.id for c in all_claims()]
    out = []
    for cid in ids:
        chain = [cid] + rests_on(cid, g)
        st = ChainStatus(cid, True)
        for link in chain:
            c = get_claim(link)
            mine = {k: v for k, v in raw.items() if k in c.variable_names or k in c.constants}
            point = make_point(c, mine)
            for hv in evaluate_claim(c, point):
                tag = f"{link}.{hv.name}"
                if hv.qualitative:
                    st.assumed.append(f"{tag}: {hv.text}")
                elif hv.holds is False:
                    st.failed.append(tag)
                elif hv.holds is None:
                    st.undetermined.append(f"{tag} (needs {', '.join(hv.missing)})")
        st.follows = False if st.failed else (None if st.undetermined else True)
        out.append(st)
    return out


def to_dot(g: nx.DiGraph) -> str:
    lines = ["digraph claims {", '  rankdir=LR; node [shape=box, fontsize=10];']
    for n, a in g.nodes(data=True):
        color = {"exact": "black", "order": "blue", "ambiguous": "orange", "unverified": "red"}[a["status"]]
        label = n + ("\\n[unverified]" if a["unverified"] else "")
        lines.append(f'  "{n}" [label="{label}", color={color}];')
    for u, v, r in g.edges(data="relation"):
        lines.append(f'  "{u}" -> "{v}" [label="{r}", style={_STYLE[r]}];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_mermaid(g: nx.DiGraph) -> str:
    ids = {n: f"n{i}" for i, n in enumerate(g.nodes)}
    lines = ["graph LR"]
    for n, a in g.nodes(data=True):
        flag = " (unverified)" if a["unverified"] else ""
        lines.append(f'  {ids[n]}["{n}{flag}"]')
    for u, v, r in g.edges(data="relation"):
        arrow = "-.->" if r in ("compared-with", "resolves") else ("==>" if r == "generalizes" else "-->")
        lines.append(f"  {ids[u]} {arrow}|{r}| {ids[v]}")
    return "\n".join(lines) + "\n"


def to_json(g: nx.DiGraph) -> str:
    data = {
        "nodes": [{"id": n, **a} for n, a in g.nodes(data=True)],
        "edges": [{"source": u, "target": v, "relation": r} for u, v, r in g.edges(data="relation")],
    }
    return json.dumps(data, indent=2) + "\n"


def render_png(g: nx.DiGraph, path: str) -> str:
    """Render to PNG with graphviz ``dot`` when installed, else with matplotlib; returns the renderer."""
    dot = shutil.which("dot")
    if dot is not None:
        subprocess.run([dot, "-Tpng", "-o", path], input=to_dot(g).encode(), check=True)
        return "graphviz"
    import matplotlib  # heavy: matplotlib (loaded on first use)
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # heavy: matplotlib (loaded on first use)
    from matplotlib.lines import Line2D  # heavy: matplotlib (loaded on first use)

    # Layers by dependency depth: what a claim rests on stands to its right.
    g = g.copy()
    try:
        for depth, layer in enumerate(nx.topological_generations(g)):
            for n in layer:
                g.nodes[n]["layer"] = depth
    except nx.NetworkXUnfeasible:
        papers = sorted({n.split(".")[0] for n in g})
        for n in g:
            g.nodes[n]["layer"] = papers.index(n.split(".")[0])
    pos = nx.multipartite_layout(g, subset_key="layer", align="vertical")
    papers = sorted({n.split(".")[0] for n in g})
    cmap = plt.get_cmap("tab10")
    fig, ax = plt.subplots(figsize=(20, 13))
    colors = [cmap(papers.index(n.split(".")[0]) % 10) for n in g]
    edgecolors = [{"exact": "black", "order": "blue", "ambiguous": "orange", "unverified": "red"}[a["status"]] for _, a in g.nodes(data=True)]
    nx.draw_networkx_nodes(g, pos, node_color=colors, edgecolors=edgecolors, linewidths=2, node_size=260, ax=ax)
    nx.draw_networkx_labels(g, pos, font_size=7, ax=ax, verticalalignment="bottom")
    handles = []
    for rel in RELATIONS:
        edges = [(u, v) for u, v, r in g.edges(data="relation") if r == rel]
        style = _STYLE[rel].replace("bold", "solid")
        nx.draw_networkx_edges(g, pos, edgelist=edges, style=style, width=2.2 if rel == "generalizes" else 0.9,
                               alpha=0.55, arrows=True, ax=ax, connectionstyle="arc3,rad=0.08")
        handles.append(Line2D([0], [0], color="black", linestyle=style, lw=2.2 if rel == "generalizes" else 1, label=rel))
    handles += [Line2D([0], [0], marker="o", color="w", markerfacecolor=cmap(i % 10), markersize=9, label=p) for i, p in enumerate(papers)]
    ax.legend(handles=handles, loc="upper right", fontsize=8, ncol=2)
    ax.set_title("ibcheck claim graph: fill = paper; ring = status (black exact, blue order, orange ambiguous, red unverified); "
                 "edges point to what a claim rests on")
    ax.axis("off")
    literal_text(fig)
    fig.tight_layout()
    fig.savefig(path, dpi=FIGURE_DPI)
    plt.close(fig)
    return "matplotlib"
