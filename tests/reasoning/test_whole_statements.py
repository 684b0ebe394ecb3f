"""A sentence that points back at the one before it is quoted with it (text written for these tests)."""

from __future__ import annotations

import pytest

from rabbithole_lab.reasoning.extractive.extractive_base import sentences_of
from rabbithole_lab.reasoning.extractive.writer.answer import provisions_of
from rabbithole_lab.reasoning.text import points_back
from rabbithole_lab.records import ChunkWithInfo


@pytest.mark.parametrize(("sentence", "expected"), [
    ("Sie ist jedoch auf die geänderten Pläne zu beschränken.", True),
    ("Satz 1 gilt nicht für den Hafenkran Nord.", True),
    ("Die Sätze 1 und 2 gelten entsprechend für Schwimmkräne.", True),
    ("Dies gilt auch für gemietete Kräne.", True),
    ("Diese werden vom Kranprüfamt durchgeführt.", True),
    ("Abweichend von Satz 1 kann die Hafenbehörde eine längere Frist setzen.", True),
    ("It shall be kept for five years.", True),
    # a paragraph starts afresh; "Diese Verordnung" and "This Act" name the whole text; an article is no pronoun
    ("(2) Satz 1 gilt nicht für den Hafenkran Nord.", False),
    ("Diese Verordnung gilt für alle Kräne im Hafen.", False),
    ("This Act applies to all cranes in the port.", False),
    ("Das Kranprüfamt entscheidet über die Abnahme.", False),
    ("Sieben Tage vor der Prüfung ist der Kran zu melden.", False),
])
def test_a_sentence_points_back_by_its_first_words(sentence, expected):
    assert points_back(sentence) is expected


def _provisions(text: str, scores: dict[str, float]):
    chunk = ChunkWithInfo(chunk_text=text, document="HafenKranV.pdf", page=3, chunk_id="c1", section="§ 7")

    def score(batch: list[str]) -> list[float]:
        return [next((value for start, value in scores.items() if sentence.startswith(start)), 0.0)
                for sentence in batch]

    return provisions_of([chunk], sentences_of, score)


_SECTION = ("(1) Der Betreiber lässt jeden Hafenkran vor der ersten Inbetriebnahme abnehmen. "
            "Satz 1 gilt nicht für den Hafenkran Nord, der nach der Werftordnung abgenommen wird. "
            "(2) Ändert der Betreiber die Tragwerkspläne, ist die Abnahme zu wiederholen. "
            "Sie ist jedoch auf die geänderten Bauteile zu beschränken. "
            "(3) Die Abnahmebescheinigung ist am Kran auszuhängen.")


def test_a_rule_is_quoted_with_the_exception_its_next_sentence_makes():
    provisions = _provisions(_SECTION, {"(1)": 0.9, "Satz 1": 0.05, "(2)": 0.2, "Sie": 0.02, "(3)": 0.6})
    provision = provisions[0]
    # read in the passage: the exception and the pronoun point back, the paragraphs do not
    assert [s.continues for s in provision.sentences] == [False, True, False, True, False]
    quoted = [s.text for s in provision.whole_statements([max(provision.sentences, key=lambda s: s.score)])]
    assert quoted == ["(1) Der Betreiber lässt jeden Hafenkran vor der ersten Inbetriebnahme abnehmen.",
                      "Satz 1 gilt nicht für den Hafenkran Nord, der nach der Werftordnung abgenommen wird."]


def test_a_sentence_whose_subject_is_the_one_before_brings_it_along():
    provisions = _provisions(_SECTION, {"(1)": 0.1, "Satz 1": 0.1, "(2)": 0.1, "Sie": 0.9, "(3)": 0.1})
    quoted = [s.text for s in provisions[0].whole_statements([max(provisions[0].sentences, key=lambda s: s.score)])]
    assert quoted == ["(2) Ändert der Betreiber die Tragwerkspläne, ist die Abnahme zu wiederholen.",
                      "Sie ist jedoch auf die geänderten Bauteile zu beschränken."]
