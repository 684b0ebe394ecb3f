"""The session controls: Stop, the saved sessions with Resume, and the kernel shutdown."""

from __future__ import annotations

import html

import ipywidgets as w

from rabbithole_lab.messages.catalogue import ui_text
from rabbithole_lab.support.shown_text import shorten
from rabbithole_lab.ui.backend import WorkbenchBackend


class SessionPanel:
    """Stop (only while a run is active), saved sessions (question, date, phase in words) with Resume, and a
    kernel shutdown that asks first and leaves every control disabled after it."""

    def __init__(self, backend: WorkbenchBackend):
        self.backend = backend
        self.text = ui_text("de")
        self.stop = w.Button(description=self.text["stop"], icon="stop", button_style="warning", disabled=True,
                             layout=w.Layout(width="auto"))
        self.sessions = w.Dropdown(options=[], description=self.text["sessions"],
                                   layout=w.Layout(width="auto", flex="1 1 20em", min_width="0"))
        self.resume = w.Button(description=self.text["resume"], icon="repeat", layout=w.Layout(width="auto"))
        self.shutdown = w.Button(description=self.text["shutdown"], icon="power-off", button_style="danger",
                                 layout=w.Layout(width="auto"))
        self.confirm_text = w.HTML()
        self.confirm = w.Button(description=self.text["shutdown_confirm"], icon="power-off", button_style="danger",
                                layout=w.Layout(width="auto"))
        self.cancel = w.Button(description=self.text["shutdown_cancel"], layout=w.Layout(width="auto"))
        self.confirm_row = w.HBox([self.confirm_text, self.confirm, self.cancel],
                                  layout=w.Layout(display="none", align_items="center", flex_flow="row wrap"))
        self.confirm_row.add_class("rh-shutdown-confirm")
        self.status = w.HTML()
        self.stop.on_click(lambda _: self.request_stop())
        self.shutdown.on_click(lambda _: self.ask_shutdown())
        self.cancel.on_click(lambda _: self._hide_confirm())
        self.widget = w.VBox([w.HBox([self.stop, self.sessions, self.resume, self.shutdown],
                                     layout=w.Layout(flex_flow="row wrap", align_items="center")),
                              self.confirm_row, self.status])
        self.refresh()

    def set_language(self, language: str) -> None:
        self.text = ui_text(language)
        self.stop.description, self.resume.description = self.text["stop"], self.text["resume"]
        self.sessions.description, self.shutdown.description = self.text["sessions"], self.text["shutdown"]
        self.confirm.description, self.cancel.description = self.text["shutdown_confirm"], self.text["shutdown_cancel"]
        self.confirm_text.value = html.escape(self.text["shutdown_question"])
        self.refresh()

    def running(self, active: bool) -> None:
        """Stop is offered only while a run is active; Resume only when none is."""
        self.stop.disabled = not active
        self.resume.disabled = active or not self.sessions.options
        if not active and "rh-stopping" in self.status.value:  # the stop it announced has happened
            self.status.value = ""

    def request_stop(self) -> None:
        """Stop at the next step boundary (where the checkpoint is written); said at once, since the step under
        way (a task's searches, the answer) may take a few seconds to end."""
        self.backend.stop()
        self.stop.disabled = True
        self.status.value = f"<span class='rh-stopping'>{html.escape(self.text['stopping'])}</span>"

    def ask_shutdown(self) -> None:
        self.confirm_text.value = html.escape(self.text["shutdown_question"])
        self.confirm_row.layout.display = "flex"

    def _hide_confirm(self) -> None:
        self.confirm_row.layout.display = "none"

    def session_label(self, session: dict) -> str:
        """"question · 24.11.2026 14:03 · waiting for approval": what a person recognises a session by."""
        question = shorten(session.get("query", ""), 60) or "–"
        when = _local_time(session.get("updated_at", ""), self.text["date_format"])
        phase = session.get("phase") or ""
        words = self.text.get(f"phase_{phase}", self.text["phase_unknown"]) if phase else self.text["phase_none"]
        if session.get("error"):
            words = self.text["phase_error"]
        return " · ".join(part for part in (question, when, words) if part)

    def refresh(self, current: str | None = None) -> None:
        """Newest first; keeps (or selects) `current`, else the newest session."""
        options = [(self.session_label(s), s["thread_id"]) for s in self.backend.sessions()]
        keep = current or self.sessions.value
        self.sessions.options = options
        ids = [value for _, value in options]
        self.sessions.value = keep if keep in ids else (ids[0] if ids else None)
        self.resume.disabled = not ids or not self.stop.disabled


def _local_time(timestamp: str, date_format: str) -> str:
    """A checkpoint's ISO time (UTC) in local time, as `date_format` writes it; "" when there is none."""
    from datetime import datetime

    try:
        return datetime.fromisoformat(timestamp).astimezone().strftime(date_format)
    except (TypeError, ValueError):
        return ""


def disable_all(widget: w.Widget) -> None:
    """Every control under `widget` disabled (buttons, fields, choices): nothing left that looks usable."""
    if hasattr(widget, "disabled"):
        widget.disabled = True
    for child in getattr(widget, "children", ()) or ():
        disable_all(child)
