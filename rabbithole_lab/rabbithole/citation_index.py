"""Who cites a passage: every chunk's references, read once per collection by the rules, kept on disk.

Backlinks read the passages search ranked. A passage that cites the best hit but that search did not rank
at all ("Matching Adjustment 5" in a guidance note, where the question's words are all in rule 5.1) never
enters, although the citation names exactly what search found. This index maps each (document, section
key) to the chunks that cite it, so backlinks can also read those (`RabbitholeFollower._backlinks`).

Reading every chunk's references takes about a minute for a 40,000-chunk rulebook on two cores, so the
references are kept in a file beside the collection's search files and read again only when the collection
changed. The file holds what the rules detected (the cited document as written, the unit and the
numbers), not the resolved documents: the registry may differ between runs, so keys are made on loading.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path

from rabbithole_lab.kb.retrieval.search import KnowledgeBase, result_of
from rabbithole_lab.kb.store.index import ChromaIndex
from rabbithole_lab.rabbithole.backlinks import SectionKey, cited_keys
from rabbithole_lab.rabbithole.collect import citations
from rabbithole_lab.rabbithole.references import detect_references_regex
from rabbithole_lab.records import DetectedReference
from rabbithole_lab.support.cache_dirs import machine_cache
from rabbithole_lab.support.progress_bars import progress

logger = logging.getLogger(__name__)

# bump when the rules detect differently, so a kept file is read again
CITATION_INDEX_VERSION = 9  # 9: "nach § 8, 3. Lageplan" cites § 8 alone (an enumeration item after a single §)
_KEPT_FIELDS = ("type", "target", "original_text", "book", "sections", "unit", "document_context", "book_exact")
_FILE = "citers.json"
# of the passages the index names as citing a best hit, backlinks read the closest to the question: a rule
# cited from hundreds of places ("Chapter 9" of a reporting part) would otherwise be read whole
CLOSEST_INDEXED_CITERS = 20


class CitationIndex:
    """(doc, section key) -> the ids of the chunks that cite it, per collection; built on first use."""

    def __init__(self, kb: KnowledgeBase, target_document: Callable[[DetectedReference], str | None],
                 shown_name: Callable[[str], str] | None = None):
        self.kb = kb
        self.target_document = target_document
        self.shown_name = shown_name
        self._citers: dict[str, dict[SectionKey, list[str]]] = {}

    def citers(self, collection: str, keys: list[SectionKey]) -> list[str]:
        """The chunks citing any of `keys`, in the order of the keys, each once."""
        if collection not in self._citers:
            self._citers[collection] = self._by_key(collection)
        by_key = self._citers[collection]
        return list(dict.fromkeys(chunk_id for key in keys for chunk_id in by_key.get(key, [])))

    def _by_key(self, collection: str) -> dict[SectionKey, list[str]]:
        """Read once per index (a follower lives for one task, while the collection does not change)."""
        by_key: dict[SectionKey, list[str]] = {}
        for chunk_id, found in kept_references(self.kb.index, collection).items():
            for fields in found:
                for key in cited_keys(DetectedReference(**fields), self.target_document, self.shown_name):
                    holders = by_key.setdefault(key, [])
                    if not holders or holders[-1] != chunk_id:
                        holders.append(chunk_id)
        return by_key


def kept_references(index: ChromaIndex, collection: str, show_progress: bool = False) -> dict[str, list[dict]]:
    """Each chunk's section references (chunk id -> what the rules detected), from the kept file when it is in
    step with the collection, else read from every chunk and kept. Ingest calls it too, so that the first
    research on a large collection does not wait for it."""
    state, path, beside = _state(index, collection), citation_index_path(index, collection), \
        _beside_search_files(index, collection)
    found = _kept(path, state)
    if found is None and beside != path and (found := _kept(beside, state)) is not None:
        if path.exists():  # a reader's own copy, damaged or out of step, is replaced by the index's
            _keep(path, state, found)
    if found is not None:
        return found
    chunks = index.all_chunks(collection)
    logger.info("Reading the references of %d passages of %s once (the citation index)", len(chunks), collection)
    references: dict[str, list[dict]] = {}
    with progress(chunks, desc=f"citation index {collection}", unit="chunk", show=show_progress) as bar:
        for chunk in bar:
            found = [reference.model_dump(include=set(_KEPT_FIELDS))
                     for reference in citations(detect_references_regex, result_of(chunk, 0.0, "section"))
                     if reference.type in ("legal_section", "section") and reference.sections]
            if found:
                references[chunk.id] = found
    _keep(path, state, references)
    return references


def _keep(path: Path, state: str, references: dict[str, list[dict]]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.part")
        partial.write_text(json.dumps({"state": state, "references": references}), encoding="utf-8")
        partial.replace(path)
    except OSError as error:  # the index still answers, it only reads the chunks again next time
        logger.warning("The citation index could not be kept at %s: %s", path, error)


def keep_citation_indexes(index: ChromaIndex, show_progress: bool = False) -> None:
    """Read every collection's references after an ingest that changed it (`kept_references`): with a
    progress bar then, instead of a silent wait in the first research."""
    for collection in index.collections():
        kept_references(index, collection, show_progress)


def _state(index: ChromaIndex, collection: str) -> str:
    """What the kept references are checked against: the chunk ids, content hashes of their text."""
    ids = " ".join(sorted(index.chunk_ids(collection)))
    return hashlib.sha256(f"{CITATION_INDEX_VERSION}\n{collection}\n{ids}".encode()).hexdigest()[:16]


def _kept(path: Path, state: str) -> dict[str, list[dict]] | None:
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        return kept["references"] if kept.get("state") == state else None
    except (OSError, ValueError, KeyError, AttributeError, TypeError):
        return None  # none kept yet, or unreadable: read the chunks again


def _beside_search_files(index: ChromaIndex, collection: str) -> Path:
    return index.search_files_folder(collection).parent / f"{index.chroma_name(collection)}.{_FILE}"


def citation_index_path(index: ChromaIndex, collection: str) -> Path:
    """Where this index keeps a collection's references: beside its search files (`<db>/bm25/<chroma
    name>.citers.json`); for an index opened read-only, in this machine's cache by the collection's state, so
    a read leaves the index as it was and the next reader does not read every chunk again."""
    if index.read_only:
        return machine_cache("citation-index") / f"{_state(index, collection)}.{_FILE}"
    return _beside_search_files(index, collection)


def citation_index_kept(index: ChromaIndex, collection: str) -> bool:
    """Whether the index holds the collection's references in step (an ingest keeps them)."""
    return _kept(_beside_search_files(index, collection), _state(index, collection)) is not None

