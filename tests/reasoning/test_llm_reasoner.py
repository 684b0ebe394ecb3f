"""The LLM reasoner through LangChain's fake chat models: parsing, retries, fallback, language."""

from __future__ import annotations

import json
import socket

import pytest

from rabbithole_lab import prompts
from rabbithole_lab.reasoning.base import FoundProvision, ReasonerUnavailableError, SynthesisInput
from rabbithole_lab.reasoning.llm.llm_reasoner import LLMError, LLMReasoner
from rabbithole_lab.reasoning.llm.prompt_inputs import fit_prompt
from rabbithole_lab.records import ChunkWithInfo, VectorResult
from rabbithole_lab.settings import load_settings
from tests.scripted_fake import ScriptedFakeChatModel, default_script


def reasoner(script: dict, fallback: dict | None = None, retries: int = 1) -> LLMReasoner:
    primary = ScriptedFakeChatModel(script=script)
    backup = ScriptedFakeChatModel(script=fallback) if fallback is not None else None
    return LLMReasoner(primary, backup, max_retries=retries, backoff_s=0.0)


PASSAGE = VectorResult(chunk_id="c1", text="Der Grenzwert beträgt 20 Millisievert im Kalenderjahr. Sonst nichts.",
                       doc="QStrG.pdf", collection="Recht", page_start=3, page_end=3, section="§ 12")


def test_structured_output_strips_think_blocks_and_code_fences():
    answer = '<think>lange Überlegung {"x": 1}</think>\n```json\n{"queries": ["Grenzwerte Quantenstrahlung"]}\n```'
    r = reasoner({"hitl_queries": answer})
    queries = r.hitl_queries("Welche Grenzwerte?", 0, [], [], [], "de", 3)
    assert queries[0] == "Welche Grenzwerte?"  # iteration 0 always keeps the original question
    assert "Grenzwerte Quantenstrahlung" in queries
    assert r.calls == 1 and r.tokens > 0


def test_malformed_json_falls_back_to_the_default_with_a_warning():
    r = reasoner({"analyze_retrieval": "Das ist kein JSON."})
    analysis = r.analyze_retrieval("Welche Grenzwerte?", [PASSAGE], "de")
    assert analysis.coverage_score == 0.0 and analysis.knowledge_gaps == []
    warnings = r.drain_warnings()
    assert len(warnings) == 1 and "analyze_retrieval" in warnings[0]
    assert r.calls == 2  # one retry before giving up
    assert r.drain_warnings() == []


def test_schema_violations_count_as_unparseable():
    r = reasoner({"assess_quality": json.dumps({"factual_accuracy": 900})})
    assessment = r.assess_quality("q", "a", [], "de")
    assert assessment.overall_score == 0
    assert r.drain_warnings()


def test_a_timeout_is_retried_and_the_second_answer_used():
    script = {"follow_up_questions": [TimeoutError("read timed out"),
                                      json.dumps({"questions": ["Welche Tätigkeit ist gemeint?"]})]}
    r = reasoner(script)
    from rabbithole_lab.schemas import RetrievalAnalysis

    questions = r.follow_up_questions("Welche Grenzwerte?", RetrievalAnalysis(), [PASSAGE], "de", 3)
    assert questions == ["Welche Tätigkeit ist gemeint?"]
    assert r.calls == 2


def test_the_fallback_model_answers_when_the_primary_keeps_failing():
    r = reasoner({"hitl_context_summary": ConnectionError("primary down")},
                 fallback={"hitl_context_summary": json.dumps({"summary": "Der Nutzer fragt nach Grenzwerten."})})
    assert r.hitl_context_summary("q", [], [], "de") == "Der Nutzer fragt nach Grenzwerten."
    assert r.calls == 3  # primary twice, fallback once


def test_no_reachable_model_raises_reasoner_unavailable():
    r = reasoner({"synthesize": ConnectionRefusedError("connection refused")},
                 fallback={"synthesize": ConnectionRefusedError("connection refused")})
    with pytest.raises(ReasonerUnavailableError, match="could not be reached"):
        r.synthesize(SynthesisInput(anchor="q", language="de"))


def test_a_wrong_language_answer_is_retried_once_with_the_enforcement_suffix():
    english = json.dumps({"summary": "The user asks about the dose limits that apply to workers."})
    german = json.dumps({"summary": "Der Nutzer fragt nach den Dosisgrenzwerten für Beschäftigte."})
    model = ScriptedFakeChatModel(script={"hitl_context_summary": [english, german]})
    r = LLMReasoner(model, max_retries=0, backoff_s=0.0)
    summary = r.hitl_context_summary("Welche Grenzwerte gelten?", [], [], "de")
    assert summary.startswith("Der Nutzer")
    assert "### Language" in model.prompts_seen[-1] and "Deutsch" in model.prompts_seen[-1]
    assert r.drain_warnings() == []


def test_a_persistently_wrong_language_is_kept_with_a_warning():
    english = json.dumps({"summary": "The user asks about the dose limits that apply to workers."})
    r = LLMReasoner(ScriptedFakeChatModel(script={"hitl_context_summary": english}), max_retries=0, backoff_s=0.0)
    assert r.hitl_context_summary("Welche Grenzwerte gelten?", [], [], "de").startswith("The user")
    assert any("not in Deutsch" in w for w in r.drain_warnings())


def test_prompt_size_guard_shortens_the_largest_input_and_keeps_task_rules_and_output_format():
    model = ScriptedFakeChatModel(script=default_script("de"))
    r = LLMReasoner(model, max_retries=0, max_prompt_chars=2000)
    long_chunk = PASSAGE.model_copy(update={"text": "Der Grenzwert beträgt 20 Millisievert. " * 400 + "SCHLUSSWORT"})
    r.extract_info(long_chunk, "Welche Grenzwerte gelten?", "Grenzwerte nennen", "de")
    prompt = model.prompts_seen[-1]
    assert len(prompt) <= 2000
    assert any("safe context" in w for w in r.drain_warnings())
    # the template is whole: task, rules and output format after the shortened passage
    for heading in ("### Task", "### Input", "### Rules", "### Output format", '"preserved_quotes"'):
        assert heading in prompt, heading
    assert prompt.index("### Rules") > prompt.index("Der Grenzwert")
    # the passage (the largest input) was cut, with a mark, inside its fence; the small inputs are whole
    assert "SCHLUSSWORT" not in prompt and "[…]" in prompt
    assert prompt.count(prompts.QUOTED_OPEN) == 1 and prompt.count(prompts.QUOTED_CLOSE) == 1
    assert prompt.index(prompts.QUOTED_CLOSE) > prompt.index("[…]")
    assert "Welche Grenzwerte gelten?" in prompt and "Grenzwerte nennen" in prompt


def test_fit_prompt_cuts_the_largest_input_first_and_then_the_next():
    template = "### Task\nT\n### Input\n{a}\n{b}\n### Rules\nR\n### Output format\n{{}}"
    fitted = fit_prompt(template, {"a": "x" * 500, "b": "y" * 100}, 300)
    assert len(fitted) <= 300 and fitted.endswith("### Rules\nR\n### Output format\n{}")
    assert "y" * 100 in fitted and fitted.count("x") < 500  # only the largest had to give
    both = fit_prompt(template, {"a": "x" * 500, "b": "y" * 400}, 200)
    assert len(both) <= 200 and both.count("x") < 500 and both.count("y") < 400
    assert fit_prompt(template, {"a": "kurz", "b": "auch"}, 300) == template.format(a="kurz", b="auch")


def test_every_step_works_with_the_default_script():
    model = ScriptedFakeChatModel(script=default_script("de"))
    r = LLMReasoner(model, max_retries=0)
    info = r.extract_info(PASSAGE, "Welche Grenzwerte?", "Grenzwerte", "de")
    assert "20 Millisievert" in info.extracted_info and info.preserved_quotes[0].document == "QStrG.pdf"
    finding = ChunkWithInfo(chunk_text=PASSAGE.text, extracted_info=info.extracted_info, document="QStrG.pdf", page=3)
    assert r.summarize_task("t", "q", [finding], "de").relevance_score == 0.8
    assert r.score_relevance("q", finding, "de").score == 0.9
    out = r.synthesize(SynthesisInput(anchor="Welche Grenzwerte?", language="de", primary=[finding]))
    assert "[QStrG.pdf, S. 3]" in out.answer
    assert r.generate_todo("q", "", [], [], "de", 3).tasks
    # the model is shown what round 1 found and what it cites, to name in its tasks
    r.generate_todo("q", "", [], [], "de", 3, found=(FoundProvision("§ 12 QStrG", cites=("§ 6 QStrV",)),))
    assert "§ 12 QStrG -> § 6 QStrV" in model.prompts_seen[-1]
    assert r.decide_remediation("q", r.assess_quality("q", out.answer, [finding], "de"), 375, "de").retry
    assert r.calls >= 7


def test_from_settings_with_a_refused_port_raises_a_clear_error():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = load_settings(env_file=None, ollama={"base_url": f"http://127.0.0.1:{port}", "max_retries": 0,
                                                    "timeout_s": 2.0})
    r = LLMReasoner.from_settings(settings)
    r.backoff_s = 0.0
    with pytest.raises(ReasonerUnavailableError):
        r.hitl_queries("Welche Grenzwerte?", 0, [], [], [], "de", 3)
    assert not isinstance(ReasonerUnavailableError("x"), LLMError)


def test_ollama_models_decode_against_the_json_schema_through_langchain_structured_output():
    from rabbithole_lab.reasoning.llm.llm_answers import structured_model
    from rabbithole_lab.schemas import SearchQueries

    settings = load_settings(env_file=None)
    ollama = LLMReasoner.from_settings(settings).chat_model
    structured = structured_model(ollama, SearchQueries)
    binding = structured.first.steps__["raw"]  # with_structured_output(method="json_schema", include_raw=True)
    assert binding.kwargs["format"]["properties"]["queries"]["type"] == "array"
    fake = ScriptedFakeChatModel()
    assert structured_model(fake, SearchQueries) is fake  # no structured output: the schema is in the prompt


def test_a_quote_the_model_extracts_cites_the_page_where_it_starts():
    text = ("§ 7 Pflichten\n(1) Der Betreiber meldet jeden Vorfall.\n"
            "(2) Die Meldung erfolgt binnen drei Tagen schriftlich.")
    chunk = VectorResult(chunk_id="c", text=text, doc="X.pdf", collection="c", page_start=4, page_end=5,
                         page_map=f"0:4,{text.index('(2)')}:5")
    answer = json.dumps({"extracted_info": "Meldung binnen drei Tagen.", "preserved_quotes": [
        {"quote": "Die Meldung erfolgt binnen drei Tagen schriftlich.", "document": "X.pdf", "page": 4},
        {"quote": "Ein Satz, der nicht im Text steht.", "page": 4}]})
    reasoner = LLMReasoner(ScriptedFakeChatModel(script={"extract_info": answer}), max_retries=0)
    info = reasoner.extract_info(chunk, "Wann ist zu melden?", "Wann ist zu melden?", "de")
    assert [q.page for q in info.preserved_quotes] == [5, 4]  # corrected from the text; unknown wording kept


def test_the_fallback_plays_every_role_with_methods_of_its_own():
    """Each step of every role is a method of the wrapper (a type checker follows it), not a name looked up at
    run time; a step whose model answer is unusable is answered by the extractive reasoner."""
    from rabbithole_lab.reasoning import base
    from rabbithole_lab.reasoning.extractive.extractive_reasoner import ExtractiveReasoner
    from rabbithole_lab.reasoning.fallback import ExtractiveFallback

    roles = (base.Clarifier, base.Planner, base.Extractor, base.Judge, base.Synthesiser)
    steps = {name for role in roles for name, value in vars(role).items()
             if callable(value) and not name.startswith("_")}
    assert {"hitl_queries", "generate_todo", "extract_info", "score_relevance", "synthesize"} <= steps
    assert not hasattr(ExtractiveFallback, "__getattr__")
    assert all(name in vars(ExtractiveFallback) for name in steps), steps - set(vars(ExtractiveFallback))

    class Stub:  # an embedder is not needed for the step asked here
        name, backend, languages = "stub", "stub", ("*",)

    model = ScriptedFakeChatModel(script={"research_queries": "not json at all"})
    wrapper = ExtractiveFallback(LLMReasoner(model, max_retries=0, backoff_s=0.0), ExtractiveReasoner(Stub()))
    assert isinstance(wrapper, base.Reasoner)
    queries = wrapper.research_queries("Welche Grenzwerte gelten?", "", ["Grenzwerte"], "de")
    assert queries and any("unusable" in warning for warning in wrapper.drain_warnings())
