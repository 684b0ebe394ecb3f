"""The agent state: a TypedDict of JSON-safe values (records are stored as dicts).

Nodes return only the keys they change; `warnings` and `messages` accumulate.
"""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict


class AgentState(TypedDict, total=False):
    # input
    query: str
    collection: str | None
    thread_id: str
    kb_dir: str  # where the run's knowledge base lives (for resuming from the CLI)
    db_path: str

    # Phase 1: iterative HITL
    detected_language: str
    hitl_active: bool
    hitl_iteration: int
    iteration_queries: list[list[str]]
    query_retrieval: list[dict]  # VectorResult dicts, deduplicated across iterations
    retrieval_history: list[dict]  # per iteration: queries, chunk counts, dedup ratio, chunks
    retrieval_dedup_ratios: list[float]
    coverage_score: float
    knowledge_gaps: list[str]
    key_concepts: list[str]
    entities: list[str]
    scope: str
    follow_up_questions: list[str]
    hitl_conversation_history: list[dict]  # {"role": "assistant"|"user", "content": str}
    hitl_termination_reason: str  # user_end | max_iterations | convergence
    query_anchor: dict  # immutable after hitl_finalize
    hitl_context_summary: str
    research_queries: list[str]
    query_analysis: dict

    # Phase 2
    todo_list: dict  # ToDoList
    todo_approved: bool
    todo_decision: dict  # the approval answer as given (approve, removed_ids, edited_items, new_items)

    # Phase 3
    current_task_id: int | None
    research_context: dict  # ResearchContext
    primary_context: list[dict]  # ChunkWithInfo dicts with task_id
    secondary_context: list[dict]
    tertiary_context: list[dict]
    task_summaries: list[dict]
    preserved_quotes: list[dict]
    reference_edges: list[dict]  # ReferenceEdge dicts with task_id
    visited_refs: list[str]
    seen_chunks: list[str]  # doc:page:text[:100] keys
    task_stats: list[dict]  # per task: seconds, reasoner calls, chunks, followed references

    # Phase 3.5
    relevance_validation: dict

    # Phase 4
    synthesis: dict
    quality_assessment: dict
    quality_history: list[dict]
    reflection_count: int
    remediation_instructions: str

    # Phase 5
    final_report: dict

    # run-wide
    phase: str
    reasoner: dict  # provider, model, reason
    error: str
    failed_node: str
    warnings: Annotated[list[str], operator.add]
    messages: Annotated[list[str], operator.add]
