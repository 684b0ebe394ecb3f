"""Lexical analysis and BM25 (bm25s), one index per collection with two fields.

Analysis uses maintained libraries only: stop words from bm25s, German compounds split by
`compound-split` (n-gram statistics of German; "Dosisgrenzwerte" -> dosis + grenzwert), Snowball
stemming (PyStemmer). Section labels become one token each ("§ 78" -> "§78"), so a query for
"§ 78" matches that section instead of every "78".

Fields: the body (chunk text and document name) and the heading (section title, plus the terms a
definitions section defines: "(7) Beruflich exponierte Person: ..." makes the chunk findable by
"beruflich exponierte Person"). A chunk's score is the body's score plus the heading's, weighted by how
much a title belongs to one block in this collection (`heading_weight`).
"""

from __future__ import annotations

import json
import logging
import re
import statistics
import sys
from collections import defaultdict
from functools import lru_cache
from pathlib import Path

import numpy as np

from rabbithole_lab.kb.ingest.sections import label_tokens
from rabbithole_lab.language import code_of_stemmer, patterns, profile
from rabbithole_lab.language.detection import collection_language

logger = logging.getLogger(__name__)

ANALYZER_VERSION = 3  # bump when analysis changes: stored indexes are rebuilt from the chunks
_WORD = re.compile(r"\w+", re.UNICODE)
# compound-split scores a split by how well head and tail occur as words of their own; short words
# and short parts are where it errs ("Ver|wahrung"), so only long words are split into long parts
MIN_COMPOUND_CHARS = 10
MIN_PART_CHARS = 4


@lru_cache(maxsize=1)
def _bm25s():
    """bm25s, imported once. It sets its own logger to DEBUG on import, which would print its index-building
    notes on every ingest: they show only when the run's logging asks for debug output (`--verbose`)."""
    import bm25s

    if logging.getLogger().getEffectiveLevel() > logging.DEBUG:
        logging.getLogger("bm25s").setLevel(logging.WARNING)
    return bm25s


@lru_cache(maxsize=4)
def _stemmer(language: str):
    """Snowball's stemmer of the language `language` ("de"/"en") names."""
    import Stemmer

    return Stemmer.Stemmer(profile(language).SNOWBALL_STEMMER)


@lru_cache(maxsize=2)
def stopwords(language: str) -> frozenset[str]:
    """bm25s's stop words of `language` ("de"/"en")."""
    from bm25s import stopwords as lists

    return frozenset(getattr(lists, profile(language).STOP_WORDS))


@lru_cache(maxsize=1)
def _char_split():
    """compound-split's splitter with its German tables only. Its module also imports the Dutch tables,
    which German analysis never reads (110 MB and a second of import); an empty stand-in takes their place
    unless something else loaded them already."""
    import types

    dutch = "compound_split.nl_ngram_probs"
    if dutch not in sys.modules:
        stand_in = types.ModuleType(dutch)
        stand_in.prefix, stand_in.infix, stand_in.suffix = {}, {}, {}
        sys.modules[dutch] = stand_in
    from compound_split import char_split

    return char_split


@lru_cache(maxsize=200_000)
def compound_parts(word: str) -> tuple[str, ...]:
    """The parts of a German compound, recursively ("abfallwirtschaftsplan" -> abfall, wirtschaft, plan);
    () when the word is not one."""
    if len(word) < MIN_COMPOUND_CHARS or not word.isalpha():
        return ()
    char_split = _char_split()

    score, head, tail = char_split.split_compound(word)[0]
    head, tail = head.lower(), tail.lower()
    if score <= 0 or len(head) < MIN_PART_CHARS or len(tail) < MIN_PART_CHARS:
        return ()
    if head.endswith("s") and len(head) > MIN_PART_CHARS:
        head = head[:-1]  # the linking s ("Genehmigungs|verfahren")
    parts: list[str] = []
    for part in (head, tail):
        parts.extend(compound_parts(part) or (part,))
    return tuple(parts)


def words(text: str, language: str = "de") -> list[str]:
    """Lower-cased words without stop words; in a language that writes compounds (German), each followed by
    its parts."""
    stop = stopwords(language)
    splits = profile(language).SPLITS_COMPOUNDS
    out: list[str] = []
    for word in _WORD.findall(text.lower()):
        if word in stop:
            continue
        out.append(word)
        if splits:
            out.extend(compound_parts(word))
    return out


def analyze(text: str, language: str = "de") -> list[str]:
    """The tokens BM25 and keyword overlap compare: stemmed words and compound parts, section labels."""
    return _stemmer(language).stemWords(words(text, language)) + label_tokens(text)


def content_terms(text: str, language: str = "de") -> set[str]:
    """Stemmed words that carry content: no stop words, no bare numbers, no one- or two-letter tokens."""
    return {token for token in analyze(text, language) if len(token) > 2 and not token.isdigit()}


# A definitions section names each defined term at the start of an item: "(7) Beruflich exponierte Person:",
# "3. Abfälle: ...", "Einrichtungen im Sinne dieses Gesetzes sind ..."
_DEFINITION_ITEM = re.compile(r"^\s*(?:\(\d+[a-z]?\)|\d+[a-z]?\.)\s+(?P<term>[A-ZÄÖÜ][^:\n]{2,80}?):", re.MULTILINE)
_DEFINED_IN_THE_SENSE = patterns.defined_in_the_sense()


def defined_terms(text: str, heading: str = "") -> list[str]:
    """The terms a definitions passage defines, as written."""
    terms = [match.group("term").strip() for match in _DEFINED_IN_THE_SENSE.finditer(text)]
    if "begriffsbestimmung" in heading.lower() or "im Sinne dieses" in text or "im Sinne dieser" in text:
        terms += [match.group("term").strip() for match in _DEFINITION_ITEM.finditer(text)]
    return list(dict.fromkeys(terms))


_PASSAGE_ID = re.compile(r"\[PID [^\]]+\]")
_TITLE_WORD = re.compile(r"[^\W\d_]{2,}")


def title_words(heading: str) -> str:
    """A heading's words without its numbers and passage id: "4.1 (Chapter 4 Key Functions)" and "4.2 (Chapter
    4 Key Functions)" share the title "chapter key functions"."""
    return " ".join(_TITLE_WORD.findall(_PASSAGE_ID.sub(" ", heading).lower()))


def heading_weight(docs: list[str], headings: list[str]) -> float:
    """How much the heading field counts beside the body: 1 / the median number of blocks (distinct headings)
    that share a title within a document. A law's section titles are its own (one block each: 1); a rulebook
    that heads each of its passages with its chapter's title ("4.1 (Chapter 4 …)", "4.2 (Chapter 4 …)", …)
    shares one title among many passages, and a title shared by fifteen says little about any one of them (on
    UKFIN the heading field at full weight put whole chapters above the passage that answers)."""
    blocks: dict[tuple[str, str], set[str]] = defaultdict(set)
    for doc, heading in zip(docs, headings, strict=True):
        title = title_words(heading)
        if title:
            blocks[(doc, title)].add(heading)
    shared = [len(blocks[(doc, title_words(heading))]) for doc, heading in zip(docs, headings, strict=True)
              if title_words(heading)]
    return 1.0 / statistics.median(shared) if shared else 1.0


class Bm25Index:
    """A two-field BM25 index (body, heading) with its chunk ids and docs in index order."""

    def __init__(self, ids: list[str], docs: list[str], language: str, body=None, heading=None,
                 heading_weight: float = 1.0):
        self.ids = ids
        self.docs = docs
        self.language = language
        self._body = body
        self._heading = heading
        self.heading_weight = heading_weight
        self._doc_array = np.array(docs, dtype=object)

    @classmethod
    def build(
        cls,
        ids: list[str],
        texts: list[str],
        docs: list[str],
        headings: list[str] | None = None,
        language: str | None = None,
    ) -> Bm25Index:
        bm25s = _bm25s()
        language = language or collection_language(texts)
        headings = headings or [""] * len(texts)
        # tokens interned: a collection's token lists hold millions of repeats of a few thousand words, and
        # one string object per occurrence took about 0.8 GB at 46,000 chunks
        body_corpus, heading_corpus = [], []
        for text, heading, doc in zip(texts, headings, docs, strict=True):
            tokens = analyze(text, language) + analyze(doc.rsplit(".", 1)[0], language) or ["\u2205"]
            body_corpus.append([sys.intern(token) for token in tokens])
            field = " ".join([heading, *defined_terms(text, heading)])
            heading_corpus.append([sys.intern(token) for token in analyze(field, language) or ["\u2205"]])
        body = heading_index = None
        if ids:
            body = bm25s.BM25()
            body.index(body_corpus, show_progress=False)
            del body_corpus
            heading_index = bm25s.BM25()
            heading_index.index(heading_corpus, show_progress=False)
        return cls(ids, docs, language, body, heading_index, heading_weight(docs, headings))

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        if self._body is not None:
            self._body.save(str(folder / "bm25"))
            self._heading.save(str(folder / "bm25_heading"))
        (folder / "meta.json").write_text(
            json.dumps({"ids": self.ids, "docs": self.docs, "language": self.language, "analyzer": ANALYZER_VERSION,
                        "heading_weight": self.heading_weight}),
            encoding="utf-8",
        )

    @classmethod
    def load(cls, folder: Path) -> Bm25Index | None:
        """The stored index, or None when there is none or it was built by another analyzer."""
        bm25s = _bm25s()
        meta_path = folder / "meta.json"
        if not meta_path.exists():
            return None
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if meta.get("analyzer") != ANALYZER_VERSION:
            return None
        language = code_of_stemmer(meta["language"])  # an index stored before codes names its stemmer
        if not meta["ids"]:
            return cls([], [], language)
        # memory-mapped: a large collection's score matrices are paged in as queries touch them
        return cls(meta["ids"], meta["docs"], language, bm25s.BM25.load(str(folder / "bm25"), mmap=True),
                   bm25s.BM25.load(str(folder / "bm25_heading"), mmap=True), meta.get("heading_weight", 1.0))

    def holds_words(self, text: str) -> bool:
        """Every word of `text` stands in the indexed text, in any inflection or as a part of a compound (the
        index holds compounds' parts): "Mitarbeiter" for a text with "Mitarbeiterinnen"."""
        if self._body is None:
            return False
        stop = stopwords(self.language)
        stems = _stemmer(self.language).stemWords([word for word in _WORD.findall(text.lower()) if word not in stop])
        return bool(stems) and all(stem in self._body.vocab_dict for stem in stems)

    def chunks_holding(self, word: str) -> int:
        """How many indexed chunks hold `word` (any inflection; as the whole word, not a compound's part)."""
        tokens = analyze(word, self.language)
        position = self._body.vocab_dict.get(tokens[0]) if self._body is not None and tokens else None
        if position is None:
            return 0
        pointers = self._body.scores["indptr"]  # the score matrix is column-per-token: a column's length is its df
        return int(pointers[position + 1] - pointers[position])

    def search(self, query: str, k: int, doc: str | None = None,
               fields: tuple[str, ...] = ("body", "heading")) -> list[tuple[str, float]]:
        """The best k chunks for `query`, optionally in one document. The score is the sum of the
        fields' BM25 scores (BM25F with unit weights): a term in the title counts on top of the text."""
        scores: np.ndarray | None = None
        for field in fields:
            retriever = self._body if field == "body" else self._heading
            if retriever is None:
                continue
            tokens = [t for t in analyze(query, self.language) if t in retriever.vocab_dict]
            if not tokens:
                continue
            field_scores = np.asarray(retriever.get_scores(tokens), dtype=np.float32)
            if field == "heading":
                field_scores *= self.heading_weight
            scores = field_scores if scores is None else scores + field_scores
        if scores is None:
            return []
        if doc is not None:
            scores = np.where(self._doc_array == doc, scores, 0.0)
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        top = top[np.argsort(-scores[top])]
        return [(self.ids[i], float(scores[i])) for i in top if scores[i] > 0]
