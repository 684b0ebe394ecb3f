"""A run succeeds only with an answer that cites a page of the passages it was written from, or one that
says, with its reason, that nothing answers the question."""

from __future__ import annotations

from rabbithole_lab.agent.nodes.attribution import answer_status
from rabbithole_lab.agent.session import ScriptedAnswers, run_to_end
from rabbithole_lab.reasoning.base import SynthesisInput
from rabbithole_lab.reasoning.extractive.extractive_reasoner import ExtractiveReasoner
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



def test_the_model_s_invented_claims_are_removed_counted_and_named(demo_kb, session_factory):
    """The scripted model writes one claim of each kind: quoted from the context on its page, citing a document
    nobody retrieved, quoting the right words on the wrong page, and a paraphrase passed off as a quotation."""
    import json
    import re

    from tests.agent.conftest import fake_llm, services_with

    def synthesis(prompt: str) -> str:
        # a sentence of the context as the prompt shows it, with the page it stands on: the first passage that
        # opens a paragraph "(1) …", read up to the next passage's header
        header = r"\[([^\[\]]+?\.pdf), (?:p|S)\. (\d+)\]"
        blocks = re.split(header, prompt)
        doc, page, text = next((doc, page, found.group(1)) for doc, page, body in zip(blocks[1::3], blocks[2::3],
                                                                                       blocks[3::3], strict=True)
                               if (found := re.search(r"(\(1\) [^.]{20,}\.)", body)))
        good = f"„{text}“ [{doc}, S. {page}]"
        lines = [f"**Ergebnis:** {good}", "Kranführer brauchen eine Lizenz [Lizenzordnung.pdf, S. 3].",
                 f"„{text}“ [{doc}, S. {int(page) + 7}]",
                 f"„Die Behörde darf jeden Grenzwert nach Belieben verdoppeln.“ [{doc}, S. {page}]"]
        return json.dumps({"answer": "\n".join(lines), "decisive": "", "key_findings": []}, ensure_ascii=False)

    reasoner, _ = fake_llm({"synthesize": synthesis})
    session = session_factory(services_with(demo_kb, reasoner))
    status = run_to_end(session, session.start(GERMAN_QUESTION), ScriptedAnswers([]))
    assert status.kind == "done", status.error
    answer, meta = status.report["answer"], status.report["metadata"]
    assert "Lizenz" not in answer and "verdoppeln" not in answer
    assert len(meta["invented_citations"]) == 3, meta["invented_citations"]
    assert meta["answer_status"] == "cited"  # the claim that stands is kept, cited on its page
