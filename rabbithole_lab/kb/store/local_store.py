"""Opening the embedded Chroma store: in place for a writer (said to be read-only where it cannot be written,
never called damaged then), from a private working copy for a command that only reads.

Chroma has no read-only client: opening a persistent store replays its log into the HNSW segment files
and rewrites them (`length.bin`, `data_level0.bin`) and `chroma.sqlite3`, on every open, also when the
command then fails. A read must leave the index as it was (a colleague's index, a CI cache, a shared
drive mounted read-only), so readers open a copy: the SQLite database through SQLite's backup API (a
consistent snapshot even while an ingest writes; `immutable` where the folder cannot be written, so no
`-shm` file is needed) and the segment folders file by file. The search files (`bm25/`) are not copied:
they are read where they are (kb/store/search_files.py never writes them for a reader).
"""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

logger = logging.getLogger(__name__)

STORE_FILE = "chroma.sqlite3"
_NOT_STORE = {"bm25"}  # the search files, read in place


class IndexError_(RuntimeError):
    """Base for index problems with a user-readable message."""


class IndexStoreError(IndexError_):
    """The Chroma store cannot be opened or stopped answering (a damaged file, a server that went away)."""


class IndexReadOnlyError(IndexError_):
    """The index cannot be written here (a read-only mount, or opened for reading): never called damaged."""


class UnknownCollectionError(IndexError_):
    pass


class EmbeddingMismatchError(IndexError_):
    pass


def _says_read_only(error: Exception) -> bool:
    text = str(error).lower()
    return "readonly" in text or "read-only" in text or "read only" in text


def _writable(folder: Path) -> bool:
    """Whether a file can be made in `folder`: also on a read-only mount, where the permission bits (and
    `os.access` for root) say yes."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


class ReadCopyError(OSError):
    """The store could not be copied for reading (unreadable files, a full temporary disk)."""


class DamagedStoreError(ReadCopyError):
    """The store's SQLite file is no database, or a damaged one."""


def _backup_sqlite(source: Path, target: Path) -> None:
    """A consistent copy of a SQLite database without writing beside it: read-only first, then immutable
    (a read-only folder cannot hold the WAL index a read-only open of a WAL database may need)."""
    errors = []
    for flags in ("mode=ro", "immutable=1"):
        try:
            with sqlite3.connect(f"file:{source}?{flags}", uri=True) as reader, sqlite3.connect(target) as writer:
                reader.backup(writer)
            return
        except sqlite3.DatabaseError as exc:
            if "not a database" in str(exc) or "malformed" in str(exc):
                target.unlink(missing_ok=True)
                raise DamagedStoreError(str(exc)) from None
            errors.append(f"{flags}: {exc}")
            target.unlink(missing_ok=True)
        except sqlite3.Error as exc:
            errors.append(f"{flags}: {exc}")
            target.unlink(missing_ok=True)
    raise ReadCopyError(f"cannot read {source} ({'; '.join(errors)})")


_PREFIX = "rabbithole-read-"


def _remove_orphans() -> None:
    """Remove the copies of readers that were killed (kill -9 runs no clean-up): their process is gone."""
    for folder in Path(tempfile.gettempdir()).glob(f"{_PREFIX}*-*"):
        pid = folder.name[len(_PREFIX):].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            continue  # another user's process: not ours to judge


class ReadCopy:
    """A temporary copy of the store at `db_path`, removed by `close()` (and at exit)."""

    def __init__(self, db_path: Path):
        self.source = Path(db_path)
        self._copied_from = self._state()  # taken first: a write during the copy makes the copy outdated
        _remove_orphans()
        self._folder = tempfile.TemporaryDirectory(prefix=f"{_PREFIX}{os.getpid()}-")
        self.path = Path(self._folder.name)
        try:
            if (self.source / STORE_FILE).is_file():
                _backup_sqlite(self.source / STORE_FILE, self.path / STORE_FILE)
            for entry in sorted(self.source.iterdir()) if self.source.is_dir() else []:
                if entry.is_dir() and not entry.is_symlink() and entry.name not in _NOT_STORE:
                    shutil.copytree(entry, self.path / entry.name)
        except DamagedStoreError:
            self.close()
            raise
        except OSError as exc:
            self.close()
            raise ReadCopyError(f"cannot read the index at {self.source} ({exc.strerror or exc})") from None
        logger.debug("Reading the index at %s from a copy at %s", self.source, self.path)

    def _state(self) -> tuple:
        """What an ingest changes: the SQLite file and its write-ahead log (every write of Chroma commits)."""
        state = []
        for name in (STORE_FILE, f"{STORE_FILE}-wal"):
            try:
                found = (self.source / name).stat()
                state.append((name, found.st_size, found.st_mtime_ns))
            except OSError:
                state.append((name, None, None))
        return tuple(state)

    def outdated(self) -> bool:
        return self._state() != self._copied_from

    def close(self) -> None:
        self._folder.cleanup()


def _store_folder(db_path: Path, read_only: bool) -> tuple[Path, ReadCopy | None]:
    """Where the store is opened: the index folder itself for a writer (made when missing), a private copy of
    it for a reader."""
    if read_only:
        try:
            copy = ReadCopy(db_path)
        except DamagedStoreError as exc:
            raise IndexStoreError(f"the index at {db_path} is damaged ({exc}); move that folder away and run "
                                  "`rabbithole ingest` again to rebuild it from the documents") from None
        except ReadCopyError as exc:
            raise IndexStoreError(str(exc)) from None
        return copy.path, copy
    try:
        db_path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise IndexReadOnlyError(f"the index folder {db_path} cannot be made ({exc.strerror or exc})") from None
    store = db_path / STORE_FILE
    if not os.access(db_path, os.W_OK) or (store.exists() and not os.access(store, os.W_OK)) \
            or not _writable(db_path):
        raise IndexReadOnlyError(
            f"the index at {db_path} is read-only; it can be searched and researched, but `rabbithole ingest` "
            "needs to write to it: copy the folder somewhere writable and pass --db")
    return db_path, None


def open_local_store(db_path: Path, read_only: bool, client_settings):
    """(Chroma client, the reader's copy or None) for the store at `db_path`."""
    import chromadb

    opened_at, copy = _store_folder(Path(db_path), read_only)
    try:
        return chromadb.PersistentClient(path=str(opened_at), settings=client_settings), copy
    except Exception as exc:  # a truncated or overwritten chroma.sqlite3: nothing is deleted for the user
        if copy is not None:
            copy.close()
        if _says_read_only(exc):
            raise IndexReadOnlyError(f"the index at {db_path} is read-only ({exc}); it can be searched and "
                                     "researched, but `rabbithole ingest` needs a writable copy of it (--db)") from None
        raise IndexStoreError(f"the index at {db_path} is damaged ({exc}); move that folder away and run "
                              "`rabbithole ingest` again to rebuild it from the documents") from None
