"""`rabbithole research | batch | trail | eval`: research runs from the command line (through
rabbithole_lab/usecase/research_case.py) and the benchmarks' retrieval runs."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rabbithole_lab.cli.options import (
    UsageError,
    check_question,
    command_settings,
    kb_paths,
    open_existing_knowledge,
)
from rabbithole_lab.project import sessions_file
from rabbithole_lab.support.shown_text import section_or_opening
from rabbithole_lab.usecase.input_files import (
    check_output_file,
    check_output_folder,
    check_session_store,
    read_text_input,
)


def cmd_eval(args) -> int:
    from rabbithole_lab.eval.xref_eval import load_questions, run_eval, without_following
    from rabbithole_lab.rabbithole.engine import build_follower
    from rabbithole_lab.reasoning.factory import build_gate
    from rabbithole_lab.usecase.research_case import open_knowledge

    settings = command_settings(args)
    kb_dir, db = kb_paths(args, settings)
    questions = load_questions(Path(args.questions))
    check_output_file(Path(args.out), "--out", inputs=(Path(args.questions),), kb_dir=kb_dir)  # nor a document
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
    from rabbithole_lab.eval.answer_eval import run_answers
    from rabbithole_lab.usecase.research_case import open_services

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
    from rabbithole_lab.language.detection import question_language
    from rabbithole_lab.messages.reasons import stop_reason
    from rabbithole_lab.rabbithole.engine import admit, build_follower, follow_question
    from rabbithole_lab.reasoning.factory import build_gate
    from rabbithole_lab.records import CHARS_PER_TOKEN

    check_question(args.question, "question")
    settings = command_settings(args)
    kb = open_existing_knowledge(args, settings)
    language = question_language(args.question)
    follower = build_follower(kb, settings, build_gate(settings, kb.index.embedder))
    trail = follow_question(kb, follower, args.question, language, args.collection, pool_size=args.k)
    items = admit(trail.candidates, args.budget_chars, strict=True)  # the budget a user gives is a limit
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
        label = section_or_opening(item.result.section, item.result.text)
        print(f"{indent}{item.result.doc} {label} (p. {item.result.page_start}, {item.tier}, {item.score:.2f}){via}")
    followed = trail.followed_edges
    # the context listed above, counted as it is admitted (characters of its passages, ~4 per token)
    context_chars = sum(len(item.result.text) for item in items)
    print(f"\n{len(items)} passage(s), {context_chars} characters (~{context_chars // CHARS_PER_TOKEN} tokens) "
          f"of {args.budget_chars}; {len(followed)} reference(s) followed, {len(trail.edges) - len(followed)} "
          f"skipped; stops: {', '.join(stop_reason(stop, 'en') for stop in trail.stop_reasons) or 'none'}")
    return 0


def _progress(node: str, update: dict) -> None:
    for message in update.get("messages", []) or []:
        print(f"  · {message}", file=sys.stderr)
    for warning in update.get("warnings", []) or []:
        print(f"  ! {warning}", file=sys.stderr)


def cmd_research(args) -> int:
    from rabbithole_lab.agent.session import ScriptedAnswers, new_thread_id, saved_values
    from rabbithole_lab.cli.terminal import TerminalAnswers
    from rabbithole_lab.reasoning.dialogue_terms import SKIP_COMMAND
    from rabbithole_lab.report.folder import report_folder_name, write_report_folder
    from rabbithole_lab.usecase.research_case import Research

    settings = command_settings(args)
    sessions = Path(args.sessions) if args.sessions else sessions_file(settings.project.reports_dir)
    check_session_store(sessions)
    saved = saved_values(sessions, args.resume) if args.resume else {}
    if args.resume and not saved:
        print(f"error: no saved session '{args.resume}' in {sessions}", file=sys.stderr)
        return 2
    if not args.resume and not (args.question or "").strip():
        print("error: give a QUESTION or --resume THREAD_ID", file=sys.stderr)
        return 2
    if args.question:
        check_question(args.question, "question")
    if args.out:
        check_output_folder(Path(args.out), "--out")  # found now, not after the whole run
    scripted = read_text_input(Path(args.answers), "--answers") if args.answers else None
    if scripted is not None and not scripted.strip():  # as every other empty input: nothing to read is a usage error
        raise UsageError(f"--answers {args.answers}: no answers (one per line)")
    options = _run_options(args, saved.get("run_options") or {})
    kb_arg = args.kb or saved.get("kb_dir")
    db_arg = args.db or saved.get("db_path")
    kb_dir, db = kb_paths(argparse.Namespace(kb=kb_arg, db=db_arg), settings)
    _has_documents(kb_dir, args.collection)
    research = Research.open(settings, kb_dir, db, sessions, show_progress=not args.no_progress,
                             on_progress=_progress)
    info = research.services.reasoner.info
    print(f"Reasoner: {info.provider}{' ' + info.model if info.model else ''} ({info.reason})")
    if options["no_hitl"]:
        answer = ScriptedAnswers([], end=SKIP_COMMAND)
    elif scripted is not None:
        answer = ScriptedAnswers([line.strip() for line in scripted.splitlines() if line.strip()])
    else:
        answer = TerminalAnswers()
    if options["approve_todo"] == "auto" and not isinstance(answer, ScriptedAnswers):
        ask = answer
        answer = lambda interrupt: "approve" if interrupt.get("type") == "todo_approval" else ask(interrupt)  # noqa: E731
    thread_id = args.resume or new_thread_id()
    again = _resume_command(thread_id, sessions, options)
    print(f"Session: {thread_id} (resume with: {again})")
    try:
        status = research.run_with(answer, args.question, args.collection, thread_id=thread_id,
                                   facts={"kb_dir": str(kb_dir.resolve()), "db_path": str(Path(db).resolve()),
                                          "run_options": options})
    except KeyboardInterrupt:
        print(f"\nStopped. Resume with: {again}", file=sys.stderr)
        return 130
    finally:
        research.close()
    if status.kind != "done":
        print(f"error: {status.error or status.kind}", file=sys.stderr)
        print(f"Progress is saved. Resume with: {again}", file=sys.stderr)
        return 3
    out = Path(args.out) if args.out else settings.reports_dir() / report_folder_name(status.state["query"])
    paths = write_report_folder(status.state, out)
    final = status.report or {}
    meta = final.get("metadata", {})
    _print_summary(final, paths)
    if not str(final.get("answer", "")).strip():
        print("error: the run ended without an answer; the report folder holds what was found", file=sys.stderr)
        return 1
    if meta.get("answer_status") == "uncited":
        print("error: the answer cites no page of the passages found, so none of it is verified; the report "
              "folder holds it and what was found", file=sys.stderr)
        return 1
    return 0


def _print_summary(final: dict, paths: dict) -> None:
    """The answer, then one line counting what the report counts (the sources it cites, as its Sources list)."""
    from rabbithole_lab.messages.catalogue import dialogue_end
    from rabbithole_lab.records import FinalReport
    from rabbithole_lab.report.render import answer_text
    from rabbithole_lab.report.view import RunCounts, run_counts

    meta = final.get("metadata", {})
    report = FinalReport.model_validate(final) if final else None
    print(f"\n{answer_text(report) if report else ''}\n")
    counts = run_counts(report) if report else RunCounts(0, 0, 0)
    print(f"Quality {final.get('quality_score', 0)}/500 · {counts.cited} sources cited "
          f"({counts.read} more read) · {counts.followed} references followed · "
          f"{dialogue_end(meta.get('hitl_termination_reason', ''), meta.get('language', 'de'))}")
    print(f"Report: {paths['report.md']}")
    print(f"        {paths['report.html']}")
    print(f"Graph:  {paths['graph.html']}")


def _run_options(args, saved: dict) -> dict:
    """How the run goes: the flags given now, else those the resumed run was started with, else the defaults
    (a resumed unattended run stays unattended)."""
    return {"no_hitl": bool(args.no_hitl or (saved.get("no_hitl") and not args.answers)),
            "approve_todo": args.approve_todo or saved.get("approve_todo") or "ask"}


def _resume_command(thread_id: str, sessions: Path, options: dict) -> str:
    flags = (" --no-hitl" if options["no_hitl"] else "") + \
        (" --approve-todo auto" if options["approve_todo"] == "auto" else "")
    return f"rabbithole research --resume {thread_id} --sessions {sessions}{flags}"


def _has_documents(kb_dir: Path, collection: str | None = None) -> None:
    """A KB folder with something to ingest, and the collection asked for among its collections; checked
    before anything is written."""
    from rabbithole_lab.kb.ingest.kb_folder import collection_folders, discover

    files, _ = discover(kb_dir)
    if not files:
        raise UsageError(f"no usable documents in {kb_dir} (expected <Collection>__db_inserted/*.pdf|md|txt)")
    known = [name for name, _ in collection_folders(kb_dir)]
    if collection and collection not in known:
        raise UsageError(f"unknown collection '{collection}'; this knowledge base has: {', '.join(known)}")


def cmd_batch(args) -> int:
    from rabbithole_lab.batch.batch_run import REPORT_NOTEBOOK, read_questions, run_batch

    notebook = Path(args.notebook) if args.notebook else REPORT_NOTEBOOK
    if not notebook.is_file():
        print(f"error: report notebook not found: {notebook}", file=sys.stderr)
        return 2
    # everything a kernel would find wrong is found here, before any kernel starts or folder is written
    read_questions(Path(args.questions))
    settings = command_settings(args)
    kb_dir, _ = kb_paths(argparse.Namespace(kb=args.kb, db=args.db), settings)
    _has_documents(kb_dir)
    out = Path(args.out) if args.out else settings.reports_dir()
    check_output_folder(out, "--out")  # a file there is named, not an errno
    items = run_batch(Path(args.questions), Path(args.kb), out, workers=args.workers,
                      db=Path(args.db) if args.db else None, notebook=notebook, trust=args.trust)
    for item in items:
        detail = f": {item.error}" if item.error else ""
        print(f"[{item.status}] {item.question} -> {item.folder}{detail}")
    print(f"Index: {out / 'index.html'} (in JupyterLab: {out / 'index.md'})")
    return 1 if any(item.status == "failed" for item in items) else 0


