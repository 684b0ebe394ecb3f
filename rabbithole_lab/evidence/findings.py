"""Views over a run's findings (`state["findings"]`, each stored once): the tiers, the preserved quotes
and the seeds' `ResearchContext`. Plain functions over the state dict, so the report, the tables and the
workbench read a saved run the way the graph wrote it."""

from __future__ import annotations

from collections.abc import Mapping

from rabbithole_lab.records import (
    ChunkWithInfo,
    PreservedQuote,
    ResearchContext,
    ResearchContextMetadata,
    SearchQueryResult,
)

TIERS = ("primary", "secondary", "tertiary")
_NOT_CHUNK_FIELDS = ("task_id", "validation_score", "validation_reason", "dropped")


def tier_entries(state: Mapping, tier: str) -> list[dict]:
    """The findings of one tier that carry an extract and were not dropped, in the order they were found.
    A state saved before findings were stored once still has its tier lists (`primary_context`, ...)."""
    if "findings" not in state and f"{tier}_context" in state:
        return list(state.get(f"{tier}_context") or [])
    return [entry for entry in state.get("findings") or []
            if entry.get("tier") == tier and entry.get("extracted_info") and not entry.get("dropped")]


def context_entries(state: Mapping) -> list[dict]:
    """Every tier entry, primary first."""
    return [entry for tier in TIERS for entry in tier_entries(state, tier)]


def as_chunk(entry: Mapping) -> ChunkWithInfo:
    return ChunkWithInfo.model_validate({k: v for k, v in entry.items() if k not in _NOT_CHUNK_FIELDS})


def tier_chunks(state: Mapping, tier: str) -> list[ChunkWithInfo]:
    return [as_chunk(entry) for entry in tier_entries(state, tier)]


def task_findings(state: Mapping, task_id: int) -> list[dict]:
    return [entry for entry in state.get("findings") or [] if entry.get("task_id") == task_id]


def preserved_quotes(state: Mapping) -> list[PreservedQuote]:
    """The verbatim quotes the research tasks kept, in the order found (the drift filter does not remove
    quotes: a quote is evidence of its own)."""
    return [PreservedQuote.model_validate(quote) for entry in state.get("findings") or []
            if entry.get("task_id") is not None for quote in entry.get("preserved_quotes", [])]


def research_context(state: Mapping) -> ResearchContext:
    """The seeds' ResearchContext (one SearchQueryResult per researched task), built from the findings."""
    searches = []
    documents: set[str] = set()
    for summary in state.get("task_summaries") or []:
        task_id = summary.get("task_id")
        chunks = [as_chunk(entry) for entry in task_findings(state, task_id)]
        documents |= {chunk.document for chunk in chunks}
        searches.append(SearchQueryResult(
            query=summary.get("task", ""), task_id=task_id, chunks=chunks, summary=summary.get("summary"),
            summary_references=sorted({chunk.document for chunk in chunks}),
            quality_score=summary.get("relevance_score")))
    metadata = ResearchContextMetadata(
        total_iterations=sum(stats.get("iterations", 0) for stats in state.get("task_stats") or []),
        documents_referenced=sorted(documents), visited_refs=list(state.get("visited_refs") or []))
    return ResearchContext(search_queries=searches, metadata=metadata)


def finding_tasks(state: Mapping) -> dict[str, list[int]]:
    """chunk id -> the tasks that found it, in plan order: the task it is stored with, a later task whose search
    returned it again, and a task closed early because its search found it in the context already."""
    found: dict[str, list[int]] = {}

    def add(chunk_id: str, task_id) -> None:
        if chunk_id and task_id is not None and task_id not in found.setdefault(chunk_id, []):
            found[chunk_id].append(task_id)

    for entry in state.get("findings") or []:
        add(entry.get("chunk_id", ""), entry.get("task_id"))
    for stats in state.get("task_stats") or []:
        for chunk_id in stats.get("found_again", []):
            add(chunk_id, stats.get("task_id"))
    for change in state.get("todo_changes") or []:
        for closed in change.get("closed", []):
            for chunk_id in closed.get("found", []):
                add(chunk_id, closed.get("id"))
    order = {item["id"]: index for index, item in enumerate((state.get("todo_list") or {}).get("items", []))}
    return {chunk_id: sorted(ids, key=lambda task_id: order.get(task_id, len(order)))
            for chunk_id, ids in found.items()}
