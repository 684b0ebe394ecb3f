"""Language detection (de/en) with lingua, restricted to the two languages we serve."""

from __future__ import annotations

from functools import lru_cache

LANGUAGE_NAMES = {"de": "Deutsch", "en": "English"}


@lru_cache(maxsize=1)
def _detector():
    from lingua import Language, LanguageDetectorBuilder

    return LanguageDetectorBuilder.from_languages(Language.GERMAN, Language.ENGLISH).build()


def detect_language(text: str, default: str = "de") -> str:
    """'de' or 'en'; `default` when the text carries no signal (empty, only numbers)."""
    if not text or not any(ch.isalpha() for ch in text):
        return default
    from lingua import Language

    found = _detector().detect_language_of(text)
    if found is None:
        return default
    return "en" if found == Language.ENGLISH else "de"


def language_name(code: str) -> str:
    return LANGUAGE_NAMES.get(code, code)
