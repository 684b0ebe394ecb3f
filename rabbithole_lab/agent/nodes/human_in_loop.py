"""Phase 1: iterative clarification with retrieval in every round (seeds 002/004 §5.2)."""

from __future__ import annotations

import logging

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from rabbithole_lab.agent.nodes.node_common import chunk_key, concurrent_map, language
from rabbithole_lab.agent.services import Services
from rabbithole_lab.agent.state import AgentState, RetrievalRound, RetrievedPreview
from rabbithole_lab.language.detection import question_language
from rabbithole_lab.rabbithole.tiers import classify_tier
from rabbithole_lab.reasoning.dialogue_terms import END_COMMAND, SKIP_COMMAND, anchor_text
from rabbithole_lab.reasoning.text import concepts as query_concepts
from rabbithole_lab.records import ChunkWithInfo, QueryAnalysis, VectorResult, notice
from rabbithole_lab.schemas import RetrievalAnalysis
from rabbithole_lab.steps.query_anchor import anchor_notice, researcher_terms
from rabbithole_lab.support.shown_text import shorten

logger = logging.getLogger(__name__)

PREVIEW_CHARS = 1200  # the panel shows the first words, the rest as a tooltip


def hitl_init(state: AgentState, runtime: Runtime[Services]) -> dict:
    reasoner = runtime.context.reasoner
    query = " ".join(state["query"].split())
    if not query:
        raise ValueError("The question is empty.")
    # one language per session: the one the user chose, else the question's
    lang = state.get("requested_language") if state.get("requested_language") in ("de", "en") \
        else question_language(query)
    return {
        "query": query,
        "detected_language": lang,
        "hitl_active": True,
        "hitl_iteration": 0,
        "iteration_queries": [],
        "query_retrieval": [],
        "retrieval_history": [],
        "retrieval_dedup_ratios": [],
        "hitl_conversation_history": [],
        "knowledge_gaps": [],
        "key_concepts": query_concepts(query, lang),
        "coverage_score": 0.0,
        "hitl_termination_reason": "",
        "reflection_count": 0,
        "phase": "hitl",
        "reasoner": {"provider": reasoner.info.provider, "model": reasoner.info.model, "reason": reasoner.info.reason,
                     "reason_key": reasoner.info.reason_key, "reason_values": reasoner.info.reason_values},
        "messages": [notice("session_line", language=lang, provider=reasoner.info.provider,
                            reason=reasoner.info.reason_notice())],
    }


def hitl_generate_queries(state: AgentState, runtime: Runtime[Services]) -> dict:
    settings = runtime.context.settings
    reasoner = runtime.context.reasoner
    count = settings.hitl.queries_per_iteration
    queries = reasoner.hitl_queries(state["query"], state["hitl_iteration"], state["hitl_conversation_history"],
                                    state.get("knowledge_gaps", []), state.get("key_concepts", []),
                                    language(state), count)
    # AC-1.2: exactly `count` queries; pad with concept variants when a reasoner returns fewer
    padding = [state["query"], *[f"{state['query']} {c}" for c in state.get("key_concepts", [])]]
    for extra in padding:
        if len(queries) >= count:
            break
        if extra not in queries:
            queries.append(extra)
    return {"iteration_queries": [queries[:count]]}


def hitl_retrieve_chunks(state: AgentState, runtime: Runtime[Services]) -> dict:
    """One round's retrieval. The dedup ratio is the share of the round's distinct passages that earlier
    rounds found already: convergence means retrieval stops finding new material. Duplicates within the
    round (two queries finding the same passage) are counted apart and do not count as old."""
    settings = runtime.context.settings
    kb = runtime.context.kb
    queries = state["iteration_queries"][-1]
    earlier = {chunk_key(VectorResult.model_validate(c)) for c in state["query_retrieval"]}
    k = settings.hitl.chunks_per_query
    retrieved: list[VectorResult] = []
    for query in queries:
        if query == state["query"]:
            hits = kb.retrieve(query, k=k, collection=state.get("collection"))
        else:
            hits = kb.search(query, k=k, collection=state.get("collection"))
        retrieved.extend(hits)
    distinct: dict[str, VectorResult] = {}
    for hit in retrieved:
        distinct.setdefault(chunk_key(hit), hit)
    new = [hit for key, hit in distinct.items() if key not in earlier]
    seen_before = len(distinct) - len(new)
    ratio = round(seen_before / len(distinct), 3) if distinct else 0.0
    entry = RetrievalRound(
        iteration=state["hitl_iteration"], queries=queries, retrieved=len(retrieved),
        within_round_duplicates=len(retrieved) - len(distinct), seen_before=seen_before, new=len(new),
        dedup_ratio=ratio,
        chunks=[RetrievedPreview(chunk_id=h.chunk_id, doc=h.doc, page=h.page_start, section=h.section,
                                 score=round(h.score, 4), preview=shorten(h.text, PREVIEW_CHARS))
                for h in new])
    return {
        "query_retrieval": [h.model_dump() for h in new],
        "retrieval_history": [entry],
        "retrieval_dedup_ratios": [ratio],
    }


def hitl_analyze_retrieval(state: AgentState, runtime: Runtime[Services]) -> dict:
    reasoner = runtime.context.reasoner
    passages = [VectorResult.model_validate(c) for c in state["query_retrieval"]][-12:]
    analysis = reasoner.analyze_retrieval(state["query"], passages, language(state))
    concepts = list(dict.fromkeys([*state.get("key_concepts", []), *analysis.key_concepts]))
    # a gap the researcher was asked about and answered is closed, whatever their words ("Gemeint sind die
    # Beschäftigten" for "Mitarbeiter"): it is not asked again, nor made a task
    answered = answered_turns(state.get("hitl_conversation_history", []))
    # a word the collection holds (any inflection, inside a compound, or by the glossary's term) is no gap, also
    # where the passages found do not: "Zu „Mitarbeiter“ steht nichts" was asked of a law that says Mitarbeiter
    kb = runtime.context.kb
    gaps = [gap for gap in analysis.knowledge_gaps if not any(gap in question for question in answered)
            and not kb.holds_term(gap, state.get("collection"), context=state["query"])]
    update = {
        "coverage_score": analysis.coverage_score,
        "knowledge_gaps": gaps,
        "key_concepts": concepts[:10],
        "entities": analysis.entities,
        "scope": analysis.scope,
    }
    dedup = state["retrieval_dedup_ratios"][-1] if state.get("retrieval_dedup_ratios") else 0.0
    if converged(runtime.context.settings, analysis.coverage_score, dedup, len(gaps)):
        # the rule the panel states ends the dialogue here, before another round of questions is asked
        update |= {"hitl_termination_reason": "convergence",
                   "messages": [notice("hitl_ended", reason=notice("hitl_convergence"))]}
    return update


def converged(settings, coverage: float, dedup: float, gaps: int) -> bool:
    """The clarification's convergence rule: retrieval covers the question and finds nothing new."""
    hitl = settings.hitl
    return coverage >= hitl.convergence_coverage and dedup >= hitl.convergence_dedup \
        and gaps <= hitl.convergence_max_gaps


def hitl_generate_questions(state: AgentState, runtime: Runtime[Services]) -> dict:
    settings = runtime.context.settings
    reasoner = runtime.context.reasoner
    passages = [VectorResult.model_validate(c) for c in state["query_retrieval"]][-9:]
    analysis = RetrievalAnalysis(key_concepts=state.get("key_concepts", []), entities=state.get("entities", []),
                                 scope=state.get("scope", ""), knowledge_gaps=state.get("knowledge_gaps", []),
                                 coverage_score=state.get("coverage_score", 0.0))
    count = settings.hitl.max_clarification_questions
    conversation = state.get("hitl_conversation_history", [])
    asked = {" ".join(line.lower().split()) for turn in conversation if turn.get("role") == "assistant"
             for line in str(turn.get("content", "")).splitlines()}
    questions = reasoner.follow_up_questions(state["query"], analysis, passages, language(state), count,
                                             conversation=conversation)
    # a question is never asked twice, whatever the reasoner wrote
    questions = [q for q in dict.fromkeys(q.strip() for q in questions if q.strip())
                 if " ".join(q.lower().split()) not in asked][:count]
    # what the research will take the question to mean so far: shown with the questions, so the user
    # can correct it before ending the clarification
    understanding = reasoner.hitl_context_summary(state["query"], conversation, state.get("key_concepts", []),
                                                  language(state))
    turn = {"role": "assistant", "content": "\n".join(questions)}
    return {"follow_up_questions": questions, "hitl_understanding": understanding,
            "hitl_conversation_history": [turn]}


def hitl_process_response(state: AgentState, runtime: Runtime[Services]) -> dict:
    settings = runtime.context.settings
    # Everything above interrupt() runs again on resume: it only reads the state.
    history = state["retrieval_history"][-1] if state["retrieval_history"] else {}
    response = interrupt({
        "type": "hitl_questions",
        "iteration": state["hitl_iteration"],
        "questions": state.get("follow_up_questions", []),
        "coverage_score": state.get("coverage_score", 0.0),
        "knowledge_gaps": state.get("knowledge_gaps", []),
        "dedup_ratio": history.get("dedup_ratio", 0.0),
        "previous_answer": next((turn["content"] for turn in reversed(state.get("hitl_conversation_history", []))
                                 if turn.get("role") == "user"), ""),
        "understanding": state.get("hitl_understanding", ""),
        "retrieval": history,
        "convergence": {"coverage": settings.hitl.convergence_coverage, "dedup": settings.hitl.convergence_dedup,
                        "max_gaps": settings.hitl.convergence_max_gaps},
        "language": language(state),
    })
    answer = str(response.get("answer", "") if isinstance(response, dict) else (response or "")).strip()
    update: dict = {}
    reason = ""
    if answer.lower() == END_COMMAND:
        reason = "user_end"
    elif answer.lower() == SKIP_COMMAND:
        reason = "unattended"
    else:
        if answer:
            update["hitl_conversation_history"] = [{"role": "user", "content": answer}]
        iteration = state["hitl_iteration"] + 1
        # convergence ended the dialogue before these questions were asked (hitl_analyze_retrieval)
        if iteration >= settings.hitl.max_iterations:
            reason = "max_iterations"
        else:
            update["hitl_iteration"] = iteration
    update["hitl_termination_reason"] = reason
    if reason:
        update["messages"] = [notice("hitl_ended", reason=notice(f"hitl_{reason}"))]
    return update


def hitl_finalize(state: AgentState, runtime: Runtime[Services]) -> dict:
    settings = runtime.context.settings
    reasoner = runtime.context.reasoner
    lang = language(state)
    query = state["query"]
    concepts = state.get("key_concepts", [])
    summary = reasoner.hitl_context_summary(query, state["hitl_conversation_history"], concepts, lang)
    research_queries = reasoner.research_queries(query, summary, concepts, lang)
    refinements = [t["content"] for t in state["hitl_conversation_history"] if t["role"] == "user"]
    terms = researcher_terms(runtime.context, query, state["hitl_conversation_history"], lang, state.get("collection"))
    query_anchor = {"original_query": query, "detected_language": lang, "key_concepts": concepts,
                    "entities": state.get("entities", []), "scope": state.get("scope", ""),
                    "hitl_refinements": refinements, **terms.model_dump(), "text": anchor_text(query, terms)}
    analysis = QueryAnalysis(original_query=query, key_concepts=concepts, entities=state.get("entities", []),
                             scope=state.get("scope", ""), hitl_refinements=refinements,
                             clarification_needed=False, detected_language=lang)
    passages = [VectorResult.model_validate(c) for c in state["query_retrieval"]]

    def extract(passage: VectorResult) -> dict:
        info = reasoner.extract_info(passage, query, query, lang)
        return ChunkWithInfo.from_result(
            passage, extracted_info=info.extracted_info, relevance_score=round(passage.score, 4), depth=0,
            tier=classify_tier(0, passage.score, "hitl"), preserved_quotes=info.preserved_quotes,
        ).model_dump() | {"task_id": None}

    tertiary = concurrent_map(extract, passages, settings.llm.concurrency)
    return {
        "hitl_active": False,
        "hitl_context_summary": summary,
        "research_queries": research_queries,
        "query_anchor": query_anchor,
        "query_analysis": analysis.model_dump(),
        "findings": [t for t in tertiary if t["extracted_info"]],
        "seen_chunks": [],  # HITL chunks may still become primary in a task
        "phase": "planning",
        "messages": [anchor_notice(query_anchor)],
    }


def answered_turns(conversation: list[dict]) -> list[str]:
    """What the assistant asked in each turn the researcher answered."""
    return [str(turn.get("content", "")) for turn, reply in zip(conversation, conversation[1:], strict=False)
            if turn.get("role") == "assistant" and reply.get("role") == "user"
            and str(reply.get("content", "")).strip()]
