"""The extractive reasoner on real chunks of the demo KB with the real embedder."""

from __future__ import annotations

import pytest

from rabbithole_lab.evidence.citation_format import citations_in
from rabbithole_lab.reasoning.base import Reasoner, SynthesisInput
from rabbithole_lab.reasoning.checks.quality import is_fragment
from rabbithole_lab.reasoning.extractive.extractive_reasoner import ExtractiveReasoner
from rabbithole_lab.reasoning.text import passage_sentences, split_sentences
from rabbithole_lab.records import ChunkWithInfo
from rabbithole_lab.schemas import QualityAssessment
from tests.answer_reading import lead, provisions_named, quotes_holding
from tests.conftest import english_only

QUESTION = "Welche Grenzwerte gelten für beruflich exponierte Personen bei Quantenstrahlung?"


@pytest.fixture(scope="module")
def reasoner(demo_kb):
    return ExtractiveReasoner(demo_kb.index.embedder)


@pytest.fixture(scope="module")
def limit_chunk(demo_kb):
    return demo_kb.section_lookup("QStrG.pdf", "§ 12")[0]


def test_it_satisfies_the_reasoner_protocol(reasoner):
    assert isinstance(reasoner, Reasoner)
    assert reasoner.info.provider == "extractive" and reasoner.llm_calls == 0


def test_extraction_keeps_verbatim_sentences_and_quotes_the_limit(reasoner, limit_chunk):
    info = reasoner.extract_info(limit_chunk, QUESTION, QUESTION, "de")
    sentences = split_sentences(limit_chunk.text[len(limit_chunk.heading):])
    assert info.extracted_info
    assert all(s in sentences for s in split_sentences(info.extracted_info))
    assert limit_chunk.heading not in info.extracted_info  # the heading is not glued to the first sentence
    assert any("20 Millisievert" in q.quote for q in info.preserved_quotes)
    assert all(q.document == "QStrG.pdf" and q.page == limit_chunk.page_start for q in info.preserved_quotes)


def test_an_unrelated_passage_yields_no_extraction(reasoner, limit_chunk):
    info = reasoner.extract_info(limit_chunk.model_copy(update={"text": "Xyz qwv. " * 5}), QUESTION, QUESTION, "de")
    assert info.extracted_info == "" and info.preserved_quotes == []


def test_analysis_reports_uncovered_concepts_as_gaps_and_questions_ask_about_them(reasoner, demo_kb):
    passages = demo_kb.search("Kalibrierung Detektor", k=3)
    analysis = reasoner.analyze_retrieval("Welche Grenzwerte gelten für Schwangere?", passages, "de")
    assert "Schwangere" in analysis.knowledge_gaps
    assert 0.0 <= analysis.coverage_score < 1.0
    questions = reasoner.follow_up_questions("Welche Grenzwerte gelten für Schwangere?", analysis, passages, "de", 3)
    assert 2 <= len(questions) <= 3
    assert any("Schwangere" in q for q in questions)


def test_full_coverage_when_every_concept_is_found(reasoner, limit_chunk):
    analysis = reasoner.analyze_retrieval("Grenzwerte beruflich exponierte Personen", [limit_chunk], "de")
    assert analysis.coverage_score == 1.0 and analysis.knowledge_gaps == []


def test_hitl_queries_are_three_distinct_and_start_with_the_question(reasoner):
    queries = reasoner.hitl_queries(QUESTION, 0, [], [], ["Grenzwerte", "Quantenstrahlung"], "de", 3)
    assert queries[0] == QUESTION and len(set(queries)) == 3
    later = reasoner.hitl_queries(QUESTION, 1, [{"role": "user", "content": "nur Erwachsene"}], ["Jugendliche"],
                                  ["Grenzwerte"], "de", 3)
    assert "nur Erwachsene" in later[0] and any("Jugendliche" in q for q in later)


def test_todo_plan_has_three_to_five_tasks_in_the_language(reasoner):
    summary = reasoner.hitl_context_summary(QUESTION, [{"role": "user", "content": "nur Erwachsene"}],
                                            ["Grenzwerte", "Personen"], "de")
    plan = reasoner.generate_todo(QUESTION, summary, [], ["Grenzwerte", "Personen"], "de", 5)
    assert 3 <= len(plan.tasks) <= 5
    # the clarification answer is read into the anchor, never made a task of its own (it only repeated the
    # context and closed early)
    assert not any("nur Erwachsene" in t.task for t in plan.tasks)
    # each task says what it is about as data: the focus is in its words, and nothing reads the template back
    assert all(t.focus and t.focus in t.task for t in plan.tasks)
    english = reasoner.generate_todo("Which limits apply?", "", [], ["limits"], "en", 4)
    assert all(t.task.split()[0] in {"Identify", "Establish", "Clarify", "Check"} for t in english.tasks)
    # a question for an amount gets no task on duties and responsibilities: it could only close early
    assert not any(t.task.startswith("Clarify") for t in english.tasks)
    duties = reasoner.generate_todo("Who must report an incident?", "", [], ["incident"], "en", 4)
    assert [t.task.split()[0] for t in duties.tasks] == ["Identify", "Clarify", "Check"]
    # the task on duties carries the kinds it aims at, the task on the governing rules none (it serves any)
    assert [t.kinds for t in duties.tasks if t.task.startswith(("Clarify", "Identify"))] == [[], ["body", "condition"]]


def _finding(chunk, reasoner, tier="primary", depth=0):
    info = reasoner.extract_info(chunk, QUESTION, QUESTION, "de")
    return ChunkWithInfo(chunk_text=chunk.text, extracted_info=info.extracted_info, document=chunk.doc,
                         page=chunk.page_start, chunk_id=chunk.chunk_id, section=chunk.section, tier=tier,
                         depth=depth, relevance_score=0.9, preserved_quotes=info.preserved_quotes)


def test_synthesis_cites_every_sentence_and_scores_high(reasoner, demo_kb, limit_chunk):
    cited = demo_kb.section_lookup("QStrV.pdf", "§ 5")[0]
    findings = [_finding(limit_chunk, reasoner), _finding(cited, reasoner, "secondary", 1)]
    out = reasoner.synthesize(SynthesisInput(anchor=QUESTION, language="de", primary=findings[:1],
                                             secondary=findings[1:]))
    assert provisions_named(lead(out.answer)) and quotes_holding(lead(out.answer), "20 Millisievert")
    assert all(finding.sources for finding in out.key_findings)
    quality = reasoner.assess_quality(QUESTION, out.answer, findings, "de")
    assert quality.citation_correctness == 100 and quality.factual_accuracy == 100
    assert quality.passes(375), quality


def test_quality_catches_unsupported_and_uncited_statements(reasoner, limit_chunk):
    finding = _finding(limit_chunk, reasoner)
    answer = ("Der Grenzwert beträgt 99 Sievert für Astronauten auf dem Mond [QStrG.pdf, S. 1]. "
              "Die Behörde entscheidet frei.")
    quality = reasoner.assess_quality(QUESTION, answer, [finding], "de")
    # the cited quotation is on no page of the source, the second statement cites nothing
    assert quality.citation_correctness == 0
    assert quality.factual_accuracy == 0
    assert any("nicht auf der angegebenen Seite" in i for i in quality.issues_found)
    assert any("in keiner gefundenen Stelle" in i for i in quality.issues_found)  # invented: not in the context
    assert quality.query_relevance == 0 and not quality.passes(375)
    decision = reasoner.decide_remediation(QUESTION, quality, 375, "de")
    assert decision.retry and decision.instructions


def test_no_remediation_when_the_answer_passes(reasoner):
    perfect = QualityAssessment(factual_accuracy=100, semantic_validity=100, structural_integrity=100,
                                citation_correctness=100, query_relevance=100)
    assert not reasoner.decide_remediation(QUESTION, perfect, 375, "de").retry


def test_relevance_of_a_followed_chunk_inherits_its_citation(reasoner, demo_kb):
    unrelated = demo_kb.section_lookup("QStrG.pdf", "§ 12")[0]
    finding = ChunkWithInfo(chunk_text="Formvorschriften für Anträge.", extracted_info="Formvorschriften für Anträge.",
                            document=unrelated.doc, page=1, depth=1, relevance_score=0.9)
    scored = reasoner.score_relevance("Welche Grenzwerte gelten?", finding, "de")
    assert scored.score == pytest.approx(0.81, abs=0.01)
    assert "Verweis" in scored.reason


def test_no_answer_message_when_nothing_was_found(reasoner):
    out = reasoner.synthesize(SynthesisInput(anchor="Which limits apply?", language="en"))
    assert out.answer.startswith("The searched documents contain no passage")
    assert citations_in(out.answer) == []


def test_the_task_assessment_names_the_concepts_the_passages_lack(reasoner):
    from rabbithole_lab.records import ChunkWithInfo

    passage = ChunkWithInfo(chunk_text="Für die Augenlinse gilt ein Grenzwert von 20 Millisievert im Kalenderjahr.",
                            document="X.pdf", page=1)
    answered = reasoner.assess_task("Grenzwert für die Augenlinse", "Welche Grenzwerte gelten?", [passage], "de")
    assert answered.answered and not answered.missing
    missing = reasoner.assess_task("Grenzwert für die Haut", "Welche Grenzwerte gelten?", [passage], "de")
    assert not missing.answered and missing.missing == ["Haut"] and "Haut" in missing.reason
    # a task phrased by a template is read by the focus it carries, not by the template's words ("Die Werte …
    # belegen"); the same words written by the researcher are all asked for
    phrased = "Die Werte, Zahlen und Fristen mit ihrer Fundstelle belegen – Thema: Augenlinse"
    assert reasoner.assess_task(phrased, "Welche Grenzwerte gelten?", [passage], "de", focus="Augenlinse").answered
    written = reasoner.assess_task(phrased, "Welche Grenzwerte gelten?", [passage], "de")
    assert not written.answered and "Fristen" in written.missing
    nothing = reasoner.assess_task("Grenzwert für die Haut", "Welche Grenzwerte gelten?", [], "de")
    assert not nothing.answered and nothing.missing


def test_the_plan_adapts_by_rules_without_a_model(reasoner):
    from rabbithole_lab.records import ToDoItem

    tasks = [ToDoItem(id=0, task="Frage", completed=True), ToDoItem(id=1, task="Ausnahmen prüfen")]
    change = reasoner.adapt_todo("Welche Grenzwerte gelten?", tasks, "", [],
                                 [{"label": "§ 12 QStrG", "via": "QStrV.pdf § 5"}], ["Auszubildende"], [1], 2, "de")
    assert [c.id for c in change.close] == [1] and change.close[0].reason
    assert [a.task for a in change.add] == ["Was regelt § 12 QStrG?", "Auszubildende: Welche Grenzwerte gelten?"]
    assert "QStrV.pdf § 5" in change.add[0].reason
    assert len(reasoner.adapt_todo("Frage", tasks, "", [], [{"label": "§ 1 X", "via": "Y"}], ["Z"], [], 1,
                                   "de").add) == 1
    assert reasoner.adapt_todo("Frage", tasks, "", [], [{"label": "§ 1 X", "via": "Y"}], [], [], 0, "de").add == []


def test_the_next_round_builds_on_the_answer_and_never_repeats_a_question(reasoner, demo_kb):
    question = "Welche Grenzwerte gelten für beruflich exponierte Personen?"
    passages = demo_kb.search(question, k=6)
    analysis = reasoner.analyze_retrieval(question, passages, "de")
    first = reasoner.follow_up_questions(question, analysis, passages, "de", 3)
    # the provisions search found are named, with their titles: the user can say which applies
    assert any("§ 12 QStrG" in q for q in first), first
    conversation = [{"role": "assistant", "content": "\n".join(first)}, {"role": "user", "content": "nur Erwachsene"}]
    second = reasoner.follow_up_questions(question, analysis, passages, "de", 3, conversation=conversation)
    assert second and not set(first) & set(second)
    assert any("„nur Erwachsene“" in q for q in second)  # the answer is taken up
    conversation += [{"role": "assistant", "content": "\n".join(second)}, {"role": "user", "content": "ja"}]
    third = reasoner.follow_up_questions(question, analysis, passages, "de", 3, conversation=conversation)
    assert not (set(first) | set(second)) & set(third)


def test_same_numbered_sections_of_two_documents_are_asked_about(reasoner, demo_kb):
    passages = [hit for doc in ("QStrG.pdf", "QStrV.pdf") for hit in demo_kb.section_lookup(doc, "§ 1")]
    assert {p.doc for p in passages} == {"QStrG.pdf", "QStrV.pdf"}
    questions = reasoner.follow_up_questions("Was regelt § 1?", reasoner.analyze_retrieval("Was regelt § 1?", passages,
                                                                                          "de"), passages, "de", 3)
    assert "§ 1 gibt es in QStrG / QStrV: welches Regelwerk ist gemeint?" in questions


def test_relevance_separates_passages_on_the_question_from_passages_off_it(reasoner):
    question = "Welche Grenzwerte gelten für beruflich exponierte Personen bei Quantenstrahlung?"
    on_topic = ["Der Grenzwert der effektiven Dosis für beruflich exponierte Personen beträgt 20 Millisievert "
                "im Kalenderjahr.", "Für die Haut gilt ein Grenzwert der Organdosis von 500 Millisievert im Jahr."]
    off_topic = ["Die Aufzeichnungen sind zehn Jahre lang aufzubewahren.",
                 "Die Messstelle ist nach einer anerkannten Norm zertifiziert.",
                 "Der Antrag ist schriftlich bei der Behörde einzureichen.",
                 "Die Gebühr für die Genehmigung beträgt 300 Euro."]

    def score(text: str) -> float:
        finding = ChunkWithInfo(chunk_text=text, extracted_info=text, document="Probe.pdf", page=1)
        return reasoner.score_relevance(question, finding, "de").score

    assert min(map(score, on_topic)) > max(map(score, off_topic))
    assert max(map(score, off_topic)) < 0.2 < min(map(score, on_topic))


def test_what_the_researcher_answered_is_not_asked_again(reasoner, demo_kb):
    question = "Welche Grenzwerte gelten für beruflich exponierte Personen?"
    passages = demo_kb.search(question, k=6)
    analysis = reasoner.analyze_retrieval(question, passages, "de")
    scope = "Geht es um einen bestimmten Personenkreis, eine Tätigkeit oder eine Anlage?"
    assert scope in reasoner.follow_up_questions(question, analysis, passages, "de", 9)
    # once the researcher named the case and a provision, neither the case nor the documents are asked about
    named = [{"role": "assistant", "content": "?"}, {"role": "user", "content": "nur Erwachsene, nach § 12 QStrG"}]
    after = reasoner.follow_up_questions(question, analysis, passages, "de", 9, conversation=named)
    assert scope not in after and not any(q.startswith("Soll sich die Recherche auf") for q in after)
    # an aspect they answered is no gap to ask about
    gapped = analysis.model_copy(update={"knowledge_gaps": ["Auszubildende"]})
    assert any("Auszubildende" in q for q in reasoner.follow_up_questions(question, gapped, passages, "de", 9))
    told = [{"role": "assistant", "content": "?"}, {"role": "user", "content": "Es geht um Auszubildende."}]
    assert not any("„Auszubildende“" in q for q in reasoner.follow_up_questions(question, gapped, passages, "de", 9,
                                                                                  conversation=told))


def test_numbered_sections_of_two_manuals_are_no_question_of_which_law(reasoner, demo_kb):
    hits = demo_kb.search("calibration detector dosimetry", k=12)
    numbered = [h for h in hits if h.section and h.section[0].isdigit()]
    assert numbered  # the demo's English manuals are numbered "1", "2", ...
    twins = [h.model_copy(update={"doc": f"Copy_of_{h.doc}"}) for h in numbered]
    questions = reasoner.follow_up_questions("How is a detector calibrated?", reasoner.analyze_retrieval(
        "How is a detector calibrated?", numbered + twins, "en"), numbered + twins, "en", 9)
    assert not any("exists in" in q for q in questions)


def test_english_questions_get_english_follow_ups(reasoner, demo_kb):
    question = "Which limits apply to occupationally exposed persons?"
    passages = demo_kb.search(question, k=6)
    questions = reasoner.follow_up_questions(question, reasoner.analyze_retrieval(question, passages, "en"),
                                             passages, "en", 3)
    assert questions and all(q.endswith("?") for q in questions)
    assert not any(word in " ".join(questions) for word in ("Gefunden", "Welche", "gibt es", "Ihre"))


def test_a_german_ordinal_does_not_end_the_sentence():
    text = ("Die Akte ist aufzubewahren, bis die Person das 80. Lebensjahr vollendet hat. Die Frist endet am "
            "1. März 2031 um Mitternacht. Der Antrag folgt dem Muster nach Absatz 3. Die Behörde prüft ihn binnen "
            "vier Wochen.")
    assert split_sentences(text) == [
        "Die Akte ist aufzubewahren, bis die Person das 80. Lebensjahr vollendet hat.",
        "Die Frist endet am 1. März 2031 um Mitternacht.",
        "Der Antrag folgt dem Muster nach Absatz 3.",  # a number after a noun ends its sentence
        "Die Behörde prüft ihn binnen vier Wochen.",
    ]
    # the Federal Law Gazette's abbreviation does not end one either
    assert split_sentences("Die Tabelle gilt in der Fassung der Bekanntmachung (BGBl. I 2031, 17) ab sofort.") == [
        "Die Tabelle gilt in der Fassung der Bekanntmachung (BGBl. I 2031, 17) ab sofort."]


def test_a_list_item_number_opens_its_item_and_does_not_end_a_sentence():
    # as the PDFs lay an enumeration out: the lead-in, then each item on its own line, "und" alone on one
    text = ("(2) Zonen im Sinne dieser Ordnung sind\n1. Vorzone, wenn Besucher dort weniger als 2 Stunden bleiben,\n"
            "und\n2. Kernzone, wenn Besucher dort länger bleiben; eine Kernzone ist Teil der Vorzone.\n"
            "Gäste sind auch\n1. Lieferanten nach Satz 1,\n2. Handwerker sowie\n3. Prüfer.\nDie Ordnung gilt ab Mai.")
    assert split_sentences(text, min_chars=10) == [
        "(2) Zonen im Sinne dieser Ordnung sind 1. Vorzone, wenn Besucher dort weniger als 2 Stunden bleiben, und "
        "2. Kernzone, wenn Besucher dort länger bleiben; eine Kernzone ist Teil der Vorzone.",
        "Gäste sind auch 1. Lieferanten nach Satz 1, 2. Handwerker sowie 3. Prüfer.",
        "Die Ordnung gilt ab Mai.",
    ]


def test_an_enumeration_run_on_in_one_line_stays_one_sentence():
    # as a short annex lays its items out when they fit a line: the next item's number after a comma
    text = ("Der Anzeige sind beizufügen: 1. eine Beschreibung der Werkstatt, 2. Nachweis der Fachkunde nach § 8, "
            "3. Lageplan der Werkstatt. Die Behörde bestätigt den Eingang. Die Frist gilt nach den Absätzen 1, 2. "
            "Danach erlischt die Anzeige.")
    assert split_sentences(text, min_chars=10) == [
        "Der Anzeige sind beizufügen: 1. eine Beschreibung der Werkstatt, 2. Nachweis der Fachkunde nach § 8, "
        "3. Lageplan der Werkstatt.",
        "Die Behörde bestätigt den Eingang.",
        "Die Frist gilt nach den Absätzen 1, 2.",  # numbers cited in a row are no items: the sentence ends
        "Danach erlischt die Anzeige.",
    ]


def test_text_that_states_nothing_is_no_part_of_a_sentence_and_each_sentence_stays_verbatim():
    # as a consolidated statute prints a paragraph that is gone (its number and mark), and an annex's note of
    # where it was published under its heading
    text = ("(2) Der Antrag ist schriftlich zu stellen; er ist zu begründen\n(3) (weggefallen)\n(4) Die Erlaubnis "
            "wird für höchstens fünf Jahre erteilt.\n(5) [aufgehoben] (6) Sie erlischt mit der Schließung der "
            "Werkstatt.\n(Fundstelle: BGBl. I 2031, 17 - 18)\nWerkstätten im Sinne dieser Ordnung sind Räume mit "
            "einer Drehbank.")
    sentences = split_sentences(text, min_chars=10)
    assert sentences == ["(2) Der Antrag ist schriftlich zu stellen; er ist zu begründen",
                         "(4) Die Erlaubnis wird für höchstens fünf Jahre erteilt.",
                         "(6) Sie erlischt mit der Schließung der Werkstatt.",
                         "Werkstätten im Sinne dieser Ordnung sind Räume mit einer Drehbank."]
    assert all(sentence in " ".join(text.split()) for sentence in sentences)  # each the page's own words
    english = "(1) The permit lasts a year. (2) [repealed] (3) It may be renewed once on application."
    assert split_sentences(english, min_chars=10) == ["(1) The permit lasts a year.",
                                                      "(3) It may be renewed once on application."]


_LONG_LIST = ("(3) Der Kranführer hat vor jeder Schicht mindestens eine der folgenden Prüfungen durchzuführen:\n"
              + "".join(f"{n}. die Sichtprüfung des Hakens Nummer {n} auf Risse, Verformungen und Abrieb an allen "
                        "tragenden Teilen,\n" for n in range(1, 8))
              + "8. die Messung der Seilspannung mit einem geeichten Kraftmesser.\n")


def test_an_enumeration_too_long_to_quote_whole_is_quoted_item_by_item_where_the_cut_lost_it():
    sentences = split_sentences(_LONG_LIST)
    whole, *items = sentences
    assert whole.startswith("(3) Der Kranführer") and whole.endswith("…") and "Seilspannung" not in whole
    # every item the cut lost can be quoted on its own, verbatim; none the cut kept is quoted twice
    assert "8. die Messung der Seilspannung mit einem geeichten Kraftmesser." in items
    assert all(item not in whole and item in " ".join(_LONG_LIST.split()) for item in items)
    assert not any(item.startswith("1. ") for item in items)
    # the quality check takes a quoted item for the whole statement it is, not for a cut sentence
    assert not any(is_fragment(item) for item in items)
    assert is_fragment("die Sichtprüfung des Hakens auf Risse,") and is_fragment(whole[:-2])


def test_the_items_of_an_enabling_clause_are_not_quoted_as_rules():
    enabling = _LONG_LIST.replace("Der Kranführer hat vor jeder Schicht mindestens eine der folgenden Prüfungen "
                                  "durchzuführen:", "In der Rechtsverordnung kann insbesondere festgelegt werden,")
    assert len(split_sentences(enabling)) == 1
    # a continuation chunk holds the end of a list whose lead-in is in the chunk before: a rule's items are
    # whole and quoted, an enabling clause's ("5. unter welchen Voraussetzungen …") are not
    told = "Der Kran ist der Aufsicht zu melden."
    rule = f"Haken Nummer 4 auf Risse,\n5. die Prüfung der Bremse nach jedem Hub,\n6. die Prüfung des Seils.\n{told}"
    assert passage_sentences(rule, continuation=True) == [
        "5. die Prüfung der Bremse nach jedem Hub,", "6. die Prüfung des Seils.", told]
    governs = f"Hakens,\n5. unter welchen Voraussetzungen der Kran ruht,\n6. wie die Bremse geprüft wird.\n{told}"
    assert passage_sentences(governs, continuation=True) == [told]
    # a continuation that opens with an item on its own line opens with a whole item, not a fragment
    assert passage_sentences(f"\n2. die Prüfung der Bremse nach jedem Hub.\n{told}", continuation=True) == [
        "2. die Prüfung der Bremse nach jedem Hub.", told]


def test_relevance_and_extraction_use_the_embedders_meaning_only_for_text_in_a_language_it_reads(demo_kb):
    reasoner = ExtractiveReasoner(english_only(demo_kb.index.embedder))

    def finding(text: str) -> ChunkWithInfo:
        return ChunkWithInfo(chunk_text=text, document="Eigen.pdf", page=1)

    # German passage, no word of the question in it: an English-only embedder's similarity is not evidence
    german = finding("Zuständigkeiten der Landesbehörden richten sich nach dem Sitz des Antragstellers. Jede "
                     "Behörde entscheidet binnen drei Monaten über vollständige Anträge.")
    question = "Wer erteilt Erlaubnisse zum Betrieb von Röntgengeräten?"
    assert reasoner.score_relevance(question, german, "de").score == 0.0
    assert reasoner.extract_info(_result(german), question, question, "de").extracted_info == ""
    # English passage: its meaning counts although it shares no word with the question
    english = finding("The competent regional office decides on applications for operating permits within "
                      "three months of receiving the complete documents.")
    assert reasoner.score_relevance("Who grants the licence for an X-ray device, and how fast?", english,
                                    "en").score > 0.0


def _result(chunk: ChunkWithInfo):
    from rabbithole_lab.records import VectorResult
    return VectorResult(chunk_id="eigen-1", text=chunk.chunk_text, doc=chunk.document, collection="c",
                        page_start=1, page_end=1)


def test_a_term_two_documents_define_is_asked_about(reasoner):
    from rabbithole_lab.records import VectorResult

    def definitions(doc: str, text: str) -> VectorResult:
        return VectorResult(chunk_id=doc, text=text, doc=doc, collection="Recht", page_start=1, page_end=1,
                            section="§ 2", heading="§ 2 Begriffsbestimmungen")

    passages = [definitions("KranG.pdf", "§ 2 Begriffsbestimmungen (1) Betreiber ist, wer einen Kran aufstellt."),
                definitions("KranV.pdf", "§ 2 Begriffsbestimmungen (1) Betreiber ist, wer einen Kran bedient.")]
    question = "Welche Pflichten hat der Betreiber eines Krans?"
    questions = reasoner.follow_up_questions(question, reasoner.analyze_retrieval(question, passages, "de"),
                                             passages, "de", 9)
    assert "„Betreiber“ wird in KranG / KranV bestimmt: welche Bedeutung ist gemeint?" in questions
    one = reasoner.follow_up_questions(question, reasoner.analyze_retrieval(question, passages[:1], "de"),
                                       passages[:1], "de", 9)
    assert not any("Bedeutung" in q for q in one)


def test_an_english_question_reads_a_german_sentence_by_its_meaning_too(reasoner):
    """e5 sets an English question far from the German sentence that answers it; the glossary's German terms
    for the question are read alongside, so the English question ranks it nearly as the German one does."""
    answering = "Der Betreiber hat die Aufzeichnungen über die Prüfungen eines Krans zehn Jahre lang aufzubewahren."
    others = ["Kranführer tragen während des Betriebs einen Schutzhelm.",
              "Die Kabine des Krans ist beheizbar auszuführen."]
    chunk = ChunkWithInfo(chunk_text="§ 9 Kranbuch\n(1) " + " ".join([answering, *others]), document="KranV.pdf",
                          page=3, chunk_id="kran-9", heading="§ 9 Kranbuch")
    english = reasoner._sentence_readings("How long must the operator keep the records of the crane inspections?",
                                          [chunk]).relevance([answering, *others])
    german = reasoner._sentence_readings("Wie lange muss der Betreiber die Aufzeichnungen der Kranprüfungen "
                                         "aufbewahren?", [chunk]).relevance([answering, *others])
    assert english[0] >= 0.6 * german[0]  # the English question alone, without its German terms: 0.52 of it
    assert all(other < english[0] / 2 for other in english[1:])


def test_a_rulebooks_provision_is_named_by_its_documents_name_and_its_number(reasoner):
    """A rulebook's files are named by machines and its passages labelled with their heading path: the answer names
    a rule as its document's name (the registry's) and its number, which leaves the lead room for the statements."""
    doc = "rb_doc_007__rules_harbour-dues.md"
    chunk = ChunkWithInfo(
        chunk_text="[PID a1] 3.2 (Chapter 3 Dues for vessels > Dues payable on arrival)\nA vessel must pay the "
                   "harbour dues within 14 days of its arrival in the harbour.",
        document=doc, page=1, chunk_id="a1", section="3.2 (Chapter 3 Dues for vessels > Dues payable on arrival)",
        relevance_score=0.9)
    question = "Within how many days of arrival must a vessel pay the harbour dues?"

    def answer(names):
        return reasoner.synthesize(SynthesisInput(anchor=question, language="en", question=question,
                                                  primary=[chunk], document_names=names)).answer

    named = answer({doc: "Harbour Dues"})
    assert "Harbour Dues, 3.2:" in lead(named) and "rb_doc_007__rules_harbour-dues, 3.2" not in named
    assert "Dues payable on arrival" not in lead(named).split("“")[0]  # the heading path is no part of the name
    # a document the registry has no name for keeps its file's name
    assert "rb_doc_007__rules_harbour-dues, 3.2:" in lead(answer({}))


def test_the_clarification_summary_ends_an_answer_with_one_full_stop(reasoner):
    said = "Please also name the organ doses for the eye lens and the skin."
    summary = reasoner.hitl_context_summary("Which limits apply?", [{"role": "user", "content": said}], ["limits"],
                                            "en")
    assert said[:-1] in summary and ".." not in summary.replace("...", "")
