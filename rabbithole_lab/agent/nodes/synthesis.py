"""Phase 4: query-anchored synthesis from the graded context, quality check, one remediation."""

from __future__ import annotations

from rabbithole_lab.agent.nodes.common import anchor, language, tier_chunks
from rabbithole_lab.agent.services import Services
from rabbithole_lab.agent.state import AgentState
from rabbithole_lab.reasoning.base import SynthesisInput
from rabbithole_lab.records import TIER_WEIGHTS, PreservedQuote, QualityAssessment

MAX_CHUNKS = {"primary": 12, "secondary": 10, "tertiary": 6}
MAX_QUOTES = 15


def context_for_synthesis(state: AgentState) -> dict[str, list]:
    """The best chunks of each tier, ranked by weighted relevance."""
    out = {}
    for tier, limit in MAX_CHUNKS.items():
        chunks = tier_chunks(state, tier)
        chunks.sort(key=lambda c: -(c.relevance_score * TIER_WEIGHTS[tier]))
        out[tier] = chunks[:limit]
    return out


def make_synthesis_nodes(services: Services) -> dict:
    settings = services.settings
    reasoner = services.reasoner

    def synthesize(state: AgentState) -> dict:
        context = context_for_synthesis(state)
        request = SynthesisInput(
            anchor=anchor(state), language=language(state), hitl_summary=state.get("hitl_context_summary", ""),
            primary=context["primary"], secondary=context["secondary"], tertiary=context["tertiary"],
            quotes=[PreservedQuote.model_validate(q) for q in state.get("preserved_quotes", [])][:MAX_QUOTES],
            task_summaries=state.get("task_summaries", []),
            remediation=state.get("remediation_instructions", "") if state.get("reflection_count", 0) else "")
        output = reasoner.synthesize(request)
        return {"synthesis": output.model_dump(), "phase": "quality"}

    def quality_check(state: AgentState) -> dict:
        if not settings.quality.enabled:
            return {"quality_assessment": {}}
        context = context_for_synthesis(state)
        sources = context["primary"] + context["secondary"] + context["tertiary"]
        assessment = reasoner.assess_quality(anchor(state), state["synthesis"]["answer"], sources, language(state))
        record = assessment.model_dump() | {"passes": assessment.passes(settings.quality.threshold),
                                            "reflection": state.get("reflection_count", 0)}
        return {"quality_assessment": record, "quality_history": [*state.get("quality_history", []), record]}

    def remediate(state: AgentState) -> dict:
        assessment = QualityAssessment.model_validate(
            {k: v for k, v in state["quality_assessment"].items() if k not in ("passes", "reflection", "overall_score")})
        decision = reasoner.decide_remediation(anchor(state), assessment, settings.quality.threshold, language(state))
        return {"reflection_count": state.get("reflection_count", 0) + 1,
                "remediation_instructions": decision.instructions if decision.retry else "",
                "messages": [f"remediation: retry={decision.retry} {decision.instructions}"]}

    return {"synthesize": synthesize, "quality_check": quality_check, "remediate": remediate}
