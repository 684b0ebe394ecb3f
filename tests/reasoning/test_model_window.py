"""Every call is sized to the model it meets: the window is read from Ollama (`/api/show`) and capped by
OLLAMA_NUM_CTX, sent as num_ctx with every call, and no prompt the product sends is cut by the server; no
more requests go out at once than the server answers (OLLAMA_NUM_PARALLEL). Proven against the Ollama
double (tests/ollama_double.py), which truncates and queues as Ollama does."""

from __future__ import annotations

import json

import pytest

from rabbithole_lab.cli.main import main
from rabbithole_lab.evidence.citation_format import citations_in
from rabbithole_lab.messages.reasons import notice_text
from rabbithole_lab.reasoning.llm.model_window import read_model_window
from rabbithole_lab.settings import load_settings
from tests.ollama_double import MODEL, OllamaDouble

# written for these tests: a long German regulation, so that the research context outgrows a small window
TOPICS = ["Kesselprüfung", "Druckbehälter", "Sicherheitsventil", "Wartungsbuch", "Prüfintervall", "Sachkundige",
          "Mängelanzeige", "Stilllegung", "Wiederinbetriebnahme", "Aufzeichnungen", "Schulung", "Aufsicht"]
SECTION = ("§ {n} {topic}\n(1) Der Betreiber einer Dampfkesselanlage hat die {topic} nach den Regeln dieser "
           "Verordnung durchzuführen und jede {topic} mit Datum, Prüfer und Ergebnis im Betriebsbuch der Anlage "
           "zu vermerken. (2) Die zuständige Behörde kann verlangen, dass die {topic} durch einen amtlich "
           "anerkannten Sachverständigen wiederholt wird, wenn Zweifel an der ordnungsgemäßen Durchführung "
           "bestehen. (3) Wer die {topic} unterlässt, darf die Anlage nicht weiter betreiben, bis die Prüfung "
           "nachgeholt und das Ergebnis der Behörde mitgeteilt ist; das gilt entsprechend für Anlagen, die nur "
           "zeitweise betrieben werden. (4) Die Aufzeichnungen über die {topic} sind zehn Jahre aufzubewahren "
           "und der Behörde auf Verlangen vorzulegen.\n\n")
QUESTION = "Welche Pflichten hat der Betreiber einer Dampfkesselanlage bei Prüfung, Wartung und Aufzeichnung?"


@pytest.fixture(scope="module")
def boiler_kb(tmp_path_factory):
    kb = tmp_path_factory.mktemp("boiler") / "kb"
    folder = kb / "Recht__db_inserted"
    folder.mkdir(parents=True)
    for part, plant in enumerate(("Dampfkesselanlage", "Heißwasseranlage", "Druckluftanlage")):
        text = "".join(SECTION.format(n=n + 1, topic=topic).replace("Dampfkesselanlage", plant)
                       for n, topic in enumerate(TOPICS))
        (folder / f"Dampfkesselverordnung_Teil{part + 1}.md").write_text(text, encoding="utf-8")
    return kb


def _settings(url: str, **ollama):
    return load_settings(env_file=None, ollama={"base_url": url, "model": MODEL, "fallback_model": MODEL, **ollama})


@pytest.mark.parametrize("context_tokens, num_ctx, window", [(8192, 8192, 8192), (32768, 8192, 8192),
                                                             (131072, 131072, 131072), (4096, 8192, 4096),
                                                             (None, 8192, 8192)])
def test_the_window_is_the_smaller_of_the_models_context_and_the_setting(context_tokens, num_ctx, window):
    with OllamaDouble(context_tokens=context_tokens) as server:
        read = read_model_window(_settings(server.url, num_ctx=num_ctx), MODEL)
    assert read.window_tokens == window and read.context_tokens == context_tokens and read.family == "qwen3"
    assert read.prompt_chars < (window - read.answer_tokens) * 3  # sized for dense German text, answer kept free


def test_the_default_window_is_safe_for_a_laptop():
    assert load_settings(env_file=None).ollama.num_ctx == 8192


# a 4k model (a small laptop setup) gets prompts of up to 6,900 tokens from a run sized for a large window
@pytest.mark.parametrize("context_tokens, num_ctx", [(4096, None), (8192, None), (32768, None), (131072, "131072")])
def test_no_prompt_of_a_research_run_is_cut_by_the_server(boiler_kb, tmp_path, monkeypatch, capsys,
                                                          context_tokens, num_ctx):
    with OllamaDouble(context_tokens=context_tokens) as server:
        environment = {"LLM_PROVIDER": "auto", "OLLAMA_BASE_URL": server.url, "OLLAMA_MODEL": MODEL,
                       "OLLAMA_FALLBACK_MODEL": MODEL, "OLLAMA_MAX_RETRIES": "0", "LLM_BREAKER_FAILURES": "1000"}
        if num_ctx:
            environment["OLLAMA_NUM_CTX"] = num_ctx
        for name, value in environment.items():
            monkeypatch.setenv(name, value)
        code = main(["--env-file", "none", "research", QUESTION, "--kb", str(boiler_kb), "--db",
                     str(tmp_path / "db"), "--sessions", str(tmp_path / "s.sqlite"), "--no-progress", "--no-hitl",
                     "--out", str(tmp_path / "r")])
    assert code == 0, capsys.readouterr().err[-2000:]
    steps = {record.step for record in server.records}
    assert {"extract_info", "synthesize"} <= steps  # the model wrote the findings and the answer (maybe in parts)
    window = min(context_tokens, int(num_ctx or 8192))
    assert all(record.num_ctx == window for record in server.records)  # num_ctx with every call
    assert server.truncated == []  # the server cut no prompt
    assert all(record.think is False for record in server.records)  # no thinking text before the JSON
    assert all(isinstance(record.format, dict) and record.format.get("required") for record in server.records)
    largest = max(record.prompt_tokens for record in server.records)
    assert largest > window // 3 or window > 8192  # the prompts fill a small window: the sizing is tested, not idle
    report = json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))["report"]
    assert report["metadata"]["answer_status"] == "cited"


def test_a_context_larger_than_the_window_is_answered_in_parts_that_keep_their_citations(
        boiler_kb, tmp_path, monkeypatch, capsys):
    with OllamaDouble(context_tokens=4096) as server:
        for name, value in {"LLM_PROVIDER": "auto", "OLLAMA_BASE_URL": server.url, "OLLAMA_MODEL": MODEL,
                            "OLLAMA_FALLBACK_MODEL": MODEL, "OLLAMA_MAX_RETRIES": "0",
                            "LLM_BREAKER_FAILURES": "1000"}.items():
            monkeypatch.setenv(name, value)
        code = main(["--env-file", "none", "research", QUESTION, "--kb", str(boiler_kb), "--db",
                     str(tmp_path / "db"), "--sessions", str(tmp_path / "s.sqlite"), "--no-progress", "--no-hitl",
                     "--out", str(tmp_path / "r")])
    assert code == 0, capsys.readouterr().err[-2000:]
    synthesis = [record for record in server.records if record.step == "synthesize"]
    assert len(synthesis) >= 3 and server.truncated == []  # two parts or more and the answer from them
    # the first round (a remediation may write another): its parts, then the answer written from their findings
    final = next(n for n, record in enumerate(synthesis) if n and "Fundstelle [" in record.answer)
    parts = synthesis[:final]
    cited_by_parts = {citation for record in parts for citation in citations_in(json.loads(record.answer)["answer"])}
    assert len({doc for doc, _ in cited_by_parts}) >= 2  # the parts read different documents
    report = json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))["report"]
    assert cited_by_parts <= set(citations_in(report["answer"]))  # every page the parts cite reaches the answer
    assert report["metadata"]["answer_status"] == "cited"


@pytest.mark.parametrize("server_parallel, setting", [(1, 1), (4, 2)])
def test_no_more_requests_go_out_at_once_than_the_server_answers(boiler_kb, tmp_path, monkeypatch, capsys,
                                                                 server_parallel, setting):
    with OllamaDouble(num_parallel=4, answer_delay_s=0.05) as server:
        for name, value in {"LLM_PROVIDER": "auto", "OLLAMA_BASE_URL": server.url, "OLLAMA_MODEL": MODEL,
                            "OLLAMA_FALLBACK_MODEL": MODEL, "LLM_CONCURRENCY": "4",
                            "OLLAMA_NUM_PARALLEL": str(setting), "LLM_BREAKER_FAILURES": "1000"}.items():
            monkeypatch.setenv(name, value)
        code = main(["--env-file", "none", "research", QUESTION, "--kb", str(boiler_kb), "--db",
                     str(tmp_path / "db"), "--sessions", str(tmp_path / "s.sqlite"), "--no-progress", "--no-hitl",
                     "--out", str(tmp_path / "r")])
    assert code == 0, capsys.readouterr().err[-2000:]
    assert server.chat_requests > 10
    assert server.max_in_flight <= setting
    if setting > 1:
        assert server.max_in_flight > 1  # the slots are used, not one at a time


def test_doctor_shows_the_window(monkeypatch, capsys, tmp_path):
    with OllamaDouble(context_tokens=40960) as server:
        for name, value in {"OLLAMA_BASE_URL": server.url, "OLLAMA_MODEL": MODEL, "OLLAMA_FALLBACK_MODEL": MODEL,
                            "OLLAMA_NUM_CTX": "16384"}.items():
            monkeypatch.setenv(name, value)
        main(["--env-file", "none", "doctor", "--db", str(tmp_path / "db")])
    printed = capsys.readouterr().out
    assert "context 40,960 tokens" in printed and "window 16,384 tokens" in printed
    assert "1 request(s) at once" in printed


@pytest.mark.parametrize("behaviour, healthy", [("good", True), ("not_json", False)])
def test_the_smoke_run_shows_timings_json_prompt_sizes_and_invented_citations(boiler_kb, tmp_path, monkeypatch,
                                                                              capsys, behaviour, healthy):
    with OllamaDouble(behaviour=behaviour, context_tokens=8192) as server:
        for name, value in {"OLLAMA_BASE_URL": server.url, "OLLAMA_MODEL": MODEL, "OLLAMA_FALLBACK_MODEL": MODEL,
                            "OLLAMA_MAX_RETRIES": "0", "LLM_BREAKER_FAILURES": "1000"}.items():
            monkeypatch.setenv(name, value)
        code = main(["--env-file", "none", "doctor", "--kb", str(boiler_kb), "--db", str(tmp_path / "db"),
                     "--smoke", QUESTION])
    printed = capsys.readouterr().out
    assert code == (0 if healthy else 1), printed[-3000:]
    assert "window 8,192 tokens" in printed and "synthesize" in printed  # the steps' table
    assert "extract_info" in printed and "/ 14,590" in printed  # each step's largest prompt against the limit
    assert "invented citations: none" in printed or not healthy
    assert ("\nhealthy" in printed) == healthy


def test_the_default_configuration_finishes_a_demo_run_on_a_server_answering_one_request_at_a_time(
        demo_db, tmp_path, monkeypatch, capsys):
    from tests.conftest import DEMO_KB

    with OllamaDouble(num_parallel=1, answer_delay_s=0.02) as server:
        for name, value in {"OLLAMA_BASE_URL": server.url, "OLLAMA_MODEL": MODEL,
                            "OLLAMA_FALLBACK_MODEL": MODEL}.items():  # everything else at its default
            monkeypatch.setenv(name, value)
        code = main(["--env-file", "none", "research", "Welche Grenzwerte gelten für beruflich exponierte Personen?",
                     "--kb", str(DEMO_KB), "--db", str(demo_db), "--sessions", str(tmp_path / "s.sqlite"),
                     "--no-progress", "--no-hitl", "--out", str(tmp_path / "r")])
    assert code == 0, capsys.readouterr().err[-2000:]
    report = json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))["report"]
    warnings = " ".join(notice_text(warning, "en") for warning in report["metadata"]["warnings"])
    assert "no complete answer" not in warnings and "could not be reached" not in warnings  # no timeout
    assert server.max_in_flight == 1 and server.truncated == []


def test_the_smoke_run_without_a_model_says_so(boiler_kb, tmp_path, monkeypatch, capsys):
    with OllamaDouble() as server:
        gone = server.url  # the port is closed once the double stops
    monkeypatch.setenv("OLLAMA_BASE_URL", gone)
    code = main(["--env-file", "none", "doctor", "--kb", str(boiler_kb), "--db", str(tmp_path / "db"), "--smoke"])
    printed = capsys.readouterr().out
    assert code == 1 and "[fail] smoke run: no model answers" in printed
