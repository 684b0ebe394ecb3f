"""Progress a person understands: the step that runs now, in the user's language, with a spinner, and a
bar over the research tasks. Tasks are numbered 1..N everywhere (approval, progress, results).

The graph reports a node when it has finished; what the user wants to read is what runs now, so a
finished node names the step after it. Long steps inside a node (a task's search rounds, following
its references) report how far they are (`agent.session.STEP_EVENT`).
"""

from __future__ import annotations

import html

import ipywidgets as w

from rabbithole_lab.agent.session import STEP_EVENT
from rabbithole_lab.messages.catalogue import ui_text
from rabbithole_lab.records import ToDoList

# the step that starts when a node has finished
_NEXT_STEP = {
    "hitl_init": "step_clarify_search", "hitl_generate_queries": "step_clarify_search",
    "hitl_retrieve_chunks": "step_clarify_analyse", "hitl_analyze_retrieval": "step_clarify_questions",
    "hitl_generate_questions": "step_clarify_questions", "hitl_process_response": "step_clarify_search",
    "hitl_finalize": "step_plan", "generate_todo": "step_plan",
    "hitl_approve_todo": "step_task", "process_hitl_todo": "step_task", "adapt_todo": "step_task",
    "execute_task": "step_adapt", "validate_relevance": "step_synthesize", "synthesize": "step_quality",
    "quality_check": "step_after_quality", "remediate": "step_synthesize", "attribute_sources": "step_attribute",
}


def open_task(todo: dict) -> tuple[int, int] | None:
    """(n, N) of the next task to research among the N that are researched, or None when every task is done."""
    tasks = ToDoList.model_validate(todo) if todo.get("items") else ToDoList()
    task = tasks.get_next_task()
    return tasks.run_position(task) if task is not None else None


def step_text(node: str, update: dict, todo: dict, language: str) -> str:
    """What the user reads while the run goes on after `node` reported `update`."""
    t = ui_text(language)
    if node == STEP_EVENT:
        values = {"n": update.get("task_number", 0), "total": update.get("task_total", 0),
                  "done": update.get("done", 0), "count": update.get("total", 0)}
        key = "step_follow" if update.get("step") == "follow" else "step_search_round"
        return t[key].format(**values)
    key = _NEXT_STEP.get(node, "step_working")
    if key == "step_task":
        task = open_task(todo)
        if task is None:
            key = "step_filter"
        else:
            return t["step_task"].format(n=task[0], total=task[1])
    if key == "step_after_quality":
        score = (update.get("quality_assessment") or {}).get("overall_score")
        return t[key].format(score=score if score is not None else "?")
    return t[key]


class ProgressPanel:
    """A spinner with the current step, and a bar over the tasks once research has begun."""

    def __init__(self, language: str = "de"):
        self.language = language
        self.label = w.HTML()
        self.tasks = w.IntProgress(min=0, max=1, value=0, bar_style="info",
                                   layout=w.Layout(width="16em", display="none"))
        self.tasks_label = w.HTML(layout=w.Layout(display="none"))
        self.todo: dict = {}
        self.widget = w.VBox([w.HBox([self.tasks, self.tasks_label], layout=w.Layout(align_items="center")),
                              self.label])
        self.widget.add_class("rh-progress")

    def set_language(self, language: str) -> None:
        self.language = language

    def running(self, text: str) -> None:
        self.label.value = f"<span class='rh-step'><i class='fa fa-spinner fa-spin'></i> {html.escape(text)}</span>"

    def idle(self, text: str = "") -> None:
        """The run waits or has ended: no spinner."""
        self.label.value = html.escape(text)

    def on_progress(self, node: str, update: dict) -> None:
        if isinstance(update.get("todo_list"), dict):
            self.todo = update["todo_list"]
            self.show_tasks(self.todo)
        self.running(step_text(node, update, self.todo, self.language))

    def show_tasks(self, todo: dict) -> None:
        items = todo.get("items", [])
        if not items:
            return
        done = sum(1 for item in items if item.get("completed"))
        self.tasks.max, self.tasks.value = len(items), done
        self.tasks_label.value = html.escape(ui_text(self.language)["tasks_done"].format(done=done, total=len(items)))
        self.tasks.layout.display = self.tasks_label.layout.display = "flex"

    def reset(self) -> None:
        """A new run: no bar left over from the last one."""
        self.todo = {}
        self.tasks.value = 0
        self.tasks.layout.display = self.tasks_label.layout.display = "none"
        self.label.value = ""
