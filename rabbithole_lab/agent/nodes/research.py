"""Phase 3 (one task per visit: search, rabbithole, extraction, summary) and 3.5 (drift filter)."""

from __future__ import annotations

import logging
import time

from langgraph.types import Overwrite

from rabbithole_lab.agent.nodes.common import (
    anchor,
    chunk_key,
    concurrent_map,
    language,
    step_reporter,
)
from rabbithole_lab.agent.services import Services
from rabbithole_lab.agent.state import AgentState
from rabbithole_lab.messages import run_text
from rabbithole_lab.rabbithole.engine import admit
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
QUESTION_TASK_ID = 0  # the to-do item that is the question itself (planning adds it first)


def from_the_question(entry: dict) -> bool:
    """A passage the question's own search admitted (task 0, not reached by following).

    That ranking fused the lexical, dense and title evidence for the whole question, and the assembler
    admitted it within the task's budget: it is the context the retrieval benchmark measures. A reasoner
    that judges relevance through the same embedder and the question's words (the extractive one) has no
    evidence to overrule it with; its drift filter filters what the other tasks' searches and the followed
    references added. A model's judgement reads the passage itself and filters everything."""
    return entry.get("task_id") == QUESTION_TASK_ID and not entry.get("depth", 0)


def make_research_nodes(services: Services) -> dict:
    settings = services.settings
    reasoner = services.reasoner
    kb = services.kb

    def _search(state: AgentState, queries: list[str], k: int, seen: set[str]) -> list[VectorResult]:
        """The candidate pool's first stage: each query's hits not seen in earlier tasks, best first.
        The question itself gets the whole first stage (`retrieve`), each other query `k` hits."""
        found: dict[str, VectorResult] = {}
        collection = state.get("collection")
        if anchor(state) in queries:
            # a question in another language than the documents: the model writes queries in theirs
            corpus_language = kb.corpus_language(collection)
            if language(state) != corpus_language:
                queries = [*queries, *reasoner.corpus_language_queries(anchor(state), corpus_language)]
        for query in queries:
            if query == anchor(state):
                hits = kb.retrieve(query, k=settings.search.first_stage_pool, collection=collection)
            else:
                hits = kb.search(query, k=k, collection=collection)
            for hit in hits:
                key = chunk_key(hit)
                if key not in seen and (key not in found or found[key].score < hit.score):
                    found[key] = hit
        return sorted(found.values(), key=lambda hit: -hit.score)

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
        task_number, task_total = position, len(todo.items)
        said = run_text(lang)
        progress = said["task_progress"].format(n=position, total=len(todo.items), task=task.task)
        logger.debug(progress)
        searching = step_reporter("search", task_number=task_number, task_total=task_total)

        # 2 targeted queries + 1 base query (task + key concepts); task 0 searches the question itself
        targeted = reasoner.task_search_queries(task.task, question, concepts, lang)
        base = task.task if task.id == 0 else f"{task.task} {' '.join(concepts)}".strip()
        queries = list(dict.fromkeys([base, *targeted]))[: settings.search.queries_per_task]
        seen = set(state.get("seen_chunks", []))
        k = settings.search.chunks_per_query
        visited = set(state.get("visited_refs", []))

        def extract(item) -> ChunkWithInfo:
            result = item.result
            info = reasoner.extract_info(result, question, task.task, lang)
            finding = ChunkWithInfo.from_result(
                result, extracted_info=info.extracted_info, relevance_score=round(item.score, 4), depth=item.depth,
                tier=item.tier, references=item.references, preserved_quotes=info.preserved_quotes,
                cited_by=item.cited_by, cites=item.cites)
            if (item.depth or task.id == QUESTION_TASK_ID) and not finding.extracted_info:
                # kept even when no sentence matched: a citation, or the question's own search, made it relevant
                finding.extracted_info = " ".join(result.text.split())[:600]
            return finding

        # Up to MAX_ITERATIONS_PER_TASK rounds (AC-3.6): each ends with an assessment of the task, and the next
        # round searches for what the assessment names as missing, with its own share of the task's context.
        findings: list[ChunkWithInfo] = []
        edges_found: list = []
        stop_reasons: list[str] = []
        rounds: list[dict] = []
        hits_total = tokens = 0
        round_queries = queries
        for iteration in range(1, settings.search.max_iterations_per_task + 1):
            searching(iteration, settings.search.max_iterations_per_task)
            hits = _search(state, round_queries, k, seen)
            hits_total += len(hits)
            if not hits:
                rounds.append({"iteration": iteration, "queries": round_queries, "new_chunks": 0, "answered": False,
                               "missing": [], "reason": said["nothing_new"]})
                break
            trail = services.follower().run(hits, question, lang, visited=visited,
                                            progress=step_reporter("follow", task_number=task_number,
                                                                   task_total=task_total))
            if iteration > 1:
                budget = settings.search.task_context_chars // 2
            elif task.id == QUESTION_TASK_ID:
                # the question's own search is what the retrieval benchmark measures: it gets the budget
                # it is measured at, and the other tasks' searches (on task texts) add to it
                budget = settings.search.question_context_chars
            else:
                budget = settings.search.task_context_chars
            items = admit(trail.candidates, budget, strict=True)
            new_findings = concurrent_map(extract, items, settings.llm.concurrency)
            for item in items:
                seen.add(chunk_key(item.result))
            findings += new_findings
            edges_found += trail.edges
            visited |= set(trail.visited)
            tokens += trail.tokens_used
            stop_reasons += [reason for reason in trail.stop_reasons if reason not in stop_reasons]
            assessment = reasoner.assess_task(task.task, question, findings, lang)
            rounds.append({"iteration": iteration, "queries": round_queries, "new_chunks": len(new_findings),
                           "answered": assessment.answered, "missing": assessment.missing, "reason": assessment.reason})
            if assessment.answered or not assessment.missing:
                break
            # the next round looks for what is missing, in the words of the task and the question
            round_queries = [f"{missing} {' '.join(concepts[:3])}".strip() for missing in assessment.missing]
        iterations = len(rounds)
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
        for key in visited - set(state.get("visited_refs", [])):
            context.mark_ref_visited(key)
        context.metadata.external_sources_used = False

        task.completed = True
        next_task = todo.get_next_task()
        edges = [edge.model_dump() | {"task_id": task.id} for edge in edges_found]
        stats = {
            "task_id": task.id, "task": task.task, "queries": queries, "iterations": iterations, "rounds": rounds,
            "seconds": round(time.perf_counter() - started, 3),
            "reasoner_calls": reasoner.calls - calls_before,
            "llm_calls": getattr(reasoner, "llm_calls", 0) - llm_before,
            "chunks": len(findings), "seeds": hits_total,
            "followed": sum(1 for e in edges_found if e.decision == "followed"),
            "skipped": sum(1 for e in edges_found if e.decision == "skipped"),
            "tokens_used": tokens, "stop_reasons": stop_reasons,
        }
        return {
            "todo_list": todo.model_dump(),
            "current_task_id": next_task.id if next_task else None,
            "research_context": context.model_dump(),
            "primary_context": by_tier["primary"],
            "secondary_context": by_tier["secondary"],
            "tertiary_context": by_tier["tertiary"],
            "task_summaries": [summary.model_dump() | {"task_id": task.id, "task": task.task}],
            "preserved_quotes": quotes,
            "reference_edges": edges,
            "visited_refs": sorted(visited),
            "seen_chunks": sorted(seen),
            "task_stats": [stats],
            "messages": [progress, *[said["round_line"].format(n=r["iteration"], reason=r["reason"]) for r in rounds]],
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
            protects = not reasoner.judges_beyond_search
            protected = [s for s in scored if protects and from_the_question(s.item)]
            judged = [s for s in scored if not (protects and from_the_question(s.item))]
            keep, drop = filter_by_relevance(judged, threshold,
                                             max(0, settings.references.min_results - len(protected)))
            kept_ids = {id(s) for s in keep + protected}
            kept[tier] = [s.item for s in scored if id(s) in kept_ids]  # type: ignore[misc]
            removed += [{"tier": tier, "chunk_id": s.item["chunk_id"], "doc": s.item["document"],  # type: ignore[index]
                         "section": s.item["section"],  # type: ignore[index]
                         "page": s.item["page"], "score": s.score, "reason": s.item["validation_reason"]}  # type: ignore[index]
                        for s in drop]
        drift = round(len(removed) / total, 3) if total else 0.0
        warnings = []
        if drift > DRIFT_WARNING_RATIO:
            warnings.append(run_text(language(state))["drift"].format(share=drift))
        return {  # the filtered tiers replace the gathered ones
            "primary_context": Overwrite(kept["primary"]),
            "secondary_context": Overwrite(kept["secondary"]),
            "tertiary_context": Overwrite(kept["tertiary"]),
            "relevance_validation": {"total": total, "kept": total - len(removed), "removed": removed,
                                     "drift_ratio": drift, "threshold": threshold},
            "warnings": warnings,
            "phase": "synthesis",
        }

    return {"execute_task": execute_task, "validate_relevance": validate_relevance}

