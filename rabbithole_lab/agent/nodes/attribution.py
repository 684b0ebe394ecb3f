"""Phase 5: every used source with document, page, collection, path and a link to the page."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Literal

from langgraph.runtime import Runtime

from rabbithole_lab.agent.nodes.node_common import language, question
from rabbithole_lab.agent.services import Services
from rabbithole_lab.agent.state import AgentState
from rabbithole_lab.evidence.citation_format import citations_in
from rabbithole_lab.evidence.findings import preserved_quotes
from rabbithole_lab.evidence.pages import find_span
from rabbithole_lab.evidence.reference_edges import followed_count
from rabbithole_lab.evidence.sources import page_link, resolve_source_path
from rabbithole_lab.reasoning.checks.quality import statements
from rabbithole_lab.records import FinalReport, Finding, LinkedSource, notice
from rabbithole_lab.steps.synthesis_context import context_sources, stored_synthesis_context
from rabbithole_lab.steps.task import beyond_answer

_SOURCE_LABEL = r"(?P<doc>.+?)\s+p\.\s*(?P<page>\d+)$"


def task_rows(state: AgentState, answer: str) -> list[dict]:
    """Each task with what its summary said beyond the answer (and how many of its statements the answer
    quotes already): relevance, key findings, findings judged irrelevant."""
    summaries = {summary.get("task_id"): summary for summary in state.get("task_summaries", [])}
    rounds = {stats.get("task_id"): stats.get("rounds", []) for stats in state.get("task_stats", [])}
    rows = []
    for task in state.get("todo_list", {}).get("items", []):
        summary = summaries.get(task["id"], {})
        added, in_answer = beyond_answer(summary.get("summary", ""), answer)
        rows.append({"id": task["id"], "task": task["task"], "completed": task["completed"],
                     "origin": task.get("origin", "planned"), "added_reason": task.get("added_reason", ""),
                     "closed_reason": task.get("closed_reason", ""), "rounds": rounds.get(task["id"], []),
                     "summary": added, "in_answer": in_answer, "relevance_score": summary.get("relevance_score"),
                     "relevance_assessment": summary.get("relevance_assessment", ""),
                     "irrelevant_findings": summary.get("irrelevant_findings", [])})
    return rows


def clarification(state: AgentState) -> dict[str, list[str]]:
    """What the researcher's clarification changed: aspects added, cases excluded, provisions named."""
    anchor = state.get("query_anchor") or {}
    return {"added": list(anchor.get("additions") or []), "excluded": list(anchor.get("exclusions") or []),
            "named": list(anchor.get("provisions") or [])}


def addressed_to_model(state: AgentState, kb_dir) -> list[dict]:
    """Where the research read text addressed to an AI system (never quoted, decisive or followed): each
    passage once, by document, section and page, in the order found."""
    found: dict[tuple, dict] = {}
    for entry in state.get("findings") or []:
        if entry.get("addressed_to_model"):
            key = (entry.get("document", ""), entry.get("section", ""), entry.get("page", 0))
            path = resolve_source_path(kb_dir, entry.get("collection", ""), key[0])
            found.setdefault(key, {"doc": key[0], "section": key[1], "page": key[2], "path": str(path or "")})
    return list(found.values())


AnswerStatus = Literal["cited", "nothing_found", "uncited"]


def _quotes_by_page(answer: str) -> dict[tuple[str, int], list[str]]:
    """The quotations the answer cites to each (document, page), in the answer's order."""
    quoted: dict[tuple[str, int], list[str]] = {}
    for statement in statements(answer):
        for citation in statement.citations:
            if statement.quote:
                quoted.setdefault(citation, []).append(statement.quote)
    return quoted


def _findings(state: AgentState, sources: dict[tuple[str, int], LinkedSource]) -> list[Finding]:
    """The synthesis's key findings, each with the sources its labels name and a preserved quotation of them."""
    quotes = preserved_quotes(state)
    findings = []
    for item in state.get("synthesis", {}).get("key_findings", []):
        linked = []
        for label in item.get("sources", []):
            match = re.match(_SOURCE_LABEL, label.strip())
            if match and (match["doc"], int(match["page"])) in sources:
                linked.append(sources[(match["doc"], int(match["page"]))])
        evidence = next((q.quote for q in quotes if any(q.document == s.doc_id and q.page == s.page_number
                                                         for s in linked)), "")
        findings.append(Finding(claim=item.get("claim", ""), evidence=evidence, sources=linked))
    return findings


def _quoted_sections(holders: list, quotes: list[str]) -> str:
    """The sections a page's quotations are from ("§ 12, § 2"), not its most relevant passage's alone: one page
    holds several provisions ("QStrG.pdf, S. 1 (§ 2)" labelled a quotation from § 12)."""
    sections = [c.section for quote in quotes for c in holders if c.section and find_span(c.chunk_text, quote)]
    return ", ".join(dict.fromkeys(sections))


def _quote_section(holders: list, quote: str) -> str:
    """The section of the first passage on the page that holds the quotation ("" when none does)."""
    return next((c.section for c in holders if c.section and find_span(c.chunk_text, quote)), "")


def answer_status(answer: str, sources: list[LinkedSource], nothing_found: str) -> AnswerStatus:
    """What the answer is worth: it cites a page of the passages it was written from ("cited"), it says
    with its reason that nothing answers the question ("nothing_found"), or neither ("uncited": no claim of
    it can be checked against the documents, however it reads)."""
    if any(source.cited for source in sources):
        return "cited"
    return "nothing_found" if nothing_found.strip() and answer.strip() else "uncited"


def attribute_sources(state: AgentState, runtime: Runtime[Services]) -> dict:
    reasoner = runtime.context.reasoner
    services = runtime.context
    chunks = context_sources(stored_synthesis_context(state))
    answer = state.get("synthesis", {}).get("answer", "")
    cited = list(dict.fromkeys(citations_in(answer)))
    sources: dict[tuple[str, int], LinkedSource] = {}

    def linked(chunk, page: int, is_cited: bool) -> LinkedSource:
        path = resolve_source_path(services.kb_dir, chunk.collection, chunk.document)
        return LinkedSource(
            doc_id=chunk.document, page_number=page, relevance_score=round(chunk.relevance_score, 4),
            collection=chunk.collection, category=chunk.collection, section=chunk.section, cited=is_cited,
            path=str(path) if path else "", link=page_link(path, page) if path else "")

    # what the answer cites, in its order, each at the cited page with the passage that holds it
    # claims the synthesis removed (`claim_check.py`), then cited pages no passage the answer was written from holds
    invented = list(state.get("synthesis", {}).get("invented_citations", []))
    quoted = _quotes_by_page(answer)
    quote_sections: list[dict] = []  # each quotation's section, by which the views name its citation
    for doc, page in cited:
        holders = [c for c in chunks if c.document == doc and c.page <= page <= (c.page_end or c.page)]
        if holders:
            source = linked(max(holders, key=lambda c: c.relevance_score), page, True)
            source.section = _quoted_sections(holders, quoted.get((doc, page), [])) or source.section
            sources[(doc, page)] = source
            quote_sections += [{"doc": doc, "page": page, "quote": quote, "section": section}
                               for quote in quoted.get((doc, page), []) if (section := _quote_section(holders, quote))]
        else:
            invented.append(f"{doc} p. {page}")
    # then what the answer was written from without citing it: consulted, by relevance (text addressed to a model
    # was not written from: it is listed on its own, as not used)
    for chunk in sorted(chunks, key=lambda c: -c.relevance_score):
        if (chunk.document, chunk.page) not in sources and not chunk.addressed_to_model:
            sources[(chunk.document, chunk.page)] = linked(chunk, chunk.page, False)
    ordered = list(sources.values())
    status = answer_status(answer, ordered, state.get("synthesis", {}).get("nothing_found", ""))
    findings = _findings(state, sources)
    quality = state.get("quality_assessment") or {}
    breakdown = {k: quality[k] for k in ("factual_accuracy", "semantic_validity", "structural_integrity",
                                         "citation_correctness", "query_relevance", "verdict")
                 if quality.get(k) is not None}
    edges = state.get("reference_edges", [])
    report = FinalReport(
        query=question(state),
        answer=answer,
        findings=findings,
        sources=ordered,
        quality_score=int(quality.get("overall_score", 0)),
        quality_breakdown=breakdown,
        metadata={
            "language": language(state),
            "reasoner": state.get("reasoner", {}),
            "llm_calls": getattr(reasoner, "llm_calls", 0),
            "reasoner_calls": reasoner.calls,
            "tokens": reasoner.tokens,
            "hitl_termination_reason": state.get("hitl_termination_reason", ""),
            "hitl_iterations": len(state.get("retrieval_history", [])),
            "hitl_context_summary": state.get("hitl_context_summary", ""),
            "clarification": clarification(state),
            "tasks": task_rows(state, answer),
            "task_stats": state.get("task_stats", []),
            "followed_references": followed_count(edges)[0],
            "skipped_references": sum(1 for e in edges if e["decision"] == "skipped"),
            "quality_passed": bool(quality.get("passes", False)),
            "quality_issues": quality.get("issues_found", []),
            "reflections": state.get("reflection_count", 0),
            "relevance_validation": {k: v for k, v in state.get("relevance_validation", {}).items() if k != "removed"},
            "answer_status": status,
            # the provision the answer names as decisive, with its score, or that it names several
            "verdict": state.get("synthesis", {}).get("verdict", {}),
            "invented_citations": invented,
            "addressed_to_model": addressed_to_model(state, services.kb_dir),
            "warnings": list(state.get("warnings", [])) + (
                [notice("answer_uncited")] if status == "uncited" else []),
            # how the views name a cited document and the section of each quotation ("[StrlSchV § 73, S. 56]")
            "document_names": services.kb.registry.display_names(doc for doc, _ in cited),
            "quote_sections": quote_sections,
            "collection": state.get("collection"),
            "thread_id": state.get("thread_id", ""),
            "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        },
    )
    return {"final_report": report.model_dump(), "phase": "done"}
