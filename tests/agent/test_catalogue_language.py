"""A session speaks one language: what a German run writes (report, log, the graph's edge table) holds no
text that only the English catalogue has, and the reverse."""

from __future__ import annotations

import re

import pytest

from rabbithole_lab.messages import catalogue as messages
from rabbithole_lab.messages.reasons import edge_reason, notice_text
from rabbithole_lab.report.folder import write_report_folder
from rabbithole_lab.usecase.research_case import Research
from rabbithole_lab.viz.display import edge_table
from tests.agent.conftest import ENGLISH_QUESTION, GERMAN_QUESTION

CATALOGUES = (messages.UI, messages.REPORT, messages.GRAPH, messages.REASONER, messages.TERMINAL, messages.RUN)
PLACEHOLDER = re.compile(r"\{[^}]*\}")
MIN_FRAGMENT_CHARS = 12  # shorter pieces ("Reasoner", "Score", "§") are the same word in both languages


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list | tuple):
        return [s for item in value for s in _strings(item)]
    return []


def only_in(language: str) -> set[str]:
    """Pieces of catalogue text (between placeholders, several words) that the other language never uses."""
    other = "de" if language == "en" else "en"
    theirs = " ".join(s for catalogue in CATALOGUES for s in _strings(catalogue[other]))
    pieces = set()
    for text in (s for catalogue in CATALOGUES for s in _strings(catalogue[language])):
        for piece in PLACEHOLDER.split(text):
            piece = piece.strip(" :;,.()·–-\n")
            if len(piece) >= MIN_FRAGMENT_CHARS and " " in piece and piece not in theirs:
                pieces.add(piece)
    return pieces


def test_the_catalogue_has_pieces_only_one_language_uses():
    english, german = only_in("en"), only_in("de")
    assert "already in the context" in english and "bereits im Kontext" in german
    assert not english & german


@pytest.mark.parametrize(("question", "language"), [(GERMAN_QUESTION, "de"), (ENGLISH_QUESTION, "en")])
def test_a_run_writes_only_its_own_languages_catalogue_text(extractive_services, tmp_path, question, language):
    research = Research(extractive_services, tmp_path / "sessions.sqlite")
    try:
        status = research.run_unattended(question, answers=["nur Erwachsene" if language == "de" else "adults only"])
    finally:
        research.close()
    assert status.kind == "done", status.error
    state = status.state
    assert state["detected_language"] == language
    paths = write_report_folder(state, tmp_path / "report")
    written = {
        "report.md": paths["report.md"].read_text(encoding="utf-8"),
        "log": "\n".join(notice_text(item, language)
                          for item in [*state.get("messages", []), *state.get("warnings", [])]),
        "edge table": edge_table(state).to_html(),
        "skip reasons": "\n".join(edge_reason(edge, language) for edge in state["reference_edges"]),
    }
    assert state["reference_edges"], "the run followed no reference: the edge table shows nothing"
    # the run's records hold why as keys, no words: the front ends word them in the session's language
    assert all(isinstance(item, dict) and item["key"] for item in state["messages"])
    assert all(edge["reason_key"] and not edge["reason"] for edge in state["reference_edges"])
    # the check is not vacuous: the run's own catalogue text is found by the same test
    own = only_in(language)
    assert all(any(piece in text for piece in own) for text in written.values() if text), written
    foreign = only_in("en" if language == "de" else "de")
    leaks = {name: sorted(piece for piece in foreign if piece in text) for name, text in written.items()}
    assert not any(leaks.values()), leaks


def test_the_session_line_gives_the_reasoners_reason_in_the_runs_language(settings, demo_kb, session_factory):
    from rabbithole_lab.agent.services import Services
    from rabbithole_lab.reasoning.base import ReasonerInfo
    from rabbithole_lab.reasoning.extractive.extractive_reasoner import ExtractiveReasoner
    from tests.agent.conftest import GERMAN_QUESTION
    from tests.conftest import DEMO_KB

    reasoner = ExtractiveReasoner(demo_kb.index.embedder)
    reasoner.info = ReasonerInfo("extractive", None, "Ollama at http://127.0.0.1:9 does not answer (refused)",
                                 "ollama_down", {"url": "http://127.0.0.1:9", "error": "refused"})
    seen: list[str] = []
    session = session_factory(Services(settings, demo_kb, reasoner, DEMO_KB),
                              on_progress=lambda node, update: seen.extend(
                                  notice_text(item, "de") for item in update.get("messages", []) or []))
    session.start(GERMAN_QUESTION)
    line = next(message for message in seen if message.startswith("Sprache: de"))
    assert "antwortet nicht" in line and "does not answer" not in line


def test_the_use_case_gives_its_front_end_the_runs_notices_in_the_runs_language(extractive_services, tmp_path):
    """The graph records notices (keys with values); what a front end receives from the use case, progress and
    the plan's summary alike, is text in the session's language."""
    shown: list[str] = []
    summaries: list[str] = []

    def answer(interrupt: dict):
        if interrupt.get("type") == "todo_approval":
            summaries.append(interrupt["research_summary"])
            return "approve"
        return "/end"

    research = Research(extractive_services, tmp_path / "sessions.sqlite",
                        on_progress=lambda node, update: shown.extend(
                            [*update.get("messages", []), *update.get("warnings", [])]))
    try:
        status = research.run_with(answer, ENGLISH_QUESTION)
    finally:
        research.close()
    assert status.kind == "done", status.error
    assert all(isinstance(item, dict) for item in status.state["messages"])  # the record keeps keys
    assert shown and all(isinstance(text, str) for text in shown)
    assert summaries and summaries[0].startswith("To be researched: ")
    german = only_in("de")
    assert not [piece for piece in german for text in shown + summaries if piece in text]
    assert any(piece in text for piece in only_in("en") for text in shown)
