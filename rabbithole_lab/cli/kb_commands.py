"""`rabbithole ingest | search | doctor | refs`: the knowledge base from the command line."""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from rabbithole_lab.cli.options import (
    UsageError,
    check_question,
    command_settings,
    kb_paths,
    open_existing_knowledge,
)
from rabbithole_lab.support.shown_text import section_or_opening
from rabbithole_lab.usecase.input_files import check_output_file, read_text_input


def cmd_ingest(args) -> int:
    from rabbithole_lab.kb.ingest.ingest import format_report, ingest, made_before, remove_made
    from rabbithole_lab.kb.ingest.kb_folder import discover
    from rabbithole_lab.kb.kb_factory import open_index
    from rabbithole_lab.rabbithole.citation_index import keep_citation_indexes

    settings = command_settings(args)
    kb_dir = Path(args.kb_dir)
    _, db = kb_paths(argparse.Namespace(kb=str(kb_dir), db=args.db), settings)  # the folder exists before any index
    files, skipped = discover(kb_dir)
    if not files and not (db / "chroma.sqlite3").is_file():  # an index whose folder was emptied is brought in step
        reasons = "; ".join(f"{Path(issue.path).name}: {issue.reason}" for issue in skipped[:5])
        raise UsageError(f"no documents to ingest in {kb_dir} (PDF, Markdown or text files, in the folder or in "
                         f"<Collection>__db_inserted/ subfolders){': ' + reasons if reasons else ''}")
    before = made_before(kb_dir, db)
    index = open_index(settings, kb_dir, db)
    report = ingest(kb_dir, index, settings.kb, show_progress=not args.no_progress, reindex=args.reindex,
                    ocr=settings.ocr)
    if report.files_ingested:
        keep_citation_indexes(index, show_progress=not args.no_progress)
    print(format_report(report))
    if not report.ok and not (before["store"]):  # no usable file: no index and no id are left behind
        index.close()
        remove_made(kb_dir, db, before)
        print(f"No index made at {db}: no file of {kb_dir} could be read")
        return 1
    print(f"Index: {index.location}")
    return 0 if report.complete else 1  # a file skipped (other than a copy of one indexed) is work left undone


def cmd_search(args) -> int:
    check_question(args.query, "query")
    kb = open_existing_knowledge(args, command_settings(args))
    if args.doc:
        known = sorted({doc for collection in ([args.collection] if args.collection else kb.collections())
                        for doc in kb.index.documents(collection)})
        if args.doc not in known:
            shown = ", ".join(known[:8]) + (", …" if len(known) > 8 else "")
            raise UsageError(f"unknown document '{args.doc}'; documents: {shown or 'none'}")
    results = kb.search(args.query, k=args.k, mode=args.mode, collection=args.collection, doc=args.doc)
    if args.json:
        print(json.dumps([r.public_dict() for r in results], ensure_ascii=False, indent=1))
        return 0
    if not results:
        print("No results.")
    for rank, result in enumerate(results, start=1):
        pages = f"p. {result.page_start}" + (f"-{result.page_end}" if result.page_end != result.page_start else "")
        preview = " ".join(result.text.split())[:160]
        label = section_or_opening(result.section, result.text)
        print(f"{rank:2}. {result.doc} {label} ({pages}, {result.collection}) score {result.score:.3f}\n    {preview}")
    return 0


def cmd_doctor(args) -> int:
    from rabbithole_lab.kb.embedding.embedder_choice import build_embedder, choose_embedder
    from rabbithole_lab.kb.ingest.page_reading import ocr_unavailable
    from rabbithole_lab.reasoning.llm.model_window import read_model_window
    from rabbithole_lab.reasoning.llm.provider import choose_provider, probe_ollama

    settings = command_settings(args)
    kb_dir, db = kb_paths(args, settings, must_exist=bool(args.kb))  # a folder the user named must be there
    problems = 0
    status = probe_ollama(settings)
    if status.reachable:
        print(f"[ok]   Ollama answers at {status.base_url} ({len(status.models)} model(s))")
        for model in (settings.ollama.model, settings.ollama.fallback_model):
            mark = "ok" if status.has(model) else "warn"
            print(
                f"[{mark}] {'  ' if mark == 'ok' else ''}model {model}: "
                f"{'pulled' if status.has(model) else 'not pulled'}"
            )
            if status.has(model):  # what one call to it may hold (reasoning/llm/model_window.py)
                print(f"[info] window of {read_model_window(settings, model).describe()}")
        print(f"[info] at most {settings.ollama.num_parallel} request(s) at once (OLLAMA_NUM_PARALLEL)")
    else:
        print(f"[warn] Ollama does not answer at {status.base_url}: {status.error}")
    choice = choose_embedder(settings.embedding)
    if choice.notice:
        print(f"[warn] {choice.notice}")
    try:
        embedder = build_embedder(settings.embedding)
        vector = embedder.embed_query("doctor")
        languages = ", ".join(sorted(embedder.languages)).replace("*", "any language")
        print(
            f"[ok]   embedding model {choice.model} ({choice.backend}) loads ({vector.shape[0]} dimensions, "
            f"reads {languages})"
        )
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
    ocr_missing = ocr_unavailable(settings.ocr)
    print(f"[ok]   OCR: scanned pages are read by Tesseract ({settings.ocr.languages})" if not ocr_missing
          else f"[warn] OCR unavailable: {ocr_missing}; scanned PDFs are skipped")
    # checked where it would be made, never made: the doctor changes nothing on disk
    existing = next(folder for folder in (db, *db.parents) if folder.exists())
    try:
        with tempfile.NamedTemporaryFile(dir=existing, prefix=".doctor-"):
            pass
        print(f"[ok]   index folder {db} {'is' if existing == db else 'can be made and is'} writable")
    except OSError as exc:
        if (db / "chroma.sqlite3").is_file():  # a colleague's index, a read-only mount: it is still read
            print(f"[warn] index folder {db} is read-only ({exc.strerror or exc}): it is searched and researched; "
                  "`rabbithole ingest` needs a writable copy (--db)")
        else:
            problems += 1
            print(f"[fail] index folder {db} is not writable: {exc}")
    choice = choose_provider(settings, status)
    model = f" ({choice.model})" if choice.model else ""
    print(f"[info] LLM_PROVIDER={settings.llm.provider} -> reasoner: {choice.provider}{model}: {choice.reason}")
    print(f"[info] knowledge base folder: {kb_dir}")
    if args.smoke is not None:
        return 1 if _smoke(settings, kb_dir, db, args.smoke) or problems else 0
    return 1 if problems else 0


def _smoke(settings, kb_dir: Path, db: Path, question: str) -> bool:
    """The smoke run (rabbithole_lab/cli/smoke.py); True when it found a problem."""
    from rabbithole_lab.cli.smoke import SmokeUnavailable, smoke_lines, smoke_run

    check_question(question, "smoke question")
    if not kb_dir.is_dir():
        raise UsageError(f"knowledge-base folder not found: {kb_dir} (give --kb an existing folder)")
    print(f"\nSmoke run: {question}")
    try:
        result = smoke_run(settings, kb_dir, db, question)
    except SmokeUnavailable as exc:
        print(f"[fail] smoke run: {exc}")
        return True
    for line in smoke_lines(result):
        print(line)
    return not result.healthy


def cmd_refs(args) -> int:
    from rabbithole_lab.rabbithole.reference_merge import detect_references

    settings = command_settings(args)
    check_output_file(Path(args.out), "--out", inputs=(Path(args.input),))
    items = _reference_inputs(Path(args.input))  # every line checked before the output file is touched
    registry = None
    if args.kb:
        from rabbithole_lab.kb.kb_factory import load_registry_only

        kb_dir, db = kb_paths(args, settings)
        registry = load_registry_only(settings, kb_dir, db)
    llm_extract, method = None, "regex"
    if settings.llm.provider != "extractive":
        from rabbithole_lab.reasoning.factory import reference_extractor

        llm_extract = reference_extractor(settings)
        method = settings.references.extraction_method if llm_extract else "regex"
    lines = []
    for number, item in items:
        doc = item.get("doc")
        rows = []
        last_book = None
        for ref in detect_references(item["text"], doc, method=method, llm_extract=llm_extract):
            book = ref.book
            if ref.type == "legal_section":
                if book:
                    last_book = book
                elif doc:
                    book = Path(doc).stem
                else:
                    book = last_book  # a bare "§ 18" continues the last cited law
            row = {
                "start": ref.start,
                "end": ref.end,
                "type": ref.type,
                "book": book,
                "sections": ref.sections,
                "text": ref.original_text,
            }
            if ref.version:
                row["version"] = ref.version
            if registry is not None and book:  # the registry's name for it, the book as written beside it
                filename, _ = registry.resolve_document_name(book)
                row["book"], row["raw_book"] = (registry.abbreviation_of(filename) if filename else book), book
            rows.append(row)
        lines.append(json.dumps({"id": item.get("id", number), "refs": rows}, ensure_ascii=False) + "\n")
    out = Path(args.out)
    partial = out.with_name(out.name + ".partial")
    try:
        partial.write_text("".join(lines), encoding="utf-8")
        partial.replace(out)
    finally:
        partial.unlink(missing_ok=True)  # nothing half-written stays behind
    count = len(lines)
    print(f"Wrote references for {count} text(s) to {args.out} ({method} layer)")
    return 0


def _reference_inputs(path: Path) -> list[tuple[int, dict]]:
    """(line number, object) of every text of a JSONL file; a line that is not an object with a text in
    "text" is a usage error naming it."""
    items = []
    for number, line in enumerate(read_text_input(path, "--in").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            item = None
        if (not isinstance(item, dict) or not isinstance(item.get("text"), str)
                or not isinstance(item.get("doc", ""), str | None)):
            raise UsageError(f"{path}:{number}: expected a JSON object with 'id' and a text in 'text'")
        items.append((number, item))
    if not items:  # as eval and batch: nothing to read is a usage error, not an empty result
        raise UsageError(f"--in {path}: no texts (JSONL lines with 'id' and 'text')")
    return items
