"""The candidate pool of one rabbithole run and the trail that records how it was built.

Every item that may enter the context is a `Candidate`: a first-stage hit, another chunk of a
hit's section, a followed target or a backlink. Collecting candidates and choosing among them are
separate steps: the follower fills the pool (collect -> gate -> rank), the assembler admits from it
under a character budget (`assemble.py`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from rabbithole_lab.records import CHARS_PER_TOKEN, DetectedReference, ReferenceEdge, Tier, VectorResult

CandidateKind = Literal["hit", "section", "followed", "backlink"]


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass
class Candidate:
    """One chunk that may enter the context, with what the ranking knows about it."""

    result: VectorResult
    kind: CandidateKind
    depth: int
    relevance: float  # own relevance to the question, or what an exact citation inherits (tiers, filters)
    own_relevance: float = 0.0  # relevance of the chunk's own text, never inherited
    value: float = 0.0  # estimated chance that the answer needs this item (`rank.py`)
    tier: Tier = "primary"
    rank: int | None = None  # position in the first-stage ranking (hits and backlinks)
    parent: str = ""  # chunk id that must be in the context before this one
    cited_by: str = ""  # a followed target: the chunk whose reference led here
    cites: str = ""  # a backlink: the context chunk this one cites
    via: str = ""  # the reference text that led here
    root: int = -1  # the first-stage hit this candidate descends from
    share: float = 1.0  # the reference's share of its citer's gate scores (followed targets)
    references: list[DetectedReference] = field(default_factory=list)

    @property
    def chunk_id(self) -> str:
        return self.result.chunk_id

    @property
    def score(self) -> float:
        """The relevance score shown to users and graded into tiers."""
        return self.relevance

    @property
    def own_score(self) -> float:
        return self.own_relevance


@dataclass
class Trail:
    """What one run collected: the candidate pool (in the order it was found), the edges of the
    reference graph, and why following stopped."""

    candidates: list[Candidate] = field(default_factory=list)
    dropped: list[Candidate] = field(default_factory=list)
    edges: list[ReferenceEdge] = field(default_factory=list)
    visited: list[str] = field(default_factory=list)
    tokens_used: int = 0
    stop_reasons: list[dict] = field(default_factory=list)  # {"key", "values"}: messages/reasons.py words them

    @property
    def followed_edges(self) -> list[ReferenceEdge]:
        return [edge for edge in self.edges if edge.decision == "followed"]

    def by_id(self) -> dict[str, Candidate]:
        return {candidate.chunk_id: candidate for candidate in self.candidates}
