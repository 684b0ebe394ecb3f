"""Unresolved means unresolved: a reference to a document the collection does not hold is recorded as
"not in the collection" (a node of its own colour in the graph), and a broad search admits only passages
that name the target."""

from __future__ import annotations

from rabbithole_lab.rabbithole.collect import collect_references
from rabbithole_lab.rabbithole.references import detect_references_regex
from rabbithole_lab.rabbithole.resolve import ReferenceResolver, names_section
from rabbithole_lab.records import DetectedReference, VectorResult
from rabbithole_lab.viz.graph import TIER_COLOURS, graph_html, graph_legend_html, reference_graph


def _passage(text: str, section: str = "§ 2") -> VectorResult:
    return VectorResult(chunk_id="p", doc="Hafenordnung.md", collection="Hafen", page_start=1, page_end=1,
                        section=section, text=text)


def test_a_passage_names_a_section_only_by_its_own_label_or_number():
    reference = DetectedReference(type="legal_section", target="§ 12", original_text="§ 12", unit="§",
                                  sections=["12"])
    assert names_section(_passage("Die Frist nach § 12 beträgt drei Tage."), reference)
    assert names_section(_passage("Es gelten die §§ 11 und 12 entsprechend."), reference)
    assert names_section(_passage("Irgendein Text ohne Verweis.", section="§ 12"), reference)
    assert not names_section(_passage("Nach § 123 ist die Glocke zu läuten."), reference)
    assert not names_section(_passage("Die Glocke läutet bei Nebel alle fünf Minuten."), reference)


def test_a_broad_search_brings_only_passages_that_name_the_section(demo_kb):
    resolver = ReferenceResolver(demo_kb)
    [named] = detect_references_regex("wie in § 6 bestimmt", None)
    found = resolver.resolve(named, "Grenzwerte")
    assert found.results and all(names_section(hit, named) for hit in found.results)
    [nowhere] = detect_references_regex("wie in § 977 bestimmt", None)  # no passage names a § 977
    assert resolver.resolve(nowhere, "Grenzwerte").path == "none"


def test_a_directive_the_collection_does_not_hold_is_recorded_as_not_in_it(demo_kb):
    citer_text = ("Die Betreiberin beachtet die Vorgaben nach Artikel 9 der Seezeichenrichtlinie 2031/7/Fantasie "
                  "und nach DIN EN ISO 9001.")
    resolver = ReferenceResolver(demo_kb)
    references = detect_references_regex(citer_text, "QStrV.pdf")
    assert references
    for reference in references:
        assert resolver.resolve(reference, "Grenzwerte").path in ("not_in_collection", "none")
    assert any(resolver.resolve(r, "Grenzwerte").path == "not_in_collection" for r in references)


def test_the_graph_shows_a_target_not_in_the_collection_as_its_own_grey_node():
    edges = [{"type": "document_mention", "target": "DIN EN ISO 9001", "depth": 1, "decision": "skipped",
              "reason": "Dokument nicht in der Sammlung", "resolution": "not_in_collection",
              "from_doc": "QStrV.pdf", "from_section": "§ 5", "to_docs": [], "to_sections": []}]
    graph = reference_graph(edges, [{"document": "QStrV.pdf", "section": "§ 5", "tier": "primary", "page": 1}])
    assert graph.nodes["DIN EN ISO 9001"]["tier"] == "absent"
    assert TIER_COLOURS["absent"] in graph_html(graph, language="de")
    assert "nicht in der Sammlung" in graph_legend_html(graph, language="de")


def test_following_records_the_reason_in_the_readers_language(demo_kb):
    from rabbithole_lab.rabbithole.candidates import Candidate

    text = "Nach § 4 des Leuchtfeuergesetzes ist die Glocke zu läuten."
    citer = Candidate(result=_passage(text, section="§ 4"), kind="hit", depth=0, relevance=1.0)
    _, edges = collect_references([citer], detect_references_regex,
                                  ReferenceResolver(demo_kb), pool=None, visited=set(), anchor="Glocke",
                                  german=True)
    [edge] = edges
    assert edge.resolution == "not_in_collection" and edge.reason == "Dokument nicht in der Sammlung"
