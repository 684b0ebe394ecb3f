"""One research task as a unit, without a graph: its rounds, what it leaves to later tasks, and the
model calls it makes at the same time (gate decisions and extractions run concurrently)."""

from __future__ import annotations

import time

import pytest

from rabbithole_lab.evidence.citation_format import cited_statements, quotation_of
from rabbithole_lab.rabbithole.gate import gate_references
from rabbithole_lab.records import DetectedReference, GateInput, ToDoItem
from rabbithole_lab.steps.task import ResearchTask
from tests.agent.conftest import GERMAN_QUESTION, fake_llm, services_with

DELAY_S = 0.2  # each fake model call; long against the threads' own cost, short for a test


def test_a_task_runs_its_rounds_and_reports_what_it_saw(demo_kb):
    services = services_with(demo_kb)
    task = ResearchTask(services, ToDoItem(id=0, task=GERMAN_QUESTION), GERMAN_QUESTION, "de")
    outcome = task.run()
    assert outcome.findings and outcome.stats["chunks"] == len(outcome.findings)
    assert outcome.stats["iterations"] == len(outcome.rounds) >= 1
    assert outcome.seen and outcome.summary.summary
    # a later task that has seen everything this one admitted finds other passages
    again = ResearchTask(services, ToDoItem(id=1, task=GERMAN_QUESTION), GERMAN_QUESTION, "de",
                         seen=set(outcome.seen)).run()
    first_ids = {finding.chunk_id for finding in outcome.findings}
    assert not first_ids & {finding.chunk_id for finding in again.findings if not finding.depth}


def _gate_inputs(count: int) -> list[GateInput]:
    return [GateInput(reference=DetectedReference(type="legal_section", target=f"§ {n} Testgesetz",
                                                  original_text=f"§ {n} des Testgesetzes", start=0, end=10),
                      window=f"Der Betreiber beachtet § {n} des Testgesetzes.", document="Testverordnung.pdf")
            for n in range(1, count + 1)]


def test_gate_decisions_of_one_passage_are_asked_at_the_same_time():
    reasoner, model = fake_llm({"decide_reference": '{"follow": true, "reason": "nennt den Grenzwert"}'})
    model.delay_s = DELAY_S
    items = _gate_inputs(4)
    started = time.perf_counter()
    verdicts = gate_references(items, GERMAN_QUESTION, reasoner, "de", concurrency=4)
    wall_s = time.perf_counter() - started
    assert [v.decision.follow for v in verdicts] == [True] * 4
    assert model.calls_for("decide_reference") == 4 and model.peak_in_flight >= 2
    assert wall_s < len(items) * DELAY_S  # below the sequential sum
    sequential, model = fake_llm({"decide_reference": '{"follow": true, "reason": "x"}'})
    model.delay_s = DELAY_S
    gate_references(items, GERMAN_QUESTION, sequential, "de", concurrency=1)
    assert model.peak_in_flight == 1  # the measure tells one at a time from several


def test_a_tasks_extractions_are_asked_at_the_same_time(demo_kb):
    reasoner, model = fake_llm()
    model.delay_s = DELAY_S / 4
    services = services_with(demo_kb, reasoner, llm={"concurrency": 4}, search={"max_iterations_per_task": 1})
    outcome = ResearchTask(services, ToDoItem(id=0, task=GERMAN_QUESTION), GERMAN_QUESTION, "de").run()
    extractions = model.calls_for("extract_info")
    assert extractions >= len(outcome.findings) >= 2  # one per admitted passage (and any retries)
    assert model.peak_in_flight >= 2


def test_a_task_summary_quotes_no_case_the_researcher_left_out():
    from rabbithole_lab.schemas import TaskSummary
    from rabbithole_lab.steps.task import without_excluded

    summary = TaskSummary(
        summary="(1) Der Grenzwert beträgt 20 Millisievert im Kalenderjahr. [QStrG.pdf, S. 1] (3) Für Personen unter "
                "18 Jahren gilt ein Grenzwert von 1 Millisievert. [QStrG.pdf, S. 1] [QStrG.pdf, S. 2] Die Behörde "
                "entscheidet binnen zwei Wochen. [QStrV.pdf, S. 1]",
        key_findings=["(3) Für Personen unter 18 Jahren gilt ein Grenzwert von 1 Millisievert. [QStrG.pdf, S. 1]",
                      "Die Behörde entscheidet binnen zwei Wochen. [QStrV.pdf, S. 1]"])
    kept = without_excluded(summary, ["Personen unter 18 Jahren"])
    assert "unter 18" not in kept.summary and "[QStrG.pdf, S. 2]" not in kept.summary  # with its citations
    assert "20 Millisievert im Kalenderjahr. [QStrG.pdf, S. 1]" in kept.summary and "zwei Wochen" in kept.summary
    assert kept.key_findings == ["Die Behörde entscheidet binnen zwei Wochen. [QStrV.pdf, S. 1]"]
    assert without_excluded(summary, []) == summary


def test_a_task_summary_shows_what_the_answer_does_not_quote_already():
    from rabbithole_lab.steps.task import beyond_answer

    summary = ("(1) Der Grenzwert beträgt 20 Millisievert im Kalenderjahr für beruflich tätige Personen. "
               "[QStrG.pdf, S. 1] Die Behörde entscheidet binnen zwei Wochen über den Antrag auf Zulassung. "
               "[QStrV.pdf, S. 1] Kurz: § 4. [QStrG.pdf, S. 2]")
    answer = ("**Ergebnis:** Maßgeblich ist § 5 QStrG.\n- „Der Grenzwert beträgt 20 Millisievert im Kalenderjahr“ "
              "[QStrG.pdf, S. 1]")
    added, held = beyond_answer(summary, answer)
    assert held == 1 and "20 Millisievert" not in added  # the answer quotes it (shortened): counted, not repeated
    assert "binnen zwei Wochen" in added and "[QStrV.pdf, S. 1]" in added  # what the task adds, with its citation
    assert "§ 4. [QStrG.pdf, S. 2]" in added  # a short quotation is too little to call it the answer's
    assert beyond_answer(summary, "") == (summary, 0)


def test_the_report_and_workbench_rows_count_what_the_answer_quotes(demo_kb, tmp_path):
    from rabbithole_lab.records import FinalReport
    from rabbithole_lab.report.view import report_view
    from rabbithole_lab.usecase.research_case import Research

    research = Research(services_with(demo_kb), tmp_path / "sessions.sqlite")
    try:
        status = research.run_unattended(GERMAN_QUESTION)
    finally:
        research.close()
    report = status.state["final_report"]
    rows = report["metadata"]["tasks"]
    question_task = rows[0]
    quoted = [line for line in report["answer"].splitlines() if "„" in line]
    assert quoted and question_task["in_answer"] >= 1  # the question's own task found what the answer quotes
    for line in quoted:
        quotation = line.split("„", 1)[1].split("“", 1)[0]
        assert len(quotation) < 30 or quotation not in question_task["summary"]
    view = report_view(FinalReport.model_validate(report), [])
    assert any(str(question_task["in_answer"]) in note for note in view.tasks[0].notes)


@pytest.mark.parametrize("named", ["Was regelt § 6 QStrV?", "Was regelt § 12 QStrG?"])
def test_a_task_naming_a_section_is_summed_up_by_that_section_when_an_earlier_task_read_it(demo_kb, named):
    """Issue 72 items 4 and 5: the question's task has read the section already, so the named task's search finds
    only passages around it (those that cite it); its summary still says what the section says, not what they do."""
    services = services_with(demo_kb)
    first = ResearchTask(services, ToDoItem(id=0, task=GERMAN_QUESTION), GERMAN_QUESTION, "de").run()
    task = ResearchTask(services, ToDoItem(id=1, task=named), GERMAN_QUESTION, "de", seen=set(first.seen))
    section = task.named_sections
    assert section and {hit.chunk_id for hit in section} <= {finding.chunk_id for finding in first.findings}
    outcome = task.run()
    statements = cited_statements(outcome.summary.summary)
    assert statements, outcome.summary
    text = " ".join(" ".join(hit.text for hit in section).split())
    assert all(" ".join(quotation_of(statement).split()) in text for statement in statements), statements
