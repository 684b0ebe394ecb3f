"""Vectors of texts embedded before, kept on disk: a text is embedded once per model, not once per ingest.

A researcher re-ingests after a chunker change, ingests the same rulebook into a second knowledge base, or
re-runs research whose sentences were read before; the embedder's answer for a text never changes, so it is
asked once. The store is one SQLite file per embedder (its backend, model, engine and model file), keyed by a
hash of the text and of whether it is read as a passage or a query: no document text is stored, only vectors.

The cache only ever saves work. A store that cannot be opened, read or written (a locked or corrupt file, a
full disk) is reported once and then bypassed; the vectors are computed as if it were not there. It holds at
most `max_mb` (`EMBEDDING_VECTOR_CACHE_MAX_MB`): beyond it the vectors stored first make room, so a
machine that ingests collection after collection does not fill its disk with them.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import threading
from pathlib import Path

import numpy as np

from rabbithole_lab.kb.embedding.embedder import QueryCache
from rabbithole_lab.support.cache_dirs import machine_cache

logger = logging.getLogger(__name__)

BUSY_TIMEOUT_S = 30.0  # another process (a test worker, an ingest shard) may hold the write lock this long
KEEP_SHARE = 0.8  # a store over its limit is trimmed to this share of it (not at every write after)
PASSAGE, QUERY = "passage", "query"


def default_folder() -> Path:
    return machine_cache("vectors")


def store_name(fingerprint: str) -> str:
    """The store's file name: readable model name, and a hash of everything that makes its vectors."""
    readable = "".join(c if c.isalnum() or c in "-_." else "_" for c in fingerprint.split(":")[1])[-40:]
    return f"{readable}-{hashlib.sha256(fingerprint.encode()).hexdigest()[:16]}.sqlite3"


class VectorStore:
    """Vectors by text hash in one SQLite file, shared by the processes and threads of one machine."""

    def __init__(self, path: Path, max_mb: float | None = None):
        self.path = path
        self.max_mb = max_mb  # None: no limit
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self._pid = 0
        self.broken = False

    @staticmethod
    def key(kind: str, text: str) -> bytes:
        return hashlib.sha256(f"{kind}\0{text}".encode()).digest()

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None or self._pid != os.getpid():  # a forked child opens its own
            self.path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, check_same_thread=False)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vector BLOB NOT NULL)")
            self._connection, self._pid = connection, os.getpid()
        return self._connection

    def _fail(self, exc: Exception) -> None:
        if not self.broken:
            logger.warning("The vector cache %s is not usable (%s): embedding without it; delete the file or set "
                           "EMBEDDING_VECTOR_CACHE=off", self.path, exc)
        self.broken = True

    def get(self, keys: list[bytes]) -> dict[bytes, np.ndarray]:
        if self.broken or not keys or not self.path.exists():  # made by the first `put`, not by a lookup
            return {}
        found: dict[bytes, np.ndarray] = {}
        try:
            with self._lock:
                connection = self._connect()
                for start in range(0, len(keys), 500):  # SQLite's variable limit
                    part = keys[start:start + 500]
                    rows = connection.execute(
                        f"SELECT key, vector FROM vectors WHERE key IN ({','.join('?' * len(part))})", part)
                    found.update((key, np.frombuffer(vector, dtype=np.float32)) for key, vector in rows)
        except (sqlite3.Error, OSError) as exc:
            self._fail(exc)
            return {}
        return found

    def put(self, vectors: dict[bytes, np.ndarray]) -> None:
        if self.broken or not vectors:
            return
        try:
            with self._lock:
                connection = self._connect()
                with connection:
                    connection.executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?)", [
                        (key, np.ascontiguousarray(vector, dtype=np.float32).tobytes())
                        for key, vector in vectors.items()])
                    if self.max_mb is not None:
                        self._trim(connection, self.max_mb)
        except (sqlite3.Error, OSError) as exc:
            self._fail(exc)

    @staticmethod
    def _trim(connection: sqlite3.Connection, max_mb: float) -> None:
        """Over `max_mb`: the vectors stored first go until the store holds `KEEP_SHARE` of it (the freed
        pages are written over by the next vectors, so the file stays at its limit)."""
        page_size = connection.execute("PRAGMA page_size").fetchone()[0]
        pages = connection.execute("PRAGMA page_count").fetchone()[0] - connection.execute(
            "PRAGMA freelist_count").fetchone()[0]
        used, limit = pages * page_size, max_mb * 2**20  # pages in use: no scan of the table
        if used <= limit:
            return
        count = connection.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
        drop = count - int(count * KEEP_SHARE * limit / used)
        connection.execute("DELETE FROM vectors WHERE rowid IN (SELECT rowid FROM vectors ORDER BY rowid LIMIT ?)",
                           (drop,))
        logger.info("The vector cache was over %.0f MB: the %d vectors stored first were removed", max_mb, drop)


class CachedEmbedder:
    """An embedder whose passages and queries are looked up in a `VectorStore` before they are embedded.

    Everything else (its name, languages, band, the backend's own methods) is the wrapped embedder's."""

    def __init__(self, embedder, store: VectorStore):
        self._embedder = embedder
        self.store = store
        self.name, self.backend = embedder.name, embedder.backend
        self.languages, self.band = embedder.languages, embedder.band
        self._queries = QueryCache()

    def __getattr__(self, name: str):
        if name == "_embedder":  # a copy being built has none yet (copy.copy asks before it sets the state)
            raise AttributeError(name)
        return getattr(self._embedder, name)

    def _vectors(self, kind: str, texts: list[str], embed) -> np.ndarray:
        keys = [VectorStore.key(kind, text) for text in texts]
        known = self.store.get(list(dict.fromkeys(keys)))
        todo = {key: text for key, text in zip(keys, texts, strict=True) if key not in known}  # each text once
        if todo:
            fresh = dict(zip(todo, embed(list(todo.values())), strict=True))
            self.store.put(fresh)
            known.update(fresh)
        return np.stack([known[key] for key in keys]).astype(np.float32, copy=False)

    def embed_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        if not texts:
            return self._embedder.embed_documents(texts)
        return self._vectors(PASSAGE, texts, lambda todo: self._embedder.embed_documents(todo, show_progress))

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return self._embedder.embed_queries(texts)
        return self._vectors(QUERY, texts, self._embedder.embed_queries)

    def embed_query(self, text: str) -> np.ndarray:
        return self._queries.vector(text, self.embed_queries)
