"""Reference following for one question or research task (the rabbithole), as a pipeline.

    collect  (collect.py)  the references of the frontier, resolved (exact section lookup first)
    gate     (gate.py)     which of them are worth following, with a score each
    rank     (rank.py)     what every candidate is worth: hits by rank, followed targets by their
                           citer's value and the reference's share of the gate's scores
    stop     (stop.py)     depth, visited set, per-chunk limit, convergence, token budget, early refusal

The follower fills the candidate pool level by level, best-first; `assemble.py` then admits from
the pool under a character budget. Every followed or skipped reference becomes a `ReferenceEdge`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from rabbithole_lab.kb.retrieval.search import KnowledgeBase, result_of
from rabbithole_lab.language.citations_de import opens_paragraph
from rabbithole_lab.rabbithole.backlinks import seed_keys, shown_keys
from rabbithole_lab.rabbithole.candidates import Candidate, Trail
from rabbithole_lab.rabbithole.citation_index import CLOSEST_INDEXED_CITERS, CitationIndex
from rabbithole_lab.rabbithole.collect import (
    Detect,
    PendingReference,
    Pool,
    collect_backlinks,
    collect_references,
    one_per_section,
    reference_edge,
    section_candidates,
    skipped_edge,
    unique_new_chunks,
)
from rabbithole_lab.rabbithole.gate import gate_references
from rabbithole_lab.rabbithole.rank import backlink_value, cited_value, hit_value, landed_value, reference_shares
from rabbithole_lab.rabbithole.relevance import (
    CITATION_DECAY,
    Scored,
    filter_by_relevance,
    lexical_anchor,
    relevance_score,
)
from rabbithole_lab.rabbithole.resolve import ReferenceResolver, window_around
from rabbithole_lab.rabbithole.stop import StopPolicy
from rabbithole_lab.rabbithole.tiers import classify_tier
from rabbithole_lab.records import (
    DetectedReference,
    GateInput,
    GateVerdict,
    NestedChunk,
    Reason,
    ReferenceDecider,
    ReferenceDecision,
    ReferenceEdge,
    VectorResult,
)
from rabbithole_lab.settings import ReferenceSettings

logger = logging.getLogger(__name__)


def follow_notes(pending: list[PendingReference], verdicts: list[GateVerdict], language: str) -> list[GateVerdict]:
    """A footnote of a passage is the passage's own annotation: the passage was judged worth reading, so its
    notes are followed whatever the gate's threshold says of them. Their words rarely resemble the question (a
    note names a source: "SS1/19", a URL), so the gate's score only apportions the citer's value among its
    references. A note scored 0 (a model's gate saying no) would be worth nothing, and is not followed."""
    return [GateVerdict(ReferenceDecision(follow=True, reason_key="note_followed",
                                          reason_values={"score": verdict.score}), verdict.score)
            if item.reference.relation == "note" and not verdict.decision.follow and verdict.score > 0 else verdict
            for item, verdict in zip(pending, verdicts, strict=True)]


class RabbitholeFollower:
    """Builds the candidate pool of one question or task: first-stage hits, followed targets,
    backlinks and the rest of their sections."""

    def __init__(self, kb: KnowledgeBase, decider: ReferenceDecider, settings: ReferenceSettings, detect: Detect,
                 concurrency: int = 4, resolver: ReferenceResolver | None = None):
        self.kb = kb
        self.decider = decider
        self.settings = settings
        self.detect = detect
        self.concurrency = concurrency
        self.resolver = resolver or ReferenceResolver(kb)
        # a rule cited by a longer form of its name ("PRA Fundamental Rule 7") cites the passage that shows the
        # name, in backlinks as in following
        self._shown_name = self.resolver.shown_name
        self.citation_index = CitationIndex(kb, self._target_doc, self._shown_name)

    def run(self, hits: list[VectorResult], anchor: str, language: str = "de", visited: set[str] | None = None,
            whole_sections: bool = True, progress: Callable[[int, int], None] | None = None,
            below_cut: list[VectorResult] | None = None) -> Trail:
        """`hits`: the first-stage ranking (best first). The best `follow_from_top_seeds` of them start
        following; all of them are candidates, and any of them that cites one of the best
        `cited_by_top_seeds` becomes a backlink. `below_cut`: the ranking's continuation; of it, and of the
        hits whose section an earlier hit already stands for, only a passage that cites one of those seeds
        enters, as a backlink of its own (search found what it cites, not it; and the section's holder
        does not make the citation). `progress(done, total)` is told after each reference of a level is decided."""
        policy = StopPolicy(self.settings, visited=set(visited or ()))
        pool = Pool()
        trail = Trail()
        cosine = self.kb.similarity(hits, anchor) if hits else {}
        held: list[VectorResult] = []  # hits whose section an earlier hit stands for
        for hit in hits:
            if pool.holder(hit) is not None:
                held.append(hit)  # backlinks read it (`unique_new_chunks` drops a chunk the pool holds)
                continue
            rank = len(pool.candidates)
            own = self._own_relevance(hit, anchor, language, cosine)
            relevance = max(own, hit.score)  # the retrieval score is relevance evidence too
            pool.add(Candidate(hit, "hit", 0, relevance, own, value=hit_value(rank), rank=rank, root=rank))
        ranked_hits = list(pool.candidates)
        if self.settings.max_cited_by > 0:
            trail.edges += self._backlinks(ranked_hits, pool, anchor, language, [*held, *(below_cut or [])])
        frontier = ranked_hits[: self.settings.follow_from_top_seeds]
        depth = 0
        read_sections: dict[tuple[str, str], list[VectorResult]] = {}
        followed: list[Candidate] = []
        while frontier:
            if not policy.may_descend(depth):
                if any(self.detect(item.result.text, item.result.doc) for item in frontier):
                    trail.stop_reasons.append({"key": "depth_limit", "values": {}})
                break
            frontier = self._level(frontier, anchor, language, policy, pool, trail, read_sections, progress)
            followed += frontier
            depth += 1
        if whole_sections:
            section_candidates(self.kb, ranked_hits[: self.settings.follow_from_top_seeds] + followed, pool, anchor,
                               language, read_sections)
        trail.candidates = pool.candidates
        if self.settings.filter_followed:
            # hits are ranked by retrieval already; the filter guards against drift from following
            scored = [Scored(c, c.relevance) for c in trail.candidates if c.kind == "followed"]
            _, dropped = filter_by_relevance(scored, self.settings.relevance_threshold, self.settings.min_results)
            dropped_ids = {entry.item.chunk_id for entry in dropped}  # type: ignore[attr-defined]
            trail.dropped = [c for c in trail.candidates if c.chunk_id in dropped_ids]
            trail.candidates = [c for c in trail.candidates
                                if c.chunk_id not in dropped_ids and c.parent not in dropped_ids]
        for candidate in trail.candidates:
            candidate.tier = classify_tier(candidate.depth, candidate.relevance)
        trail.visited = sorted(policy.visited)
        trail.tokens_used = policy.tokens
        trail.stop_reasons.extend(stop for stop in ({"key": reason.key, "values": dict(reason.values)}
                                                    for reason in policy.reasons) if stop not in trail.stop_reasons)
        return trail

    # ---- backlinks -------------------------------------------------------------------------------
    def _backlinks(self, hits: list[Candidate], pool: Pool, anchor: str, language: str,
                   others: list[VectorResult]) -> list[ReferenceEdge]:
        """Hits that cite one of the best hits gain part of its value: the question was about the
        citing passage, and search found what it cites. Another passage (`others`: below the cut, or of a
        section a hit holds) that cites one joins the pool so, and only so."""
        seeds = hits[: self.settings.cited_by_top_seeds]
        start = len(pool.candidates)
        below = [Candidate(result, "hit", 0, result.score, 0.0, value=hit_value(start + number), rank=start + number,
                           root=start + number)
                 for number, result in enumerate(unique_new_chunks(others, pool))]
        found = one_per_section(collect_backlinks([*hits, *below], seeds, self.detect, self._target_doc,
                                                     self._shown_name))
        # a citer among the hits search put on top keeps search's order; further down, search order is hardly
        # evidence (decision 026), so such a citer and one search did not rank at all go by closeness alone.
        # A citer on top is in the context already: at least one place goes below it (decision 028)
        on_top = [item for item in found if item[0].rank is not None
                  and item[0].rank < self.settings.follow_from_top_seeds][: self.settings.max_cited_by]
        places_below = max(1, self.settings.max_cited_by - len(on_top))
        further = [item for item in found if item not in on_top]
        indexed = self._indexed_citers(seeds, [*hits, *below], anchor, start + len(below))
        taken = {(citer.result.doc, citer.result.section) for citer, _, _ in found}
        further += [item for item in one_per_section(collect_backlinks(indexed, seeds, self.detect,
                                                                       self._target_doc, self._shown_name))
                    if (item[0].result.doc, item[0].result.section) not in taken]
        closeness = self.kb.similarity([citer.result for citer, _, _ in further], anchor) if further else {}
        further.sort(key=lambda item: -closeness.get(item[0].chunk_id, 0.0))
        on_top += further[:places_below]
        found = on_top
        joining = [citer for citer, _, _ in found if citer.rank is not None and citer.rank >= start]
        if joining:
            cosine = self.kb.similarity([c.result for c in joining], anchor)
            for citer in joining:
                citer.own_relevance = self._own_relevance(citer.result, anchor, language, cosine)
                citer.relevance = max(citer.own_relevance, citer.result.score)
                pool.add(citer)
        citers_of: dict[str, int] = {}
        for _, cited, _ in found:
            citers_of[cited.chunk_id] = citers_of.get(cited.chunk_id, 0) + 1
        edges = []
        for citer, cited, reference in found:
            citer.value = backlink_value(citer.value, cited.value, citers_of[cited.chunk_id])
            citer.kind, citer.cites, citer.via = "backlink", cited.chunk_id, reference.original_text
            edges.append(ReferenceEdge(
                from_chunk=citer.chunk_id, to_chunks=[cited.chunk_id], type=reference.type, target=reference.target,
                depth=1, decision="followed",
                reason_key="cites_context",
                resolution="cited_by", score=round(citer.own_relevance, 4), from_doc=citer.result.doc,
                from_section=citer.result.section, to_docs=[cited.result.doc], to_sections=[cited.result.section],
                to_paragraphs=reference.paragraphs_of(cited.result.section), relation=reference.relation))
        return edges

    def _target_doc(self, reference: DetectedReference) -> str | None:
        return self.resolver.target_document(reference)[0]

    def _indexed_citers(self, seeds: list[Candidate], read: list[Candidate], anchor: str,
                        first_rank: int) -> list[Candidate]:
        """The passages the citation index names as citing a seed, by any key a reference may cite it by, that
        search did not rank (`read`): the `CLOSEST_INDEXED_CITERS` closest to the question, ranked after all
        of the ranking."""
        held = {candidate.chunk_id for candidate in read}
        citing: list[tuple[str, str]] = []  # (collection, chunk id)
        for seed in seeds:
            if seed.result.section:
                keys = [*seed_keys(seed.result.doc, seed.result.section), *shown_keys(seed.result.text)]
                citing += [(seed.result.collection, cid)
                           for cid in self.citation_index.citers(seed.result.collection, keys) if cid not in held]
        if not citing:
            return []
        # the closest by their stored vectors first: only those are read (a rule may have hundreds of citers)
        vector = self.kb.index.embedder.embed_query(anchor)
        cosine: dict[str, float] = {}
        for collection in dict.fromkeys(collection for collection, _ in citing):
            cosine.update(self.kb.index.similarities(collection, [cid for c, cid in citing if c == collection],
                                                     vector))
        closest = sorted(citing, key=lambda item: -cosine.get(item[1], 0.0))[:CLOSEST_INDEXED_CITERS]
        chunks = {chunk.id: chunk for collection in dict.fromkeys(c for c, _ in closest)
                  for chunk in self.kb.index.get_chunks(collection, ids=[cid for c, cid in closest if c == collection])}
        return [Candidate(result_of(chunks[cid], 0.0, "section"), "hit", 0, 0.0, 0.0, value=hit_value(first_rank + n),
                          rank=first_rank + n, root=first_rank + n)
                for n, (_, cid) in enumerate(item for item in closest if item[1] in chunks)]

    # ---- one level of the tree -------------------------------------------------------------------
    def _level(self, frontier: list[Candidate], anchor: str, language: str, policy: StopPolicy, pool: Pool,
               trail: Trail, read_sections: dict[tuple[str, str], list[VectorResult]],
               progress: Callable[[int, int], None] | None = None) -> list[Candidate]:
        pending, edges = collect_references(frontier, self.detect, self.resolver, pool, policy.visited, anchor)
        trail.edges += edges
        if not pending:
            return []
        cosine = self.kb.similarity([t for item in pending for t in item.targets]
                                    + [h.result for item in pending for h in item.holders], anchor)
        verdicts = follow_notes(pending, self._gate(pending, anchor, language, cosine), language)
        # rank: each reference gets its share of its citer's value; best-first over the whole level
        shares: dict[int, float] = {}
        by_citer: dict[str, list[int]] = {}
        for index, item in enumerate(pending):
            by_citer.setdefault(item.citer.chunk_id, []).append(index)
        for indexes in by_citer.values():
            for index, share in zip(indexes, reference_shares([verdicts[i].score for i in indexes]), strict=True):
                shares[index] = share
        order = sorted(range(len(pending)),
                       key=lambda i: (not verdicts[i].decision.follow,
                                      -cited_value(pending[i].citer.value, shares[i]), i))
        next_frontier: list[Candidate] = []
        for position, index in enumerate(order, start=1):
            if progress is not None:
                progress(position, len(order))
            item, verdict = pending[index], verdicts[index]
            # a gate's no always skips, with its reason or, where a model gave none, as declined
            reason = verdict.decision.why() or Reason("gate_declined") if not verdict.decision.follow \
                else policy.skip_reason(item.reference.key, item.citer.chunk_id, item.resolution.doc,
                                        citer_doc=item.citer.result.doc)
            targets = [t for t in item.targets if item.is_new(t, pool)]
            if not reason and not targets and not item.holders:
                reason = Reason("already_in_context")
            if reason:
                trail.edges.append(skipped_edge(item.citer, item.reference, reason, item.resolution, verdict.score))
                continue
            chosen = self._choose(targets, cosine, item.reference.paragraphs_of(targets[0].section if targets else ""),
                                  item.openings)
            value = landed_value(cited_value(item.citer.value, shares[index]), len(item.holders) + len(chosen))
            for holder in item.holders:  # what the context holds already gains the citation's weight
                holder.value += value
            children = [self._followed(target, item, value, anchor, language, cosine) for target in chosen]
            for child in children:
                pool.add(child)
            for target in item.resolution.results:
                if target.section:
                    read_sections.setdefault((target.doc, target.section), []).append(target)
            best = max((child.own_relevance for child in children),
                       default=max((holder.own_relevance for holder in item.holders), default=0.0))
            policy.followed(item.reference.key, item.citer.chunk_id, item.resolution.doc, chosen, best,
                            citer_doc=item.citer.result.doc, counts_for_refusal=item.reference.relation != "note")
            # the reference carries what it resolved to (seed 000's nested_chunks)
            item.reference.nested_chunks = [
                NestedChunk(chunk=child.result.text, document=child.result.doc, page=child.result.page_start,
                            chunk_id=child.chunk_id, section=child.result.section,
                            collection=child.result.collection, relevance_score=round(child.relevance, 4),
                            depth=child.depth) for child in children]
            targets = chosen or [h.result for h in item.holders]
            trail.edges.append(reference_edge(item.citer, item.reference, "followed", verdict.decision.why(),
                                              item.resolution, targets, verdict.score))
            next_frontier += children
        return next_frontier

    def _gate(self, pending: list[PendingReference], anchor: str, language: str, cosine: dict[str, float]):
        """The gate judges what a reference cites by its best chunk: of a section or range, the one holding the
        paragraph the reference names, else the one closest to the anchor (following may then land on the block's
        lead-in, `_choose`: a lead-in is far from any question, its items are not)."""
        inputs = []
        for item in pending:
            options = item.targets or [holder.result for holder in item.holders]
            paragraphs = item.reference.paragraphs_of(options[0].section)
            target = max(options, key=lambda t: (opens_paragraph(t.text, paragraphs), cosine.get(t.chunk_id, 0.0)))
            inputs.append(GateInput(
                reference=item.reference,
                window=window_around(item.citer.result.text, item.reference.start, item.reference.end,
                                     self.settings.gate_window_chars),
                document=item.citer.result.doc,
                target_title=target.heading if item.resolution.path == "section_index" else "",
                target_text=target.text,
                target_similarity=cosine.get(target.chunk_id)))
        return gate_references(inputs, anchor, self.decider, language, self.concurrency)

    def _followed(self, target: VectorResult, item: PendingReference, value: float, anchor: str,
                  language: str, cosine: dict[str, float]) -> Candidate:
        own = self._own_relevance(target, anchor, language, cosine)
        # an exact citation is as relevant as its citer; a search-based hop decays
        decay = 1.0 if item.resolution.path == "section_index" else CITATION_DECAY
        relevance = max(own, round(item.citer.relevance * decay, 4))
        depth = item.citer.depth + 1
        return Candidate(target, "followed", depth, relevance, own, value=value,
                         tier=classify_tier(depth, relevance), parent=item.citer.chunk_id,
                         cited_by=item.citer.chunk_id, via=item.reference.original_text, root=item.citer.root)

    def _own_relevance(self, result: VectorResult, anchor: str, language: str, cosine: dict[str, float]) -> float:
        """The chunk's relevance to the anchor, its words compared in the chunk's language."""
        words, stemmer = lexical_anchor(anchor, language, self.kb.collection_language(result.collection))
        similarity = cosine.get(result.chunk_id, 0.0) if self.kb.embedder_reads(result.collection) else 0.0
        return relevance_score(similarity, self.kb.index.embedder.band, words, result.text, language=stemmer)

    def _choose(self, targets: list[VectorResult], cosine: dict[str, float], paragraphs: list[str] | None = None,
                openings: frozenset[str] = frozenset()) -> list[VectorResult]:
        """The chunks of a resolved section that hold the paragraphs the reference names ("§ 9g Absatz 5": the
        chunk where "(5)" opens), else those most similar to the anchor, a block that opens with a lead-in only by
        its lead-in (decision 030); in reading order."""
        if len(targets) <= self.settings.chunks_per_reference:
            return targets
        if not any(opens_paragraph(t.text, paragraphs) for t in targets):
            # a block a reader starts at its lead-in is taken there, never at one of its items; of several blocks
            # still the closest
            opened = {(t.doc, t.section) for t in targets if t.chunk_id in openings}
            targets = [t for t in targets if (t.doc, t.section) not in opened or t.chunk_id in openings]
        best = sorted(targets, key=lambda t: (not opens_paragraph(t.text, paragraphs),
                                              -cosine.get(t.chunk_id, 0.0)))[: self.settings.chunks_per_reference]
        order = {t.chunk_id: index for index, t in enumerate(targets)}
        return sorted(best, key=lambda t: order[t.chunk_id])
