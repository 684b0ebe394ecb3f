"""What every `rabbithole` command shares: logging, settings, the knowledge-base paths, usage errors."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

logger = logging.getLogger("rabbithole_lab.cli.main")

_NOISY_LOGGERS = ("bm25s", "chromadb", "httpx", "httpcore", "sentence_transformers", "urllib3", "transformers")


def configure_logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
        force=True,
    )
    for name in _NOISY_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


NO_ENV_FILE = "none"  # `--env-file none`: settings from the environment only
MAX_QUESTION_CHARS = 4_000  # about a page: longer input is a pasted document, not a question


def command_settings(args):
    """The settings of a command: `--env-file` when given (it must exist), else ./.env when there is one."""
    from rabbithole_lab.project import find_env_file
    from rabbithole_lab.settings import load_settings

    named = getattr(args, "env_file", None)
    if named is None:
        return load_settings(".env")
    if named.lower() == NO_ENV_FILE:
        return load_settings(None)
    found = find_env_file(named)
    if found is None or not found.is_file():
        raise UsageError(f"--env-file {named}: no such file (give an existing settings file, or '{NO_ENV_FILE}')")
    return load_settings(found)


def check_question(text: str, what: str) -> None:
    """A question or query that can be read: some words, and not a whole document."""
    if not text.strip():
        raise UsageError(f"empty {what}: give the words to search for")
    if len(text) > MAX_QUESTION_CHARS:
        raise UsageError(f"the {what} has {len(text):,} characters; at most {MAX_QUESTION_CHARS:,} are read. "
                         f"Ask it in fewer words")


class UsageError(ValueError):
    """Input the user can fix (a missing folder, a bad value): one line, exit code 2, nothing written."""


def kb_paths(args, settings, must_exist: bool = True) -> tuple[Path, Path]:
    kb_dir = Path(args.kb) if getattr(args, "kb", None) else Path(settings.kb.kb_dir)
    db = Path(args.db) if getattr(args, "db", None) else settings.db_path(kb_dir)
    if must_exist and not kb_dir.is_dir():
        raise UsageError(f"knowledge-base folder not found: {kb_dir} (give --kb an existing folder)")
    if db.exists() and not db.is_dir():
        raise UsageError(f"--db {db} is a file; give a folder for the index")
    return kb_dir, db


def existing_index(db: Path, kb_dir: Path) -> None:
    """Searching never creates an index: without one (a missing or an empty folder) there is nothing to
    search."""
    if not db.is_dir() or not any(db.iterdir()):
        raise UsageError(f"no index at {db}: run `rabbithole ingest {kb_dir}` first")


def check_collection(kb, collection: str | None, kb_dir: Path | None = None) -> None:
    """The collection asked for is in the index; and the index holds the collections the knowledge-base folder
    defines (another client may have deleted one from a shared store): what is gone is named, with the command
    that brings it back."""
    from rabbithole_lab.kb.ingest.kb_folder import collection_folders

    stored = kb.collections()
    defined = [name for name, _ in collection_folders(kb_dir)] if kb_dir is not None and kb_dir.is_dir() else []
    gone = [name for name in defined if name not in stored]
    again = f"run `rabbithole ingest {kb_dir}` to index it again" if kb_dir is not None else ""
    if collection and collection not in stored:
        if collection in gone:
            raise UsageError(f"collection '{collection}' of {kb_dir} is not in the index at {kb.index.location} "
                             f"(deleted from the store, or never ingested); {again}")
        raise UsageError(f"unknown collection '{collection}'; this knowledge base has: {', '.join(stored) or 'none'}")
    if defined and not stored:
        raise UsageError(f"the index at {kb.index.location} holds no collection of {kb_dir} ({', '.join(gone)}): "
                         f"deleted from the store, or never ingested; {again}")
    if gone and not collection:
        logger.warning("Collection(s) %s of %s are not in the index at %s; %s", ", ".join(gone), kb_dir,
                       kb.index.location, again)


def open_existing_knowledge(args, settings):
    """The knowledge base a reading command (search, trail) works on: it must be indexed already, and a
    collection asked for must be in it."""
    from rabbithole_lab.kb.kb_factory import open_knowledge_base

    by_db_alone = bool(args.db) and not args.kb  # the index folder names its knowledge base
    kb_dir, db = kb_paths(args, settings, must_exist=not by_db_alone)
    existing_index(db, kb_dir)
    kb = open_knowledge_base(settings, None if by_db_alone else kb_dir, db)
    check_collection(kb, args.collection, None if by_db_alone else kb_dir)
    return kb


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more (got {value})")
    return value


