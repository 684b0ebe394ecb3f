"""The context the answer is written from: the graded findings that fit the reasoner's context size, with
their passages' neighbours, and the followed references between them. Computed once by `synthesize` and
stored (`state["synthesis_context"]`), so the quality check and the attribution read what the answer read."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from rabbithole_lab.agent.services import Services
from rabbithole_lab.evidence.findings import TIERS, tier_chunks
from rabbithole_lab.kb.retrieval.search import KnowledgeBase
from rabbithole_lab.rabbithole.assemble import assemble
from rabbithole_lab.rabbithole.references import detect_references_regex
from rabbithole_lab.rabbithole.resolve import section_labels
from rabbithole_lab.records import TIER_WEIGHTS, ChunkWithInfo

IN_TEXT = "in_text"  # the decision of a reference read in a passage's text, neither followed nor skipped


def context_for_synthesis(state: Mapping, budget_chars: int) -> dict[str, list[ChunkWithInfo]]:
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


def build_synthesis_context(state: Mapping, services: Services) -> dict[str, list[ChunkWithInfo]]:
    """What the reasoner writes from and is checked against: the graded context with its passages' neighbours."""
    budget_chars = services.reasoner.context_chars
    return with_neighbours(context_for_synthesis(state, budget_chars), services.kb, budget_chars)


def reference_chains(state: Mapping, context: dict[str, list[ChunkWithInfo]],
                     document_named: Callable[[str], str | None] | None = None) -> list[dict]:
    """The references between provisions of the synthesis context: citing section, the reference, the cited
    section, the paragraphs it names and why it counts (once each). A followed reference counts where it led
    from a passage of the context to one; a reference the gate did not follow counts where search brought the
    cited provision into the context anyway: the citing provision still says it applies. With
    `document_named` (a book as written -> its file), so does a reference in the text of a passage of the
    context that following never examined (a neighbour passage, the last hop): the text says it applies."""
    ids = {chunk.chunk_id for chunks in context.values() for chunk in chunks}
    provisions = {(chunk.document, chunk.section) for chunks in context.values() for chunk in chunks if chunk.section}
    edges = list(state.get("reference_edges", []))
    if document_named is not None:
        edges += text_references(context, provisions, document_named)
    # a reference already followed from another passage is recorded without where it points: it points where
    # the same reference (same target, same document) pointed when it was followed
    located = {edge["target"]: list(zip(edge["to_docs"], edge["to_sections"], strict=False))
               for edge in edges if edge.get("to_docs") and edge.get("decision") != IN_TEXT}
    chains: dict[tuple[str, str, str], dict] = {}
    for edge in edges:
        citing = (edge.get("from_doc", ""), edge.get("from_section", ""))
        cited = [(doc, section) for doc, section in zip(edge.get("to_docs", []), edge.get("to_sections", []),
                                                        strict=False)]
        if not cited and edge.get("reason_key") == "already_visited":
            cited = located.get(edge["target"], [])
        if edge.get("decision") == "followed":
            if edge.get("from_chunk") not in ids or not ids & set(edge.get("to_chunks", [])):
                continue
            reason = {"reason": edge.get("reason", ""), "reason_key": edge.get("reason_key", ""),
                      "reason_values": edge.get("reason_values") or {}}
        else:
            cited = [key for key in cited if key in provisions and key != citing]
            if citing not in provisions or not cited:
                continue
            reason = {"reason": "", "reason_key": "cited_in_context", "reason_values": {}}
        source = f"{citing[1]} {citing[0]}".strip()
        target = ", ".join(f"{section} {doc}".strip() for doc, section in cited)
        chain = chains.setdefault((source, edge["target"], target),
                                  {"source": source, "reference": edge["target"], "target": target,
                                   **reason, "citing": list(citing), "cited": [], "paragraphs": []})
        # a reference only read in the text links where the answer quotes the sentence that makes it
        if edge.get("decision") == IN_TEXT:
            chain.setdefault("phrases", []).append(edge["phrase"])
        else:
            chain["recorded"] = True
        chain["cited"] += [[doc, section] for doc, section in cited if [doc, section] not in chain["cited"]]
        if len(cited) == 1 and edge.get("to_paragraphs"):
            chain["paragraphs"].append([*cited[0], list(edge["to_paragraphs"])])
    return list(chains.values())


def text_references(context: dict[str, list[ChunkWithInfo]], provisions: set[tuple[str, str]],
                    document_named: Callable[[str], str | None]) -> list[dict]:
    """The references the context's own passages make to other provisions of the context, as edges read in the
    text (`IN_TEXT`; `reference_chains` links them like a reference the gate did not follow, and keeps the words
    that make each, so the answer follows it only from a sentence it quotes). A reference without a book
    points into the passage's own document ("in Anlage 4 zu diesem Gesetz"); one whose book names no
    document of the knowledge base points nowhere."""
    edges: list[dict] = []
    for chunk in (chunk for chunks in context.values() for chunk in chunks
                  if chunk.section and not chunk.addressed_to_model):  # instructions to a model cite nothing
        for reference in detect_references_regex(chunk.chunk_text, chunk.document):
            if reference.type != "legal_section" or reference.version:
                continue
            doc = document_named(reference.book) if reference.book else chunk.document
            edges += [{"from_doc": chunk.document, "from_section": chunk.section, "from_chunk": chunk.chunk_id,
                       "target": reference.target, "decision": IN_TEXT, "phrase": reference.original_text,
                       "to_docs": [doc], "to_sections": [label], "to_paragraphs": reference.paragraphs.get(number, [])}
                      for number, label in zip(reference.sections, section_labels(reference), strict=False)
                      if doc and (doc, label) in provisions]
    return edges


def stored_synthesis_context(state: Mapping) -> dict[str, list[ChunkWithInfo]]:
    """The context `synthesize` wrote the answer from, as it stored it."""
    stored = state.get("synthesis_context") or {}
    return {tier: [ChunkWithInfo.model_validate(chunk) for chunk in stored.get(tier, [])] for tier in TIERS}


def context_sources(context: dict[str, list[ChunkWithInfo]]) -> list[ChunkWithInfo]:
    return [chunk for tier in TIERS for chunk in context.get(tier, [])]

