"""A run succeeds only with an answer that cites a page of the passages it was written from, or one that
says, with its reason, that nothing answers the question."""

from __future__ import annotations

from rabbithole_lab.agent.nodes.attribution import answer_status
from rabbithole_lab.agent.session import ScriptedAnswers, run_to_end
from rabbithole_lab.reasoning.base import SynthesisInput
from rabbithole_lab.reasoning.extractive import ExtractiveReasoner
from rabbithole_lab.records import LinkedSource
from tests.agent.conftest import GERMAN_QUESTION

CITED = LinkedSource(doc_id="Leuchtturm.pdf", page_number=3, cited=True)
CONSULTED = LinkedSource(doc_id="Leuchtturm.pdf", page_number=4, cited=False)


def test_the_status_of_an_answer():
    assert answer_status("Das Leuchtfeuer brennt nachts [Leuchtturm.pdf, S. 3].", [CITED, CONSULTED], "") == "cited"
    assert answer_status("Das Leuchtfeuer brennt nachts.", [CONSULTED], "") == "uncited"
    nothing = "Die durchsuchten Dokumente enthalten keine Passage, die die Frage beantwortet."
    assert answer_status(nothing, [], nothing) == "nothing_found"
    assert answer_status("", [], nothing) == "uncited"  # a reason without an answer is no answer


def test_the_extractive_answer_from_no_passage_says_nothing_was_found(demo_kb):
    output = ExtractiveReasoner(demo_kb.index.embedder).synthesize(
        SynthesisInput(anchor="Wann brennt das Leuchtfeuer?", language="de"))
    assert output.nothing_found and output.answer == output.nothing_found


def test_a_research_run_records_that_its_answer_cites_what_it_read(extractive_services, session_factory):
    session = session_factory(extractive_services)
    status = run_to_end(session, session.start(GERMAN_QUESTION), ScriptedAnswers([]))
    assert status.kind == "done", status.error
    assert status.report["metadata"]["answer_status"] == "cited"

