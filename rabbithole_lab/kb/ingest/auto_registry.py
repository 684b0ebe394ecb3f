"""The registry entries an ingest derives from the documents themselves (file stem, title, abbreviation),
kept in one file per knowledge base beside the index they describe (`namespace.auto_registry_file`)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from rabbithole_lab.kb.store.registry import RegistryEntry

logger = logging.getLogger(__name__)


def _write(path: Path, entries: list[RegistryEntry]) -> None:
    path = Path(path)
    data = [
        {"filename": e.filename, "collection": e.collection, "synonyms": e.synonyms}
        for e in sorted(entries, key=lambda e: (e.collection, e.filename))
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".json.partial")  # written whole, then moved: a kill never leaves half a file
    partial.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    partial.replace(path)


def save_auto_registry(path: Path, entries: list[RegistryEntry]) -> None:
    merged = {(e.filename, e.collection): e for e in load_auto_registry(path)}
    merged.update({(e.filename, e.collection): e for e in entries})
    _write(path, list(merged.values()))


def forget_auto_entries(path: Path, documents: set[tuple[str, str]]) -> None:
    """Drop the entries of (filename, collection) pairs that left the index."""
    existing = load_auto_registry(path)
    kept = [e for e in existing if (e.filename, e.collection) not in documents]
    if len(kept) != len(existing):
        _write(path, kept)


def load_auto_registry(path: Path) -> list[RegistryEntry]:
    path = Path(path)
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        logger.warning("Ignoring unreadable %s; it is rebuilt on the next ingest", path)
        return []
    return [RegistryEntry(d["filename"], d["collection"], d.get("synonyms", []), "auto") for d in data]
