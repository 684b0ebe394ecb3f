"""The LLM reasoner: prompts from prompts.py through any LangChain chat model (Ollama by default).

Structured output is parsed from the model's JSON (qwen3 <think> blocks are stripped), validated
with Pydantic, retried with exponential backoff and then tried on the fallback model. An answer that
stays unparseable yields the step's default and a warning; a model that cannot be reached at all
raises `ReasonerUnavailableError` so the graph stops with a resumable checkpoint. Text outputs are
checked for the requested language and retried once with a stronger instruction. Calls and
approximate tokens are counted per instance.
"""

from __future__ import annotations

import logging
import threading
import time

from langchain_core.runnables import RunnableLambda
from pydantic import ValidationError

from rabbithole_lab import prompts
from rabbithole_lab.evidence.pages import find_span, quote_pages
from rabbithole_lab.language.detection import language_name, may_show
from rabbithole_lab.reasoning.base import (
    AskedFor,
    ModelHostNotOllamaError,
    ReasonerInfo,
    ReasonerUnavailableError,
    SynthesisInput,
)
from rabbithole_lab.reasoning.dialogue_terms import user_answers
from rabbithole_lab.reasoning.llm.deadline import DeadlineExceeded, call_with_deadline
from rabbithole_lab.reasoning.llm.llm_answers import (
    AskRecord,
    CallLog,
    GivenUp,
    LLMError,
    Model,
    of_shape,
    parse_json_answer,
    structured_model,
    text_fields,
    transport_errors,
    within_deadline,
)
from rabbithole_lab.reasoning.llm.model_window import ModelWindow, read_model_window
from rabbithole_lab.reasoning.llm.prompt_inputs import (
    PASSAGE_CHARS,
    dialogue_text,
    findings_text,
    fit_prompt,
    judged_sources,
    passages_text,
)
from rabbithole_lab.reasoning.llm.synthesis_parts import combined, parts_by_task, synthesis_inputs
from rabbithole_lab.records import CHARS_PER_TOKEN, GateInput, ReferenceDecision
from rabbithole_lab.schemas import (
    AnchorTerms,
    ContextSummary,
    ExtractedReferenceList,
    FollowUpQuestions,
    InfoExtractionWithQuotes,
    QualityAssessment,
    RelevanceScore,
    RemediationDecision,
    RetrievalAnalysis,
    SearchQueries,
    SynthesisOutput,
    TaskAssessment,
    TaskSummary,
    TodoAdaptation,
    TodoPlan,
)
from rabbithole_lab.settings import Settings

logger = logging.getLogger(__name__)

DEFAULT_PROMPT_CHARS = 16_000  # a chat model given without a context size: an 8k-token window of German text
SYNTHESIS_CONTEXT_SHARE = 0.6  # of the prompt; the rest holds instructions, quotes, task summaries


class LLMReasoner:
    """Reasoning steps through a chat model; `chat_model` is any LangChain BaseChatModel."""

    def __init__(self, chat_model, fallback_model=None, max_retries: int = 2, backoff_s: float = 0.5,
                 max_prompt_chars: int | None = None, info: ReasonerInfo | None = None,
                 call_deadline_s: float | None = None, raise_unusable: bool = False,
                 total_deadline_s: float | None = None, parallel_requests: int = 64):
        self.call_deadline_s = call_deadline_s  # one attempt's total time, however slowly the server answers
        self.total_deadline_s = total_deadline_s  # one call's: every attempt, backoff and the fallback model
        self.raise_unusable = raise_unusable
        self.chat_model = chat_model
        self.fallback_model = fallback_model
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_prompt_chars = max_prompt_chars
        # the server answers this many requests at once (OLLAMA_NUM_PARALLEL): more would only queue there, and
        # time out there; here a call waits for a free slot before its deadline starts
        self._server_slots = threading.BoundedSemaphore(parallel_requests)
        self.window: ModelWindow | None = None  # what from_settings read from Ollama: shown by doctor and the UI
        self.call_log = CallLog()  # every step asked: its prompt size, whether the answer was usable, the time
        self.info = info or ReasonerInfo("ollama", getattr(chat_model, "model", None), "chat model given")
        self.calls = 0
        self.tokens = 0
        self._warnings: list[str] = []
        self._lock = threading.Lock()

    @property
    def llm_calls(self) -> int:
        return self.calls

    judges_beyond_search = True

    @property
    def context_chars(self) -> int:
        """The synthesis context: what the safe prompt size leaves after instructions, quotes and the answer."""
        return int((self.max_prompt_chars or DEFAULT_PROMPT_CHARS) * SYNTHESIS_CONTEXT_SHARE)

    @classmethod
    def from_settings(cls, settings: Settings, model: str | None = None, reason: str = "") -> LLMReasoner:
        from langchain_ollama import ChatOllama

        primary = model or settings.ollama.model
        fallback = settings.ollama.fallback_model if settings.ollama.fallback_model != primary else None
        # every call is sized to the smaller window of the two models it may go to (reasoning/llm/model_window.py)
        window = min((read_model_window(settings, name) for name in filter(None, (primary, fallback))),
                     key=lambda candidate: candidate.window_tokens)

        def build(name: str):
            return ChatOllama(model=name, base_url=settings.ollama.base_url, num_ctx=window.window_tokens,
                              temperature=0, reasoning=False, client_kwargs={"timeout": settings.ollama.timeout_s})

        info = ReasonerInfo("ollama", primary, reason or f"Ollama at {settings.ollama.base_url}")
        reasoner = cls(build(primary), build(fallback) if fallback else None, settings.ollama.max_retries,
                       max_prompt_chars=window.prompt_chars, info=info, call_deadline_s=settings.ollama.timeout_s,
                       total_deadline_s=settings.ollama.call_deadline_s,
                       parallel_requests=settings.ollama.num_parallel)
        reasoner.window = window
        logger.info("Model window: %s", window.describe())
        return reasoner

    def drain_warnings(self) -> list[str]:
        with self._lock:
            out, self._warnings = self._warnings, []
        return out

    def _warn(self, message: str) -> None:
        logger.warning(message)
        with self._lock:
            self._warnings.append(message)

    # ---- the one way to ask ----------------------------------------------------------------------
    def _fill(self, template: str, **inputs) -> str:
        """The prompt `template` filled with `inputs`, within the safe context: when it is too long, the
        largest inputs are shortened, never the task, rules or output format the template holds."""
        prompt = template.format(**inputs)
        if not self.max_prompt_chars or len(prompt) <= self.max_prompt_chars:
            return prompt
        fitted = fit_prompt(template, inputs, self.max_prompt_chars)
        self._warn(f"Prompt of {len(prompt)} characters exceeds the safe context ({self.max_prompt_chars}); "
                   f"its largest inputs were shortened to {len(fitted)} characters")
        return fitted

    def structured(self, prompt: str, schema: type[Model]) -> Model:
        """Ask for JSON matching `schema`. Raises LLMError (answers unusable) or
        ReasonerUnavailableError (no model could be reached).

        LangChain does the work: `with_structured_output` where the chat model offers it (Ollama decodes
        against the JSON schema), `with_retry` with exponential backoff for each model, `with_fallbacks`
        to the fallback model. A `<think>` block before the JSON is stripped."""
        call = AskRecord()
        models = [model for model in (self.chat_model, self.fallback_model) if model is not None]
        attempts = [self._attempt(model, schema, call).with_retry(  # an unusable answer is repaired in _ask
            retry_if_exception_type=transport_errors(), stop_after_attempt=self.max_retries + 1,
            wait_exponential_jitter=self.backoff_s > 0,
            exponential_jitter_params={"initial": self.backoff_s, "max": 30 * self.backoff_s} if self.backoff_s > 0
            else None) for model in models]
        runnable = attempts[0].with_fallbacks(attempts[1:]) if len(attempts) > 1 else attempts[0]
        try:
            with self._server_slots:
                if not self.total_deadline_s:
                    return runnable.invoke(prompt)
                # each attempt reports its own wait; this deadline bounds them all, with backoff and fallback
                return call_with_deadline(lambda: runnable.invoke(prompt), self.total_deadline_s,
                                          "the language model (all attempts)", note_waits=False)
        except Exception as exc:
            if isinstance(exc, DeadlineExceeded):
                call.given_up = True
                call.errors.append(f"{type(exc).__name__}: {exc}")
            if not call.answered and call.foreign:
                host = getattr(self.chat_model, "base_url", "") or "the model host"
                raise ModelHostNotOllamaError(f"{host} answered, but not as Ollama (not its JSON: "
                                              f"{call.errors[-1][:120]})") from None
            if not call.answered:
                raise ReasonerUnavailableError("the language model could not be reached: "
                                               + "; ".join(call.errors[-2:] or [str(exc)])) from None
            raise LLMError("; ".join(call.errors[-3:] or [str(exc)])) from None

    def _attempt(self, model, schema: type[Model], call: AskRecord):
        """One model's ask as a runnable: count, call (structured output when offered), parse."""
        structured = structured_model(model, schema)

        def count(prompt: str) -> str:
            if call.given_up:
                raise GivenUp("the call's deadline has passed")
            with self._lock:
                self.calls += 1
                self.tokens += len(prompt) // CHARS_PER_TOKEN
            return prompt

        def ask(prompt: str):
            try:
                return within_deadline(structured, prompt, self.call_deadline_s, model)
            except Exception as exc:  # timeouts, refused connections, server errors, a page that is not Ollama's
                call.failed(exc)
                raise

        def parse(answer) -> Model:
            call.answered = True
            parsed = answer.get("parsed") if isinstance(answer, dict) else None
            message = answer.get("raw") if isinstance(answer, dict) else answer
            content = message.content if hasattr(message, "content") else str(message)
            with self._lock:
                self.tokens += len(str(content)) // CHARS_PER_TOKEN
            try:
                if isinstance(parsed, schema):
                    return of_shape(parsed, schema)
                return parse_json_answer(str(content), schema)
            except (ValueError, ValidationError) as exc:
                call.errors.append(f"unparseable answer: {exc}")
                raise

        return RunnableLambda(count) | RunnableLambda(ask) | RunnableLambda(parse)

    def _ask(self, step: str, prompt: str, schema: type[Model], default: Model, language: str | None = None) -> Model:
        """Structured answer with one retry on a wrong language. An unusable answer (garbage, the wrong shape,
        still the wrong language) gives the default with a warning, or — when this reasoner stands in front
        of a fallback (`raise_unusable`) — raises LLMError so the fallback answers that step."""
        started, outcome = time.monotonic(), "valid"
        try:
            try:
                answer = self.structured(prompt, schema)
            except LLMError as exc:  # once more, told what was wrong; then this step falls back
                outcome = "repaired"
                answer = self.structured(prompt + prompts.JSON_REPAIR_SUFFIX.format(
                    error=prompts.quoted(str(exc)[:400])), schema)
        except LLMError as exc:
            self.call_log.add(step, len(prompt), "unusable", started)
            if self.raise_unusable:
                raise
            self._warn(f"{step}: unusable model output, default used ({exc})")
            return default
        if language:
            text = text_fields(answer)
            if not may_show(text, language):
                stronger = prompt + prompts.LANGUAGE_ENFORCEMENT_SUFFIX.format(language=language_name(language))
                try:
                    retried = self.structured(stronger, schema)
                except LLMError:
                    retried = None
                shown = retried is not None and may_show(text_fields(retried), language)
                self.call_log.add(step, len(prompt), "repaired" if shown else "wrong_language", started)
                if shown:
                    return retried
                if self.raise_unusable:
                    raise LLMError(f"{step}: the answer is not in {language_name(language)} after one retry")
                self._warn(f"{step}: the answer is not in {language_name(language)} after one retry")
                return retried or answer
        self.call_log.add(step, len(prompt), outcome, started)
        return answer

    # ---- Phase 1 ----------------------------------------------------------------------------------
    def hitl_queries(self, query, iteration, conversation, gaps, concepts, language, count):
        prompt = self._fill(
            prompts.HITL_QUERIES_PROMPT,
            count=count, language=language_name(language), query=query, iteration=iteration,
            conversation=dialogue_text(conversation), gaps=", ".join(gaps) or "-")
        answer = self._ask("hitl_queries", prompt, SearchQueries, SearchQueries(queries=[query]), language)
        queries = [q for q in answer.queries if q.strip()]
        if iteration == 0 and query not in queries:
            queries.insert(0, query)
        return queries[:count] or [query]

    def analyze_retrieval(self, query, passages, language):
        prompt = self._fill(prompts.RETRIEVAL_ANALYSIS_PROMPT, language=language_name(language), query=query,
                            passages=passages_text(passages))
        return self._ask("analyze_retrieval", prompt, RetrievalAnalysis, RetrievalAnalysis(), language)

    def follow_up_questions(self, query, analysis, passages, language, count, conversation=None):
        prompt = self._fill(
            prompts.FOLLOW_UP_QUESTIONS_PROMPT,
            count=count, language=language_name(language), query=query,
            dialogue=dialogue_text(conversation or []) or "-",
            concepts=", ".join(analysis.key_concepts) or "-", gaps=", ".join(analysis.knowledge_gaps) or "-",
            context=passages_text(passages, 4)[:3000])
        answer = self._ask("follow_up_questions", prompt, FollowUpQuestions, FollowUpQuestions(), language)
        return [q for q in answer.questions if q.strip()][:count]

    def hitl_context_summary(self, query, conversation, concepts, language):
        prompt = self._fill(
            prompts.HITL_CONTEXT_SUMMARY_PROMPT,
            language=language_name(language), query=query, conversation=dialogue_text(conversation),
            concepts=", ".join(concepts) or "-")
        answer = self._ask("hitl_context_summary", prompt, ContextSummary, ContextSummary(summary=query), language)
        return answer.summary

    def research_queries(self, query, summary, concepts, language):
        prompt = self._fill(prompts.RESEARCH_QUERIES_PROMPT, language=language_name(language), query=query,
                            summary=summary or "-", concepts=", ".join(concepts) or "-")
        answer = self._ask("research_queries", prompt, SearchQueries, SearchQueries(queries=[query]), language)
        return [q for q in answer.queries if q.strip()][:5] or [query]

    def anchor_terms(self, query, conversation, language):
        answers = user_answers(conversation)
        if not answers:
            return AnchorTerms()  # nothing was said: no model call
        prompt = self._fill(prompts.QUERY_ANCHOR_PROMPT, language=language_name(language), query=query,
                            answers=prompts.quoted("\n".join(f"- {answer}" for answer in answers)))
        return self._ask("anchor_terms", prompt, AnchorTerms, AnchorTerms(), language)

    # ---- Phase 2 ----------------------------------------------------------------------------------
    def generate_todo(self, query, summary, queries, concepts, language, count, found=()):
        provisions = "; ".join(f"{p.label}" + (f" -> {', '.join(p.cites)}" if p.cites else "") for p in found)
        prompt = self._fill(prompts.TODO_GENERATION_PROMPT, count=count, language=language_name(language), query=query,
                            summary=summary or "-", queries="; ".join(queries) or "-", found=provisions or "-")
        return self._ask("generate_todo", prompt, TodoPlan, TodoPlan(), language)

    # ---- Phase 3 ----------------------------------------------------------------------------------
    def task_search_queries(self, task, anchor, concepts, language):
        prompt = self._fill(prompts.TASK_SEARCH_QUERIES_PROMPT, language=language_name(language), task=task,
                            anchor=anchor, concepts=", ".join(concepts) or "-")
        answer = self._ask("task_search_queries", prompt, SearchQueries, SearchQueries(queries=[task]), language)
        return [q for q in answer.queries if q.strip()][:2] or [task]

    def corpus_language_queries(self, question: str, corpus_language: str) -> list[str]:
        """Search queries in the documents' language for a question asked in another one."""
        prompt = self._fill(prompts.CORPUS_LANGUAGE_QUERIES_PROMPT, language=language_name(corpus_language),
                            question=question)
        answer = self._ask("corpus_language_queries", prompt, SearchQueries, SearchQueries(queries=[]),
                           corpus_language)
        return [q for q in answer.queries if q.strip()][:3]

    def extract_info(self, chunk, anchor, task, language):
        if chunk.addressed_to_model:  # instructions to a model are no finding: not asked, shown as not used
            return InfoExtractionWithQuotes(extracted_info="")
        prompt = self._fill(
            prompts.INFO_EXTRACTION_WITH_QUOTES_PROMPT,
            language=language_name(language), anchor=anchor, task=task, document=chunk.doc,
            page=chunk.page_start, chunk=prompts.quoted(chunk.text, untrusted=chunk.addressed_to_model))
        default = InfoExtractionWithQuotes(extracted_info=" ".join(chunk.text.split())[:600])
        answer = self._ask("extract_info", prompt, InfoExtractionWithQuotes, default, language)
        for quote in answer.preserved_quotes:
            quote.document = quote.document or chunk.doc
            if find_span(chunk.text, quote.quote) is not None:  # the page where the wording starts, not the model's
                quote.page = quote_pages(chunk.text, chunk.page_map, quote.quote, chunk.page_start)[0]
            else:
                quote.page = quote.page or chunk.page_start
        return answer

    def extract_references(self, text: str) -> ExtractedReferenceList:
        return self.structured(self._fill(prompts.REFERENCE_EXTRACTION_PROMPT, text=prompts.quoted(text)),
                               ExtractedReferenceList)

    def decide_reference(self, item: GateInput, anchor: str, language: str) -> ReferenceDecision:
        prompt = self._fill(
            prompts.REFERENCE_DECISION_PROMPT,
            language=language_name(language),
            anchor=anchor,
            reference=item.reference.original_text,
            reference_type=item.reference.type,
            document=item.document,
            window=prompts.quoted(item.window),
            target_title=item.target_title or "-",
        )
        return self.structured(prompt, ReferenceDecision)  # errors reach the gate, which then follows

    def summarize_task(self, task, anchor, findings, language):
        quotes = "\n".join(f"- \"{q.quote}\" [{q.document}, p. {q.page}]" for f in findings for q in f.preserved_quotes)
        prompt = self._fill(prompts.TASK_SUMMARY_PROMPT, language=language_name(language), anchor=anchor, task=task,
                            findings=findings_text(findings, language), quotes=quotes or "-")
        return self._ask("summarize_task", prompt, TaskSummary, TaskSummary(), language)

    def assess_task(self, task, anchor, findings, language, focus=""):
        prompt = self._fill(prompts.TASK_ASSESSMENT_PROMPT, language=language_name(language), anchor=anchor, task=task,
                            findings=findings_text(findings, language) or "-")
        # an answer that cannot be read ends the task's iterations (bounded), it does not loop
        return self._ask("assess_task", prompt, TaskAssessment, TaskAssessment(answered=True, reason="default"),
                         language)

    def adapt_todo(self, anchor, tasks, summary, missing, provisions, gaps, saturated, room, language):
        listing = "\n".join(f"{t.id} | {'done' if t.completed else 'open'}{' (user)' if t.origin == 'user' else ''} | "
                            f"{t.task}" for t in tasks)
        found = ", ".join(f"{p['label']} (via {p['via']})" for p in provisions) or "-"
        prompt = self._fill(
            prompts.TODO_ADAPTATION_PROMPT,
            language=language_name(language), anchor=anchor, tasks=listing, summary=summary or "-",
            missing="; ".join([*missing, *gaps]) or "-", provisions=found, room=room)
        answer = self._ask("adapt_todo", prompt, TodoAdaptation, TodoAdaptation(), language)
        return TodoAdaptation(add=answer.add[:room], close=answer.close)

    def score_relevance(self, anchor, finding, language):
        prompt = self._fill(
            prompts.RELEVANCE_SCORING_PROMPT,
            language=language_name(language), anchor=anchor, document=finding.document,
            text=prompts.quoted((finding.extracted_info or finding.chunk_text)[:PASSAGE_CHARS * 2]))
        return self._ask("score_relevance", prompt, RelevanceScore,
                         RelevanceScore(score=finding.relevance_score, reason="default"), language)

    # ---- Phase 4 ----------------------------------------------------------------------------------
    def synthesize(self, request: SynthesisInput) -> SynthesisOutput:
        inputs = synthesis_inputs(request)
        whole = prompts.SYNTHESIS_PROMPT.format(**inputs)
        too_long = self.max_prompt_chars and len(whole) > self.max_prompt_chars
        parts = parts_by_task(request, self.max_prompt_chars) if too_long else []
        if len(parts) > 1:  # map: each task from its own passages; reduce: the answer from their findings
            logger.info("Synthesis in %d parts: the context (%d characters) exceeds one call's window (%d)",
                        len(parts), len(whole), self.max_prompt_chars)
            findings = [self._synthesize_once(part).answer for part in parts]
            return self._synthesize_once(combined(request, [text for text in findings if text.strip()]))
        return self._synthesize_once(request, inputs)

    def _synthesize_once(self, request: SynthesisInput, inputs: dict | None = None) -> SynthesisOutput:
        prompt = self._fill(prompts.SYNTHESIS_PROMPT, **(inputs or synthesis_inputs(request)))
        output = self._ask("synthesize", prompt, SynthesisOutput, SynthesisOutput(), request.language)
        if not output.answer.strip():  # valid JSON with nothing in it is no answer either
            if self.raise_unusable:
                raise LLMError("synthesize: the model's answer is empty")
            self._warn("synthesize: the model's answer is empty")
        return output

    def assess_quality(self, query, answer, sources, language, asked=None):
        asked = asked or AskedFor()
        listing = judged_sources(answer, sources, language)
        prompt = self._fill(prompts.QUALITY_ASSESSMENT_PROMPT, language=language_name(language), query=query,
                            answer=prompts.quoted(answer), sources=listing, parts="; ".join(asked.parts) or "-",
                            exclusions="; ".join(asked.exclusions) or "-",
                            tasks="\n".join(f"{n}. {task}" for n, task in enumerate(asked.tasks, start=1)) or "-")
        return self._ask("assess_quality", prompt, QualityAssessment, QualityAssessment(), language)

    def decide_remediation(self, query, assessment, threshold, language):
        prompt = self._fill(
            prompts.QUALITY_REMEDIATION_PROMPT,
            language=language_name(language), query=query, score=assessment.overall_score, threshold=threshold,
            issues="; ".join(assessment.issues_found) or "-")
        return self._ask("decide_remediation", prompt, RemediationDecision, RemediationDecision(), language)
