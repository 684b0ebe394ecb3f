"""Build the reasoning parts the configured provider supports (nothing is built at import)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from rabbithole_lab.records import ExtractedReferenceList
from rabbithole_lab.settings import Settings

logger = logging.getLogger(__name__)


def reference_extractor(settings: Settings) -> Callable[[str], ExtractedReferenceList] | None:
    """The LLM reference extractor when an Ollama model is available, else None (regex layer)."""
    from rabbithole_lab.reasoning.provider import choose_provider

    choice = choose_provider(settings)
    if choice.provider != "ollama":
        logger.info("Reference extraction without LLM: %s", choice.reason)
        return None
    from rabbithole_lab.reasoning.llm import LLMReasoner

    return LLMReasoner.from_settings(settings, model=choice.model).extract_references
