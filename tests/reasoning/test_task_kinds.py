"""A planned task that asks for a kind of statement (figures and deadlines; duties, bodies and conditions)
is answered by the sentences that carry it (text written for these tests)."""

from __future__ import annotations

import pytest

from rabbithole_lab.reasoning.answer import Provision, Sentence
from rabbithole_lab.reasoning.asked_kinds import asked_kinds
from rabbithole_lab.reasoning.extractive_base import IRRELEVANT_BELOW, reasoner_words
from rabbithole_lab.reasoning.extractive_writing import _carrying_sentences
from rabbithole_lab.records import ChunkWithInfo


@pytest.mark.parametrize("language", ["de", "en"])
def test_the_planned_tasks_ask_for_the_same_kinds_in_either_language(language):
    asked = [asked_kinds(task.format(focus="Kran")) for task, _ in reasoner_words(language)["tasks"]]
    assert asked == [set(), {"amount", "deadline"}, {"body", "condition"}, set()]


def _provision(section: str, scored: list[tuple[str, float]]) -> Provision:
    chunk = ChunkWithInfo(chunk_text=" ".join(text for text, _ in scored), document="KranV.pdf", page=2,
                          chunk_id=section)
    provision = Provision("KranV.pdf", section, [chunk], [chunk])
    provision.sentences = [Sentence(text, chunk, score, order) for order, (text, score) in enumerate(scored)]
    return provision


def test_a_task_asking_for_figures_gets_the_carrying_sentences_best_on_the_question_first():
    log = _provision("§ 3", [("Der Betreiber führt ein Logbuch über jeden Kran.", 0.9),
                             ("Das Logbuch ist zehn Jahre lang aufzubewahren.", 0.3),
                             ("Die Last eines Krans darf 1200 kg nicht übersteigen.", 0.5),
                             ("Ein Kran mit 300 kg Last ist zu melden.", IRRELEVANT_BELOW / 2)])
    test = _provision("§ 4", [("Die Prüfung ist spätestens nach vier Wochen zu wiederholen.", 0.4),
                              ("Die Prüfung ist sorgfältig durchzuführen.", 0.8)])
    quoted = {id(log.sentences[2])}  # the answer holds it already
    found = _carrying_sentences([log, test], {"amount", "deadline"}, [], quoted)
    texts = {provision.section: [s.text for s in sentences] for provision, sentences in found}
    # the figures and the deadline, not the sentences without one however high they score, not what the
    # answer holds already, and not a figure below the relevance floor; each provision's in reading order
    assert texts == {"§ 4": ["Die Prüfung ist spätestens nach vier Wochen zu wiederholen."],
                     "§ 3": ["Das Logbuch ist zehn Jahre lang aufzubewahren."]}
    assert [p.section for p, _ in found] == ["§ 4", "§ 3"]  # best on the question first


def test_an_excluded_case_is_not_a_tasks_finding():
    minors = _provision("§ 7", [("Für Personen unter 18 Jahren gilt eine Höchstlast von 500 kg.", 0.9),
                                ("Für Erwachsene gilt eine Höchstlast von 2000 kg.", 0.6)])
    found = _carrying_sentences([minors], {"amount"}, ["Personen unter 18 Jahren"], set())
    assert [[s.text for s in sentences] for _, sentences in found] == [
        ["Für Erwachsene gilt eine Höchstlast von 2000 kg."]]
