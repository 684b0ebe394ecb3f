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

from rabbithole_lab.language.detection import may_show
from rabbithole_lab.reasoning.base import (
    Clarifier,
    Extractor,
    Judge,
    Planner,
    ReasonerInfo,
    ReasonerUnavailableError,
    SynthesisInput,
)
from rabbithole_lab.reasoning.breaker import CircuitBreaker, FailureKind
from rabbithole_lab.reasoning.extractive.extractive_reasoner import ExtractiveReasoner
from rabbithole_lab.reasoning.llm.llm_reasoner import LLMError, LLMReasoner
from rabbithole_lab.schemas import (
    SynthesisOutput,
)

if TYPE_CHECKING:
    from rabbithole_lab.records import ReferenceDecider

logger = logging.getLogger(__name__)

T = TypeVar("T")


def role_steps(*roles: type) -> tuple[str, ...]:
    """The steps a role Protocol names (reasoning/base.py): its public methods."""
    return tuple(name for role in roles for name, member in vars(role).items()
                 if callable(member) and not name.startswith("_"))


class ExtractiveFallback:
    """A `Reasoner`: each step asks the model first and the extractive reasoner when the answer is unusable.

    The steps of the clarifier, planner, extractor and judge roles are one generic wrapper each (`_fallback_step`,
    attached below for every step their Protocols name); the writer's step adds the verdict record."""

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
            return decision.model_copy(update={"reason": "", "reason_key": "gate_model_decision"})
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

    # ---- Synthesiser --------------------------------------------------------------------------
    def synthesize(self, request: SynthesisInput) -> SynthesisOutput:
        output = self._step("synthesize", lambda: self.primary.synthesize(request),
                            lambda: self.fallback.synthesize(request))
        if output.verdict or output.nothing_found or not output.answer.strip():
            return output
        # a model names its decisive provision in a field; the record scores it as the extractive writer's is, so
        # the report, the check and the workbench read one verdict whichever writer wrote the answer
        return output.model_copy(update={"verdict": self.fallback.verdict_of(request, output)})


def _fallback_step(name: str) -> Callable:
    def step(self: ExtractiveFallback, *args, **kwargs):
        return self._step(name, lambda: getattr(self.primary, name)(*args, **kwargs),
                          lambda: getattr(self.fallback, name)(*args, **kwargs))

    step.__name__ = step.__qualname__ = name
    return step


for _name in role_steps(Clarifier, Planner, Extractor, Judge):
    setattr(ExtractiveFallback, _name, _fallback_step(_name))
