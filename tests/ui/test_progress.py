"""Progress in the user's language: the step running now, task n of N, a bar over the tasks."""

from __future__ import annotations

from rabbithole_lab.agent.session import STEP_EVENT
from rabbithole_lab.ui.progress import ProgressPanel, open_task, step_text

TODO = {"items": [{"id": 0, "task": "A", "completed": True}, {"id": 1, "task": "B", "completed": False},
                  {"id": 2, "task": "C", "completed": False}]}


def test_a_finished_node_names_the_step_that_runs_now_in_the_users_language():
    assert step_text("hitl_init", {}, {}, "de") == "Klärung: Suche in den Dokumenten"
    assert step_text("hitl_init", {}, {}, "en") == "Clarification: searching the documents"
    # tasks are numbered 1..N: the open task with id 1 is the second of three
    assert open_task(TODO) == (2, 3)
    assert step_text("adapt_todo", {}, TODO, "de") == "Suche zu Aufgabe 2 von 3"
    done = {"items": [dict(item, completed=True) for item in TODO["items"]]}
    assert step_text("adapt_todo", {}, done, "en") == "Checking the context"
    assert step_text("quality_check", {"quality_assessment": {"overall_score": 412}}, {}, "de") == \
        "Qualität 412/500 · Bericht fertigstellen"
    assert "_" not in step_text("some_new_node", {}, {}, "de")  # never an internal node name


def test_the_counter_counts_the_tasks_that_are_researched():
    """Three of five tasks closed early made the counter jump from "Aufgabe 1/4" to "Aufgabe 5/5"."""
    closed = {"completed": True, "closed_reason": "schon im Kontext"}
    todo = {"items": [{"id": 0, "task": "A", "completed": True}, {"id": 1, "task": "B", **closed},
                      {"id": 2, "task": "C", **closed}, {"id": 3, "task": "D", "completed": False},
                      {"id": 4, "task": "E", "completed": False}]}
    assert open_task(todo) == (2, 3)


def test_steps_inside_a_task_say_how_far_they_are():
    follow = {"step": "follow", "done": 3, "total": 7, "task_number": 2, "task_total": 5}
    assert step_text(STEP_EVENT, follow, {}, "de") == "Aufgabe 2 von 5: Verweise verfolgen: 3 von 7"
    assert step_text(STEP_EVENT, dict(follow, step="search", done=1, total=2), {}, "en") == \
        "Searching for task 2 of 5 (round 1)"


def test_the_panel_shows_a_spinner_while_running_and_a_task_bar_that_a_new_run_clears():
    panel = ProgressPanel("de")
    panel.on_progress("process_hitl_todo", {"todo_list": TODO})
    assert "fa-spin" in panel.label.value and "Suche zu Aufgabe 2 von 3" in panel.label.value
    assert (panel.tasks.value, panel.tasks.max, panel.tasks.layout.display) == (1, 3, "flex")
    assert panel.tasks_label.value == "Aufgaben: 1 von 3 erledigt"
    panel.idle("Fertig.")
    assert panel.label.value == "Fertig."
    panel.reset()
    assert panel.tasks.layout.display == "none" and panel.label.value == ""
    panel.running("<b>x</b>")
    assert "&lt;b&gt;" in panel.label.value
