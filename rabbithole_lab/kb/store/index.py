"""The index adapter: ChromaDB (embedded or server), the store of record, with the search files (one BM25
index and one vectors file per collection, kb/store/search_files.py) kept in step with it.

Chroma never embeds on its own (no embedding function is attached, so it never
downloads one); we pass vectors from our Embedder. The embedder's backend and model
are stored in each collection's metadata and checked on every open: vectors of two
embedders never mix, and `reembed` moves a collection to another embedder without
parsing its files again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

from rabbithole_lab.kb.embedding.chunk_embedding import ChunkEmbedding
from rabbithole_lab.kb.embedding.embedder import Embedder, identity
from rabbithole_lab.kb.ingest.reembed import REEMBED_SUFFIX, UPSERT_BATCH, reembed
from rabbithole_lab.kb.retrieval.lexical import Bm25Index
from rabbithole_lab.kb.store.chroma_records import chunk_from, chunk_metadata, get_all, stored_identity
from rabbithole_lab.kb.store.local_store import (  # noqa: F401 (the index's errors, raised where the store is opened)
    EmbeddingMismatchError,
    IndexError_,
    IndexReadOnlyError,
    IndexStoreError,
    ReadCopy,
    UnknownCollectionError,
    open_local_store,
)
from rabbithole_lab.kb.store.namespace import (
    KB_ID_KEY,
    KB_PATH_KEY,
    adopt_legacy_collections,
    auto_registry_file,
    chroma_name,
    knowledge_base_id,
    moved_kb_id,
)
from rabbithole_lab.kb.store.search_files import SearchFiles, VectorSnapshot
from rabbithole_lab.records import Chunk

logger = logging.getLogger(__name__)

PENDING_FINGERPRINT = "pending:"  # chunks written before their document is complete


class ChromaIndex:
    """Chunks, vectors and BM25 for every collection of one knowledge base in a Chroma store (which other
    knowledge bases may share, kb/store/namespace.py), with the search files in one database folder."""

    def __init__(
        self,
        db_path: Path,
        embedder: Embedder,
        kb_id: str | None = None,
        host: str | None = None,
        port: int = 8000,
        in_memory_max_chunks: int = 200_000,
        folder_documents: Callable[[], dict[str, set[str]]] | None = None,
        read_only: bool = False,
        kb_folder: Path | None = None,
    ):
        """`kb_id`: the knowledge base's identity (None: `kb_folder`'s, else the store's one). `folder_documents`:
        collection -> the folder's file names, by which collections from before namespaces are adopted
        (kb/store/namespace.py). `read_only`: nothing under `db_path` is written (kb/store/local_store.py; search files
        out of step are rebuilt in memory, nothing is adopted); a write raises `IndexReadOnlyError`."""
        import chromadb
        from chromadb.config import Settings as ChromaClientSettings

        self.db_path = Path(db_path)
        self.embedder = embedder
        self.read_only = read_only
        self.kb_folder = Path(kb_folder) if kb_folder else None  # recorded in its collections (namespace.copied_from)
        self._read_copy: ReadCopy | None = None
        client_settings = ChromaClientSettings(anonymized_telemetry=False, allow_reset=False)
        if host:
            self.location = f"http://{host}:{port}"
            try:
                self.client = chromadb.HttpClient(host=host, port=port, settings=client_settings)
            except Exception as exc:  # refused, or not a Chroma server: one line, never a traceback
                raise IndexStoreError(f"the Chroma server at {self.location} does not answer ({exc})") from None
        else:
            self.location = str(self.db_path)
            self.client, self._read_copy = open_local_store(self.db_path, read_only, client_settings)
        self._client_settings = client_settings
        self._handles: dict[str, object] = {}
        # larger collections than in_memory_max_chunks go through Chroma's own query
        self.files = SearchFiles(self.db_path / "bm25", in_memory_max_chunks, self.db_path, read_only=read_only)
        self._lock = threading.Lock()
        self._chunk_embedding = ChunkEmbedding(embedder)
        reads_folder = self.kb_folder is not None and not kb_id
        listing = self.listing() if reads_folder else []  # read once: a server lists over the wire
        self.kb_id = kb_id or (knowledge_base_id(self.kb_folder, listing) if reads_folder else self._sole_kb_id())
        if folder_documents and reads_folder:  # a folder that was moved keeps its index
            self.kb_id = moved_kb_id(self, folder_documents, listing) or self.kb_id
        self.auto_registry_path = auto_registry_file(self.db_path, self.kb_id)
        if folder_documents and not read_only:
            adopt_legacy_collections(self, folder_documents)

    def _follow_the_store(self) -> None:
        """A reader that lives on (a notebook kernel) reads what another process's ingest wrote since: when the
        store changed under its copy, the copy is made again and the client opened on it."""
        if self._read_copy is None:  # a writer, or a server: nothing to follow (called on every handle)
            return
        with self._lock:
            if self._read_copy is None or not self._read_copy.outdated():
                return
            previous = self._read_copy
            self.client, self._read_copy = open_local_store(self.db_path, True, self._client_settings)
            self._handles.clear()
            previous.close()
        logger.info("The index at %s changed: reading it again", self.db_path)

    def close(self) -> None:
        """Let go of the private copy a reader opened (the store itself is closed with the process)."""
        copy, self._read_copy = self._read_copy, None
        if copy is not None:
            copy.close()

    def _writing(self, what: str) -> None:
        if self.read_only:
            raise IndexReadOnlyError(f"{what}: the index at {self.location} was opened for reading only")

    # ----- collections -------------------------------------------------
    def listing(self) -> list[tuple[str, dict]]:
        """(Chroma name, metadata) of every collection in the store, of every knowledge base, without those
        being re-embedded."""
        out = []
        for item in self.client.list_collections():
            name = item if isinstance(item, str) else item.name
            if not name.endswith(REEMBED_SUFFIX):
                metadata = self.client.get_collection(name).metadata if isinstance(item, str) else item.metadata
                out.append((name, metadata or {}))
        return out

    def _stored(self) -> list[tuple[str, dict]]:
        """(collection, metadata) of this knowledge base's collections."""
        return [(metadata.get("kb_collection", name), metadata) for name, metadata in self.listing()
                if metadata.get(KB_ID_KEY) == self.kb_id]

    def _sole_kb_id(self) -> str:
        ids = {metadata[KB_ID_KEY] for _, metadata in self.listing() if KB_ID_KEY in metadata}
        if len(ids) > 1:
            raise IndexStoreError(f"the store at {self.location} holds {len(ids)} knowledge bases; name the "
                                  "knowledge-base folder (--kb) to say which one to read")
        return ids.pop() if ids else "none"

    def collections(self) -> list[str]:
        return sorted(name for name, _ in self._stored())

    def legacy_collections(self) -> list[str]:
        """Collections in the store from before knowledge bases were namespaced: nobody reads them until
        their knowledge base adopts them."""
        return sorted(metadata.get("kb_collection", name) for name, metadata in self.listing()
                      if KB_ID_KEY not in metadata)

    def chroma_name(self, collection: str) -> str:
        return chroma_name(self.kb_id, collection)

    def _collection(self, collection: str, create: bool = False):
        self._follow_the_store()
        cached = self._handles.get(collection)
        if cached is not None:
            return cached
        name = self.chroma_name(collection)
        if create and not self.read_only:
            handle = self.client.get_or_create_collection(
                name,
                embedding_function=None,
                metadata=self._metadata(collection),
            )
        else:
            try:
                handle = self.client.get_collection(name, embedding_function=None)
            except Exception:
                known = ", ".join(self.collections()) or "none"
                legacy = (f" The store also holds a collection '{collection}' written before knowledge bases "
                          "were namespaced, which cannot be told apart from another knowledge base's here; "
                          "`rabbithole ingest` indexes this knowledge base's own."
                          if collection in self.legacy_collections() else "")
                raise UnknownCollectionError(
                    f"Unknown collection '{collection}' in this knowledge base at {self.location} (known: "
                    f"{known}). Run `rabbithole ingest` first or check the name.{legacy}"
                ) from None
        stored = stored_identity(handle.metadata)
        if stored and stored != identity(self.embedder):
            raise EmbeddingMismatchError(
                f"Collection '{collection}' in {self.location} was embedded with {stored}, but the configured "
                f"embedder is {identity(self.embedder)}; its vectors cannot be compared. Re-embed it with "
                "`rabbithole ingest KB_DIR --reindex` (the text is not parsed again), or set EMBEDDING_BACKEND "
                "and EMBEDDING_MODEL to the ones it was built with."
            )
        self._handles[collection] = handle
        return handle

    def _metadata(self, collection: str) -> dict:
        return {
            "kb_collection": collection,
            KB_ID_KEY: self.kb_id,
            **({KB_PATH_KEY: str(self.kb_folder.resolve())} if self.kb_folder else {}),
            "embedding_model": self.embedder.name,
            "embedding_backend": self.embedder.backend,
            "hnsw:space": "cosine",
        }

    def stale_collections(self) -> list[str]:
        """The collections whose vectors another embedder made."""
        mine = identity(self.embedder)
        return sorted(name for name, metadata in self._stored() if stored_identity(metadata) not in ("", mine))

    def embed_texts(self, texts: list[str]) -> np.ndarray:
        """The vectors of chunk texts (kb/embedding/chunk_embedding.py: passage ids left out, repeats embedded once)."""
        return self._chunk_embedding(texts)

    def reembed(self, collection: str, progress=None) -> int:
        """Re-embed `collection` with this index's embedder (kb/ingest/reembed.py); the number of chunks."""
        self._writing(f"re-embedding {collection}")
        return reembed(self, collection, progress)

    # ----- writing ------------------------------------------------------
    def doc_state(self, collection: str, doc: str) -> tuple[set[str], set[str]]:
        """(chunk ids, ingest fingerprints) stored for one document (metadata "file_hash": the file's
        content hash with the chunker's version and chunk sizes, see `ingest.ingest_fingerprint`)."""
        handle = self._collection(collection, create=True)
        got = get_all(handle, ["metadatas"], where={"doc": doc})
        hashes = {m.get("file_hash", "") for m in got["metadatas"] or []}
        return set(got["ids"]), hashes

    def replace_document(
        self,
        collection: str,
        doc: str,
        chunks: list[Chunk],
        fingerprint: str,
        progress=None,
    ) -> tuple[int, int]:
        """Upsert a document's chunks by content hash and drop its stale ones. Returns (added, removed).

        Nothing is lost to an interruption: new chunks are written as pending, and only when every chunk
        of the document is in does the document get its fingerprint. A process killed half-way leaves a
        document whose fingerprint does not match, so the next ingest completes it (without embedding
        again what is already there)."""
        self._writing(f"writing {doc}")
        handle = self._collection(collection, create=True)
        self.files.mark_stale(collection, self.chroma_name(collection))
        old_ids, _ = self.doc_state(collection, doc)
        new_ids = [chunk.id for chunk in chunks]
        stale = sorted(old_ids - set(new_ids))
        fresh = [chunk for chunk in chunks if chunk.id not in old_ids]
        pending = PENDING_FINGERPRINT + fingerprint
        for start in range(0, len(fresh), UPSERT_BATCH):
            batch = fresh[start : start + UPSERT_BATCH]
            vectors = self.embed_texts([chunk.text for chunk in batch])
            handle.upsert(
                ids=[chunk.id for chunk in batch],
                documents=[chunk.text for chunk in batch],
                embeddings=vectors.tolist(),
                metadatas=[chunk_metadata(chunk, pending) for chunk in batch],
            )
            if progress is not None:
                progress.update(len(batch))
        if stale:
            handle.delete(ids=stale)
        # every chunk is in: now the document is complete (also refreshes metadata of unchanged text)
        for start in range(0, len(chunks), UPSERT_BATCH):
            batch = chunks[start : start + UPSERT_BATCH]
            handle.update(ids=[chunk.id for chunk in batch],
                          metadatas=[chunk_metadata(chunk, fingerprint) for chunk in batch])
        if progress is not None:
            progress.update(len(chunks) - len(fresh))
        return len(fresh), len(stale)

    def document_hashes(self, collection: str) -> dict[str, str]:
        """Content hash -> document for every completely ingested document of a collection."""
        handle = self._collection(collection, create=True)
        got = get_all(handle, ["metadatas"])
        out: dict[str, str] = {}
        for metadata in got["metadatas"] or []:
            fingerprint = metadata.get("file_hash", "")
            if fingerprint and not fingerprint.startswith(PENDING_FINGERPRINT):
                out.setdefault(fingerprint.split(":", 1)[0], metadata["doc"])
        return out

    def delete_document(self, collection: str, doc: str) -> int:
        self._writing(f"removing {doc}")
        handle = self._collection(collection, create=True)
        ids, _ = self.doc_state(collection, doc)
        if ids:
            self.files.mark_stale(collection, self.chroma_name(collection))
            handle.delete(ids=sorted(ids))
        return len(ids)

    def documents(self, collection: str) -> list[str]:
        handle = self._collection(collection)
        got = get_all(handle, ["metadatas"])
        return sorted({m["doc"] for m in got["metadatas"] or []})

    # ----- the search files (kb/store/search_files.py) ------------------------------------
    def search_files_folder(self, collection: str) -> Path:
        return self.files.folder(self.chroma_name(collection))

    def rebuild_bm25(self, collection: str, save: bool = True) -> Bm25Index:
        """Rebuild a collection's search files (BM25 and the dense vectors in the same order) from the
        complete documents Chroma holds (chunks of a document still being written are left out), so all
        stay in sync. Without `save` the index is built in memory only (the caller does not hold the
        ingest lock, or reads only)."""
        save = save and not self.read_only
        handle = self._collection(collection)
        got = get_all(handle, ["documents", "metadatas", "embeddings"])
        store_count = len(got["ids"])
        rows = [row for row, metadata in enumerate(got["metadatas"] or [])
                if not str(metadata.get("file_hash", "")).startswith(PENDING_FINGERPRINT)]
        ids = [got["ids"][row] for row in rows]
        metadatas = [got["metadatas"][row] for row in rows]
        texts = [got["documents"][row] for row in rows]
        vectors = (np.asarray([got["embeddings"][row] for row in rows], dtype=np.float32).reshape(len(ids), -1)
                   if ids else np.zeros((0, 1), dtype=np.float32))
        del got
        return self.files.write(collection, self.chroma_name(collection), ids, texts,
                                [m["doc"] for m in metadatas], [m.get("heading", "") for m in metadatas], vectors,
                                store_count=store_count, store_id=str(handle.id), save=save)

    def _store_state(self, collection: str) -> tuple[int, str]:
        """What the search files are checked against: the store collection's chunk count and its id (a
        collection deleted and made again, on a server another client writes to, has another id)."""
        handle = self._collection(collection)
        return handle.count(), str(handle.id)

    def search_files_in_step(self, collection: str) -> bool:
        """The search files hold what the store holds and can be read (an ingest rebuilds them otherwise)."""
        name = self.chroma_name(collection)
        return self.files.in_step(collection, name, *self._store_state(collection)) and not self.files.damaged(name)

    def bm25(self, collection: str) -> Bm25Index:
        return self.files.bm25(collection, self.chroma_name(collection),
                               store_state=lambda: self._store_state(collection),
                               rebuild=lambda save: self.rebuild_bm25(collection, save=save))

    # ----- reading -----------------------------------------------------------
    def _snapshot(self, collection: str) -> VectorSnapshot | None:
        return self.files.snapshot(collection, self.chroma_name(collection), lambda: self.bm25(collection))

    def _fetch(self, collection: str, ids: list[str]) -> dict[str, Chunk]:
        got = self._collection(collection).get(ids=ids, include=["documents", "metadatas"])
        return {cid: chunk_from(cid, text, meta)
                for cid, text, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True)}

    def _chunks_by_id(self, collection: str, ids: list[str]) -> dict[str, Chunk]:
        """Chunks by id, from the snapshot's cache or Chroma (one read for all that are missing)."""
        snapshot = self._snapshot(collection)
        cached = snapshot.chunks if snapshot is not None else {}
        found = {cid: cached[cid] for cid in ids if cid in cached}
        missing = [cid for cid in dict.fromkeys(ids) if cid not in found]
        if missing:
            fetched = self._fetch(collection, missing)
            if snapshot is not None:
                snapshot.remember(list(fetched.values()))
            found.update(fetched)
        return found

    def get_chunks(self, collection: str, ids: list[str] | None = None, where: dict | None = None,
                   containing: str | None = None) -> list[Chunk]:
        """Chunks by id, by metadata (`where`) and/or by a piece of their text (`containing`, exact)."""
        handle = self._collection(collection)
        if ids is not None and not ids:
            return []
        if ids is not None and where is None and containing is None:
            by_id = self._chunks_by_id(collection, ids)
            return [by_id[cid] for cid in ids if cid in by_id]
        got = handle.get(ids=ids, where=where, include=["documents", "metadatas"],
                         where_document={"$contains": containing} if containing else None)
        by_id = {
            cid: chunk_from(cid, text, meta)
            for cid, text, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True)
        }
        order = ids if ids is not None else sorted(by_id, key=lambda c: (by_id[c].doc, by_id[c].char_start))
        return [by_id[cid] for cid in order if cid in by_id]

    def similarities(self, collection: str, ids: list[str], query_vector: np.ndarray) -> dict[str, float]:
        if not ids:
            return {}
        snapshot = self._snapshot(collection)
        if snapshot is not None:
            rows = snapshot.rows
            found = [cid for cid in ids if cid in rows]
            sims = snapshot.vectors[[rows[cid] for cid in found]] @ query_vector if found else []
            return {cid: float(sim) for cid, sim in zip(found, sims, strict=True)}
        handle = self._collection(collection)
        got = handle.get(ids=ids, include=["embeddings"])
        vectors = np.asarray(got["embeddings"], dtype=np.float32)
        sims = vectors @ query_vector
        return {cid: float(sim) for cid, sim in zip(got["ids"], sims, strict=True)}

    def dense_ids(
        self, collection: str, query_vector: np.ndarray, k: int, where: dict | None = None
    ) -> list[tuple[str, float]]:
        """The k chunk ids closest to the query, with their cosine similarity, best first. Ranking needs no
        text: a search reads from Chroma only the chunks it finally returns."""
        snapshot = self._snapshot(collection)
        if snapshot is not None and (where is None or set(where) == {"doc"}):
            if not snapshot.ids:
                return []
            sims = snapshot.vectors @ query_vector
            if where is not None:
                sims = np.where(snapshot.docs == where["doc"], sims, -np.inf)
            k = min(k, len(sims))
            top = np.argpartition(-sims, k - 1)[:k]
            return [(snapshot.ids[int(i)], float(sims[i])) for i in top[np.argsort(-sims[top])] if np.isfinite(sims[i])]
        return [(chunk.id, similarity) for chunk, similarity in self.dense(collection, query_vector, k, where)]

    def dense(
        self, collection: str, query_vector: np.ndarray, k: int, where: dict | None = None
    ) -> list[tuple[Chunk, float]]:
        snapshot = self._snapshot(collection)
        if snapshot is not None and (where is None or set(where) == {"doc"}):
            ranked = self.dense_ids(collection, query_vector, k, where)
            by_id = self._chunks_by_id(collection, [chunk_id for chunk_id, _ in ranked])
            return [(by_id[chunk_id], similarity) for chunk_id, similarity in ranked if chunk_id in by_id]
        handle = self._collection(collection)
        count = handle.count()
        if count == 0:
            return []
        got = handle.query(
            query_embeddings=[query_vector.tolist()],
            n_results=min(k, count),
            where=where,
            include=["documents", "metadatas", "distances"],
        )
        return [
            (chunk_from(cid, text, meta), 1.0 - float(distance))
            for cid, text, meta, distance in zip(
                got["ids"][0], got["documents"][0], got["metadatas"][0], got["distances"][0], strict=True
            )
        ]

    def count(self, collection: str) -> int:
        return self._collection(collection).count()

    def chunk_ids(self, collection: str) -> list[str]:
        """Every chunk id of a collection (content hashes: the list changes whenever a text does)."""
        return get_all(self._collection(collection), [])["ids"]

    def all_chunks(self, collection: str) -> list[Chunk]:
        got = get_all(self._collection(collection), ["documents", "metadatas"])
        return [chunk_from(cid, text, meta) for cid, text, meta in zip(got["ids"], got["documents"], got["metadatas"],
                                                                          strict=True)]
