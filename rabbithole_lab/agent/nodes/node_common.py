"""Small helpers shared by the nodes (reading the state, bounded concurrency)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from typing import TypeVar

from rabbithole_lab.agent.state import AgentState
from rabbithole_lab.records import VectorResult

logger = logging.getLogger(__name__)

Item = TypeVar("Item")
Out = TypeVar("Out")


def language(state: AgentState) -> str:
    return state.get("detected_language") or "de"


def question(state: AgentState) -> str:
    """The question as the researcher wrote it."""
    return (state.get("query_anchor") or {}).get("original_query") or state["query"]


def anchor(state: AgentState) -> str:
    """What the research searches and judges by, fixed by hitl_finalize: the question with the aspects and
    provisions the clarification added (the question alone before that, or when nothing was added)."""
    return (state.get("query_anchor") or {}).get("text") or question(state)


def asked_parts(state: AgentState) -> list[str]:
    """What the researcher asked for beyond the question: the dialogue's additions and named provisions."""
    record = state.get("query_anchor") or {}
    return [*record.get("additions", []), *record.get("provisions", [])]


def exclusions(state: AgentState) -> list[str]:
    """The cases the researcher excluded in the clarification dialogue."""
    return list((state.get("query_anchor") or {}).get("exclusions") or [])


def concurrent_map(fn: Callable[[Item], Out], items: Iterable[Item], workers: int) -> list[Out]:
    items = list(items)
    if workers <= 1 or len(items) <= 1:
        return [fn(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(workers, len(items))) as pool:
        return list(pool.map(fn, items))


def chunk_key(result: VectorResult) -> str:
    """The seeds' dedup key: doc:page:text[:100]."""
    return f"{result.doc}:{result.page_start}:{result.text[:100]}"


# who hears how far a long step inside a node is (the session running the graph sets it)
STEP_LISTENER: ContextVar[Callable[[dict], None] | None] = ContextVar("rabbithole_step_listener", default=None)


def step_reporter(step: str, **fields) -> Callable[[int, int], None]:
    """How far a long step is, told to the session running the graph:
    {"step": step, "done": n, "total": m, **fields}. Outside a run nobody listens."""
    listener = STEP_LISTENER.get()
    if listener is None:
        return lambda done, total: None

    def report(done: int, total: int) -> None:
        try:
            listener({"step": step, "done": done, "total": total, **fields})
        except Exception:  # progress display must never break the research
            logger.exception("progress listener failed")

    return report
