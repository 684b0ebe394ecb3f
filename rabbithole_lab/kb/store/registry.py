"""The document registry: which names a document is cited by.

Shape (the seeds'): {"collections": {"StrlSch": {"documents": [{"filename", "synonyms"}]}}}.
A registry built at ingestion (file stem, PDF title, first heading, "(Abbrev)")
is merged with the hand registry; hand entries win when both name a synonym.
"""

from __future__ import annotations

import difflib
import json
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from rabbithole_lab.language import patterns, words_of

logger = logging.getLogger(__name__)

FUZZY_THRESHOLD = 0.7
# a title longer than this names its document in an answer by its file stem: it would crowd the quote it labels
DISPLAY_NAME_MAX_CHARS = 60
# what a word processor leaves in a PDF's title field instead of a title ("Microsoft Word - Bericht.docx", "Untitled")
_NO_TITLE = patterns.no_title()
_ARTICLE = patterns.name_article()
_INFLECTION = patterns.inflection()
# The type of an act, not its name: alone ("der Verordnung vom 19. Juni 2020") it names no document.
GENERIC_ACT_WORDS = frozenset(words_of("GENERIC_ACT_WORDS"))
MIN_SHARED_SUFFIX = 4  # a shared compound head ("...verordnung") longer than this must not carry a fuzzy match
# A compound that names an act by itself ("Kostenverordnung") ends in the act's type (each language's endings).
_COMPOUND_ACT_NAME = patterns.compound_act_name()


class RegistryError(ValueError):
    """The registry file is malformed; the message says where."""


@dataclass
class RegistryEntry:
    filename: str
    collection: str
    synonyms: list[str] = field(default_factory=list)
    source: str = "hand"  # hand | auto


def _stem_word(word: str) -> str:
    word = word.lower()
    return _INFLECTION.sub("", word) if len(word) > 4 else word


def inflection_key(text: str) -> str:
    """'des Strahlenschutzgesetzes' and 'Strahlenschutzgesetz' share one key."""
    text = _ARTICLE.sub("", text.strip())
    return " ".join(_stem_word(word) for word in re.findall(r"[\wÄÖÜäöüß\-]+", text))


def _parse(data: object, origin: str) -> list[RegistryEntry]:
    if not isinstance(data, dict) or not isinstance(data.get("collections"), dict):
        raise RegistryError(f"{origin}: expected an object with a 'collections' object")
    entries = []
    for collection, body in data["collections"].items():
        documents = body.get("documents") if isinstance(body, dict) else None
        if not isinstance(documents, list):
            raise RegistryError(f"{origin}: collections.{collection}.documents must be a list")
        for index, document in enumerate(documents):
            if not isinstance(document, dict) or not isinstance(document.get("filename"), str):
                raise RegistryError(
                    f"{origin}: collections.{collection}.documents[{index}] needs a 'filename' string"
                )
            synonyms = document.get("synonyms", [])
            if not isinstance(synonyms, list) or not all(isinstance(s, str) for s in synonyms):
                raise RegistryError(
                    f"{origin}: collections.{collection}.documents[{index}].synonyms must be a list of strings"
                )
            entries.append(RegistryEntry(document["filename"], collection, list(synonyms), "hand"))
    return entries


def load_registry_file(path: Path) -> list[RegistryEntry]:
    """Read a hand registry; a missing file is an empty registry, malformed JSON an error."""
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise RegistryError(
            f"Malformed document registry {path}: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from None
    return _parse(data, str(path))


def _is_abbreviation(name: str) -> bool:
    return " " not in name and sum(ch.isupper() for ch in name) >= 2


def _fuzzy_ratio(query: str, name: str) -> float:
    """Spelling similarity that a shared compound head cannot carry alone: "Kostenverordnung" is
    not "Meldeverordnung", and "Gesetz" is not "Atomgesetz", however much of the string they share.
    The heads are compared without their case endings: "Energiewirtschaftsgesetzes" shares the head
    "…wirtschaftsgesetz" with "Kreislaufwirtschaftsgesetz"."""
    query, name = inflection_key(query) or query, inflection_key(name) or name
    shared = 0
    while shared < min(len(query), len(name)) and query[-1 - shared] == name[-1 - shared]:
        shared += 1
    whole = difflib.SequenceMatcher(None, query, name).ratio()
    if shared < MIN_SHARED_SUFFIX:
        return whole
    query_head, name_head = query[: len(query) - shared], name[: len(name) - shared]
    if not query_head or not name_head:
        return 0.0 if query_head != name_head else whole
    return min(whole, difflib.SequenceMatcher(None, query_head, name_head).ratio())


class DocumentRegistry:
    def __init__(self, entries: list[RegistryEntry]):
        self.entries = entries
        self._exact: dict[str, tuple[str, str]] = {}
        self._inflected: dict[str, tuple[str, str]] = {}
        # abbreviations ("FUNDS", "StrlSchG"): in free text only their capitals make them names
        self._abbreviations: set[str] = set()
        # names written with capitals ("Groups", "Own Funds", "Strahlenschutzgesetz"): a phrase written all in
        # lower case ("an international group", "its own funds") uses the words, it does not name the document
        self._capitalised: set[str] = set()
        # the first word of a long name ("Kostenverordnung" of "Kostenverordnung zum Atomgesetz"), when it is
        # a compound act name and belongs to one document only
        head_documents: dict[str, set[tuple[str, str]]] = {}
        # auto entries first so hand entries overwrite them
        for entry in sorted(entries, key=lambda e: e.source != "auto"):
            target = (entry.filename, entry.collection)
            for name in [*entry.synonyms, Path(entry.filename).stem]:
                if name.strip():
                    self._exact[name.strip().lower()] = target
                    if name.strip() != name.strip().lower():
                        self._capitalised.update({name.strip().lower(), inflection_key(name)})
                    if _is_abbreviation(name.strip()):
                        self._abbreviations.add(name.strip().lower())
                    else:  # an abbreviation has no inflected forms: "the Fund" is not "FUNDS"
                        self._inflected[inflection_key(name)] = target
                    words = name.split()
                    if len(words) > 1 and _COMPOUND_ACT_NAME.match(words[0]):
                        head_documents.setdefault(inflection_key(words[0]), set()).add(target)
        self._heads = {key: next(iter(targets)) for key, targets in head_documents.items()
                       if len(targets) == 1 and key not in self._inflected}
        self._fuzzy: dict[str, tuple[str, str] | None] = {}

    @classmethod
    def merged(cls, hand: list[RegistryEntry], auto: list[RegistryEntry]) -> DocumentRegistry:
        by_doc: dict[tuple[str, str], RegistryEntry] = {}
        for entry in auto:
            by_doc[(entry.filename, entry.collection)] = RegistryEntry(
                entry.filename, entry.collection, list(entry.synonyms), "auto"
            )
        for entry in hand:
            key = (entry.filename, entry.collection)
            if key in by_doc:
                extra = [s for s in by_doc[key].synonyms if s.lower() not in {x.lower() for x in entry.synonyms}]
                by_doc[key] = RegistryEntry(entry.filename, entry.collection, entry.synonyms + extra, "hand")
            else:
                by_doc[key] = entry
        return cls(list(by_doc.values()))

    def to_json(self) -> dict:
        collections: dict[str, dict] = {}
        for entry in self.entries:
            collections.setdefault(entry.collection, {"documents": []})["documents"].append(
                {"filename": entry.filename, "synonyms": entry.synonyms}
            )
        return {"collections": collections}

    def filenames(self) -> list[str]:
        return sorted({entry.filename for entry in self.entries})

    def names_of(self, filename: str) -> str:
        """A document's short names (file stem and abbreviations), space-joined: what a lexical query adds
        when a question means that document."""
        names = [Path(filename).stem]
        for entry in self.entries:
            if entry.filename == filename:
                names += [name for name in entry.synonyms if _is_abbreviation(name.strip())]
        return " ".join(dict.fromkeys(names))

    def abbreviation_of(self, filename: str) -> str:
        """How a document is cited for short: its first abbreviation synonym, else its file stem."""
        for entry in self.entries:
            if entry.filename == filename:
                for name in entry.synonyms:
                    if _is_abbreviation(name.strip()) and " " not in name.strip():
                        return name.strip()
        return Path(filename).stem

    def display_name(self, filename: str) -> str:
        """How an answer names a document: its abbreviation ("StrlSchG", "SS1/21"), else its title when one
        is short enough to stand before a section number ("Allocation of Responsibilities"), else its file
        stem. A rulebook's files are named by machines ("ukfin_doc_170__pra-rules_allocation-of-…")."""
        stem = Path(filename).stem
        names = [" ".join(name.split()) for entry in self.entries if entry.filename == filename
                 for name in entry.synonyms]
        if any(_is_abbreviation(name) and " " not in name for name in names):
            return self.abbreviation_of(filename)
        return next((name for name in names if name != stem and "_" not in name and not _NO_TITLE.search(name)
                     and len(name) <= DISPLAY_NAME_MAX_CHARS), stem)

    def display_names(self, documents: Iterable[str]) -> dict[str, str]:
        """`display_name` of each document, once each (the synthesis request's `document_names`)."""
        return {document: self.display_name(document) for document in dict.fromkeys(documents)}

    def tagged(self, tag: str) -> set[str]:
        """The documents whose name carries `tag` in parentheses: a rulebook that split an act among its parts
        tags each part with it ("Disclosure (CRR)", "Trading Book (CRR)"), so an article "of the CRR" stands in
        one of them."""
        marker = f"({tag.strip()})".lower()
        return {entry.filename for entry in self.entries if any(marker in name.lower() for name in entry.synonyms)}

    def collection_of(self, filename: str) -> str | None:
        return next((e.collection for e in self.entries if e.filename == filename), None)

    def exact_or_inflected(self, text: str) -> tuple[str, str] | None:
        """Only the exact and inflection stages (no fuzzy guessing): for spotting names in free text."""
        lowered = text.strip().lower()
        if lowered in self._abbreviations and not _is_abbreviation(text.strip()):
            return None  # "funds" in a question is a word, "FUNDS" the rulebook
        if text.strip() == lowered and (lowered in self._capitalised or inflection_key(text) in self._capitalised):
            return None  # "its own funds" uses words; "the Own Funds Part" names the document
        if lowered in self._exact:
            return self._exact[lowered]
        if len(lowered) < 5:
            return None  # short words ("und", "AtG"-like noise) only match exactly
        key = inflection_key(text)
        if key in self._inflected:
            return self._inflected[key]
        if " " not in text.strip() and text.strip()[:1].isupper():  # a noun: "die Kostenverordnung"
            return self._heads.get(key)
        return None

    def _fuzzy_match(self, name: str) -> tuple[str, str] | None:
        best, best_ratio = None, 0.0
        for known, target in self._exact.items():
            ratio = _fuzzy_ratio(name, known)
            if ratio > best_ratio:
                best, best_ratio = target, ratio
        return best if best is not None and best_ratio >= FUZZY_THRESHOLD else None

    def exact_document_name(self, text: str | None) -> tuple[str | None, str | None]:
        """The document whose whole name (a synonym, with or without an article) is `text`, else none."""
        if not text or not text.strip():
            return None, None
        query = text.strip().strip(".,;:()")
        for key in (query.lower(), _ARTICLE.sub("", query).lower()):
            if key in self._exact:
                return self._exact[key]
        return None, None

    def resolve_document_name(self, text: str | None) -> tuple[str | None, str | None]:
        """exact synonym > inflected form > head word of one document's long name > fuzzy >= 0.7 >
        substring of a file name. A generic act word alone ("Verordnung") names nothing."""
        if not text or not text.strip():
            return None, None
        exact = self.exact_document_name(text)
        if exact[0]:
            return exact
        query = text.strip().strip(".,;:()")
        without_article = _ARTICLE.sub("", query).lower()
        key = inflection_key(query)
        if key in self._inflected:
            return self._inflected[key]
        if key in GENERIC_ACT_WORDS or without_article in GENERIC_ACT_WORDS:
            return None, None
        if key in self._heads:
            return self._heads[key]
        if without_article not in self._fuzzy:  # the fuzzy stage compares with every name: once per name asked
            self._fuzzy[without_article] = self._fuzzy_match(without_article)
        if self._fuzzy[without_article] is not None:
            return self._fuzzy[without_article]
        if len(without_article) >= 3:
            for entry in self.entries:
                stem = Path(entry.filename).stem.lower()
                if without_article == stem or (len(stem) >= 3 and stem in without_article.split()):
                    return entry.filename, entry.collection
            for entry in self.entries:
                if without_article in Path(entry.filename).stem.lower():
                    return entry.filename, entry.collection
        return None, None
