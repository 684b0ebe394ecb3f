"""The workbench's back end: a research session run in a worker thread, reporting by events.

Panels talk to a `WorkbenchBackend`; `GraphBackend` is the real one (the LangGraph on a knowledge
base). Long work never blocks the notebook: every call returns at once and the outcome arrives as
an event (running when a run begins, progress per node, then a status: interrupt, done, stopped or error).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from rabbithole_lab.agent.session import RunStatus
from rabbithole_lab.kb.embedding.embedder_choice import EmbedderChoice, choose_embedder
from rabbithole_lab.reasoning.base import ReasonerInfo
from rabbithole_lab.usecase.research_case import Research

logger = logging.getLogger(__name__)


@dataclass
class BackendEvent:
    kind: Literal["running", "progress", "status"]  # running: a run began in the worker
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

    def __init__(self, research: Research, run_in_thread: bool = True):
        self.research = research
        research.on_progress = self._progress
        self.services = research.services
        self.run_in_thread = run_in_thread
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
        return self.research.sessions()

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
                status = RunStatus("error", error=str(exc), state=self.research.state())
            self._emit(BackendEvent("status", status=status))

        self._emit(BackendEvent("running"))
        if self.run_in_thread:
            self._worker = threading.Thread(target=run, name="rabbithole-run", daemon=True)
            self._worker.start()
        else:
            run()

    def start(self, question: str, collection: str | None, language: str | None = None) -> None:
        """`language` ("de"/"en") fixes the session's language; None lets the question decide."""
        self._launch(lambda: self.research.start(question, collection, language=language))

    def answer(self, value: Any) -> None:
        if self.research.session is None:
            raise RuntimeError("No session to answer")
        self._launch(lambda: self.research.answer(value))

    def resume(self, thread_id: str) -> None:
        self._launch(lambda: self.research.resume(thread_id))

    def stop(self) -> None:
        self.research.stop()

    def wait(self, timeout_s: float | None = None) -> bool:
        """Block until the worker is idle (tests and scripts); True when it finished."""
        if self._worker is not None:
            self._worker.join(timeout_s)
        return not self.busy()

    def close(self) -> None:
        self.stop()
        self.wait(30)
        self.research.close()
