"""The dialogue reads the researcher right, in both languages: aspects are subjects, not fillers; the echo of
an answer is whole; a gap asked about is a subject the collection lacks, not an ordinary word of the question.
Written dialogues, on the demo KB with the real embedder."""

from __future__ import annotations

import pytest

from rabbithole_lab.reasoning.dialogue_terms import anchor_terms
from rabbithole_lab.reasoning.extractive.extractive_reasoner import ExtractiveReasoner

GERMAN = "Welche Grenzwerte gelten für beruflich exponierte Personen?"
ENGLISH = "Which limits apply to occupationally exposed persons?"


@pytest.mark.parametrize(("question", "answer", "language", "aspects"), [
    (GERMAN, "Gemeint ist die Person der Kategorie A.", "de", ["Kategorie A"]),
    (GERMAN, "Bitte auch die Grenzwerte für die Augenlinse nennen.", "de", ["Augenlinse"]),
    (GERMAN, "Es geht um schwangere Frauen, das wurde bisher nicht gefragt.", "de", ["schwangere Frauen"]),
    (GERMAN, "Ja, genau so ist es gemeint.", "de", []),
    (ENGLISH, "Yes, and please include the eye lens limit.", "en", ["eye lens"]),
    (ENGLISH, "I mean persons as they are defined there.", "en", []),
    (ENGLISH, "Apprentices, currently in training.", "en", ["Apprentices", "training"]),
])
def test_aspects_are_the_subjects_a_reply_names_never_its_fillers(question, answer, language, aspects):
    assert anchor_terms(question, [answer], language).additions == aspects


@pytest.fixture(scope="module")
def clarifier(demo_kb):
    return ExtractiveReasoner(demo_kb.index.embedder)


def test_the_answer_is_echoed_whole(clarifier, demo_kb):
    answer = ("Es soll die Augenlinse mit dabei sein, aber nicht die Grenzwerte für Personen unter achtzehn "
              "Jahren, die gelten hier nicht")
    passages = demo_kb.search("Grenzwert Augenlinse", k=4)
    conversation = [{"role": "assistant", "content": "Welche Personen?"}, {"role": "user", "content": answer}]
    analysis = clarifier.analyze_retrieval(GERMAN, passages, "de")
    questions = clarifier.follow_up_questions(GERMAN, analysis, passages, "de", 4, conversation)
    echoed = [q for q in questions if "Augenlinse mit dabei" in q]
    assert echoed and answer in echoed[0]


@pytest.mark.parametrize(("question", "language", "ordinary"), [
    ("Welche Grenzwerte galten in vergangenen Jahren für Personen an Bord von Raumschiffen?", "de",
     {"vergangenen", "galten"}),
    ("Which limits applied occupationally to crews on board of starships?", "en", {"occupationally", "applied"}),
])
def test_a_gap_is_a_subject_the_collection_lacks_not_an_ordinary_word(clarifier, demo_kb, question, language,
                                                                      ordinary):
    passages = demo_kb.search(question, k=6)
    gaps = clarifier.analyze_retrieval(question, passages, language).knowledge_gaps
    assert gaps and not ordinary & set(gaps)
    assert any(word in gaps for word in ("Raumschiffen", "starships"))


@pytest.mark.parametrize(("question", "language", "held", "lacking"), [
    ("Which limits apply to quantum radiation in spaceships?", "en",
     "quantum", "spaceships"),
    ("Welche Grenzwerte gelten für Quantenstrahlung an Bord von Raumschiffen?", "de", "Quantenstrahlung",
     "Raumschiffen"),
])
def test_a_word_a_sentence_of_the_collection_holds_is_no_gap_and_a_lacking_subject_is(
        clarifier, demo_kb, question, language, held, lacking):
    """"What exactly do you mean by 'quantum'?" was asked on a collection about Quantenstrahlung."""
    analysis = clarifier.analyze_retrieval(question, demo_kb.search(question, k=6), language)
    assert held not in analysis.knowledge_gaps
    assert lacking in analysis.knowledge_gaps


def test_a_gap_the_researcher_answered_is_closed_whatever_their_words():
    from rabbithole_lab.agent.nodes.human_in_loop import answered_turns

    conversation = [{"role": "assistant", "content": "Zu „Mitarbeiter“ steht nichts. Was meinen Sie?"},
                    {"role": "user", "content": "Gemeint sind die Beschäftigten."},
                    {"role": "assistant", "content": "Geht es um „Kategorie A“?"}]
    answered = answered_turns(conversation)
    assert any("Mitarbeiter" in question for question in answered)
    assert not any("Kategorie A" in question for question in answered)  # asked, not yet answered
