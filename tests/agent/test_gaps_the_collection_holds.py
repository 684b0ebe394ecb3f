"""The dialogue asks about a word only when the collection lacks it (issue 72 item 3): a word of the question that
the collection holds, in any inflection, inside a compound or by the glossary's German term, is no gap, also where
the passages round 1 found do not hold it. On the demo KB, with the real index."""

from __future__ import annotations

from rabbithole_lab.usecase.research_case import Research
from tests.agent.conftest import services_with


def test_the_collection_holds_inflections_compound_parts_and_glossary_terms(demo_kb):
    assert demo_kb.holds_term("Beschäftigten")  # "Beschäftigte sind … zu unterweisen" (§ 9 QStrG)
    assert demo_kb.holds_term("Strahlung")  # inside "Quantenstrahlung"
    assert demo_kb.holds_term("employees")  # the glossary's "Beschäftigte", over German text
    assert not demo_kb.holds_term("Raumschiffen") and not demo_kb.holds_term("Bord Raumschiffen")


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
