"""Phase 3.5: the drift filter. Every tier entry is scored against the question; the ones below the
threshold are marked dropped (kept in `findings`, left out of the tiers)."""

from __future__ import annotations

from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from rabbithole_lab.agent.nodes.node_common import anchor, concurrent_map, language
from rabbithole_lab.agent.services import Services
from rabbithole_lab.agent.state import AgentState
from rabbithole_lab.evidence.findings import TIERS, as_chunk, tier_entries
from rabbithole_lab.rabbithole.relevance import Scored, filter_by_relevance
from rabbithole_lab.records import notice
from rabbithole_lab.steps.task import QUESTION_TASK_ID, reading_anchor

DRIFT_WARNING_RATIO = 0.3


def from_the_question(entry: dict) -> bool:
    """A passage the question's own search admitted (task 0, not reached by following).

    That ranking fused the lexical, dense and title evidence for the whole question, and the assembler
    admitted it within the task's budget: it is the context the retrieval benchmark measures. A reasoner
    that judges relevance through the same embedder and the question's words (the extractive one) has no
    evidence to overrule it with; its drift filter filters what the other tasks' searches and the followed
    references added. A model's judgement reads the passage itself and filters everything."""
    return entry.get("task_id") == QUESTION_TASK_ID and not entry.get("depth", 0)


def _judge_tier(entries: list[dict], runtime: Runtime[Services], anchors: dict, question: str, lang: str,
                min_results: int) -> tuple[dict[int, dict], list[Scored]]:
    """Scores one tier's entries, each against the anchor of the task that found it (`anchors` by task id,
    `question` for the rest); returns the verdict per entry (by position in `entries`) and the dropped."""
    settings, reasoner = runtime.context.settings, runtime.context.reasoner
    scores = concurrent_map(
        lambda entry: reasoner.score_relevance(anchors.get(entry.get("task_id"), question), as_chunk(entry), lang),
        entries, settings.llm.concurrency)
    scored = [Scored(index, score.score) for index, score in enumerate(scores)]
    protects = not reasoner.judges_beyond_search
    protected = [s for s in scored if protects and from_the_question(entries[s.item])]
    judged = [s for s in scored if not (protects and from_the_question(entries[s.item]))]
    keep, drop = filter_by_relevance(judged, settings.references.relevance_threshold,
                                     max(0, min_results - len(protected)))
    dropped = {s.item for s in drop}
    verdicts = {index: {"validation_score": score.score, "validation_reason": score.reason,
                        "dropped": index in dropped} for index, score in enumerate(scores)}
    return verdicts, drop


def validate_relevance(state: AgentState, runtime: Runtime[Services]) -> dict:
    settings = runtime.context.settings
    lang, question = language(state), anchor(state)
    anchors = {item["id"]: reading_anchor(item["task"], item.get("origin", "planned"), question)
               for item in (state.get("todo_list") or {}).get("items", [])}
    threshold = settings.references.relevance_threshold
    verdict_of: dict[int, dict] = {}  # by id() of the entry in state["findings"]
    removed: list[dict] = []
    total = 0
    taken: set[str] = set()
    for tier in TIERS:
        entries = []
        for entry in tier_entries(state, tier):
            if entry["chunk_id"] in taken:
                verdict_of[id(entry)] = {"dropped": True}  # a HITL chunk a task also found: the better tier only
                continue
            taken.add(entry["chunk_id"])
            entries.append(entry)
        verdicts, drop = _judge_tier(entries, runtime, anchors, question, lang, settings.references.min_results)
        total += len(entries)
        verdict_of |= {id(entries[index]): verdict for index, verdict in verdicts.items()}
        removed += [{"tier": tier, "chunk_id": entries[s.item]["chunk_id"], "doc": entries[s.item]["document"],
                     "section": entries[s.item]["section"], "page": entries[s.item]["page"], "score": s.score,
                     "reason": verdicts[s.item]["validation_reason"]} for s in drop]
    drift = round(len(removed) / total, 3) if total else 0.0
    warnings = [notice("drift", share=drift)] if drift > DRIFT_WARNING_RATIO else []
    findings = [entry | verdict_of.get(id(entry), {}) for entry in state.get("findings", [])]
    return {
        "findings": Overwrite(findings),
        "relevance_validation": {"total": total, "kept": total - len(removed), "removed": removed,
                                 "drift_ratio": drift, "threshold": threshold},
        "warnings": warnings,
        "phase": "synthesis",
    }
