"""An English rulebook researched end to end: the answer names its rules as a reader cites them, by the
document's title (the auto-registry reads it from the file's heading) and the rule's number, not by the file
name and the heading path the passage is labelled with (text written for this test)."""

from __future__ import annotations

from rabbithole_lab.agent.services import Services
from rabbithole_lab.agent.session import ScriptedAnswers, run_to_end
from rabbithole_lab.kb.ingest.ingest import ingest
from rabbithole_lab.kb.kb_factory import open_index, open_knowledge_base
from rabbithole_lab.reasoning.extractive.extractive_reasoner import ExtractiveReasoner
from tests.answer_reading import lead

RULEBOOK = """# Harbour Dues

## [PID a1] 3.1 (Chapter 3 Dues for vessels > Application)

This Chapter applies to every vessel that berths in a harbour of the authority.

## [PID a2] 3.2 (Chapter 3 Dues for vessels > Dues payable on arrival)

A vessel must pay the harbour dues within 14 days of its arrival in the harbour.

## [PID a3] 3.3 (Chapter 3 Dues for vessels > Late payment)

A vessel that pays the harbour dues later than required by 3.2 pays a surcharge of 5 per cent.
"""


def test_an_english_rulebooks_rule_is_named_by_the_documents_title_and_its_number(tmp_path, settings,
                                                                                  session_factory):
    kb_dir = tmp_path / "kb"
    folder = kb_dir / "Harbour__db_inserted"
    folder.mkdir(parents=True)
    (folder / "hb_doc_012__rules_harbour-dues.md").write_text(RULEBOOK, encoding="utf-8")
    index = open_index(settings, kb_dir, tmp_path / "db")
    assert ingest(kb_dir, index, settings.kb, show_progress=False).files_ingested == 1
    kb = open_knowledge_base(settings, kb_dir, tmp_path / "db")
    session = session_factory(Services(settings, kb, ExtractiveReasoner(kb.index.embedder), kb_dir))
    status = run_to_end(session, session.start("Within how many days of arrival must a vessel pay the harbour dues?"),
                        ScriptedAnswers([]))
    assert status.kind == "done", status.error
    opening = lead(status.report["answer"])
    assert "Harbour Dues, 3.2" in opening, opening
    assert "hb_doc_012__rules_harbour-dues, 3" not in status.report["answer"]
    assert "(Chapter 3" not in opening.split("“")[0]
