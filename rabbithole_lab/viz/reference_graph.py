"""The reference graph: nodes are document sections, edges are references (followed or skipped).

Laid out by depth, left to right: the question, the sections search found (entry), then what they cite,
level by level. Rendered with pyvis (vis.js inlined: no CDN, works offline and inside JupyterLab) and as
a static SVG from the same levels. Node colour is the context tier, the border is the collection; every
label and tooltip is HTML-escaped.
"""

from __future__ import annotations

import html
import json
import math
import re

import networkx as nx

from rabbithole_lab.evidence.reference_edges import reference_label, section_label, unresolved_references
from rabbithole_lab.messages.catalogue import graph_text, report_labels
from rabbithole_lab.messages.reasons import edge_reason, reached_by

TIER_COLOURS = {"primary": "#1b7837", "secondary": "#5aae61", "tertiary": "#a6dba0", "unresolved": "#d9d9d9",
                "absent": "#b0b0b0", "question": "#35618f"}
# dark fills get white text, light fills black: readable on every tier colour
_LABEL_COLOURS = {"primary": "#ffffff", "secondary": "#ffffff", "question": "#ffffff"}
COLLECTION_BORDERS = ("#7b3294", "#e66101", "#0571b0", "#ca0020", "#4d4d4d", "#b8860b")
FOLLOWED_COLOUR, SKIPPED_COLOUR, OFF_CHAIN_COLOUR = "#1b7837", "#999999", "#c4c4c4"
QUESTION_NODE = "\u2753"  # the root's id; its label is the question's own word ("Frage" / "Question")
_TIER_RANK = {"primary": 0, "secondary": 1, "tertiary": 2}
_CDN_TAG = re.compile(r"<(?:link|script)[^>]+cdn\.jsdelivr\.net[^>]*>(?:\s*</script>)?", re.IGNORECASE)


def section_node(doc: str, section: str) -> str:
    return f"{doc} {section}".strip()


def reference_graph(edges: list[dict], chunks: list[dict], include_skipped: bool = True,
                    question: bool = False) -> nx.DiGraph:
    """The graph of reference edges and the context chunks (for tiers, pages and collections).
    Without `include_skipped` only followed references between sections of the context are in it (a skipped
    reference, and a section the context does not hold, are left out; `graph.graph["hidden"]` counts the
    sections left out); with `question` a root node stands before the sections search found. Every node
    and edge says whether it is on a followed chain (`chain`): from the question through a section search
    found along followed references, what a reviewer looks for first."""
    graph = nx.DiGraph()
    tiers: dict[str, str] = {}
    pages: dict[str, set[int]] = {}
    collections: dict[str, str] = {}
    for chunk in chunks:
        node = section_node(chunk["document"], chunk.get("section", ""))
        tier = chunk.get("tier", "tertiary")
        if node not in tiers or _TIER_RANK[tier] < _TIER_RANK[tiers[node]]:
            tiers[node] = tier
        pages.setdefault(node, set()).add(int(chunk.get("page", 0)))
        if chunk.get("collection"):
            collections.setdefault(node, chunk["collection"])

    def add_node(node: str, doc: str, section: str, level: int, unknown: str = "unresolved") -> None:
        if node not in graph:
            graph.add_node(node, doc=doc, section=section, tier=tiers.get(node, unknown),
                           pages=sorted(pages.get(node, set())), collection=collections.get(node, ""), level=level)
        else:
            graph.nodes[node]["level"] = min(graph.nodes[node]["level"], level)

    for edge in edges:
        if edge["decision"] != "followed" and not include_skipped:
            continue
        depth = max(1, int(edge.get("depth", 1) or 1))
        source = section_node(edge.get("from_doc", ""), edge.get("from_section", ""))
        add_node(source, edge.get("from_doc", ""), edge.get("from_section", ""), depth - 1)
        targets = list(zip(edge.get("to_docs", []), edge.get("to_sections", []), strict=False))
        if not targets:  # unresolved: the reference as a reader names it
            targets = [("", reference_label(edge["target"]))]
        # a target the collection does not hold is a node of its own kind ("absent"), not one left out
        unknown = "absent" if edge.get("resolution") == "not_in_collection" else "unresolved"
        for doc, section in dict.fromkeys(targets):
            target = section_node(doc, section)
            add_node(target, doc, section, depth, unknown)
            if graph.has_edge(source, target) and graph.edges[source, target]["decision"] == "followed":
                continue  # one reference met in two tasks is one edge; a followed one wins over a skip
            graph.add_edge(source, target, type=edge["type"], target=reference_label(edge["target"]),
                           decision=edge["decision"],
                           reason=edge.get("reason", ""), reason_key=edge.get("reason_key", ""),
                           reason_values=edge.get("reason_values") or {}, depth=depth, score=edge.get("score", 0.0),
                           resolution=edge.get("resolution", ""), relation=edge.get("relation", "cites"))
    if not include_skipped:
        outside = [node for node, data in graph.nodes(data=True) if data["tier"] in OUTSIDE_CONTEXT]
        graph.remove_nodes_from(outside)
        graph.remove_nodes_from([node for node in list(graph.nodes) if graph.degree(node) == 0])
        graph.graph["hidden"] = len(outside) + _skipped_targets(edges, graph)
    if question and graph.number_of_nodes():
        entries = [node for node, data in graph.nodes(data=True) if data["level"] == 0]
        for node in graph.nodes:
            graph.nodes[node]["level"] += 1
        graph.add_node(QUESTION_NODE, doc="", section="", tier="question", pages=[], collection="", level=0)
        for node in entries:
            graph.add_edge(QUESTION_NODE, node, type="entry", target="", decision="entry", reason="", depth=0,
                           score=0.0, resolution="")
    _mark_chains(graph)
    return graph


OUTSIDE_CONTEXT = frozenset({"unresolved", "absent"})


def _skipped_targets(edges: list[dict], shown: nx.DiGraph) -> int:
    """How many sections only a skipped reference names (not shown without `include_skipped`)."""
    named = {section_node(doc, section) for edge in edges if edge["decision"] != "followed"
             for doc, section in zip(edge.get("to_docs", []), edge.get("to_sections", []), strict=False)}
    named |= {reference_label(edge["target"]) for edge in edges
              if edge["decision"] != "followed" and not edge.get("to_docs")}
    return len(named - set(shown.nodes))


def _mark_chains(graph: nx.DiGraph) -> None:
    """`chain` on every node and edge of a followed chain: a followed reference, the sections it joins, and
    the way from the question to the section that starts it."""
    followed = {(a, b) for a, b, data in graph.edges(data=True) if data["decision"] == "followed"}
    on_chain = {node for edge in followed for node in edge}
    for node in graph.nodes:
        graph.nodes[node]["chain"] = node in on_chain
    for source, target, data in graph.edges(data=True):
        data["chain"] = (source, target) in followed or (data["decision"] == "entry" and target in on_chain)
    if QUESTION_NODE in graph and any(graph.edges[QUESTION_NODE, n]["chain"] for n in graph.successors(QUESTION_NODE)):
        graph.nodes[QUESTION_NODE]["chain"] = True


def hidden_note(graph: nx.DiGraph, language: str = "de") -> str:
    """How many sections the graph leaves out ("" when none), in the reader's language."""
    hidden = graph.graph.get("hidden", 0)
    return graph_text(language)["hidden"].format(count=hidden) if hidden else ""


def _border(collection: str, order: list[str]) -> str:
    return COLLECTION_BORDERS[order.index(collection) % len(COLLECTION_BORDERS)] if collection in order else "#333333"


def _collections(graph: nx.DiGraph) -> list[str]:
    return sorted({data.get("collection", "") for _, data in graph.nodes(data=True)} - {""})


def _label(node: str, t: dict[str, str]) -> str:
    """The question's word for the root; a section as the law's short name and its number ("QStrG § 12")."""
    return t["question"] if node == QUESTION_NODE else section_label(node)


def _edge_label(data: dict, t: dict[str, str]) -> str:
    if data["decision"] == "entry":
        return t["entry"]
    decision = t.get(data["decision"], data["decision"])
    relation = data.get("relation", "cites")
    return decision if relation == "cites" else f"{decision} · {t.get(f'relation_{relation}', relation)}"


LABEL_FONT_PX, MIN_LABEL_PX = 14, 11
NODE_SPACING_PX, LEVEL_SEPARATION_PX = 46, 230
OFF_CHAIN_OPACITY = 0.45


def graph_height_px(graph: nx.DiGraph) -> int:
    """A frame tall enough for the fullest level at full size (vis.js fits the whole graph into its frame:
    forty sections in a fixed frame came out with labels of 6 px), within bounds a page can scroll past."""
    per_level: dict[int, int] = {}
    for _, data in graph.nodes(data=True):
        per_level[data["level"]] = per_level.get(data["level"], 0) + 1
    return max(360, min(2400, max(per_level.values(), default=1) * NODE_SPACING_PX + 80))


# vis.js fits the graph into the frame however small that makes it; below MIN_LABEL_PX a label cannot be read,
# so the view starts at the smallest scale that keeps labels readable, at the question, and the reader pans
_MIN_SCALE_SCRIPT = """<script>(function () {
  var minScale = %(scale).3f;
  network.once("afterDrawing", function () {
    if (network.getScale() >= minScale) { return; }
    var root = network.getPositions([%(root)s])[%(root)s] || {x: 0, y: 0};
    var half = network.canvas.frame.canvas.clientWidth / 2 / minScale;
    network.moveTo({position: {x: root.x + half - 40, y: root.y}, scale: minScale});
  });
})();</script>"""


def graph_html(graph: nx.DiGraph, height: str | None = None, language: str = "de") -> str:
    """Self-contained interactive HTML of the graph, laid out by level from left to right: the followed
    chains drawn strong, everything off them faded, labels never drawn below MIN_LABEL_PX."""
    from pyvis.network import Network

    t = graph_text(language)
    order = _collections(graph)
    height = height or f"{graph_height_px(graph)}px"
    network = Network(directed=True, cdn_resources="in_line", height=height, width="100%", bgcolor="#ffffff")
    for node, data in graph.nodes(data=True):
        tier = data.get("tier", "unresolved")
        pages = ", ".join(str(p) for p in data.get("pages", []) if p)
        tooltip = "\n".join(part for part in (
            _label(node, t), f"{t['tier']}: {t.get(tier, tier)}" if tier != "question" else "",
            f"{t['pages']}: {pages}" if pages else "",
            f"{t['collection']}: {data['collection']}" if data.get("collection") else "") if part)
        chain = data.get("chain", True)
        network.add_node(node, label=html.escape(_label(node, t)), title=html.escape(tooltip), level=data["level"],
                         shape="box", borderWidth=3 if data.get("collection") else 1,
                         opacity=1.0 if chain else OFF_CHAIN_OPACITY,
                         color={"background": TIER_COLOURS.get(tier, "#d9d9d9"),
                                "border": _border(data.get("collection", ""), order)},
                         font={"color": _LABEL_COLOURS.get(tier, "#111111"), "size": LABEL_FONT_PX,
                               "bold": chain and tier != "question"})
    for source, target, data in graph.edges(data=True):
        followed = data["decision"] in ("followed", "entry")
        chain = data.get("chain", followed)
        tooltip = t["entry"] if data["decision"] == "entry" else (
            f"{data['target']} ({data['type']}, {reached_by(data['depth'], language)})\n"
            f"{_edge_label(data, t)}: {edge_reason(data, language)}")
        # solid green already says "followed" (the legend): a line is labelled only by what the colour does
        # not say, a skip or what the reference does ("gilt entsprechend"), so fewer labels cross each other
        relation = data.get("relation", "cites")
        label = _edge_label(data, t) if data["decision"] not in ("followed", "entry") \
            else t.get(f"relation_{relation}", relation) if relation != "cites" else ""
        same_level = graph.nodes[source]["level"] == graph.nodes[target]["level"]
        network.add_edge(source, target, label=html.escape(label), title=html.escape(tooltip), dashes=not followed,
                         width=3 if chain else 1, color=FOLLOWED_COLOUR if chain else OFF_CHAIN_COLOUR, arrows="to",
                         # a reference within one level bows out instead of running through the boxes between
                         smooth={"enabled": True, "type": "curvedCW", "roundness": 0.5} if same_level else False)
    options = {"layout": {"hierarchical": {"enabled": True, "direction": "LR", "sortMethod": "directed",
                                           "levelSeparation": LEVEL_SEPARATION_PX, "nodeSpacing": NODE_SPACING_PX}},
               "physics": {"enabled": False},
               "edges": {"font": {"size": 12, "align": "middle", "background": "#ffffff"}, "smooth": False}}
    network.set_options(json.dumps(options))
    page = _CDN_TAG.sub("", network.generate_html(notebook=False))
    script = _MIN_SCALE_SCRIPT % {"scale": MIN_LABEL_PX / LABEL_FONT_PX, "root": json.dumps(QUESTION_NODE)}
    return page.replace("</body>", script + "</body>", 1) if QUESTION_NODE in graph else page


def graph_legend_html(graph: nx.DiGraph, language: str = "de") -> str:
    """The colours and line styles of the graph, with the collections' borders."""
    t = graph_text(language)

    def swatch(fill: str, text: str, border: str = "#333333") -> str:
        return (f"<span style='display:inline-block;margin-right:1em'><span style='display:inline-block;width:1em;"
                f"height:1em;background:{fill};border:2px solid {border};vertical-align:middle'></span> "
                f"{html.escape(text)}</span>")

    def line(colour: str, dashed: bool, text: str) -> str:
        style = "dashed" if dashed else "solid"
        return (f"<span style='display:inline-block;margin-right:1em'><span style='display:inline-block;width:2em;"
                f"border-top:2px {style} {colour};vertical-align:middle'></span> {html.escape(text)}</span>")

    parts = [swatch(TIER_COLOURS[tier], t[tier])
             for tier in ("primary", "secondary", "tertiary", "unresolved", "absent")]
    parts += [line(FOLLOWED_COLOUR, False, t["followed"]), line(SKIPPED_COLOUR, True, t["skipped"])]
    order = _collections(graph)
    parts += [swatch("#ffffff", f"{t['collection']}: {name}", _border(name, order)) for name in order]
    return f"<div class='rh-graph-legend' style='font-size:12px;margin:.3em 0'>{''.join(parts)}</div>"


LEVEL_GAP_PX, ROW_PX, NODE_HEIGHT_PX, CHAR_PX, MAX_LABEL_CHARS = 60, 34, 24, 7, 34


def graph_svg(graph: nx.DiGraph, language: str = "de") -> str:
    """A static SVG of the graph from the same levels as the interactive view: one column per level, one
    row per node, so no two boxes overlap (renders anywhere, also in untrusted notebooks)."""
    t = graph_text(language)
    if graph.number_of_nodes() == 0:
        return ('<svg xmlns="http://www.w3.org/2000/svg" width="400" height="60">'
                f'<text x="10" y="35" font-family="sans-serif" font-size="14">{html.escape(t["empty"])}</text></svg>')
    levels: dict[int, list[str]] = {}
    for node, data in sorted(graph.nodes(data=True), key=lambda item: (item[1]["level"], item[0])):
        levels.setdefault(data["level"], []).append(node)

    def label(node: str) -> str:
        text = _label(node, t)
        return text if len(text) <= MAX_LABEL_CHARS else text[: MAX_LABEL_CHARS - 1] + "…"

    widths = {level: max(CHAR_PX * len(label(n)) + 14 for n in nodes) for level, nodes in levels.items()}
    x, left = 10, {}
    for level in sorted(levels):
        left[level] = x
        x += widths[level] + LEVEL_GAP_PX
    width_px = x - LEVEL_GAP_PX + 10
    height_px = max(len(nodes) for nodes in levels.values()) * ROW_PX + 20
    boxes = {}
    for level, nodes in levels.items():
        top = (height_px - len(nodes) * ROW_PX) / 2
        for row, node in enumerate(nodes):
            box_width = CHAR_PX * len(label(node)) + 14
            boxes[node] = (left[level], top + row * ROW_PX + (ROW_PX - NODE_HEIGHT_PX) / 2, box_width)
    order = _collections(graph)
    # a viewBox and max-width: a wide graph scales down to its panel instead of widening it
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="reference-graph" width="{width_px:.0f}" '
             f'height="{height_px:.0f}" viewBox="0 0 {width_px:.0f} {height_px:.0f}" '
             'style="max-width:100%;height:auto" font-family="Helvetica, Arial, sans-serif" font-size="12">']
    for source, target, data in graph.edges(data=True):
        sx, sy, sw = boxes[source]
        tx, ty, _ = boxes[target]
        followed = data["decision"] in ("followed", "entry")
        chain = data.get("chain", followed)
        dash = "" if followed else ' stroke-dasharray="5,4"'
        colour = FOLLOWED_COLOUR if chain else OFF_CHAIN_COLOUR if followed else SKIPPED_COLOUR
        x1, y1 = sx + sw, sy + NODE_HEIGHT_PX / 2
        x2, y2 = tx, ty + NODE_HEIGHT_PX / 2
        if tx <= sx:  # a reference back to an earlier level: leave from the box's left edge
            x1 = sx
        parts.append(
            f'<line x1="{x1:.0f}" y1="{y1:.0f}" x2="{x2:.0f}" y2="{y2:.0f}" stroke="{colour}" '
            f'stroke-width="{2.5 if chain else 1.2}"{dash}><title>'
            f'{html.escape(data["target"])}: {html.escape(_edge_label(data, t))} — '
            f'{html.escape(edge_reason(data, language))}'
            f'</title></line>{_arrowhead(x1, y1, x2, y2, colour)}'
        )
    for node, data in graph.nodes(data=True):
        bx, by, bw = boxes[node]
        tier = data.get("tier", "unresolved")
        fill = TIER_COLOURS.get(tier, "#d9d9d9")
        border = _border(data.get("collection", ""), order)
        fade = "" if data.get("chain", True) else f' opacity="{OFF_CHAIN_OPACITY}"'
        parts.append(
            f'<g{fade}><title>{html.escape(_label(node, t))} ({html.escape(t.get(tier, tier))})</title>'
            f'<rect x="{bx:.0f}" y="{by:.0f}" width="{bw:.0f}" height="{NODE_HEIGHT_PX}" rx="4" '
            f'fill="{fill}" stroke="{border}" stroke-width="2"/>'
            f'<text x="{bx + bw / 2:.0f}" y="{by + 16:.0f}" text-anchor="middle" '
            f'fill="{_LABEL_COLOURS.get(tier, "#111111")}">{html.escape(label(node))}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _arrowhead(x1: float, y1: float, x2: float, y2: float, colour: str, size_px: float = 7.0) -> str:
    """A filled triangle at (x2, y2) pointing along the line: drawn, not an SVG marker, so that renderers
    without marker support (MuPDF, which makes the PNG) show the direction too."""
    length = math.hypot(x2 - x1, y2 - y1) or 1.0
    ux, uy = (x2 - x1) / length, (y2 - y1) / length
    bx, by = x2 - ux * size_px, y2 - uy * size_px
    points = [(x2, y2), (bx - uy * size_px / 2, by + ux * size_px / 2), (bx + uy * size_px / 2, by - ux * size_px / 2)]
    return f'<path d="M {" L ".join(f"{x:.1f} {y:.1f}" for x, y in points)} z" fill="{colour}"/>'


def graph_png(graph: nx.DiGraph, language: str = "de", dpi: int = 120) -> bytes:
    """The static graph as PNG: the SVG drawn by MuPDF (untrusted notebooks show images, not SVG)."""
    import pymupdf

    with pymupdf.open(stream=graph_svg(graph, language).encode("utf-8"), filetype="svg") as drawing:
        return drawing[0].get_pixmap(dpi=dpi).tobytes("png")


def svg_boxes_overlap(svg: str) -> bool:
    """True when two node boxes of an SVG from `graph_svg` overlap (for tests and checks)."""
    rects = [
        tuple(float(v) for v in match)
        for match in re.findall(r'<rect x="([\d.-]+)" y="([\d.-]+)" width="([\d.]+)" height="([\d.]+)"', svg)
    ]
    for index, (x1, y1, w1, h1) in enumerate(rects):
        for x2, y2, w2, h2 in rects[index + 1 :]:
            if x1 < x2 + w2 and x2 < x1 + w1 and y1 < y2 + h2 and y2 < y1 + h1:
                return True
    return False


def unresolved_html(edges: list[dict], language: str = "de") -> str:
    """Below the graph: the references to a section the cited law does not have (or no longer has), which the
    graph cannot draw, each with its reason; "" when there are none. Escaped: document text is data."""
    found = unresolved_references(edges)
    if not found:
        return ""
    title = html.escape(report_labels(language)["unresolved"])
    items = "".join(f"<li>{html.escape(edge.get('from_doc', ''))} {html.escape(edge.get('from_section', ''))} → "
                    f"{html.escape(reference_label(edge.get('target', '')))}: "
                    f"{html.escape(edge_reason(edge, language))}</li>" for edge in found)
    return f"<div class='unresolved' style='font-family:sans-serif'><b>{title}:</b><ul>{items}</ul></div>"
