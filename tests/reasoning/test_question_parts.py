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


def test_the_findings_state_a_sentence_for_each_part_of_the_question(demo_kb):
    from rabbithole_lab.reasoning.base import SynthesisInput
    from rabbithole_lab.reasoning.extractive import ExtractiveReasoner
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


def _provision(section: str, texts_scores: list[tuple[str, float]], cited_by: str = ""):
    from rabbithole_lab.reasoning.answer import Provision, Sentence
    from rabbithole_lab.records import ChunkWithInfo

    chunk = ChunkWithInfo(chunk_text=" ".join(t for t, _ in texts_scores), document="QuellV.pdf", page=1,
                          chunk_id=f"chunk {section}", cited_by=cited_by)
    provision = Provision("QuellV.pdf", section, [chunk], [chunk])
    provision.sentences = [Sentence(text, chunk, score, order) for order, (text, score) in enumerate(texts_scores)]
    return provision


def test_the_decisive_provision_answers_one_part_itself_and_refers_to_the_answer_of_the_other():
    from rabbithole_lab.reasoning.answer import plan_answer
    from rabbithole_lab.reasoning.extractive_writing import answered_parts

    # § 8 states when to report and refers to the annex for the thresholds; § 9 has the single strongest
    # sentence (on the first part) but points nowhere; the annex holds the thresholds
    entry = _provision("§ 8", [("Die Meldung ist spätestens nach drei Monaten vorzulegen, Schwellen nach Anlage 2.",
                                0.5)])
    strongest = _provision("§ 9", [("Die Behörde wertet die Meldungen über Quellenvorfälle aus.", 0.6)])
    annex = _provision("Anlage 2", [("Zu melden ist eine Überschreitung um mehr als 5 Millieinheiten.", 0.55)])
    provisions = [entry, strongest, annex]
    links = {("QuellV.pdf", "§ 8"): {("QuellV.pdf", "Anlage 2")}}
    by_part = [  # ab welcher Überschreitung, bis wann: each sentence's value on the part (by id)
        {id(entry.sentences[0]): 0.2, id(strongest.sentences[0]): 0.45, id(annex.sentences[0]): 0.6},
        {id(entry.sentences[0]): 0.55, id(strongest.sentences[0]): 0.3, id(annex.sentences[0]): 0.0},
    ]
    plan = plan_answer(provisions, 0.12, links=links, answers=answered_parts(by_part, provisions, links))
    assert plan.parts[0][0] is entry
    assert any(provision is annex and source is entry for provision, source, _ in plan.parts)
    # by the strongest sentence alone, § 9 would be decisive
    assert plan_answer(provisions, 0.12, links=links).parts[0][0] is strongest
    # a provision that answers no part itself is not credited with what it refers to
    pointer = _provision("§ 10", [("Im Übrigen gilt Anlage 2.", 0.3)])
    pointing = [*provisions, pointer]
    links[("QuellV.pdf", "§ 10")] = {("QuellV.pdf", "Anlage 2")}
    by_part[0][id(pointer.sentences[0])] = 0.1
    by_part[1][id(pointer.sentences[0])] = 0.0
    answers = answered_parts(by_part, pointing, links)
    assert answers(pointer) == 0.1 and answers(entry) == 0.6 + 0.55
