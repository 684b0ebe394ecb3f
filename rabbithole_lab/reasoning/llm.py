"""The LLM reasoner: prompts from prompts.py through any LangChain chat model (Ollama by default).

Structured output is parsed from the model's JSON (qwen3 <think> blocks are stripped), validated
with Pydantic, retried with exponential backoff and then tried on the fallback model. Calls and
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
from rabbithole_lab.records import ExtractedReferenceList, ReferenceDecision
from rabbithole_lab.settings import Settings

logger = logging.getLogger(__name__)

Model = TypeVar("Model", bound=BaseModel)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
LANGUAGE_NAMES = {"de": "Deutsch", "en": "English"}


class LLMError(RuntimeError):
    """The model did not produce a usable answer after retries and fallback."""


def parse_json_answer(text: str, schema: type[Model]) -> Model:
    cleaned = _THINK.sub("", text).strip()
    cleaned = re.sub(r"^```(?:json)?|```$", "", cleaned.strip(), flags=re.MULTILINE).strip()
    match = _JSON_OBJECT.search(cleaned)
    if not match:
        raise ValueError(f"no JSON object in the answer: {cleaned[:80]!r}")
    return schema.model_validate(json.loads(match.group(0)))


class LLMReasoner:
    """Reasoning steps through a chat model; `chat_model` is any LangChain BaseChatModel."""

    def __init__(self, chat_model, fallback_model=None, max_retries: int = 2, backoff_s: float = 0.5,
                 max_prompt_chars: int | None = None):
        self.chat_model = chat_model
        self.fallback_model = fallback_model
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_prompt_chars = max_prompt_chars
        self.calls = 0
        self.tokens = 0
        self.warnings: list[str] = []
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings, model: str | None = None) -> LLMReasoner:
        from langchain_ollama import ChatOllama

        def build(name: str):
            return ChatOllama(model=name, base_url=settings.ollama.base_url, num_ctx=settings.ollama.num_ctx,
                              temperature=0, reasoning=False, client_kwargs={"timeout": settings.ollama.timeout_s})

        primary = model or settings.ollama.model
        fallback = settings.ollama.fallback_model if settings.ollama.fallback_model != primary else None
        safe_chars = int(settings.ollama.num_ctx * settings.ollama.safe_limit * 4)
        return cls(build(primary), build(fallback) if fallback else None, settings.ollama.max_retries,
                   max_prompt_chars=safe_chars)

    def structured(self, prompt: str, schema: type[Model]) -> Model:
        if self.max_prompt_chars and len(prompt) > self.max_prompt_chars:
            logger.warning("Prompt of %d characters exceeds the safe context; truncating", len(prompt))
            prompt = prompt[: self.max_prompt_chars]
        errors = []
        for model in [m for m in (self.chat_model, self.fallback_model) if m is not None]:
            for attempt in range(self.max_retries + 1):
                try:
                    with self._lock:
                        self.calls += 1
                        self.tokens += len(prompt) // 4
                    answer = model.invoke(prompt)
                    content = answer.content if hasattr(answer, "content") else str(answer)
                    with self._lock:
                        self.tokens += len(content) // 4
                    return parse_json_answer(content, schema)
                except (ValueError, ValidationError, json.JSONDecodeError) as exc:
                    errors.append(f"unparseable answer: {exc}")
                except Exception as exc:  # timeouts, refused connections, server errors
                    errors.append(f"{type(exc).__name__}: {exc}")
                if attempt < self.max_retries:
                    time.sleep(self.backoff_s * (2**attempt))
        raise LLMError("; ".join(errors[-3:]))

    # ---- rabbithole steps -------------------------------------------------------------------
    def extract_references(self, text: str) -> ExtractedReferenceList:
        return self.structured(prompts.REFERENCE_EXTRACTION_PROMPT.format(text=text), ExtractedReferenceList)

    def decide_reference(self, item: GateInput, anchor: str, language: str) -> ReferenceDecision:
        prompt = prompts.REFERENCE_DECISION_PROMPT.format(
            language=LANGUAGE_NAMES.get(language, language),
            anchor=anchor,
            reference=item.reference.original_text,
            reference_type=item.reference.type,
            document=item.document,
            window=item.window,
            target_title=item.target_title or "-",
        )
        return self.structured(prompt, ReferenceDecision)
