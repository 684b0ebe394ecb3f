"""The agent state: a TypedDict of JSON-safe values (records are stored as dicts, so checkpoints and
report.json stay plain JSON).

Nodes return only the keys they change. Every list that grows during a run has a reducer: a node
returns only its new items, and LangGraph appends them (`validate_relevance` replaces the tiers it
filters with `Overwrite`).
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
    requested_language: str  # "de" or "en" chosen by the user; empty: the question's language decides
    hitl_active: bool
    hitl_iteration: int
    hitl_understanding: str  # the current summary of what the question means, shown with each round
    iteration_queries: Annotated[list[list[str]], operator.add]
    query_retrieval: Annotated[list[dict], operator.add]  # VectorResult dicts, deduplicated across iterations
    retrieval_history: Annotated[list[dict], operator.add]  # per iteration: queries, chunk counts, dedup ratio, chunks
    retrieval_dedup_ratios: Annotated[list[float], operator.add]
    coverage_score: float
    knowledge_gaps: list[str]
    key_concepts: list[str]
    entities: list[str]
    scope: str
    follow_up_questions: list[str]
    hitl_conversation_history: Annotated[list[dict], operator.add]  # {"role": "assistant"|"user", "content": str}
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
    primary_context: Annotated[list[dict], operator.add]  # ChunkWithInfo dicts with task_id
    secondary_context: Annotated[list[dict], operator.add]
    tertiary_context: Annotated[list[dict], operator.add]
    task_summaries: Annotated[list[dict], operator.add]
    preserved_quotes: Annotated[list[dict], operator.add]
    reference_edges: Annotated[list[dict], operator.add]  # ReferenceEdge dicts with task_id
    visited_refs: list[str]
    seen_chunks: list[str]  # doc:page:text[:100] keys
    task_stats: Annotated[list[dict], operator.add]  # per task: seconds, reasoner calls, chunks, followed references, rounds
    todo_changes: Annotated[list[dict], operator.add]  # after a task: tasks added and closed early during research, with reasons

    # Phase 3.5
    relevance_validation: dict

    # Phase 4
    synthesis: dict
    quality_assessment: dict
    quality_history: Annotated[list[dict], operator.add]
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
