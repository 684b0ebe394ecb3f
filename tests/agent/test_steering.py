"""The researcher steers the research: what the clarification dialogue adds or excludes, and the tasks
the researcher writes, reach the searches, the relevance filter and the answer."""

from __future__ import annotations

import json
import re

import pytest

from rabbithole_lab.reasoning.base import AnswerTask, AskedFor, SynthesisInput
from rabbithole_lab.reasoning.dialogue_terms import anchor_terms, anchor_text, excluded
from rabbithole_lab.usecase.research_case import Research
from tests.agent.conftest import GERMAN_QUESTION, SMALL_QUESTION_CONTEXT, fake_llm, services_with
from tests.answer_reading import framing_language, lead, provisions_named

ADDITION = "Bitte auch die Organ-Äquivalentdosis für Augenlinse und Haut nennen."
EXCLUSION = "Keine Regeln für Personen unter 18 Jahren, bitte."


# ---- the dialogue's words, by rule -------------------------------------------------------------------------------
def test_an_answer_adds_aspects_the_question_does_not_hold():
    terms = anchor_terms("Welche Fristen gelten für die Anzeige einer Anlage?",
                         ["Bitte auch die Aufbewahrung der Unterlagen berücksichtigen."], "de")
    assert terms.additions == ["Aufbewahrung", "Unterlagen"] and not terms.exclusions
    assert anchor_text("Welche Fristen gelten?", terms) == "Welche Fristen gelten? Aufbewahrung Unterlagen"


@pytest.mark.parametrize(("answer", "language", "case"), [
    ("ohne das Genehmigungsverfahren, bitte", "de", "Genehmigungsverfahren"),
    ("Es geht nicht um Kinder und Jugendliche.", "de", "Kinder"),
    ("außer Altanlagen", "de", "Altanlagen"),
    ("Please leave out anything about apprentices; not apprentices.", "en", "apprentices"),
    ("everything except medical uses", "en", "medical uses"),
])
def test_a_negated_case_is_an_exclusion(answer, language, case):
    terms = anchor_terms("Welche Pflichten hat der Betreiber?", [answer], language)
    assert case in terms.exclusions
    assert not any(case in addition for addition in terms.additions)


def test_a_request_verb_of_a_reply_is_no_aspect():
    terms = anchor_terms("Which limits apply to workers?", ["Please also give the organ doses for the eye lens."], "en")
    assert terms.additions == ["organ doses", "eye lens"]


def test_a_restriction_is_covered_and_a_named_provision_is_kept_verbatim():
    terms = anchor_terms("Which duties does the operator have?", ["Only small facilities, see § 4 AtG."], "en")
    assert "small facilities" in terms.additions and "§ 4 AtG" in terms.provisions
    assert "/end" not in anchor_terms("Frage?", ["/end"], "de").additions


def test_a_sentence_about_an_excluded_case_is_recognised_by_its_words():
    assert excluded("Für Personen unter 18 Jahren gilt ein Grenzwert von 1 Millisievert.", ["Personen unter 18 Jahren"])
    assert not excluded("Für Erwachsene gilt ein Grenzwert von 20 Millisievert.", ["Personen unter 18 Jahren"])
    assert not excluded("Beliebiger Satz.", [])


# ---- a whole run ---------------------------------------------------------------------------------------------------
def _run(services, tmp_path, answers: list[str], decision="approve"):
    research = Research(services, tmp_path / "sessions.sqlite")
    try:
        status = research.run_unattended(GERMAN_QUESTION, answers=answers, todo_decision=decision)
    finally:
        research.close()
    assert status.kind == "done", status.error
    return status


def test_an_added_aspect_reaches_the_questions_search_and_the_answer(demo_kb, tmp_path):
    services = services_with(demo_kb)
    plain = _run(services, tmp_path / "plain", [])
    steered = _run(services, tmp_path / "steered", [ADDITION])
    anchor = steered.state["query_anchor"]
    assert {"Augenlinse", "Haut"} <= set(anchor["additions"]) and "Augenlinse" in anchor["text"]
    question_task = next(s for s in steered.state["task_stats"] if s["task_id"] == 0)
    assert "Augenlinse" in question_task["queries"][0]  # the question's own search carries the addition
    assert steered.report["answer"] != plain.report["answer"]
    assert "Augenlinse" in steered.report["answer"]
    assert steered.report["query"] == GERMAN_QUESTION  # the report names the question as it was asked


def test_an_excluded_case_is_not_presented_as_applicable(demo_kb, tmp_path):
    services = services_with(demo_kb)
    plain = _run(services, tmp_path / "plain", [])
    steered = _run(services, tmp_path / "steered", [EXCLUSION])
    assert steered.state["query_anchor"]["exclusions"] == ["Personen unter 18 Jahren"]
    assert "unter 18 Jahren" in plain.report["answer"]  # without the exclusion the case is quoted
    assert "unter 18 Jahren" not in steered.report["answer"]


def test_a_task_the_researcher_writes_is_researched_as_written_and_a_removed_one_is_not(demo_kb, tmp_path):
    services = services_with(demo_kb)
    research = Research(services, tmp_path / "sessions.sqlite")
    try:
        research.start(GERMAN_QUESTION)
        todo = research.answer("/end").interrupt["todo_list"]["items"]
        removed = todo[-1]
        decision = {"removed_ids": [removed["id"]], "new_items": ["Was gilt bei Überschreitung der Grenzwerte?"]}
        status = research.approve(decision)
        while status.kind == "interrupt":
            status = research.answer("/end")
    finally:
        research.close()
    assert status.kind == "done", status.error
    tasks = {t["task"]: t for t in status.state["todo_list"]["items"]}
    assert removed["task"] not in tasks
    assert not any(s["task"] == removed["task"] for s in status.state["task_stats"])
    written = next(s for s in status.state["task_stats"] if s["task"] == "Was gilt bei Überschreitung der Grenzwerte?")
    findings = [f for f in status.state["findings"] if f["task_id"] == written["task_id"] and f["extracted_info"]]
    assert findings and any("überschr" in f["extracted_info"].lower() for f in findings)
    summary = next(s for s in status.state["task_summaries"] if s["task_id"] == written["task_id"])
    assert summary["relevance_score"] > 0 and "überschr" in summary["summary"].split(". ")[0].lower()  # leads with it
    # the answer: the written task's section with a finding on what it asks (a task adding nothing to the lead
    # has none), none for the removed
    answer = status.report["answer"]
    sections = [line for line in answer.splitlines() if line.startswith("**Aufgabe ")]
    assert removed["task"] not in answer
    heading = next(line for line in sections if "Was gilt bei Überschreitung der Grenzwerte?" in line)
    body = answer.split(heading)[1].split("\n**Aufgabe ")[0].split("\n**Verweiskette**")[0]
    assert "überschr" in body.lower() and "[QStrV.pdf, S." in body


def test_with_the_model_the_dialogue_is_read_by_its_prompt_and_the_exclusion_reaches_the_synthesis(demo_kb, tmp_path):
    terms = json.dumps({"additions": ["Organ-Äquivalentdosis der Augenlinse"],
                        "exclusions": ["Personen unter 18 Jahren"], "provisions": ["§ 12 QStrG"]})
    reasoner, model = fake_llm({"anchor_terms": terms})
    status = _run(services_with(demo_kb, reasoner), tmp_path, [f"{ADDITION} {EXCLUSION}"])
    anchor = status.state["query_anchor"]
    assert anchor["exclusions"] == ["Personen unter 18 Jahren"] and "§ 12 QStrG" in anchor["text"]
    asked = next(p for p in model.prompts_seen if model.step_of(p) == "anchor_terms")
    assert "Augenlinse" in asked and "Deutsch" in asked
    synthesis = [p for p in model.prompts_seen if model.step_of(p) == "synthesize"]
    assert synthesis and "Excluded by the researcher: Personen unter 18 Jahren" in synthesis[-1]
    assert "Organ-Äquivalentdosis der Augenlinse" in synthesis[-1]  # the anchor carries the addition
    quality = [p for p in model.prompts_seen if model.step_of(p) == "assess_quality"]
    assert quality and "asked for besides the question: Organ-Äquivalentdosis der Augenlinse; § 12 QStrG" in quality[-1]
    # the judge reads the text of what the answer cites, not only its label
    judged = quality[-1].split("Sources the answer cites", 1)[1]
    assert "Millisievert" in judged
    # the report records what the clarification changed
    assert status.report["metadata"]["clarification"] == {
        "added": ["Organ-Äquivalentdosis der Augenlinse"], "excluded": ["Personen unter 18 Jahren"],
        "named": ["§ 12 QStrG"]}



def test_with_the_model_the_answer_is_asked_for_a_section_per_approved_task_and_the_check_reads_them(demo_kb, tmp_path):
    terms = json.dumps({"additions": [], "exclusions": ["Personen unter 18 Jahren"], "provisions": []})
    reasoner, model = fake_llm({"anchor_terms": terms})
    written = "Was gilt bei Überschreitung der Grenzwerte?"
    status = _run(services_with(demo_kb, reasoner, search=SMALL_QUESTION_CONTEXT), tmp_path, [EXCLUSION],
                  decision={"removed_ids": [2], "new_items": [written]})
    tasks = [item["task"] for item in status.state["todo_list"]["items"]]
    assert written in tasks and "Ausnahmen prüfen" not in tasks  # the fake model's second task, removed
    synthesis = [p for p in model.prompts_seen if model.step_of(p) == "synthesize"][-1]
    listed = synthesis.split("Approved tasks")[1].split("Primary context")[0]
    assert written in listed and "Grenzwerte ermitteln" in listed and "Ausnahmen prüfen" not in listed
    assert "one section per approved task" in synthesis and "not found" in synthesis
    quality = [p for p in model.prompts_seen if model.step_of(p) == "assess_quality"][-1]
    assert "Cases the researcher excluded: Personen unter 18 Jahren" in quality and written in quality


# ---- the quality check reads what was asked for ------------------------------------------------------------------
def test_an_answer_that_leaves_out_a_part_asked_for_cannot_answer_the_question(demo_kb):
    from rabbithole_lab.reasoning.extractive.extractive_reasoner import ExtractiveReasoner
    from rabbithole_lab.records import ChunkWithInfo

    reasoner = ExtractiveReasoner(demo_kb.index.embedder)
    section = demo_kb.section_lookup("QStrG.pdf", "§ 12")[0]
    source = ChunkWithInfo.from_result(section, extracted_info=section.text, relevance_score=0.9)
    first = next(s for s in section.text.split("\n") if "effektiven Dosis" in s).strip()
    answer = f"Antwort: „{first}“ [QStrG.pdf, S. {section.page_start}]"
    whole = reasoner.assess_quality(GERMAN_QUESTION, answer, [source], "de")
    missing = reasoner.assess_quality(GERMAN_QUESTION, answer, [source], "de", asked=AskedFor(parts=["Wetterstation"]))
    assert missing.query_relevance <= 50 < whole.query_relevance
    assert any("Wetterstation" in issue for issue in missing.issues_found)
    held = reasoner.assess_quality(GERMAN_QUESTION, answer, [source], "de", asked=AskedFor(parts=["effektive Dosis"]))
    assert held.query_relevance == whole.query_relevance and not any("ausdrücklich" in i for i in held.issues_found)


# ---- the answer's shape and the quality check, each dimension on a crafted answer -------------------------------
@pytest.fixture(scope="module")
def judge(demo_kb):
    from rabbithole_lab.reasoning.extractive.extractive_reasoner import ExtractiveReasoner

    return ExtractiveReasoner(demo_kb.index.embedder)


def _sources(demo_kb, *sections):
    from rabbithole_lab.records import ChunkWithInfo

    return [ChunkWithInfo.from_result(demo_kb.section_lookup(doc, section)[0], relevance_score=0.9)
            for doc, section in sections]


def _sentence(source, words: str) -> str:
    return next(s for s in source.chunk_text.replace("\n", " ").split(". ") if words in s).strip().rstrip(".") + "."


def test_a_part_asked_for_that_the_plan_leaves_out_is_stated_in_the_findings(judge, demo_kb):
    sources = _sources(demo_kb, ("QStrV.pdf", "§ 5"), ("QStrG.pdf", "§ 12"))
    # a short lead: its first statement and little else
    budgets = dict(lead_max_chars=400, answer_max_chars=600)
    # (the plain answer's lead may hold the eye lens already: the verdict § 5 QStrV brings § 12 QStrG's sentences
    # as its chain; what is checked is that the addition is stated, cited, in the short lead)
    asked = judge.synthesize(SynthesisInput(anchor=GERMAN_QUESTION, language="de", primary=sources,
                                            parts=["Augenlinse"], **budgets)).answer
    opening = lead(asked)
    assert "Augenlinse" in opening
    assert "[QStrG.pdf, S. 1]" in opening.split("Augenlinse")[1].split("\n")[0]  # cited where it is stated


def test_the_room_the_headings_leave_is_filled_with_a_statement_that_fits(judge, demo_kb):
    # the task heading and the framing lines are counted only once written: an answer pushed over its budget by
    # them is selected again in the room they leave, instead of losing its last statement and the room with it
    sources = _sources(demo_kb, ("QStrV.pdf", "§ 5"), ("QStrG.pdf", "§ 12"), ("QStrG.pdf", "§ 13"))
    tasks = [AnswerTask(1, "Grenzwerte ermitteln", ["Grenzwerte"], {source.chunk_id for source in sources})]

    def answer(answer_max_chars: int) -> str:
        return judge.synthesize(SynthesisInput(anchor=GERMAN_QUESTION, language="de", primary=sources, tasks=tasks,
                                               lead_max_chars=400, answer_max_chars=answer_max_chars)).answer

    tight, roomier = answer(600), answer(700)
    assert len(tight) <= 600 and len(roomier) <= 700
    assert roomier.count("„") > tight.count("„")  # the hundred characters more hold one more quotation


def test_each_approved_task_gets_a_section_or_a_not_found_that_says_what_was_searched(judge, demo_kb):
    sources = _sources(demo_kb, ("QStrV.pdf", "§ 5"), ("QStrG.pdf", "§ 12"))
    tasks = [AnswerTask(1, "Grenzwerte ermitteln", ["Grenzwerte"], {sources[0].chunk_id, sources[1].chunk_id}),
             AnswerTask(2, "Wetterstationen auf dem Dach", ["Wetterstation Dach"], set())]
    answer = judge.synthesize(SynthesisInput(anchor=GERMAN_QUESTION, language="de", primary=sources,
                                             tasks=tasks)).answer
    # task 1 found what the lead quotes: nothing to add, no section; task 2 found nothing and says what it searched
    assert "**Aufgabe 1: Grenzwerte ermitteln**" not in answer
    assert "**Aufgabe 2: Wetterstationen auf dem Dach**\n\nNicht gefunden. Gesucht wurde nach: Wetterstation Dach." \
        in answer
    english = judge.synthesize(SynthesisInput(anchor="Which limits apply to exposed workers?", language="en",
                                              primary=sources, tasks=tasks)).answer
    assert framing_language(lead(english)) == "en" and provisions_named(lead(english))
    assert "Not found. Searched for: Wetterstation Dach." in english


def test_each_quality_dimension_falls_on_a_crafted_bad_answer(judge, demo_kb):
    sources = _sources(demo_kb, ("QStrG.pdf", "§ 12"), ("QStrG.pdf", "§ 13"))
    limit = _sentence(sources[0], "effektiven Dosis")
    minors = _sentence(sources[0], "unter 18 Jahren")
    task = "Grenzwerte zusammenstellen"
    good = f"**Aufgabe 1: {task}**\n\n**§ 12 QStrG**: „{limit}“ [QStrG.pdf, S. 1]"
    asked = AskedFor(parts=["effektive Dosis"], exclusions=["Personen unter 18 Jahren"], tasks=[task])
    base = judge.assess_quality(GERMAN_QUESTION, good, sources, "de", asked=asked)
    # an excluded case quoted as applicable
    with_minors = judge.assess_quality(GERMAN_QUESTION, f"{good} „{minors}“ [QStrG.pdf, S. 1]", sources, "de",
                                       asked=asked)
    assert with_minors.query_relevance <= 50 < base.query_relevance
    assert any("ausgeschlossen" in issue for issue in with_minors.issues_found)
    # the answer without its task heading is no worse: a task adds a section only where the lead lacks something
    no_section = judge.assess_quality(GERMAN_QUESTION, good.split("\n\n", 1)[1], sources, "de", asked=asked)
    assert no_section.overall_score >= base.overall_score
    # a quotation off the question
    measuring = _sentence(sources[1], "Messstelle")
    off = judge.assess_quality(GERMAN_QUESTION, f"{good} „{measuring}“ [QStrG.pdf, S. 1]", sources, "de",
                               asked=asked)
    assert off.semantic_validity < base.semantic_validity
    assert any("ohne Bezug zur Frage" in issue for issue in off.issues_found)
    # a quotation on another page than cited
    late = judge.assess_quality(GERMAN_QUESTION, good.replace("S. 1]", "S. 2]"), sources, "de", asked=asked)
    assert late.citation_correctness < base.citation_correctness == 100
    # a part asked for without a cited statement
    part = judge.assess_quality(GERMAN_QUESTION, good, sources, "de",
                                asked=AskedFor(parts=["Wetterstation"], tasks=[task]))
    assert part.query_relevance <= 50 < base.query_relevance
    assert base.issues_found == [] or all("ausgeschlossen" not in i for i in base.issues_found)


def test_a_provision_named_in_an_exclusion_is_left_out_whole_and_is_no_addition(judge, demo_kb):
    terms = anchor_terms("Welche Pflichten hat der Betreiber?", ["Bitte ohne § 13 QStrG."], "de")
    assert terms.exclusions == ["§ 13 QStrG"] and terms.provisions == []
    sources = _sources(demo_kb, ("QStrG.pdf", "§ 12"), ("QStrG.pdf", "§ 13"))
    plain = judge.synthesize(SynthesisInput(anchor="Wie wird die Dosis gemessen?", language="de", primary=sources))
    steered = judge.synthesize(SynthesisInput(anchor="Wie wird die Dosis gemessen?", language="de", primary=sources,
                                              exclusions=terms.exclusions))
    assert "§ 13 QStrG" in plain.answer and "§ 13 QStrG" not in steered.answer
    # quoted anyway, the check names it
    check = judge.assess_quality("Wie wird die Dosis gemessen?", plain.answer, sources, "de",
                                 asked=AskedFor(exclusions=terms.exclusions))
    assert any("ausgeschlossen" in issue for issue in check.issues_found) and check.query_relevance <= 50


def test_the_summary_says_what_will_be_researched_and_a_correction_moves_a_term_between_its_lists():
    from rabbithole_lab.messages.reasons import notice_text
    from rabbithole_lab.steps.query_anchor import anchor_notice, corrected

    anchor = {"original_query": "Welche Fristen gelten?", "additions": ["Altanlagen"], "exclusions": ["Kinder"],
              "provisions": [], "text": "Welche Fristen gelten? Altanlagen"}
    assert notice_text(anchor_notice(anchor), "de") == (
        "Recherchiert wird: Welche Fristen gelten?\nZusätzlich: Altanlagen\nAusgenommen: Kinder")
    assert notice_text(anchor_notice(anchor), "en").startswith(
        "To be researched: Welche Fristen gelten?\nAlso: Altanlagen")
    fixed = corrected(anchor, anchor_terms("Welche Fristen gelten?", ["ohne Altanlagen, auch § 7 AtG"], "de"))
    assert fixed["exclusions"] == ["Kinder", "Altanlagen"] and fixed["additions"] == []
    assert fixed["provisions"] == ["§ 7 AtG"] and fixed["text"] == "Welche Fristen gelten? § 7 AtG"
    assert "Ausgenommen: Kinder; Altanlagen" in notice_text(anchor_notice(fixed), "de")
    back = corrected(fixed, anchor_terms("Welche Fristen gelten?", ["auch Kinder"], "de"))
    assert back["exclusions"] == ["Altanlagen"] and back["additions"] == ["Kinder"]


def test_an_english_question_is_asked_english_questions_about_what_german_law_holds(demo_kb, tmp_path):
    from tests.agent.conftest import ENGLISH_QUESTION

    research = Research(services_with(demo_kb), tmp_path / "sessions.sqlite")
    try:
        status = research.start(ENGLISH_QUESTION)
    finally:
        research.close()
    assert status.kind == "interrupt", status.error
    round_one = status.interrupt
    assert {"QStrG.pdf", "QStrV.pdf"} & {chunk["doc"] for chunk in round_one["retrieval"]["chunks"]}
    questions = " ".join(round_one["questions"])
    assert questions and not any(word in questions for word in ("Gefunden", "Welche", "gibt es", "Ihre", "Soll"))


def test_with_the_model_the_opening_cites_its_sources_and_each_approved_task_has_a_section(demo_kb, tmp_path):
    from rabbithole_lab.records import FinalReport
    from rabbithole_lab.report.render import answer_markdown

    reasoner, _model = fake_llm({})
    status = _run(services_with(demo_kb, reasoner), tmp_path, [], decision={"new_items": ["Zuständige Behörde"]})
    answer = status.report["answer"]
    opening = lead(answer)
    assert framing_language(opening) == "de" and re.search(r"\[[^\]]+\.pdf, S\. \d+\]", opening)
    for number, item in enumerate(status.state["todo_list"]["items"], start=1):
        assert f"**{number}. {item['task']}**" in answer
    shown = answer_markdown(FinalReport.model_validate(status.report))
    # the lead's citations name the document and section, each a link
    assert re.search(r"\[\\\[QStr[GV] [^\]]*S\. \d+\\\]\]\(", lead(shown)), lead(shown)


@pytest.mark.parametrize(("question", "written", "section"), [
    ("Welche Pflichten hat der Betreiber nach der Quantenstrahlenschutzverordnung?", "Was regelt § 1?",
     ("QStrV.pdf", "§ 1")),  # a bare number: the law the question names
    ("Welche Pflichten hat der Betreiber einer Quantenquelle?", "Was regelt § 9 QStrG?", ("QStrG.pdf", "§ 9")),
])
def test_a_written_task_that_names_a_section_is_answered_from_that_section(demo_kb, tmp_path, question, written,
                                                                         section):
    research = Research(services_with(demo_kb), tmp_path / "sessions.sqlite")
    try:
        research.start(question)
        research.answer("/end")
        status = research.approve({"removed_ids": [], "new_items": [written]})
        while status.kind == "interrupt":
            status = research.answer("/end")
    finally:
        research.close()
    assert status.kind == "done", status.error
    task = next(s for s in status.state["task_stats"] if s["task"] == written)
    found = {(f["document"], f.get("section")): f for f in status.state["findings"] if f["task_id"] == task["task_id"]}
    assert section in found, list(found)
    assert found[section]["extracted_info"]
