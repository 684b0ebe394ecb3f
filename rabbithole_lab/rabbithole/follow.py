"""Recursive reference following for one research task (the rabbithole).

From each seed chunk: detect references, drop visited ones, resolve them (exact section
lookup first), let the gate decide, and descend into the followed targets depth-first,
so a followed chunk lands right after the chunk that cites it. Guards, each recorded as
a stop reason: depth limit, visited set, token budget, convergence (one document reached
N times by following), early refusal (the first N followed references all irrelevant).
Every followed or skipped reference becomes a `ReferenceEdge`.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from rabbithole_lab.kb.search import KnowledgeBase
from rabbithole_lab.rabbithole.backlinks import cited_keys, context_key
from rabbithole_lab.rabbithole.gate import GateInput, ReferenceDecider, gate_references
from rabbithole_lab.rabbithole.references import is_own_label
from rabbithole_lab.rabbithole.relevance import CITATION_DECAY, Scored, filter_by_relevance, relevance_score
from rabbithole_lab.rabbithole.resolve import ReferenceResolver, Resolution, window_around
from rabbithole_lab.rabbithole.tiers import classify_tier
from rabbithole_lab.records import DetectedReference, ReferenceEdge, Tier, VectorResult
from rabbithole_lab.settings import ReferenceSettings

logger = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4  # documented estimate (qwen/llama tokenizers average ~4 characters per token)


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass
class FollowLimits:
    follow_depth: int = 2
    token_budget: int = 50_000
    convergence_same_doc_threshold: int = 3
    relevance_threshold: float = 0.6
    early_refusal_count: int = 3
    early_refusal_threshold: float = 0.35
    min_results: int = 2
    gate_window_chars: int = 400
    max_follow_per_chunk: int = 1
    chunks_per_reference: int = 1
    concurrency: int = 4
    filter_relevance: bool = True
    follow_from_top_seeds: int = 10  # only the best N seeds start a rabbithole
    # Seeds whose references lead to relevant text move up: order by seed score + weight x best child.
    rerank_weight: float = 0.0
    # The gate also sees the resolved target (its stored embedding and text), not only the citing window.
    gate_lookahead: bool = True
    # Backlinks: at most this many first-stage hits from below the cut join the context because they
    # cite a passage in it (0 turns it off).
    max_cited_by: int = 2
    cited_by_pool: int = 20  # first-stage hits below the cut that the caller passes as `pool`
    cited_by_top_seeds: int = 1  # backlinks lead only to the best N seeds

    @property
    def backlink_pool(self) -> int:
        """How many first-stage hits below the seeds a caller should pass as `pool` (0 when off)."""
        return self.cited_by_pool if self.max_cited_by > 0 else 0

    @classmethod
    def from_settings(cls, settings: ReferenceSettings, concurrency: int = 4) -> FollowLimits:
        return cls(
            follow_depth=settings.follow_depth,
            token_budget=settings.token_budget,
            convergence_same_doc_threshold=settings.convergence_same_doc_threshold,
            relevance_threshold=settings.relevance_threshold,
            early_refusal_count=settings.early_refusal_count,
            early_refusal_threshold=settings.early_refusal_threshold,
            min_results=settings.min_results,
            gate_window_chars=settings.gate_window_chars,
            max_follow_per_chunk=settings.max_follow_per_chunk,
            max_cited_by=settings.max_cited_by if settings.cited_by_pool > 0 else 0,
            cited_by_pool=settings.cited_by_pool,
            cited_by_top_seeds=settings.cited_by_top_seeds,
            concurrency=concurrency,
        )


@dataclass
class TrailItem:
    result: VectorResult
    depth: int
    score: float
    own_score: float
    tier: Tier
    cited_by: str = ""
    cites: str = ""  # a backlink: the context chunk this one cites
    via: str = ""  # the reference text that led here
    root: int = -1  # index of the seed this item descends from
    references: list[DetectedReference] = field(default_factory=list)


@dataclass
class Trail:
    items: list[TrailItem] = field(default_factory=list)
    dropped: list[TrailItem] = field(default_factory=list)
    edges: list[ReferenceEdge] = field(default_factory=list)
    visited: list[str] = field(default_factory=list)
    tokens_used: int = 0
    stop_reasons: list[str] = field(default_factory=list)

    @property
    def followed_edges(self) -> list[ReferenceEdge]:
        return [edge for edge in self.edges if edge.decision == "followed"]


class _TaskState:
    def __init__(self, visited: set[str]):
        self.visited = set(visited)
        self.seen_chunks: set[str] = set()
        self.tokens = 0
        self.followed_docs: Counter[tuple[int, str]] = Counter()  # (seed, doc) -> references followed
        self.first_followed_scores: list[float] = []
        self.stopped = ""
        self.reasons: list[str] = []
        self.root_position: dict[str, int] = {}
        self.sections_seen: set[tuple[str, str]] = set()
        self.promoted: set[str] = set()  # seeds moved under the chunk that cites them

    def available(self, target: VectorResult, citer_root: int) -> bool:
        """Not yet in the context (neither the chunk nor another chunk of its section), or a
        later-ranked seed that may move up under its citer."""
        position = self.root_position.get(target.chunk_id)
        if position is not None:
            return position > citer_root and target.chunk_id not in self.promoted
        if target.chunk_id in self.seen_chunks:
            return False
        return not target.section or (target.doc, target.section) not in self.sections_seen

    def add(self, target: VectorResult) -> None:
        self.seen_chunks.add(target.chunk_id)
        if target.section:
            self.sections_seen.add((target.doc, target.section))

    def note(self, reason: str) -> None:
        if reason not in self.reasons:
            self.reasons.append(reason)


class RabbitholeFollower:
    """Follows references from seed chunks for one task."""

    def __init__(
        self,
        kb: KnowledgeBase,
        decider: ReferenceDecider,
        limits: FollowLimits,
        detect: Callable[[str, str | None], list[DetectedReference]],
        resolver: ReferenceResolver | None = None,
    ):
        self.kb = kb
        self.decider = decider
        self.limits = limits
        self.detect = detect
        self.resolver = resolver or ReferenceResolver(kb)

    def run(
        self,
        seeds: list[VectorResult],
        anchor: str,
        language: str = "de",
        visited: set[str] | None = None,
        seed_scores: dict[str, float] | None = None,
        pool: list[VectorResult] | None = None,
    ) -> Trail:
        """Follow references best-first, level by level; return items in tree order.

        `pool` holds the first-stage hits ranked below the seeds: one of them, or a lower seed, that
        cites the best seed joins it right after that seed (a backlink)."""
        state = _TaskState(visited or set())
        trail = Trail()
        cosine = self.kb.similarity(seeds, anchor) if seeds else {}
        stem_language = "english" if language == "en" else "german"
        roots: list[TrailItem] = []
        for seed in seeds:
            if seed.chunk_id in state.seen_chunks:
                continue
            state.add(seed)
            own = relevance_score(cosine.get(seed.chunk_id, 0.0), anchor, seed.text, language=stem_language)
            own = max(own, seed.score)  # the retrieval score is relevance evidence too
            if seed_scores and seed.chunk_id in seed_scores:
                own = max(own, seed_scores[seed.chunk_id])
            roots.append(TrailItem(seed, 0, own, own, classify_tier(0, own), root=len(roots)))
        children: dict[int, list[TrailItem]] = {}
        state.root_position = {root.result.chunk_id: index for index, root in enumerate(roots)}
        # Backlinks first: a passage that cites the best seed and is also cited further down takes the
        # better-ranked place, right after the best seed.
        if self.limits.max_cited_by > 0:
            self._pull_citers(pool or [], roots, children, anchor, language, state, trail)
        frontier = roots[: self.limits.follow_from_top_seeds]
        depth = 0
        while frontier:
            if depth >= self.limits.follow_depth:
                if any(self.detect(item.result.text, item.result.doc) for item in frontier):
                    trail.stop_reasons.append("depth limit")
                break
            frontier = self._level(frontier, anchor, language, state, trail, children)
            depth += 1
        ordered: list[TrailItem] = []
        emitted: set[str] = set()
        # A seed moved under its citer keeps what it found itself as a seed: its subtree follows it there.
        root_by_chunk = {root.result.chunk_id: root for root in roots}

        def walk(item: TrailItem) -> None:
            if item.result.chunk_id in emitted:
                return
            emitted.add(item.result.chunk_id)
            ordered.append(item)
            subtree = list(children.get(id(item), []))
            own_root = root_by_chunk.get(item.result.chunk_id)
            if item.depth > 0 and own_root is not None:
                subtree += children.get(id(own_root), [])
            for child in subtree:
                walk(child)

        if self.limits.rerank_weight > 0:
            position = {id(root): index for index, root in enumerate(roots)}

            def evidence(root: TrailItem) -> float:
                best_child = max((child.own_score for child in children.get(id(root), [])), default=0.0)
                return root.result.score + self.limits.rerank_weight * best_child

            roots = sorted(roots, key=lambda root: (-evidence(root), position[id(root)]))
        for root in roots:
            if root.result.chunk_id not in state.promoted:
                walk(root)
        trail.items = ordered
        if self.limits.filter_relevance:
            # Seeds are ranked by retrieval already; the filter guards against drift from following.
            followed = [Scored(item, item.score) for item in trail.items if item.depth > 0]
            kept, dropped = filter_by_relevance(followed, self.limits.relevance_threshold, self.limits.min_results)
            dropped_ids = {id(entry.item) for entry in dropped}
            trail.dropped = [entry.item for entry in dropped]  # type: ignore[misc]
            trail.items = [item for item in trail.items if id(item) not in dropped_ids]
        for item in trail.items:
            item.tier = classify_tier(item.depth, item.score)
        trail.visited = sorted(state.visited)
        trail.tokens_used = state.tokens
        trail.stop_reasons.extend(reason for reason in state.reasons if reason not in trail.stop_reasons)
        return trail

    # ---- one level of the tree -------------------------------------------------------------------
    def _edge(self, item: TrailItem, reference: DetectedReference, decision: str, reason: str,
              resolution: Resolution | None = None, targets: list[VectorResult] | None = None,
              score: float = 0.0) -> ReferenceEdge:
        targets = targets or []
        # a skipped reference still records where it points (to_docs/to_sections), not what was taken
        located = targets or (resolution.results[:1] if resolution is not None and resolution.results else [])
        return ReferenceEdge(
            from_chunk=item.result.chunk_id,
            to_chunks=[t.chunk_id for t in targets],
            type=reference.type,
            target=reference.target,
            depth=item.depth + 1,
            decision=decision,  # type: ignore[arg-type]
            reason=reason,
            resolution=resolution.path if resolution else "",
            score=round(score, 4),
            from_doc=item.result.doc,
            from_section=item.result.section,
            to_docs=[t.doc for t in located],
            to_sections=[t.section for t in located],
        )

    def _level(self, frontier: list[TrailItem], anchor: str, language: str, state: _TaskState, trail: Trail,
               children: dict[int, list[TrailItem]]) -> list[TrailItem]:
        german = language == "de"
        candidates: list[tuple[TrailItem, DetectedReference, Resolution, list[VectorResult]]] = []
        level_keys: set[str] = set()
        for item in frontier:
            references = self._citations(item.result)
            item.references = references
            keys_in_chunk: set[str] = set()
            for reference in references:
                if reference.key in keys_in_chunk:
                    continue  # one chunk citing "Anlage 2" twice is one edge
                keys_in_chunk.add(reference.key)
                if reference.type == "external":
                    trail.edges.append(self._edge(
                        item, reference, "skipped",
                        "URL vermerkt, nicht abgerufen" if german else "URL recorded, never fetched",
                        Resolution("external")))
                    continue
                if reference.key in state.visited:
                    trail.edges.append(self._edge(item, reference, "skipped",
                                                  "bereits besucht" if german else "already visited"))
                    continue
                resolution = self.resolver.resolve(reference, anchor, item.result.section)
                reference.found = resolution.found
                reference.resolution = resolution.path
                if not resolution.found:
                    state.visited.add(reference.key)  # nothing to find: never ask again
                    trail.edges.append(self._edge(
                        item, reference, "skipped",
                        "nicht in der Wissensbasis" if german else "not in the knowledge base", resolution))
                    continue
                targets = [r for r in resolution.results
                           if state.available(r, item.root) and r.chunk_id != item.result.chunk_id
                           and (r.doc, r.section) != (item.result.doc, item.result.section)]
                if not targets:
                    trail.edges.append(self._edge(
                        item, reference, "skipped",
                        "bereits im Kontext" if german else "already in the context", resolution))
                    continue
                candidates.append((item, reference, resolution, targets))
                level_keys.add(reference.key)
        if not candidates:
            return []
        # The gate judges the chunk following would take: of a section or range, the one closest to the anchor.
        cosine = self.kb.similarity([t for _, _, _, targets in candidates for t in targets], anchor)
        closest = [max(targets, key=lambda t: cosine.get(t.chunk_id, 0.0)) for _, _, _, targets in candidates]
        gate_inputs = [
            GateInput(
                reference=reference,
                window=window_around(item.result.text, reference.start, reference.end, self.limits.gate_window_chars),
                document=item.result.doc,
                target_title=target.heading if resolution.path == "section_index" else "",
                target_text=target.text if self.limits.gate_lookahead else "",
                target_similarity=cosine.get(target.chunk_id) if self.limits.gate_lookahead else None,
            )
            for (item, reference, resolution, _), target in zip(candidates, closest, strict=True)
        ]
        verdicts = gate_references(gate_inputs, anchor, self.decider, language, self.limits.concurrency)
        # best-first: the most promising references of the whole level are followed first; a reference
        # cited by several chunks hangs under the earliest-ranked citer that the gate let through
        order = {id(item): index for index, item in enumerate(frontier)}
        pairs = list(zip(candidates, verdicts, strict=True))
        earliest: dict[str, tuple] = {}
        for pair in sorted(pairs, key=lambda p: (not p[1].decision.follow, order[id(p[0][0])])):
            earliest.setdefault(pair[0][1].key, pair)
        best_score: dict[str, float] = {}
        for (_, reference, _, _), verdict in pairs:
            best_score[reference.key] = max(best_score.get(reference.key, 0.0), verdict.score)
        ranked = sorted(pairs, key=lambda p: (-best_score[p[0][1].key], p[0][1].key, order[id(p[0][0])]))
        ranked = [earliest[p[0][1].key] if p is not earliest[p[0][1].key] and p[1].decision.follow
                  and earliest[p[0][1].key][1].decision.follow else p for p in ranked]
        followed_from: Counter[int] = Counter()
        next_frontier: list[TrailItem] = []
        for (item, reference, resolution, targets), verdict in ranked:
            skip_reason = ""
            if not verdict.decision.follow:
                skip_reason = verdict.decision.reason
            elif reference.key in state.visited:
                skip_reason = "bereits verfolgt" if german else "already followed"
            elif state.stopped:
                skip_reason = state.stopped
            elif followed_from[id(item)] >= self.limits.max_follow_per_chunk:
                skip_reason = "Limit je Abschnitt erreicht" if german else "per-chunk limit reached"
            elif resolution.doc and state.followed_docs[(item.root, resolution.doc)] \
                    >= self.limits.convergence_same_doc_threshold:
                skip_reason = f"convergence: {resolution.doc}"
                state.note(skip_reason)
            elif state.tokens >= self.limits.token_budget:
                state.stopped = "token budget exhausted"
                state.note(state.stopped)
                skip_reason = state.stopped
            targets = [t for t in targets if state.available(t, item.root)]
            if not skip_reason and not targets:
                skip_reason = "bereits im Kontext" if german else "already in the context"
            if skip_reason:
                trail.edges.append(self._edge(item, reference, "skipped", skip_reason, resolution, score=verdict.score))
                continue
            state.visited.add(reference.key)
            chosen = self._choose(targets, cosine)
            new_children = []
            for target in chosen:
                if target.chunk_id in state.root_position:
                    state.promoted.add(target.chunk_id)
                state.add(target)
                state.tokens += estimate_tokens(target.text)
                own = relevance_score(cosine.get(target.chunk_id, 0.0), anchor, target.text,
                                      language="english" if language == "en" else "german")
                # an exact citation is as relevant as its citer; a search-based hop decays
                decay = 1.0 if resolution.path == "section_index" else CITATION_DECAY
                score = max(own, round(item.score * decay, 4))
                new_children.append(TrailItem(target, item.depth + 1, score, own, classify_tier(item.depth + 1, score),
                                              cited_by=item.result.chunk_id, via=reference.original_text,
                                              root=item.root))
            followed_from[id(item)] += 1
            trail.edges.append(self._edge(item, reference, "followed", verdict.decision.reason, resolution, chosen,
                                          verdict.score))
            if resolution.doc:
                state.followed_docs[(item.root, resolution.doc)] += 1
            if len(state.first_followed_scores) < self.limits.early_refusal_count:
                state.first_followed_scores.append(max(child.own_score for child in new_children))
                if (len(state.first_followed_scores) == self.limits.early_refusal_count
                        and all(s < self.limits.early_refusal_threshold for s in state.first_followed_scores)):
                    state.stopped = "early refusal"
                    state.note(state.stopped)
            children.setdefault(id(item), []).extend(new_children)
            next_frontier.extend(new_children)
        return next_frontier

    def _citations(self, result: VectorResult) -> list[DetectedReference]:
        """The references in a chunk, without its own heading label."""
        return [reference for reference in self.detect(result.text, result.doc)
                if not is_own_label(reference, result.text, result.section)]

    def _pull_citers(self, pool: list[VectorResult], roots: list[TrailItem], children: dict[int, list[TrailItem]],
                     anchor: str, language: str, state: _TaskState, trail: Trail) -> None:
        # Only the best seeds: a passage that cites the best hit is the likeliest subject of the question.
        in_context = {context_key(root.result.doc, root.result.section): root
                      for root in reversed(roots[: self.limits.cited_by_top_seeds]) if root.result.section}

        def target_document(reference: DetectedReference) -> str | None:
            return self.resolver.target_document(reference)[0]

        german = language == "de"
        pulled = 0
        # A seed further down that cites the best seed moves up the same way as a hit below the cut.
        lower_seeds = {root.result.chunk_id: root for root in roots[self.limits.cited_by_top_seeds:]}
        for candidate in [root.result for root in lower_seeds.values()] + pool:
            if pulled >= self.limits.max_cited_by:
                break
            seed = lower_seeds.get(candidate.chunk_id)
            if seed is None and (not state.available(candidate, len(roots)) or candidate.chunk_id in state.root_position):
                continue
            for reference in self._citations(candidate):
                cited = next((in_context[key] for key in cited_keys(reference, target_document) if key in in_context),
                             None)
                if cited is None or (cited.result.doc, cited.result.section) == (candidate.doc, candidate.section):
                    continue
                if seed is not None:  # the seed itself moves, with what it finds itself
                    citer = seed
                    citer.cites, citer.via = cited.result.chunk_id, reference.original_text
                else:
                    state.add(candidate)
                    own = relevance_score(self.kb.similarity([candidate], anchor).get(candidate.chunk_id, 0.0),
                                          anchor, candidate.text, language="english" if language == "en" else "german")
                    own = max(own, candidate.score)
                    citer = TrailItem(candidate, cited.depth, own, own, classify_tier(cited.depth, own),
                                      cites=cited.result.chunk_id, via=reference.original_text, root=cited.root)
                children.setdefault(id(cited), []).insert(0, citer)
                trail.edges.append(ReferenceEdge(
                    from_chunk=candidate.chunk_id, to_chunks=[cited.result.chunk_id], type=reference.type,
                    target=reference.target, depth=cited.depth + 1, decision="followed",
                    reason="zitiert eine Fundstelle im Kontext" if german else "cites a passage in the context",
                    resolution="cited_by", score=round(citer.own_score, 4), from_doc=candidate.doc,
                    from_section=candidate.section, to_docs=[cited.result.doc], to_sections=[cited.result.section]))
                pulled += 1
                break

    def _choose(self, targets: list[VectorResult], cosine: dict[str, float]) -> list[VectorResult]:
        """The chunks of a resolved section most similar to the anchor (`cosine`: chunk id -> similarity,
        computed once per level), in reading order."""
        if len(targets) <= self.limits.chunks_per_reference:
            return targets
        best = sorted(targets, key=lambda t: -cosine.get(t.chunk_id, 0.0))[: self.limits.chunks_per_reference]
        order = {t.chunk_id: index for index, t in enumerate(targets)}
        return sorted(best, key=lambda t: order[t.chunk_id])
