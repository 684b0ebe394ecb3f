"""Which knowledge base a Chroma collection belongs to.

A Chroma store may be shared: a team's Chroma server (CHROMA_HOST), or one CHROMADB_PATH that several
knowledge bases point at. Two knowledge bases that both have a collection "Recht" must never touch each
other, so every collection a knowledge base writes carries the knowledge base's identity: its Chroma name
is `kb<id>_<collection>` and its metadata holds `kb_id`.

The identity is recorded in the knowledge-base folder (`.rabbithole-kb-id`, a hidden file the ingest never
reads as a document), so it survives a move of the folder. It starts as a hash of the folder's path: a
read-only folder (where nothing can be recorded) has the same id on every run, and two processes that
record it at once write the same text.

Collections from before namespaces (named after the collection alone, no `kb_id`) are adopted by the
first knowledge base that opens the store with a collection of that name holding a document of a name
it has in that collection's folder: the store alone cannot say whose they are, the documents can. Others are
only named in errors (`ChromaIndex.legacy_collections`).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

logger = logging.getLogger(__name__)

KB_ID_FILE = ".rabbithole-kb-id"
KB_ID_KEY = "kb_id"  # in a collection's metadata
_KB_ID = re.compile(r"^[0-9a-f]{8,32}$")
_CHROMA_NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._-]{1,510}[a-zA-Z0-9]$")


def knowledge_base_id(kb_dir: Path) -> str:
    """The stable identity of the knowledge base in `kb_dir`: the recorded one, else recorded now (when the
    folder can be written), else the hash of its path."""
    kb_dir = Path(kb_dir)
    recorded = kb_dir / KB_ID_FILE
    try:
        text = recorded.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        text = ""
    if _KB_ID.match(text):
        return text
    if text:
        logger.warning("%s does not hold a knowledge-base id (%r); it is written again", recorded, text[:40])
    kb_id = hashlib.sha1(str(kb_dir.resolve()).encode()).hexdigest()[:12]
    if _recordable(kb_dir):
        partial = recorded.with_name(f"{KB_ID_FILE}.{os.getpid()}.partial")
        try:
            partial.write_text(kb_id + "\n", encoding="utf-8")
            partial.replace(recorded)
        except OSError as exc:  # a full disk or a folder made read-only meanwhile: the path's hash still serves
            logger.info("Could not record the knowledge-base id in %s (%s)", kb_dir, exc)
            partial.unlink(missing_ok=True)
    return kb_id


def _recordable(kb_dir: Path) -> bool:
    """An existing folder we may write and that its owner has not marked read-only (a shared corpus)."""
    try:
        mode = kb_dir.stat().st_mode
    except OSError:
        return False
    return stat.S_ISDIR(mode) and bool(mode & stat.S_IWUSR) and os.access(kb_dir, os.W_OK)


def legacy_chroma_name(collection: str) -> str:
    """The Chroma name a collection had before knowledge bases were namespaced (its name, made safe)."""
    if _CHROMA_NAME.match(collection) and ".." not in collection:
        return collection
    safe = re.sub(r"[^a-zA-Z0-9._-]", "_", collection).strip("._-") or "collection"
    digest = hashlib.sha1(collection.encode()).hexdigest()[:8]
    return f"{safe[:40]}_{digest}"


def chroma_name(kb_id: str, collection: str) -> str:
    """The Chroma name of `collection` of knowledge base `kb_id` (Chroma allows 512 characters)."""
    name = f"kb{kb_id}_{legacy_chroma_name(collection)}"
    if len(name) <= 500:
        return name
    return f"kb{kb_id}_{legacy_chroma_name(collection)[:40]}_{hashlib.sha1(collection.encode()).hexdigest()[:8]}"


KB_PATH_KEY = "kb_path"  # the folder a knowledge base's collections were last ingested from


def copied_from(listing: list[tuple[str, dict]], kb_id: str, kb_dir: Path) -> Path | None:
    """The folder `kb_dir` was copied from, when the store's collections of `kb_id` were ingested from another
    folder that still exists and still carries that id: two folders then share one index, and deleting a file
    in one removes it from the other's search. A folder that was moved is no copy: its old path is gone."""
    here = Path(kb_dir).resolve()
    for _, metadata in listing:
        recorded = metadata.get(KB_PATH_KEY)
        if metadata.get(KB_ID_KEY) != kb_id or not recorded or Path(recorded) == here:
            continue
        try:
            if (Path(recorded) / KB_ID_FILE).read_text(encoding="utf-8").strip() == kb_id:
                return Path(recorded)
        except (OSError, UnicodeDecodeError):
            continue
    return None


def record_kb_folder(index) -> None:
    """Write the knowledge-base folder into the collections' metadata of `index` (a writer's kb/index.py
    ChromaIndex, after a move too), by which a copy of the folder is told apart from the folder (`copied_from`)."""
    if index.read_only or index.kb_folder is None:
        return
    here = str(index.kb_folder.resolve())
    for name, metadata in index.listing():
        if metadata.get(KB_ID_KEY) == index.kb_id and metadata.get(KB_PATH_KEY) != here:
            kept = {key: value for key, value in metadata.items() if not key.startswith("hnsw:")}
            index.client.get_collection(name, embedding_function=None).modify(metadata={**kept, KB_PATH_KEY: here})


LEGACY_AUTO_REGISTRY = "auto_registry.json"  # one file for the whole store, from before namespaces


def auto_registry_file(db_path: Path, kb_id: str) -> Path:
    """Where the registry entries an ingest derives from the documents are kept (kb/auto_registry.py):
    one file per knowledge base beside the store's search files."""
    return Path(db_path) / f"auto_registry.kb{kb_id}.json"


def adopt_legacy_collections(index, folder_documents: Callable[[], dict[str, set[str]]]) -> list[str]:
    """Give this knowledge base (`index`, a kb/index.py ChromaIndex) the collections written before
    namespaces that hold its documents (`folder_documents()`: collection -> the file names its folder has,
    read only when there are such collections): renamed into its namespace, with their search files and
    registry entries. Returns what was adopted."""
    legacy = [(name, metadata) for name, metadata in index.listing() if KB_ID_KEY not in metadata]
    documents = folder_documents() if legacy else {}
    adopted = []
    for name, metadata in legacy:
        collection = metadata.get("kb_collection", name)
        if not documents.get(collection):
            continue
        try:
            handle = index.client.get_collection(name, embedding_function=None)
            if not handle.get(where={"doc": {"$in": sorted(documents[collection])}}, limit=1, include=[])["ids"]:
                continue  # none of its documents is this knowledge base's: another's, or an empty one
            kept = {key: value for key, value in metadata.items() if not key.startswith("hnsw:")}  # fixed at creation
            handle.modify(name=chroma_name(index.kb_id, collection), metadata={**kept, KB_ID_KEY: index.kb_id})
        except Exception as exc:  # another process adopted it first
            logger.info("Collection %s not adopted here (%s)", name, exc)
            continue
        index.files.rename(name, chroma_name(index.kb_id, collection))
        adopted.append(collection)
    if adopted:
        _move_legacy_auto_entries(index.db_path, index.auto_registry_path, set(adopted))
        logger.info("Collections %s of %s now carry this knowledge base's id (%s)", ", ".join(adopted),
                    index.location, index.kb_id)
    return adopted


def _move_legacy_auto_entries(db_path: Path, target: Path, collections: set[str]) -> None:
    from rabbithole_lab.kb.auto_registry import forget_auto_entries, load_auto_registry, save_auto_registry

    legacy = Path(db_path) / LEGACY_AUTO_REGISTRY
    if not legacy.exists():
        return
    moving = [entry for entry in load_auto_registry(legacy) if entry.collection in collections]
    save_auto_registry(target, moving)
    forget_auto_entries(legacy, {(entry.filename, entry.collection) for entry in moving})
    if not load_auto_registry(legacy):
        legacy.unlink(missing_ok=True)


def recorded_kb_ids(db_path: Path) -> list[str]:
    """The knowledge bases whose registry entries are kept in `db_path`."""
    return sorted(path.name[len("auto_registry.kb"):-len(".json")]
                  for path in Path(db_path).glob("auto_registry.kb*.json"))
