"""Query understanding without an LLM: language guess, EN->DE term expansion, named documents, clauses.

English questions about German documents find little with German BM25; the packaged
glossary (`glossary_en_de.tsv`, domain terms of radiation protection, nuclear, waste and
environmental law) adds the German terms to the lexical query.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

from rabbithole_lab.kb.store.registry import DocumentRegistry
from rabbithole_lab.language import patterns
from rabbithole_lab.language.detection import detect_language

_WORDS = re.compile(r"[\wÄÖÜäöüß-]+")
_CLAUSE_SPLIT = patterns.clause_split()  # the question words are each language's
MAX_NAME_WORDS = 8


@lru_cache(maxsize=1)
def glossary() -> dict[str, list[str]]:
    text = resources.files("rabbithole_lab.kb.retrieval").joinpath("glossary_en_de.tsv").read_text(encoding="utf-8")
    entries: dict[str, list[str]] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#") or "\t" not in line:
            continue
        english, german = line.split("\t", 1)
        entries[english.strip().lower()] = [term.strip() for term in german.split(";") if term.strip()]
    return entries


_ENGLISH_WORD = re.compile(r"[a-z0-9]+")


def _singular(word: str) -> str:
    """A noun's singular: "approvals" is "approval", "facilities" is "facility", "boxes" is "box". The
    glossary is a dictionary of terms, nearly all nouns; stripping a verb's or adjective's ending
    ("planned", "testing") would meet a noun of another sense ("plan": Pläne, "testing": Erprobung), so
    only the plural ending is stripped."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-2] if word.endswith(("ches", "shes", "sses", "xes", "zes")) else word[:-1]
    return word


def _singular_words(text: str) -> tuple[str, ...]:
    """An English phrase as singular words, hyphens as word breaks: "approvals" meets the glossary's
    "approval", "leak-tightness" its "leak tightness"."""
    return tuple(_singular(word) for word in _ENGLISH_WORD.findall(text.lower()))


@lru_cache(maxsize=1)
def _glossary_by_words() -> tuple[dict[tuple[str, ...], list[str]], dict[tuple[str, ...], list[str]]]:
    """The glossary keyed by its English side's words, and by their singular words; entries alike in the
    singular ("record", "records") pool their German terms for a form the glossary does not list itself."""
    exact: dict[tuple[str, ...], list[str]] = {}
    by_singular: dict[tuple[str, ...], list[str]] = {}
    for english, german in glossary().items():
        exact.setdefault(tuple(_ENGLISH_WORD.findall(english)), list(german))
        pooled = by_singular.setdefault(_singular_words(english), [])
        pooled.extend(term for term in german if term not in pooled)
    return ({key: terms for key, terms in exact.items() if key},
            {key: terms for key, terms in by_singular.items() if key})


def glossary_phrases(query: str) -> list[tuple[str, list[str]]]:
    """The glossary's phrases an English query holds (longest first, as the query words them), each with its
    German terms. A phrase the glossary lists as written takes its own entry ("records": Aufzeichnungen); a
    plural or hyphenated form it does not list takes the entries of its singular words."""
    exact, by_singular = _glossary_by_words()
    longest = max((len(key) for key in by_singular), default=1)
    words = tuple(_ENGLISH_WORD.findall(query.lower()))
    singular = tuple(_singular(word) for word in words)
    found: list[tuple[str, list[str]]] = []
    position = 0
    while position < len(words):
        for size in range(min(longest, len(words) - position), 0, -1):
            end = position + size
            terms = exact.get(words[position:end]) or by_singular.get(singular[position:end])
            if terms:
                found.append((" ".join(words[position:end]), terms))
                position += size
                break
        else:
            position += 1
    return found


def german_terms(query: str) -> str:
    """The German glossary terms for an English query (longest phrases first), space-joined."""
    return " ".join(term for _, terms in glossary_phrases(query) for term in terms)


@lru_cache(maxsize=4096)
def glossary_alternatives(concept: str) -> tuple[str, ...]:
    """The German forms an (English) concept may stand in a text as: the glossary's entries for it as written,
    and its German terms read word by word, plurals too ("organ doses": Organ-Äquivalentdosis). Cached: the
    writer asks it for every addition against every candidate sentence."""
    return (*glossary().get(concept.lower(), []), *filter(None, [german_terms(concept)]))


def lexical_expansion(query: str, index_language: str) -> str:
    """The query BM25 sees: an English question over German text also carries the glossary's German terms."""
    if index_language != "german":
        return query
    terms = german_terms(query)
    # without a glossary term there is nothing to add, whatever the language: no detection needed (its
    # models take 0.7 s to load, a third of a command-line search)
    if terms and detect_language(query) == "en":
        return f"{query} {terms}".strip()
    return query


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

