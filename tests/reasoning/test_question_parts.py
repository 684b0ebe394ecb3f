"""A question that asks several things is read as its parts (written questions, not benchmark items)."""

from __future__ import annotations

from rabbithole_lab.reasoning.extractive.question_parts import leans_on_the_part_before, part_readings, question_parts


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


def test_the_case_stated_before_what_is_asked_comes_last_and_asks_nothing():
    from rabbithole_lab.reasoning.extractive.asked_kinds import asked_kinds

    english = ("When a workshop stores quantum sources over the weekend, which records must it keep, and how long "
               "must it retain them?")
    parts = question_parts(english)
    assert parts == ["which records must it keep", "how long must it retain them",
                     "a workshop stores quantum sources over the weekend"]
    assert asked_kinds(parts[-1]) == set()  # "When …" states the case here; it does not ask for a date
    assert question_parts("If a lab closes, what happens to its sources and who collects them?")[-1] == \
        "a lab closes"
    german = "Wenn eine Werkstatt schließt, wer übernimmt die Quellen, und wie lange dauert die Übergabe?"
    assert question_parts(german) == ["wer übernimmt die Quellen", "wie lange dauert die Übergabe",
                                      "eine Werkstatt schließt"]
    # "when", "under" and "bei" that ask stay where they are
    assert question_parts("When must the workshop report a lost source, and what must the report contain?") == [
        "When must the workshop report a lost source", "what must the report contain"]
    assert question_parts("Under which conditions may a workshop store sources, and who inspects it?")[0] == \
        "Under which conditions may a workshop store sources"
    assert question_parts("Bei wem ist der Verlust zu melden, und wie schnell muss das geschehen?")[0] == \
        "Bei wem ist der Verlust zu melden"


def test_a_part_that_leans_on_the_one_before_is_read_with_it():
    question = ("Darf die Werkstatt eine fremde Prüfnummer übernehmen, unter welchen Voraussetzungen, "
                "und wie lange ist sie aufzubewahren?")
    parts = question_parts(question)
    assert parts == ["Darf die Werkstatt eine fremde Prüfnummer übernehmen", "unter welchen Voraussetzungen",
                     "wie lange ist sie aufzubewahren"]
    # a phrase without a clause of its own leans on the part before; a clause whose pronoun stands for what
    # the part before named says itself what it asks
    assert [leans_on_the_part_before(part) for part in parts[1:]] == [True, False]
    assert part_readings(parts) == [parts[0], f"{parts[0]}, unter welchen Voraussetzungen", parts[2]]
    english = "Which records must a workshop keep, in what form, and who inspects the workshop?"
    assert part_readings(question_parts(english)) == [
        "Which records must a workshop keep", "Which records must a workshop keep, in what form",
        "who inspects the workshop"]


def test_an_elliptic_part_finds_the_sentence_about_its_subject_not_its_word(demo_kb):
    """"unter welchen Voraussetzungen" alone matches whatever sentence uses the word "Voraussetzungen"; read with
    the part before it, it finds the conditions of what that part asks about."""
    from rabbithole_lab.reasoning.extractive.extractive_reasoner import ExtractiveReasoner
    from rabbithole_lab.records import ChunkWithInfo

    reasoner = ExtractiveReasoner(demo_kb.index.embedder)
    numbers = ("§ 8 Prüfnummern\n(1) Die Aufsicht vergibt jeder Quantenwerkstatt eine Prüfnummer. (2) Die Aufsicht "
               "kann eine im Ausland vergebene Prüfnummer einer Quantenwerkstatt übernehmen, wenn die Nummer der "
               "Werkstatt eindeutig zugeordnet ist und sich nicht ändert.")
    training = ("§ 12 Lehrgänge\n(1) Lehrgänge für Quantenwerkstätten im Ausland dürfen Personen leiten, wenn sie "
                "die fachlichen Voraussetzungen erfüllen und die erforderlichen Voraussetzungen der Aufsicht "
                "nachweisen.")
    sections = [("§ 8", numbers), ("§ 12", training)]
    chunks = [ChunkWithInfo(chunk_text=text, extracted_info=text, document="Probegesetz.pdf", page=page,
                            chunk_id=f"c{page}", section=section, tier="primary", relevance_score=0.8)
              for page, (section, text) in enumerate(sections, start=1)]
    question = ("Darf die Aufsicht eine im Ausland vergebene Prüfnummer einer Quantenwerkstatt übernehmen, "
                "unter welchen Voraussetzungen?")
    from rabbithole_lab.reasoning.base import SynthesisInput

    parts = question_parts(question)
    assert len(parts) == 2
    out = reasoner.synthesize(SynthesisInput(anchor=question, question=question, language="de", primary=chunks))
    said = [finding.claim for finding in out.key_findings]  # the lead's statements, in order
    subject = next(i for i, text in enumerate(said) if "wenn die Nummer der Werkstatt eindeutig zugeordnet ist" in text)
    # the conditions of what the question asks about come before any sentence that merely uses the word
    assert all(i > subject for i, text in enumerate(said) if "Lehrgänge" in text)


def test_the_findings_state_a_sentence_for_each_part_of_the_question(demo_kb):
    from rabbithole_lab.reasoning.base import SynthesisInput
    from rabbithole_lab.reasoning.extractive.extractive_reasoner import ExtractiveReasoner
    from rabbithole_lab.records import ChunkWithInfo

    reasoner = ExtractiveReasoner(demo_kb.index.embedder)
    limits = ("§ 3 Grenzwerte\n(1) Für Beschäftigte an Quantenquellen gilt ein Grenzwert der effektiven Dosis von "
              "6 Millisievert im Kalenderjahr. (2) Für die Hände der Beschäftigten an Quantenquellen gilt ein "
              "Grenzwert der Organdosis von 150 Millisievert im Kalenderjahr. (3) Die Grenzwerte gelten auch für "
              "Auszubildende an Quantenquellen.")
    records = ("§ 7 Messprotokolle\n(1) Der Betreiber führt über jede Messung an Quantenquellen ein Messprotokoll. "
               "(2) Die Messprotokolle sind acht Jahre lang aufzubewahren und der Aufsicht auf Verlangen vorzulegen.")
    # more limits than the findings hold: what the first part asks for alone would fill them
    visitors = ("§ 4 Besucher\n(1) Für Besucher einer Quantenwerkstatt gilt ein Grenzwert der effektiven Dosis von "
                "1 Millisievert im Kalenderjahr. (2) Für Besucher gilt ein Grenzwert der Organdosis der Haut von "
                "50 Millisievert im Kalenderjahr.")
    pregnant = ("§ 5 Schwangere Beschäftigte\n(1) Für das ungeborene Kind einer Beschäftigten an Quantenquellen gilt "
                "ein Grenzwert von 1 Millisievert ab der Mitteilung der Schwangerschaft. (2) Für stillende "
                "Beschäftigte gilt ein Grenzwert der Organdosis von 2 Millisievert im Monat.")
    sections = [("§ 3", limits), ("§ 4", visitors), ("§ 5", pregnant), ("§ 7", records)]
    chunks = [ChunkWithInfo(chunk_text=text, extracted_info=text, document="Probegesetz.pdf", page=page,
                            chunk_id=f"c{page}", section=section, tier="primary", relevance_score=0.8)
              for page, (section, text) in enumerate(sections, start=1)]
    question = ("Welche Grenzwerte gelten für Beschäftigte an Quantenquellen, und wie lange sind die Messprotokolle "
                "aufzubewahren?")
    out = reasoner.synthesize(SynthesisInput(anchor=question, question=question, language="de", primary=chunks))
    stated = " ".join(finding.claim for finding in out.key_findings)
    assert "acht Jahre lang aufzubewahren" in stated  # the second part's answer, in the findings
    assert "6 Millisievert" in stated  # and the first part's
