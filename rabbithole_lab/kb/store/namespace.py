"""Which knowledge base a Chroma collection belongs to.

A Chroma store may be shared: a team's Chroma server (CHROMA_HOST), or one CHROMADB_PATH that several
knowledge bases point at. Two knowledge bases that both have a collection "Recht" must never touch each
other, so every collection a knowledge base writes carries the knowledge base's identity: its Chroma name
is `kb<id>_<collection>` and its metadata holds `kb_id`.

The identity lives in the store, never in the knowledge-base folder (a read-only or a colleague's collection
is not written to): each collection's metadata holds the folder it was ingested from (`kb_path`), and a
folder's id is the one of the collections ingested from it, else a hash of its path. A copy of a folder is
then another knowledge base with its own collections; a folder that was moved keeps its id: the collections of
a folder that no longer exists and that hold this folder's documents are its own (`moved_kb_id`). A folder
from before this carries a `.rabbithole-kb-id` file, which is read, never written.

Collections from before namespaces (named after the collection alone, no `kb_id`) are adopted by the
first knowledge base that opens the store with a collection of that name holding a document of a name
it has in that collection's folder: the store alone cannot say whose they are, the documents can. Others are
only named in errors (`ChromaIndex.legacy_collections`).
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable
from pathlib import Path

logger = logging.getLogger(__name__)

KB_ID_FILE = ".rabbithole-kb-id"
KB_ID_KEY = "kb_id"  # in a collection's metadata
_KB_ID = re.compile(r"^[0-9a-f]{8,32}$")
_CHROMA_NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._-]{1,510}[a-zA-Z0-9]$")


def knowledge_base_id(kb_dir: Path, listing: list[tuple[str, dict]] | None = None) -> str:
    """The identity of the knowledge base in `kb_dir`: the one recorded in the folder by an earlier version,
    else the one of the store's collections ingested from it (`listing`: the store's (name, metadata)), else
    the hash of its path."""
    kb_dir = Path(kb_dir)
    recorded = kb_dir / KB_ID_FILE
    try:
        text = recorded.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        text = ""
    if _KB_ID.match(text):
        return text
    if text:
        logger.warning("%s does not hold a knowledge-base id (%r); the folder's path names it", recorded, text[:40])
    here = str(kb_dir.resolve())
    for _, metadata in listing or []:
        if metadata.get(KB_PATH_KEY) == here and _KB_ID.match(str(metadata.get(KB_ID_KEY, ""))):
            return metadata[KB_ID_KEY]
    return hashlib.sha1(here.encode()).hexdigest()[:12]


def moved_kb_id(index, folder_documents: Callable[[], dict[str, set[str]]],
                listing: list[tuple[str, dict]]) -> str | None:
    """The id of the knowledge base `index.kb_folder` was moved or copied from: the one knowledge base of an
    index inside the folder (`<kb>/database`, moved or copied with it), else collections of one id, ingested from
    a folder that no longer exists, that hold a document of a name this folder has in that collection.
    `listing`: the store's (name, metadata), as `index.listing()` read it."""
    if index.kb_folder is None or any(metadata.get(KB_ID_KEY) == index.kb_id for _, metadata in listing):
        return None
    embedded = index.location == str(index.db_path)  # a server's store is never the folder's own
    if embedded and Path(index.db_path).resolve().is_relative_to(index.kb_folder.resolve()):
        inside = {metadata[KB_ID_KEY] for _, metadata in listing if KB_ID_KEY in metadata}
        if len(inside) == 1:
            return inside.pop()
    gone = [(name, metadata) for name, metadata in listing
            if metadata.get(KB_PATH_KEY) and KB_ID_KEY in metadata and not Path(metadata[KB_PATH_KEY]).exists()]
    documents = folder_documents() if gone else {}
    for name, metadata in gone:
        names = sorted(documents.get(metadata.get("kb_collection", name), ()))
        try:
            if names and index.client.get_collection(name, embedding_function=None).get(
                    where={"doc": {"$in": names}}, limit=1, include=[])["ids"]:
                logger.info("%s was moved from %s: it keeps its index", index.kb_folder, metadata[KB_PATH_KEY])
                return metadata[KB_ID_KEY]
        except Exception as exc:  # deleted meanwhile by another client
            logger.info("Collection %s not read here (%s)", name, exc)
    return None


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
    """Write the knowledge-base folder into the collections' metadata of `index` (a writer's kb/store/index.py
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
    """Where the registry entries an ingest derives from the documents are kept (kb/ingest/auto_registry.py):
    one file per knowledge base beside the store's search files."""
    return Path(db_path) / f"auto_registry.kb{kb_id}.json"


def adopt_legacy_collections(index, folder_documents: Callable[[], dict[str, set[str]]]) -> list[str]:
    """Give this knowledge base (`index`, a kb/store/index.py ChromaIndex) the collections written before
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
    from rabbithole_lab.kb.ingest.auto_registry import forget_auto_entries, load_auto_registry, save_auto_registry

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
