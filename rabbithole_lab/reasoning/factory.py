"""Build the reasoning parts the configured provider supports (nothing is built at import)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from rabbithole_lab.schemas import ExtractedReferenceList
from rabbithole_lab.settings import Settings

logger = logging.getLogger(__name__)


def reference_extractor(settings: Settings) -> Callable[[str], ExtractedReferenceList] | None:
    """The LLM reference extractor when an Ollama model is available, else None (regex layer)."""
    from rabbithole_lab.reasoning.llm.provider import choose_provider

    choice = choose_provider(settings)
    if choice.provider != "ollama":
        logger.info("Reference extraction without LLM: %s", choice.reason)
        return None
    from rabbithole_lab.reasoning.llm.llm_reasoner import LLMReasoner

    return LLMReasoner.from_settings(settings, model=choice.model).extract_references


def build_reasoner(settings: Settings, embedder, choice=None):
    """The reasoner LLM_PROVIDER asks for: Ollama when it answers and has the model, else extractive.

    `embedder` (kb/embedding/embedder.py) powers the extractive reasoner; `choice` skips the probe.
    """
    from rabbithole_lab.reasoning.base import ReasonerInfo
    from rabbithole_lab.reasoning.extractive.extractive_reasoner import ExtractiveReasoner
    from rabbithole_lab.reasoning.llm.provider import choose_provider

    choice = choice or choose_provider(settings)
    if choice.provider == "ollama":
        from rabbithole_lab.reasoning.fallback import ExtractiveFallback
        from rabbithole_lab.reasoning.llm.llm_reasoner import LLMReasoner

        reasoner = LLMReasoner.from_settings(settings, model=choice.model, reason=choice.reason)
        reasoner.info = ReasonerInfo("ollama", choice.model, choice.reason, choice.reason_key, choice.reason_values,
                                     reasoner.window.window_tokens, reasoner.window.context_tokens)
        from rabbithole_lab.rabbithole.gate import ExtractiveDecider

        # a step the model answers with garbage is answered by the extractive reasoner instead, and every
        # step once the model failed LLM_BREAKER_FAILURES times in a row
        return ExtractiveFallback(reasoner, ExtractiveReasoner(embedder, reason="fallback for unusable model answers"),
                                  gate=ExtractiveDecider(embedder, settings.references.gate_threshold),
                                  breaker_failures=settings.llm.breaker_failures)
    logger.info("Extractive reasoner: %s", choice.reason)
    extractive = ExtractiveReasoner(embedder, reason=choice.reason)
    extractive.info = ReasonerInfo("extractive", None, choice.reason, choice.reason_key, choice.reason_values)
    return extractive


def build_gate(settings: Settings, embedder, reasoner=None):
    """The reference gate, built once where services are wired: the LLM reasoner when one runs (it
    implements `decide_reference`), else the extractive decider over the configured embedder."""
    from rabbithole_lab.rabbithole.gate import ExtractiveDecider

    if reasoner is not None and reasoner.info.provider != "extractive":
        return reasoner
    return ExtractiveDecider(embedder, settings.references.gate_threshold)
