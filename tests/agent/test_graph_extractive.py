"""The whole graph end to end on the demo KB with the extractive reasoner (German and English)."""

from __future__ import annotations

from pathlib import Path

from langgraph.graph import StateGraph

from rabbithole_lab.agent.graph import build_graph
from rabbithole_lab.agent.session import ScriptedAnswers, run_to_end
from rabbithole_lab.evidence.findings import context_entries, preserved_quotes, research_context, tier_entries
from rabbithole_lab.reasoning.checks.quality import statements
from rabbithole_lab.report.folder import write_report_folder
from tests.agent.conftest import ENGLISH_QUESTION, GERMAN_QUESTION, services_with
from tests.answer_reading import framing_language, lead, provisions_named, quotes_holding


def test_build_graph_returns_an_uncompiled_builder_with_the_seed_nodes(extractive_services):
    builder = build_graph(extractive_services.settings)
    assert isinstance(builder, StateGraph)
    expected = {"hitl_init", "hitl_generate_queries", "hitl_retrieve_chunks", "hitl_analyze_retrieval",
                "hitl_generate_questions", "hitl_process_response", "hitl_finalize", "generate_todo",
                "hitl_approve_todo", "process_hitl_todo", "execute_task", "validate_relevance", "synthesize",
                "quality_check", "remediate", "attribute_sources"}
    assert expected <= set(builder.nodes)


def test_german_question_unattended(extractive_services, session_factory, tmp_path):
    session = session_factory(extractive_services)
    answers = ScriptedAnswers([])
    status = run_to_end(session, session.start(GERMAN_QUESTION), answers)
    assert status.kind == "done", status.error
    state = status.state
    assert state["detected_language"] == "de"
    assert [i["type"] for i in answers.asked] == ["hitl_questions", "todo_approval"]
    assert 2 <= len(answers.asked[0]["questions"]) <= 3
    # one HITL round: exactly 3 queries, about 9 chunks (3 per query), dedup ratio recorded
    assert len(state["iteration_queries"]) == 1 and len(state["iteration_queries"][0]) == 3
    history = state["retrieval_history"][0]
    # nothing seen before
    assert 6 <= history["retrieved"] <= 9 and history["dedup_ratio"] == 0.0 and history["new"] > 0
    assert state["hitl_termination_reason"] == "user_end"
    assert state["query_anchor"]["original_query"] == GERMAN_QUESTION
    items = state["todo_list"]["items"]
    planned = [i for i in items if i["origin"] != "added"]
    assert 1 <= len(planned) <= 5 and items[0]["task"] == GERMAN_QUESTION
    # a planned task whose search finds only what the question's own context holds is not proposed, and the run
    # says how many were left out (on the small demo KB: all of them)
    assert len(planned) > 1 or any(message["key"] == "plan_repeats" for message in state["messages"])
    assert [i["id"] for i in items] == list(range(len(items))) and all(i["completed"] for i in items)
    # the plan adapted after the question's own task: the provision its reference led to (QStrV § 5 -> § 12
    # QStrG) became a task of its own and was researched; tasks whose search finds nothing new were closed
    added = [i for i in items if i["origin"] == "added"]
    assert 1 <= len(added) <= 3 and all(i["added_reason"] for i in added)
    changes = state.get("todo_changes", [])
    assert changes and changes[0]["after_task"] == 0
    assert sum(len(c["added"]) for c in changes) == len(added)
    assert any("§ 12" in i["task"] and "QStrG" in i["task"] for i in added)
    researched = {stats["task_id"] for stats in state["task_stats"]}
    assert {i["id"] for i in added} <= researched
    closed = [i for i in items if i["closed_reason"]]
    assert len(state["task_stats"]) == len(items) - len(closed)
    assert all(1 <= stats["iterations"] == len(stats["rounds"]) <= 3 for stats in state["task_stats"])
    # the rabbithole: QStrV § 5 cites "§ 12 des Quantenstrahlenschutzgesetzes"
    followed = [e for e in state["reference_edges"] if e["decision"] == "followed"]
    assert followed and all(e["reason_key"] for e in state["reference_edges"])
    located = [e for e in state["reference_edges"] if e["decision"] == "skipped" and e["resolution"] == "section_index"]
    assert located and all(e["to_docs"] and not e["to_chunks"] for e in located)
    report = status.report
    assert quotes_holding(lead(report["answer"]), "20 Millisievert")  # the figure is quoted in the lead
    assert provisions_named(lead(report["answer"])) and framing_language(lead(report["answer"])) == "de"
    # a task has a section only where it adds to the lead (a finding, or a "not found" naming what was searched),
    # and no statement is quoted twice
    for line in report["answer"].splitlines():
        if line.startswith("**Aufgabe "):
            number = int(line.split()[1].rstrip(":"))
            assert 1 <= number <= len(state["todo_list"]["items"])
    quoted = [" ".join(s.quote.split()) for s in statements(report["answer"])]
    assert quoted and len(quoted) == len(set(quoted))
    assert report["sources"] and all(s["page_number"] >= 1 for s in report["sources"])
    for source in report["sources"]:
        assert Path(source["path"]).is_file() and source["link"].endswith(f"#page={source['page_number']}")
    assert report["metadata"]["reasoner"]["provider"] == "extractive"
    # one count everywhere: a reference (a citation in one passage) followed by two tasks counts once
    distinct = {(e["from_doc"], e["from_section"], e["target"]) for e in followed}
    assert report["metadata"]["followed_references"] == len(distinct)
    assert 0 < report["quality_score"] <= 500 and len(report["quality_breakdown"]) == 6  # five and the verdict
    assert tier_entries(state, "primary") and preserved_quotes(state)
    paths = write_report_folder(state, tmp_path / "report")
    assert {"report.md", "report.html", "report.json", "graph.html", "tier_primary.csv"} <= set(paths)
    assert f"Verfolgte Verweise ({len(distinct)})" in paths["report.md"].read_text(encoding="utf-8")
    assert "verfolgt: " in paths["graph.html"].read_text(encoding="utf-8")  # in the report's language


def test_english_question_gets_an_english_report(extractive_services, session_factory):
    session = session_factory(extractive_services)
    status = run_to_end(session, session.start(ENGLISH_QUESTION), ScriptedAnswers([]))
    assert status.kind == "done", status.error
    report = status.report
    assert status.state["detected_language"] == "en"
    assert framing_language(lead(report["answer"])) == "en"
    assert any("calibrat" in s.quote.lower() for s in statements(lead(report["answer"])))  # the lead answers it
    assert any(s["doc_id"] == "Detector_Calibration_Guide.pdf" for s in report["sources"])
    assert all(t["task"].split()[0] in {"How", "Identify", "Establish", "Clarify", "Check"}
               for t in report["metadata"]["tasks"] if t["origin"] != "added")


def test_collection_choice_restricts_every_search(extractive_services, session_factory):
    session = session_factory(extractive_services)
    status = run_to_end(session, session.start(GERMAN_QUESTION, collection="Technik"), ScriptedAnswers([]))
    assert status.kind == "done", status.error
    collections = {c["collection"] for c in context_entries(status.state) if c["depth"] == 0}
    assert collections == {"Technik"}


def test_a_task_the_passages_do_not_answer_gets_a_second_round_for_what_is_missing(demo_kb, session_factory):
    # a small context per task, so the small demo KB is not used up by the first task
    session = session_factory(services_with(demo_kb, search={"task_context_chars": 1000,
                                                             "question_context_chars": 1000}))
    session.start(GERMAN_QUESTION)
    todo = session.answer("/end").interrupt["todo_list"]["items"]
    decision = {"removed_ids": [item["id"] for item in todo[1:]], "new_items": ["Grenzwerte für Raumfahrtpersonal"]}
    status = run_to_end(session, session.answer(decision), ScriptedAnswers([]))
    assert status.kind == "done", status.error
    stats = next(s for s in status.state["task_stats"] if s["task"] == "Grenzwerte für Raumfahrtpersonal")
    first = stats["rounds"][0]
    assert not first["answered"] and "Raumfahrtpersonal" in first["missing"] and "Raumfahrtpersonal" in first["reason"]
    assert stats["iterations"] >= 2 and any("Raumfahrtpersonal" in q for q in stats["rounds"][1]["queries"])
    row = next(t for t in status.report["metadata"]["tasks"] if t["task"] == "Grenzwerte für Raumfahrtpersonal")
    assert len(row["rounds"]) == stats["iterations"]


def test_the_questions_own_search_keeps_its_own_budget_and_the_other_tasks_theirs(demo_kb, session_factory):
    budgets = {"task_context_chars": 1500, "question_context_chars": 5000}
    written = {"new_items": ["Wer ist zuständig?", "Welche Fristen gelten für die Anzeige?"]}
    status = run_to_end(session := session_factory(services_with(demo_kb, search=budgets)),
                        session.start(GERMAN_QUESTION), ScriptedAnswers([], todo_decision=written))
    assert status.kind == "done", status.error
    first_round_chars: dict[int, int] = {}
    for search in research_context(status.state).model_dump()["search_queries"]:
        stats = next(s for s in status.state["task_stats"] if s["task_id"] == search["task_id"])
        first = stats["rounds"][0]["new_chunks"]
        first_round_chars[search["task_id"]] = sum(len(c["chunk_text"]) for c in search["chunks"][:first])
    question = first_round_chars.pop(0)
    assert budgets["task_context_chars"] < question <= budgets["question_context_chars"]
    assert first_round_chars and all(chars <= budgets["task_context_chars"] for chars in first_round_chars.values())


def _tier_entries(state: dict) -> list[dict]:
    return context_entries(state)


def test_without_a_model_the_drift_filter_keeps_what_the_questions_own_search_admitted(demo_kb, session_factory):
    # a threshold no score reaches: every passage the filter may judge is dropped down to the backfill; a small
    # task budget leaves the other tasks something of their own to add
    services = services_with(demo_kb, references={"relevance_threshold": 1.0},
                             search={"task_context_chars": 1500, "question_context_chars": 1500})
    written = {"new_items": ["Wer ist zuständig?", "Welche Fristen gelten für die Anzeige?"]}
    status = run_to_end(session := session_factory(services), session.start(GERMAN_QUESTION),
                        ScriptedAnswers([], todo_decision=written))
    assert status.kind == "done", status.error
    searches = research_context(status.state).model_dump()["search_queries"]
    own = {c["chunk_id"] for q in searches if q["task_id"] == 0 for c in q["chunks"] if c["depth"] == 0}
    added = {c["chunk_id"] for q in searches if q["task_id"] != 0 for c in q["chunks"]} - own
    followed = {c["chunk_id"] for q in searches if q["task_id"] == 0 for c in q["chunks"] if c["depth"] > 0} - own
    kept = {entry["chunk_id"] for entry in _tier_entries(status.state)}
    removed = {entry["chunk_id"] for entry in status.state["relevance_validation"]["removed"]}
    assert own and own <= kept and not own & removed
    # what the other tasks added, and what following added to the question's own search, is still filtered
    assert added and removed and removed & added and removed <= added | followed
