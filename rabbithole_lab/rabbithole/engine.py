"""Wiring of the rabbithole: the follower over a knowledge base, and one question through
first stage, following and the assembler."""

from __future__ import annotations

from collections.abc import Callable

from rabbithole_lab.kb.retrieval.search import KnowledgeBase
from rabbithole_lab.rabbithole.assemble import assemble
from rabbithole_lab.rabbithole.candidates import Candidate, Trail
from rabbithole_lab.rabbithole.follow import RabbitholeFollower
from rabbithole_lab.rabbithole.reference_merge import detect_references
from rabbithole_lab.records import DetectedReference, ReferenceDecider, VectorResult
from rabbithole_lab.schemas import ExtractedReferenceList
from rabbithole_lab.settings import ReferenceSettings, Settings


def build_follower(
    kb: KnowledgeBase,
    settings: Settings,
    decider: ReferenceDecider,
    llm_extract: Callable[[str], ExtractedReferenceList] | None = None,
    references: ReferenceSettings | None = None,
) -> RabbitholeFollower:
    """A follower with `decider` as its gate (built once where services are wired) and regex
    detection, or the configured hybrid with `llm_extract`."""
    method = settings.references.extraction_method if llm_extract else "regex"

    def detect(text: str, doc: str | None) -> list[DetectedReference]:
        return detect_references(text, doc, method=method, llm_extract=llm_extract)

    return RabbitholeFollower(kb, decider, references or settings.references, detect, settings.llm.concurrency)


def follow_question(
    kb: KnowledgeBase,
    follower: RabbitholeFollower,
    question: str,
    language: str,
    collection: str | None = None,
    pool_size: int | None = None,
) -> Trail:
    """The candidate pool of one question: first-stage hits, then following from the best of them; with
    REFERENCE_CITED_BY_DEPTH the ranking further down is read for passages that cite the best hits."""
    hits = kb.retrieve(question, k=pool_size or kb.settings.first_stage_pool, collection=collection)
    below = ranking_below_cut(kb, follower.settings, question, len(hits), collection)
    return follower.run(hits, question, language, below_cut=below)


def ranking_below_cut(kb: KnowledgeBase, references: ReferenceSettings, question: str, pool_hits: int,
                      collection: str | None = None) -> list[VectorResult]:
    """The question's ranking down to REFERENCE_CITED_BY_DEPTH, read only for backlinks: empty when that
    depth is within the pool or backlinks are off. A second search, not a deeper one cut: a deeper fusion may
    reorder the pool's own hits."""
    depth = references.cited_by_depth if references.max_cited_by > 0 else 0
    return kb.retrieve(question, k=depth, collection=collection) if depth > pool_hits else []


def admit(candidates: list[Candidate], budget_chars: int, strict: bool = False) -> list[Candidate]:
    """The context of `budget_chars` characters that the candidates' values allow (see assemble.py)."""
    return assemble(candidates, budget_chars, value=lambda c: c.value, size=lambda c: len(c.result.text),
                    key=lambda c: c.chunk_id, parent=lambda c: c.parent, strict=strict)


def admit_items(candidates: list[Candidate], count: int) -> list[Candidate]:
    """The `count` most valuable candidates: a budget in items, where each costs one whatever its length.
    A character budget admits by value per character and so prefers short items; a measure that counts
    items (a top ten) asks for the best items instead."""
    return assemble(candidates, count, value=lambda c: c.value, size=lambda c: 1,
                    key=lambda c: c.chunk_id, parent=lambda c: c.parent)
