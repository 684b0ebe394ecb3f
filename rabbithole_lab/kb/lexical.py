"""BM25 over stemmed tokens (bm25s), one index per collection.

Tokens keep single digits and add fused section tokens ("§ 78" -> "§78"), so a
query for "§ 78" matches that section exactly instead of every "78".
"""

from __future__ import annotations

import json
import logging
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

logger = logging.getLogger(__name__)

_WORD = re.compile(r"\w+", re.UNICODE)
_SECTION_TOKEN = re.compile(r"(§§?|Art\.|Artikel|Anlage)\s*(\d+[a-z]?)", re.IGNORECASE)
_GERMAN_MARKERS = {"der", "die", "das", "und", "nach", "für", "des", "ist", "nicht", "oder", "wird", "von"}
_ENGLISH_MARKERS = {"the", "and", "of", "to", "is", "for", "in", "be", "or", "that", "with", "by"}
_STOPWORDS = {
    "german": {"der", "die", "das", "und", "oder", "des", "den", "dem", "ein", "eine", "einer", "eines",
               "zu", "zur", "zum", "im", "in", "ist", "sind", "wird", "werden", "mit", "von", "auf",
               "für", "als", "an", "bei", "nach", "sich", "auch", "so", "wie", "welche", "welcher",
               "welches", "was", "wer", "es", "sie", "er", "wir", "ich", "nicht", "dass"},
    "english": {"the", "a", "an", "and", "or", "of", "to", "in", "is", "are", "be", "for", "on", "by",
                "with", "as", "at", "that", "this", "which", "what", "who", "it", "from", "its"},
}


def guess_stemmer_language(texts: list[str]) -> str:
    german = english = 0
    for text in texts[:200]:
        words = _WORD.findall(text.lower())
        german += sum(1 for w in words if w in _GERMAN_MARKERS)
        english += sum(1 for w in words if w in _ENGLISH_MARKERS)
    return "english" if english > german else "german"


@lru_cache(maxsize=4)
def _stemmer(language: str):
    import Stemmer

    return Stemmer.Stemmer(language)


def section_tokens(text: str) -> list[str]:
    tokens = []
    for unit, number in _SECTION_TOKEN.findall(text):
        key = {"§§": "§", "art.": "art", "artikel": "art"}.get(unit.lower(), unit.lower())
        tokens.append(f"{key}{number.lower()}")
    return tokens


def tokenize(text: str, language: str = "german", splitter: CompoundSplitter | None = None) -> list[str]:
    lowered = text.lower()
    stopwords = _STOPWORDS.get(language, set())
    words = [w for w in _WORD.findall(lowered) if w not in stopwords]
    tokens = _stemmer(language).stemWords(words)
    if splitter is not None:
        tokens = tokens + [part for token in tokens for part in splitter.split(token)]
    return tokens + section_tokens(text)


class CompoundSplitter:
    """Splits German compounds against the corpus vocabulary.

    "dosisgrenzwert" -> ["dosis", "grenzwert"] when both parts occur as words of
    their own, so "Dosisgrenzwerte" finds "Grenzwerte" and vice versa.
    """

    MIN_WORD = 9
    MIN_PART = 4

    def __init__(self, vocabulary: set[str]):
        self.vocabulary = vocabulary

    @classmethod
    def from_texts(cls, token_lists: list[list[str]], min_count: int = 2) -> CompoundSplitter:
        counts: dict[str, int] = {}
        for tokens in token_lists:
            for token in set(tokens):
                if token.isalpha():
                    counts[token] = counts.get(token, 0) + 1
        return cls({token for token, count in counts.items() if count >= min_count and len(token) >= cls.MIN_PART})

    def split(self, token: str) -> list[str]:
        if len(token) < self.MIN_WORD or not token.isalpha():
            return []
        for cut in range(self.MIN_PART, len(token) - self.MIN_PART + 1):
            head, tail = token[:cut], token[cut:]
            if tail not in self.vocabulary:
                continue
            for candidate in (head, head[:-1] if head.endswith("s") else None, head[:-2] if head.endswith("es") else None):
                if candidate and len(candidate) >= 3 and candidate in self.vocabulary:
                    return [candidate, tail]
            return [tail]
        return []


class Bm25Index:
    """A BM25 index with its chunk ids and docs in index order."""

    def __init__(
        self,
        ids: list[str],
        docs: list[str],
        language: str,
        retriever=None,
        splitter: CompoundSplitter | None = None,
    ):
        self.ids = ids
        self.docs = docs
        self.language = language
        self._retriever = retriever
        self.splitter = splitter or CompoundSplitter(set())
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
        """Index texts; a chunk's heading counts twice and its own section gets an 'h' token."""
        import bm25s

        language = language or guess_stemmer_language(texts)
        headings = headings or [""] * len(texts)
        plain = [tokenize(text, language) for text in texts]
        splitter = CompoundSplitter.from_texts(plain) if language == "german" else CompoundSplitter(set())
        corpus = []
        for text, heading, doc in zip(texts, headings, docs, strict=True):
            tokens = tokenize(text, language, splitter) + tokenize(doc.rsplit(".", 1)[0], language)
            if heading:
                tokens += tokenize(heading, language, splitter)
                tokens += ["h" + token for token in section_tokens(heading)[:1]]
            corpus.append(tokens or ["\u2205"])
        retriever = None
        if ids:
            retriever = bm25s.BM25()
            retriever.index(corpus, show_progress=False)
        return cls(ids, docs, language, retriever, splitter)

    def query_tokens(self, query: str) -> list[str]:
        tokens = tokenize(query, self.language, self.splitter)
        return tokens + ["h" + token for token in section_tokens(query)]

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        if self._retriever is not None:
            self._retriever.save(str(folder / "bm25"))
        (folder / "meta.json").write_text(
            json.dumps(
                {
                    "ids": self.ids,
                    "docs": self.docs,
                    "language": self.language,
                    "compound_vocabulary": sorted(self.splitter.vocabulary),
                }
            ),
            encoding="utf-8",
        )

    @classmethod
    def load(cls, folder: Path) -> Bm25Index | None:
        import bm25s

        meta_path = folder / "meta.json"
        if not meta_path.exists():
            return None
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        retriever = bm25s.BM25.load(str(folder / "bm25")) if meta["ids"] else None
        splitter = CompoundSplitter(set(meta.get("compound_vocabulary", [])))
        return cls(meta["ids"], meta["docs"], meta["language"], retriever, splitter)

    def search(self, query: str, k: int, doc: str | None = None) -> list[tuple[str, float]]:
        if self._retriever is None:
            return []
        tokens = [t for t in self.query_tokens(query) if t in self._retriever.vocab_dict]
        if not tokens:
            return []
        scores = np.asarray(self._retriever.get_scores(tokens), dtype=np.float32)
        if doc is not None:
            scores = np.where(self._doc_array == doc, scores, 0.0)
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        top = top[np.argsort(-scores[top])]
        return [(self.ids[i], float(scores[i])) for i in top if scores[i] > 0]
