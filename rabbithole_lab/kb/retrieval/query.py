"""Query understanding without an LLM: the lexical query across languages, named documents, clauses.

English questions about German documents find little with German BM25; the language bridge
(`language/bridge.py`, the glossaries' German terms) adds the German terms to the lexical query.
"""

from __future__ import annotations

import re

from rabbithole_lab.kb.store.registry import DocumentRegistry
from rabbithole_lab.language import patterns
from rabbithole_lab.language.bridge import rendering

_WORDS = re.compile(r"[\wÄÖÜäöüß-]+")
_CLAUSE_SPLIT = patterns.clause_split()  # the question words are each language's
MAX_NAME_WORDS = 8


def lexical_expansion(query: str, index_language: str) -> str:
    """The query BM25 sees: an English question over German text also carries the glossary's German terms."""
    terms = rendering(query, index_language)
    return f"{query} {terms}".strip() if terms else query


def named_documents(query: str, registry: DocumentRegistry) -> list[str]:
    """Documents the query names ("nach der Kostenverordnung", "StrlSchG"), by registry synonyms."""
    words = _WORDS.findall(query)
    found: list[str] = []
    for size in range(min(MAX_NAME_WORDS, len(words)), 0, -1):
        for start in range(len(words) - size + 1):
            phrase = " ".join(words[start : start + size])
            if len(phrase) < 3:
                continue
            target = registry.exact_or_inflected(phrase)
            if target and target[0] not in found:
                found.append(target[0])
    return found


def clauses(query: str, min_chars: int = 15) -> list[str]:
    """The parts of a multi-part question ("Welche ..., wie oft ..., und welcher ...")."""
    parts = [part.strip(" ,.") for part in _CLAUSE_SPLIT.split(query) if part]
    parts = [part for part in parts if len(part) >= min_chars]
    return parts if len(parts) > 1 else []

