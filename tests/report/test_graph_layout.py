"""The reference graph by depth: question -> entry -> cited, skipped references only on request, a legend,
readable labels, an SVG without overlapping boxes, and an edge table without duplicates."""

from __future__ import annotations

from rabbithole_lab.viz.display import edge_table
from rabbithole_lab.viz.reference_graph import (
    QUESTION_NODE,
    graph_height_px,
    graph_html,
    graph_legend_html,
    graph_svg,
    reference_graph,
    svg_boxes_overlap,
)


def _edge(source: tuple[str, str], target: tuple[str, str], depth: int, decision: str = "followed",
          reason: str = "Grenzwert verwiesen") -> dict:
    return {"type": "legal_section", "target": f"{target[1]} {target[0]}", "depth": depth, "decision": decision,
            "reason": reason, "from_doc": source[0], "from_section": source[1],
            "to_docs": [target[0]] if decision == "followed" else [],
            "to_sections": [target[1]] if decision == "followed" else []}


def _chunk(doc: str, section: str, tier: str, collection: str) -> dict:
    return {"document": doc, "section": section, "tier": tier, "page": 1, "collection": collection}


EDGES = [_edge(("Ordnung.pdf", "§ 3"), ("Gesetz.pdf", "§ 9"), 1),
         _edge(("Gesetz.pdf", "§ 9"), ("Gesetz.pdf", "§ 2"), 2),
         _edge(("Ordnung.pdf", "§ 3"), ("Gesetz.pdf", "§ 9"), 1),  # the same reference met in a second task
         _edge(("Ordnung.pdf", "§ 3"), ("Fremd.pdf", "§ 1"), 1, decision="skipped", reason="andere Sammlung")]
CHUNKS = [_chunk("Ordnung.pdf", "§ 3", "primary", "Recht"), _chunk("Gesetz.pdf", "§ 9", "secondary", "Recht"),
          _chunk("Gesetz.pdf", "§ 2", "tertiary", "Normen")]


def test_levels_follow_the_chain_from_the_question():
    graph = reference_graph(EDGES, CHUNKS, include_skipped=False, question=True)
    levels = {node: data["level"] for node, data in graph.nodes(data=True)}
    assert levels == {QUESTION_NODE: 0, "Ordnung.pdf § 3": 1, "Gesetz.pdf § 9": 2, "Gesetz.pdf § 2": 3}
    assert graph.has_edge(QUESTION_NODE, "Ordnung.pdf § 3")
    assert graph.number_of_edges() == 3  # question->entry, and two followed references (the repeat is one)


def test_skipped_references_are_hidden_unless_asked_for():
    # an unresolved skipped reference is a node named by what it cites, by the law's name, not its file
    assert "§ 1 Fremd" not in reference_graph(EDGES, CHUNKS, include_skipped=False)
    shown = reference_graph(EDGES, CHUNKS, include_skipped=True)
    assert shown.edges["Ordnung.pdf § 3", "§ 1 Fremd"]["decision"] == "skipped"


def test_the_interactive_view_is_laid_out_by_level_with_readable_labels_in_the_readers_language():
    page = graph_html(reference_graph(EDGES, CHUNKS, include_skipped=True, question=True), language="de")
    page = page.replace("\\u00fc", "ü")  # the node data is JSON with ASCII escapes
    assert '"hierarchical": {"enabled": true, "direction": "LR"' in page and '"level": 2' in page
    assert 'verfolgt: Grenzwert verwiesen' in page and '"label": "übersprungen"' in page and '"label": "Frage"' in page
    assert '"followed"' not in page  # no field values as labels in a German view
    # white text on the dark primary green, dark text on the light tertiary fill
    assert '"background": "#1b7837", "border": "#' in page and '"color": "#ffffff"' in page
    assert '"color": "#111111"' in page


def test_the_legend_names_tiers_line_styles_and_collections():
    legend = graph_legend_html(reference_graph(EDGES, CHUNKS, include_skipped=True), "en")
    for text in ("Primary", "Secondary", "Tertiary", "followed", "skipped", "collection: Normen", "collection: Recht"):
        assert text in legend
    assert "dashed" in legend


def test_the_svg_has_the_same_levels_and_no_overlapping_boxes():
    many = [_edge(("Ordnung.pdf", "§ 3"), ("Gesetz.pdf", f"§ {n}"), 1) for n in range(1, 25)]
    many += [_edge(("Gesetz.pdf", "§ 1"), ("Anhang mit einem sehr langen Dokumentnamen.pdf", f"Anlage {n}"), 2)
             for n in range(1, 8)]
    svg = graph_svg(reference_graph(many, CHUNKS, question=True), "de")
    assert svg.count("<rect") == 1 + 1 + 24 + 7
    assert not svg_boxes_overlap(svg)
    assert ">Frage<" in svg
    assert svg_boxes_overlap('<rect x="0" y="0" width="50" height="20"/><rect x="40" y="10" width="50" height="20"/>')


def test_hostile_labels_are_escaped_in_every_rendering():
    hostile = [_edge(("<img src=x onerror=alert(1)>.pdf", "§ 1"), ("B.pdf", "<script>alert(2)</script>"), 1)]
    graph = reference_graph(hostile, [], question=True)
    for rendered in (graph_svg(graph), graph_legend_html(graph)):
        assert "<img" not in rendered and "<script>" not in rendered
    assert "<script>alert(2)" not in graph_html(graph).split("</script>")[-1]


def test_the_edge_table_lists_each_reference_once_with_its_full_reason():
    long_reason = "weil " + "der Grenzwert dort steht und " * 20
    state = {"reference_edges": EDGES + [_edge(("Gesetz.pdf", "§ 2"), ("Gesetz.pdf", "§ 7"), 3, reason=long_reason)]}
    styler = edge_table(state)
    assert len(styler.data) == 4  # the repeated reference is one row
    page = styler.to_html()
    assert long_reason.strip() in page and "white-space: normal" in page


def test_the_followed_chain_stands_out_and_what_is_off_it_is_hidden_or_faded():
    edges = [*EDGES, _edge(("Ordnung.pdf", "§ 3"), ("Gesetz.pdf", "§ 40"), 1)]  # followed, but not in the context
    chunks = [*CHUNKS, _chunk("Ordnung.pdf", "§ 8", "primary", "Recht")]
    edges.append(_edge(("Ordnung.pdf", "§ 8"), ("Gesetz.pdf", "§ 50"), 1, decision="skipped"))
    shown = reference_graph(edges, chunks, include_skipped=False, question=True)
    # hidden: the section outside the context and the two that only a skipped reference names
    assert "Gesetz.pdf § 40" not in shown and shown.graph["hidden"] == 3
    assert all(data["chain"] for _, data in shown.nodes(data=True))
    everything = reference_graph(edges, chunks, include_skipped=True, question=True)
    assert everything.nodes["Gesetz.pdf § 40"]["tier"] == "unresolved"
    assert not everything.nodes["Ordnung.pdf § 8"]["chain"]  # found by search, cites nothing that was followed
    assert not everything.edges[QUESTION_NODE, "Ordnung.pdf § 8"]["chain"]
    assert everything.edges[QUESTION_NODE, "Ordnung.pdf § 3"]["chain"]
    page = graph_html(everything)
    assert '"opacity": 0.45' in page and '"width": 3' in page and '"width": 1' in page


def test_a_graph_of_forty_sections_gets_a_frame_for_its_fullest_level_and_a_readable_minimum_scale():
    many = [_edge(("Ordnung.pdf", "§ 3"), ("Gesetz.pdf", f"§ {n}"), 1) for n in range(1, 41)]
    chunks = [*CHUNKS, *(_chunk("Gesetz.pdf", f"§ {n}", "secondary", "Recht") for n in range(1, 41))]
    graph = reference_graph(many, chunks, include_skipped=False, question=True)
    assert graph_height_px(graph) >= 40 * 40
    page = graph_html(graph)
    assert "minScale = 0.786" in page and f'"height": "{graph_height_px(graph)}px"' not in page
    assert f"height: {graph_height_px(graph)}px" in page
