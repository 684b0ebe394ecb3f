"""The dialogue asks about a word only when the collection lacks it (issue 72 item 3): a word of the question that
the collection holds, in any inflection, inside a compound or by the glossary's German term, is no gap, also where
the passages round 1 found do not hold it. On the demo KB, with the real index."""

from __future__ import annotations

from rabbithole_lab.schemas import AnchorTerms
from rabbithole_lab.steps.query_anchor import specific
from rabbithole_lab.usecase.research_case import Research
from tests.agent.conftest import services_with


def test_the_collection_holds_inflections_compound_parts_and_glossary_terms(demo_kb):
    assert demo_kb.holds_term("Beschäftigten")  # "Beschäftigte sind … zu unterweisen" (§ 9 QStrG)
    assert demo_kb.holds_term("Strahlung")  # inside "Quantenstrahlung"
    assert demo_kb.holds_term("employees")  # the glossary's "Beschäftigte", over German text
    assert not demo_kb.holds_term("Raumschiffen") and not demo_kb.holds_term("Bord Raumschiffen")
    # a word of a glossary phrase in the question: "effective" of "the effective dose" (effektive Dosis, § 5 QStrV)
    assert not demo_kb.holds_term("effective")
    assert demo_kb.holds_term("effective", context="Which limit applies to the effective dose of workers?")
    assert not demo_kb.holds_term("Raumschiffen", context="Which limit applies to the effective dose in Raumschiffen?")


def test_a_question_word_the_collection_holds_is_not_asked_about(demo_kb, tmp_path):
    research = Research(services_with(demo_kb), tmp_path / "sessions.sqlite")
    try:
        status = research.start("Welche Pflichten gelten für Beschäftigte an Bord von Raumschiffen?")
    finally:
        research.close()
    gaps = status.interrupt["knowledge_gaps"]
    assert "Raumschiffen" in gaps  # the demo KB says nothing of spaceships: asked
    assert not any("Beschäftigte" in gap for gap in gaps)
    assert not any("Beschäftigte" in question for question in status.interrupt["questions"] if "nichts" in question)


# ---- additions: subject phrases, never a word most of the collection speaks of --------------------------------------
def test_a_one_word_addition_most_of_the_collection_holds_is_dropped():
    terms = AnchorTerms(additions=["Person", "Kategorie A", "Augenlinse"], exclusions=["Person"])
    shares = {"Person": 0.4, "Augenlinse": 0.02}
    kept = specific(terms, shares.__getitem__, max_share=0.2)
    assert kept.additions == ["Kategorie A", "Augenlinse"]  # a phrase is kept whatever its words' shares
    assert kept.exclusions == ["Person"]  # what the researcher leaves out stays as said


def test_the_share_of_a_word_is_read_from_the_collection(demo_kb):
    # "Augenlinse" stands in one provision of the demo laws, "Person" in many
    assert demo_kb.term_share("Person") > 2 * demo_kb.term_share("Augenlinse") > 0
    assert demo_kb.term_share("Raumschiff") == 0.0
    assert demo_kb.term_share("employees") == demo_kb.term_share("Beschäftigte") > 0  # by the glossary over German text


def test_the_clarified_anchor_adds_no_generic_word(demo_kb, tmp_path):
    services = services_with(demo_kb, hitl={"generic_term_share": 0.1})
    research = Research(services, tmp_path / "sessions.sqlite")
    try:
        status = research.start("Welche Grenzwerte gelten für Beschäftigte bei Quantenstrahlung?")
        status = research.answer("Gemeint sind Personen, besonders die Augenlinse.")
        while status.kind == "interrupt" and "questions" in status.interrupt:
            status = research.answer("/end")
        anchor = research.session.state()["query_anchor"]
    finally:
        research.close()
    assert "Augenlinse" in anchor["additions"]
    assert not any(addition.startswith("Person") for addition in anchor["additions"])
