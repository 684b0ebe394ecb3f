"""A private working copy of an embedded Chroma store, for commands that only read.

Chroma has no read-only client: opening a persistent store replays its log into the HNSW segment files
and rewrites them (`length.bin`, `data_level0.bin`) and `chroma.sqlite3`, on every open, also when the
command then fails. A read must leave the index as it was (a colleague's index, a CI cache, a shared
drive mounted read-only), so readers open a copy: the SQLite database through SQLite's backup API (a
consistent snapshot even while an ingest writes; `immutable` where the folder cannot be written, so no
`-shm` file is needed) and the segment folders file by file. The search files (`bm25/`) are not copied:
they are read where they are (kb/search_files.py never writes them for a reader).
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
import tempfile
from pathlib import Path

logger = logging.getLogger(__name__)

STORE_FILE = "chroma.sqlite3"
_NOT_STORE = {"bm25"}  # the search files, read in place


class ReadCopyError(OSError):
    """The store could not be copied for reading (unreadable files, a full temporary disk)."""


def _backup_sqlite(source: Path, target: Path) -> None:
    """A consistent copy of a SQLite database without writing beside it: read-only first, then immutable
    (a read-only folder cannot hold the WAL index a read-only open of a WAL database may need)."""
    errors = []
    for flags in ("mode=ro", "immutable=1"):
        try:
            with sqlite3.connect(f"file:{source}?{flags}", uri=True) as reader, sqlite3.connect(target) as writer:
                reader.backup(writer)
            return
        except sqlite3.Error as exc:
            errors.append(f"{flags}: {exc}")
            target.unlink(missing_ok=True)
    raise ReadCopyError(f"cannot read {source} ({'; '.join(errors)})")


class ReadCopy:
    """A temporary copy of the store at `db_path`, removed by `close()` (and at exit)."""

    def __init__(self, db_path: Path):
        self.source = Path(db_path)
        self._folder = tempfile.TemporaryDirectory(prefix="rabbithole-read-")
        self.path = Path(self._folder.name)
        try:
            if (self.source / STORE_FILE).is_file():
                _backup_sqlite(self.source / STORE_FILE, self.path / STORE_FILE)
            for entry in sorted(self.source.iterdir()) if self.source.is_dir() else []:
                if entry.is_dir() and not entry.is_symlink() and entry.name not in _NOT_STORE:
                    shutil.copytree(entry, self.path / entry.name)
        except OSError as exc:
            self.close()
            raise ReadCopyError(f"cannot read the index at {self.source} ({exc.strerror or exc})") from None
        logger.debug("Reading the index at %s from a copy at %s", self.source, self.path)

    def close(self) -> None:
        self._folder.cleanup()
