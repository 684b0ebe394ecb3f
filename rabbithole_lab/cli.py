"""`rabbithole` command line: ingest | search | research | batch | trail | refs | eval | doctor."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
from pathlib import Path

logger = logging.getLogger("rabbithole_lab.cli")

# chromadb imports jsonschema, whose IRI format checker compiles a Lark grammar at import when the optional
# rfc3987-syntax (pulled in by Jupyter) is installed: 2.6 s of every command's start. No command validates
# IRI formats, so the checker is left out (jsonschema treats the module as absent).
sys.modules.setdefault("rfc3987_syntax", None)

_NOISY_LOGGERS = ("bm25s", "chromadb", "httpx", "httpcore", "sentence_transformers", "urllib3", "transformers")


def _configure_logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
        force=True,
    )
    for name in _NOISY_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def _settings(args):
    from rabbithole_lab.settings import load_settings

    return load_settings(getattr(args, "env_file", ".env"))


class UsageError(ValueError):
    """Input the user can fix (a missing folder, a bad value): one line, exit code 2, nothing written."""


def _kb_paths(args, settings, must_exist: bool = True) -> tuple[Path, Path]:
    kb_dir = Path(args.kb) if getattr(args, "kb", None) else Path(settings.kb.kb_dir)
    db = Path(args.db) if getattr(args, "db", None) else settings.db_path(kb_dir)
    if must_exist and not kb_dir.is_dir():
        raise UsageError(f"knowledge-base folder not found: {kb_dir} (give --kb an existing folder)")
    if db.exists() and not db.is_dir():
        raise UsageError(f"--db {db} is a file; give a folder for the index")
    return kb_dir, db


def _existing_index(db: Path, kb_dir: Path) -> None:
    """Searching never creates an index: without one there is nothing to search."""
    if not db.is_dir():
        raise UsageError(f"no index at {db}: run `rabbithole ingest {kb_dir}` first")


def _check_collection(kb, collection: str | None) -> None:
    if collection and collection not in kb.collections():
        raise UsageError(f"unknown collection '{collection}'; this knowledge base has: "
                         f"{', '.join(kb.collections()) or 'none'}")


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more (got {value})")
    return value


def cmd_ingest(args) -> int:
    from rabbithole_lab.kb.factory import open_index
    from rabbithole_lab.kb.ingest import format_report, ingest

    settings = _settings(args)
    kb_dir = Path(args.kb_dir)
    _, db = _kb_paths(argparse.Namespace(kb=str(kb_dir), db=args.db), settings)  # the folder exists before any index
    index = open_index(settings, kb_dir, db)
    report = ingest(kb_dir, index, settings.kb, show_progress=not args.no_progress, reindex=args.reindex)
    print(format_report(report))
    print(f"Index: {index.location}")
    return 0 if report.ok else 1


def cmd_search(args) -> int:
    from rabbithole_lab.kb.factory import open_knowledge_base

    settings = _settings(args)
    kb_dir, db = _kb_paths(args, settings)
    _existing_index(db, kb_dir)
    kb = open_knowledge_base(settings, kb_dir, db)
    _check_collection(kb, args.collection)
    results = kb.search(args.query, k=args.k, mode=args.mode, collection=args.collection, doc=args.doc)
    if args.json:
        print(json.dumps([r.public_dict() for r in results], ensure_ascii=False, indent=1))
        return 0
    if not results:
        print("No results.")
    for rank, result in enumerate(results, start=1):
        pages = f"p. {result.page_start}" + (f"-{result.page_end}" if result.page_end != result.page_start else "")
        preview = " ".join(result.text.split())[:160]
        print(f"{rank:2}. {result.doc} {result.section or '-'} ({pages}, {result.collection}) "
              f"score {result.score:.3f}\n    {preview}")
    return 0


def cmd_doctor(args) -> int:
    from rabbithole_lab.kb.embedder import build_embedder, choose_embedder
    from rabbithole_lab.reasoning.provider import choose_provider, probe_ollama

    settings = _settings(args)
    kb_dir, db = _kb_paths(args, settings, must_exist=False)
    problems = 0
    status = probe_ollama(settings)
    if status.reachable:
        print(f"[ok]   Ollama answers at {status.base_url} ({len(status.models)} model(s))")
        for model in (settings.ollama.model, settings.ollama.fallback_model):
            mark = "ok" if status.has(model) else "warn"
            print(f"[{mark}] {'  ' if mark == 'ok' else ''}model {model}: {'pulled' if status.has(model) else 'not pulled'}")
    else:
        print(f"[warn] Ollama does not answer at {status.base_url}: {status.error}")
    choice = choose_embedder(settings.embedding)
    if choice.notice:
        print(f"[warn] {choice.notice}")
    try:
        embedder = build_embedder(settings.embedding)
        vector = embedder.embed_query("doctor")
        languages = ", ".join(sorted(embedder.languages)).replace("*", "any language")
        print(f"[ok]   embedding model {choice.model} ({choice.backend}) loads ({vector.shape[0]} dimensions, "
              f"reads {languages})")
    except Exception as exc:  # report every failure, keep checking
        problems += 1
        print(f"[fail] embedding model {choice.model} ({choice.backend}): {exc}")
    if settings.chroma.host:
        try:
            import chromadb
            from chromadb.config import Settings as ChromaClientSettings

            client = chromadb.HttpClient(
                host=settings.chroma.host,
                port=settings.chroma.port,
                settings=ChromaClientSettings(anonymized_telemetry=False),
            )
            client.heartbeat()
            print(f"[ok]   Chroma server answers at {settings.chroma.host}:{settings.chroma.port}")
        except Exception as exc:
            problems += 1
            print(f"[fail] Chroma server {settings.chroma.host}:{settings.chroma.port}: {exc}")
    try:
        db.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=db, prefix=".doctor-"):
            pass
        print(f"[ok]   index folder {db} is writable")
    except OSError as exc:
        problems += 1
        print(f"[fail] index folder {db} is not writable: {exc}")
    choice = choose_provider(settings, status)
    model = f" ({choice.model})" if choice.model else ""
    print(f"[info] LLM_PROVIDER={settings.llm.provider} -> reasoner: {choice.provider}{model}: {choice.reason}")
    print(f"[info] knowledge base folder: {kb_dir}")
    return 1 if problems else 0


def cmd_refs(args) -> int:
    from rabbithole_lab.rabbithole.reference_merge import detect_references

    settings = _settings(args)
    if Path(args.input).resolve() == Path(args.out).resolve():
        print("error: --in and --out name the same file; writing would empty it. Choose another --out.",
              file=sys.stderr)
        return 2
    registry = None
    if args.kb:
        from rabbithole_lab.kb.factory import load_registry_only

        kb_dir, db = _kb_paths(args, settings)
        registry = load_registry_only(settings, kb_dir, db)
    llm_extract, method = None, "regex"
    if settings.llm.provider != "extractive":
        from rabbithole_lab.reasoning.factory import reference_extractor

        llm_extract = reference_extractor(settings)
        method = settings.references.extraction_method if llm_extract else "regex"
    count = 0
    with open(args.input, encoding="utf-8") as source, open(args.out, "w", encoding="utf-8") as sink:
        for number, line in enumerate(source, start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                text = item["text"]
            except (json.JSONDecodeError, KeyError, TypeError):
                print(f"error: {args.input}:{number}: expected a JSON object with 'id' and 'text'", file=sys.stderr)
                return 2
            doc = item.get("doc")
            rows = []
            last_book = None
            for ref in detect_references(text, doc, method=method, llm_extract=llm_extract):
                book = ref.book
                if ref.type == "legal_section":
                    if book:
                        last_book = book
                    elif doc:
                        book = Path(doc).stem
                    else:
                        book = last_book  # a bare "§ 18" continues the last cited law
                row = {"start": ref.start, "end": ref.end, "type": ref.type, "book": book,
                       "sections": ref.sections, "text": ref.original_text}
                if ref.version:
                    row["version"] = ref.version
                if registry is not None and book:  # the registry's name for it, the book as written beside it
                    filename, _ = registry.resolve_document_name(book)
                    row["book"], row["raw_book"] = (registry.abbreviation_of(filename) if filename else book), book
                rows.append(row)
            sink.write(json.dumps({"id": item.get("id", number), "refs": rows}, ensure_ascii=False) + "\n")
            count += 1
    print(f"Wrote references for {count} text(s) to {args.out} ({method} layer)")
    return 0


def cmd_eval(args) -> int:
    from rabbithole_lab.eval.xref import load_questions, run_eval, without_following
    from rabbithole_lab.rabbithole.engine import build_follower
    from rabbithole_lab.reasoning.factory import build_gate
    from rabbithole_lab.research import open_knowledge

    settings = _settings(args)
    kb_dir, db = _kb_paths(args, settings)
    questions = load_questions(Path(args.questions))
    if args.mode == "answer":
        return _eval_answers(args, settings, kb_dir, db, questions)
    kb = open_knowledge(settings, kb_dir, db, show_progress=not args.no_progress)
    references = settings.references if args.mode == "rabbithole" else without_following(settings.references)
    follower = build_follower(kb, settings, build_gate(settings, kb.index.embedder),
                              references=references)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8") as sink:
        for row in run_eval(kb, questions, args.mode, follower, args.budget_chars,
                            show_progress=not args.no_progress, max_items=args.k):
            sink.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"Wrote {len(questions)} prediction(s) to {out}")
    return 0


def _eval_answers(args, settings, kb_dir: Path, db: Path, questions: list[dict]) -> int:
    from rabbithole_lab.eval.answers import run_answers
    from rabbithole_lab.research import open_services

    services = open_services(settings, kb_dir, db, show_progress=not args.no_progress)
    info = services.reasoner.info
    print(f"Reasoner: {info.provider}{' ' + info.model if info.model else ''} ({info.reason})", file=sys.stderr)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8") as sink:
        for row in run_answers(services, questions, show_progress=not args.no_progress):
            sink.write(json.dumps(row, ensure_ascii=False) + "\n")
            sink.flush()  # a long run keeps what it has answered
    print(f"Wrote {len(questions)} answer(s) to {out}")
    return 0


def cmd_trail(args) -> int:
    from rabbithole_lab.kb.factory import open_knowledge_base
    from rabbithole_lab.language import detect_language
    from rabbithole_lab.rabbithole.engine import admit, build_follower, follow_question
    from rabbithole_lab.reasoning.factory import build_gate

    settings = _settings(args)
    kb_dir, db = _kb_paths(args, settings)
    _existing_index(db, kb_dir)
    kb = open_knowledge_base(settings, kb_dir, db)
    _check_collection(kb, args.collection)
    language = detect_language(args.question)
    follower = build_follower(kb, settings, build_gate(settings, kb.index.embedder))
    trail = follow_question(kb, follower, args.question, language, args.collection, pool_size=args.k)
    items = admit(trail.candidates, args.budget_chars)
    if args.json:
        print(json.dumps({
            "items": [{"doc": i.result.doc, "section": i.result.section, "page_start": i.result.page_start,
                       "depth": i.depth, "kind": i.kind, "tier": i.tier, "score": i.score, "value": round(i.value, 4),
                       "via": i.via, "cites": i.cites} for i in items],
            "edges": [edge.model_dump() for edge in trail.edges],
            "stop_reasons": trail.stop_reasons,
        }, ensure_ascii=False, indent=1))
        return 0
    for item in items:
        indent = "    " * item.depth
        reference = " ".join(item.via.split())
        via = f"  -> cites: {reference}" if item.cites else f"  <- {reference}" if reference else ""
        print(f"{indent}{item.result.doc} {item.result.section or '-'} (p. {item.result.page_start}, "
              f"{item.tier}, {item.score:.2f}){via}")
    followed = trail.followed_edges
    print(f"\n{len(followed)} reference(s) followed, {len(trail.edges) - len(followed)} skipped; "
          f"~{trail.tokens_used} tokens; stops: {', '.join(trail.stop_reasons) or 'none'}")
    return 0


def _progress(node: str, update: dict) -> None:
    for message in update.get("messages", []) or []:
        print(f"  · {message}", file=sys.stderr)
    for warning in update.get("warnings", []) or []:
        print(f"  ! {warning}", file=sys.stderr)


def cmd_research(args) -> int:
    from rabbithole_lab.agent.session import ScriptedAnswers, new_thread_id, saved_values
    from rabbithole_lab.report.folder import report_folder_name, write_report_folder
    from rabbithole_lab.research import Research
    from rabbithole_lab.terminal import TerminalAnswers

    settings = _settings(args)
    sessions = Path(args.sessions)
    if sessions.is_dir() or (sessions.is_file() and sessions.stat().st_size and
                             sessions.read_bytes()[:16] != b"SQLite format 3\x00"):
        raise UsageError(f"--sessions {sessions} is not a session database (SQLite); give another file")
    saved = saved_values(sessions, args.resume) if args.resume else {}
    if args.resume and not saved:
        print(f"error: no saved session '{args.resume}' in {sessions}", file=sys.stderr)
        return 2
    if not args.resume and not (args.question or "").strip():
        print("error: give a QUESTION or --resume THREAD_ID", file=sys.stderr)
        return 2
    kb_arg = args.kb or saved.get("kb_dir")
    db_arg = args.db or saved.get("db_path")
    kb_dir, db = _kb_paths(argparse.Namespace(kb=kb_arg, db=db_arg), settings)
    research = Research.open(settings, kb_dir, db, sessions, show_progress=not args.no_progress,
                             on_progress=_progress)
    info = research.services.reasoner.info
    print(f"Reasoner: {info.provider}{' ' + info.model if info.model else ''} ({info.reason})")
    if args.no_hitl:
        answer = ScriptedAnswers([])
    elif args.answers:
        answer = ScriptedAnswers([line.strip() for line in Path(args.answers).read_text(encoding="utf-8").splitlines()
                                  if line.strip()])
    else:
        answer = TerminalAnswers()
    if args.approve_todo == "auto" and not isinstance(answer, ScriptedAnswers):
        ask = answer
        answer = lambda interrupt: "approve" if interrupt.get("type") == "todo_approval" else ask(interrupt)  # noqa: E731
    thread_id = args.resume or new_thread_id()
    print(f"Session: {thread_id} (resume with: rabbithole research --resume {thread_id} --sessions {sessions})")
    try:
        status = research.run_with(answer, args.question, args.collection, thread_id=thread_id,
                                   facts={"kb_dir": str(kb_dir), "db_path": str(db)})
    except KeyboardInterrupt:
        print(f"\nStopped. Resume with: rabbithole research --resume {thread_id} --sessions {sessions}",
              file=sys.stderr)
        return 130
    finally:
        research.close()
    if status.kind != "done":
        print(f"error: {status.error or status.kind}", file=sys.stderr)
        print(f"Progress is saved. Resume with: rabbithole research --resume {thread_id} "
              f"--sessions {sessions}", file=sys.stderr)
        return 3
    out = Path(args.out) if args.out else Path("reports") / report_folder_name(status.state["query"])
    paths = write_report_folder(status.state, out)
    final = status.report or {}
    meta = final.get("metadata", {})
    print(f"\n{final.get('answer', '')}\n")
    print(f"Quality {final.get('quality_score', 0)}/500 · {len(final.get('sources', []))} sources · "
          f"{meta.get('followed_references', 0)} references followed · HITL: {meta.get('hitl_termination_reason')}")
    print(f"Report: {paths['report.md']}")
    print(f"        {paths['report.html']}")
    print(f"Graph:  {paths['graph.html']}")
    if not str(final.get("answer", "")).strip():
        print("error: the run ended without an answer; the report folder holds what was found", file=sys.stderr)
        return 1
    return 0


def cmd_batch(args) -> int:
    from rabbithole_lab.batch import REPORT_NOTEBOOK, run_batch

    notebook = Path(args.notebook) if args.notebook else REPORT_NOTEBOOK
    if not notebook.is_file():
        print(f"error: report notebook not found: {notebook}", file=sys.stderr)
        return 2
    items = run_batch(Path(args.questions), Path(args.kb), Path(args.out), workers=args.workers,
                      db=Path(args.db) if args.db else None, notebook=notebook, trust=args.trust)
    for item in items:
        detail = f": {item.error}" if item.error else ""
        print(f"[{item.status}] {item.question} -> {item.folder}{detail}")
    print(f"Index: {Path(args.out) / 'index.html'}")
    return 1 if any(item.status == "failed" for item in items) else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rabbithole", description="Rabbithole Lab: research that follows references.")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    parser.add_argument("--env-file", default=".env", help="settings file (default .env)")
    sub = parser.add_subparsers(dest="command", required=True)

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
    doctor.set_defaults(func=cmd_doctor)

    research = sub.add_parser("research", help="research a question: clarify, plan, follow references, report")
    research.add_argument("question", nargs="?", help="the research question (omit with --resume)")
    research.add_argument("--kb", help="knowledge-base folder (default KB_DIR; ingested if needed)")
    research.add_argument("--db", help="index folder (default KB_DIR/database)")
    research.add_argument("--collection", help="research only this collection")
    hitl = research.add_mutually_exclusive_group()
    hitl.add_argument("--no-hitl", action="store_true", help="unattended: skip clarification, approve the to-do list")
    hitl.add_argument("--answers", help="file with one clarification answer per line (then /end)")
    research.add_argument("--approve-todo", choices=["ask", "auto"], default="ask",
                          help="auto approves the to-do list without asking")
    research.add_argument("--out", help="report folder (default reports/<date>_<question>)")
    research.add_argument("--sessions", default="reports/sessions.sqlite",
                          help="SQLite checkpoint file of resumable sessions")
    research.add_argument("--resume", metavar="THREAD_ID", help="continue a saved session")
    research.add_argument("--no-progress", action="store_true", help="hide progress bars")
    research.set_defaults(func=cmd_research)

    batch = sub.add_parser("batch", help="research every question of a file unattended (papermill)")
    batch.add_argument("questions", help="one question per line, or JSONL with a 'question' field")
    batch.add_argument("--kb", required=True, help="knowledge-base folder")
    batch.add_argument("--db", help="index folder (default KB_DIR/database)")
    batch.add_argument("--out", default="reports", help="folder for <date>_<slug>/ report folders and index.html")
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

    refs = sub.add_parser("refs", help="detect references in JSONL texts")
    refs.add_argument("--in", dest="input", required=True, help='JSONL lines {"id", "text", "doc"?}')
    refs.add_argument("--out", required=True, help='JSONL lines {"id", "refs": [...]}')
    refs.add_argument("--kb", help="knowledge-base folder: books are named by its registry (raw_book keeps the text)")
    refs.add_argument("--db", help="index folder (default KB_DIR/database)")
    refs.set_defaults(func=cmd_refs)

    evaluate = sub.add_parser("eval", help="run cross-reference questions flat or with the rabbithole")
    evaluate.add_argument("--kb", required=True, help="knowledge-base folder (ingested if needed)")
    evaluate.add_argument("--db", help="index folder (default KB_DIR/database)")
    evaluate.add_argument("--questions", required=True, help="question JSONL")
    evaluate.add_argument("--mode", choices=["flat", "rabbithole", "answer"], default="rabbithole",
                          help="retrieval flat or with the rabbithole, or the whole agent's answer")
    evaluate.add_argument("--budget-chars", type=positive_int, default=25_000,
                          help="context size in characters, filled by value per character (both modes alike)")
    evaluate.add_argument("--k", type=positive_int, default=None, help="at most this many context items (default: no cap)")
    evaluate.add_argument("--out", required=True, help="prediction JSONL")
    evaluate.add_argument("--no-progress", action="store_true")
    evaluate.set_defaults(func=cmd_eval)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _configure_logging(args.verbose)
    from rabbithole_lab.kb.embedder import EmbeddingModelError
    from rabbithole_lab.kb.index import IndexError_
    from rabbithole_lab.kb.ingest import KBFolderError
    from rabbithole_lab.kb.registry import RegistryError
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


if __name__ == "__main__":
    sys.exit(main())
