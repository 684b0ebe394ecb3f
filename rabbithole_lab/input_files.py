"""The files a command reads from the user (questions, answers, texts) and the files it writes: every
problem is one line naming the file, found before anything is written."""

from __future__ import annotations

import os
from pathlib import Path


class InputFileError(ValueError):
    """A file the user named cannot be read or written as asked: the message names it and says why."""


def read_text_input(path: Path, what: str) -> str:
    """The UTF-8 text of a file the user gave as `what` ("--answers", "questions file")."""
    path = Path(path)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputFileError(f"{what} {path}: no such file") from None
    except IsADirectoryError:
        raise InputFileError(f"{what} {path} is a folder; give a file") from None
    except UnicodeDecodeError as exc:
        raise InputFileError(f"{what} {path} is not UTF-8 text (undecodable byte at offset {exc.start})") from None


def check_output_file(out: Path, what: str, inputs: tuple[Path, ...] = ()) -> None:
    """`out` can be written as a file without destroying an input: not a folder, and not one of `inputs`
    under another name (the same path, a symlink or a hard link)."""
    out = Path(out)
    if out.is_dir():
        raise InputFileError(f"{what} {out} is a folder; give a file name")
    for source in inputs:
        if out.exists() and Path(source).exists() and os.path.samefile(out, source):
            raise InputFileError(f"{what} {out} is the input file {source}; writing would overwrite it. "
                                 f"Choose another {what}")


def check_output_folder(out: Path, what: str) -> None:
    """`out` can hold a folder of files: it is one, or nothing is there yet."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputFileError(f"{what} {out} is a file; give a folder for the report")
