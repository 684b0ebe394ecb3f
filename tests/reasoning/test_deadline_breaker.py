"""A deadline that holds and a breaker that trips, against the Ollama double on loopback
(tests.ollama_double.py) through the real ChatOllama client: one call's attempts together end at the total
deadline and send nothing after it; a run whose model calls were abandoned still exits with its code; a
model that keeps answering the wrong schema is asked a bounded number of times; and model text in another
language never reaches the reader (gate reasons, LLM-extracted reference fields)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from rabbithole_lab.rabbithole.reference_merge import detect_references
from rabbithole_lab.reasoning.base import ReasonerUnavailableError
from rabbithole_lab.reasoning.factory import build_reasoner
from rabbithole_lab.reasoning.fallback import ExtractiveFallback
from rabbithole_lab.records import DetectedReference, GateInput
from rabbithole_lab.schemas import ExtractedReference, ExtractedReferenceList
from rabbithole_lab.settings import load_settings
from tests.conftest import DEMO_KB, REPO
from tests.ollama_double import CHINESE_TEXT, MODEL, OllamaDouble, wait_until

QUESTION = "Welche Pflichten hat die Betreiberin eines Leuchtturms bei Nebel?"
BREAKER = 3


def _settings(url: str, **ollama):
    return load_settings(env_file=None, ollama={"base_url": url, "model": MODEL, "fallback_model": MODEL,
                                                "timeout_s": 1.0, "max_retries": 1, "probe_timeout_s": 1.0,
                                                **ollama},
                         llm={"breaker_failures": BREAKER})


def _reasoner(url: str, embed, **ollama) -> ExtractiveFallback:
    reasoner = build_reasoner(_settings(url, **ollama), embed)
    assert isinstance(reasoner, ExtractiveFallback)
    reasoner.primary.backoff_s = 0.0
    return reasoner


@pytest.fixture(scope="module")
def embed(demo_kb):
    return demo_kb.index.embedder


def test_the_total_deadline_ends_every_attempt_and_sends_none_after_it(embed):
    with OllamaDouble() as server:
        reasoner = _reasoner(server.url, embed, max_retries=5, call_deadline_s=1.5)
        server.behaviour = "trickling"
        with pytest.raises(ReasonerUnavailableError, match=r"all attempts\) gave no complete answer within 1.5 s"):
            reasoner.hitl_queries(QUESTION, 0, [], [], [], "de", 2)
        asked = server.chat_requests
        time.sleep(2.5)  # the abandoned retries would have sent their requests by now
        assert server.chat_requests == asked <= 2  # six attempts allowed, two begun before the deadline


def test_a_call_abandoned_at_its_deadline_closes_its_connection(embed):
    with OllamaDouble() as server:
        reasoner = _reasoner(server.url, embed, max_retries=0, timeout_s=1.0, call_deadline_s=5.0)
        server.behaviour = "trickling"  # the answer never completes, and the server would go on for ever
        with pytest.raises(ReasonerUnavailableError):
            reasoner.hitl_queries(QUESTION, 0, [], [], [], "de", 2)
        # the server sees the connection go (and Ollama would stop generating), long before its trickle ends
        assert wait_until(lambda: server.disconnects >= server.chat_requests >= 1, timeout_s=5.0)


@pytest.mark.parametrize("behaviour, asked, used", [("repairable", 2, True), ("not_json", 2, False),
                                                    ("empty_object", 2, False)])
def test_an_unusable_answer_is_asked_again_once_with_what_was_wrong(embed, behaviour, asked, used):
    with OllamaDouble(behaviour=behaviour) as server:
        reasoner = _reasoner(server.url, embed, max_retries=3)
        queries = reasoner.hitl_queries(QUESTION, 0, [], [], [], "de", 2)
    assert server.chat_requests == asked  # not max_retries + 1 times the same prompt
    assert [record.repair for record in server.records] == [False, True]
    warnings = reasoner.drain_warnings()
    assert queries and (not warnings if used else any("extractive reasoner answered" in w for w in warnings))


def test_a_model_answering_the_wrong_schema_trips_the_breaker_once(embed):
    with OllamaDouble(behaviour="wrong_shape") as server:
        reasoner = _reasoner(server.url, embed)
        for _ in range(5):
            assert reasoner.hitl_queries(QUESTION, 1, [], ["Nebel"], ["Leuchtturm"], "de", 2)
        reference = DetectedReference(type="legal_section", target="§ 3 LeuchtV", original_text="§ 3")
        decision = reasoner.decide_reference(GateInput(reference, "Nach § 3 gilt bei Nebel das Signal.", "a.md"),
                                             QUESTION, "de")
        asked = server.chat_requests
    assert asked == BREAKER * 2  # three failing steps, each the first try and one retry; then none
    assert decision.why() and reasoner.breaker.open
    warnings = reasoner.drain_warnings()
    assert sum("Circuit breaker" in w for w in warnings) == 1


def test_a_good_answer_between_failures_keeps_the_breaker_closed(embed):
    with OllamaDouble() as server:
        reasoner = _reasoner(server.url, embed)
        for behaviour in ["wrong_shape", "wrong_shape", "good", "wrong_shape", "wrong_shape"]:
            server.behaviour = behaviour
            reasoner.hitl_queries(QUESTION, 1, [], [], ["Leuchtturm"], "de", 2)
    assert not reasoner.breaker.open


def test_a_gate_reason_in_another_language_is_not_shown(embed):
    reference = DetectedReference(type="legal_section", target="§ 3 LeuchtV", original_text="§ 3")
    item = GateInput(reference, "Nach § 3 gilt bei Nebel das Signal.", "a.md")
    with OllamaDouble(behaviour="chinese") as server:
        decision = _reasoner(server.url, embed).decide_reference(item, QUESTION, "de")
    # the model's decision stands; its words, not in the reader's language, are replaced by the catalogue's reason
    assert decision.follow and decision.reason_key == "gate_model_decision" and not decision.reason


def test_reference_fields_the_text_does_not_hold_are_dropped():
    text = "Die Betreiberin meldet nach § 3 der Leuchtturmverordnung jeden Ausfall."

    def extract(_text: str) -> ExtractedReferenceList:
        return ExtractedReferenceList(references=[
            ExtractedReference(reference_text="§ 3 der Leuchtturmverordnung", reference_type="legal_section",
                               target_document="灯塔条例"),
            ExtractedReference(reference_text="参见第三条", reference_type="legal_section"),
        ])

    [found] = detect_references(text, "Betrieb.md", method="llm", llm_extract=extract)
    assert found.original_text == "§ 3 der Leuchtturmverordnung" and text[found.start:found.end] == found.original_text
    assert found.book != "灯塔条例" and "灯塔" not in found.target


# ---- whole runs in their own process ----------------------------------------------------------------------
def _run(tmp_path, demo_db, url: str, breaker: int = BREAKER) -> subprocess.CompletedProcess:
    env = {**os.environ, "LLM_PROVIDER": "auto", "OLLAMA_BASE_URL": url, "OLLAMA_MODEL": MODEL,
           "OLLAMA_FALLBACK_MODEL": MODEL, "OLLAMA_TIMEOUT_S": "1", "OLLAMA_CALL_DEADLINE_S": "2",
           "OLLAMA_MAX_RETRIES": "1", "LLM_CONCURRENCY": "1", "LLM_BREAKER_FAILURES": str(breaker)}
    command = [sys.executable, "-m", "rabbithole_lab.cli.main", "--env-file", "none", "research", QUESTION,
               "--kb", str(DEMO_KB), "--db", str(demo_db), "--sessions", str(tmp_path / "s.sqlite"), "--no-progress",
               "--no-hitl", "--out", str(tmp_path / "report")]
    # the timeout only guards against a hang (before, a trickling server kept the process alive for good)
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("behaviour", ["trickling", "hanging"])
def test_a_run_against_a_server_that_never_answers_exits_with_its_code(tmp_path, demo_db, behaviour):
    with OllamaDouble(behaviour="good") as server:
        server.behaviour = behaviour  # the probe saw the model; every chat call now stalls
        run = _run(tmp_path, demo_db, server.url)
        asked = server.chat_requests
    assert run.returncode == 3, run.stderr[-2000:]
    assert "Resume with: rabbithole research --resume" in run.stderr and "Traceback" not in run.stderr
    assert asked <= 2  # the first step's two attempts; the run stopped there


def test_a_run_against_a_server_answering_the_wrong_schema_is_bounded_and_says_so(tmp_path, demo_db):
    with OllamaDouble(behaviour="wrong_shape") as server:
        run = _run(tmp_path, demo_db, server.url)
        asked = server.chat_requests
    assert run.returncode == 0, run.stderr[-2000:]
    assert asked == BREAKER * 2
    report = json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8"))["report"]
    assert report["answer"].strip()
    assert sum("Circuit breaker" in w for w in report["metadata"]["warnings"]) == 1
    assert "Circuit breaker" in (tmp_path / "report" / "report.md").read_text(encoding="utf-8")


def test_a_model_writing_chinese_leaves_no_chinese_in_the_report(tmp_path, demo_db):
    with OllamaDouble(behaviour="chinese") as server:
        run = _run(tmp_path, demo_db, server.url, breaker=1000)  # every step asks the model
        steps = set(server.steps)
    assert run.returncode == 0, run.stderr[-2000:]
    assert {"decide_reference", "summarize_task", "extract_references"} & steps  # the model was asked for them
    for name in ("report.json", "report.md", "report.html"):
        text = (tmp_path / "report" / name).read_text(encoding="utf-8")
        assert CHINESE_TEXT[:6] not in text and not any("\u4e00" <= ch <= "\u9fff" for ch in text), name
