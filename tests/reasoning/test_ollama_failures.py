"""Ollama failure modes against the Ollama double on loopback (tests/ollama_double.py), through the
real ChatOllama client: each gives a bounded retry, then the extractive reasoner for that step or a clear
error with a resumable session, within a total deadline per call; a run without an answer never exits 0."""

from __future__ import annotations

import json
import logging
import socket

import pytest

from rabbithole_lab.cli.main import main
from rabbithole_lab.messages.catalogue import reasoner_reason
from rabbithole_lab.reasoning.base import ReasonerUnavailableError, SynthesisInput
from rabbithole_lab.reasoning.extractive.extractive_reasoner import ExtractiveReasoner
from rabbithole_lab.reasoning.factory import build_reasoner
from rabbithole_lab.reasoning.fallback import ExtractiveFallback
from rabbithole_lab.reasoning.llm import deadline
from rabbithole_lab.reasoning.llm.provider import choose_provider, probe_ollama
from rabbithole_lab.records import ChunkWithInfo, VectorResult
from rabbithole_lab.settings import load_settings
from tests.conftest import DEMO_KB
from tests.ollama_double import MODEL, OllamaDouble

QUESTION = "Welche Meldepflichten hat der Betreiber einer Quantenanlage nach einem Vorfall?"
RETRIES = 1  # one retry: every failing call is asked twice
PASSAGE = VectorResult(chunk_id="c1", doc="Betrieb.pdf", collection="Recht", page_start=2, page_end=2,
                       section="§ 4", text="§ 4 Meldung\nDer Betreiber meldet jeden Vorfall binnen drei Tagen "
                                           "schriftlich der Aufsichtsbehörde. Die Meldung nennt Ort und Zeit.")


def _settings(url: str, timeout_s: float = 1.0):
    return load_settings(env_file=None, ollama={"base_url": url, "model": MODEL, "fallback_model": MODEL,
                                                "timeout_s": timeout_s, "max_retries": RETRIES,
                                                "probe_timeout_s": 1.0})


@pytest.fixture(scope="module")
def embed(demo_kb):
    return demo_kb.index.embedder


def _reasoner(url: str, embed, timeout_s: float = 1.0) -> ExtractiveFallback:
    reasoner = build_reasoner(_settings(url, timeout_s), embed)
    assert isinstance(reasoner, ExtractiveFallback), "the fake server offers the model: the LLM path runs"
    reasoner.primary.backoff_s = 0.0
    return reasoner


def _closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


# ---- the probe ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("tags", [{"models": "qwen3"}, [1, 2], {"models": [{"size": 3}]}, {"status": "ok"}])
def test_tags_of_the_wrong_shape_give_the_extractive_reasoner_with_a_reason(tags):
    with OllamaDouble(tags=tags) as server:
        choice = choose_provider(_settings(server.url))
    assert choice.provider == "extractive"
    assert server.url in choice.reason
    # the same reason in the reader's language, from the catalogue
    said = reasoner_reason(vars(choice), "de")
    assert server.url in said and ("antwortet nicht" in said or "hat aber weder" in said)


def test_a_probe_that_trickles_is_given_up_within_its_deadline():
    with _TricklingTags() as url:
        status = probe_ollama(load_settings(env_file=None, ollama={"base_url": url, "probe_timeout_s": 0.5}))
    assert not status.reachable and "no complete answer within 1 s" in status.error


class _TricklingTags:
    """A server whose /api/tags sends one byte every 0.1 s and never finishes."""

    def __enter__(self) -> str:
        import threading

        self._stop = threading.Event()
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen()

        def serve() -> None:
            connection, _ = self._listener.accept()
            connection.recv(4096)
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
            while not self._stop.wait(0.1):
                try:
                    connection.sendall(b" ")
                except OSError:
                    break
            connection.close()

        threading.Thread(target=serve, daemon=True).start()
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._listener.close()


# ---- one step: unreachable is a clear error -----------------------------------------------------------
@pytest.mark.parametrize("behaviour", ["hanging", "trickling", "http_500", "wrong_protocol", "dropped"])
def test_a_server_that_does_not_answer_usably_fails_the_step_clearly_after_a_bounded_retry(behaviour, embed, caplog):
    with OllamaDouble(behaviour="good") as server:
        reasoner = _reasoner(server.url, embed)
        server.behaviour = behaviour
        with caplog.at_level(logging.INFO), pytest.raises(ReasonerUnavailableError) as failure:
            reasoner.analyze_retrieval(QUESTION, [PASSAGE], "de")
        asked = server.chat_requests
    assert asked == RETRIES + 1  # bounded: the first try and one retry, then the error
    assert "could not be reached" in str(failure.value)
    if behaviour in ("hanging", "trickling"):  # the call deadline ended each attempt, not the server
        assert "no complete answer within 1 s" in str(failure.value)


def test_a_refused_connection_is_a_clear_error(embed):
    with OllamaDouble() as server:
        reasoner = _reasoner(server.url, embed)
    # the server is gone: the port refuses
    with pytest.raises(ReasonerUnavailableError, match="could not be reached"):
        reasoner.hitl_queries(QUESTION, 0, [], [], [], "de", 3)


def test_waiting_for_a_slow_call_is_reported_while_it_waits(embed, caplog, monkeypatch):
    monkeypatch.setattr(deadline, "WAIT_NOTE_S", 0.3)
    with OllamaDouble() as server:
        reasoner = _reasoner(server.url, embed, timeout_s=1.0)
        server.behaviour = "trickling"
        deadline_log = caplog.at_level(logging.INFO, logger="rabbithole_lab.reasoning.llm.deadline")
        with deadline_log, pytest.raises(ReasonerUnavailableError):
            reasoner.analyze_retrieval(QUESTION, [PASSAGE], "de")
    waits = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Waiting for the language model")]
    assert len(waits) >= 2 and "of at most 1 s" in waits[0]


# ---- one step: garbage is answered by the extractive reasoner ------------------------------------------
@pytest.mark.parametrize("behaviour", ["not_json", "wrong_shape", "english", "chinese"])
def test_an_unusable_answer_is_replaced_by_the_extractive_step(behaviour, embed):
    concepts = ["Meldepflicht", "Betreiber"]
    with OllamaDouble(behaviour=behaviour) as server:
        reasoner = _reasoner(server.url, embed)
        queries = reasoner.hitl_queries(QUESTION, 1, [], ["Fristen"], concepts, "de", 3)
        asked = server.chat_requests
    assert queries == ExtractiveReasoner(embed).hitl_queries(QUESTION, 1, [], ["Fristen"], concepts, "de", 3)
    assert asked == RETRIES + 1 if behaviour in ("not_json", "wrong_shape") else asked == 2  # one language retry
    warnings = reasoner.drain_warnings()
    assert any("hitl_queries" in w and "extractive reasoner answered" in w for w in warnings)


def test_an_unusable_extraction_is_made_from_the_passage(embed):
    with OllamaDouble(behaviour="not_json") as server:
        info = _reasoner(server.url, embed).extract_info(PASSAGE, QUESTION, "Meldepflichten des Betreibers", "de")
    assert "binnen drei Tagen" in info.extracted_info  # the extractive reasoner read the passage itself


def test_a_good_answer_is_used_as_it_is(embed):
    with OllamaDouble() as server:
        reasoner = _reasoner(server.url, embed)
        info = reasoner.extract_info(PASSAGE, QUESTION, "Meldepflichten", "de")
    assert info.preserved_quotes and info.preserved_quotes[0].document == "Betrieb.pdf"
    assert reasoner.drain_warnings() == [] and reasoner.llm_calls == 1


def test_an_empty_synthesis_is_written_by_the_extractive_reasoner(embed):
    finding = ChunkWithInfo(chunk_text=PASSAGE.text, extracted_info="Meldung binnen drei Tagen.",
                            document="Betrieb.pdf", page=2, tier="primary", relevance_score=0.9)
    with OllamaDouble(behaviour="empty_answer") as server:
        reasoner = _reasoner(server.url, embed)
        output = reasoner.synthesize(SynthesisInput(anchor=QUESTION, language="de", primary=[finding]))
    assert output.answer.strip() and "Betrieb.pdf" in output.answer
    assert any("empty" in w for w in reasoner.drain_warnings())


# ---- whole runs through the CLI ------------------------------------------------------------------------
def _cli(tmp_path, demo_db, url: str, *extra: str) -> list[str]:
    return ["--env-file", "none", "research", "--kb", str(DEMO_KB), "--db", str(demo_db), "--sessions",
            str(tmp_path / "s.sqlite"), "--no-progress", "--no-hitl", *extra]


@pytest.fixture
def ollama_env(monkeypatch):
    def point_at(url: str) -> None:
        for name, value in {"LLM_PROVIDER": "auto", "OLLAMA_BASE_URL": url, "OLLAMA_MODEL": MODEL,
                            "OLLAMA_FALLBACK_MODEL": MODEL, "OLLAMA_TIMEOUT_S": "1", "OLLAMA_MAX_RETRIES": "1",
                            "LLM_CONCURRENCY": "1"}.items():
            monkeypatch.setenv(name, value)

    return point_at


@pytest.mark.parametrize("behaviour", ["not_json", "empty_object"])  # prose instead of JSON, and `{}`
def test_a_model_that_answers_garbage_still_gives_an_answer_and_says_so(tmp_path, demo_db, ollama_env, capsys,
                                                                       behaviour):
    with OllamaDouble(behaviour=behaviour) as server:
        ollama_env(server.url)
        code = main(_cli(tmp_path, demo_db, server.url, QUESTION, "--out", str(tmp_path / "r")))
    printed = capsys.readouterr().out
    assert code == 0 and f"Reasoner: ollama {MODEL}" in printed
    payload = json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))
    assert payload["report"]["answer"].strip()
    warnings = payload["report"]["metadata"]["warnings"]
    assert any("extractive reasoner answered" in w for w in warnings)


def test_ollama_dying_mid_run_stops_with_a_resumable_session(tmp_path, demo_db, ollama_env, capsys):
    with OllamaDouble(behaviour="good") as server:
        ollama_env(server.url)
        server.behaviour = "http_500"  # the probe saw Ollama; every chat call now fails
        code = main(_cli(tmp_path, demo_db, server.url, QUESTION, "--out", str(tmp_path / "r")))
        err = capsys.readouterr().err
        assert code == 3 and "Resume with: rabbithole research --resume" in err
        assert "nicht erreichbar" in err  # the German question gets a German message
        thread_id = err.split("--resume ", 1)[1].split()[0]
        server.behaviour = "good"  # Ollama is back
        code = main(_cli(tmp_path, demo_db, server.url, "--resume", thread_id, "--out", str(tmp_path / "r")))
    assert code == 0
    assert json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))["report"]["answer"].strip()


def test_a_run_that_ends_without_an_answer_does_not_exit_0(tmp_path, demo_db, monkeypatch, capsys):
    monkeypatch.setenv("LLM_PROVIDER", "extractive")
    blank = ExtractiveReasoner.synthesize

    def empty_synthesis(self, request):
        return blank(self, request).model_copy(update={"answer": ""})

    monkeypatch.setattr(ExtractiveReasoner, "synthesize", empty_synthesis)
    code = main(_cli(tmp_path, demo_db, _closed_port_url(), QUESTION, "--out", str(tmp_path / "r")))
    assert code == 1
    assert "without an answer" in capsys.readouterr().err
    assert (tmp_path / "r" / "report.json").is_file()  # what was found is kept


def test_a_host_that_answers_html_is_named_as_not_ollama_not_as_down(tmp_path, demo_db, ollama_env, monkeypatch,
                                                                     capsys, embed):
    """A proxy's login page or another service at OLLAMA_BASE_URL: "start Ollama" would send the user the
    wrong way; the message says the address answers, but not as Ollama."""
    with OllamaDouble(behaviour="good") as server:
        reasoner = _reasoner(server.url, embed)
        server.behaviour = "html"
        assert "not as Ollama" in probe_ollama(_settings(server.url)).error
        with pytest.raises(ReasonerUnavailableError, match="not as Ollama"):
            reasoner.analyze_retrieval(QUESTION, [PASSAGE], "de")
        ollama_env(server.url)
        monkeypatch.setenv("LLM_PROVIDER", "ollama")  # configured, so every chat call meets the page
        code = main(_cli(tmp_path, demo_db, server.url, QUESTION, "--out", str(tmp_path / "r")))
    err = capsys.readouterr().err
    assert code == 3 and "OLLAMA_BASE_URL" in err and "Resume with" in err and "starten Sie Ollama" not in err


def test_a_reply_that_requires_nothing_is_not_sent_and_a_missing_field_is_invalid():
    """The schema sent to the model requires every field, so `{}` cannot pass; a reply without a field is
    read as invalid JSON (retried, then answered by the fallback)."""
    from rabbithole_lab.reasoning.llm.llm_answers import parse_json_answer, required_schema
    from rabbithole_lab.records import ReferenceDecision
    from rabbithole_lab.schemas import TodoAdaptation

    assert set(required_schema(ReferenceDecision)["required"]) == {"follow", "reason"}
    with pytest.raises(ValueError, match="without reason"):
        parse_json_answer('{"follow": true}', ReferenceDecision)
    with pytest.raises(ValueError, match="placeholder"):
        parse_json_answer('{"follow": true, "reason": "-"}', ReferenceDecision)
    # an empty list is an answer ("no change"), not a missing one
    assert parse_json_answer('{"add": [], "close": []}', TodoAdaptation).add == []


def test_placeholder_output_is_retried_then_answered_by_the_fallback_and_said(tmp_path, demo_db, ollama_env, capsys,
                                                                             embed):
    """Schema-valid JSON with "-" in every field (a small model can do that) is no answer: the step retries
    once, then the extractive reasoner answers it, and the report says so; the run never ends with "-"."""
    with OllamaDouble(behaviour="placeholder") as server:
        reasoner = _reasoner(server.url, embed)
        analysis = reasoner.analyze_retrieval(QUESTION, [PASSAGE], "de")
        assert server.chat_requests == RETRIES + 1 and "-" not in analysis.key_concepts
        assert any("extractive reasoner answered" in w for w in reasoner.drain_warnings())
        ollama_env(server.url)
        code = main(_cli(tmp_path, demo_db, server.url, QUESTION, "--out", str(tmp_path / "r")))
    assert code == 0
    report = json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))["report"]
    assert report["answer"].strip() not in ("", "-") and report["sources"]
    assert any("extractive reasoner answered" in w for w in report["metadata"]["warnings"])


REPORTING_RULES = ("§ 4 Meldung\nDer Betreiber einer Quantenanlage meldet jeden Vorfall binnen drei Tagen schriftlich "
                   "der Aufsichtsbehörde. Die Meldung nennt Ort, Zeit und Ursache des Vorfalls.\n\n"
                   "§ 5 Aufbewahrung\nDer Betreiber bewahrt die Meldungen zehn Jahre auf.\n")


@pytest.mark.parametrize("behaviour, code", [("good", 0), ("uncited", 1)])
def test_an_answer_that_cites_no_page_found_is_not_a_success(tmp_path, ollama_env, capsys, behaviour, code):
    kb = tmp_path / "kb"
    (kb / "Recht__db_inserted").mkdir(parents=True)
    (kb / "Recht__db_inserted" / "Betrieb.md").write_text(REPORTING_RULES, encoding="utf-8")  # all German
    command = ["--env-file", "none", "research", "--kb", str(kb), "--sessions", str(tmp_path / "s.sqlite"),
               "--no-progress", "--no-hitl", QUESTION, "--out", str(tmp_path / "r")]
    with OllamaDouble(behaviour=behaviour) as server:
        ollama_env(server.url)
        assert main(command) == code
    printed = capsys.readouterr()
    report = json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))["report"]
    assert report["metadata"]["reasoner"]["provider"] == "ollama"
    assert not any("Circuit breaker" in w for w in report["metadata"]["warnings"])  # the model wrote the answer
    if behaviour == "good":  # the scripted model cites a page it was given
        assert report["metadata"]["answer_status"] == "cited" and "cites no page" not in printed.err
        return
    assert "cites no page" in printed.err
    assert code == 1 and "cites no page" in printed.err
    assert report["metadata"]["answer_status"] == "uncited"  # the report is written, and says what it is worth
    assert not any(source["cited"] for source in report["sources"])
    assert {"key": "answer_uncited", "values": {}} in report["metadata"]["warnings"]
