"""Ingestion: a KB folder -> collections of section-aware chunks in the index.

`<kb>/<Collection>__db_inserted/*.{pdf,md,txt}` become collection `<Collection>`;
a folder without such subfolders is one collection named after the folder.
A .md/.txt next to a PDF of the same name is taken as that PDF's source and
skipped, so a document is never indexed twice. Bad files are skipped with a
one-line reason; the rest goes in.
"""

from __future__ import annotations

import json
import logging
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tqdm.auto import tqdm

from rabbithole_lab.kb.chunking import chunk_document
from rabbithole_lab.kb.index import ChromaIndex
from rabbithole_lab.kb.parse import SUPPORTED_SUFFIXES, DocumentError, ParsedDocument, file_sha256, parse_file
from rabbithole_lab.kb.registry import RegistryEntry
from rabbithole_lab.records import IngestIssue, IngestReport
from rabbithole_lab.settings import KBSettings

logger = logging.getLogger(__name__)

COLLECTION_SUFFIX = "__db_inserted"
AUTO_REGISTRY_FILE = "auto_registry.json"
_IGNORED_NAMES = {"document_registry.json", "README.md", "readme.md", "manifest.json"}


@dataclass(frozen=True)
class SourceFile:
    collection: str
    path: Path


class KBFolderError(ValueError):
    pass


class IngestBusyError(KBFolderError):
    """Another process is ingesting into the same index."""


def discover(kb_dir: Path) -> tuple[list[SourceFile], list[IngestIssue]]:
    """The files to ingest and the ones skipped before parsing (with reasons)."""
    kb_dir = Path(kb_dir)
    if not kb_dir.is_dir():
        raise KBFolderError(f"Knowledge-base folder not found: {kb_dir}")
    folders = sorted(p for p in kb_dir.iterdir() if p.is_dir() and p.name.endswith(COLLECTION_SUFFIX))
    if folders:
        pairs = [(folder.name[: -len(COLLECTION_SUFFIX)], folder) for folder in folders]
    else:
        pairs = [(kb_dir.resolve().name, kb_dir)]
    files: list[SourceFile] = []
    skipped: list[IngestIssue] = []
    for collection, folder in pairs:
        entries = sorted(
            p for p in folder.iterdir() if (p.is_file() or p.is_symlink()) and not p.name.startswith(".")
        )
        pdf_stems = {p.stem for p in entries if p.suffix.lower() == ".pdf"}
        for path in entries:
            if path.name in _IGNORED_NAMES and folder == kb_dir:
                continue
            suffix = path.suffix.lower()
            if suffix in {".md", ".txt"} and path.stem in pdf_stems:
                logger.info("%s: source text of %s.pdf, the PDF is ingested instead", path.name, path.stem)
                continue
            if suffix not in SUPPORTED_SUFFIXES:
                skipped.append(IngestIssue(path=str(path), reason=f"unsupported file type '{suffix or '(none)'}'"))
                continue
            files.append(SourceFile(collection, path))
    return files, skipped


def _auto_entry(collection: str, document: ParsedDocument) -> RegistryEntry:
    return RegistryEntry(document.doc, collection, document.synonyms, "auto")


def save_auto_registry(db_path: Path, entries: list[RegistryEntry]) -> None:
    path = Path(db_path) / AUTO_REGISTRY_FILE
    existing = load_auto_registry(db_path)
    merged = {(e.filename, e.collection): e for e in existing}
    merged.update({(e.filename, e.collection): e for e in entries})
    data = [
        {"filename": e.filename, "collection": e.collection, "synonyms": e.synonyms}
        for e in sorted(merged.values(), key=lambda e: (e.collection, e.filename))
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".json.partial")  # written whole, then moved: a kill never leaves half a file
    partial.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    partial.replace(path)


def load_auto_registry(db_path: Path) -> list[RegistryEntry]:
    path = Path(db_path) / AUTO_REGISTRY_FILE
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        logger.warning("Ignoring unreadable %s; it is rebuilt on the next ingest", path)
        return []
    return [RegistryEntry(d["filename"], d["collection"], d.get("synonyms", []), "auto") for d in data]


# Bump when chunking or the stored section keys change what a document's chunks are, so that
# unchanged files are chunked again on the next ingest. 2: parts of an Anlage keep its label,
# a paragraph labelled "68)" has the key "68". 4: every chunk stores the page of each of its lines (page_map)
# and whether it continues its section's previous chunk. 5: a Markdown file whose headings carry no section
# labels (only a "# Title") splits at its plain "§ N" lines. 6: a PDF line keeps the spaces PyMuPDF gives as
# spans of their own (table rows read "0,5 0,25", not "0,50,25"). 7: a line is a page number only when the
# number stands bare or between two dashes ("–10", an exponent in a table, stays).
CHUNKING_VERSION = 7


def ingest_fingerprint(file_hash: str, max_chunk_chars: int, overlap_chars: int) -> str:
    """What decides a document's chunks: its bytes, the chunker's version and the chunk sizes."""
    return f"{file_hash}:chunking-v{CHUNKING_VERSION}:{max_chunk_chars}:{overlap_chars}"


def ingest(
    kb_dir: Path,
    index: ChromaIndex,
    settings: KBSettings,
    show_progress: bool = True,
    lock_wait_s: float = 0.0,
    reindex: bool = False,
) -> IngestReport:
    """Ingest every file under `kb_dir` into `index`; idempotent by content hash. A file is chunked again
    when it changed, when its collection's chunk sizes changed, or when the chunker did. With `reindex`,
    collections another embedder made are first re-embedded from their stored text (without it, they are
    an `EmbeddingMismatchError` that says so)."""
    files, skipped = discover(kb_dir)
    report = IngestReport(files_seen=len(files) + len(skipped), skipped=list(skipped))
    touched: set[str] = set()
    collections = sorted({f.collection for f in files})
    with ingest_lock(index.db_path, lock_wait_s):
        if reindex:
            for collection in index.stale_collections():
                with tqdm(desc=f"Re-embedding {collection}", unit="chunk", disable=not show_progress,
                          leave=False) as bar:
                    report.chunks_reembedded += index.reembed(collection, progress=bar)
                touched.add(collection)
        registered = {(e.filename, e.collection) for e in load_auto_registry(index.db_path)}
        seen_content = {digest: f"{collection}/{doc}" for collection in collections
                        for digest, doc in index.document_hashes(collection).items()}
        # bars vanish when done (leave=False): a re-run finds nothing to do and leaves no empty bar behind
        file_bar = tqdm(files, desc="Files", unit="file", disable=not show_progress or not files, leave=False)
        chunk_bar = tqdm(desc="Chunks", unit="chunk", disable=not show_progress or not files, leave=False)
        for source in file_bar:
            file_bar.set_postfix_str(source.path.name)
            stored_ids, stored_fingerprints = index.doc_state(source.collection, source.path.name)
            size, overlap = settings.chunking_for(source.collection)
            try:
                digest = file_sha256(source.path)
                unchanged = stored_ids and stored_fingerprints == {ingest_fingerprint(digest, size, overlap)}
                if unchanged and (source.path.name, source.collection) in registered:
                    report.files_unchanged += 1
                    continue
                duplicate = seen_content.get(digest)
                if duplicate and duplicate != f"{source.collection}/{source.path.name}":
                    report.skipped.append(IngestIssue(path=str(source.path),
                                                      reason=f"same content as {duplicate}, indexed once"))
                    continue
                document = parse_file(source.path)
            except DocumentError as exc:
                report.skipped.append(IngestIssue(path=str(source.path), reason=str(exc)))
                continue
            except OSError as exc:
                report.skipped.append(IngestIssue(path=str(source.path), reason=f"unreadable: {exc.strerror or exc}"))
                continue
            seen_content[digest] = f"{source.collection}/{source.path.name}"
            if unchanged:  # complete in the index, only its registry entry was lost: restore it
                save_auto_registry(index.db_path, [_auto_entry(source.collection, document)])
                report.files_unchanged += 1
                continue
            chunks = chunk_document(document, source.collection, size, overlap)
            chunk_bar.total = (chunk_bar.total or 0) + len(chunks)
            chunk_bar.refresh()
            added, removed = index.replace_document(
                source.collection, document.doc, chunks, ingest_fingerprint(document.file_hash, size, overlap),
                progress=chunk_bar,
            )
            # the registry entry goes in with its document, so no interruption loses it
            save_auto_registry(index.db_path, [_auto_entry(source.collection, document)])
            report.files_ingested += 1
            report.chunks_added += added
            report.chunks_removed += removed
            if added or removed:
                touched.add(source.collection)
        chunk_bar.close()
        file_bar.close()
        for collection in sorted(touched):
            if collection in index.collections():
                index.rebuild_bm25(collection)
    report.collections = collections
    return report


@contextmanager
def ingest_lock(db_path: Path, wait_s: float = 0.0):
    """One ingest per index at a time. `rabbithole ingest` fails fast instead of embedding the same files
    twice; a run that only brings the index up to date before it starts (research, a batch worker) waits
    up to `wait_s` for the other ingest, after which its own finds the files unchanged."""
    import fcntl
    import time

    db_path = Path(db_path)
    db_path.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + wait_s
    with open(db_path / ".ingest.lock", "w") as handle:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise IngestBusyError(
                        f"another ingest is writing to {db_path}; wait until it has finished"
                    ) from None
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def format_report(report: IngestReport) -> str:
    lines = [
        f"Ingested {report.files_ingested} file(s), {report.files_unchanged} unchanged, "
        f"{len(report.skipped)} skipped; chunks +{report.chunks_added} -{report.chunks_removed}; "
        f"collections: {', '.join(report.collections) or 'none'}"
    ]
    if report.chunks_reembedded:
        lines.append(f"  re-embedded {report.chunks_reembedded} stored chunk(s) with the configured embedder")
    for issue in report.skipped:
        lines.append(f"  skipped {issue.path}: {issue.reason}")
    return "\n".join(lines)
