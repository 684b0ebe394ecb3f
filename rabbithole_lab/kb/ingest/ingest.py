"""Ingestion: a KB folder -> collections of section-aware chunks in the index, and the index follows
the folder.

Each ingest brings the index to what an ingest of the folder as it is now into an empty index would
give: files that left the folder (or can no longer be read) leave the index with their chunks, search
files and registry entries; of files with the same content in one collection the first in folder order is
indexed, decided afresh each time, so a copy is indexed once its original is gone. A PDF that cannot be read is replaced
by its same-stem .md/.txt when there is one. Bad files are skipped with a one-line reason; the rest goes in.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from rabbithole_lab.kb.ingest.auto_registry import forget_auto_entries, load_auto_registry, save_auto_registry
from rabbithole_lab.kb.ingest.chunking import chunk_document
from rabbithole_lab.kb.ingest.ingest_lock import IngestBusyError, ingest_lock
from rabbithole_lab.kb.ingest.kb_folder import KBFolderError, SourceFile, collection_folders, discover
from rabbithole_lab.kb.ingest.ocr import OcrAccess
from rabbithole_lab.kb.ingest.parse import DocumentError, ParsedDocument, file_sha256, parse_file
from rabbithole_lab.kb.store.index import ChromaIndex
from rabbithole_lab.kb.store.registry import RegistryEntry
from rabbithole_lab.records import IngestIssue, IngestReport
from rabbithole_lab.settings import KBSettings, OcrSettings
from rabbithole_lab.support.progress_bars import progress

logger = logging.getLogger(__name__)

__all__ = ["IngestBusyError", "KBFolderError", "format_report", "ingest", "ingest_fingerprint"]

# Bump when chunking or the stored section keys change what a document's chunks are, so that
# unchanged files are chunked again on the next ingest. 2: parts of an Anlage keep its label,
# a paragraph labelled "68)" has the key "68". 4: every chunk stores the page of each of its lines (page_map)
# and whether it continues its section's previous chunk. 5: a Markdown file whose headings carry no section
# labels (only a "# Title") splits at its plain "§ N" lines. 6: a PDF line keeps the spaces PyMuPDF gives as
# spans of their own (table rows read "0,5 0,25", not "0,50,25"). 7: a line is a page number only when the
# number stands bare or between two dashes ("–10", an exponent in a table, stays). 8: a numbered block's section
# key is its number ("4.1 (Chapter 4 …)" -> "4.1", "Footnote 53 (…)" -> "footnote53"). 9: also when a colon
# follows its number ("Article 19: Annual Quantitative Template …" -> "19"). Tables read as rows (PDF_TABLES=rows)
# are in the fingerprint on their own: the text copies' chunks stay as they were.
CHUNKING_VERSION = 9


def ingest_fingerprint(file_hash: str, max_chunk_chars: int, overlap_chars: int, tables: str = "text") -> str:
    """What decides a document's chunks: its bytes, the chunker's version, the chunk sizes and how tables are read."""
    read_as = "" if tables == "text" else f":tables-{tables}"
    return f"{file_hash}:chunking-v{CHUNKING_VERSION}:{max_chunk_chars}:{overlap_chars}{read_as}"


def _auto_entry(collection: str, document: ParsedDocument) -> RegistryEntry:
    return RegistryEntry(document.doc, collection, document.synonyms, "auto")


@dataclass
class _Ingest:
    """One ingest's work on the index, holding the ingest lock."""

    index: ChromaIndex
    settings: KBSettings
    report: IngestReport
    registered: set[tuple[str, str]]
    touched: set[str] = field(default_factory=set)
    chunk_bar: object = None
    # the chunk bar's total is the chunks written so far and an estimate for the files still to read, from the
    # chunks each byte read so far gave: its time left holds for the whole ingest, not only the file at hand
    bytes_left: int = 0
    bytes_read: int = 0
    chunks_written: int = 0
    ocr: OcrAccess | None = None

    def drop(self, collection: str, doc: str) -> None:
        """Take a document out of the index when it is in it (it left the folder or cannot be read); its
        collection exists (every file's state was read from it, departed documents come from it)."""
        removed = self.index.delete_document(collection, doc)
        if removed:
            self.report.removed.append(f"{collection}/{doc}")
            self.report.chunks_removed += removed
            self.touched.add(collection)
        if (doc, collection) in self.registered:
            forget_auto_entries(self.index.auto_registry_path, {(doc, collection)})
            self.registered.discard((doc, collection))

    def source(self, source: SourceFile, digest: str) -> None:
        """Ingest one file (or its fallback text when it is a PDF that cannot be read)."""
        collection, path = source.collection, source.path
        file_bytes = _size_bytes(path)
        self.bytes_left = max(0, self.bytes_left - file_bytes)
        stored_ids, stored_fingerprints = self.index.doc_state(collection, path.name)
        size, overlap = self.settings.chunking_for(collection)
        fingerprint = ingest_fingerprint(digest, size, overlap, self.settings.pdf_tables)
        unchanged = bool(stored_ids) and stored_fingerprints == {fingerprint}
        if not (unchanged and (path.name, collection) in self.registered):
            try:
                document = parse_file(path, self.ocr, tables=self.settings.pdf_tables == "rows")
            except DocumentError as exc:
                self.unreadable(source, str(exc))
                return
            except OSError as exc:
                self.unreadable(source, f"unreadable: {exc.strerror or exc}")
                return
            self.note_pages(document)
            # the registry entry goes in with its document, so no interruption loses it
            if not unchanged:
                self.write(collection, document, fingerprint, file_bytes)
            save_auto_registry(self.index.auto_registry_path, [_auto_entry(collection, document)])
            self.registered.add((path.name, collection))
        if unchanged:
            self.report.files_unchanged += 1
        if source.fallback is not None:
            self.drop(collection, source.fallback.name)
            self.report.not_used.append(IngestIssue(path=str(source.fallback), reason=f"not used ({path.name} read)"))

    def note_pages(self, document: ParsedDocument) -> None:
        """The report counts the pages OCR read and names the poorly read and the unread ones."""
        floor = self.ocr.settings.confidence_floor if self.ocr is not None else 0.0
        for page, confidence in sorted(document.ocr_confidence.items()):
            report = self.report
            report.ocr_mean_confidence = round((report.ocr_mean_confidence * report.pages_ocr + confidence)
                                               / (report.pages_ocr + 1), 1)
            report.pages_ocr += 1
            if confidence < floor:
                report.ocr_poor_pages.append(f"{document.doc} p. {page} ({confidence:.0f})")
        self.report.unread_pages.extend(f"{document.doc} p. {page}: {reason}"
                                        for page, reason in sorted(document.unread_pages.items()))

    def unreadable(self, source: SourceFile, reason: str) -> None:
        self.drop(source.collection, source.path.name)
        if source.fallback is None:
            self.report.skipped.append(IngestIssue(path=str(source.path), reason=reason))
            return
        fallback = source.fallback
        issue = IngestIssue(path=str(source.path), reason=f"{reason}; its text {fallback.name} is ingested instead")
        self.report.skipped.append(issue)
        try:
            digest = file_sha256(fallback)
        except OSError as exc:
            issue.reason = f"{reason}; its text {fallback.name} cannot be read either ({exc.strerror or exc})"
            return
        held = len(self.report.skipped)
        self.source(SourceFile(source.collection, fallback), digest)
        if len(self.report.skipped) > held:  # the text failed too: one line says both, never "ingested instead"
            failed = self.report.skipped.pop()
            issue.reason = f"{reason}; its text {fallback.name} cannot be used either ({failed.reason})"

    def write(self, collection: str, document: ParsedDocument, fingerprint: str, file_bytes: int = 0) -> None:
        size, overlap = self.settings.chunking_for(collection)
        chunks = chunk_document(document, collection, size, overlap)
        self.bytes_read += file_bytes
        self.chunks_written += len(chunks)
        if self.chunk_bar is not None:
            per_byte = self.chunks_written / self.bytes_read if self.bytes_read else 0.0
            self.chunk_bar.total = self.chunks_written + round(self.bytes_left * per_byte)
            self.chunk_bar.refresh()
        added, removed = self.index.replace_document(collection, document.doc, chunks, fingerprint,
                                                     progress=self.chunk_bar)
        self.report.files_ingested += 1
        self.report.chunks_added += added
        self.report.chunks_removed += removed
        if added or removed:
            self.touched.add(collection)


_EMPTY_CONTENT = hashlib.sha256(b"").hexdigest()  # empty files are no copies of each other: each is reported


def _first_of_each_content(files: list[SourceFile], report: IngestReport) -> list[tuple[SourceFile, str]]:
    """(file, content hash) of the files to index: of files with the same bytes in one collection the first in
    folder order (the others are reported as copies); files that cannot be read are reported. The same file in
    two collections is in both: each collection is searched on its own."""
    first: dict[tuple[str, str], SourceFile] = {}
    kept: list[tuple[SourceFile, str]] = []
    for source in files:
        try:
            digest = file_sha256(source.path)
        except OSError as exc:
            report.skipped.append(IngestIssue(path=str(source.path), reason=f"unreadable: {exc.strerror or exc}"))
            continue
        original = first.setdefault((source.collection, digest), source) if digest != _EMPTY_CONTENT else source
        if original is not source:
            copy_of = f"{original.collection}/{original.path.name}"
            report.skipped.append(IngestIssue(path=str(source.path), reason=f"same content as {copy_of}, indexed once",
                                              duplicate=True))
            continue
        kept.append((source, digest))
    return kept


def ingest(
    kb_dir: Path,
    index: ChromaIndex,
    settings: KBSettings,
    show_progress: bool = True,
    lock_wait_s: float = 0.0,
    reindex: bool = False,
    ocr: OcrSettings | None = None,
) -> IngestReport:
    """Bring `index` to the folder `kb_dir`; idempotent by content hash. A file is chunked again when it
    changed, when its collection's chunk sizes changed, or when the chunker did; a file that left the
    folder leaves the index. With `reindex`, collections another embedder made are first re-embedded from
    their stored text (without it, they are an `EmbeddingMismatchError` that says so)."""
    started = time.perf_counter()
    files, skipped = discover(kb_dir)
    folder_collections = [collection for collection, _ in collection_folders(kb_dir)]
    report = IngestReport(files_seen=len(files) + len(skipped) + sum(1 for f in files if f.fallback),
                          skipped=list(skipped))
    with ingest_lock(index.db_path, lock_wait_s):
        registered = load_auto_registry(index.auto_registry_path)
        run = _Ingest(index, settings, report, {(e.filename, e.collection) for e in registered},
                      ocr=OcrAccess(ocr if ocr is not None else OcrSettings(), show_progress=show_progress))
        if reindex:
            for collection in index.stale_collections():
                with progress(desc=f"Re-embedding {collection}", unit="chunk", show=show_progress) as bar:
                    report.chunks_reembedded += index.reembed(collection, progress=bar)
                run.touched.add(collection)
        kept = _first_of_each_content(files, report)
        run.bytes_left = sum(_size_bytes(source.path) for source, _ in kept)
        in_folder = {(source.collection, name) for source, _ in kept for name in source.names}
        stored = set(index.collections())
        for collection in folder_collections:
            for doc in index.documents(collection) if collection in stored else []:
                if (collection, doc) not in in_folder:
                    run.drop(collection, doc)
        # bars vanish when done (leave=False): a re-run finds nothing to do and leaves no empty bar behind
        file_bar = progress(kept, desc="Files", unit="file", show=show_progress and bool(kept))
        run.chunk_bar = progress(desc="Chunks", unit="chunk", show=show_progress and bool(kept))
        for source, digest in file_bar:
            file_bar.set_postfix_str(source.path.name)
            run.source(source, digest)
        run.chunk_bar.close()
        file_bar.close()
        registered = load_auto_registry(index.auto_registry_path)
        forget_auto_entries(index.auto_registry_path, {(e.filename, e.collection) for e in registered
                                                       if e.collection in folder_collections
                                                       and (e.collection, e.filename) not in in_folder})
        # a rebuild killed by an earlier ingest is finished here, not left to the first search
        for collection in sorted(set(index.collections()) & (set(folder_collections) | run.touched)):
            if collection in run.touched or not index.search_files_in_step(collection):
                index.rebuild_bm25(collection)
    report.collections = sorted({source.collection for source in files})
    report.seconds = round(time.perf_counter() - started, 1)
    return report


def _size_bytes(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def ingest_pending(kb_dir: Path, index: ChromaIndex, settings: KBSettings) -> bool:
    """Whether `ingest` would change the index: a file new, changed or chunked otherwise, a document gone from
    the folder, a collection's search files out of step. Read only (a reader's index will do), so a research
    whose folder is indexed already opens the index read-only."""
    files, _ = discover(kb_dir)
    kept = _first_of_each_content(files, IngestReport())
    stored = set(index.collections())
    registered = {(e.filename, e.collection) for e in load_auto_registry(index.auto_registry_path)}
    in_folder: dict[str, set[str]] = {}
    for source, digest in kept:
        in_folder.setdefault(source.collection, set()).update(source.names)
        if source.collection not in stored:
            return True
        stored_ids, fingerprints = index.doc_state(source.collection, source.path.name)
        size, overlap = settings.chunking_for(source.collection)
        if not stored_ids or fingerprints != {ingest_fingerprint(digest, size, overlap, settings.pdf_tables)} \
                or (source.path.name, source.collection) not in registered:
            return True
    for collection, _ in collection_folders(kb_dir):
        if collection in stored and (set(index.documents(collection)) - in_folder.get(collection, set())
                                     or not index.search_files_in_step(collection)):
            return True
    return False


def format_report(report: IngestReport) -> str:
    lines = [
        f"Ingested {report.files_ingested} file(s), {report.files_unchanged} unchanged, "
        f"{len(report.skipped)} skipped, {len(report.removed)} removed; "
        f"chunks +{report.chunks_added} -{report.chunks_removed}; "
        f"collections: {', '.join(report.collections) or 'none'}"
    ]
    if report.chunks_added and report.seconds:
        lines.append(f"  {report.seconds:.0f} s, {report.chunks_added / report.seconds:.1f} chunks a second")
    if report.pages_ocr:
        lines.append(f"  OCR: {report.pages_ocr} scanned page(s) read by Tesseract, mean confidence "
                     f"{report.ocr_mean_confidence:.0f} of 100")
    if report.ocr_poor_pages:
        lines.append(f"  OCR read poorly (confidence below the floor, OCR_CONFIDENCE_FLOOR): "
                     f"{', '.join(report.ocr_poor_pages)}")
    for page in report.unread_pages:
        lines.append(f"  page without a text layer not read: {page}")
    if report.chunks_reembedded:
        lines.append(f"  re-embedded {report.chunks_reembedded} stored chunk(s) with the configured embedder")
    if report.removed:
        names = ", ".join(doc.split("/", 1)[-1] for doc in report.removed)
        lines.append(f"  \u2212{len(report.removed)} removed (no longer in the folder, or no longer readable): {names}")
    for issue in report.skipped:
        lines.append(f"  skipped {issue.path}: {issue.reason}")
    for issue in report.not_used:
        lines.append(f"  {issue.path}: {issue.reason}")
    return "\n".join(lines)


def made_before(kb_dir: Path, db: Path) -> dict:
    """What is there before an ingest: the store and the index folder's entries (nothing of the knowledge-base
    folder: an ingest never writes there)."""
    return {"store": (db / "chroma.sqlite3").is_file(), "db": set(db.iterdir()) if db.is_dir() else None}


def remove_made(kb_dir: Path, db: Path, before: dict) -> None:
    """Take away what an ingest that read no file made (`made_before`): no index stays behind."""
    made = [db] if before["db"] is None else [entry for entry in db.iterdir() if entry not in before["db"]]
    for entry in made:
        shutil.rmtree(entry, ignore_errors=True) if entry.is_dir() else entry.unlink(missing_ok=True)
