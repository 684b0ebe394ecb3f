"""The agent state: a TypedDict of JSON-safe values (records are stored as dicts, so checkpoints and
report.json stay plain JSON), with a TypedDict for every record that more than one node reads.

Nodes return only the keys they change. Every list that grows during a run has a reducer: a node
returns only its new items, and LangGraph appends them (`validate_relevance` replaces `findings` with
the same findings marked, through `Overwrite`).

Each finding is stored once, in `findings`; the tiers (`primary`, `secondary`, `tertiary`), the
preserved quotes and the seeds' `ResearchContext` are views over it (`rabbithole_lab/evidence/findings.py`).
"""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict


class RetrievedPreview(TypedDict):
    chunk_id: str
    doc: str
    page: int
    section: str
    score: float
    preview: str


class RetrievalRound(TypedDict):
    """One clarification round's retrieval: its queries and how much of what it found was new."""

    iteration: int
    queries: list[str]
    retrieved: int
    within_round_duplicates: int
    seen_before: int
    new: int
    dedup_ratio: float
    chunks: list[RetrievedPreview]


class TaskRound(TypedDict):
    """One search round of a task (AC-3.6) and the assessment that ended it."""

    iteration: int
    queries: list[str]
    new_chunks: int
    answered: bool
    missing: list[str]
    reason: str | dict  # the judge's words, or a notice (records.notice) when the search found nothing


class TaskStats(TypedDict):
    """What one research task did and cost."""

    task_id: int
    task: str
    queries: list[str]
    iterations: int
    rounds: list[TaskRound]
    seconds: float
    reasoner_calls: int
    llm_calls: int
    chunks: int
    seeds: int
    followed: int
    skipped: int
    tokens_used: int
    stop_reasons: list[dict]  # {"key", "values"} (messages/reasons.py); a run saved before holds words
    found_again: list[str]  # chunk ids earlier tasks admitted that this task's searches returned again


class TaskChange(TypedDict, total=False):
    id: int
    task: str
    reason: str
    found: list[str]  # a task closed early: the chunk ids its search found in the context already


class TodoChange(TypedDict):
    """Tasks added and closed early after one task, with the reasons."""

    after_task: int
    added: list[TaskChange]
    closed: list[TaskChange]


class TierEntry(TypedDict, total=False):
    """One finding: a `ChunkWithInfo` dict, the task that found it (None: the clarification dialogue),
    and the drift filter's verdict once it ran."""

    chunk_text: str
    extracted_info: str
    document: str
    page: int
    page_end: int | None
    chunk_id: str
    section: str
    collection: str
    relevance_score: float
    depth: int
    tier: str
    references: list[dict]
    preserved_quotes: list[dict]
    cited_by: str
    cites: str
    page_map: str
    heading: str
    continuation: bool
    char_start: int
    task_id: int | None
    validation_score: float
    validation_reason: str
    dropped: bool  # removed by the drift filter, or a second copy of a passage in a lower tier


class SynthesisContext(TypedDict):
    """What the answer was written from, by tier (ChunkWithInfo dicts): quality and attribution read it."""

    primary: list[dict]
    secondary: list[dict]
    tertiary: list[dict]


class AgentState(TypedDict, total=False):
    # input
    query: str
    collection: str | None
    thread_id: str
    kb_dir: str  # where the run's knowledge base lives (for resuming from the CLI)
    db_path: str
    run_options: dict  # how the CLI ran it ({"no_hitl", "approve_todo"}): a resumed run keeps them

    # Phase 1: iterative HITL
    detected_language: str
    requested_language: str  # "de" or "en" chosen by the user; empty: the question's language decides
    hitl_active: bool
    hitl_iteration: int
    hitl_understanding: str  # the current summary of what the question means, shown with each round
    iteration_queries: Annotated[list[list[str]], operator.add]
    query_retrieval: Annotated[list[dict], operator.add]  # VectorResult dicts, deduplicated across iterations
    retrieval_history: Annotated[list[RetrievalRound], operator.add]
    retrieval_dedup_ratios: Annotated[list[float], operator.add]
    coverage_score: float
    knowledge_gaps: list[str]
    key_concepts: list[str]
    entities: list[str]
    scope: str
    follow_up_questions: list[str]
    hitl_conversation_history: Annotated[list[dict], operator.add]  # {"role": "assistant"|"user", "content": str}
    hitl_termination_reason: str  # user_end | unattended | max_iterations | convergence
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
    findings: Annotated[list[TierEntry], operator.add]
    task_summaries: Annotated[list[dict], operator.add]
    reference_edges: Annotated[list[dict], operator.add]  # ReferenceEdge dicts with task_id
    visited_refs: list[str]
    seen_chunks: list[str]  # doc:page:text[:100] keys
    task_stats: Annotated[list[TaskStats], operator.add]
    todo_changes: Annotated[list[TodoChange], operator.add]

    # Phase 3.5
    relevance_validation: dict

    # Phase 4
    synthesis_context: SynthesisContext
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
    error: str | dict  # a notice (records.notice) the front ends word; words in a run saved before
    failed_node: str
    warnings: Annotated[list[str | dict], operator.add]  # notices, or a reasoner's own words
    messages: Annotated[list[str | dict], operator.add]  # notices (progress for the reader)


class ResearchInput(TypedDict, total=False):
    """What a run starts from (`ResearchSession.start`): the question and the facts a resumed run keeps."""

    query: str
    collection: str | None
    thread_id: str
    kb_dir: str
    db_path: str
    run_options: dict
    requested_language: str
    warnings: Annotated[list[str | dict], operator.add]  # notices, or a reasoner's own words
    messages: Annotated[list[str | dict], operator.add]  # notices (progress for the reader)


class ResearchOutput(TypedDict, total=False):
    """What a finished run gives its caller: the report, its check and the evidence it stands on (the report
    and the workbench read these; the checkpoint keeps the whole state)."""

    final_report: dict
    synthesis: dict
    quality_assessment: dict
    synthesis_context: SynthesisContext
    findings: Annotated[list[TierEntry], operator.add]
    task_summaries: Annotated[list[dict], operator.add]
    reference_edges: Annotated[list[dict], operator.add]
    detected_language: str
    error: str | dict  # a notice (records.notice) the front ends word; words in a run saved before
    failed_node: str
    warnings: Annotated[list[str | dict], operator.add]  # notices, or a reasoner's own words
