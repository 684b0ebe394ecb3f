"""The LLM reasoner with the extractive reasoner behind it.

A reasoning step whose model answer is unusable — not JSON, the wrong shape, still in the wrong
language after one retry — is answered by the extractive reasoner instead, with a warning. A model
that cannot be reached at all (refused, hanging past its deadline, server errors after the retries)
is not papered over: the step fails with a clear message and the session stays resumable. After
`LLM_BREAKER_FAILURES` consecutive failures of one kind the circuit breaker opens: the run says so once
(a warning in the report) and every later step is answered by the extractive reasoner and gate.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from rabbithole_lab.messages.catalogue import run_text
from rabbithole_lab.reasoning.base import AskedFor, ReasonerInfo, ReasonerUnavailableError, SynthesisInput
from rabbithole_lab.reasoning.breaker import CircuitBreaker, FailureKind
from rabbithole_lab.reasoning.extractive.extractive_reasoner import ExtractiveReasoner
from rabbithole_lab.reasoning.llm.llm_reasoner import LLMError, LLMReasoner
from rabbithole_lab.records import ChunkWithInfo, ToDoItem, VectorResult
from rabbithole_lab.schemas import (
    AnchorTerms,
    ExtractedReferenceList,
    InfoExtractionWithQuotes,
    QualityAssessment,
    RelevanceScore,
    RemediationDecision,
    RetrievalAnalysis,
    SynthesisOutput,
    TaskAssessment,
    TaskSummary,
    TodoAdaptation,
    TodoPlan,
)
from rabbithole_lab.vocabulary.language_detection import may_show

if TYPE_CHECKING:
    from rabbithole_lab.rabbithole.gate import ReferenceDecider

logger = logging.getLogger(__name__)

T = TypeVar("T")


class ExtractiveFallback:
    """A `Reasoner`: each step asks the model first and the extractive reasoner when the answer is unusable."""

    def __init__(self, primary: LLMReasoner, fallback: ExtractiveReasoner, gate: ReferenceDecider | None = None,
                 breaker_failures: int = 3):
        primary.raise_unusable = True
        self.primary = primary
        self.fallback = fallback
        self.gate = gate  # decides references once the breaker is open
        self.breaker = CircuitBreaker(breaker_failures)
        self._warnings: list[str] = []
        self._lock = threading.Lock()

    @property
    def info(self) -> ReasonerInfo:
        return self.primary.info

    @info.setter
    def info(self, value: ReasonerInfo) -> None:
        self.primary.info = value

    @property
    def calls(self) -> int:
        return self.primary.calls + self.fallback.calls

    @property
    def llm_calls(self) -> int:
        return self.primary.llm_calls

    @property
    def tokens(self) -> int:
        return self.primary.tokens

    @property
    def context_chars(self) -> int:
        return self.primary.context_chars

    @property
    def judges_beyond_search(self) -> bool:
        return self.primary.judges_beyond_search

    def drain_warnings(self) -> list[str]:
        with self._lock:
            mine, self._warnings = self._warnings, []
        return [*self.primary.drain_warnings(), *mine, *self.fallback.drain_warnings()]

    def decide_reference(self, item, anchor, language):
        if self.breaker.open and self.gate is not None:
            return self.gate.decide_reference(item, anchor, language)
        try:
            decision = self.primary.decide_reference(item, anchor, language)
        except (LLMError, ReasonerUnavailableError) as exc:
            self._failed("unusable" if isinstance(exc, LLMError) else "unreachable", exc)
            raise  # the gate follows a reference it could not decide
        self.breaker.succeeded()
        if decision.reason and not may_show(decision.reason, language):
            # the model's reason is not in the reader's language: its decision stands, its words do not
            return decision.model_copy(update={"reason": run_text(language)["gate_model_decision"]})
        return decision

    def _warn(self, message: str) -> None:
        logger.warning(message)
        with self._lock:
            self._warnings.append(message)

    def _failed(self, kind: FailureKind, exc: Exception) -> bool:
        """Count a failure; when it opens the breaker, say so once. True when the breaker is now open."""
        if self.breaker.failed(kind):
            self._warn(f"Circuit breaker: the model failed {self.breaker.limit} times in a row "
                       f"({'unusable answers' if kind == 'unusable' else 'no answer'}; last: {exc}); "
                       "the rest of this run is answered by the extractive reasoner")
        return self.breaker.open

    def _step(self, name: str, primary: Callable[[], T], fallback: Callable[[], T]) -> T:
        if self.breaker.open:
            return fallback()
        try:
            answer = primary()
        except LLMError as exc:
            self._warn(f"{name}: the model's answer was unusable ({exc}); the extractive reasoner answered")
            self._failed("unusable", exc)
            return fallback()
        except ReasonerUnavailableError as exc:
            if self._failed("unreachable", exc):
                return fallback()
            raise
        self.breaker.succeeded()
        return answer

    # ---- Clarifier ----------------------------------------------------------------------------
    def hitl_queries(self, query: str, iteration: int, conversation: list[dict], gaps: list[str],
                     concepts: list[str], language: str, count: int) -> list[str]:
        args = (query, iteration, conversation, gaps, concepts, language, count)
        return self._step("hitl_queries", lambda: self.primary.hitl_queries(*args),
                          lambda: self.fallback.hitl_queries(*args))

    def analyze_retrieval(self, query: str, passages: list[VectorResult], language: str) -> RetrievalAnalysis:
        return self._step("analyze_retrieval", lambda: self.primary.analyze_retrieval(query, passages, language),
                          lambda: self.fallback.analyze_retrieval(query, passages, language))

    def follow_up_questions(self, query: str, analysis: RetrievalAnalysis, passages: list[VectorResult],
                            language: str, count: int, conversation: list[dict] | None = None) -> list[str]:
        args = (query, analysis, passages, language, count)
        return self._step("follow_up_questions",
                          lambda: self.primary.follow_up_questions(*args, conversation=conversation),
                          lambda: self.fallback.follow_up_questions(*args, conversation=conversation))

    def hitl_context_summary(self, query: str, conversation: list[dict], concepts: list[str], language: str) -> str:
        args = (query, conversation, concepts, language)
        return self._step("hitl_context_summary", lambda: self.primary.hitl_context_summary(*args),
                          lambda: self.fallback.hitl_context_summary(*args))

    def research_queries(self, query: str, summary: str, concepts: list[str], language: str) -> list[str]:
        args = (query, summary, concepts, language)
        return self._step("research_queries", lambda: self.primary.research_queries(*args),
                          lambda: self.fallback.research_queries(*args))

    def anchor_terms(self, query: str, conversation: list[dict], language: str) -> AnchorTerms:
        return self._step("anchor_terms", lambda: self.primary.anchor_terms(query, conversation, language),
                          lambda: self.fallback.anchor_terms(query, conversation, language))

    # ---- Planner ------------------------------------------------------------------------------
    def generate_todo(self, query: str, summary: str, queries: list[str], concepts: list[str], language: str,
                      count: int) -> TodoPlan:
        args = (query, summary, queries, concepts, language, count)
        return self._step("generate_todo", lambda: self.primary.generate_todo(*args),
                          lambda: self.fallback.generate_todo(*args))

    def task_search_queries(self, task: str, anchor: str, concepts: list[str], language: str) -> list[str]:
        args = (task, anchor, concepts, language)
        return self._step("task_search_queries", lambda: self.primary.task_search_queries(*args),
                          lambda: self.fallback.task_search_queries(*args))

    def corpus_language_queries(self, question: str, corpus_language: str) -> list[str]:
        return self._step("corpus_language_queries",
                          lambda: self.primary.corpus_language_queries(question, corpus_language),
                          lambda: self.fallback.corpus_language_queries(question, corpus_language))

    def adapt_todo(self, anchor: str, tasks: list[ToDoItem], summary: str, missing: list[str],
                   provisions: list[dict], gaps: list[str], saturated: list[int], room: int,
                   language: str) -> TodoAdaptation:
        args = (anchor, tasks, summary, missing, provisions, gaps, saturated, room, language)
        return self._step("adapt_todo", lambda: self.primary.adapt_todo(*args),
                          lambda: self.fallback.adapt_todo(*args))

    # ---- Extractor ----------------------------------------------------------------------------
    def extract_info(self, chunk: VectorResult, anchor: str, task: str, language: str) -> InfoExtractionWithQuotes:
        args = (chunk, anchor, task, language)
        return self._step("extract_info", lambda: self.primary.extract_info(*args),
                          lambda: self.fallback.extract_info(*args))

    def extract_references(self, text: str) -> ExtractedReferenceList | None:
        return self._step("extract_references", lambda: self.primary.extract_references(text),
                          lambda: self.fallback.extract_references(text))

    def summarize_task(self, task: str, anchor: str, findings: list[ChunkWithInfo], language: str) -> TaskSummary:
        args = (task, anchor, findings, language)
        return self._step("summarize_task", lambda: self.primary.summarize_task(*args),
                          lambda: self.fallback.summarize_task(*args))

    def assess_task(self, task: str, anchor: str, findings: list[ChunkWithInfo], language: str,
                    focus: str = "") -> TaskAssessment:
        args = (task, anchor, findings, language, focus)
        return self._step("assess_task", lambda: self.primary.assess_task(*args),
                          lambda: self.fallback.assess_task(*args))

    # ---- Judge --------------------------------------------------------------------------------
    def score_relevance(self, anchor: str, finding: ChunkWithInfo, language: str) -> RelevanceScore:
        return self._step("score_relevance", lambda: self.primary.score_relevance(anchor, finding, language),
                          lambda: self.fallback.score_relevance(anchor, finding, language))

    def assess_quality(self, query: str, answer: str, sources: list[ChunkWithInfo], language: str,
                       asked: AskedFor | None = None) -> QualityAssessment:
        args = (query, answer, sources, language)
        return self._step("assess_quality", lambda: self.primary.assess_quality(*args, asked=asked),
                          lambda: self.fallback.assess_quality(*args, asked=asked))

    def decide_remediation(self, query: str, assessment: QualityAssessment, threshold: int,
                           language: str) -> RemediationDecision:
        args = (query, assessment, threshold, language)
        return self._step("decide_remediation", lambda: self.primary.decide_remediation(*args),
                          lambda: self.fallback.decide_remediation(*args))

    # ---- Synthesiser --------------------------------------------------------------------------
    def synthesize(self, request: SynthesisInput) -> SynthesisOutput:
        output = self._step("synthesize", lambda: self.primary.synthesize(request),
                            lambda: self.fallback.synthesize(request))
        if output.verdict or output.nothing_found or not output.answer.strip():
            return output
        # a model names its decisive provision in a field; the record scores it as the extractive writer's is, so
        # the report, the check and the workbench read one verdict whichever writer wrote the answer
        return output.model_copy(update={"verdict": self.fallback.verdict_of(request, output)})
