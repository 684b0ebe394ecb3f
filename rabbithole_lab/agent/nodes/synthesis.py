"""Phase 4: query-anchored synthesis from the graded context, quality check, one remediation."""

from __future__ import annotations

from langgraph.runtime import Runtime

from rabbithole_lab.agent.nodes.node_common import anchor, asked_parts, exclusions, language, question
from rabbithole_lab.agent.services import Services
from rabbithole_lab.agent.state import AgentState
from rabbithole_lab.evidence.findings import TIERS, finding_tasks, preserved_quotes
from rabbithole_lab.reasoning.base import AnswerTask, AskedFor, SynthesisInput
from rabbithole_lab.reasoning.checks.answer_notes import nothing_found, with_unresolved_notes
from rabbithole_lab.reasoning.checks.claim_check import checked_answer
from rabbithole_lab.reasoning.checks.quality import lowered_for_model_text
from rabbithole_lab.records import notice
from rabbithole_lab.schemas import QualityAssessment
from rabbithole_lab.steps.synthesis_context import (
    build_synthesis_context,
    context_sources,
    reference_chains,
    stored_synthesis_context,
)

MAX_QUOTES = 15


def answer_tasks(state: AgentState) -> list[AnswerTask]:
    """The approved tasks (the researcher's removals are gone from the list), each with its searches and
    the passages it found (also one found again or dropped as found twice: the answer reads only the
    context), for the answer's one section per task."""
    queries = {stats["task_id"]: stats.get("queries", []) for stats in state.get("task_stats") or []}
    tasks_of = finding_tasks(state)
    return [AnswerTask(item["id"], item["task"], list(queries.get(item["id"], [])),
                       {chunk_id for chunk_id, ids in tasks_of.items() if item["id"] in ids},
                       own=item.get("origin") == "user", focus=item.get("focus", ""))
            for item in (state.get("todo_list") or {}).get("items", [])]


def synthesis_request(state: AgentState, services: Services) -> SynthesisInput:
    """What the writer reads: the graded context, the followed chains, the question and what the researcher
    added, excluded and approved, and the answer's budgets (also what the ranker's fit reads, `bench/ranker_fit.py`)."""
    context = build_synthesis_context(state, services)
    return SynthesisInput(
        anchor=anchor(state), language=language(state), hitl_summary=state.get("hitl_context_summary", ""),
        primary=context["primary"], secondary=context["secondary"], tertiary=context["tertiary"],
        quotes=preserved_quotes(state)[:MAX_QUOTES],
        task_summaries=state.get("task_summaries", []), chains=reference_chains(
            state, context, lambda book: services.kb.registry.resolve_document_name(book)[0]),
        remediation=state.get("remediation_instructions", "") if state.get("reflection_count", 0) else "",
        question=question(state), exclusions=exclusions(state), tasks=answer_tasks(state),
        parts=asked_parts(state), lead_max_chars=services.settings.answer.lead_max_chars,
        answer_max_chars=services.settings.answer.answer_max_chars,
        document_names=services.kb.registry.display_names(
            chunk.document for chunks in context.values() for chunk in chunks))


def synthesize(state: AgentState, runtime: Runtime[Services]) -> dict:
    request = synthesis_request(state, runtime.context)
    if request.all_chunks():
        output = runtime.context.reasoner.synthesize(request)
    else:  # nothing was found: said so, with its reason, and no model is asked to write from nothing
        output = nothing_found(request)
    # a claim whose citation or quotation is not in what was retrieved is removed and named
    checked = checked_answer(output.answer, request.all_chunks())
    if checked.invented:
        output = output.model_copy(update={"answer": checked.answer, "invented_citations": checked.invented})
    # a quoted passage's reference to a section its law does not have is said where the quote stands
    marked = with_unresolved_notes(output.answer, state.get("reference_edges", []), request.language)
    if marked != output.answer:
        output = output.model_copy(update={"answer": marked})
    stored = {tier: [chunk.model_dump() for chunk in getattr(request, tier)] for tier in TIERS}
    return {"synthesis": output.model_dump(), "synthesis_context": stored, "phase": "quality"}


def quality_check(state: AgentState, runtime: Runtime[Services]) -> dict:
    settings = runtime.context.settings
    if not settings.quality.enabled:
        return {"quality_assessment": {}}
    sources = context_sources(stored_synthesis_context(state))
    asked = AskedFor(parts=asked_parts(state), question=question(state), exclusions=exclusions(state),
                     tasks=[task.task for task in answer_tasks(state)],
                     verdict=state["synthesis"].get("verdict") or {})
    assessment = runtime.context.reasoner.assess_quality(anchor(state), state["synthesis"]["answer"], sources,
                                                         language(state), asked=asked)
    assessment = lowered_for_model_text(assessment, state["synthesis"]["answer"], sources, language(state))
    record = assessment.model_dump() | {"passes": assessment.passes(settings.quality.threshold),
                                        "reflection": state.get("reflection_count", 0)}
    return {"quality_assessment": record, "quality_history": [record]}


def remediate(state: AgentState, runtime: Runtime[Services]) -> dict:
    settings = runtime.context.settings
    assessment = QualityAssessment.model_validate(
        {k: v for k, v in state["quality_assessment"].items() if k not in ("passes", "reflection", "overall_score")})
    decision = runtime.context.reasoner.decide_remediation(anchor(state), assessment, settings.quality.threshold,
                                                           language(state))
    return {"reflection_count": state.get("reflection_count", 0) + 1,
            "remediation_instructions": decision.instructions if decision.retry else "",
            "messages": [notice("remediation_line", instructions=decision.instructions) if decision.retry
                         else notice("remediation_none")]}
