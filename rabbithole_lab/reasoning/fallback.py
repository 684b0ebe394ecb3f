"""The LLM reasoner with the extractive reasoner behind it.

A reasoning step whose model answer is unusable — not JSON, the wrong shape, still in the wrong
language after one retry — is answered by the extractive reasoner instead, with a warning. A model
that cannot be reached at all (refused, hanging past its deadline, server errors after the retries)
is not papered over: the step fails with a clear message and the session stays resumable.
"""

from __future__ import annotations

import logging
import threading

from rabbithole_lab.reasoning.base import ReasonerInfo
from rabbithole_lab.reasoning.extractive import ExtractiveReasoner
from rabbithole_lab.reasoning.llm import LLMError, LLMReasoner

logger = logging.getLogger(__name__)

STEPS = frozenset({
    "hitl_queries", "analyze_retrieval", "follow_up_questions", "hitl_context_summary", "research_queries",
    "generate_todo", "task_search_queries", "corpus_language_queries", "extract_info", "extract_references",
    "summarize_task", "assess_task", "adapt_todo", "score_relevance", "synthesize", "assess_quality",
    "decide_remediation",
})


class ExtractiveFallback:
    def __init__(self, primary: LLMReasoner, fallback: ExtractiveReasoner):
        primary.raise_unusable = True
        self.primary = primary
        self.fallback = fallback
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
        return self.primary.decide_reference(item, anchor, language)  # the gate follows when it fails

    def __getattr__(self, name: str):
        if name not in STEPS:
            raise AttributeError(name)
        primary_step, fallback_step = getattr(self.primary, name), getattr(self.fallback, name)

        def step(*args, **kwargs):
            try:
                return primary_step(*args, **kwargs)
            except LLMError as exc:
                message = f"{name}: the model's answer was unusable ({exc}); the extractive reasoner answered"
                logger.warning(message)
                with self._lock:
                    self._warnings.append(message)
                return fallback_step(*args, **kwargs)

        step.__name__ = name
        return step
