"""Resolution, gate, recursive following and its guards on the demo KB (real Chroma, real MiniLM)."""

import json
import logging
import subprocess
import sys

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from rabbithole_lab.cli.main import main as cli_main
from rabbithole_lab.kb.ingest.ingest import ingest
from rabbithole_lab.kb.kb_factory import open_index, open_knowledge_base
from rabbithole_lab.language.bridge import glossary_terms
from rabbithole_lab.rabbithole import gate as gate_module
from rabbithole_lab.rabbithole.backlinks import cited_keys, context_key, seed_keys
from rabbithole_lab.rabbithole.candidates import Candidate, estimate_tokens
from rabbithole_lab.rabbithole.collect import Pool, collect_backlinks, one_per_section, section_candidates
from rabbithole_lab.rabbithole.engine import admit, build_follower
from rabbithole_lab.rabbithole.gate import ExtractiveDecider, gate_references
from rabbithole_lab.rabbithole.rank import backlink_value, hit_value, new_terms_share
from rabbithole_lab.rabbithole.references import detect_references_regex
from rabbithole_lab.rabbithole.relevance import Scored, filter_by_relevance, keyword_overlap, lexical_anchor
from rabbithole_lab.rabbithole.resolve import ReferenceResolver, window_around
from rabbithole_lab.rabbithole.tiers import classify_tier, tier_weight
from rabbithole_lab.reasoning.llm.llm_reasoner import LLMReasoner
from rabbithole_lab.records import GateInput, ReferenceDecision, VectorResult
from tests.conftest import CORPUS, SHARED, english_only

ANCHOR = "Welche Grenzwerte gelten für beruflich exponierte Personen bei Quantenstrahlung?"


def _ref(text, doc):
    refs = detect_references_regex(text, doc)
    assert refs
    return refs[0]


def test_resolution_paths(demo_kb):
    resolver = ReferenceResolver(demo_kb)
    exact = resolver.resolve(_ref("nach § 12 des Quantenstrahlenschutzgesetzes", "QStrV.pdf"))
    assert exact.path == "section_index" and exact.doc == "QStrG.pdf"
    assert {(r.doc, r.section) for r in exact.results} == {("QStrG.pdf", "§ 12")}
    bookless = resolver.resolve(_ref("ist nach § 6 zu verfahren", "QStrV.pdf"))
    assert bookless.path == "section_index" and bookless.results[0].section == "§ 6"
    annex = resolver.resolve(_ref("nach Anlage 2 Teil B", "QStrG.pdf"))
    assert annex.path == "section_index" and annex.results[0].section == "Anlage 2"
    # a section the law's own numbering lacks is not found there; nothing stands in for it
    for missing in ("gemäß § 99 QStrG", "nach Anlage 9 QStrG"):
        absent_section = resolver.resolve(_ref(missing, "QStrV.pdf"), "Grenzwerte")
        assert absent_section.path == "section_not_found" and absent_section.doc == "QStrG.pdf"
        assert not absent_section.results
    # a numbering the document's index does not know (no "Art." in QStrG): searched inside the document
    scoped = resolver.resolve(_ref("gemäß Art. 5 QStrG", "QStrV.pdf"), "Grenzwerte")
    assert scoped.path == "scoped" and {r.doc for r in scoped.results} == {"QStrG.pdf"}
    assert resolver.resolve(_ref("nach § 823 BGB", "QStrV.pdf")).path == "not_in_collection"
    url = resolver.resolve(_ref("siehe https://example.org/x", "QStrV.pdf"))
    assert url.path == "external" and not url.results
    english = resolver.resolve(_ref("see section 4.2", "Detector_Calibration_Guide.pdf"))
    assert english.path == "section_index" and english.results[0].section == "4.2"
    standard = resolver.resolve(_ref("nach KTA 1401", "QStrV.pdf"))  # a standard the collection does not hold
    assert standard.path == "not_in_collection" and not standard.found
    citation = resolver.resolve(_ref("as calibrated in [2]", "Quantum_Dosimetry_Paper.pdf"))
    assert citation.path == "broad" and {r.doc for r in citation.results} == {"Detector_Calibration_Guide.pdf"}
    # a work the collection does not hold: passages that share a word or two with its title are not it
    absent = resolver.resolve(_ref("weighting factor [Mueller2022]", "Quantum_Dosimetry_Paper.pdf"))
    assert absent.path == "none" and not absent.results


def test_an_amending_act_resolves_to_nothing(corpus_kb):
    # a statute cites another law "zuletzt durch Artikel … der Verordnung vom … geändert": fuzzy matching once
    # took "Verordnung" for the AtSMV and followed it into an unrelated annex (text written for this test)
    text = ("die nach dem Bundeswaldgesetz vom 2. Mai 1975 (BGBl. I S. 1037), das zuletzt durch Artikel 112 "
            "der Verordnung vom 19. Juni 2020 (BGBl. I S. 1328) geändert worden ist, zugelassen sind")
    amending = next(r for r in detect_references_regex(text, "KrWG.pdf") if "112" in r.original_text)
    resolver = ReferenceResolver(corpus_kb)
    assert resolver.resolve(amending, "Abfall Bergaufsicht").path == "not_in_collection"
    # the amendment note atop a statute: once book-less, so scoped search in the AtG found some passage
    noted = _ref("Zuletzt geändert durch: Art. 1 G v. 10.8.2021 I 3530", "AtG.pdf")
    assert resolver.resolve(noted).path == "not_in_collection"
    # an ordinal sub-part no longer hides the book: § 9a of the AtG, not a § 9a the AtEV does not have
    halbsatz = resolver.resolve(_ref("nach § 9a Absatz 3 Satz 2 zweiter Halbsatz\ndes Atomgesetzes", "AtEV.pdf"))
    assert halbsatz.path == "section_index" and {(r.doc, r.section) for r in halbsatz.results} == {("AtG.pdf", "§ 9a")}


@pytest.mark.corpus
def test_a_member_joined_by_in_verbindung_mit_falls_back_to_the_book_named_after_it(corpus_kb):
    resolver = ReferenceResolver(corpus_kb)
    # the AtKostV has no § 21: it is the AtG's, named after the joined member
    foreign = _ref("nach § 21 Abs. 3 in Verbindung mit § 54 des Atomgesetzes", "AtKostV.pdf")
    assert {(r.doc, r.section) for r in resolver.resolve(foreign).results} == {("AtG.pdf", "§ 21")}
    # the StrlSchG has its own § 179: the book after the joined member does not take it away
    own = _ref("nach § 179 Absatz 1 Nummer 1 in Verbindung mit § 17 Absatz 1 Satz 3 des Atomgesetzes", "StrlSchG.pdf")
    assert {(r.doc, r.section) for r in resolver.resolve(own).results} == {("StrlSchG.pdf", "§ 179")}


def test_a_bookless_reference_its_document_lacks_resolves_in_the_one_document_that_has_it(demo_kb):
    resolver = ReferenceResolver(demo_kb)
    # the paper has sections 1-3 only; of the other documents only the calibration guide has 4.2
    elsewhere = resolver.resolve(_ref("as calibrated per section 4.2", "Quantum_Dosimetry_Paper.pdf"))
    assert elsewhere.path == "section_index"
    assert {(r.doc, r.section) for r in elsewhere.results} == {("Detector_Calibration_Guide.pdf", "4.2")}
    # two other documents have a section 2: no guess, the usual search instead
    ambiguous = resolver.resolve(_ref("see section 2", "QStrV.pdf"), "Grenzwerte")
    assert ambiguous.path != "section_index"


def _rulebook_resolver(tmp_path, settings, rulebooks: dict[str, str]) -> ReferenceResolver:
    """A resolver over Markdown rulebooks in the ObliQA shape ("## [PID …] 3.3.16.(1)" passages)."""
    folder = tmp_path / "kb" / "Rules__db_inserted"
    folder.mkdir(parents=True)
    for name, text in rulebooks.items():
        (folder / name).write_text(text)
    ingest(tmp_path / "kb", open_index(settings, tmp_path / "kb", tmp_path / "db"), settings.kb, show_progress=False)
    return ReferenceResolver(open_knowledge_base(settings, tmp_path / "kb", tmp_path / "db"))


def test_a_part_chapter_or_schedule_is_not_a_section_of_the_same_number(tmp_path, settings):
    resolver = _rulebook_resolver(tmp_path, settings, {
        "FSMR.md": "# FSMR\n\n## [PID a] 1.\n\nInterpretation of terms.\n\n## [PID b] Part 3.19.\n\n"
                   "Section 19 in Part 3.\n\n## [PID c] Part 19\n\nPart 19 on market abuse.\n\n"
                   "## [PID d] Part 19.Chapter 1.250.(1)\n\nA person must not engage in market abuse.\n",
        "COBS.md": "# COBS\n\n## [PID e] 3.\n\nClient classification.\n\n## [PID f] 3.1.1\n\nClassify every client.\n",
    })

    def sections(text, doc):
        resolution = resolver.resolve(_ref(text, doc), "market abuse")
        return resolution.path, [r.section for r in resolution.results]

    assert sections("as set out in Part 19 of FSMR", "COBS.md") == ("section_index", ["Part 19"])
    # a rulebook without parts: its chapters are its plain numbered headings
    assert sections("see Chapter 3 of COBS", "FSMR.md") == ("section_index", ["3."])
    # the FSMR has no plain "Part 3" and no Schedule 1: never its section 3.19 or 1
    assert sections("under Part 3 of FSMR", "COBS.md")[0] != "section_index"
    assert sections("paragraph 2 of Schedule 1 to FSMR", "COBS.md")[1] != ["1"]


def test_an_article_of_an_act_split_among_tagged_parts_resolves_in_the_part_that_holds_it(tmp_path, settings):
    """A rulebook splits an act among parts tagged with its name ("Harbour Dues (HDR)", "Pilotage (HDR)"): an
    article "of the HDR" stands in the one part that has it, whichever part the name alone would reach."""
    resolver = _rulebook_resolver(tmp_path, settings, {
        "harbour-dues-hdr.md": "# Harbour Dues (HDR)\n\n## [PID a] Article 12 Dues for berths\n\n"
                               "A berth costs four crowns a night.\n\n## [PID b] Article 13 Waivers\n\n"
                               "Dues are waived for lifeboats.\n",
        "pilotage-hdr.md": "# Pilotage (HDR)\n\n## [PID c] Article 40 Compulsory pilotage\n\n"
                           "A vessel over 80 metres takes a pilot.\n",
        "guide.md": "# Guide to the harbour\n\n## [PID d] 1.1 (Chapter 1 Scope)\n\nShips follow Article 40 of the "
                    "HDR when entering.\n",
    })
    for text, doc in (("Article 40 of the HDR", "pilotage-hdr.md"), ("Article 13 of the HDR", "harbour-dues-hdr.md")):
        resolution = resolver.resolve(_ref(text, "guide.md"), "entering the harbour")
        assert (resolution.path, {r.doc for r in resolution.results}) == ("section_index", {doc}), text
    # no part of the family has it: nothing is guessed
    assert resolver.resolve(_ref("Article 99 of the HDR", "guide.md"), "harbour").path != "section_index"
    assert resolver.kb.registry.tagged("HDR") == {"harbour-dues-hdr.md", "pilotage-hdr.md"}


def test_a_rule_cited_by_the_name_its_part_gives_it_resolves_to_the_passage_that_shows_the_name(tmp_path, settings):
    """"Core Rules 1 and 2" are the passages that open "Core Rule 1: …" and "Core Rule 2: …" (rules 2.1 and 2.2 of
    another document), not sections 1 and 2 of the citing guide."""
    resolver = _rulebook_resolver(tmp_path, settings, {
        "core-rules.md": "# Core Rules\n\n## [PID a] 1.1 (Chapter 1 Application)\n\nThis Part applies to every "
                         "harbour firm.\n\n## [PID b] 2.1 (Chapter 2 Core Rules)\n\nCore Rule 1: A firm must act "
                         "with integrity.\n\n## [PID c] 2.2 (Chapter 2 Core Rules)\n\nCore Rule 2: A firm must keep "
                         "its moorings safe.\n",
        "pilot-rules.md": "# Pilot Rules\n\n## [PID d] 3.2 (Chapter 3 Pilots)\n\nPilot Core Rule 2: A pilot must "
                          "stay sober on duty.\n",
        "guide.md": "# Guide to the harbour\n\n## [PID e] 1.1 (Chapter 1 Scope)\n\nFirms meet their obligations "
                    "when they moor a ship.\n\n## [PID f] 2.1 (Chapter 2 Ships)\n\nA ship is moored safely.\n",
    })
    named = resolver.resolve(_ref("Firms meet their obligations under the Harbour Core Rules 1 and 2 when they moor "
                                  "a ship.", "guide.md"), "mooring a ship")
    assert (named.path, [(r.doc, r.section) for r in named.results]) == ("section_index", [
        ("core-rules.md", "2.1 (Chapter 2 Core Rules)"), ("core-rules.md", "2.2 (Chapter 2 Core Rules)")])
    # a longer name is another rule: "Pilot Core Rule 2" is not "Core Rule 2"
    pilot = resolver.resolve(_ref("Pilots on board follow Pilot Core Rule 2 at all times.", "guide.md"), "pilots")
    assert [(r.doc, r.section) for r in pilot.results] == [("pilot-rules.md", "3.2 (Chapter 3 Pilots)")]
    # a name no passage shows is searched nowhere
    assert resolver.resolve(_ref("Firms also follow Core Rule 9 when they sail.", "guide.md"), "sailing").path == "none"

def test_an_article_held_paragraph_by_paragraph_is_its_paragraphs_and_its_own_passage(tmp_path, settings):
    """A regulation holds "Article 8" as its paragraphs "Article 8(1)", "Article 8(2)" and, after them, a passage
    "Article 8" that lists the instruments amending it: a reference to Article 8 reaches all of them, so
    following can take the paragraph closest to the question rather than that list."""
    resolver = _rulebook_resolver(tmp_path, settings, {
        "harbour-regulation.md": "# Harbour Regulation\n\n## [PID a] Article 8(1) Ban on resale\n\nA berth shall "
                                 "not be resold to another vessel.\n\n## [PID b] Article 8(2) Ban on resale\n\nA "
                                 "resold berth is void.\n\n## [PID c] Article 8 Ban on resale\n\nLegal Instruments "
                                 "that change this Article\n\n## [PID d] Article 9(1) Fees\n\nThe fee for a berth "
                                 "resold in breach of Article 8 is doubled.\n",
    })
    resolution = resolver.resolve(_ref("The fee for a berth resold in breach of Article 8 is doubled.",
                                       "harbour-regulation.md"), "may a berth be resold")
    assert (resolution.path, [r.section for r in resolution.results]) == ("section_index", [
        "Article 8(1) Ban on resale", "Article 8(2) Ban on resale", "Article 8 Ban on resale"])
    # a paragraph named alone is that paragraph
    paragraph = resolver.resolve(_ref("A berth resold against Article 8(2) is void.", "harbour-regulation.md"), "")
    assert [r.section for r in paragraph.results] == ["Article 8(2) Ban on resale"]

def test_a_bare_paragraph_is_a_paragraph_of_the_citing_rule(tmp_path, settings):
    resolver = _rulebook_resolver(tmp_path, settings, {
        "FUNDS.md": "# FUNDS\n\n## [PID a] 17.1.4.(1)\n\nA Fund Administrator must keep records.\n\n"
                    "## [PID b] 17.1.4.(2)\n\nParagraph (1) does not apply to (a) a small fund or (b) a closed "
                    "fund, see paragraphs (a) and (b).\n\n## [PID c] 3.1.1.(1)\n\nRecords of a fund.\n",
    })
    numbered = _ref("Paragraph (1) does not apply", "FUNDS.md")
    sibling = resolver.resolve(numbered, "records", citing_section="17.1.4.(2)")
    assert (sibling.path, [r.section for r in sibling.results]) == ("section_index", ["17.1.4.(1)"])
    # a letter names an item of the citing passage: following finds it already in the context
    lettered = resolver.resolve(_ref("see paragraphs (a) and (b).", "FUNDS.md"), "records", citing_section="17.1.4.(2)")
    assert [r.section for r in lettered.results] == ["17.1.4.(2)"]
    # without the citing section there is nothing to place it by
    assert resolver.resolve(numbered, "records").path != "section_index"



def test_a_numbered_paragraph_of_this_article_is_a_paragraph_of_the_citing_article(tmp_path, settings):
    resolver = _rulebook_resolver(tmp_path, settings, {
        "LEVY.md": "# LEVY\n\n## [PID a] Article 12(1) Levy base\n\nThe levy base is the annual turnover.\n\n"
                   "## [PID b] Article 12(2) Levy base\n\nTurnover excludes intra-group sales.\n\n"
                   "## [PID c] Article 12(3) Levy base\n\nThe levy is the base calculated in accordance with "
                   "paragraphs 1 and 2 of this Article times the rate.\n\n"
                   "## [PID d] 2.1\n\nA firm pays the levy, see paragraph 1.\n",
    })
    resolution = resolver.resolve(_ref("in accordance with paragraphs 1 and 2 of this Article", "LEVY.md"), "levy",
                                  citing_section="Article 12(3) Levy base")
    assert (resolution.path, [r.section for r in resolution.results]) == (
        "section_index", ["Article 12(1) Levy base", "Article 12(2) Levy base"])
    # outside an article held paragraph by paragraph, a bare paragraph number is no sibling
    assert resolver.resolve(_ref("see paragraph 1.", "LEVY.md"), "levy", citing_section="2.1").path != "section_index"

def test_the_section_holders_are_looked_up_once_per_resolver(demo_kb, monkeypatch):
    resolver = ReferenceResolver(demo_kb)
    lookups = []
    real = demo_kb.documents_with_section
    monkeypatch.setattr(demo_kb, "documents_with_section", lambda *args: lookups.append(args) or real(*args))
    first = resolver.resolve(_ref("as calibrated per section 4.2", "Quantum_Dosimetry_Paper.pdf"))
    again = resolver.resolve(_ref("see section 4.2 again", "Quantum_Dosimetry_Paper.pdf"))
    assert len(lookups) == 1
    assert [r.chunk_id for r in again.results] == [r.chunk_id for r in first.results]
    assert {r.doc for r in first.results} == {"Detector_Calibration_Guide.pdf"}


def test_a_long_range_is_resolved_beyond_its_first_members(demo_kb):
    resolution = ReferenceResolver(demo_kb).resolve(_ref("nach den §§ 1 bis 14 des Quantenstrahlenschutzgesetzes",
                                                         "QStrV.pdf"))
    assert resolution.path == "section_index"
    assert {"§ 1", "§ 12", "§ 14"} <= {r.section for r in resolution.results}


class RecordingDecider:
    """Follows everything and remembers what the gate was shown (a test double, no LLM involved)."""

    def __init__(self):
        self.shown: list[GateInput] = []

    def decide_reference(self, item, anchor, language):
        self.shown.append(item)
        return ReferenceDecision(follow=True, reason="recorded")


def test_the_gate_judges_the_chunk_that_following_takes(demo_kb, settings):
    seed = _seed(demo_kb, "QStrV.pdf", "§ 5")[0]
    ranged = seed.model_copy(update={"text": "Es gelten die §§ 1 bis 14 des Quantenstrahlenschutzgesetzes."})
    decider = RecordingDecider()
    references = _references(settings, follow_depth=1, filter_followed=False, max_cited_by=0)
    anchor = "Wie oft sind Beschäftigte zu unterweisen?"  # § 9, the 6th member of the range
    trail = build_follower(demo_kb, settings, decider, references=references).run([ranged], anchor, "de")
    edge = next(e for e in trail.followed_edges if e.from_chunk == ranged.chunk_id)
    taken = next(i.result for i in trail.candidates if i.result.chunk_id == edge.to_chunks[0])
    assert [item.target_text for item in decider.shown] == [taken.text]
    members = ReferenceResolver(demo_kb).resolve(decider.shown[0].reference).results
    similarity = demo_kb.similarity(members, anchor)
    assert taken.chunk_id == max(members, key=lambda m: similarity[m.chunk_id]).chunk_id
    assert taken.section == "§ 9"  # the first six members (§§ 1 to 6) alone would have hidden it


def test_window_is_cut_at_word_boundaries():
    text = "alpha beta gamma § 12 delta epsilon zeta"
    assert window_around(text, 17, 21, 8) == "gamma § 12 delta"


def _seed(demo_kb, doc, section):
    hits = demo_kb.section_lookup(doc, section)
    assert hits
    return hits[:1]


def _references(settings, **changes):
    base = dict(follow_depth=2, token_budget=50_000, convergence_same_doc_threshold=3, relevance_threshold=0.6,
                early_refusal_count=3, min_results=2, filter_followed=False)
    return settings.references.model_copy(update=base | changes)


def _follower(demo_kb, settings, **changes):
    gate = ExtractiveDecider(demo_kb.index.embedder, settings.references.gate_threshold)
    return build_follower(demo_kb, settings, gate, references=_references(settings, **changes))


def _followed(trail):
    return [c for c in trail.candidates if c.kind == "followed"]


def test_follows_the_cited_section_and_admits_it_after_the_citing_chunk(demo_kb, settings):
    trail = _follower(demo_kb, settings).run(_seed(demo_kb, "QStrV.pdf", "§ 5"), ANCHOR, "de")
    keys = [(i.result.doc, i.result.section, i.depth) for i in trail.candidates]
    assert keys[0] == ("QStrV.pdf", "§ 5", 0)
    assert ("QStrG.pdf", "§ 12", 1) in keys
    child = next(i for i in trail.candidates if i.result.section == "§ 12")
    assert child.cited_by == child.parent == trail.candidates[0].chunk_id and child.tier == "secondary"
    assert 0 < child.value <= trail.candidates[0].value  # the citer's value, apportioned by the gate
    order = [c.chunk_id for c in admit(trail.candidates, 100_000)]
    assert order.index(child.parent) < order.index(child.chunk_id)
    edge = next(e for e in trail.followed_edges if "§ 12" in e.target)
    assert edge.resolution == "section_index" and edge.depth == 1 and edge.to_sections == ["§ 12"]
    assert edge.from_doc == "QStrV.pdf" and edge.reason_key
    assert trail.tokens_used == sum(estimate_tokens(i.result.text) for i in _followed(trail))
    assert f"legal_section:{edge.target}" in trail.visited
    # the citing chunk's reference carries the chunk it resolved to
    reference = next(r for r in trail.candidates[0].references if "§ 12" in r.target)
    assert [nested.chunk_id for nested in reference.nested_chunks] == [child.chunk_id]
    assert reference.nested_chunks[0].document == "QStrG.pdf" and reference.nested_chunks[0].depth == 1


def test_a_cited_hit_gains_value_and_keeps_following_its_own_references(demo_kb, settings):
    # § 3 QStrG cites § 4, the second hit; § 4 cites §§ 8, 9. § 4 stays a hit, worth more for being cited.
    seeds = _seed(demo_kb, "QStrG.pdf", "§ 3") + _seed(demo_kb, "QStrG.pdf", "§ 4")
    anchor = "Wann braucht der Betrieb einer Quantenquelle eine Anzeige oder eine Genehmigung?"
    trail = _follower(demo_kb, settings, max_follow_per_chunk=3).run(seeds, anchor, "de")
    four = next(c for c in trail.candidates if c.result.section == "§ 4" and c.kind == "hit")
    assert four.value > hit_value(1) and four.depth == 0
    assert any(e.from_section == "§ 3" and e.to_sections == ["§ 4"] for e in trail.followed_edges)
    assert len({i.chunk_id for i in trail.candidates}) == len(trail.candidates)
    from_four = {s for e in trail.followed_edges if e.from_section == "§ 4" for s in e.to_sections}
    assert from_four & {"§ 8", "§ 9"}
    assert from_four <= {c.result.section for c in trail.candidates}


def test_the_own_heading_label_is_not_followed(demo_kb, settings):
    trail = _follower(demo_kb, settings, follow_depth=1).run(_seed(demo_kb, "QStrV.pdf", "§ 5"), ANCHOR, "de")
    assert not any(e.target == "§ 5 QStrV.pdf" for e in trail.edges)


def test_a_reference_cited_twice_in_one_chunk_is_one_edge(demo_kb, settings):
    seed = _seed(demo_kb, "QStrV.pdf", "§ 5")[0]
    twice = seed.model_copy(update={"text": seed.text + "\nDie Grenzwerte nach § 12 des "
                                                      "Quantenstrahlenschutzgesetzes gelten auch hier; § 12 des "
                                                      "Quantenstrahlenschutzgesetzes bleibt."})
    trail = _follower(demo_kb, settings, follow_depth=1).run([twice], ANCHOR, "de")
    targets = [e.target for e in trail.edges if e.from_chunk == twice.chunk_id]
    assert targets.count("§ 12 Quantenstrahlenschutzgesetzes") == 1, targets


def test_an_edge_records_the_paragraphs_its_reference_names(demo_kb, settings):
    seed = _seed(demo_kb, "QStrV.pdf", "§ 5")[0]
    written = seed.model_copy(update={"text": "Für die Wartung gelten die Grenzwerte nach § 12 Absatz 2 des "
                                              "Quantenstrahlenschutzgesetzes; § 12 Absatz 4 des "
                                              "Quantenstrahlenschutzgesetzes bleibt unberührt."})
    trail = _follower(demo_kb, settings, follow_depth=1).run([written], ANCHOR, "de")
    edge = next(e for e in trail.edges if e.from_chunk == written.chunk_id and e.to_sections == ["§ 12"])
    # cited twice in one chunk: one edge, naming the paragraphs of both
    assert edge.to_paragraphs == ["2", "4"]


def test_following_takes_the_chunk_that_opens_the_paragraph_the_reference_names(demo_kb, settings):
    def chunk(chunk_id, text):
        return VectorResult(chunk_id=chunk_id, text=text, doc="KranG.pdf", collection="Recht", page_start=1,
                            page_end=1, section="§ 9")
    first = chunk("a", "§ 9 Sperren\n(1) Die Hafenbehörde kann Gelände sperren.\n(2) Die Sperre wird bekannt gemacht.")
    second = chunk("b", "(3) Dauert die Sperre länger als drei Jahre, kann der Eigentümer Entschädigung verlangen.")
    follower = _follower(demo_kb, settings)
    closer = {"a": 0.9, "b": 0.2}
    assert follower._choose([first, second], closer, ["3"]) == [second]
    # without a paragraph named, the chunk closest to the question: § 9 opens with a statement of its own
    assert follower._choose([first, second], closer, []) == [first]
    assert follower._choose([first, second], closer, ["7"]) == [first]
    assert follower._choose([first, second], {"a": 0.2, "b": 0.9}, []) == [second]
    # a section opening with a lead-in its items complete: the lead-in, however close an item is
    assert follower._choose([first, second], {"a": 0.2, "b": 0.9}, [], frozenset({"a"})) == [first]


def test_following_lands_where_the_cited_rule_begins(tmp_path, settings):
    """A rule held passage by passage: its lead-in ("… including by:"), then its items. A reference to it lands on
    the lead-in, which the items complete, though an item is closer to the question; and still does when search
    already holds that item: the context holds only part of the rule."""
    kb = _rulebook_resolver(tmp_path, settings, {
        "berths.md": "# Berths\n\n"
                     "## [PID a] 4.10 (Chapter 4 Berth incidents)\n\nA harbour master must manage berth incidents "
                     "effectively, including by:\n\n"
                     "## [PID b] 4.10 (Chapter 4 Berth incidents)\n\n(1) closing the berth to traffic ;\n\n"
                     "## [PID c] 4.10 (Chapter 4 Berth incidents)\n\n(2) telling pilots of the tide heights at the "
                     "closed berth within one hour ;\n\n"
                     "## [PID d] 5.2 (Chapter 5 Drills)\n\nEach drill tests the steps under 4.10 with the pilots "
                     "on duty.\n",
    }).kb
    question = "Within what time must pilots be told the tide heights at a closed berth?"
    [drill] = kb.section_lookup("berths.md", "5.2")[:1]
    lead_in, _, tides = kb.section_lookup("berths.md", "4.10")
    closeness = kb.similarity([lead_in, tides], question)
    assert closeness[tides.chunk_id] > closeness[lead_in.chunk_id]  # what the test rests on
    gate = ExtractiveDecider(kb.index.embedder, threshold=0.0)  # follows everything
    follower = build_follower(kb, settings, gate, references=_references(settings, follow_depth=1, max_cited_by=0))
    for hits in ([drill], [drill, tides]):
        followed = [c.chunk_id for c in follower.run(hits, question, "en").candidates if c.kind == "followed"]
        assert followed == [lead_in.chunk_id]


def _stopped_by(trail) -> set[str]:
    """Why following stopped, as the keys the front ends word (messages/reasons.py)."""
    return {stop["key"] for stop in trail.stop_reasons}


def test_depth_limit_stops_the_recursion(demo_kb, settings):
    seeds = _seed(demo_kb, "QStrV.pdf", "§ 5")
    none = _follower(demo_kb, settings, follow_depth=0).run(seeds, ANCHOR, "de")
    assert {i.depth for i in none.candidates} == {0} and not none.followed_edges
    assert _stopped_by(none) == {"depth_limit"}
    one = _follower(demo_kb, settings, follow_depth=1).run(seeds, ANCHOR, "de")
    assert max(i.depth for i in one.candidates) == 1
    two = _follower(demo_kb, settings, follow_depth=2).run(seeds, ANCHOR, "de")
    assert max(i.depth for i in two.candidates) <= 2 and len(two.candidates) >= len(one.candidates)


def test_visited_references_are_not_followed_again(demo_kb, settings):
    seeds = _seed(demo_kb, "QStrV.pdf", "§ 5")
    first = _follower(demo_kb, settings, follow_depth=1).run(seeds, ANCHOR, "de")
    again = _follower(demo_kb, settings, follow_depth=1).run(seeds, ANCHOR, "de", visited=set(first.visited))
    before = {e.target for e in first.followed_edges}
    assert before and not before & {e.target for e in again.followed_edges}
    assert {e.target for e in again.edges if e.reason_key == "already_visited"} == before


def test_token_budget_stops_following(demo_kb, settings):
    trail = _follower(demo_kb, settings, token_budget=0).run(_seed(demo_kb, "QStrV.pdf", "§ 5"), ANCHOR, "de")
    assert not trail.followed_edges and "token_budget" in _stopped_by(trail)


def test_convergence_stops_following_into_one_document(demo_kb, settings):
    trail = _follower(demo_kb, settings, convergence_same_doc_threshold=1, follow_depth=1, max_follow_per_chunk=3).run(
        _seed(demo_kb, "QStrV.pdf", "§ 5"), ANCHOR, "de")
    followed_into_qstrg = [e for e in trail.followed_edges if "QStrG.pdf" in e.to_docs]
    assert len(followed_into_qstrg) == 1
    assert any((e.reason_key, e.reason_values) == ("converged", {"doc": "QStrG.pdf"}) for e in trail.edges)


def test_early_refusal_stops_after_irrelevant_first_hops(demo_kb, settings):
    trail = _follower(demo_kb, settings, early_refusal_count=1, early_refusal_threshold=1.01).run(
        _seed(demo_kb, "QStrV.pdf", "§ 5"), ANCHOR, "de")
    assert len(trail.followed_edges) == 1 and "early_refusal" in _stopped_by(trail)
    assert any(e.decision == "skipped" and e.reason_key == "early_refusal" for e in trail.edges)


def test_words_are_compared_in_the_language_of_the_text():
    question = "Which dose limits apply to occupationally exposed persons?"
    assert lexical_anchor(question, "en", "de") == (glossary_terms(question), "de")
    assert lexical_anchor(question, "en", "en") == (question, "en")
    assert lexical_anchor(ANCHOR, "de", "de") == (ANCHOR, "de")
    # an English question with no glossary term stays as asked: nothing to compare it by
    assert lexical_anchor("Who wrote this?", "en", "de") == ("Who wrote this?", "de")


def test_an_english_question_over_a_german_statute_is_judged_by_its_glossary_terms(demo_kb, settings, monkeypatch):
    """English words stemmed as English are not in German text: judged that way every German passage
    looked irrelevant to an English question, and early refusal stopped following after three hops."""
    monkeypatch.setattr(demo_kb.index, "embedder", english_only(demo_kb.index.embedder))
    question = "Which dose limits apply to occupationally exposed persons?"
    seed = _seed(demo_kb, "QStrV.pdf", "§ 5")
    assert keyword_overlap(question, seed[0].text, "en") == 0.0
    trail = _follower(demo_kb, settings, follow_depth=1).run(seed, question, "en")
    hit = trail.candidates[0]
    by_glossary = keyword_overlap(glossary_terms(question), seed[0].text, "de")
    # an embedder that reads English only (MiniLM): its similarity to German text does not vote
    assert not demo_kb.embedder_reads("Recht")
    assert by_glossary > 0 and hit.own_relevance == round(by_glossary, 4)
    followed = _followed(trail)
    assert followed and all(c.own_relevance == round(keyword_overlap(glossary_terms(question), c.result.text, "de"),
                                                     4)
                            for c in followed)


def test_a_sections_other_chunks_are_valued_by_the_german_terms_of_an_english_question(corpus_kb):
    chunks = corpus_kb.section_lookup("StrlSchG.pdf", "§ 70")
    assert len(chunks) >= 3
    question = "When is a radiation protection officer protected against termination of employment?"
    first = Candidate(chunks[0], "hit", 0, 0.9, value=1.0)
    pool = Pool()
    pool.add(first)
    added = section_candidates(corpus_kb, [first], pool, question, "en")
    expected = [new_terms_share(glossary_terms(question), chunks[0].text, c.text, "de") for c in chunks[1:]]
    assert [c.value for c in added] == expected and max(expected) > 0
    # compared as English words, nothing in German text is new: the section never grew
    assert all(new_terms_share(question, chunks[0].text, c.text, "en") == 0 for c in chunks[1:])


def test_relevance_filter_with_backfill():
    scored = [Scored("a", 0.9), Scored("b", 0.3), Scored("c", 0.5), Scored("d", 0.7)]
    kept, dropped = filter_by_relevance(scored, 0.6, min_results=3)
    assert [s.item for s in kept] == ["a", "c", "d"] and [s.item for s in dropped] == ["b"]
    kept, _ = filter_by_relevance(scored, 0.6, min_results=0)
    assert [s.item for s in kept] == ["a", "d"]


def test_followed_chunks_below_the_threshold_are_filtered(demo_kb, settings):
    trail = _follower(demo_kb, settings, filter_followed=True, relevance_threshold=1.01, min_results=0).run(
        _seed(demo_kb, "QStrV.pdf", "§ 5"), ANCHOR, "de")
    assert {i.depth for i in trail.candidates} == {0} and trail.dropped


def test_tiers_follow_the_seed_rules():
    assert classify_tier(0, 0.9) == "primary" and classify_tier(0, 0.85) == "primary"
    assert classify_tier(0, 0.84) == "secondary" and classify_tier(0, 0.6) == "secondary"
    assert classify_tier(0, 0.3) == "tertiary"
    assert classify_tier(1, 0.95) == "secondary" and classify_tier(2, 0.9) == "tertiary"
    assert classify_tier(0, 0.9, source="hitl") == "tertiary"
    assert (tier_weight("primary"), tier_weight("secondary"), tier_weight("tertiary")) == (1.0, 0.7, 0.4)


def test_the_extractive_gate_translates_an_english_question_only_for_a_german_window(demo_kb, monkeypatch):
    compared: list[tuple[str, str]] = []
    real_overlap = gate_module.keyword_overlap
    monkeypatch.setattr(gate_module, "keyword_overlap",
                        lambda anchor, text, language: compared.append((anchor, text)) or real_overlap(anchor, text,
                                                                                                       language))
    decider = ExtractiveDecider(demo_kb.index.embedder, threshold=0.5)
    question = "Which conditions apply to the licence of the operator?"
    english = GateInput(reference=_ref("see Rule 3.2", "Guide.md"), document="Guide.md",
                        window="The conditions of the licence of the operator are set out in Rule 3.2.")
    german = GateInput(reference=_ref("nach § 12", "QStrV.pdf"), document="QStrV.pdf",
                       window="Die Auflagen der Genehmigung des Betreibers regelt § 12 dieser Verordnung.")
    english_score, german_score = decider.scores([english, german], question)
    anchors = dict((text, anchor) for anchor, text in compared)
    assert anchors[english.window] == question
    assert "Genehmigung" in anchors[german.window] and "licence" not in anchors[german.window]
    assert english_score > 0 and german_score > 0


def test_llm_gate_decisions_and_fallback_on_garbage(demo_kb, caplog):
    item = GateInput(reference=_ref("nach § 12 des Quantenstrahlenschutzgesetzes", "QStrV.pdf"),
                     window="Grenzwerte nach § 12 des Quantenstrahlenschutzgesetzes", document="QStrV.pdf")
    reply = '<think>hm</think>{"follow": false, "reason": "nicht relevant"}'
    scripted = LLMReasoner(FakeListChatModel(responses=[reply]),
                           max_retries=0)
    [verdict] = gate_references([item], ANCHOR, scripted, "de")
    assert not verdict.decision.follow and verdict.decision.reason == "nicht relevant" and scripted.calls == 1

    garbage = LLMReasoner(FakeListChatModel(responses=["I think you should follow it!"]), max_retries=1, backoff_s=0)
    with caplog.at_level(logging.WARNING):
        [fallback] = gate_references([item, item], ANCHOR, garbage, "de", concurrency=2)[:1]
    assert fallback.decision.follow and fallback.decision.reason_key == "gate_error"
    assert "following it" in caplog.text and garbage.calls >= 2


def test_follower_with_a_scripted_llm_gate(demo_kb, settings):
    answers = ['{"follow": true, "reason": "Grenzwerte stehen dort"}'] * 20
    reasoner = LLMReasoner(FakeListChatModel(responses=answers), max_retries=0)
    references = _references(settings, follow_depth=1)
    trail = build_follower(demo_kb, settings, reasoner, references=references).run(
        _seed(demo_kb, "QStrV.pdf", "§ 5"), ANCHOR, "de")
    assert trail.followed_edges and all(e.reason == "Grenzwerte stehen dort" for e in trail.followed_edges)
    assert reasoner.calls >= len(trail.followed_edges)


# ---- the evaluation harness on a slice of the dev questions ------------------------------------


@pytest.mark.corpus
def test_eval_end_to_end_on_a_slice(corpus_db, corpus_kb, tmp_path):
    questions = tmp_path / "q.jsonl"
    lines = (CORPUS / "questions.dev.jsonl").read_text(encoding="utf-8").splitlines()[:4]
    questions.write_text("\n".join(lines) + "\n")
    for mode in ("flat", "rabbithole"):
        out = tmp_path / f"{mode}.jsonl"
        assert cli_main(["eval", "--kb", str(CORPUS), "--db", str(corpus_db), "--questions", str(questions),
                         "--mode", mode, "--budget-chars", "12000", "--out", str(out), "--no-progress"]) == 0
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert [r["id"] for r in rows] == [json.loads(line)["id"] for line in lines]
        for row in rows:
            assert row["mode"] == mode and row["seconds"] >= 0 and row["llm_calls"] == 0
            assert row["context"] and set(row["context"][0]) == {
                "doc", "section", "page_start", "page_end", "chunk_id", "depth", "tier", "kind", "text"}
            sizes = [len(entry["text"]) for entry in row["context"]]
            assert sum(sizes[:-1]) < 12000  # the budget: only the last item may run over
            for index, entry in enumerate(row["context"]):
                if entry["kind"] == "followed":  # a followed chunk comes after a chunk one level up
                    assert any(e["depth"] == entry["depth"] - 1 for e in row["context"][:index])
        scored = subprocess.run([sys.executable, str(SHARED / "bench" / "score_xref.py"), str(questions), str(out)],
                                capture_output=True, text=True, check=True).stdout
        assert "xref-de: both@10=" in scored
    rabbit = [json.loads(line) for line in (tmp_path / "rabbithole.jsonl").read_text().splitlines()]
    assert any(entry["depth"] > 0 for row in rabbit for entry in row["context"])
    # flat: the same first stage and assembler, nothing followed; every item is a hit or a chunk of a hit's section
    flat = [json.loads(line) for line in (tmp_path / "flat.jsonl").read_text().splitlines()]
    for row, line in zip(flat, lines, strict=True):
        hits = corpus_kb.retrieve(json.loads(line)["question"], k=corpus_kb.settings.first_stage_pool)
        sections = {(hit.doc, hit.section) for hit in hits}
        assert all(entry["kind"] in ("hit", "section") and entry["depth"] == 0 for entry in row["context"])
        assert all((entry["doc"], entry["section"]) in sections for entry in row["context"])


def test_backlink_keys_match_sections_exactly():
    documents = {"QStrG": "QStrG.pdf", "FSMR": "FSMR.md"}

    def target_document(reference):
        return documents.get(reference.book or "", reference.document_context)

    german = detect_references_regex("nach § 12 Absatz 2 QStrG", "QStrV.pdf")[0]
    assert cited_keys(german, target_document)[0] == context_key("QStrG.pdf", "§ 12")
    rule = detect_references_regex("as required by Rule 3.2.4(a)", "COBS.md")[0]
    keys = cited_keys(rule, target_document)
    assert keys == [("COBS.md", "3.2.4(a)"), ("COBS.md", "3.2.4")]  # a sub-paragraph falls back to its rule
    assert context_key("COBS.md", "3.2.4") in keys
    assert context_key("FSMR.md", "Part 6.Chapter 1.65.") == ("FSMR.md", "65")
    assert cited_keys(detect_references_regex("see https://example.org/a", "X.md")[0], target_document) == []
    assert cited_keys(detect_references_regex("nach § 9 BGB", "QStrV.pdf")[0], lambda r: None) == []


def _hit(chunk_id, doc, section, text):
    """A first-stage hit with the given text, for backlink tests."""
    result = VectorResult(chunk_id=chunk_id, text=text, doc=doc, collection="c", page_start=1, page_end=1,
                          section=section)
    return Candidate(result, "hit", 0, 0.5, 0.0)


def test_a_reference_to_a_numbered_chapter_cites_the_rules_in_it():
    assert seed_keys("Fees.md", "3A.1 (Chapter 3A Fee Tables)") == [
        ("Fees.md", "3a.1"), ("Fees.md", "3a"), ("Fees.md", "chapter3a")]
    assert seed_keys("Fees.md", "3.2.4(a)")[:2] == [("Fees.md", "3.2.4(a)"), ("Fees.md", "3.2.4")]
    assert seed_keys("QStrG.pdf", "§ 12") == [("QStrG.pdf", "§ 12")]  # a law's section holds no numbered rules

    def target_document(reference):
        return {"Licence Fees": "Fees.md"}.get(reference.book or "", reference.document_context)

    best = _hit("a", "Fees.md", "3A.1 (Chapter 3A Fee Tables)", "3A.1 The fee for a licence is set out below.")
    chapter = _hit("b", "Guide.md", "1.2 (Chapter 1 Scope)", "Firms pay what Licence Fees 3A lists per licence.")
    other = _hit("c", "Guide.md", "1.3 (Chapter 1 Scope)",
                 "Firms pay the fees that Licence Fees 3B lists for renewals.")
    rule = _hit("d", "Guide.md", "1.4 (Chapter 1 Scope)", "The fee in Licence Fees 3A.1 is due on application.")
    found = collect_backlinks([best, chapter, other, rule], [best], detect_references_regex, target_document)
    # the rule cited by its own number first, then the chapter that holds it; a sibling chapter cites nothing
    assert [(citer.chunk_id, cited.chunk_id) for citer, cited, _ in found] == [("d", "a"), ("b", "a")]


def test_a_passage_citing_a_rule_by_the_name_its_part_gives_it_is_a_backlink_of_that_rule(tmp_path, settings):
    """The best hit shows its rule's name ("Core Rule 2: …"); a guide citing "Core Rule 2" cites it, whatever
    document the guide is in, and the citation index finds it too; "Pilot Core Rule 2" is another rule."""
    from rabbithole_lab.rabbithole.backlinks import shown_keys
    from rabbithole_lab.rabbithole.citation_index import CitationIndex

    best = _hit("a", "core-rules.md", "2.2 (Chapter 2 Core Rules)",
                "[PID a] 2.2 (Chapter 2 Core Rules)\nCore Rule 2: A firm must keep its moorings safe.")
    citer = _hit("b", "guide.md", "1.2 (Chapter 1 Scope)", "Harbour masters check that firms meet Core Rule 2 daily.")
    other = _hit("c", "guide.md", "1.3 (Chapter 1 Scope)", "Pilots on board follow Pilot Core Rule 2 at all times.")
    found = collect_backlinks([best, citer, other], [best], detect_references_regex,
                              lambda reference: reference.document_context)
    assert [(c.chunk_id, cited.chunk_id) for c, cited, _ in found] == [("b", "a")]
    kb = _rulebook_resolver(tmp_path, settings, {
        "core-rules.md": "# Core Rules\n\n## [PID a] 2.2 (Chapter 2 Core Rules)\n\nCore Rule 2: A firm must keep its "
                         "moorings safe.\n",
        "guide.md": "# Guide to the harbour\n\n## [PID b] 1.2 (Chapter 1 Scope)\n\nHarbour masters check that firms "
                    "meet Core Rule 2 daily.\n\n## [PID c] 1.3 (Chapter 1 Scope)\n\nPilots on board follow Pilot Core "
                    "Rule 2 at all times.\n",
    }).kb
    [rule] = kb.section_lookup("core-rules.md", "2.2")
    citers = CitationIndex(kb, lambda reference: reference.document_context).citers(rule.collection,
                                                                                    shown_keys(rule.text))
    assert [kb.index.get_chunks(rule.collection, ids=citers)[0].section] == ["1.2 (Chapter 1 Scope)"]


def test_a_rule_cited_by_a_longer_form_of_its_name_is_a_backlink_of_the_passage_showing_it(tmp_path, settings):
    """"Harbour Core Rule 2" names the rule a passage shows as "Core Rule 2" (a guide adds its publisher's word):
    its citer is that rule's backlink, in the ranking and in the citation index, as following resolves it;
    "Pilot Core Rule 2", shown by a passage of its own, stays another rule."""
    from rabbithole_lab.rabbithole.backlinks import shown_keys
    from rabbithole_lab.rabbithole.citation_index import CitationIndex

    resolver = _rulebook_resolver(tmp_path, settings, {
        "core-rules.md": "# Core Rules\n\n## [PID a] 2.2 (Chapter 2 Core Rules)\n\nCore Rule 2: A firm must keep its "
                         "moorings safe.\n",
        "pilot-rules.md": "# Pilot Rules\n\n## [PID d] 3.2 (Chapter 3 Pilots)\n\nPilot Core Rule 2: A pilot must "
                          "stay sober on duty.\n",
        "guide.md": "# Guide to the harbour\n\n## [PID b] 1.2 (Chapter 1 Scope)\n\nHarbour masters check that firms "
                    "meet Harbour Core Rule 2 daily.\n\n## [PID c] 1.3 (Chapter 1 Scope)\n\nPilots on board follow "
                    "Pilot Core Rule 2 at all times.\n",
    })
    kb = resolver.kb
    [rule] = kb.section_lookup("core-rules.md", "2.2")
    best = Candidate(rule, "hit", 0, 0.5, 0.0)
    guide = [Candidate(chunk, "hit", 0, 0.5, 0.0) for chunk in kb.section_lookup("guide.md", "1.2")
             + kb.section_lookup("guide.md", "1.3")]
    as_cited = collect_backlinks([best, *guide], [best], detect_references_regex,
                                 lambda reference: reference.document_context)
    assert as_cited == []  # keyed by the name as written, "Harbour Core Rule 2" is no rule a passage shows
    found = collect_backlinks([best, *guide], [best], detect_references_regex,
                              lambda reference: reference.document_context, resolver.shown_name)
    assert [citer.result.section for citer, _, _ in found] == ["1.2 (Chapter 1 Scope)"]
    index = CitationIndex(kb, lambda reference: reference.document_context, resolver.shown_name)
    citers = index.citers(rule.collection, shown_keys(rule.text))
    assert [chunk.section for chunk in kb.index.get_chunks(rule.collection, ids=citers)] == ["1.2 (Chapter 1 Scope)"]
    assert resolver.shown_name("Pilot Core Rule 2") == "Pilot Core Rule 2"
    assert resolver.shown_name("Harbour Core Rule 9") == "Harbour Core Rule 9"  # no passage shows any form of it


def test_a_section_cites_a_seed_once_however_many_of_its_chunks_do():
    guide = "Guide.md"
    best = _hit("a", guide, "3A.1 (Chapter 3A Fee Tables)", "3A.1 The fee for a licence is set out below.")
    first = _hit("b", guide, "3B.1 (Chapter 3B Renewals)", "(a) a renewal costs the fee set out in 3A.1 for a licence;")
    second = _hit("c", guide, "3B.1 (Chapter 3B Renewals)",
                  "(b) a late renewal costs twice the fee referred to in 3A.1;")
    other = _hit("d", guide, "1.5 (Chapter 1 Introduction)", "Firms pay the fees of rule 3A.1 on application.")
    found = collect_backlinks([best, first, second, other], [best], detect_references_regex,
                              lambda reference: reference.document_context)
    assert [citer.chunk_id for citer, _, _ in found] == ["b", "c", "d"]
    # the second chunk of 3B.1 is the same provision's citation: it does not take the other provision's place
    assert [citer.chunk_id for citer, _, _ in one_per_section(found)] == ["b", "d"]


def _citers_of(trail, chunk_id: str) -> int:
    return sum(1 for c in trail.candidates if c.kind == "backlink" and c.cites == chunk_id)


def test_a_hit_further_down_that_cites_the_best_hit_joins_it(demo_kb, settings):
    hits = (_seed(demo_kb, "QStrG.pdf", "§ 12") + _seed(demo_kb, "QStrG.pdf", "§ 3")
            + _seed(demo_kb, "QStrG.pdf", "§ 13")  # cites Anlage 2, nothing among the hits
            + _seed(demo_kb, "QStrV.pdf", "§ 6"))  # "§ 6 ... nach § 12 QStrG"
    # one backlink place: the ranked citer takes it, and one place below it stays open to a passage search did
    # not rank; the two share the best hit's value
    trail = _follower(demo_kb, settings, follow_depth=0, max_cited_by=1).run(hits, ANCHOR, "de")
    by_section = {(c.result.doc, c.result.section): c for c in trail.candidates if c.kind in ("hit", "backlink")}
    citer = by_section[("QStrV.pdf", "§ 6")]
    assert citer.kind == "backlink" and citer.cites == hits[0].chunk_id and "12" in citer.via
    citers = [c for c in trail.candidates if c.kind == "backlink" and c.cites == hits[0].chunk_id]
    assert len(citers) == 2 and all(c.rank > 3 for c in citers if c is not citer)
    best = by_section[("QStrG.pdf", "§ 12")].value
    assert citer.value == backlink_value(hit_value(3), best, 2) > hit_value(3)  # it gains part of the best hit's value
    assert by_section[("QStrG.pdf", "§ 13")].kind == "hit" and by_section[("QStrG.pdf", "§ 13")].value == hit_value(2)
    edge = next(e for e in trail.edges if e.resolution == "cited_by")
    assert edge.from_chunk == hits[3].chunk_id and edge.to_chunks == [hits[0].chunk_id] and edge.decision == "followed"
    # off, or only a lower hit is cited: nothing changes
    off = _follower(demo_kb, settings, follow_depth=0, max_cited_by=0).run(hits, ANCHOR, "de")
    assert [c.value for c in off.candidates if c.kind != "section"] == [hit_value(r) for r in range(4)]
    lower = _follower(demo_kb, settings, follow_depth=0, max_cited_by=2).run(hits[1:] + hits[:1], ANCHOR, "de")
    assert not any(c.kind == "backlink" for c in lower.candidates if c.chunk_id in {hit.chunk_id for hit in hits})
    # a hit given twice is one candidate
    again = _follower(demo_kb, settings, follow_depth=0, max_cited_by=2).run(hits + hits[3:], ANCHOR, "de")
    assert [c.result.section for c in again.candidates if c.kind != "section"].count("§ 6") == 1


def test_a_hit_whose_section_an_earlier_hit_holds_still_enters_when_it_cites_the_best_hit(demo_kb, settings):
    hits = _seed(demo_kb, "QStrG.pdf", "§ 12") + _seed(demo_kb, "QStrG.pdf", "§ 3")
    citing = _seed(demo_kb, "QStrV.pdf", "§ 6")[0]  # "§ 6 ... nach § 12 QStrG"
    # an earlier hit of the same section that cites nothing: it stands for the section, yet does not cite
    holder = citing.model_copy(update={"chunk_id": "same-section-earlier", "text": "Die Kurse dauern einen Tag."})
    trail = _follower(demo_kb, settings, follow_depth=0, max_cited_by=1).run([*hits, holder, citing], ANCHOR, "de")
    by_chunk = {c.chunk_id: c for c in trail.candidates}
    assert by_chunk[holder.chunk_id].kind == "hit"
    citer = by_chunk[citing.chunk_id]
    assert citer.kind == "backlink" and citer.cites == hits[0].chunk_id
    assert citer.value == backlink_value(hit_value(citer.rank), by_chunk[hits[0].chunk_id].value,
                                         _citers_of(trail, hits[0].chunk_id)) > hit_value(citer.rank)
    assert any(e.resolution == "cited_by" and e.from_chunk == citing.chunk_id for e in trail.edges)
    # a chunk the pool holds already is read once, and one that cites nothing stays out
    again = _follower(demo_kb, settings, follow_depth=0, max_cited_by=2).run([*hits, holder, holder], ANCHOR, "de")
    assert [c.chunk_id for c in again.candidates if c.kind != "section"].count(holder.chunk_id) == 1
    # the citing passage, not ranked now, is still found by the citation index: after the whole ranking
    [indexed] = [c for c in again.candidates if c.chunk_id == citing.chunk_id]
    assert indexed.kind == "backlink" and indexed.rank >= 3


def test_a_passage_below_the_cut_enters_only_when_it_cites_the_best_hit(demo_kb, settings):
    hits = _seed(demo_kb, "QStrG.pdf", "§ 12") + _seed(demo_kb, "QStrG.pdf", "§ 3")
    below = (_seed(demo_kb, "QStrG.pdf", "§ 13")  # cites Anlage 2, not the best hit: stays out
             + _seed(demo_kb, "QStrV.pdf", "§ 6"))  # "§ 6 ... nach § 12 QStrG": joins as a backlink
    trail = _follower(demo_kb, settings, follow_depth=0, max_cited_by=1).run(hits, ANCHOR, "de", below_cut=below)
    pooled = {(c.result.doc, c.result.section): c for c in trail.candidates if c.kind in ("hit", "backlink")}
    assert ("QStrG.pdf", "§ 13") not in pooled
    citer = pooled[("QStrV.pdf", "§ 6")]
    assert citer.kind == "backlink" and citer.cites == hits[0].chunk_id and citer.rank == 3  # its place in the ranking
    assert citer.value == backlink_value(hit_value(3), pooled[("QStrG.pdf", "§ 12")].value,
                                         _citers_of(trail, hits[0].chunk_id)) > hit_value(3)
    assert 0 < citer.own_relevance <= 1
    assert any(e.resolution == "cited_by" and e.from_chunk == below[1].chunk_id for e in trail.edges)
    # with backlinks off the continuation is not read at all
    off = _follower(demo_kb, settings, follow_depth=0, max_cited_by=0).run(hits, ANCHOR, "de", below_cut=below)
    assert {c.result.section for c in off.candidates if c.kind != "section"} == {"§ 12", "§ 3"}


def test_a_reference_to_an_earlier_version_is_recorded_but_not_followed(demo_kb, settings):
    seed = _seed(demo_kb, "QStrV.pdf", "§ 5")[0]
    old = seed.model_copy(update={"text": "Es gelten die Grenzwerte nach § 12 des Quantenstrahlenschutzgesetzes in der "
                                          "bis zum 31. Dezember 2010 geltenden Fassung."})
    trail = _follower(demo_kb, settings, follow_depth=1).run([old], ANCHOR, "de")
    [edge] = [e for e in trail.edges if e.from_chunk == old.chunk_id]
    assert edge.decision == "skipped" and edge.reason_key == "earlier_version"
    assert edge.reason_values["version"].startswith("in der bis zum 31. Dezember 2010")
    assert not trail.followed_edges


def test_eval_with_k_gives_the_k_most_valuable_items_not_the_first_k_of_a_character_context(demo_db, tmp_path):
    from rabbithole_lab.eval.xref_eval import run_question
    from rabbithole_lab.reasoning.factory import build_gate
    from rabbithole_lab.settings import load_settings
    from tests.conftest import DEMO_KB

    question = {"id": "q1", "language": "de",
                "question": "Welche Grenzwerte gelten für beruflich exponierte Personen bei Quantenstrahlung?"}
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps(question, ensure_ascii=False) + "\n", encoding="utf-8")
    out = tmp_path / "k.jsonl"
    assert cli_main(["--env-file", "none", "eval", "--kb", str(DEMO_KB), "--db", str(demo_db), "--questions",
                     str(questions), "--mode", "rabbithole", "--k", "3", "--out", str(out), "--no-progress"]) == 0
    [row] = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    settings = load_settings(env_file=None)
    kb = open_knowledge_base(settings, DEMO_KB, demo_db)
    follower = build_follower(kb, settings, build_gate(settings, kb.index.embedder))
    expected = run_question(kb, question, "rabbithole", follower, top_items=3)["top_items"]
    assert [entry["chunk_id"] for entry in row["context"]] == [entry["chunk_id"] for entry in expected]
    assert len(row["context"]) == 3


def test_a_passage_search_did_not_rank_joins_through_the_citation_index_once_read_and_kept(demo_kb, settings,
                                                                                          monkeypatch):
    """The best hit is § 12 QStrG and nothing ranked cites it: the passage that does ("§ 6 … nach § 12 QStrG")
    is found by the citation index, joins as a backlink ranked after the ranking, and the index is kept on
    disk so that the next follower does not read every chunk again."""
    from rabbithole_lab.rabbithole.citation_index import CitationIndex, citation_index_path

    hits = _seed(demo_kb, "QStrG.pdf", "§ 12") + _seed(demo_kb, "QStrG.pdf", "§ 3")
    citing = _seed(demo_kb, "QStrV.pdf", "§ 6")[0]
    trail = _follower(demo_kb, settings, follow_depth=0, max_cited_by=2).run(hits, ANCHOR, "de")
    [joined] = [c for c in trail.candidates if c.chunk_id == citing.chunk_id]
    assert joined.kind == "backlink" and joined.cites == hits[0].chunk_id and joined.rank >= len(hits)
    assert joined.value <= trail.candidates[0].value and 0 < joined.own_relevance <= 1
    assert any(e.resolution == "cited_by" and e.from_chunk == citing.chunk_id for e in trail.edges)
    # kept: a new index answers from the file, without reading the chunks
    monkeypatch.setattr(type(demo_kb.index), "all_chunks", lambda *_: pytest.fail("the chunks were read again"))
    fresh = CitationIndex(demo_kb, lambda reference: "QStrG.pdf" if reference.book == "QStrG" else None)
    assert citing.chunk_id in fresh.citers(hits[0].collection, [("QStrG.pdf", "§ 12")])
    assert fresh.citers(hits[0].collection, [("QStrG.pdf", "§ 999")]) == []
    # a damaged file is read again from the chunks, and kept again
    monkeypatch.undo()
    kept = citation_index_path(demo_kb.index, hits[0].collection)
    kept.write_text("{not json", encoding="utf-8")
    again = CitationIndex(demo_kb, lambda reference: "QStrG.pdf" if reference.book == "QStrG" else None)
    assert citing.chunk_id in again.citers(hits[0].collection, [("QStrG.pdf", "§ 12")])
    assert json.loads(kept.read_text(encoding="utf-8"))["references"]
    # one backlink place, taken by a ranked citer: it keeps its rank, and the place below it goes to a passage
    # of the index, ranked after the ranking
    ranked = _follower(demo_kb, settings, follow_depth=0, max_cited_by=1).run([*hits, citing], ANCHOR, "de")
    ranks = [c.rank for c in ranked.candidates if c.kind == "backlink"]
    assert len(ranks) == 2 and ranks[0] == 2 and ranks[1] >= 3


def test_a_footnote_of_the_passage_is_followed_whatever_the_gate_says(tmp_path, settings):
    """A footnote marker ends a sentence of the passage; the note names its source in words unlike the question.
    The note is followed though the gate would refuse it, and its low relevance does not stop following early;
    a plain reference of the same passage still goes through the gate."""
    kb = _rulebook_resolver(tmp_path, settings, {
        "SS9-30 Board oversight.md":
            "# SS9/30 Board oversight\n\n"
            "## [PID a1] 4.2 (Chapter 4 Board composition)\n\n"
            "The board should appoint a chair who is independent of the executives on appointment. 7 Where this "
            "is not the case, the firm should explain how the board oversees the executives, see 6.3 .\n\n"
            "## [PID a2] Footnote 7 (Chapter 4 Board composition)\n\n"
            "7. See the Lighthouse Code of Conduct, 2019 edition; https://example.org/lighthouse .\n\n"
            "## [PID a3] 6.3 (Chapter 6 Record keeping)\n\n"
            "Minutes are archived for ten years in the vault.\n",
    }).kb
    question = "Must the chair of the board be independent of the executives when appointed?"
    [seed] = [hit for hit in kb.section_lookup("SS9-30 Board oversight.md", "4.2")][:1]
    gate = ExtractiveDecider(kb.index.embedder, threshold=0.99)  # it refuses everything
    follower = build_follower(kb, settings, gate, references=_references(
        settings, early_refusal_count=1, early_refusal_threshold=1.01, max_cited_by=0))
    trail = follower.run([seed], question, "en")
    note = next(edge for edge in trail.edges if edge.to_sections[0].startswith("Footnote 7"))
    assert (note.relation, note.decision) == ("note", "followed")
    assert any(c.kind == "followed" and c.result.section.startswith("Footnote 7") for c in trail.candidates)
    rule = next(edge for edge in trail.edges if edge.to_sections[0].startswith("6.3"))
    assert rule.relation == "cites" and rule.decision == "skipped"
    assert "early_refusal" not in _stopped_by(trail)

    class Refuses:  # a model's gate: a plain no, worth nothing, so the note would add nothing either
        def decide_reference(self, item, anchor, language):
            return ReferenceDecision(follow=False, reason="not needed")

    refused = build_follower(kb, settings, Refuses(), references=_references(settings, max_cited_by=0))
    trail = refused.run([seed], question, "en")
    assert not any(c.kind == "followed" for c in trail.candidates)


def test_a_range_of_held_passages_shares_what_the_reference_is_worth(tmp_path, settings):
    """A passage citing a range lands on every passage in it; when search holds them all, they share the
    reference's part of the citer's value: a range does not multiply it, and the last of them does not
    overtake the passage that cites them."""
    rules = "".join(f"## [PID r{n}] 2.{n} (Chapter 2 Tide tables)\n\nThe tides at the {quay} quay.\n\n"
                    for n, quay in enumerate(("north", "south", "east", "west"), start=1))
    kb = _rulebook_resolver(tmp_path, settings, {
        "tides.md": "# Tides\n\n## [PID s] 1.1 (Chapter 1 Pilots)\n\nPilots read the tide tables in paragraphs "
                    "2.1 - 2.4 before every harbour entry.\n\n" + rules}).kb
    lookup = [kb.section_lookup("tides.md", label)[0] for label in
              ("1.1 (Chapter 1 Pilots)", *(f"2.{n} (Chapter 2 Tide tables)" for n in range(1, 5)))]
    gate = ExtractiveDecider(kb.index.embedder, threshold=0.0)  # follows everything
    follower = build_follower(kb, settings, gate, references=_references(settings, max_cited_by=0))
    trail = follower.run(lookup, "Which tide tables do harbour pilots read?", "en")
    citer, *held = [next(c for c in trail.candidates if c.chunk_id == hit.chunk_id) for hit in lookup]
    assert any(e.decision == "followed" and len(e.to_sections) > 1 for e in trail.edges)
    gained = [c.value - hit_value(c.rank) for c in held]
    assert all(g > 0 for g in gained) and sum(gained) <= citer.value + 1e-9
    assert max(c.value for c in held) < citer.value


def _fees_rulebook_backlinks(tmp_path, settings):
    """A rulebook whose rule 3.7 is cited by 3.6 (which search will not rank) and by 5.2 (ranked last, and further
    from the question than 3.6); returns the ranking and a function giving the backlinks' sections."""
    kb = _rulebook_resolver(tmp_path, settings, {
        "fees.md": "# Fees\n\n"
                   "## [PID a] 3.6 (Chapter 3 Periodic Fees)\n\nThe periodic fee a firm pays in its first fee year "
                   "is worked out under: (a) 3.7 for firms in their first fee year ;\n\n"
                   "## [PID b] 3.7 (Chapter 3 Periodic Fees)\n\nA firm pays the minimum periodic fee of its fee "
                   "block, reduced pro rata to the months left in that year.\n\n"
                   "## [PID c] 5.2 (Chapter 5 Special project fees)\n\nSpecial project fees for a restructuring of "
                   "the firm's legal entities are charged on top of the amounts under 3.7 .\n\n"
                   "## [PID d] 1.1 (Chapter 1 Application)\n\nThis Part applies to every firm.\n\n"
                   "## [PID e] 2.1 (Chapter 2 Definitions)\n\nA fee block is a group of firms of one kind.\n",
    }).kb
    question = "What periodic fee does a firm pay in its first fee year?"
    [rule] = kb.section_lookup("fees.md", "3.7")[:1]
    [application] = kb.section_lookup("fees.md", "1.1")[:1]
    [definitions] = kb.section_lookup("fees.md", "2.1")[:1]
    [special] = kb.section_lookup("fees.md", "5.2")[:1]
    closeness = kb.similarity(kb.section_lookup("fees.md", "3.6")[:1] + [special], question)
    assert max(closeness, key=closeness.get) != special.chunk_id  # what the tests rest on
    gate = ExtractiveDecider(kb.index.embedder, settings.references.gate_threshold)

    def backlinks(hits, top):
        follower = build_follower(kb, settings, gate, references=_references(
            settings, follow_depth=0, max_cited_by=1, follow_from_top_seeds=top))
        return [c.result.section for c in follower.run(hits, question, "en").candidates if c.kind == "backlink"]

    return [rule, application, definitions, special], backlinks  # the special-project rule ranked last


def test_further_down_the_ranking_a_citer_search_did_not_rank_may_take_the_place_by_closeness(tmp_path, settings):
    """Two passages cite the best hit, rule 3.7: one search ranked far down, one it did not rank at all. Below the
    hits search put on top, its order is no evidence: the one closer to the question takes the backlink place. A
    citer among the top hits keeps the place whatever its closeness."""
    ranking, backlinks = _fees_rulebook_backlinks(tmp_path, settings)
    assert backlinks(ranking, top=2) == ["3.6 (Chapter 3 Periodic Fees)"]
    assert "5.2 (Chapter 5 Special project fees)" in backlinks(ranking, top=4)


def test_a_citer_on_top_leaves_a_backlink_place_to_a_passage_below_it(tmp_path, settings):
    """A citer among the top hits is in the context already; taking the one backlink place, it would keep out the
    closest passage search did not put there. That passage joins as well."""
    ranking, backlinks = _fees_rulebook_backlinks(tmp_path, settings)
    assert backlinks(ranking, top=4) == ["5.2 (Chapter 5 Special project fees)", "3.6 (Chapter 3 Periodic Fees)"]
