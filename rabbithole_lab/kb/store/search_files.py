"""The lexical/vector-file store: per collection, a BM25 index and the dense vectors in the same order,
in one folder beside Chroma's (`<db>/bm25/<collection>`). Written together, swapped in whole, read
memory-mapped, so a search needs no read of every chunk from Chroma. Chroma (kb/store/index.py) stays the
store of record: these files are rebuilt from it whenever they are missing or out of step."""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from rabbithole_lab.kb.ingest.ingest_lock import writer_lock_if_free
from rabbithole_lab.kb.retrieval.lexical import ANALYZER_VERSION, Bm25Index
from rabbithole_lab.records import Chunk

logger = logging.getLogger(__name__)

VECTORS_FILE = "vectors.npy"  # beside the BM25 index: the dense vectors in the order of its ids
STATE_FILE = "state.json"  # how many chunks the store held when the files were built
STALE_SUFFIX = ".stale"


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
    """The BM25 and vector files of every collection under `root`, with what is loaded of them.

    A collection's files live in a folder of their own generation; `<root>/<name>` is a symlink to the
    current one, replaced atomically, so a reader opens a complete generation or the one before, never a
    half-written one. An ingest marks a collection's files stale before it changes the store
    (`<name>.stale`) and the rebuild clears the mark; only a process holding the ingest lock rebuilds."""

    def __init__(self, root: Path, in_memory_max_chunks: int, db_path: Path | None = None, read_only: bool = False):
        self.root = Path(root)
        self.read_only = read_only  # a reader's: files out of step are rebuilt in memory, nothing is written
        self.db_path = Path(db_path) if db_path else self.root.parent
        # Up to this many chunks a collection is searched exactly in memory (faster than an HNSW round trip)
        self.in_memory_max_chunks = in_memory_max_chunks
        self._bm25: dict[str, Bm25Index] = {}
        self._generations: dict[str, Path] = {}  # the folder each loaded index was read from
        self._snapshots: dict[str, VectorSnapshot | None] = {}
        self._lock = threading.Lock()

    def folder(self, name: str) -> Path:
        return self.root / name

    def _stale_mark(self, name: str) -> Path:
        return self.root / f"{name}{STALE_SUFFIX}"

    def mark_stale(self, collection: str, name: str) -> None:
        """The store is about to change: the files are out of step until the next rebuild."""
        self.forget_vectors(collection)
        if self.read_only:
            return
        self.root.mkdir(parents=True, exist_ok=True)
        self._stale_mark(name).touch()
        self.forget_vectors(collection)

    def write(self, collection: str, name: str, ids: list[str], texts: list[str], docs: list[str],
              headings: list[str], vectors: np.ndarray, store_count: int, store_id: str = "",
              save: bool = True) -> Bm25Index:
        """Build a collection's files and (with `save`) swap them in as its current generation."""
        bm25 = Bm25Index.build(ids, texts, docs, headings=headings)
        generation = None
        if save:
            generation = self._swap_in(name, bm25, vectors, {"store_count": store_count, "store_id": store_id})
        with self._lock:
            self._bm25[collection] = bm25
            self._snapshots.pop(collection, None)
            if generation is not None:
                self._generations[collection] = generation
            else:  # built in memory only (another process is writing): its vectors are those given
                self._generations.pop(collection, None)
                self._snapshots[collection] = (VectorSnapshot(bm25.ids, bm25.docs, vectors)
                                               if len(ids) <= self.in_memory_max_chunks else None)
        return bm25

    def _swap_in(self, name: str, bm25: Bm25Index, vectors: np.ndarray, state: dict) -> Path:
        folder = self.folder(name)
        generation = folder.with_name(f"{folder.name}.gen-{os.getpid()}-{time.time_ns()}")
        bm25.save(generation)
        np.save(generation / VECTORS_FILE, vectors)
        (generation / STATE_FILE).write_text(json.dumps(state), encoding="utf-8")
        previous = folder.resolve() if folder.is_symlink() else None
        if folder.exists() and not folder.is_symlink():  # the layout before generations: a plain folder
            shutil.rmtree(folder)
        link = folder.with_name(f"{folder.name}.link-{os.getpid()}")
        link.unlink(missing_ok=True)
        os.symlink(generation.name, link)
        os.replace(link, folder)  # atomic: readers see the old generation or the new one
        self._stale_mark(name).unlink(missing_ok=True)
        if previous is not None and previous != generation:
            shutil.rmtree(previous, ignore_errors=True)  # a reader's memory maps outlive the unlink
        for leftover in self.root.glob(f"{name}.partial-*"):  # the layout before generations
            shutil.rmtree(leftover, ignore_errors=True)
        return generation

    def in_step(self, collection: str, name: str, count: int, store_id: str) -> bool:
        """Whether the files hold what the store holds: present, built by this analyzer, not marked
        stale, and built from this very store collection (`store_id`) when it held `count` chunks. Files
        built from a collection the store has lost (deleted, made again) are out of step, with a warning."""
        folder = self.folder(name)
        if self._stale_mark(name).exists() or not (folder / VECTORS_FILE).exists():
            return False
        try:
            state = json.loads((folder / STATE_FILE).read_text(encoding="utf-8"))
            meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        if state.get("store_id") and state["store_id"] != store_id:
            logger.warning("The search files of collection %s were built from a store collection that is gone "
                           "(the store's collection was deleted or made again); rebuilding them", collection)
            return False
        return (meta.get("analyzer") == ANALYZER_VERSION and state.get("store_count") == count
                and state.get("store_id") == store_id)  # files from before ids were recorded are rebuilt

    def damaged(self, name: str) -> bool:
        """The current generation's vectors cannot be read (truncated, overwritten): an ingest rebuilds them (a
        reader only works around them in memory, it writes nothing)."""
        generation = self.folder(name).resolve()
        return (generation / VECTORS_FILE).exists() and bool(_vectors(generation)[1])

    def rename(self, old: str, new: str) -> None:
        """The store collection `old` is now called `new` (adopted by its knowledge base): its files follow."""
        if self.read_only:
            return
        for source, target in ((self.folder(old), self.folder(new)), (self._stale_mark(old), self._stale_mark(new))):
            if source.is_symlink() or source.exists():
                try:
                    os.replace(source, target)
                except OSError as exc:  # another process moved them first, or a folder is in the way
                    logger.info("Search files %s not moved to %s (%s); they are rebuilt", source, target, exc)

    def bm25(self, collection: str, name: str, store_state: Callable[[], tuple[int, str]],
             rebuild: Callable[[bool], Bm25Index]) -> Bm25Index:
        """The collection's BM25 index. Files out of step with the store are rebuilt when no ingest is
        writing; while one is, a search reads the last complete generation (or, when there is none yet,
        an index built in memory from the documents complete so far)."""
        with self._lock:
            cached = self._bm25.get(collection)
            loaded_from = self._generations.get(collection)
        if cached is not None and loaded_from is not None and self.folder(name).resolve() != loaded_from:
            self._forget_loaded(collection)  # another process swapped in new files (its ingest changed documents)
            cached = None
        if cached is not None:
            return cached
        if self.in_step(collection, name, *store_state()):
            loaded = self._load(collection, name)
            if loaded is not None:
                return loaded
        if self.read_only:
            return rebuild(False)
        with writer_lock_if_free(self.db_path) as writer:
            if writer:
                return rebuild(True)
        return self._load(collection, name) or rebuild(False)

    def _load(self, collection: str, name: str) -> Bm25Index | None:
        generation = self.folder(name).resolve()
        try:
            loaded = Bm25Index.load(generation)
        except (OSError, ValueError):  # swapped out and removed while being read
            return None
        if loaded is None or not (generation / VECTORS_FILE).exists():
            return None
        with self._lock:
            self._bm25[collection] = loaded
            self._generations[collection] = generation
        return loaded

    def snapshot(self, collection: str, name: str, load_bm25: Callable[[], Bm25Index]) -> VectorSnapshot | None:
        """The vectors for exact search in memory, or None for a collection too large (or out of step).
        The BM25 files are loaded (or rebuilt when missing or stale) before the vectors beside them."""
        bm25 = load_bm25()  # first: it notices files another process swapped in, and drops the old vectors
        if collection in self._snapshots:
            return self._snapshots[collection]
        snapshot = None
        with self._lock:
            if collection in self._snapshots:  # built in memory with the index
                return self._snapshots[collection]
            generation = self._generations.get(collection, self.folder(name))
        if len(bm25.ids) <= self.in_memory_max_chunks:
            vectors, problem = _vectors(generation)
            if problem and (generation / VECTORS_FILE).exists():  # truncated or overwritten: rebuilt, never trusted
                logger.warning("The search files of collection %s are damaged (%s); %s", collection, problem,
                               "searching the store instead until `rabbithole ingest` rebuilds them"
                               if self.read_only else "rebuilding them from the index")
                self.mark_stale(collection, name)
                self._forget_loaded(collection)
                bm25 = load_bm25()
                with self._lock:
                    generation = self._generations.get(collection, self.folder(name))
                vectors, _ = _vectors(generation)
            if vectors is not None and vectors.shape[0] == len(bm25.ids):
                snapshot = VectorSnapshot(bm25.ids, bm25.docs, vectors)
        with self._lock:
            self._snapshots[collection] = snapshot
        return snapshot

    def forget_vectors(self, collection: str) -> None:
        """The store changed: the in-memory vectors are stale until the files are rebuilt."""
        with self._lock:
            self._snapshots.pop(collection, None)

    def _forget_loaded(self, collection: str) -> None:
        """What this process read of a collection's files (BM25, vectors, the generation): read again next."""
        with self._lock:
            self._bm25.pop(collection, None)
            self._snapshots.pop(collection, None)
            self._generations.pop(collection, None)

    def drop(self, collection: str, name: str) -> None:
        """The collection's vectors changed (re-embedded): its files are stale."""
        self._forget_loaded(collection)
        folder = self.folder(name)
        if folder.is_symlink():
            target = folder.resolve()
            folder.unlink()
            shutil.rmtree(target, ignore_errors=True)
        else:
            shutil.rmtree(folder, ignore_errors=True)


def _vectors(generation: Path) -> tuple[np.ndarray | None, str]:
    """The vectors of one generation of the files, or why they cannot be read."""
    try:
        return np.load(generation / VECTORS_FILE, mmap_mode="r"), ""
    except (OSError, ValueError, EOFError) as exc:
        return None, f"{type(exc).__name__}: {exc}"
