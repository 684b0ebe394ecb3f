"""The LLM reasoner: prompts from prompts.py through any LangChain chat model (Ollama by default).

Structured output is parsed from the model's JSON (qwen3 <think> blocks are stripped), validated
with Pydantic, retried with exponential backoff and then tried on the fallback model. An answer that
stays unparseable yields the step's default and a warning; a model that cannot be reached at all
raises `ReasonerUnavailableError` so the graph stops with a resumable checkpoint. Text outputs are
checked for the requested language and retried once with a stronger instruction. Calls and
approximate tokens are counted per instance.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from rabbithole_lab import prompts
from rabbithole_lab.rabbithole.gate import GateInput
from rabbithole_lab.reasoning.base import (
    ReasonerInfo,
    ReasonerUnavailableError,
    SynthesisInput,
    citation_label,
)
from rabbithole_lab.reasoning.language import detect_language, language_name
from rabbithole_lab.records import (
    ChunkWithInfo,
    ContextSummary,
    ExtractedReferenceList,
    FollowUpQuestions,
    InfoExtractionWithQuotes,
    QualityAssessment,
    ReferenceDecision,
    RelevanceScore,
    RemediationDecision,
    RetrievalAnalysis,
    SearchQueries,
    SynthesisOutput,
    TaskSummary,
    TodoPlan,
    VectorResult,
)
from rabbithole_lab.settings import Settings

logger = logging.getLogger(__name__)

Model = TypeVar("Model", bound=BaseModel)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
CHARS_PER_TOKEN = 4  # documented estimate used for the safe-context guard and token counts
PASSAGE_CHARS = 1200


class LLMError(RuntimeError):
    """The model answered, but not with usable JSON, after retries and fallback."""


def parse_json_answer(text: str, schema: type[Model]) -> Model:
    cleaned = _THINK.sub("", text).strip()
    cleaned = re.sub(r"^```(?:json)?|```$", "", cleaned.strip(), flags=re.MULTILINE).strip()
    match = _JSON_OBJECT.search(cleaned)
    if not match:
        raise ValueError(f"no JSON object in the answer: {cleaned[:80]!r}")
    return schema.model_validate(json.loads(match.group(0)))


def _text_fields(value: object) -> str:
    """All human-readable strings of a structured answer (for the language check)."""
    if isinstance(value, BaseModel):
        return _text_fields(value.model_dump())
    if isinstance(value, dict):
        return " ".join(_text_fields(v) for k, v in value.items() if k not in ("quote", "sources"))
    if isinstance(value, list):
        return " ".join(_text_fields(v) for v in value)
    return value if isinstance(value, str) else ""


def _passages(passages: list[VectorResult], limit: int = 9) -> str:
    return "\n".join(
        f"[{p.doc}, p. {p.page_start}] {p.section} {' '.join(p.text.split())[:PASSAGE_CHARS]}" for p in passages[:limit]
    ) or "-"


def _findings(findings: list[ChunkWithInfo], language: str) -> str:
    return "\n".join(
        f"- ({f.tier}) {citation_label(f.document, f.page, language)} {f.extracted_info or f.chunk_text[:PASSAGE_CHARS]}"
        for f in findings
    ) or "-"


class LLMReasoner:
    """Reasoning steps through a chat model; `chat_model` is any LangChain BaseChatModel."""

    def __init__(self, chat_model, fallback_model=None, max_retries: int = 2, backoff_s: float = 0.5,
                 max_prompt_chars: int | None = None, info: ReasonerInfo | None = None):
        self.chat_model = chat_model
        self.fallback_model = fallback_model
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_prompt_chars = max_prompt_chars
        self.info = info or ReasonerInfo("ollama", getattr(chat_model, "model", None), "chat model given")
        self.calls = 0
        self.tokens = 0
        self._warnings: list[str] = []
        self._lock = threading.Lock()

    @property
    def llm_calls(self) -> int:
        return self.calls

    @classmethod
    def from_settings(cls, settings: Settings, model: str | None = None, reason: str = "") -> LLMReasoner:
        from langchain_ollama import ChatOllama

        def build(name: str):
            return ChatOllama(model=name, base_url=settings.ollama.base_url, num_ctx=settings.ollama.num_ctx,
                              temperature=0, reasoning=False, client_kwargs={"timeout": settings.ollama.timeout_s})

        primary = model or settings.ollama.model
        fallback = settings.ollama.fallback_model if settings.ollama.fallback_model != primary else None
        safe_chars = int(settings.ollama.num_ctx * settings.ollama.safe_limit * CHARS_PER_TOKEN)
        info = ReasonerInfo("ollama", primary, reason or f"Ollama at {settings.ollama.base_url}")
        return cls(build(primary), build(fallback) if fallback else None, settings.ollama.max_retries,
                   max_prompt_chars=safe_chars, info=info)

    def drain_warnings(self) -> list[str]:
        with self._lock:
            out, self._warnings = self._warnings, []
        return out

    def _warn(self, message: str) -> None:
        logger.warning(message)
        with self._lock:
            self._warnings.append(message)

    # ---- the one way to ask ----------------------------------------------------------------------
    def structured(self, prompt: str, schema: type[Model]) -> Model:
        """Ask for JSON matching `schema`. Raises LLMError (answers unusable) or
        ReasonerUnavailableError (no model could be reached)."""
        if self.max_prompt_chars and len(prompt) > self.max_prompt_chars:
            self._warn(f"Prompt of {len(prompt)} characters exceeds the safe context "
                       f"({self.max_prompt_chars}); it was truncated")
            prompt = prompt[: self.max_prompt_chars]
        errors: list[str] = []
        answered = False
        for model in [m for m in (self.chat_model, self.fallback_model) if m is not None]:
            for attempt in range(self.max_retries + 1):
                try:
                    with self._lock:
                        self.calls += 1
                        self.tokens += len(prompt) // CHARS_PER_TOKEN
                    answer = model.invoke(prompt, **_schema_kwargs(model, schema))
                    answered = True
                    content = answer.content if hasattr(answer, "content") else str(answer)
                    with self._lock:
                        self.tokens += len(content) // CHARS_PER_TOKEN
                    return parse_json_answer(content, schema)
                except (ValueError, ValidationError, json.JSONDecodeError) as exc:
                    errors.append(f"unparseable answer: {exc}")
                except Exception as exc:  # timeouts, refused connections, server errors
                    errors.append(f"{type(exc).__name__}: {exc}")
                if attempt < self.max_retries:
                    time.sleep(self.backoff_s * (2**attempt))
        if not answered:
            raise ReasonerUnavailableError("the language model could not be reached: " + "; ".join(errors[-2:]))
        raise LLMError("; ".join(errors[-3:]))

    def _ask(self, step: str, prompt: str, schema: type[Model], default: Model, language: str | None = None) -> Model:
        """Structured answer with defaults on garbage and one retry on a wrong language."""
        try:
            answer = self.structured(prompt, schema)
        except LLMError as exc:
            self._warn(f"{step}: unusable model output, default used ({exc})")
            return default
        if language:
            text = _text_fields(answer)
            if len(text) >= 20 and detect_language(text, language) != language:
                stronger = prompt + prompts.LANGUAGE_ENFORCEMENT_SUFFIX.format(language=language_name(language))
                try:
                    retried = self.structured(stronger, schema)
                except LLMError:
                    retried = None
                if retried is not None and detect_language(_text_fields(retried), language) == language:
                    return retried
                self._warn(f"{step}: the answer is not in {language_name(language)} after one retry")
                return retried or answer
        return answer

    # ---- Phase 1 ----------------------------------------------------------------------------------
    def hitl_queries(self, query, iteration, conversation, gaps, concepts, language, count):
        prompt = prompts.HITL_QUERIES_PROMPT.format(
            count=count, language=language_name(language), query=query, iteration=iteration,
            conversation=_dialogue(conversation), gaps=", ".join(gaps) or "-")
        answer = self._ask("hitl_queries", prompt, SearchQueries, SearchQueries(queries=[query]), language)
        queries = [q for q in answer.queries if q.strip()]
        if iteration == 0 and query not in queries:
            queries.insert(0, query)
        return queries[:count] or [query]

    def analyze_retrieval(self, query, passages, language):
        prompt = prompts.RETRIEVAL_ANALYSIS_PROMPT.format(language=language_name(language), query=query,
                                                          passages=_passages(passages))
        return self._ask("analyze_retrieval", prompt, RetrievalAnalysis, RetrievalAnalysis(), language)

    def follow_up_questions(self, query, analysis, passages, language, count):
        prompt = prompts.FOLLOW_UP_QUESTIONS_PROMPT.format(
            count=count, language=language_name(language), query=query,
            concepts=", ".join(analysis.key_concepts) or "-", gaps=", ".join(analysis.knowledge_gaps) or "-",
            context=_passages(passages, 4)[:3000])
        answer = self._ask("follow_up_questions", prompt, FollowUpQuestions, FollowUpQuestions(), language)
        return [q for q in answer.questions if q.strip()][:count]

    def hitl_context_summary(self, query, conversation, concepts, language):
        prompt = prompts.HITL_CONTEXT_SUMMARY_PROMPT.format(
            language=language_name(language), query=query, conversation=_dialogue(conversation),
            concepts=", ".join(concepts) or "-")
        return self._ask("hitl_context_summary", prompt, ContextSummary, ContextSummary(summary=query), language).summary

    def research_queries(self, query, summary, concepts, language):
        prompt = prompts.RESEARCH_QUERIES_PROMPT.format(language=language_name(language), query=query,
                                                        summary=summary or "-", concepts=", ".join(concepts) or "-")
        answer = self._ask("research_queries", prompt, SearchQueries, SearchQueries(queries=[query]), language)
        return [q for q in answer.queries if q.strip()][:5] or [query]

    # ---- Phase 2 ----------------------------------------------------------------------------------
    def generate_todo(self, query, summary, queries, concepts, language, count):
        prompt = prompts.TODO_GENERATION_PROMPT.format(count=count, language=language_name(language), query=query,
                                                       summary=summary or "-", queries="; ".join(queries) or "-")
        return self._ask("generate_todo", prompt, TodoPlan, TodoPlan(), language)

    # ---- Phase 3 ----------------------------------------------------------------------------------
    def task_search_queries(self, task, anchor, concepts, language):
        prompt = prompts.TASK_SEARCH_QUERIES_PROMPT.format(language=language_name(language), task=task,
                                                           anchor=anchor, concepts=", ".join(concepts) or "-")
        answer = self._ask("task_search_queries", prompt, SearchQueries, SearchQueries(queries=[task]), language)
        return [q for q in answer.queries if q.strip()][:2] or [task]

    def extract_info(self, chunk, anchor, task, language):
        prompt = prompts.INFO_EXTRACTION_WITH_QUOTES_PROMPT.format(
            language=language_name(language), anchor=anchor, task=task, document=chunk.doc,
            page=chunk.page_start, chunk=chunk.text)
        default = InfoExtractionWithQuotes(extracted_info=" ".join(chunk.text.split())[:600])
        answer = self._ask("extract_info", prompt, InfoExtractionWithQuotes, default, language)
        for quote in answer.preserved_quotes:
            quote.document = quote.document or chunk.doc
            quote.page = quote.page or chunk.page_start
        return answer

    def extract_references(self, text: str) -> ExtractedReferenceList:
        return self.structured(prompts.REFERENCE_EXTRACTION_PROMPT.format(text=text), ExtractedReferenceList)

    def decide_reference(self, item: GateInput, anchor: str, language: str) -> ReferenceDecision:
        prompt = prompts.REFERENCE_DECISION_PROMPT.format(
            language=language_name(language),
            anchor=anchor,
            reference=item.reference.original_text,
            reference_type=item.reference.type,
            document=item.document,
            window=item.window,
            target_title=item.target_title or "-",
        )
        return self.structured(prompt, ReferenceDecision)  # errors reach the gate, which then follows

    def summarize_task(self, task, anchor, findings, language):
        quotes = "\n".join(f"- \"{q.quote}\" [{q.document}, p. {q.page}]" for f in findings for q in f.preserved_quotes)
        prompt = prompts.TASK_SUMMARY_PROMPT.format(language=language_name(language), anchor=anchor, task=task,
                                                    findings=_findings(findings, language), quotes=quotes or "-")
        return self._ask("summarize_task", prompt, TaskSummary, TaskSummary(), language)

    def score_relevance(self, anchor, finding, language):
        prompt = prompts.RELEVANCE_SCORING_PROMPT.format(
            language=language_name(language), anchor=anchor, document=finding.document,
            text=(finding.extracted_info or finding.chunk_text)[:PASSAGE_CHARS * 2])
        return self._ask("score_relevance", prompt, RelevanceScore,
                         RelevanceScore(score=finding.relevance_score, reason="default"), language)

    # ---- Phase 4 ----------------------------------------------------------------------------------
    def synthesize(self, request: SynthesisInput) -> SynthesisOutput:
        language = request.language
        quotes = "\n".join(f"- \"{q.quote}\" [{q.document}, p. {q.page}]" for q in request.quotes)
        summaries = "\n".join(f"- {s.get('task', '')}: {s.get('summary', '')}" for s in request.task_summaries)
        prompt = prompts.SYNTHESIS_PROMPT.format(
            language=language_name(language), anchor=request.anchor, hitl_summary=request.hitl_summary or "-",
            primary=_findings(request.primary, language), secondary=_findings(request.secondary, language),
            tertiary=_findings(request.tertiary, language), quotes=quotes or "-", task_summaries=summaries or "-",
            remediation=f"Rewrite instructions: {request.remediation}" if request.remediation else "")
        return self._ask("synthesize", prompt, SynthesisOutput, SynthesisOutput(), language)

    def assess_quality(self, query, answer, sources, language):
        listing = "\n".join(f"- {citation_label(s.document, s.page, language)}" for s in sources) or "-"
        prompt = prompts.QUALITY_ASSESSMENT_PROMPT.format(language=language_name(language), query=query,
                                                          answer=answer, sources=listing)
        return self._ask("assess_quality", prompt, QualityAssessment, QualityAssessment(), language)

    def decide_remediation(self, query, assessment, threshold, language):
        prompt = prompts.QUALITY_REMEDIATION_PROMPT.format(
            language=language_name(language), query=query, score=assessment.overall_score, threshold=threshold,
            issues="; ".join(assessment.issues_found) or "-")
        return self._ask("decide_remediation", prompt, RemediationDecision, RemediationDecision(), language)


def _schema_kwargs(model, schema: type[BaseModel]) -> dict:
    """Ollama constrains decoding to the JSON schema; other chat models get the schema in the prompt."""
    if getattr(model, "_llm_type", "") == "chat-ollama":
        return {"format": schema.model_json_schema()}
    return {}


def _dialogue(conversation: list[dict]) -> str:
    return "\n".join(f"{turn.get('role')}: {turn.get('content')}" for turn in conversation) or "-"
