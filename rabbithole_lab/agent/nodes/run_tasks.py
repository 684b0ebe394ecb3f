"""Phase 3: one to-do task per visit (`ResearchTask` does the work; this node reads and writes the state)."""

from __future__ import annotations

import logging

from langgraph.runtime import Runtime

from rabbithole_lab.agent.nodes.node_common import anchor, exclusions, language, step_reporter
from rabbithole_lab.agent.services import Services
from rabbithole_lab.agent.state import AgentState
from rabbithole_lab.records import ToDoList, notice
from rabbithole_lab.steps.task import ResearchTask

logger = logging.getLogger(__name__)


def execute_task(state: AgentState, runtime: Runtime[Services]) -> dict:
    todo = ToDoList.model_validate(state["todo_list"])
    task = todo.get_next_task()
    if task is None:
        return {"current_task_id": None}
    lang = language(state)
    number, total = todo.run_position(task)
    progress = notice("task_progress", n=number, total=total, task=task.task)
    logger.debug("Task %d of %d: %s", number, total, task.task)
    seen_before = set(state.get("seen_chunks", []))
    # a task the researcher wrote reads every passage its own search finds, also those another task read:
    # its finding is its own (the others' passages stay unread a second time)
    outcome = ResearchTask(
        runtime.context, task, anchor(state), lang, concepts=state.get("key_concepts", []),
        collection=state.get("collection"), seen=set() if task.origin == "user" else set(seen_before),
        visited=set(state.get("visited_refs", [])), exclusions=exclusions(state),
        search_progress=step_reporter("search", task_number=number, task_total=total),
        follow_progress=step_reporter("follow", task_number=number, task_total=total)).run()
    task.completed = True
    next_task = todo.get_next_task()
    return {
        "todo_list": todo.model_dump(),
        "current_task_id": next_task.id if next_task else None,
        "findings": [finding.model_dump() | {"task_id": task.id} for finding in outcome.findings],
        "task_summaries": [outcome.summary.model_dump() | {"task_id": task.id, "task": task.task}],
        "reference_edges": [edge.model_dump() | {"task_id": task.id} for edge in outcome.edges],
        "visited_refs": sorted(outcome.visited),
        "seen_chunks": sorted(seen_before | outcome.seen),
        "task_stats": [outcome.stats],
        "messages": [progress, *[notice("round_line", n=r["iteration"], reason=r["reason"]) for r in outcome.rounds]],
    }
