"""Wiring for the rabbithole without an LLM: regex detection + extractive gate (or given parts)."""

from __future__ import annotations

from collections.abc import Callable

from rabbithole_lab.kb.search import KnowledgeBase
from rabbithole_lab.rabbithole.follow import FollowLimits, RabbitholeFollower, Trail
from rabbithole_lab.rabbithole.gate import ExtractiveDecider, ReferenceDecider
from rabbithole_lab.rabbithole.references import detect_references
from rabbithole_lab.records import DetectedReference, ExtractedReferenceList
from rabbithole_lab.settings import Settings


def build_follower(
    kb: KnowledgeBase,
    settings: Settings,
    decider: ReferenceDecider | None = None,
    llm_extract: Callable[[str], ExtractedReferenceList] | None = None,
    limits: FollowLimits | None = None,
) -> RabbitholeFollower:
    method = settings.references.extraction_method if llm_extract else "regex"

    def detect(text: str, doc: str | None) -> list[DetectedReference]:
        return detect_references(text, doc, method=method, llm_extract=llm_extract)

    decider = decider or ExtractiveDecider(kb.index.embedder.embed_documents, settings.references.gate_threshold)
    return RabbitholeFollower(
        kb,
        decider,
        limits or FollowLimits.from_settings(settings.references, settings.llm.concurrency),
        detect,
    )


def follow_question(
    kb: KnowledgeBase,
    follower: RabbitholeFollower,
    question: str,
    k: int,
    language: str,
    collection: str | None = None,
) -> Trail:
    """The whole rabbithole for one question: first-stage retrieval of k seeds plus the hits below
    them that backlinks may pull in, then following."""
    hits = kb.retrieve(question, k=k + follower.limits.backlink_pool, collection=collection)
    return follower.run(hits[:k], question, language, pool=hits[k:])
