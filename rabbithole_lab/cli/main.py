"""`rabbithole` command line: ingest | search | research | batch | trail | refs | eval | doctor.

This module only parses; each command lives in kb_commands.py or research_commands.py."""

from __future__ import annotations

import argparse
import sys

from rabbithole_lab.cli.kb_commands import cmd_doctor, cmd_ingest, cmd_refs, cmd_search
from rabbithole_lab.cli.options import configure_logging, positive_int
from rabbithole_lab.cli.research_commands import cmd_batch, cmd_eval, cmd_research, cmd_trail
from rabbithole_lab.cli.smoke import DEMO_QUESTION as SMOKE_QUESTION

# chromadb imports jsonschema, whose IRI format checker compiles a Lark grammar at import when the optional
# rfc3987-syntax (pulled in by Jupyter) is installed: 2.6 s of every command's start. No command validates
# IRI formats, so the checker is left out (jsonschema treats the module as absent).
sys.modules.setdefault("rfc3987_syntax", None)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rabbithole", description="Rabbithole Lab: research that follows references.")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    parser.add_argument("--env-file", default=None,
                        help="settings file (default: .env when there is one; 'none' reads no file)")
    sub = parser.add_subparsers(dest="command", required=True)
    _add_kb_commands(sub)
    _add_research_commands(sub)
    return parser


def _add_kb_commands(sub) -> None:
    ingest = sub.add_parser("ingest", help="ingest a knowledge-base folder")
    ingest.add_argument("kb_dir", help="folder with <Collection>__db_inserted/ subfolders, or one folder of files")
    ingest.add_argument("--db", help="index folder (default KB_DIR/database)")
    ingest.add_argument("--no-progress", action="store_true", help="hide progress bars")
    ingest.add_argument("--reindex", action="store_true",
                        help="re-embed collections another embedder made, from their stored text")
    ingest.set_defaults(func=cmd_ingest)

    search = sub.add_parser("search", help="search the knowledge base")
    search.add_argument("query")
    search.add_argument("--kb", help="knowledge-base folder (default KB_DIR)")
    search.add_argument("--db", help="index folder (default KB_DIR/database)")
    search.add_argument("--collection", help="search only this collection")
    search.add_argument("--doc", help="search only this document (file name)")
    search.add_argument("--k", type=positive_int, default=10, help="number of results")
    search.add_argument("--mode", choices=["hybrid", "dense", "bm25"], default=None)
    search.add_argument("--json", action="store_true", help="print JSON")
    search.set_defaults(func=cmd_search)

    doctor = sub.add_parser("doctor", help="check Ollama, the embedder, the index folder and the reasoner choice")
    doctor.add_argument("--kb", help="knowledge-base folder (default KB_DIR)")
    doctor.add_argument("--db", help="index folder (default KB_DIR/database)")
    doctor.add_argument("--smoke", nargs="?", const=SMOKE_QUESTION, metavar="QUESTION",
                        help="also research one short question end to end with the configured model and show "
                             "node timings, usable JSON per step, prompt sizes against the window and invented "
                             f"citations (default question: {SMOKE_QUESTION!r}, for the demo KB)")
    doctor.set_defaults(func=cmd_doctor)

    refs = sub.add_parser("refs", help="detect references in JSONL texts")
    refs.add_argument("--in", dest="input", required=True, help='JSONL lines {"id", "text", "doc"?}')
    refs.add_argument("--out", required=True, help='JSONL lines {"id", "refs": [...]}')
    refs.add_argument("--kb", help="knowledge-base folder: books are named by its registry (raw_book keeps the text)")
    refs.add_argument("--db", help="index folder (default KB_DIR/database)")
    refs.set_defaults(func=cmd_refs)


def _add_research_commands(sub) -> None:
    research = sub.add_parser("research", help="research a question: clarify, plan, follow references, report")
    research.add_argument("question", nargs="?", help="the research question (omit with --resume)")
    research.add_argument("--kb", help="knowledge-base folder (default KB_DIR; ingested if needed)")
    research.add_argument("--db", help="index folder (default KB_DIR/database)")
    research.add_argument("--collection", help="research only this collection")
    hitl = research.add_mutually_exclusive_group()
    hitl.add_argument("--no-hitl", action="store_true", help="unattended: skip clarification, approve the to-do list")
    hitl.add_argument("--answers", help="file with one clarification answer per line (then /end)")
    research.add_argument("--approve-todo", choices=["ask", "auto"], default=None,
                          help="auto approves the to-do list without asking (default ask; a resumed run keeps its "
                               "own)")
    research.add_argument("--out", help="report folder (default <project>/reports/<date>_<question>)")
    research.add_argument("--sessions", help="SQLite checkpoint file of resumable sessions (default "
                                             "<project>/reports/sessions.sqlite, shared with the workbench)")
    research.add_argument("--resume", metavar="THREAD_ID", help="continue a saved session")
    research.add_argument("--no-progress", action="store_true", help="hide progress bars")
    research.set_defaults(func=cmd_research)

    batch = sub.add_parser("batch", help="research every question of a file unattended (papermill)")
    batch.add_argument("questions", help="one question per line, or JSONL with a 'question' field")
    batch.add_argument("--kb", required=True, help="knowledge-base folder")
    batch.add_argument("--db", help="index folder (default KB_DIR/database)")
    batch.add_argument("--out", help="folder for <date>_<slug>/ report folders and index.html (default "
                                     "<project>/reports)")
    batch.add_argument("--workers", type=positive_int, default=1, help="questions run in parallel (one kernel each)")
    batch.add_argument("--notebook", help="report notebook (default: the packaged research_report.ipynb)")
    batch.add_argument("--trust", action="store_true",
                       help="sign the executed notebooks as trusted, so their interactive graph shows when opened "
                            "(only for questions and documents you trust: a trusted notebook runs its HTML)")
    batch.set_defaults(func=cmd_batch)

    trail = sub.add_parser("trail", help="retrieve for a question and follow its references (no LLM)")
    trail.add_argument("question")
    trail.add_argument("--kb", help="knowledge-base folder (default KB_DIR)")
    trail.add_argument("--db", help="index folder (default KB_DIR/database)")
    trail.add_argument("--collection", help="search only this collection")
    trail.add_argument("--k", type=positive_int, default=None,
                       help="first-stage hits in the candidate pool (default SEARCH_FIRST_STAGE_POOL)")
    trail.add_argument("--budget-chars", type=positive_int, default=12_000, help="context size in characters")
    trail.add_argument("--json", action="store_true")
    trail.set_defaults(func=cmd_trail)

    evaluate = sub.add_parser("eval", help="run cross-reference questions flat or with the rabbithole")
    evaluate.add_argument("--kb", required=True, help="knowledge-base folder (ingested if needed)")
    evaluate.add_argument("--db", help="index folder (default KB_DIR/database)")
    evaluate.add_argument("--questions", required=True, help="question JSONL")
    evaluate.add_argument("--mode", choices=["flat", "rabbithole", "answer"], default="rabbithole",
                          help="retrieval flat or with the rabbithole, or the whole agent's answer")
    evaluate.add_argument("--budget-chars", type=positive_int, default=25_000,
                          help="context size in characters, filled by value per character (both modes alike)")
    evaluate.add_argument(
        "--k", type=positive_int, default=None,
        help="the K most valuable items instead of a character budget (an item budget: Both@K)"
    )
    evaluate.add_argument("--out", required=True, help="prediction JSONL")
    evaluate.add_argument("--no-progress", action="store_true")
    evaluate.set_defaults(func=cmd_eval)


def main(argv: list[str] | None = None) -> int:
    """Run one command; its exit code. A process whose model calls were abandoned at their deadline is
    ended at once with that code (`cli_entry`), so a blocked worker never holds up the exit. Everything the
    command prints passes `terminal_safety`."""
    from rabbithole_lab.support.terminal_safety import safe_standard_streams

    with safe_standard_streams():  # no text from a document, a file name or a model drives the terminal
        parser = build_parser()
        args = parser.parse_args(argv)
        configure_logging(args.verbose)
        return _run(args)


def _run(args) -> int:
    from rabbithole_lab.kb.embedding.embedder import EmbeddingModelError
    from rabbithole_lab.kb.ingest.kb_folder import KBFolderError
    from rabbithole_lab.kb.store.index import IndexError_
    from rabbithole_lab.kb.store.registry import RegistryError
    from rabbithole_lab.settings import SettingsError

    try:
        return args.func(args)
    except (SettingsError, RegistryError, IndexError_, KBFolderError, EmbeddingModelError, ValueError, OSError) as exc:
        if args.debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if args.debug or not _from_the_store(exc):
            raise
        # the Chroma server went away or its file broke mid-command: what was written is kept, a rerun resumes
        print(f"error: the index store failed ({type(exc).__name__}: {exc}); run the command again once it "
              f"answers (an ingest resumes where it stopped)", file=sys.stderr)
        return 2


def _from_the_store(exc: BaseException) -> bool:
    """An error raised by Chroma or its HTTP client."""
    return type(exc).__module__.split(".")[0] in ("chromadb", "httpx", "httpcore")


def cli_entry() -> None:
    """The console script: `main`, then the exit, also when a thread is still blocked in a model call."""
    from rabbithole_lab.reasoning.llm import deadline
    from rabbithole_lab.support.terminal_safety import SafeTextStream

    # for the whole process, so that even a traceback at exit (--debug) shows document text inert
    sys.stdout, sys.stderr = SafeTextStream(sys.stdout), SafeTextStream(sys.stderr)
    code = main()
    if deadline.abandoned_calls():
        deadline.exit_now(code)
    sys.exit(code)


if __name__ == "__main__":
    cli_entry()
