"""The reference graph: nodes are document sections, edges are references (followed or skipped).

Rendered with pyvis with vis.js inlined (no CDN: the HTML works offline and inside JupyterLab);
every label and tooltip is HTML-escaped.
"""

from __future__ import annotations

import html
import re

import networkx as nx

TIER_COLOURS = {"primary": "#1b7837", "secondary": "#5aae61", "tertiary": "#a6dba0", "unresolved": "#bbbbbb"}
_TIER_RANK = {"primary": 0, "secondary": 1, "tertiary": 2}
_CDN_TAG = re.compile(r"<(?:link|script)[^>]+cdn\.jsdelivr\.net[^>]*>(?:\s*</script>)?", re.IGNORECASE)


def section_node(doc: str, section: str) -> str:
    return f"{doc} {section}".strip()


def reference_graph(edges: list[dict], chunks: list[dict]) -> nx.DiGraph:
    """Build the graph from reference edges and the context chunks (for tiers and pages)."""
    graph = nx.DiGraph()
    tiers: dict[str, str] = {}
    pages: dict[str, set[int]] = {}
    for chunk in chunks:
        node = section_node(chunk["document"], chunk.get("section", ""))
        tier = chunk.get("tier", "tertiary")
        if node not in tiers or _TIER_RANK[tier] < _TIER_RANK[tiers[node]]:
            tiers[node] = tier
        pages.setdefault(node, set()).add(int(chunk.get("page", 0)))

    def add_node(node: str, doc: str, section: str) -> None:
        if node not in graph:
            graph.add_node(node, doc=doc, section=section, tier=tiers.get(node, "unresolved"),
                           pages=sorted(pages.get(node, set())))

    for edge in edges:
        source = section_node(edge.get("from_doc", ""), edge.get("from_section", ""))
        add_node(source, edge.get("from_doc", ""), edge.get("from_section", ""))
        targets = list(zip(edge.get("to_docs", []), edge.get("to_sections", []), strict=False))
        if not targets:
            targets = [("", edge["target"])]
        for doc, section in dict.fromkeys(targets):
            target = section_node(doc, section)
            add_node(target, doc, section)
            graph.add_edge(source, target, type=edge["type"], target=edge["target"], decision=edge["decision"],
                           reason=edge.get("reason", ""), depth=edge.get("depth", 1), score=edge.get("score", 0.0),
                           resolution=edge.get("resolution", ""))
    return graph


def graph_html(graph: nx.DiGraph, height: str = "620px") -> str:
    """Self-contained interactive HTML of the graph."""
    from pyvis.network import Network

    network = Network(directed=True, cdn_resources="in_line", height=height, width="100%", bgcolor="#ffffff")
    for node, data in graph.nodes(data=True):
        pages = ", ".join(str(p) for p in data.get("pages", []) if p)
        tooltip = f"{node}\ntier: {data.get('tier')}" + (f"\npages: {pages}" if pages else "")
        network.add_node(node, label=html.escape(node), title=html.escape(tooltip),
                         color=TIER_COLOURS.get(data.get("tier", "unresolved"), "#bbbbbb"), shape="box")
    for source, target, data in graph.edges(data=True):
        followed = data["decision"] == "followed"
        tooltip = (f"{data['target']} ({data['type']}, depth {data['depth']})\n{data['decision']}: {data['reason']}"
                   f"\nresolution: {data.get('resolution') or '-'}")
        network.add_edge(source, target, label=html.escape(f"{data['type']} · {data['decision']}"),
                         title=html.escape(tooltip), dashes=not followed,
                         color="#1b7837" if followed else "#999999", arrows="to")
    network.set_options('{"physics": {"stabilization": {"iterations": 150}}, '
                        '"edges": {"font": {"size": 10, "align": "middle"}, "smooth": false}}')
    return _CDN_TAG.sub("", network.generate_html(notebook=False))


def graph_svg(graph: nx.DiGraph, width_px: int = 900, height_px: int = 520) -> str:
    """A static SVG of the graph (renders anywhere, also in untrusted notebooks and without a kernel)."""
    if graph.number_of_nodes() == 0:
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width_px}" height="60">'
                '<text x="10" y="35" font-family="sans-serif" font-size="14">(no references)</text></svg>')
    positions = nx.spring_layout(graph, seed=7) if graph.number_of_nodes() > 1 else {n: (0.0, 0.0) for n in graph}
    xs = [p[0] for p in positions.values()]
    ys = [p[1] for p in positions.values()]
    margin = 90

    def scale(value: float, low: float, high: float, size: int) -> float:
        return margin + (value - low) / ((high - low) or 1.0) * (size - 2 * margin)

    points = {n: (scale(x, min(xs), max(xs), width_px), scale(y, min(ys), max(ys), height_px))
              for n, (x, y) in positions.items()}
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="reference-graph" width="{width_px}" '
             f'height="{height_px}" font-family="sans-serif" font-size="11">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker></defs>']
    for source, target, data in graph.edges(data=True):
        (x1, y1), (x2, y2) = points[source], points[target]
        followed = data["decision"] == "followed"
        dash = "" if followed else ' stroke-dasharray="5,4"'
        colour = "#1b7837" if followed else "#999999"
        parts.append(f'<line x1="{x1:.0f}" y1="{y1:.0f}" x2="{x2:.0f}" y2="{y2:.0f}" stroke="{colour}" '
                     f'stroke-width="1.5"{dash} marker-end="url(#arrow)"><title>'
                     f'{html.escape(data["target"])}: {html.escape(data["decision"])} — {html.escape(data["reason"])}'
                     '</title></line>')
    for node, data in graph.nodes(data=True):
        x, y = points[node]
        label = node if len(node) <= 34 else node[:33] + "…"
        box = 7 * len(label) + 12
        colour = TIER_COLOURS.get(data.get("tier", "unresolved"), "#bbbbbb")
        parts.append(f'<g><title>{html.escape(node)} ({html.escape(data.get("tier", ""))})</title>'
                     f'<rect x="{x - box / 2:.0f}" y="{y - 11:.0f}" width="{box}" height="22" rx="4" '
                     f'fill="{colour}" stroke="#333"/><text x="{x:.0f}" y="{y + 4:.0f}" text-anchor="middle">'
                     f'{html.escape(label)}</text></g>')
    parts.append("</svg>")
    return "".join(parts)
