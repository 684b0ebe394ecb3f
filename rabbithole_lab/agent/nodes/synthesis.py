"""Phase 4: query-anchored synthesis from the graded context, quality check, one remediation."""

from __future__ import annotations

from rabbithole_lab.agent.nodes.common import anchor, language, tier_chunks
from rabbithole_lab.agent.services import Services
from rabbithole_lab.agent.state import AgentState
from rabbithole_lab.kb.search import KnowledgeBase
from rabbithole_lab.rabbithole.assemble import assemble
from rabbithole_lab.reasoning.base import SynthesisInput
from rabbithole_lab.records import TIER_WEIGHTS, ChunkWithInfo, PreservedQuote, QualityAssessment

MAX_QUOTES = 15
TIERS = ("primary", "secondary", "tertiary")


def context_for_synthesis(state: AgentState, budget_chars: int) -> dict[str, list[ChunkWithInfo]]:
    """The graded context that fits the reasoner's context size: chunks of every tier admitted by the
    same assembler as the research tasks, by tier-weighted relevance per character, then per tier."""
    graded = [(tier, chunk) for tier in TIERS for chunk in tier_chunks(state, tier)]
    admitted = assemble(graded, budget_chars, value=lambda item: item[1].relevance_score * TIER_WEIGHTS[item[0]],
                        size=lambda item: len(item[1].chunk_text), key=lambda item: item[1].chunk_id, strict=True)
    return {tier: [chunk for chunk_tier, chunk in admitted if chunk_tier == tier] for tier in TIERS}


def with_neighbours(context: dict[str, list[ChunkWithInfo]], kb: KnowledgeBase,
                    budget_chars: int) -> dict[str, list[ChunkWithInfo]]:
    """The context with the chunks before and after each of its passages in the same section, while the
    budget allows, most valuable passage first. A section is indexed as overlapping chunks, so a sentence
    that runs over a chunk boundary is whole only with both (`reasoning/passages.py` joins them); the
    neighbour is read as the passage it continues (tier, relevance, depth), with no findings of its own."""
    used = sum(len(chunk.chunk_text) for chunks in context.values() for chunk in chunks)
    held = {chunk.chunk_id for chunks in context.values() for chunk in chunks}
    ranked = sorted(((tier, chunk) for tier in TIERS for chunk in context.get(tier, []) if chunk.section),
                    key=lambda item: -item[1].relevance_score * TIER_WEIGHTS[item[0]])
    sections: dict[tuple[str, str, str], list] = {}
    out = {tier: list(context.get(tier, [])) for tier in TIERS}
    for tier, chunk in ranked:
        key = (chunk.collection, chunk.document, chunk.section)
        if key not in sections:
            sections[key] = kb.section_lookup(chunk.document, chunk.section, chunk.collection or None)
        siblings = sections[key]
        at = next((i for i, result in enumerate(siblings) if result.chunk_id == chunk.chunk_id), None)
        if at is None:
            continue
        for result in (siblings[i] for i in (at - 1, at + 1) if 0 <= i < len(siblings)):
            if result.chunk_id in held or used + len(result.text) > budget_chars:
                continue
            held.add(result.chunk_id)
            used += len(result.text)
            out[tier].append(ChunkWithInfo.from_result(result, relevance_score=chunk.relevance_score,
                                                       depth=chunk.depth, tier=chunk.tier))
    return out


def synthesis_context(state: AgentState, services: Services) -> dict[str, list[ChunkWithInfo]]:
    """What the reasoner writes from and is checked against: the graded context with its passages' neighbours."""
    budget_chars = services.reasoner.context_chars
    return with_neighbours(context_for_synthesis(state, budget_chars), services.kb, budget_chars)


def reference_chains(state: AgentState, context: dict[str, list[ChunkWithInfo]]) -> list[dict]:
    """The followed references between passages of the synthesis context: citing section, the reference,
    the cited section and the gate's reason (once each)."""
    ids = {chunk.chunk_id for chunks in context.values() for chunk in chunks}
    chains: dict[tuple[str, str, str], dict] = {}
    for edge in state.get("reference_edges", []):
        if edge.get("decision") != "followed" or edge.get("from_chunk") not in ids \
                or not ids & set(edge.get("to_chunks", [])):
            continue
        source = f"{edge.get('from_section', '')} {edge.get('from_doc', '')}".strip()
        target = ", ".join(f"{s} {d}".strip() for d, s in zip(edge.get("to_docs", []), edge.get("to_sections", []),
                                                              strict=False))
        chain = chains.setdefault((source, edge["target"], target),
                                  {"source": source, "reference": edge["target"], "target": target,
                                   "reason": edge.get("reason", ""), "citing": [edge.get("from_doc", ""),
                                                                                 edge.get("from_section", "")],
                                   "cited": []})
        chain["cited"] += [[doc, section] for doc, section in zip(edge.get("to_docs", []), edge.get("to_sections", []),
                                                                  strict=False) if [doc, section] not in chain["cited"]]
    return list(chains.values())


def make_synthesis_nodes(services: Services) -> dict:
    settings = services.settings
    reasoner = services.reasoner

    def synthesize(state: AgentState) -> dict:
        context = synthesis_context(state, services)
        request = SynthesisInput(
            anchor=anchor(state), language=language(state), hitl_summary=state.get("hitl_context_summary", ""),
            primary=context["primary"], secondary=context["secondary"], tertiary=context["tertiary"],
            quotes=[PreservedQuote.model_validate(q) for q in state.get("preserved_quotes", [])][:MAX_QUOTES],
            task_summaries=state.get("task_summaries", []), chains=reference_chains(state, context),
            remediation=state.get("remediation_instructions", "") if state.get("reflection_count", 0) else "")
        output = reasoner.synthesize(request)
        return {"synthesis": output.model_dump(), "phase": "quality"}

    def quality_check(state: AgentState) -> dict:
        if not settings.quality.enabled:
            return {"quality_assessment": {}}
        context = synthesis_context(state, services)
        sources = context["primary"] + context["secondary"] + context["tertiary"]
        assessment = reasoner.assess_quality(anchor(state), state["synthesis"]["answer"], sources, language(state))
        record = assessment.model_dump() | {"passes": assessment.passes(settings.quality.threshold),
                                            "reflection": state.get("reflection_count", 0)}
        return {"quality_assessment": record, "quality_history": [record]}

    def remediate(state: AgentState) -> dict:
        assessment = QualityAssessment.model_validate(
            {k: v for k, v in state["quality_assessment"].items() if k not in ("passes", "reflection", "overall_score")})
        decision = reasoner.decide_remediation(anchor(state), assessment, settings.quality.threshold, language(state))
        return {"reflection_count": state.get("reflection_count", 0) + 1,
                "remediation_instructions": decision.instructions if decision.retry else "",
                "messages": [f"remediation: retry={decision.retry} {decision.instructions}"]}

    return {"synthesize": synthesize, "quality_check": quality_check, "remediate": remediate}
