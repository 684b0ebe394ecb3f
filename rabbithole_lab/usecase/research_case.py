"""Research a question: the one use case the CLI, batch reports, the workbench and eval call.

    research = Research.open(settings, kb_dir, sessions_path=...)   # ingest first, then open once
    status = research.start("Welche Grenzwerte ...?")               # RunStatus: interrupt | done | ...
    status = research.answer("nur Erwachsene")                      # a clarification answer or "/end"
    status = research.approve()                                     # or approve({"removed_ids": [2]})
    status = research.resume(thread_id)                             # after a stop, a crash or an error
    status = research.run_unattended(question, answers=[...])       # every interrupt answered by script

A front end keeps only its input and its display: it reads `RunStatus` and the run's state. What the run tells
its reader (progress lines, warnings, an error, the summary the plan's approval shows) the graph records as
notices, catalogue keys with their values; the use case gives them to the front ends worded in the run's language.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rabbithole_lab.agent.services import Services
from rabbithole_lab.agent.session import (
    ProgressCallback,
    ResearchSession,
    RunStatus,
    ScriptedAnswers,
    list_sessions,
    run_to_end,
    saved_values,
)
from rabbithole_lab.kb.retrieval.search import KnowledgeBase
from rabbithole_lab.messages.reasons import notice_text
from rabbithole_lab.project import sessions_file
from rabbithole_lab.reasoning.dialogue_terms import END_COMMAND, SKIP_COMMAND
from rabbithole_lab.settings import Settings
from rabbithole_lab.usecase.input_files import check_session_store

logger = logging.getLogger(__name__)

PREPARE_LOCK_WAIT_S = 1800.0  # a first ingest of a large KB by another run may take this long
Answerer = Callable[[dict], Any]


def open_services(settings: Settings, kb_dir: Path, db_path: Path | None = None, show_progress: bool = True,
                  ingest_first: bool = True) -> Services:
    """The services of a research run over a knowledge-base folder, opened once: new or changed files are
    ingested first, then the knowledge base and the reasoner are opened (probing Ollama unless
    `provider_choice` is given). A missing folder, or one without any usable document, is an error, not an
    empty research run."""
    from rabbithole_lab.language import extend_from_kb
    from rabbithole_lab.reasoning.factory import build_reasoner

    kb = open_knowledge(settings, Path(kb_dir), db_path, show_progress, ingest_first)
    extend_from_kb(Path(kb_dir))  # the units and glossary of the knowledge base's own domain, when it has them
    reasoner = build_reasoner(settings, kb.index.embedder)
    return Services(settings, kb, reasoner, Path(kb_dir))


def open_knowledge(settings: Settings, kb_dir: Path, db_path: Path | None = None, show_progress: bool = True,
                   ingest_first: bool = True) -> KnowledgeBase:
    """The knowledge base of a folder, opened once after new or changed files were ingested."""
    from rabbithole_lab.kb.ingest.ingest import format_report, ingest, ingest_pending, made_before, remove_made
    from rabbithole_lab.kb.ingest.kb_folder import KBFolderError
    from rabbithole_lab.kb.kb_factory import load_registry, open_index
    from rabbithole_lab.rabbithole.citation_index import citation_index_kept, keep_citation_indexes

    if not kb_dir.is_dir():
        raise KBFolderError(f"Knowledge-base folder not found: {kb_dir}")
    from rabbithole_lab.kb.store.index import IndexReadOnlyError

    before = made_before(kb_dir, Path(db_path) if db_path else settings.db_path(kb_dir))
    # a folder indexed already is researched from a read-only index: the research leaves it as it was
    index = open_index(settings, kb_dir, db_path, read_only=True)
    writable = None
    if ingest_first and (ingest_pending(kb_dir, index, settings.kb)
                         or not all(citation_index_kept(index, collection) for collection in index.collections())):
        try:
            writable = open_index(settings, kb_dir, db_path)
        except IndexReadOnlyError as exc:
            logger.warning("%s: the documents that changed in %s since its ingest are not read", exc, kb_dir)
    if writable is not None:
        index.close()
        index = writable
        # another run may be bringing the same index up to date (batch workers share one): wait for it
        report = ingest(kb_dir, index, settings.kb, show_progress=show_progress, lock_wait_s=PREPARE_LOCK_WAIT_S,
                        ocr=settings.ocr)
        if report.files_ingested:
            logger.info(format_report(report))
        # also when nothing changed: an index made before the citation index existed, or whose kept file was
        # removed, is read here with its progress bar, not silently in the first question's backlinks
        keep_citation_indexes(index, show_progress)
    kb = KnowledgeBase(index, load_registry(settings, kb_dir, index), settings.search)
    if ingest_first and not any(index.count(collection) for collection in kb.collections()):
        if writable is not None and not before["store"]:  # nothing usable: no index and no id stay behind
            index.close()
            remove_made(kb_dir, index.db_path, before)
        raise KBFolderError(f"No usable documents in {kb_dir} (expected <Collection>__db_inserted/*.pdf|md|txt)")
    return kb


class Research:
    """Research runs over one knowledge base, saved in one sessions file (SQLite checkpoints).

    One run is active at a time (`session`); starting or resuming another closes it."""

    def __init__(self, services: Services, sessions_path: Path, on_progress: ProgressCallback | None = None):
        self.services = services
        self.sessions_path = Path(sessions_path)
        self.on_progress = on_progress  # a front end's (progress events with their notices worded)
        self.session: ResearchSession | None = None
        self.run_facts: dict = {}  # kept in every run's state: the folders a run from another front end resumes on
        self.language = "de"  # the active run's: its notices are worded in it

    @classmethod
    def open(cls, settings: Settings, kb_dir: Path, db_path: Path | None = None,
             sessions_path: Path | None = None, show_progress: bool = True,
             on_progress: ProgressCallback | None = None) -> Research:
        """Research over `kb_dir` (ingested first); sessions default to the project's one sessions file
        (`<project>/reports/sessions.sqlite`, or RABBITHOLE_REPORTS_DIR), shared by the CLI and the workbench."""
        sessions = Path(sessions_path) if sessions_path else sessions_file(settings.project.reports_dir)
        check_session_store(sessions, "sessions file")  # never a Chroma index's database or another program's
        services = open_services(settings, Path(kb_dir), Path(db_path) if db_path else None, show_progress)
        research = cls(services, sessions, on_progress)
        research.run_facts = {"kb_dir": str(Path(kb_dir).resolve()), **({"db_path": str(db_path)} if db_path else {})}
        return research

    # ---- one run ------------------------------------------------------------------------------
    def _open_session(self, thread_id: str | None = None) -> ResearchSession:
        self.close()
        self.session = ResearchSession(self.services, self.sessions_path, thread_id=thread_id,
                                       on_progress=self._progress)
        if thread_id:
            self.language = self.session.state().get("detected_language") or "de"
        return self.session

    def _progress(self, node: str, update: dict) -> None:
        self.language = update.get("detected_language") or self.language
        if self.on_progress:
            self.on_progress(node, worded_update(update, self.language))

    def _worded(self, status: RunStatus) -> RunStatus:
        """The status with its error and its interrupt's notices in the run's language."""
        self.language = status.state.get("detected_language") or self.language
        return dataclasses.replace(status, interrupt=self._worded_interrupt(status.interrupt),
                                   error=notice_text(status.error, self.language))

    def _worded_interrupt(self, interrupt: dict | None) -> dict | None:
        """The interrupt with the plan's research summary in the run's language."""
        if interrupt and isinstance(interrupt.get("research_summary"), dict):
            return interrupt | {"research_summary": notice_text(interrupt["research_summary"], self.language)}
        return interrupt

    def _active(self) -> ResearchSession:
        if self.session is None:
            raise RuntimeError("No research run is active: start or resume one first")
        return self.session

    @property
    def thread_id(self) -> str | None:
        return self.session.thread_id if self.session else None

    def start(self, question: str, collection: str | None = None, language: str | None = None,
              thread_id: str | None = None, facts: dict | None = None) -> RunStatus:
        """A new run. `language` ("de"/"en") fixes the session's language, None lets the question decide;
        `facts` are kept in the state (the CLI keeps kb_dir and db_path there to resume by thread id)."""
        extra = {**self.run_facts, **dict(facts or {})}
        if language in ("de", "en"):
            extra["requested_language"] = language
        session = self._open_session(thread_id)
        self.language = language if language in ("de", "en") else "de"
        return self._worded(session.start(question, collection, extra=extra or None))

    def answer(self, value: Any) -> RunStatus:
        """Answer the pending clarification question (text, or "/end")."""
        return self._worded(self._active().answer(value))

    def approve(self, decision: Any = "approve") -> RunStatus:
        """Approve the to-do list, or change it: {"removed_ids", "edited_items", "new_items"}."""
        return self._worded(self._active().answer(decision))

    def stop(self) -> None:
        """Stop the active run at the next node boundary (the checkpoint keeps everything)."""
        if self.session is not None:
            self.session.stop()

    def resume(self, thread_id: str | None = None) -> RunStatus:
        """Continue a saved run (the active one when no id is given)."""
        session = self._open_session(thread_id) if thread_id else self._active()
        return self._worded(session.resume())

    def run_unattended(self, question: str, collection: str | None = None, answers: Sequence[str] = (),
                       todo_decision: Any = "approve", thread_id: str | None = None,
                       facts: dict | None = None) -> RunStatus:
        """A whole run without a person: clarification answered from `answers` (then /end), the to-do list
        decided by `todo_decision`. A thread that was saved before continues where it stopped."""
        end = END_COMMAND if answers else SKIP_COMMAND  # no answers at all: a run without clarification
        return self.run_with(ScriptedAnswers(list(answers), todo_decision, end=end), question, collection,
                             thread_id=thread_id, facts=facts)

    def run_with(self, answerer: Answerer, question: str | None = None, collection: str | None = None,
                 thread_id: str | None = None, facts: dict | None = None) -> RunStatus:
        """A whole run whose interrupts `answerer` answers (a script, or a person at a terminal). With
        `thread_id` of a saved run it resumes that run; otherwise it starts `question`."""
        if thread_id and self._saved(thread_id):
            first = self.resume(thread_id)
        else:
            if not (question or "").strip():
                raise ValueError("The question is empty.")
            first = self.start(question or "", collection, thread_id=thread_id, facts=facts)
        return self._worded(run_to_end(self._active(), first,
                                       lambda interrupt: answerer(self._worded_interrupt(interrupt))))

    def _saved(self, thread_id: str) -> bool:
        return bool(saved_values(self.sessions_path, thread_id))

    # ---- facts ----------------------------------------------------------------------------------
    def sessions(self) -> list[dict]:
        """Saved sessions, newest first, an error worded in the session's language."""
        return [session | {"error": notice_text(session.get("error", ""), session["language"])}
                for session in list_sessions(self.sessions_path)]

    def state(self) -> dict:
        return self.session.state() if self.session else {}

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None


def worded_update(update: dict, language: str) -> dict:
    """A node's update with the notices it tells the reader (messages, warnings, an error) in `language`."""
    worded = dict(update)
    for key in ("messages", "warnings"):
        if update.get(key):
            worded[key] = [notice_text(item, language) for item in update[key]]
    if update.get("error"):
        worded["error"] = notice_text(update["error"], language)
    return worded
