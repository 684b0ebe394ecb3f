"""Unresolved means unresolved: a reference to a document the collection does not hold is recorded as
"not in the collection" (a node of its own colour in the graph), and a broad search admits only passages
that name the target."""

from __future__ import annotations

import re

from rabbithole_lab.rabbithole.candidates import Candidate
from rabbithole_lab.rabbithole.collect import collect_references
from rabbithole_lab.rabbithole.references import detect_references_regex, is_own_label
from rabbithole_lab.rabbithole.resolve import ReferenceResolver, names_section
from rabbithole_lab.records import DetectedReference, VectorResult
from rabbithole_lab.viz.reference_graph import TIER_COLOURS, graph_html, graph_legend_html, reference_graph


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


def test_following_records_why_as_a_key_the_front_ends_word(demo_kb):
    text = "Nach § 4 des Leuchtfeuergesetzes ist die Glocke zu läuten."
    citer = Candidate(result=_passage(text, section="§ 4"), kind="hit", depth=0, relevance=1.0)
    _, edges = collect_references([citer], detect_references_regex,
                                  ReferenceResolver(demo_kb), pool=None, visited=set(), anchor="Glocke")
    [edge] = edges
    assert edge.resolution == "not_in_collection" and edge.reason_key == "not_in_collection"


def test_a_section_the_law_does_not_have_is_not_found_there_and_never_replaced_by_others(demo_kb):
    """A repealed section, a typo or an OCR error: "§ 999 QStrG" is no section of the indexed QStrG, so no
    search inside QStrG may stand in for it (that made "§ 1 VerweisV refers to § 3, Anlage 1, § 1")."""
    assert demo_kb.numbered_sections("QStrG.pdf", "§") >= 3 and demo_kb.numbered_sections("QStrG.pdf", "art") == 0
    text = "Die Anzeige richtet sich nach § 999 QStrG und § 77 QStrV; im Übrigen gilt § 12 QStrG."
    citer = Candidate(result=VectorResult(chunk_id="v", doc="VerweisV.pdf", collection="Recht", page_start=1,
                                          page_end=1, section="§ 1", text=text),
                      kind="hit", depth=0, relevance=1.0)
    resolver = ReferenceResolver(demo_kb)
    pending, edges = collect_references([citer], detect_references_regex, resolver, pool=_NoPool(), visited=set(),
                                        anchor="Anzeige")
    missing = {edge.target: edge for edge in edges if edge.resolution == "section_not_found"}
    assert {"§ 999 QStrG", "§ 77 QStrV"} <= set(missing), [(e.target, e.resolution) for e in edges]
    assert (missing["§ 999 QStrG"].reason_key, missing["§ 999 QStrG"].reason_values) == (
        "section_not_found", {"law": "QStrG"})
    assert all(not edge.to_sections and edge.decision != "followed" for edge in missing.values())
    # the one that exists is still followed, by its own section
    [existing] = [item for item in pending if "12" in item.reference.target]
    assert existing.resolution.path == "section_index" and {t.section for t in existing.targets} == {"§ 12"}
    graph = reference_graph([edge.model_dump() for edge in edges], [])
    assert graph.nodes["§ 999 QStrG"]["tier"] == "unresolved"


class _NoPool:
    """A candidate pool that holds nothing yet."""

    def holder(self, result):
        return None


# ---- a rulebook's own numbering (text written for these tests) --------------------------------------------
RULEBOOK = """# Sample Part - Key Functions

## [PID a1] 4.1 (Chapter 4 Identification of Key Functions)

A firm must identify the functions whose failure would disrupt its services to customers.

## [PID a2] 4.2 (Chapter 4 Identification of Key Functions)

A firm must keep its identification of key functions pursuant to 4.1 up-to-date. 3 It must also review the list
of functions under 9.9 at least once a year.

## [PID a3] Footnote 3 (Chapter 4 Identification of Key Functions)

Key functions include payment, clearing and settlement services.

## [PID a4] Article 12(2) Reporting of Key Functions

The firm shall report the list of key functions to the supervisor.

## [PID a5] Article 13: Annual Template for Key Functions

The firm shall submit the annual template on key functions.
"""


def _rulebook(tmp_path, settings, name: str, text: str):
    """A knowledge base of one Markdown rulebook (ingested for real), and its resolver."""
    from rabbithole_lab.kb.ingest.ingest import ingest
    from rabbithole_lab.kb.kb_factory import open_index, open_knowledge_base

    kb_dir = tmp_path / "kb" / "Rules__db_inserted"
    kb_dir.mkdir(parents=True)
    (kb_dir / name).write_text(text, encoding="utf-8")
    ingest(tmp_path / "kb", open_index(settings, tmp_path / "kb", tmp_path / "db"), settings.kb, show_progress=False)
    kb = open_knowledge_base(settings, tmp_path / "kb", tmp_path / "db")
    return kb, ReferenceResolver(kb)


def _resolved_in(kb, resolver, doc: str, section: str, hint: str) -> dict:
    """Each reference the section makes (not its own heading label): how it resolved."""
    [citing] = kb.section_lookup(doc, section)
    return {r.original_text: resolver.resolve(r, hint, citing.section)
            for r in detect_references_regex(citing.text, doc, "en")
            if not is_own_label(r, citing.text, citing.section)}  # "Chapter 4" in its heading line is its own


def test_a_rulebook_resolves_its_bare_rule_numbers_and_footnote_markers_by_its_own_numbering(tmp_path, settings):
    kb, resolver = _rulebook(tmp_path, settings, "Sample.md", RULEBOOK)
    found = _resolved_in(kb, resolver, "Sample.md", "4.2", "key functions")
    assert {text: (res.path, [hit.section.split(" (")[0] for hit in res.results]) for text, res in found.items()} == {
        "4.1": ("section_index", ["4.1"]),  # the rule the bare number names
        "3": ("section_index", ["Footnote 3"]),  # the footnote the marker names
        "9.9": ("none", []),  # no rule 9.9 here: nothing is searched for a number that names nothing
    }
    [article] = detect_references_regex("as reported under Article 12(2).", "Sample.md")
    assert [hit.section for hit in resolver.resolve(article).results] == ["Article 12(2) Reporting of Key Functions"]
    # a colon after the number: the block is still keyed by it
    [colon] = detect_references_regex("and submit it in accordance with Article 13.", "Sample.md")
    resolved = resolver.resolve(colon)
    assert resolved.path == "section_index"
    assert [hit.section for hit in resolved.results] == ["Article 13: Annual Template for Key Functions"]


GUIDE = """# Sample Statement - Recovery Planning

## [PID b1] 1.1 (Chapter 1 Introduction)

The statement draws on earlier publications (see Table 1 ) and on the expectations set out in Chapter 2 (i) (d)
and (ii) .

## [PID b2] Chapter 1 Introduction > Table 1: Publications read alongside this statement

SS1/11 Recovery planning; SS2/12 Liquidity.

## [PID b3] 2.1 (Chapter 2 Plan components > (i) Recovery options)

A plan should list the options a firm could take in a stress.

## [PID b4] 2.2 (Chapter 2 Plan components > (a) Choice of options)

Firms should explain how the options were chosen.

## [PID b5] 2.3 (Chapter 2 Plan components > (d) Timelines)

Firms should include the timelines over which options could be implemented.

## [PID b6] 2.4 (Chapter 2 Plan components > (ii) Recovery capacity)

Firms should estimate the capacity that the options give together.

## [PID b7] 2.5 (Chapter 2 Plan components > (d) Dependencies)

Firms should identify what the capacity depends on.
"""


def test_a_table_and_a_chapters_lettered_heading_resolve_to_where_the_blocks_the_heading_paths_show_begin(
        tmp_path, settings):
    kb, resolver = _rulebook(tmp_path, settings, "Guide.md", GUIDE)
    found = _resolved_in(kb, resolver, "Guide.md", "1.1", "recovery plan")
    resolved = {text: (res.path, [hit.section.split(" (")[0] for hit in res.results]) for text, res in found.items()}
    assert resolved["Table 1"] == ("section_index",
                                   ["Chapter 1 Introduction > Table 1: Publications read alongside this statement"])
    # "(d)" under "(i)" is 2.3, not the "(d)" under "(ii)"; "(ii)" is its heading, and begins at 2.4 (2.5, under
    # it too, is where a reader goes on)
    [chapter] = [text for text in resolved if text.startswith("Chapter 2")]
    assert resolved[chapter] == ("section_index", ["2.3", "2.4"])


PLAN = """# Asset Matching

## [PID c1] 1.1 (Chapter 1 Introduction)

Chapters 2 to 3 expand on the steps of the framework. The firm lists its contacts in Appendix 1 .
Assets with variable cash flows are treated as set out in Asset Matching 3 .

## [PID c2] 2.1 (Chapter 2 Eligible assets)

A firm should hold only assets whose cash flows it can predict.

## [PID c3] 3.1 (Chapter 3 Assets with variable cash flows)

Variable cash flows must be highly predictable before an asset is included.

## [PID c4] 3.2 (Chapter 3 Assets with variable cash flows)

The firm should document how it tested the predictability of the cash flows.

## [PID c5] 1.1 (Appendix 1 > Contacts for the matching framework)

The firm names the person responsible for the framework and how to reach them.
"""


def test_a_chapter_an_appendix_and_a_parts_bare_number_resolve_to_where_each_block_begins(tmp_path, settings):
    """A rulebook keys its rules by number ("3.1"), so "Chapters 2 to 3", "Appendix 1" and "Asset Matching 3" (a
    Part's chapter, as the PRA Rulebook cites) name no key: each is the block the heading paths show, and stands
    for its first passage, whatever the question (a reader is pointed there, not at each of its passages)."""
    kb, resolver = _rulebook(tmp_path, settings, "Matching.md", PLAN)

    def resolved(hint: str) -> dict:
        found = _resolved_in(kb, resolver, "Matching.md", "1.1 (Chapter 1 Introduction)", hint)
        return {text: (res.path, [re.search(r"\[PID (\w+)\]", hit.text).group(1) for hit in res.results])
                for text, res in found.items()}

    on_documenting = resolved("how does the firm document its testing")  # c4's words, the end of chapter 3
    assert on_documenting["Chapters 2 to 3"] == ("section_index", ["c2", "c3"])
    assert on_documenting["Appendix 1"] == ("section_index", ["c5"])  # not rule 1.1 of Chapter 1
    [part] = [text for text in on_documenting if text.endswith("Matching 3")]
    assert on_documenting[part] == ("section_index", ["c3"])  # chapter 3 of the Part, never chapter 2
    assert resolved("which assets are eligible") == on_documenting
