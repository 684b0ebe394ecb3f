"""Phase 2: the to-do list, its approval (interrupt) and the user's changes."""

from __future__ import annotations

import logging

from langgraph.types import interrupt

from rabbithole_lab.agent.nodes.common import language, localized
from rabbithole_lab.agent.services import Services
from rabbithole_lab.agent.state import AgentState
from rabbithole_lab.records import ToDoItem, ToDoList

logger = logging.getLogger(__name__)

MIN_INITIAL_TASKS = 3
MAX_INITIAL_TASKS = 5


def apply_todo_decision(todo: ToDoList, decision) -> tuple[ToDoList, list[str]]:
    """Apply approve / removed_ids / edited_items / new_items and renumber; returns warnings.

    `decision` is "approve" (or True/None), or a dict with any of those keys; new items may be
    strings or {"task", "context"} dicts, edited items {"id", "task", "context"?}.
    """
    warnings: list[str] = []
    result = todo.model_copy(deep=True)
    if not isinstance(decision, dict):
        if decision in (None, True, "approve", "approved", "ok", ""):
            result.renumber()
            return result, warnings
        raise ValueError(f"Unknown to-do decision: {decision!r}")
    removed = {int(i) for i in decision.get("removed_ids", [])}
    unknown = removed - {item.id for item in result.items}
    if unknown:
        warnings.append(f"to-do: no task with id {sorted(unknown)} to remove")
    result.items = [item for item in result.items if item.id not in removed]
    for edit in decision.get("edited_items", []):
        target = next((item for item in result.items if item.id == int(edit["id"])), None)
        if target is None:
            warnings.append(f"to-do: no task with id {edit['id']} to edit")
            continue
        if str(edit.get("task", "")).strip():
            target.task = str(edit["task"]).strip()
        if "context" in edit:
            target.context = str(edit["context"])
    for new in decision.get("new_items", []):
        task, context = (new, "") if isinstance(new, str) else (new.get("task", ""), new.get("context", ""))
        if not str(task).strip():
            continue
        try:
            result.add_task(str(task).strip(), str(context))
        except ValueError as exc:
            warnings.append(f"to-do: {exc}; '{task}' was not added")
    result.renumber()
    return result, warnings


def make_planning_nodes(services: Services) -> dict:
    settings = services.settings
    reasoner = services.reasoner

    def generate_todo(state: AgentState) -> dict:
        lang = language(state)
        count = max(MIN_INITIAL_TASKS, min(settings.todo.initial_items, MAX_INITIAL_TASKS))
        # task 0 (the question itself) counts towards the 3-5 initial tasks
        plan = reasoner.generate_todo(state["query"], state.get("hitl_context_summary", ""),
                                      state.get("research_queries", []), state.get("key_concepts", []), lang, count)
        todo = ToDoList(max_items=settings.todo.max_items)
        todo.items.append(ToDoItem(id=0, task=state["query"],
                                   context=localized(state, "Ursprüngliche Frage", "Original question")))
        seen = {state["query"].lower()}
        tasks = [(t.task, t.context) for t in plan.tasks]
        tasks += [(q, localized(state, "Forschungsquery aus dem Dialog", "Research query from the dialogue"))
                  for q in state.get("research_queries", [])]
        planned = 0
        for task, context in tasks:
            if planned >= count - 1 or len(todo.items) >= todo.max_items:
                break
            if not task.strip() or task.lower() in seen:
                continue
            seen.add(task.lower())
            todo.add_task(task.strip(), context)
            planned += 1
        return {"todo_list": todo.model_dump(), "phase": "todo_approval"}

    def hitl_approve_todo(state: AgentState) -> dict:
        decision = interrupt({"type": "todo_approval", "todo_list": state["todo_list"], "language": language(state),
                              "max_items": settings.todo.max_items})
        return {"todo_decision": decision if isinstance(decision, dict) else {}}  # {} = approve as is

    def process_hitl_todo(state: AgentState) -> dict:
        todo = ToDoList.model_validate(state["todo_list"])
        todo, warnings = apply_todo_decision(todo, state.get("todo_decision") or {})
        if not todo.items:
            warnings.append(localized(state, "Alle Aufgaben wurden entfernt; die ursprüngliche Frage wird bearbeitet",
                                      "All tasks were removed; researching the original question"))
            todo.items.append(ToDoItem(id=0, task=state["query"]))
        first = todo.get_next_task()
        return {"todo_list": todo.model_dump(), "todo_approved": True, "phase": "research",
                "current_task_id": first.id if first else None, "warnings": warnings,
                "research_context": state.get("research_context") or {}}

    return {"generate_todo": generate_todo, "hitl_approve_todo": hitl_approve_todo,
            "process_hitl_todo": process_hitl_todo}
