"""HITL interrupts, resume across fresh graph instances on one SQLite file, termination reasons,
stopping, errors and retries."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from rabbithole_lab.agent.session import (
    ResearchSession,
    ScriptedAnswers,
    list_sessions,
    run_to_end,
    saved_values,
)
from rabbithole_lab.evidence.findings import tier_entries
from rabbithole_lab.kb.store.index import UnknownCollectionError
from rabbithole_lab.messages.reasons import notice_text
from rabbithole_lab.reasoning.llm.llm_reasoner import LLMReasoner
from rabbithole_lab.settings import load_settings
from tests.agent.conftest import GERMAN_QUESTION, SMALL_QUESTION_CONTEXT, fake_llm, services_with
from tests.conftest import DEMO_KB, REPO


def test_interrupt_and_resume_across_fresh_sessions_on_one_sqlite_file(demo_kb, session_factory):
    extractive_services = services_with(demo_kb, search=SMALL_QUESTION_CONTEXT)  # a plan with tasks to remove
    first = session_factory(extractive_services)
    status = first.start(GERMAN_QUESTION)
    assert status.kind == "interrupt" and status.interrupt["type"] == "hitl_questions"
    questions = status.interrupt["questions"]
    assert 2 <= len(questions) <= 3 and "coverage_score" in status.interrupt
    thread = first.thread_id
    first.close()

    # a kernel restart: new graph instance, same file and thread
    second = session_factory(extractive_services, thread_id=thread)
    assert second.pending_interrupt()["questions"] == questions
    status = second.answer("Nur Erwachsene, keine Auszubildenden")
    # the small demo KB's second round finds only what the first found: the stated rule ends the dialogue
    assert status.kind == "interrupt" and status.interrupt["type"] == "todo_approval"
    assert second.state()["hitl_iteration"] == 1 and second.state()["hitl_termination_reason"] == "convergence"
    second.close()

    third = session_factory(extractive_services, thread_id=thread)
    status = third.resume()
    assert status.interrupt["type"] == "todo_approval"
    items = status.interrupt["todo_list"]["items"]
    # the planned tasks carry what they are about as data; the answer given in the dialogue is read into the
    # anchor every task reads, never made a task of its own
    assert all(item["focus"] for item in items[1:])
    assert not any("Nur Erwachsene" in item["task"] for item in items)
    assert "Auszubildende" in " ".join(third.state()["query_anchor"].get("exclusions", []))
    status = third.answer({"removed_ids": [1], "edited_items": [{"id": 2, "task": "Grenzwerte für Augenlinse"}],
                           "new_items": ["Aufsicht durch die Behörde"]})
    assert status.kind == "done", status.error
    state = status.state
    assert state["hitl_termination_reason"] == "convergence"
    assert {"role": "user", "content": "Nur Erwachsene, keine Auszubildenden"} in state["hitl_conversation_history"]
    assert "Nur Erwachsene" in state["hitl_context_summary"]
    final = [i["task"] for i in state["todo_list"]["items"] if i["origin"] != "added"]
    assert items[1]["task"] not in final
    assert "Grenzwerte für Augenlinse" in final and final[-1] == "Aufsicht durch die Behörde"
    assert [i["id"] for i in state["todo_list"]["items"]] == list(range(len(state["todo_list"]["items"])))
    assert len(state["iteration_queries"]) == 2 and len(state["retrieval_history"]) == 2


def test_second_round_does_not_return_chunks_already_seen(extractive_services, session_factory):
    session = session_factory(extractive_services)
    session.start(GERMAN_QUESTION)
    session.answer("Grenzwerte")
    state = session.state()
    ids = [c["chunk_id"] for c in state["query_retrieval"]]
    assert len(ids) == len(set(ids))
    first, second = state["retrieval_history"]
    # the dedup ratio: the share of a round's distinct passages that earlier rounds found already
    assert first["dedup_ratio"] == 0.0 and first["seen_before"] == 0  # round 1 can never converge
    distinct = second["retrieved"] - second["within_round_duplicates"]
    assert second["seen_before"] + second["new"] == distinct
    assert second["dedup_ratio"] == pytest.approx(second["seen_before"] / distinct, abs=0.001)


def test_max_iterations_ends_the_clarification(demo_kb, session_factory):
    # a question the small demo KB cannot cover (a gap stays open), so retrieval never converges
    services = services_with(demo_kb, hitl={"max_iterations": 2, "convergence_max_gaps": 0})
    session = session_factory(services)
    session.start("Welche Grenzwerte gelten für Raumfahrtpersonal bei Quantenstrahlung?")
    assert session.answer("Erwachsene").interrupt["type"] == "hitl_questions"
    status = session.answer("Kategorie A")
    assert status.interrupt["type"] == "todo_approval"
    assert session.state()["hitl_termination_reason"] == "max_iterations"


def test_convergence_ends_the_clarification_once_retrieval_finds_nothing_new(demo_kb, session_factory):
    services = services_with(demo_kb, hitl={"convergence_coverage": 0.0, "convergence_dedup": 0.01,
                                            "convergence_max_gaps": 50})
    session = session_factory(services)
    first = session.start(GERMAN_QUESTION)
    assert first.interrupt["convergence"] == {"coverage": 0.0, "dedup": 0.01, "max_gaps": 50}
    # round 1 found only new passages: however low the bar, it does not converge
    assert first.interrupt["type"] == "hitl_questions" and first.interrupt["iteration"] == 0
    # round 2 re-finds earlier passages: the stated rule ends the dialogue before more questions are asked
    status = session.answer("Erwachsene")
    state = session.state()
    assert state["retrieval_history"][1]["dedup_ratio"] >= 0.01
    assert status.interrupt["type"] == "todo_approval"
    assert state["hitl_termination_reason"] == "convergence"
    asked = [turn for turn in state["hitl_conversation_history"] if turn["role"] == "assistant"]
    assert len(asked) == 1  # round 1's questions only


def test_stop_at_a_node_boundary_then_resume(extractive_services, session_factory):
    stopper: dict = {}

    def stop_after_init(node, update):
        if node == "hitl_init":
            stopper["session"].stop()

    session = session_factory(extractive_services, on_progress=stop_after_init)
    stopper["session"] = session
    status = session.start(GERMAN_QUESTION)
    assert status.kind == "stopped"
    assert status.state["detected_language"] == "de" and not status.state.get("iteration_queries")
    thread = session.thread_id
    resumed = session_factory(extractive_services, thread_id=thread).resume()
    assert resumed.kind == "interrupt" and resumed.interrupt["type"] == "hitl_questions"
    sessions = list_sessions(session.checkpoint_path)
    assert any(s["thread_id"] == thread and s["query"] == GERMAN_QUESTION for s in sessions)
    assert saved_values(session.checkpoint_path, thread)["query"] == GERMAN_QUESTION


def test_unknown_collection_is_a_clear_error(extractive_services, session_factory):
    with pytest.raises(UnknownCollectionError, match="Unknown collection 'Nirgendwo'.*Recht"):
        session_factory(extractive_services).start(GERMAN_QUESTION, collection="Nirgendwo")


def test_an_empty_question_is_refused_before_anything_runs(extractive_services, session_factory):
    session = session_factory(extractive_services)
    with pytest.raises(ValueError, match="The question is empty"):
        session.start("   ")
    assert session.state() == {}


def test_resume_of_an_unknown_session_is_a_clear_error(extractive_services, session_factory):
    with pytest.raises(ValueError, match="No saved session"):
        session_factory(extractive_services, thread_id="nope").resume()


def _refused_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


def test_refused_ollama_gives_a_clear_error_and_a_resumable_checkpoint(demo_kb, session_factory):
    settings = load_settings(env_file=None, ollama={"base_url": _refused_url(), "max_retries": 0, "timeout_s": 2.0})
    down = LLMReasoner.from_settings(settings)
    session = session_factory(services_with(demo_kb, down))
    status = session.start(GERMAN_QUESTION)
    assert status.kind == "error"
    assert status.error["key"] == "llm_unreachable" and "could not be reached" in status.error["values"]["error"]
    worded = notice_text(status.error, "de")  # what the front ends show
    assert "nicht erreichbar" in worded and "Sitzung fort" in worded
    assert status.state["failed_node"] == "hitl_generate_queries"
    assert status.state["detected_language"] == "de"  # what was done is kept

    # Ollama is back (here: a scripted fake model): the same thread continues from the failed node
    working, model = fake_llm()
    again = session_factory(services_with(demo_kb, working), thread_id=session.thread_id)
    status = run_to_end(again, again.resume(), ScriptedAnswers([]))
    assert status.kind == "done", status.error
    assert model.calls_for("hitl_queries") == 1 and status.report["answer"]


def test_model_down_mid_run_keeps_the_gathered_context(demo_kb, session_factory):
    failing, _ = fake_llm({"synthesize": ConnectionRefusedError("connection refused")})
    session = session_factory(services_with(demo_kb, failing))
    status = run_to_end(session, session.start(GERMAN_QUESTION), ScriptedAnswers([]))
    assert status.kind == "error" and status.state["failed_node"] == "synthesize"
    gathered = tier_entries(status.state, "primary")
    assert gathered and all(t["completed"] for t in status.state["todo_list"]["items"])

    working, model = fake_llm()
    again = session_factory(services_with(demo_kb, working), thread_id=session.thread_id)
    status = again.resume()
    assert status.kind == "done", status.error
    assert model.calls_for("task_search_queries") == 0 and model.calls_for("extract_info") == 0  # nothing redone
    assert model.calls_for("synthesize") == 1
    assert tier_entries(status.state, "primary") == gathered


def test_a_session_file_is_reopened_by_a_new_process_object(extractive_services, tmp_path):
    path = tmp_path / "other.sqlite"
    session = ResearchSession(extractive_services, path)
    session.start(GERMAN_QUESTION)
    session.close()
    reopened = ResearchSession(extractive_services, path, thread_id=session.thread_id)
    try:
        assert reopened.pending_interrupt()["type"] == "hitl_questions"
    finally:
        reopened.close()


# A process that dies after the first task's writes reached the checkpoint but before the checkpoint
# after that step was written: LangGraph's snapshot then names no next node, yet the run is not finished.
_DIE_AFTER_TASK_WRITES = """
import os, sys
from pathlib import Path
from langgraph.checkpoint.sqlite import SqliteSaver
from rabbithole_lab.agent import session as session_module
from rabbithole_lab.usecase.research_case import open_services
from rabbithole_lab.agent.session import ResearchSession, ScriptedAnswers, run_to_end
from rabbithole_lab.settings import load_settings

class DiesAfterTaskWrites(SqliteSaver):
    def put_writes(self, config, writes, task_id, task_path=""):
        super().put_writes(config, writes, task_id, task_path)
        if any(channel == "task_summaries" for channel, _ in writes):
            os._exit(9)

session_module.SqliteSaver = DiesAfterTaskWrites
kb_dir, db, sessions, question = sys.argv[1:5]
services = open_services(load_settings(env_file=None), Path(kb_dir), Path(db), ingest_first=False)
session = ResearchSession(services, Path(sessions), thread_id="killed")
run_to_end(session, session.start(question), ScriptedAnswers([]))
"""


def test_a_run_killed_between_a_task_and_its_checkpoint_is_finished_by_resume(tmp_path, demo_db, extractive_services):
    sessions = tmp_path / "sessions.sqlite"
    died = subprocess.run([sys.executable, "-c", _DIE_AFTER_TASK_WRITES, str(DEMO_KB), str(demo_db), str(sessions),
                           GERMAN_QUESTION], cwd=REPO, env={**os.environ, "LLM_PROVIDER": "extractive"},
                          capture_output=True, text=True, timeout=600)
    assert died.returncode == 9, died.stderr[-2000:]
    session = ResearchSession(extractive_services, sessions, thread_id="killed")
    try:
        snapshot = session.graph.get_state(session.config)
        assert snapshot.next == () and snapshot.tasks  # the window: no next node named, one task's writes saved
        status = session.resume()
    finally:
        session.close()
    assert status.kind == "done", status.error
    assert "20 Millisievert" in status.report["answer"]
