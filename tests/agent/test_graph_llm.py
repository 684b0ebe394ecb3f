"""The whole graph through the LLM reasoner with a scripted fake chat model: garbage, timeouts,
wrong language, and the quality threshold with its single remediation."""

from __future__ import annotations

import json

from rabbithole_lab.agent.session import ScriptedAnswers, run_to_end
from tests.agent.conftest import GERMAN_QUESTION, fake_llm, services_with

ENGLISH_QUESTIONS = json.dumps({"questions": ["Which activity do you mean?", "Are minors included?"]})
GERMAN_QUESTIONS = json.dumps({"questions": ["Welche Tätigkeit meinen Sie?", "Sind Jugendliche gemeint?"]})


def test_full_run_with_malformed_json_a_timeout_and_a_wrong_language(demo_kb, session_factory):
    reasoner, model = fake_llm({
        "analyze_retrieval": "kein JSON, nur Text",
        "follow_up_questions": [ENGLISH_QUESTIONS, GERMAN_QUESTIONS],
        "task_search_queries": [TimeoutError("timed out"), json.dumps({"queries": ["Grenzwert 20 Millisievert"]})],
    })
    session = session_factory(services_with(demo_kb, reasoner))
    answers = ScriptedAnswers([])
    status = run_to_end(session, session.start(GERMAN_QUESTION), answers)
    assert status.kind == "done", status.error
    state = status.state
    # the wrong-language questions were asked again with the stronger instruction; the German ones reached the user
    assert answers.asked[0]["questions"] == json.loads(GERMAN_QUESTIONS)["questions"]
    assert any("### Language" in p for p in model.prompts_seen if model.step_of(p) == "follow_up_questions")
    # garbage became the default with a warning in the state, the run went on
    assert any("analyze_retrieval" in w for w in state["warnings"])
    assert state["coverage_score"] == 0.0
    # the timeout was retried
    assert model.calls_for("task_search_queries") == len(state["todo_list"]["items"]) + 1
    report = status.report
    assert report["answer"].startswith("Die Dokumente legen die Grenzwerte fest [")
    assert report["metadata"]["llm_calls"] == len(model.prompts_seen)
    assert report["metadata"]["reasoner"]["provider"] == "ollama"
    assert report["quality_score"] == 445 and report["metadata"]["quality_passed"]
    assert model.calls_for("synthesize") == 1 and model.calls_for("decide_remediation") == 0
    # the LLM gate said follow: at least one reference was followed and its reason is the model's
    followed = [e for e in state["reference_edges"] if e["decision"] == "followed"]
    assert followed and any(e["reason"] == "Der Verweis nennt den Grenzwert." for e in followed)
    assert model.calls_for("extract_references") > 0  # hybrid detection asked the model too
    # every finding cites a source that exists in the report
    assert all(f["sources"] for f in report["findings"])


WEAK = json.dumps({"factual_accuracy": 40, "semantic_validity": 50, "structural_integrity": 50,
                   "citation_correctness": 30, "query_relevance": 60, "issues_found": ["Zitate fehlen"]})


def test_a_weak_answer_is_remediated_exactly_once(demo_kb, session_factory):
    reasoner, model = fake_llm({"assess_quality": WEAK})
    session = session_factory(services_with(demo_kb, reasoner))
    status = run_to_end(session, session.start(GERMAN_QUESTION), ScriptedAnswers([]))
    assert status.kind == "done", status.error
    assert model.calls_for("synthesize") == 2
    assert model.calls_for("decide_remediation") == 1
    synth_prompts = [p for p in model.prompts_seen if model.step_of(p) == "synthesize"]
    assert "Rewrite instructions: Mehr Quellen zitieren" in synth_prompts[1]
    assert "Rewrite instructions" not in synth_prompts[0]
    assert len(status.state["quality_history"]) == 2 and status.state["reflection_count"] == 1
    assert status.report["quality_score"] == 230 and not status.report["metadata"]["quality_passed"]


def test_no_remediation_when_the_model_says_a_rewrite_will_not_help(demo_kb, session_factory):
    reasoner, model = fake_llm({"assess_quality": WEAK,
                                "decide_remediation": json.dumps({"retry": False, "instructions": ""})})
    session = session_factory(services_with(demo_kb, reasoner))
    status = run_to_end(session, session.start(GERMAN_QUESTION), ScriptedAnswers([]))
    assert status.kind == "done"
    assert model.calls_for("synthesize") == 1 and status.state["reflection_count"] == 1


def test_threshold_below_the_score_means_no_remediation(demo_kb, session_factory):
    reasoner, model = fake_llm({"assess_quality": WEAK})
    session = session_factory(services_with(demo_kb, reasoner, quality={"threshold": 200}))
    status = run_to_end(session, session.start(GERMAN_QUESTION), ScriptedAnswers([]))
    assert status.kind == "done"
    assert model.calls_for("synthesize") == 1 and status.report["metadata"]["quality_passed"]


def test_quality_check_can_be_disabled(demo_kb, session_factory):
    reasoner, model = fake_llm()
    session = session_factory(services_with(demo_kb, reasoner, quality={"enabled": False}))
    status = run_to_end(session, session.start(GERMAN_QUESTION), ScriptedAnswers([]))
    assert status.kind == "done"
    assert model.calls_for("assess_quality") == 0 and status.report["quality_score"] == 0


def test_relevance_validation_removes_drift_and_warns(demo_kb, session_factory):
    reasoner, _ = fake_llm({"score_relevance": json.dumps({"score": 0.1, "reason": "passt nicht"})})
    session = session_factory(services_with(demo_kb, reasoner))
    status = run_to_end(session, session.start(GERMAN_QUESTION), ScriptedAnswers([]))
    validation = status.state["relevance_validation"]
    assert validation["drift_ratio"] > 0.3 and validation["removed"]
    assert any("passt nicht zur Frage" in w for w in status.state["warnings"])
    # min_results backfill keeps the best entries of each tier
    assert 0 < len(status.state["primary_context"]) <= 2
