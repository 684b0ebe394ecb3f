"""One writer per index: the ingest lock (`<db>/.ingest.lock`, an advisory flock). Ingests take it;
a search that finds its search files out of step rebuilds them only when it can take it too."""

from __future__ import annotations

import fcntl
import logging
import time
from contextlib import contextmanager
from pathlib import Path

from rabbithole_lab.kb.ingest.kb_folder import KBFolderError

LOCK_FILE = ".ingest.lock"
logger = logging.getLogger(__name__)


class IngestBusyError(KBFolderError):
    """Another process is ingesting into the same index."""


@contextmanager
def ingest_lock(db_path: Path, wait_s: float = 0.0):
    """One ingest per index at a time. `rabbithole ingest` fails fast instead of embedding the same files
    twice; a run that only brings the index up to date before it starts (research, a batch worker) waits
    up to `wait_s` for the other ingest, after which its own finds the files unchanged."""
    db_path = Path(db_path)
    db_path.mkdir(parents=True, exist_ok=True)
    deadline, waiting = time.monotonic() + wait_s, False
    with open(db_path / LOCK_FILE, "w") as handle:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise IngestBusyError(
                        f"another ingest is writing to {db_path}; wait until it has finished"
                    ) from None
                if not waiting:  # said once: a wait of minutes is not a hang
                    logger.warning("Another ingest is writing to %s: waiting up to %.0f s for it", db_path, wait_s)
                    waiting = True
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def writer_lock_if_free(db_path: Path):
    """Yields True holding the lock when no ingest holds it, else False at once (the caller reads what is
    there instead of writing)."""
    db_path = Path(db_path)
    db_path.mkdir(parents=True, exist_ok=True)
    with open(db_path / LOCK_FILE, "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
