"""A question that asks several things is read as its parts (written questions, not benchmark items)."""

from __future__ import annotations

from rabbithole_lab.reasoning.question_parts import question_parts


def test_each_interrogative_clause_is_a_part_and_statements_before_the_question_are_not():
    question = ("Wir betreiben eine Werkstatt mit Quantenquellen. Welche Prüfungen sind vorgeschrieben, wie oft sind "
                "sie zu wiederholen, und an wen gehen die Prüfberichte?")
    assert question_parts(question) == ["Welche Prüfungen sind vorgeschrieben", "wie oft sind sie zu wiederholen",
                                        "an wen gehen die Prüfberichte"]
    english = "Which records must a workshop keep and how long must it retain them?"
    assert question_parts(english) == ["Which records must a workshop keep", "how long must it retain them"]


def test_a_question_asking_one_thing_is_one_part():
    assert question_parts("Welche Pflichten hat der Betreiber einer Quantenquelle, wenn die Prüfung ausfällt?") == [
        "Welche Pflichten hat der Betreiber einer Quantenquelle, wenn die Prüfung ausfällt"]
    assert question_parts("Gilt die Meldepflicht auch für Werkstätten und Labore?") == [
        "Gilt die Meldepflicht auch für Werkstätten und Labore"]
    # too short to stand alone: "und wann?" stays with the clause before it
    assert question_parts("Wer prüft die Quellen und wann?") == ["Wer prüft die Quellen, wann"]
