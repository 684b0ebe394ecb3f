"""Wiring: build the knowledge-base service from settings (no work at import time)."""

from __future__ import annotations

import logging
from pathlib import Path

from rabbithole_lab.kb.embedding.embedder import Embedder
from rabbithole_lab.kb.embedding.embedder_choice import build_embedder, choose_embedder
from rabbithole_lab.kb.ingest.auto_registry import load_auto_registry
from rabbithole_lab.kb.ingest.kb_folder import KBFolderError, discover
from rabbithole_lab.kb.retrieval.search import KnowledgeBase
from rabbithole_lab.kb.store.index import ChromaIndex
from rabbithole_lab.kb.store.namespace import (
    KB_ID_FILE,
    auto_registry_file,
    copied_from,
    knowledge_base_id,
    record_kb_folder,
    recorded_kb_ids,
)
from rabbithole_lab.kb.store.registry import DocumentRegistry, load_registry_file
from rabbithole_lab.settings import Settings

logger = logging.getLogger(__name__)
_EMBEDDERS: dict[tuple, Embedder] = {}


def shared_embedder(settings: Settings) -> Embedder:
    """One loaded model per configuration per process: loading a sentence-transformers model takes seconds."""
    choice = choose_embedder(settings.embedding)
    key = (choice.backend, choice.model, settings.embedding.device, settings.embedding.languages,
           settings.embedding.engine, settings.embedding.vector_cache)
    if key not in _EMBEDDERS:
        _EMBEDDERS[key] = build_embedder(settings.embedding, choice)
    return _EMBEDDERS[key]


def _named_folder(settings: Settings, kb_dir: Path | None, db_path: Path | None) -> Path | None:
    """The knowledge-base folder whose index is meant (default KB_DIR), or None: a database folder given
    without its knowledge-base folder (`--db` alone), or a folder that is missing, means the one knowledge
    base the store holds."""
    folder = Path(kb_dir or settings.kb.kb_dir)
    return folder if folder.is_dir() and (kb_dir is not None or db_path is None) else None


def _documents_by_collection(folder: Path) -> dict[str, set[str]]:
    """Collection -> the file names the knowledge-base folder has in it."""
    documents: dict[str, set[str]] = {}
    for source in discover(folder)[0]:
        documents.setdefault(source.collection, set()).update(source.names)
    return documents


def open_index(settings: Settings, kb_dir: Path | None = None, db_path: Path | None = None,
               embedder: Embedder | None = None, read_only: bool = False) -> ChromaIndex:
    """The index of the knowledge base `_named_folder` names: its own collections of the Chroma store
    settings name; `read_only` for a command that only reads (nothing of the index folder changes)."""
    folder = _named_folder(settings, kb_dir, db_path)
    index = ChromaIndex(
        db_path=Path(db_path) if db_path else settings.db_path(kb_dir),
        embedder=embedder or shared_embedder(settings),
        kb_id=None,  # the folder's, as the store records it (kb/store/namespace.py), else the store's one
        host=settings.chroma.host,
        port=settings.chroma.port,
        in_memory_max_chunks=settings.chroma.in_memory_max_chunks,
        folder_documents=(lambda: _documents_by_collection(folder)) if folder else None,
        read_only=read_only,
        kb_folder=folder,
    )
    source = copied_from(index.listing(), index.kb_id, folder) if folder else None
    if source is not None:  # only a folder with an id file of an earlier version can carry another's id
        said = (f"the knowledge base at {folder} carries the id of the one at {source} (a copied folder): the two "
                f"share one index, and an ingest of either changes the other's search. Give the copy its own id: "
                f"delete {folder / KB_ID_FILE}, then run `rabbithole ingest {folder}`")
        if not read_only:
            index.close()
            raise KBFolderError(said)
        logger.warning("%s", said)
    record_kb_folder(index)
    return index


def load_registry(settings: Settings, kb_dir: Path | None, index: ChromaIndex) -> DocumentRegistry:
    hand = load_registry_file(settings.registry_path(kb_dir))
    return DocumentRegistry.merged(hand, load_auto_registry(index.auto_registry_path))


def load_registry_only(settings: Settings, kb_dir: Path | None, db_path: Path | None = None) -> DocumentRegistry:
    """The merged registry without opening the index or loading the embedder (reference detection)."""
    db = Path(db_path) if db_path else settings.db_path(kb_dir)
    folder = _named_folder(settings, kb_dir, db_path)
    kb_ids = [knowledge_base_id(folder)] if folder else recorded_kb_ids(db)
    if folder and not auto_registry_file(db, kb_ids[0]).is_file() and len(recorded_kb_ids(db)) == 1:
        kb_ids = recorded_kb_ids(db)  # a moved folder keeps the id of its index (its path's hash is a new one)
    automatic = [entry for kb_id in kb_ids for entry in load_auto_registry(auto_registry_file(db, kb_id))
                 if len(kb_ids) == 1]
    return DocumentRegistry.merged(load_registry_file(settings.registry_path(kb_dir)), automatic)


def open_knowledge_base(settings: Settings, kb_dir: Path | None = None, db_path: Path | None = None,
                        embedder: Embedder | None = None, read_only: bool = True) -> KnowledgeBase:
    """The knowledge base for searching and following: by default read-only (kb/store/local_store.py)."""
    from rabbithole_lab.language import extend_from_kb

    index = open_index(settings, kb_dir, db_path, embedder, read_only=read_only)
    extend_from_kb(kb_dir)  # the glossary of the knowledge base's own domain reaches its search too
    return KnowledgeBase(index, load_registry(settings, kb_dir, index), settings.search)


def ingest_folder(kb_dir: str | Path, db: str | Path | None = None, env_file: str | None = ".env",
                  show_progress: bool = True):
    """Ingest a knowledge-base folder into its index (the build_kb notebook and scripts)."""
    from rabbithole_lab.kb.ingest.ingest import ingest
    from rabbithole_lab.settings import load_settings

    settings = load_settings(env_file)
    index = open_index(settings, Path(kb_dir), Path(db) if db else None)
    return ingest(Path(kb_dir), index, settings.kb, show_progress=show_progress, ocr=settings.ocr)
