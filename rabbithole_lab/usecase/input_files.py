"""The files a command reads from the user (questions, answers, texts) and the files it writes: every
problem is one line naming the file, found before anything is written."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path


class InputFileError(ValueError):
    """A file the user named cannot be read or written as asked: the message names it and says why."""


MAX_INPUT_BYTES = 256 * 1024 * 1024  # questions, answers and texts: a larger file is a mistake, not an input


def read_text_input(path: Path, what: str, max_bytes: int = MAX_INPUT_BYTES) -> str:
    """The UTF-8 text of a file the user gave as `what` ("--answers", "questions file"), a byte order mark
    left out. Only a regular file is read, up to `max_bytes`: a device (/dev/zero) or a FIFO would be read
    without end."""
    path = Path(path)
    try:
        found = path.stat()
    except FileNotFoundError:
        raise InputFileError(f"{what} {path}: no such file") from None
    except OSError as exc:
        raise InputFileError(f"{what} {path} cannot be read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(found.st_mode):
        raise InputFileError(f"{what} {path} is a folder; give a file")
    if not stat.S_ISREG(found.st_mode):
        raise InputFileError(f"{what} {path} is not a regular file (a device, a FIFO or a socket); give a file")
    if found.st_size > max_bytes:
        raise InputFileError(f"{what} {path} has {found.st_size:,} bytes, more than the {max_bytes:,} an input "
                             "file may have; split it")
    try:
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise InputFileError(f"{what} {path} cannot be read ({exc.strerror or exc})") from None
    if len(data) > max_bytes:  # it grew while being read
        raise InputFileError(f"{what} {path} is larger than the {max_bytes:,} bytes an input file may have")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputFileError(f"{what} {path} is not UTF-8 text (undecodable byte at offset {exc.start})") from None


# the tables of LangGraph's SQLite checkpointer: a sessions file holds these, or nothing yet
SESSION_TABLES = {"checkpoints", "writes"}


def check_session_store(path: Path, what: str = "--sessions") -> None:
    """`path` is a sessions file or can become one: absent, empty, or a SQLite database holding only the
    checkpointer's tables. A Chroma index's `chroma.sqlite3` or another program's database is refused before
    anything is written into it."""
    path = Path(path)
    if path.is_dir():
        raise InputFileError(f"{what} {path} is a folder; give a sessions file (SQLite)")
    if not path.exists() or path.stat().st_size == 0:
        return
    if not path.is_file():
        raise InputFileError(f"{what} {path} is not a regular file; give a sessions file (SQLite)")
    with open(path, "rb") as handle:
        if handle.read(16) != b"SQLite format 3\x00":
            raise InputFileError(f"{what} {path} is not a session database (SQLite); give another file")
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as database:
            tables = {row[0] for row in database.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.Error as exc:
        raise InputFileError(f"{what} {path} cannot be read as a session database ({exc})") from None
    other = sorted(tables - SESSION_TABLES)
    if other:
        raise InputFileError(f"{what} {path} is another program's database (it holds {', '.join(other[:4])}"
                             f"{' …' if len(other) > 4 else ''}); give a sessions file of its own")


def check_output_file(out: Path, what: str, inputs: tuple[Path, ...] = (), kb_dir: Path | None = None) -> None:
    """`out` can be written as a file without destroying an input: not a folder, not one of `inputs` under
    another name (the same path, a symlink or a hard link), and not inside the knowledge base `kb_dir` (it
    would overwrite a document there, or become one at the next ingest)."""
    out = Path(out)
    if out.is_dir():
        raise InputFileError(f"{what} {out} is a folder; give a file name")
    if kb_dir is not None and Path(kb_dir).is_dir() and out.resolve().is_relative_to(Path(kb_dir).resolve()):
        raise InputFileError(f"{what} {out} is inside the knowledge base {kb_dir}; writing there would overwrite "
                             "or add a document. Choose a file outside it")
    for source in inputs:
        if out.exists() and Path(source).exists() and os.path.samefile(out, source):
            raise InputFileError(f"{what} {out} is the input file {source}; writing would overwrite it. "
                                 f"Choose another {what}")


def check_output_folder(out: Path, what: str) -> None:
    """`out` can hold a folder of files: it is one, or nothing is there yet."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputFileError(f"{what} {out} is a file; give a folder for the report")
