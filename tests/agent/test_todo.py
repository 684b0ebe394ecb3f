"""To-do approval operations: approve, remove, edit, add, renumber, limits."""

from __future__ import annotations

import pytest

from rabbithole_lab.agent.nodes.planning import apply_todo_decision
from rabbithole_lab.records import ToDoList


def todo(count: int = 4, max_items: int = 15) -> ToDoList:
    plan = ToDoList(max_items=max_items)
    for number in range(count):
        plan.add_task(f"Aufgabe {number}", f"Kontext {number}")
    return plan


@pytest.mark.parametrize("decision", ["approve", None, True, {"approved": True}])
def test_approve_keeps_everything(decision):
    result, warnings = apply_todo_decision(todo(), decision if decision != {"approved": True} else {})
    assert [i.task for i in result.items] == [f"Aufgabe {n}" for n in range(4)] and warnings == []


def test_remove_and_renumber():
    result, _ = apply_todo_decision(todo(), {"removed_ids": [1, 2]})
    assert [(i.id, i.task) for i in result.items] == [(0, "Aufgabe 0"), (1, "Aufgabe 3")]


def test_edit_task_and_context():
    result, _ = apply_todo_decision(todo(), {"edited_items": [{"id": 2, "task": "Neu", "context": "warum"}]})
    assert result.items[2].task == "Neu" and result.items[2].context == "warum"
    unchanged, _ = apply_todo_decision(todo(), {"edited_items": [{"id": 2, "task": "  "}]})
    assert unchanged.items[2].task == "Aufgabe 2"


def test_an_edited_task_is_read_by_the_researchers_words_not_the_planned_focus():
    plan = ToDoList()
    plan.add_task("Fristen belegen – Thema: Dosis", focus="Dosis", kinds=["deadline"])
    plan.add_task("Vorschriften ermitteln – Thema: Dosis", focus="Dosis")
    result, _ = apply_todo_decision(plan, {"edited_items": [{"id": 0, "task": "Fristen für Meldungen"}]})
    assert (result.items[0].focus, result.items[0].kinds, result.items[0].origin) == ("", [], "user")
    assert result.items[1].focus == "Dosis"  # an untouched task keeps what it was planned for


def test_add_items_as_text_or_dict():
    result, _ = apply_todo_decision(todo(2), {"new_items": ["Eins", {"task": "Zwei", "context": "c"}, ""]})
    assert [(i.id, i.task) for i in result.items][-2:] == [(2, "Eins"), (3, "Zwei")]
    assert result.items[-1].context == "c"


def test_all_operations_together_in_order_remove_edit_add():
    result, _ = apply_todo_decision(todo(), {"removed_ids": [0], "edited_items": [{"id": 3, "task": "Drei"}],
                                             "new_items": ["Vier"]})
    assert [i.task for i in result.items] == ["Aufgabe 1", "Aufgabe 2", "Drei", "Vier"]
    assert [i.id for i in result.items] == [0, 1, 2, 3]


def test_unknown_ids_and_a_full_list_give_warnings_not_errors():
    result, warnings = apply_todo_decision(todo(3, max_items=4), {"removed_ids": [9], "edited_items": [{"id": 8}],
                                                                  "new_items": ["a", "b"]})
    assert len(result.items) == 4
    # what went wrong is recorded as keys with the values the reader needs; the front ends word them
    assert [(w["key"], w["values"]) for w in warnings] == [
        ("todo_unknown_remove", {"ids": "9"}), ("todo_unknown_edit", {"id": 8}),
        ("todo_full", {"max_items": 4, "task": "b"})]


def test_an_unknown_decision_is_an_error():
    with pytest.raises(ValueError, match="Unknown to-do decision"):
        apply_todo_decision(todo(), "maybe")
