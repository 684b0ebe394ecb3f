"""The to-do panel: what the clarification settled (correctable), each task as an expander with its full
text; remove, edit, add; Approve; then live progress."""

from __future__ import annotations

import html

import ipywidgets as w

from rabbithole_lab.messages.catalogue import ui_text
from rabbithole_lab.support.shown_text import shorten
from rabbithole_lab.ui.backend import WorkbenchBackend
from rabbithole_lab.ui.panels import full_width

TITLE_CHARS = 70  # a task's title in the list; the whole task shows when it is opened
APPROVE_MARK = "\u2713"  # ✓


class TodoPanel:
    """Each task as an expander with its full text; remove, edit, add; Approve; then live progress."""

    def __init__(self, backend: WorkbenchBackend):
        self.backend = backend
        self.text = ui_text("de")
        self.tasks = w.Accordion(children=[])
        self.task_texts: list[w.Textarea] = []
        self.remove_boxes: list[w.Checkbox] = []
        self.task_ids: list[int] = []
        self.new_task = w.Text(placeholder=self.text["add_placeholder"], layout=w.Layout(width="70%"))
        self.add = w.Button(description=self.text["add"], icon="plus", layout=w.Layout(width="auto"))
        # the tick as a character of the label: the icon font's tick sat above the text's baseline
        self.approve = w.Button(description=f"{APPROVE_MARK} {self.text['approve']}", button_style="success",
                                layout=w.Layout(width="auto"))
        self.progress = w.HTML()
        # what the clarification settled, and the researcher's correction of it (read like an answer)
        self.summary = w.HTML()
        self.correction = w.Text(placeholder=self.text["correct_placeholder"], layout=full_width())
        self.added: list[str] = []
        self._originals: dict[int, str] = {}
        self.add.on_click(lambda _: self._add())
        self.approve.on_click(lambda _: self._approve())
        self.add_row = w.HBox([self.new_task, self.add])
        self.widget = w.VBox([w.HTML(f"<h3>{self.text['todo_title']}</h3>"), self.summary, self.correction,
                              self.tasks, self.add_row, self.approve, self.progress],
                             layout=w.Layout(display="none"))

    def set_language(self, language: str) -> None:
        self.text = ui_text(language)
        self.widget.children[0].value = f"<h3>{self.text['todo_title']}</h3>"
        self.add.description, self.approve.description = self.text["add"], f"{APPROVE_MARK} {self.text['approve']}"
        self.new_task.placeholder = self.text["add_placeholder"]
        self.correction.placeholder = self.text["correct_placeholder"]

    def show(self, interrupt: dict) -> None:
        items = interrupt["todo_list"]["items"]
        self.task_ids = [item["id"] for item in items]
        self.task_texts = [w.Textarea(value=item["task"], layout=full_width()) for item in items]
        self.remove_boxes = [w.Checkbox(description=self.text["remove"], value=False, indent=False) for _ in items]
        self.added = []
        self._originals = {item["id"]: item["task"] for item in items}
        summary = interrupt.get("research_summary", "")
        self.summary.value = (f"<b>{html.escape(self.text['summary_title'])}</b><br>"
                              + "<br>".join(html.escape(line) for line in summary.splitlines())) if summary else ""
        self.correction.value = ""
        self.correction.layout.display = "flex" if summary else "none"
        self.tasks.children = [w.VBox([text, box])
                               for text, box in zip(self.task_texts, self.remove_boxes, strict=True)]
        for index in range(len(items)):
            self._retitle(index)
            # an edited task shows its new text in its title, a removed one says so
            self.task_texts[index].observe(lambda _, i=index: self._retitle(i), names="value")
            self.remove_boxes[index].observe(lambda _, i=index: self._retitle(i), names="value")
        self.widget.layout.display = "flex"
        self.approve.disabled = self.add.disabled = False
        self.approve.layout.display = self.add_row.layout.display = "flex"
        self.progress.value = ""

    def _retitle(self, index: int) -> None:
        text = " ".join(self.task_texts[index].value.split())
        title = f"{index + 1}. {shorten(text, TITLE_CHARS)}"  # numbered 1..N everywhere
        if self.remove_boxes[index].value:
            title = f"{title} ({self.text['removed_short']})"
        self.tasks.set_title(index, title)

    def _add(self) -> None:
        task = self.new_task.value.strip()
        if not task:
            return
        self.added.append(task)
        self.new_task.value = ""
        self.tasks.children = [*self.tasks.children, w.HTML(f"+ {html.escape(task)}")]
        self.tasks.set_title(len(self.tasks.children) - 1, f"+ {shorten(task, TITLE_CHARS)}")

    def decision(self) -> dict:
        """The approval answer: removed ids, edited tasks (text changed) and added tasks."""
        removed = [tid for tid, box in zip(self.task_ids, self.remove_boxes, strict=True) if box.value]
        edited = [{"id": tid, "task": text.value.strip()}
                  for tid, text in zip(self.task_ids, self.task_texts, strict=True)
                  if tid not in removed and text.value.strip() != self._originals.get(tid, "")]
        return {"removed_ids": removed, "edited_items": edited, "new_items": list(self.added),
                "anchor_correction": self.correction.value.strip()}

    def _approve(self) -> None:
        self.approve.disabled = self.add.disabled = True
        # the plan is decided: its controls go, the list turns into the progress view
        self.approve.layout.display = self.add_row.layout.display = self.correction.layout.display = "none"
        self.backend.answer(self.decision())

    def show_progress(self, todo: dict, current_id: int | None) -> None:
        """'Aufgabe n/N: …' with the current task expanded."""
        items = todo.get("items", [])
        t = self.text
        self.task_ids = [item["id"] for item in items]

        def body(item: dict) -> str:
            notes = []
            if item.get("origin") == "added":
                notes.append(f"<i>{html.escape(t['added_during_research'])}: "
                             f"{html.escape(item.get('added_reason', ''))}</i>")
            if item.get("closed_reason"):
                notes.append(f"<i>{html.escape(t['closed_early'])}: {html.escape(item['closed_reason'])}</i>")
            return "<br>".join([html.escape(item["task"]), *notes])

        self.tasks.children = [w.HTML(body(item)) for item in items]
        for index, item in enumerate(items):
            # no emoji font needed
            mark = "[x]" if item["completed"] else ("[>]" if item["id"] == current_id else "[ ]")
            flag = (f" ({t['added_short']})" if item.get("origin") == "added" else "") + \
                (f" ({t['closed_short']})" if item.get("closed_reason") else "")
            self.tasks.set_title(index, f"{mark} {index + 1}. {shorten(item['task'], TITLE_CHARS)}{flag}")
        position = next((i for i, item in enumerate(items) if item["id"] == current_id), None)
        self.tasks.selected_index = position
        if position is not None:
            self.progress.value = "<b>" + html.escape(self.text["task_progress"].format(
                n=position + 1, total=len(items), task=items[position]["task"])) + "</b>"
        else:
            self.progress.value = ""
