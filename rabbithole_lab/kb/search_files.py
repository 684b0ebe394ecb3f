"""The lexical/vector-file store: per collection, a BM25 index and the dense vectors in the same order,
in one folder beside Chroma's (`<db>/bm25/<collection>`). Written together, swapped in whole, read
memory-mapped, so a search needs no read of every chunk from Chroma. Chroma (kb/index.py) stays the
store of record: these files are rebuilt from it whenever they are missing or out of step."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

from rabbithole_lab.kb.lexical import Bm25Index
from rabbithole_lab.records import Chunk

VECTORS_FILE = "vectors.npy"  # beside the BM25 index: the dense vectors in the order of its ids


class VectorSnapshot:
    """A collection's normalised vectors for exact dense search, in the order of its BM25 ids.

    The vectors are a file beside the BM25 index (written with it after every ingest), read memory-mapped:
    opening a 46,000-chunk collection costs no read of every chunk from Chroma, and the chunks' texts stay
    in Chroma until a search returns them (`chunks`, a bounded cache)."""

    MAX_CACHED_CHUNKS = 20_000

    def __init__(self, ids: list[str], docs: list[str], vectors: np.ndarray):
        self.ids = ids
        self.vectors = vectors
        self.docs = np.array(docs, dtype=object)
        self.rows = {cid: index for index, cid in enumerate(ids)}
        self.chunks: dict[str, Chunk] = {}

    def remember(self, chunks: list[Chunk]) -> None:
        if len(self.chunks) + len(chunks) > self.MAX_CACHED_CHUNKS:
            self.chunks.clear()
        self.chunks.update((chunk.id, chunk) for chunk in chunks)


class SearchFiles:
    """The BM25 and vector files of every collection under `root`, with what is loaded of them."""

    def __init__(self, root: Path, in_memory_max_chunks: int):
        self.root = Path(root)
        # Up to this many chunks a collection is searched exactly in memory (faster than an HNSW round trip)
        self.in_memory_max_chunks = in_memory_max_chunks
        self._bm25: dict[str, Bm25Index] = {}
        self._snapshots: dict[str, VectorSnapshot | None] = {}
        self._lock = threading.Lock()

    def folder(self, name: str) -> Path:
        return self.root / name

    def write(self, collection: str, name: str, ids: list[str], texts: list[str], docs: list[str],
              headings: list[str], vectors: np.ndarray) -> Bm25Index:
        """Build and save a collection's files: written beside the old ones, then swapped in."""
        bm25 = Bm25Index.build(ids, texts, docs, headings=headings)
        folder = self.folder(name)
        partial = folder.with_name(f"{folder.name}.partial-{os.getpid()}")
        shutil.rmtree(partial, ignore_errors=True)
        bm25.save(partial)
        np.save(partial / VECTORS_FILE, vectors)
        if folder.exists():
            shutil.rmtree(folder)
        partial.rename(folder)
        with self._lock:
            self._bm25[collection] = bm25
            self._snapshots.pop(collection, None)
        return bm25

    def bm25(self, collection: str, name: str, count: Callable[[], int],
             rebuild: Callable[[], Bm25Index]) -> Bm25Index:
        """The collection's BM25 index; `rebuild` when its files are missing or hold another number of
        chunks than the store (`count`)."""
        with self._lock:
            cached = self._bm25.get(collection)
        if cached is not None:
            return cached
        folder = self.folder(name)
        loaded = Bm25Index.load(folder)
        if loaded is None or not (folder / VECTORS_FILE).exists() or count() != len(loaded.ids):
            return rebuild()
        with self._lock:
            self._bm25[collection] = loaded
        return loaded

    def snapshot(self, collection: str, name: str, load_bm25: Callable[[], Bm25Index]) -> VectorSnapshot | None:
        """The vectors for exact search in memory, or None for a collection too large (or out of step).
        The BM25 files are loaded (or rebuilt when missing or stale) before the vectors beside them."""
        if collection in self._snapshots:
            return self._snapshots[collection]
        snapshot = None
        bm25 = load_bm25()
        if len(bm25.ids) <= self.in_memory_max_chunks:
            vectors = np.load(self.folder(name) / VECTORS_FILE, mmap_mode="r")
            if vectors.shape[0] == len(bm25.ids):
                snapshot = VectorSnapshot(bm25.ids, bm25.docs, vectors)
        with self._lock:
            self._snapshots[collection] = snapshot
        return snapshot

    def forget_vectors(self, collection: str) -> None:
        """The store changed: the in-memory vectors are stale until the files are rebuilt."""
        with self._lock:
            self._snapshots.pop(collection, None)

    def drop(self, collection: str, name: str) -> None:
        """The collection's vectors changed (re-embedded): its files are stale."""
        with self._lock:
            self._bm25.pop(collection, None)
            self._snapshots.pop(collection, None)
        shutil.rmtree(self.folder(name), ignore_errors=True)
