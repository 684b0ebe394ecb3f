"""Phase 3 (one task per visit: search, rabbithole, extraction, summary) and 3.5 (drift filter)."""

from __future__ import annotations

import logging
import time

from rabbithole_lab.agent.nodes.common import (
    anchor,
    chunk_key,
    concurrent_map,
    language,
    localized,
)
from rabbithole_lab.agent.services import Services
from rabbithole_lab.agent.state import AgentState
from rabbithole_lab.rabbithole.relevance import Scored, filter_by_relevance
from rabbithole_lab.records import (
    ChunkWithInfo,
    ResearchContext,
    SearchQueryResult,
    ToDoList,
    VectorResult,
)

logger = logging.getLogger(__name__)

DRIFT_WARNING_RATIO = 0.3
TIERS = ("primary", "secondary", "tertiary")


def make_research_nodes(services: Services) -> dict:
    settings = services.settings
    reasoner = services.reasoner
    kb = services.kb

    def _search(state: AgentState, queries: list[str], k: int, seen: set[str],
                pool: list[VectorResult] | None = None, pool_size: int = 0) -> list[VectorResult]:
        """The best k new hits per query; with `pool`, the next `pool_size` ones (below the cut) are
        collected there for backlinks, without being marked as seen."""
        found: list[VectorResult] = []
        below: dict[str, VectorResult] = {}
        extra = pool_size if pool is not None else 0
        for query in queries:
            if query == anchor(state):
                hits = kb.retrieve(query, k=k + extra, collection=state.get("collection"))
            else:
                hits = kb.search(query, k=k + extra, collection=state.get("collection"))
            taken = 0
            for hit in hits:
                key = chunk_key(hit)
                if key in seen:
                    continue
                if taken < k:
                    seen.add(key)
                    found.append(hit)
                    taken += 1
                elif pool is not None:
                    below.setdefault(key, hit)
        if pool is not None:
            chosen = {chunk_key(hit) for hit in found}
            pool[:] = sorted((hit for key, hit in below.items() if key not in chosen), key=lambda hit: -hit.score)
        return sorted(found, key=lambda hit: -hit.score)

    def execute_task(state: AgentState) -> dict:
        todo = ToDoList.model_validate(state["todo_list"])
        task = todo.get_next_task()
        if task is None:
            return {"current_task_id": None}
        started = time.perf_counter()
        calls_before, llm_before = reasoner.calls, getattr(reasoner, "llm_calls", 0)
        lang = language(state)
        question = anchor(state)
        concepts = state.get("key_concepts", [])
        position = [item.id for item in todo.items].index(task.id) + 1
        progress = localized(state, f"Aufgabe {position}/{len(todo.items)}: {task.task}",
                             f"Task {position}/{len(todo.items)}: {task.task}")
        logger.debug(progress)

        # 2 targeted queries + 1 base query (task + key concepts); task 0 searches the question itself
        targeted = reasoner.task_search_queries(task.task, question, concepts, lang)
        base = task.task if task.id == 0 else f"{task.task} {' '.join(concepts)}".strip()
        queries = list(dict.fromkeys([base, *targeted]))[: settings.search.queries_per_task]
        seen = set(state.get("seen_chunks", []))
        k = settings.search.chunks_per_query
        follower = services.follower()
        below_cut: list[VectorResult] = []
        seeds = _search(state, queries, k, seen, below_cut, follower.limits.backlink_pool)
        iterations = 1
        while len(seeds) < settings.references.min_results and iterations < settings.search.max_iterations_per_task:
            iterations += 1  # too little new material: widen the search
            widened = [" ".join(concepts) or question, f"{task.task} {question}"]
            seeds += _search(state, widened, k * iterations, seen)

        trail = follower.run(seeds, question, lang, visited=set(state.get("visited_refs", [])), pool=below_cut)

        def extract(item) -> ChunkWithInfo:
            result = kb.whole_section(item.result, settings.search.section_context_max_chars)
            info = reasoner.extract_info(result, question, task.task, lang)
            return ChunkWithInfo(chunk_text=result.text, extracted_info=info.extracted_info, document=result.doc,
                                 page=result.page_start, page_end=result.page_end, chunk_id=result.chunk_id,
                                 section=result.section, collection=result.collection,
                                 relevance_score=round(item.score, 4), depth=item.depth, tier=item.tier,
                                 references=item.references, preserved_quotes=info.preserved_quotes,
                                 cited_by=item.cited_by, cites=item.cites)

        findings = concurrent_map(extract, trail.items, settings.llm.concurrency)
        for item, finding in zip(trail.items, findings, strict=True):
            seen.add(chunk_key(item.result))
            if item.depth and not finding.extracted_info:
                # a followed passage is kept even when no sentence matched: the citation made it relevant
                finding.extracted_info = " ".join(item.result.text.split())[:600]
        summary = reasoner.summarize_task(task.task, question, findings, lang)

        by_tier: dict[str, list[dict]] = {tier: [] for tier in TIERS}
        for finding in findings:
            if finding.extracted_info:
                by_tier[finding.tier].append(finding.model_dump() | {"task_id": task.id})
        quotes = [q.model_dump() for f in findings for q in f.preserved_quotes]

        context = ResearchContext.model_validate(state.get("research_context") or {})
        context.search_queries.append(SearchQueryResult(
            query=task.task, task_id=task.id, chunks=findings, summary=summary.summary,
            summary_references=sorted({f.document for f in findings}), quality_score=summary.relevance_score))
        context.metadata.total_iterations += iterations
        context.metadata.documents_referenced = sorted({*context.metadata.documents_referenced,
                                                        *(f.document for f in findings)})
        for key in trail.visited:
            context.mark_ref_visited(key)
        context.metadata.external_sources_used = False

        task.completed = True
        next_task = todo.get_next_task()
        edges = [edge.model_dump() | {"task_id": task.id} for edge in trail.edges]
        stats = {
            "task_id": task.id, "task": task.task, "queries": queries, "iterations": iterations,
            "seconds": round(time.perf_counter() - started, 3),
            "reasoner_calls": reasoner.calls - calls_before,
            "llm_calls": getattr(reasoner, "llm_calls", 0) - llm_before,
            "chunks": len(findings), "seeds": len(seeds),
            "followed": sum(1 for e in trail.edges if e.decision == "followed"),
            "skipped": sum(1 for e in trail.edges if e.decision == "skipped"),
            "tokens_used": trail.tokens_used, "stop_reasons": trail.stop_reasons,
        }
        return {
            "todo_list": todo.model_dump(),
            "current_task_id": next_task.id if next_task else None,
            "research_context": context.model_dump(),
            "primary_context": [*state.get("primary_context", []), *by_tier["primary"]],
            "secondary_context": [*state.get("secondary_context", []), *by_tier["secondary"]],
            "tertiary_context": [*state.get("tertiary_context", []), *by_tier["tertiary"]],
            "task_summaries": [*state.get("task_summaries", []),
                               summary.model_dump() | {"task_id": task.id, "task": task.task}],
            "preserved_quotes": [*state.get("preserved_quotes", []), *quotes],
            "reference_edges": [*state.get("reference_edges", []), *edges],
            "visited_refs": sorted(set(state.get("visited_refs", [])) | set(trail.visited)),
            "seen_chunks": sorted(seen),
            "task_stats": [*state.get("task_stats", []), stats],
            "messages": [progress],
        }

    def validate_relevance(state: AgentState) -> dict:
        lang = language(state)
        question = anchor(state)
        threshold = settings.references.relevance_threshold
        kept: dict[str, list[dict]] = {}
        removed: list[dict] = []
        total = 0
        taken: set[str] = set()
        for tier in TIERS:
            entries = []
            for entry in state.get(f"{tier}_context", []):
                if entry["chunk_id"] in taken:
                    continue  # a HITL chunk that a task also found stays in the better tier only
                taken.add(entry["chunk_id"])
                entries.append(entry)
            chunks = [ChunkWithInfo.model_validate({k: v for k, v in e.items() if k != "task_id"}) for e in entries]
            scores = concurrent_map(lambda c: reasoner.score_relevance(question, c, lang), chunks,
                                    settings.llm.concurrency)
            total += len(entries)
            scored = [Scored(entry | {"validation_score": s.score, "validation_reason": s.reason}, s.score)
                      for entry, s in zip(entries, scores, strict=True)]
            keep, drop = filter_by_relevance(scored, threshold, settings.references.min_results)
            kept[tier] = [s.item for s in keep]  # type: ignore[misc]
            removed += [{"tier": tier, "doc": s.item["document"], "section": s.item["section"],  # type: ignore[index]
                         "page": s.item["page"], "score": s.score, "reason": s.item["validation_reason"]}  # type: ignore[index]
                        for s in drop]
        drift = round(len(removed) / total, 3) if total else 0.0
        warnings = []
        if drift > DRIFT_WARNING_RATIO:
            warnings.append(localized(
                state, f"{drift:.0%} des gesammelten Kontexts passt nicht zur Frage und wurde vor der Synthese entfernt",
                f"{drift:.0%} of the gathered context does not fit the question and was removed before synthesis"))
        return {
            "primary_context": kept["primary"],
            "secondary_context": kept["secondary"],
            "tertiary_context": kept["tertiary"],
            "relevance_validation": {"total": total, "kept": total - len(removed), "removed": removed,
                                     "drift_ratio": drift, "threshold": threshold},
            "warnings": warnings,
            "phase": "synthesis",
        }

    return {"execute_task": execute_task, "validate_relevance": validate_relevance}

