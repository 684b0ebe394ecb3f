"""The one bridge between the languages: an English text's terms in German, from glossaries.

English questions about German documents find little by German words alone, and no model translates them
when none is there. A glossary gives the German terms of English phrases. Glossaries are data: each domain's
in a file of its own (`glossary_en_de_radiation.tsv`: radiation protection, nuclear, waste and environmental
law), and a knowledge base adds the terms of its own domain in `<kb>/.rabbithole-glossary.tsv` (same
columns; `extend_glossary`). Whether a text crosses the bridge is decided here, once (`rendering`): the
search, the gate, the reader and the check all ask this module.
"""

from __future__ import annotations

import logging
import re
import threading
from functools import lru_cache
from pathlib import Path

from rabbithole_lab.language.detection import detect_language

logger = logging.getLogger(__name__)

HERE = Path(__file__).parent
SOURCE, TARGET = "en", "de"  # the glossaries' languages: English phrases, German terms
GLOSSARY_FILES = (HERE / "glossary_en_de_radiation.tsv",)
KB_GLOSSARY_FILE = ".rabbithole-glossary.tsv"
_ENGLISH_WORD = re.compile(r"[a-z0-9]+")

_entries: dict[str, list[str]] = {}
_lock = threading.Lock()


def _entry(line: str) -> tuple[str, list[str]] | None:
    """An "english<TAB>german; german" line as (english, German terms); None for a comment, blank or no tab."""
    if not line.strip() or line.startswith("#") or "\t" not in line:
        return None
    english, german = line.split("\t", 1)
    return english.strip().lower(), [term.strip() for term in german.split(";") if term.strip()]


def read_glossary(path: Path, strict: bool = False) -> dict[str, list[str]]:
    """A glossary file's entries: "english<TAB>german term; german term" per line, "#" comments. With `strict` (a
    knowledge base's own file), a line without its two columns is an error that names the file and line."""
    entries: dict[str, list[str]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        entry = _entry(line)
        if entry is None or not entry[0] or not entry[1]:
            if strict and line.strip() and not line.lstrip().startswith("#"):
                raise ValueError(f"{path}:{number}: expected 'english<TAB>german[; german]', got {line!r}")
            continue
        entries[entry[0]] = entry[1]
    return entries


def glossary() -> dict[str, list[str]]:
    """English phrase (lower case) -> its German terms, of every glossary read so far."""
    with _lock:
        if not _entries:
            for path in GLOSSARY_FILES:
                _entries.update(read_glossary(path))
        return _entries


def extend_glossary(kb_dir: Path | None) -> int:
    """Add the knowledge base's own glossary (`<kb>/.rabbithole-glossary.tsv`), once: a phrase the glossaries
    do not list yet is added, a listed one gains the German terms it lacked. How many entries changed."""
    path = Path(kb_dir) / KB_GLOSSARY_FILE if kb_dir else None
    if path is None or not path.is_file():
        return 0
    known = glossary()
    changed = 0
    with _lock:
        for english, terms in read_glossary(path, strict=True).items():
            fresh = [term for term in terms if term not in known.get(english, [])]
            if fresh:
                known[english] = [*known.get(english, []), *fresh]
                changed += 1
    if changed:
        for cached in (_glossary_by_words, glossary_terms, glossary_alternatives):
            cached.cache_clear()
        logger.info("Glossary of the knowledge base: %d entries from %s", changed, path)
    return changed


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


def glossary_phrases(text: str) -> list[tuple[str, list[str]]]:
    """The glossary's phrases an English text holds (longest first, as the text words them), each with its
    German terms. A phrase the glossary lists as written takes its own entry ("records": Aufzeichnungen); a
    plural or hyphenated form it does not list takes the entries of its singular words."""
    exact, by_singular = _glossary_by_words()
    longest = max((len(key) for key in by_singular), default=1)
    words = tuple(_ENGLISH_WORD.findall(text.lower()))
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


@lru_cache(maxsize=4096)
def glossary_terms(text: str) -> str:
    """The German terms the glossary gives the English phrases of `text` (longest phrases first), space-joined;
    "" for none. Read as written: for a word or a term whose language cannot be detected (a question's word, a
    case's word); a whole text crosses by `rendering`."""
    return " ".join(term for _, terms in glossary_phrases(text) for term in terms)


@lru_cache(maxsize=4096)
def glossary_alternatives(concept: str) -> tuple[str, ...]:
    """The German forms an (English) concept may stand in a text as: the glossary's entries for it as written,
    and its German terms read word by word, plurals too ("organ doses": Organ-Äquivalentdosis). Cached: the
    writer asks it for every addition against every candidate sentence."""
    return (*glossary().get(concept.lower(), []), *filter(None, [glossary_terms(concept)]))


def gives_terms_in(language: str) -> bool:
    """The glossaries give terms in `language`: text in it is read through them (German text, English words)."""
    return language == TARGET


def bridges(text_language: str, into: str) -> bool:
    """A text in `text_language` is read in `into` through the glossaries (English over German text)."""
    return text_language == SOURCE and gives_terms_in(into)


def rendering(text: str, into: str, text_language: str | None = None) -> str:
    """The glossary's terms of `text` in the language `into` ("de"), when the text is in the glossaries'
    other language (`text_language`, else detected); "" when it is not, when `into` is not theirs, or when the
    glossary names none of its phrases. The language is detected only when there are terms: its models take
    0.7 s to load, a third of a command-line search."""
    if not gives_terms_in(into):
        return ""
    terms = glossary_terms(text)
    if not terms:
        return ""
    return terms if bridges(text_language or detect_language(text), into) else ""
