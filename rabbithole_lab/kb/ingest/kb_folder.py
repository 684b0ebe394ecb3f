"""What a knowledge-base folder holds: its collections and the files to ingest into each.

`<kb>/<Collection>__db_inserted/*.{pdf,md,txt}` become collection `<Collection>`; a folder without such
subfolders is one collection named after the folder. A .md/.txt next to a PDF of the same stem is that
PDF's text: it stands in for the PDF when the PDF cannot be read, and is otherwise not used, so a
document is never indexed twice.
"""

from __future__ import annotations

import stat
from dataclasses import dataclass
from pathlib import Path

from rabbithole_lab.kb.ingest.parse import SUPPORTED_SUFFIXES
from rabbithole_lab.records import IngestIssue

COLLECTION_SUFFIX = "__db_inserted"
_IGNORED_NAMES = {"document_registry.json", "README.md", "readme.md", "manifest.json"}
_TEXT_SUFFIXES = {".md", ".txt"}


@dataclass(frozen=True)
class SourceFile:
    collection: str
    path: Path
    fallback: Path | None = None  # the same-stem .md/.txt beside a PDF, ingested when the PDF cannot be read

    @property
    def names(self) -> set[str]:
        """The document names this file may be indexed under (itself, or its fallback text)."""
        return {self.path.name} | ({self.fallback.name} if self.fallback else set())


class KBFolderError(ValueError):
    pass


def collection_folders(kb_dir: Path) -> list[tuple[str, Path]]:
    """(collection, folder) for every collection the KB folder defines, an empty one included."""
    kb_dir = Path(kb_dir)
    if not kb_dir.is_dir():
        raise KBFolderError(f"Knowledge-base folder not found: {kb_dir}")
    folders = sorted(p for p in kb_dir.iterdir() if p.is_dir() and p.name.endswith(COLLECTION_SUFFIX))
    if folders:
        return [(folder.name[: -len(COLLECTION_SUFFIX)], folder) for folder in folders]
    return [(kb_dir.resolve().name, kb_dir)]


def _not_own_regular_file(path: Path, homes: tuple[Path, ...]) -> str:
    """Why `path` is not read ("" when it is a regular file of the knowledge base): a symlink that leads out
    of the folder, a broken one (unreadable), or anything that is not a regular file (a device such as /dev/zero, a FIFO
    or a socket would hang the ingest or feed it without end)."""
    target = path
    if path.is_symlink():
        try:
            target = path.resolve(strict=True)
        except (OSError, RuntimeError):
            return "unreadable (broken symlink)"
    try:
        mode = target.stat().st_mode
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if stat.S_ISDIR(mode):
        return "a folder, not a document"
    if not stat.S_ISREG(mode):
        return "not a regular file (a device, a FIFO or a socket)"
    if target is not path and not any(target.is_relative_to(home) for home in homes):
        return f"symlink leads outside the knowledge base ({target})"
    return ""


def _outside(folder: Path, root: Path) -> str:
    """Why a collection folder is not read: it is a symlink that leads out of the knowledge base."""
    try:
        target = folder.resolve(strict=True)
    except (OSError, RuntimeError):
        return "unreadable (broken symlink)"
    if target != root and not target.is_relative_to(root):
        return f"symlink leads outside the knowledge base ({target})"
    return ""


def discover(kb_dir: Path) -> tuple[list[SourceFile], list[IngestIssue]]:
    """The files to ingest and the ones skipped before parsing (with reasons)."""
    kb_dir = Path(kb_dir)
    files: list[SourceFile] = []
    skipped: list[IngestIssue] = []
    root = kb_dir.resolve()
    for collection, folder in collection_folders(kb_dir):
        problem = _outside(folder, root)
        if problem:  # a collection folder is held to the rule of its files: what leads out is not read
            skipped.append(IngestIssue(path=str(folder), reason=problem))
            continue
        entries = []
        for path in sorted(p for p in folder.iterdir() if not p.name.startswith(".")):
            if path.is_dir() and not path.is_symlink():
                continue
            problem = _not_own_regular_file(path, (root,))
            if problem:
                skipped.append(IngestIssue(path=str(path), reason=problem))
            else:
                entries.append(path)
        texts: dict[str, Path] = {}
        pdf_stems = {p.stem for p in entries if p.suffix.lower() == ".pdf"}
        for path in entries:  # one text stands for a PDF (.md before .txt); a second is named, never dropped unsaid
            if path.suffix.lower() in _TEXT_SUFFIXES:
                first = texts.setdefault(path.stem, path)
                if first is not path and path.stem in pdf_stems:
                    skipped.append(IngestIssue(path=str(path), duplicate=True,
                                               reason=f"a second text of {path.stem}.pdf; {first.name} stands for it"))
        for path in entries:
            if path.name in _IGNORED_NAMES and folder == kb_dir:
                continue
            suffix = path.suffix.lower()
            if suffix in _TEXT_SUFFIXES and path.stem in pdf_stems:
                continue  # goes with its PDF, as the fallback
            if suffix not in SUPPORTED_SUFFIXES:
                skipped.append(IngestIssue(path=str(path), reason=f"unsupported file type '{suffix or '(none)'}'"))
                continue
            fallback = texts.get(path.stem) if suffix == ".pdf" else None
            files.append(SourceFile(collection, path, fallback))
    return files, skipped
