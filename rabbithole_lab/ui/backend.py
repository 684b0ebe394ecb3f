"""The workbench's back end: a research session run in a worker thread, reporting by events.

Panels talk to a `WorkbenchBackend`; `GraphBackend` is the real one (the LangGraph on a knowledge
base). Long work never blocks the notebook: every call returns at once and the outcome arrives as
an event (progress per node, then a status: interrupt, done, stopped or error).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from rabbithole_lab.agent.services import Services
from rabbithole_lab.agent.session import ResearchSession, RunStatus, list_sessions
from rabbithole_lab.kb.embedder import EmbedderChoice, choose_embedder
from rabbithole_lab.reasoning.base import ReasonerInfo

logger = logging.getLogger(__name__)


@dataclass
class BackendEvent:
    kind: Literal["progress", "status"]
    node: str = ""
    update: dict | None = None
    status: RunStatus | None = None


Listener = Callable[[BackendEvent], None]


class WorkbenchBackend(Protocol):
    def reasoner_status(self) -> ReasonerInfo: ...
    def embedder_status(self) -> EmbedderChoice: ...
    def collections(self) -> list[str]: ...
    def add_listener(self, listener: Listener) -> None: ...
    def start(self, question: str, collection: str | None, language: str | None = None) -> None: ...
    def answer(self, value: Any) -> None: ...
    def stop(self) -> None: ...
    def resume(self, thread_id: str) -> None: ...
    def sessions(self) -> list[dict]: ...
    def busy(self) -> bool: ...
    def close(self) -> None: ...


class GraphBackend:
    """Runs the research graph for the workbench, one session at a time, in a worker thread."""

    def __init__(self, services: Services, checkpoint_path: Path, run_in_thread: bool = True):
        self.services = services
        self.checkpoint_path = Path(checkpoint_path)
        self.run_in_thread = run_in_thread
        self.session: ResearchSession | None = None
        self._listeners: list[Listener] = []
        self._worker: threading.Thread | None = None

    # ---- facts ------------------------------------------------------------------------------
    def reasoner_status(self) -> ReasonerInfo:
        return self.services.reasoner.info

    def embedder_status(self) -> EmbedderChoice:
        """Which model embeds, through which backend, and a fallback's notice (built from the same settings
        as the knowledge base's embedder)."""
        return choose_embedder(self.services.settings.embedding)

    def collections(self) -> list[str]:
        return self.services.kb.collections()

    def sessions(self) -> list[dict]:
        return list_sessions(self.checkpoint_path)

    def busy(self) -> bool:
        return self._worker is not None and self._worker.is_alive()

    def add_listener(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def _emit(self, event: BackendEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # a broken panel must not kill the run
                logger.exception("Workbench listener failed")

    # ---- actions ----------------------------------------------------------------------------
    def _new_session(self, thread_id: str | None = None) -> ResearchSession:
        if self.session is not None:
            self.session.close()
        self.session = ResearchSession(self.services, self.checkpoint_path, thread_id=thread_id,
                                       on_progress=self._progress)
        return self.session

    def _progress(self, node: str, update: dict) -> None:
        for message in update.get("messages", []) or []:
            logger.info("%s", message)
        for warning in update.get("warnings", []) or []:
            logger.warning("%s", warning)
        self._emit(BackendEvent("progress", node=node, update=update))

    def _launch(self, work: Callable[[], RunStatus]) -> None:
        if self.busy():
            raise RuntimeError("A run is in progress; stop it first")

        def run() -> None:
            try:
                status = work()
            except Exception as exc:  # shown in the UI, never lost in a thread
                logger.exception("Research run failed")
                status = RunStatus("error", error=str(exc), state=self.session.state() if self.session else {})
            self._emit(BackendEvent("status", status=status))

        if self.run_in_thread:
            self._worker = threading.Thread(target=run, name="rabbithole-run", daemon=True)
            self._worker.start()
        else:
            run()

    def start(self, question: str, collection: str | None, language: str | None = None) -> None:
        """`language` ("de"/"en") fixes the session's language; None lets the question decide."""
        session = self._new_session()
        extra = {"requested_language": language} if language in ("de", "en") else None
        self._launch(lambda: session.start(question, collection, extra=extra))

    def answer(self, value: Any) -> None:
        if self.session is None:
            raise RuntimeError("No session to answer")
        session = self.session
        self._launch(lambda: session.answer(value))

    def resume(self, thread_id: str) -> None:
        session = self._new_session(thread_id)
        self._launch(session.resume)

    def stop(self) -> None:
        if self.session is not None:
            self.session.stop()

    def wait(self, timeout_s: float | None = None) -> bool:
        """Block until the worker is idle (tests and scripts); True when it finished."""
        if self._worker is not None:
            self._worker.join(timeout_s)
        return not self.busy()

    def close(self) -> None:
        self.stop()
        self.wait(30)
        if self.session is not None:
            self.session.close()
            self.session = None
