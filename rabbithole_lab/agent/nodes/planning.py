"""Phase 2: the to-do list, its approval (interrupt) and the user's changes."""

from __future__ import annotations

import logging

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from rabbithole_lab.agent.nodes.node_common import anchor, chunk_key, language
from rabbithole_lab.agent.services import Services
from rabbithole_lab.agent.state import AgentState, TaskChange, TodoChange
from rabbithole_lab.evidence.findings import context_entries
from rabbithole_lab.reasoning.text import contains_concept, stems
from rabbithole_lab.records import Notice, ToDoItem, ToDoList, VectorResult, notice
from rabbithole_lab.steps.plan_evidence import adds_to, found_provisions, question_context_keys
from rabbithole_lab.steps.query_anchor import anchor_notice, corrected, researcher_terms
from rabbithole_lab.steps.task import QUESTION_TASK_ID

logger = logging.getLogger(__name__)

MIN_INITIAL_TASKS = 3
MAX_INITIAL_TASKS = 5


def apply_todo_decision(todo: ToDoList, decision) -> tuple[ToDoList, list[Notice]]:
    """Apply approve / removed_ids / edited_items / new_items and renumber; returns warnings (notices).

    `decision` is "approve" (or True/None), or a dict with any of those keys; new items may be
    strings or {"task", "context"} dicts, edited items {"id", "task", "context"?}.
    """
    warnings: list[Notice] = []
    result = todo.model_copy(deep=True)
    if not isinstance(decision, dict):
        if decision in (None, True, "approve", "approved", "ok", ""):
            result.renumber()
            return result, warnings
        raise ValueError(f"Unknown to-do decision: {decision!r}")
    removed = {int(i) for i in decision.get("removed_ids", [])}
    unknown = removed - {item.id for item in result.items}
    if unknown:
        warnings.append(notice("todo_unknown_remove", ids=", ".join(map(str, sorted(unknown)))))
    result.items = [item for item in result.items if item.id not in removed]
    for edit in decision.get("edited_items", []):
        target = next((item for item in result.items if item.id == int(edit["id"])), None)
        if target is None:
            warnings.append(notice("todo_unknown_edit", id=edit["id"]))
            continue
        if str(edit.get("task", "")).strip():
            target.task = str(edit["task"]).strip()
            target.origin, target.focus, target.kinds = "user", "", []  # read by the researcher's own words
        if "context" in edit:
            target.context = str(edit["context"])
    for new in decision.get("new_items", []):
        task, context = (new, "") if isinstance(new, str) else (new.get("task", ""), new.get("context", ""))
        if not str(task).strip():
            continue
        if len(result.items) >= result.max_items:
            warnings.append(notice("todo_full", max_items=result.max_items, task=task))
            continue
        result.add_task(str(task).strip(), str(context)).origin = "user"
    result.renumber()
    return result, warnings


def generate_todo(state: AgentState, runtime: Runtime[Services]) -> dict:
    """The plan: task 0 (the question) and the tasks the reasoner proposes from what round 1 found, each
    proposed only where its search finds something the question's own context will not hold (a task that
    only repeats the context closed early as soon as it ran: 3-4 of 5 did)."""
    services = runtime.context
    settings = services.settings
    lang = language(state)
    count = max(MIN_INITIAL_TASKS, min(settings.todo.initial_items, MAX_INITIAL_TASKS))
    collection = state.get("collection")
    question_anchor = anchor(state)
    round_one = [VectorResult.model_validate(passage) for passage in state.get("query_retrieval", [])]
    found = found_provisions(services, round_one, question_anchor, lang)
    # task 0 (the question itself) counts towards the 3-5 initial tasks
    plan = services.reasoner.generate_todo(state["query"], state.get("hitl_context_summary", ""),
                                           state.get("research_queries", []), state.get("key_concepts", []), lang,
                                           count, found=tuple(found))
    todo = ToDoList(max_items=settings.todo.max_items)
    todo.items.append(ToDoItem(id=0, task=state["query"], context_key="original_question"))
    seen = {state["query"].lower()}
    tasks = [(t.task, t.context, "", True, t.focus, t.kinds) for t in plan.tasks]
    # the dialogue's search strings only fill a plan short of the minimum: as tasks they repeat the question's
    # words, and are proposed only where they find something new
    tasks += [(q, "", "dialogue_query", False, "", []) for q in state.get("research_queries", [])]
    known = question_context_keys(services, question_anchor, collection)
    concepts = state.get("key_concepts", [])
    planned = repeating = 0
    for task, context, context_key, proposed, focus, kinds in tasks:
        if planned >= count - 1 or len(todo.items) >= todo.max_items:
            break
        if not proposed and len(todo.items) >= MIN_INITIAL_TASKS:
            break
        if not task.strip() or task.lower() in seen:
            continue
        seen.add(task.lower())
        if not adds_to(services, task, concepts, known, question_anchor, lang, collection):
            repeating += proposed
            continue
        todo.add_task(task.strip(), context, focus=focus, kinds=kinds).context_key = context_key
        planned += 1
    update = {"todo_list": todo.model_dump(), "phase": "todo_approval"}
    if repeating:
        update["messages"] = [notice("plan_repeats", count=repeating)]
    return update


def hitl_approve_todo(state: AgentState, runtime: Runtime[Services]) -> dict:
    settings = runtime.context.settings
    anchor_record = state.get("query_anchor") or {}
    decision = interrupt({"type": "todo_approval", "todo_list": state["todo_list"], "language": language(state),
                          "max_items": settings.todo.max_items,
                          # what the clarification settled, which the researcher can correct with the plan
                          "research_summary": anchor_notice(anchor_record) if anchor_record else ""})
    return {"todo_decision": decision if isinstance(decision, dict) else {}}  # {} = approve as is


def process_hitl_todo(state: AgentState, runtime: Runtime[Services]) -> dict:
    todo = ToDoList.model_validate(state["todo_list"])
    decision = state.get("todo_decision") or {}
    todo, warnings = apply_todo_decision(todo, decision)
    if not todo.items:
        warnings.append(notice("all_removed"))
        todo.items.append(ToDoItem(id=0, task=state["query"]))
    first = todo.get_next_task()
    update = {"todo_list": todo.model_dump(), "todo_approved": True, "phase": "research",
              "current_task_id": first.id if first else None, "warnings": warnings}
    correction = str(decision.get("anchor_correction", "")).strip() if isinstance(decision, dict) else ""
    if correction:  # read like a clarification answer, by the same rules or prompt
        lang = language(state)
        terms = researcher_terms(runtime.context, state["query"], [{"role": "user", "content": correction}], lang,
                                 state.get("collection"))
        anchor_record = corrected(state.get("query_anchor") or {"original_query": state["query"]}, terms)
        update |= {"query_anchor": anchor_record,
                   "messages": [notice("summary_corrected", summary=anchor_notice(anchor_record))]}
    return update


def adapt_todo(state: AgentState, runtime: Runtime[Services]) -> dict:
    """Seed 003, phase 3 step 7: after a task, re-plan from what was found. Open tasks whose search finds
    only what the context holds are closed early; a provision reached by following that no task covers,
    or a clarification gap still open, adds a task — within TODO_MAX_ITEMS and TODO_MAX_ADDED per run."""
    settings = runtime.context.settings
    reasoner = runtime.context.reasoner
    kb = runtime.context.kb
    todo = ToDoList.model_validate(state["todo_list"])
    stats = state.get("task_stats", [])
    if not stats:
        return {}
    last = stats[-1]
    # the plan is adapted while tasks remain, and always after the question's own task: what its references led
    # to is what a plan of the question alone (every other task repeated its context) still lacks
    if todo.get_next_task() is None and last["task_id"] != QUESTION_TASK_ID:
        return {}
    lang = language(state)
    seen = set(state.get("seen_chunks", []))
    written = " ".join(item.task for item in todo.items)
    open_items = [item for item in todo.items if not item.completed]
    hits = {item.id: kb.search(item.task, k=settings.search.chunks_per_query, collection=state.get("collection"))
            for item in open_items if item.id != 0 and item.origin != "user"}
    saturated = [task_id for task_id, found in hits.items() if all(chunk_key(hit) in seen for hit in found)]
    provisions = []
    for edge in sorted((e for e in state.get("reference_edges", [])
                        if e.get("task_id") == last["task_id"] and e["decision"] == "followed"
                        and e["depth"] == 1 and e.get("to_sections")), key=lambda e: -e.get("score", 0.0)):
        label = f"{edge['to_sections'][0]} {edge['to_docs'][0].rsplit('.', 1)[0]}".strip()
        if edge["to_sections"][0] and edge["to_sections"][0] not in written and \
                label not in {p["label"] for p in provisions}:
            provisions.append({"label": label, "via": f"{edge['from_doc']} {edge['from_section']}".strip()})
    context_stems = stems(" ".join(entry.get("chunk_text", "") for entry in context_entries(state)))
    written_stems = stems(written)
    gaps = [gap for gap in state.get("knowledge_gaps", [])
            if not contains_concept(gap, written_stems) and not contains_concept(gap, context_stems)]
    added_so_far = sum(1 for item in todo.items if item.origin == "added")
    room = max(0, min(settings.todo.max_added - added_so_far, todo.max_items - len(todo.items)))
    summary = next((s["summary"] for s in reversed(state.get("task_summaries", []))
                    if s.get("task_id") == last["task_id"]), "")
    missing = (last.get("rounds") or [{}])[-1].get("missing", [])
    change = reasoner.adapt_todo(anchor(state), todo.items, summary, missing, provisions, gaps, saturated, room,
                                 lang)
    closed: list[TaskChange] = []
    added: list[TaskChange] = []
    for item in change.close:
        target = next((t for t in open_items if t.id == item.id and t.id != 0 and t.origin != "user"), None)
        if target is not None and not target.completed:
            target.completed, target.closed_reason = True, item.reason
            # what its search found is in the context already: the answer's section names it
            found = [hit.chunk_id for hit in hits.get(target.id, []) if chunk_key(hit) in seen]
            closed.append({"id": target.id, "task": target.task, "reason": item.reason, "found": found})
    known = {item.task.lower() for item in todo.items}
    for item in change.add[:room]:
        if not item.task.strip() or item.task.lower() in known:
            continue
        new = todo.add_task(item.task.strip(), item.reason)
        new.origin, new.added_reason = "added", item.reason
        known.add(item.task.lower())
        added.append({"id": new.id, "task": new.task, "reason": item.reason})
    if not closed and not added:
        return {}
    next_task = todo.get_next_task()
    messages = [notice("task_added", task=a["task"], reason=a["reason"]) for a in added]
    messages += [notice("task_closed", task=c["task"], reason=c["reason"]) for c in closed]
    return {"todo_list": todo.model_dump(), "current_task_id": next_task.id if next_task else None,
            "todo_changes": [TodoChange(after_task=last["task_id"], added=added, closed=closed)],
            "messages": messages}
