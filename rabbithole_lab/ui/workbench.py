"""The workbench: the panels composed, wired to a back end's events.

In a notebook:

    from rabbithole_lab.ui.workbench import Workbench
    Workbench.open("../kb")          # displays itself
"""

from __future__ import annotations

import html
import logging
import sys
from contextlib import nullcontext
from pathlib import Path

import ipywidgets as w

from rabbithole_lab.agent.session import RunStatus
from rabbithole_lab.language.detection import question_language
from rabbithole_lab.messages.catalogue import ui_text
from rabbithole_lab.project import reports_dir as project_reports_dir
from rabbithole_lab.report.folder import new_saved_folder, write_report_folder
from rabbithole_lab.support.progress_bars import progress_shown_by
from rabbithole_lab.ui.backend import BackendEvent, GraphBackend, WorkbenchBackend
from rabbithole_lab.ui.kernel import shutdown_kernel
from rabbithole_lab.ui.panels import (
    ContextPanel,
    HITLPanel,
    LogPanel,
    QueryPanel,
    ResultsPanel,
)
from rabbithole_lab.ui.progress import ProgressPanel
from rabbithole_lab.ui.session_panel import SessionPanel, disable_all
from rabbithole_lab.ui.todo_panel import TodoPanel

logger = logging.getLogger(__name__)


class WorkbenchProblem:
    """What the notebook shows instead of the workbench when it cannot open: the problem and what to do."""

    def __init__(self, message: str, kb_dir: Path):
        self.message = message
        self.widget = w.HTML(
            f"<div class='rh-problem' style='border-left:4px solid #c62828;padding:.5rem 1rem'>"
            f"<b>{html.escape(ui_text('de')['problem'])}</b> {html.escape(message)}<br>"
            f"<i>{html.escape(ui_text('de')['problem_hint'].format(kb=kb_dir))}</i></div>")

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


class _OpeningStatus:
    """One line above the workbench while its knowledge base is indexed (in a notebook kernel; elsewhere the
    progress is shown as everywhere): the line of the work running now, hidden when it is done."""

    def __init__(self, widget: w.HTML | None):
        self.widget = widget

    def show(self, line: str) -> None:
        if self.widget is None:
            return
        self.widget.value = f"<span class='rh-status'>{html.escape(line)}</span>" if line else ""
        self.widget.layout.display = None if line else "none"


def _opening_status() -> _OpeningStatus:
    if "ipykernel" not in sys.modules:
        return _OpeningStatus(None)
    from IPython.display import display

    widget = w.HTML(layout=w.Layout(display="none"))
    display(widget)
    return _OpeningStatus(widget)


class Workbench:
    def __init__(self, backend: WorkbenchBackend, notebook_dir: Path | None = None, reports_dir: Path | None = None):
        self.backend = backend
        self.reports_dir = Path(reports_dir) if reports_dir else project_reports_dir()
        self._finished: dict | None = None  # the state of the last finished run, for "save report"
        self._log_session = ""  # the session the log shows (a new run: "")
        self.language = "de"
        self.query = QueryPanel(backend)
        self.hitl = HITLPanel(backend)
        self.todo = TodoPanel(backend)
        self.results = ResultsPanel(notebook_dir)
        self.context = ContextPanel()
        self.sessions = SessionPanel(backend)
        self.log = LogPanel()
        self.progress = ProgressPanel()
        self.status = self.progress.label  # the step now running, or how the run ended
        self.query.start.on_click(lambda _: self.start())
        self.sessions.resume.on_click(lambda _: self.resume())
        self.sessions.confirm.on_click(lambda _: self.shutdown())
        self.results.save.on_click(lambda _: self.save_report())
        backend.add_listener(self._on_event)
        self.widget = w.VBox([self.query.widget, self.sessions.widget, self.progress.widget, self.hitl.widget,
                              self.todo.widget, self.results.widget, self.context.widget, self.log.widget])
        self.log.attach()

    @classmethod
    def open(cls, kb: str | Path = "kb", db: str | Path | None = None, sessions: str | Path | None = None,
             env_file: str | None = ".env") -> Workbench | WorkbenchProblem:
        """The workbench over a knowledge-base folder (ingested if needed), with the configured reasoner; a
        problem the user can fix (no such folder, no documents in it, bad settings) shows as a message."""
        from rabbithole_lab.kb.ingest.kb_folder import KBFolderError
        from rabbithole_lab.kb.store.registry import RegistryError
        from rabbithole_lab.settings import SettingsError, load_settings
        from rabbithole_lab.usecase.research_case import Research

        kb_dir = Path(kb)
        status = _opening_status()
        try:
            settings = load_settings(env_file)
            # in a notebook the ingest's progress is one status line, gone when done (a finished text bar stayed
            # in a stderr box above the workbench)
            with progress_shown_by(status.show) if status.widget is not None else nullcontext():
                research = Research.open(settings, kb_dir, Path(db) if db else None,
                                         Path(sessions) if sessions else None, show_progress=True)
        except (KBFolderError, RegistryError, SettingsError) as exc:
            return WorkbenchProblem(str(exc), kb_dir)
        finally:
            status.show("")
        return cls(GraphBackend(research), reports_dir=settings.reports_dir())

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

    # ---- actions ------------------------------------------------------------------------------
    def _set_language(self, language: str) -> None:
        self.language = language
        for panel in (self.query, self.hitl, self.todo, self.progress, self.results, self.sessions, self.log):
            panel.set_language(language)

    def _say(self, key: str, **values) -> None:
        self.progress.idle(ui_text(self.language)[key].format(**values))

    def start(self) -> None:
        question = self.query.question.value.strip()
        if not question:
            self.query.message.value = ui_text(self.language)["empty_question"]
            return
        if self.backend.busy():
            self._say("busy")
            return
        self._set_language(self.query.chosen_language() or question_language(question))
        for panel in (self.hitl, self.todo):
            panel.widget.layout.display = "none"
        self.results.widget.layout.display = self.context.widget.layout.display = "none"
        self.query.start.disabled = True
        self.query.message.value = ""
        self.log.clear()
        self._log_session = ""
        self.progress.reset()
        self.progress.running(ui_text(self.language)["step_understand"])
        self.backend.start(question, self.query.selected_collection(), self.query.chosen_language())

    def save_report(self) -> Path | None:
        """The same report folder as `rabbithole research --out` (report.md/html/json, graph.html, tier CSVs)
        under the reports folder; its path is shown."""
        if not self._finished:
            return None
        folder = new_saved_folder(self.reports_dir, self._finished.get("query", "report"))
        try:
            write_report_folder(self._finished, folder)
        except (OSError, ValueError) as exc:
            self.results.show_saved(None, str(exc))
            return None
        self.results.show_saved(folder)
        return folder

    def resume(self) -> None:
        chosen = self.sessions.sessions.value
        if chosen and not self.backend.busy():
            if chosen != self._log_session:  # the log of the session resumed, not of the one shown before
                self.log.clear()
            self._log_session = chosen
            self.backend.resume(chosen)

    def shutdown(self) -> bool:
        """Shut the kernel down (asked for and confirmed in the session panel): the run is stopped and its
        checkpoint kept, every control is disabled and the panel says the kernel is gone."""
        self.backend.close()
        self.log.detach()
        disable_all(self.widget)
        self.sessions.confirm_row.layout.display = "none"
        gone = ui_text(self.language)["kernel_gone"]
        self.sessions.status.value = f"<div class='rh-kernel-gone'><b>{html.escape(gone)}</b></div>"
        self.progress.idle("")
        return shutdown_kernel()

    # ---- events from the back end (worker thread) ----------------------------------------------
    def _on_event(self, event: BackendEvent) -> None:
        if event.kind == "running":
            self.sessions.running(True)
        elif event.kind == "progress":
            self._on_progress(event.node, event.update or {})
        elif event.status is not None:
            self._on_status(event.status)

    def _on_progress(self, node: str, update: dict) -> None:
        if node == "hitl_init" and update.get("detected_language"):
            self._set_language(update["detected_language"])
        self.progress.on_progress(node, update)
        if "retrieval_history" in update:
            self.hitl.show_history(update["retrieval_history"])
        if node in ("process_hitl_todo", "execute_task", "adapt_todo") and "todo_list" in update:
            self.todo.widget.layout.display = "flex"
            self.todo.show_progress(update["todo_list"], update.get("current_task_id"))

    def _on_status(self, status: RunStatus) -> None:
        state = status.state or {}
        if state.get("detected_language"):
            self._set_language(state["detected_language"])
        self.sessions.running(False)  # a run paused for the researcher, or ended: nothing to stop
        self.sessions.refresh(state.get("thread_id"))
        if status.kind == "interrupt" and status.interrupt:
            self.progress.idle("")
            if status.interrupt.get("type") == "todo_approval":
                self.hitl.hide()
                self.todo.show(status.interrupt)
            else:
                self.hitl.show(status.interrupt)
                self.hitl.show_history(state.get("retrieval_history", []))
            return
        self.query.start.disabled = False
        self.progress.reset()
        if status.kind == "done" and status.report:
            self._finished = state
            self._say("done")
            self.todo.show_progress(state.get("todo_list", {}), None)
            self.results.show(status.report, self.language)
            self.context.show(state, self.language)
        elif status.kind == "stopped":
            self._say("stopped")
        else:
            self._say("error", error=status.error or status.kind)
