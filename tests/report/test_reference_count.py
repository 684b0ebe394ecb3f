"""One count of followed references: the same citation met by two tasks is one reference, followed when
either task followed it; the report, the graph summary and the edge table agree."""

from __future__ import annotations

import re

from rabbithole_lab.evidence.reference_edges import distinct_references, followed_count
from rabbithole_lab.viz.display import edge_table


def _edge(section: str, target: str, decision: str, task: int) -> dict:
    return {"from_doc": "Hafenordnung.pdf", "from_section": section, "target": target, "decision": decision,
            "type": "legal_section", "reason": "r", "depth": 1, "task_id": task,
            "to_docs": ["Hafengesetz.pdf"] if decision == "followed" else [],
            "to_sections": [target.split(" H")[0]] if decision == "followed" else []}


EDGES = [_edge("§ 3", "§ 9 HafenG", "skipped", 1), _edge("§ 3", "§ 9 HafenG", "followed", 2),
         _edge("§ 3", "§ 2 HafenG", "followed", 1), _edge("§ 3", "§ 2 HafenG", "followed", 2),
         _edge("§ 4", "§ 2 HafenG", "skipped", 1)]


def test_a_reference_met_by_two_tasks_counts_once_and_as_followed():
    assert followed_count(EDGES) == (2, 1)
    decisions = {(e["from_section"], e["target"]): e["decision"] for e in distinct_references(EDGES)}
    assert decisions == {("§ 3", "§ 9 HafenG"): "followed", ("§ 3", "§ 2 HafenG"): "followed",
                         ("§ 4", "§ 2 HafenG"): "skipped"}


def test_the_edge_table_has_one_row_per_reference():
    frame = edge_table({"reference_edges": EDGES}, language="de").data
    assert len(frame) == 3 and list(frame["Entscheidung"]).count("verfolgt") == 2


def test_a_reference_is_labelled_by_the_laws_short_name_not_its_file():
    from rabbithole_lab.evidence.reference_edges import reference_label

    assert reference_label("§ 6 Hafenordnung.pdf") == "§ 6 Hafenordnung"
    assert reference_label("§§ 8, 3 HafenG.pdf") == "§§ 8, 3 HafenG"
    assert reference_label("§ 78 StrlSchG") == "§ 78 StrlSchG" and reference_label("section 4.2 guide.md") == \
        "section 4.2 guide"
    frame = edge_table({"reference_edges": [_edge("§ 3", "§ 9 Hafengesetz.pdf", "followed", 1)]}, language="de").data
    assert list(frame["Verweis"]) == ["§ 9 Hafengesetz"]


def test_graph_nodes_name_the_law_not_its_file():
    from rabbithole_lab.viz.reference_graph import graph_svg, reference_graph

    edge = _edge("§ 3", "§ 9 Hafengesetz.pdf", "followed", 1)
    svg = graph_svg(reference_graph([edge], [], question=True), "de")
    labels = re.findall(r"<text[^>]*>([^<]+)</text>", svg)
    assert labels and not any(".pdf" in label for label in labels)
    assert any(label.endswith("§ 9") for label in labels)
