"""Answers re-written from kept research (the benchmark's quick mode): the same answer as the run that kept
it, and a change to the synthesis side alone never makes the kept research stale."""

from __future__ import annotations

import sys
import threading

from bench.resynthesis import (
    PACKAGE,
    SYNTHESIS_SIDE,
    load_state,
    research_modules,
    resynthesize,
    save_state,
    state_before_synthesis,
)
from rabbithole_lab.agent import graph as graph_module
from rabbithole_lab.usecase.research_case import Research
from tests.agent.conftest import ENGLISH_QUESTION, GERMAN_QUESTION


def test_kept_research_synthesised_again_gives_the_answer_of_the_run_that_kept_it(extractive_services, tmp_path):
    research = Research(extractive_services, tmp_path / "runs.sqlite")
    status = research.run_unattended(GERMAN_QUESTION)
    state = state_before_synthesis(research.session)
    research.close()
    assert status.kind == "done" and state is not None
    assert "final_report" not in state and state["findings"]  # research done, nothing written yet
    save_state(tmp_path / "kept" / "q.json", state)

    again = resynthesize(extractive_services, load_state(tmp_path / "kept" / "q.json"), tmp_path / "again.sqlite")
    assert again.kind == "done"
    assert again.report["answer"] == status.report["answer"]
    assert [s["doc_id"] for s in again.report["sources"]] == [s["doc_id"] for s in status.report["sources"]]


def test_a_run_that_never_reached_synthesis_keeps_no_state(extractive_services, tmp_path):
    research = Research(extractive_services, tmp_path / "runs.sqlite")
    status = research.start(GERMAN_QUESTION)  # stops at the first clarification question
    assert status.kind == "interrupt"
    assert state_before_synthesis(research.session) is None
    research.close()


def test_only_synthesis_side_modules_are_left_out_of_the_research_key(extractive_services, tmp_path, monkeypatch):
    """Trace a German and an English research run: every module whose code runs before `synthesize` is in
    the key (research_modules), and no module the key leaves out as synthesis side runs before it."""
    ran_before: set[str] = set()
    synthesizing = threading.Event()
    original = graph_module.NODES["synthesize"]

    def synthesize(state, runtime):
        synthesizing.set()
        return original(state, runtime)

    def profile(frame, event, _arg):
        if event == "call" and not synthesizing.is_set():
            filename = frame.f_code.co_filename
            if filename.startswith(str(PACKAGE)):
                ran_before.add(filename[len(str(PACKAGE)) + 1:])

    monkeypatch.setitem(graph_module.NODES, "synthesize", synthesize)
    research = Research(extractive_services, tmp_path / "runs.sqlite")
    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        for question in (GERMAN_QUESTION, ENGLISH_QUESTION):
            synthesizing.clear()
            assert research.run_unattended(question).kind == "done"
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
        research.close()
    assert "rabbithole/follow.py" in ran_before and "agent/nodes/run_tasks.py" in ran_before
    assert not {module for module in ran_before if module.startswith(SYNTHESIS_SIDE)}
    assert ran_before <= set(research_modules())
