"""The graph's contract: every node leaves by a Command to a node its router names, a failing node ends the run
before the next node starts (and a resume retries it), and the run takes only the input the contract names."""

from __future__ import annotations

from langgraph.graph import END, START

from rabbithole_lab.agent import graph as graph_module
from rabbithole_lab.agent.session import ScriptedAnswers, run_to_end
from tests.agent.conftest import GERMAN_QUESTION


def test_every_node_is_reached_from_the_start_and_reaches_the_end(settings):
    drawn = graph_module.build_graph(settings).compile().get_graph()
    leads: dict[str, set[str]] = {}
    for edge in drawn.edges:
        leads.setdefault(edge.source, set()).add(edge.target)
    reached, todo = set(), [START]
    while todo:
        node = todo.pop()
        if node not in reached:
            reached.add(node)
            todo.extend(leads.get(node, ()))
    assert reached == set(graph_module.NODES) | {START, END}
    for node in graph_module.NODES:
        seen, todo = set(), [node]
        while todo:
            here = todo.pop()
            if here not in seen:
                seen.add(here)
                todo.extend(leads.get(here, ()))
        assert END in seen, node
    # the branches are drawn as branches: the quality loop can go back to writing or on to attribution
    assert leads["remediate"] == {"synthesize", "attribute_sources"}
    assert leads["adapt_todo"] == {"execute_task", "validate_relevance"}


def test_a_failing_node_ends_the_run_before_the_next_one_and_resume_retries_it(
        extractive_services, session_factory, monkeypatch):
    original = graph_module.NODES["validate_relevance"]
    written: list[str] = []

    def broken(state, runtime):
        raise RuntimeError("the store went away")

    def synthesize(state, runtime, _write=graph_module.NODES["synthesize"]):
        written.append("synthesize")
        return _write(state, runtime)

    monkeypatch.setitem(graph_module.NODES, "validate_relevance", broken)
    monkeypatch.setitem(graph_module.NODES, "synthesize", synthesize)
    session = session_factory(extractive_services)
    status = run_to_end(session, session.start(GERMAN_QUESTION), ScriptedAnswers([]))
    assert status.kind == "error" and status.state["failed_node"] == "validate_relevance"
    assert status.error["values"]["error"] == "the store went away" and written == []
    assert "final_report" not in status.state

    monkeypatch.setitem(graph_module.NODES, "validate_relevance", original)
    again = session_factory(extractive_services, thread_id=session.thread_id)  # the graph built with the node fixed
    resumed = again.resume()
    assert resumed.kind == "done" and written == ["synthesize"]
    assert resumed.state["final_report"]["answer"] and not resumed.state.get("error")


def test_a_run_keeps_every_fact_its_input_contract_names_and_nothing_else(extractive_services, session_factory):
    facts = {"kb_dir": "/some/kb", "db_path": "/some/db", "run_options": {"no_hitl": True},
             "requested_language": "en"}
    session = session_factory(extractive_services)
    session.start(GERMAN_QUESTION, extra={**facts, "not_an_input": "ignored"})
    state = session.state()
    assert {key: state.get(key) for key in facts} == facts and state["query"] == GERMAN_QUESTION
    assert "not_an_input" not in state
