"""Collect: the candidates a level of following may add, before anything is decided.

- `Pool` holds the candidates of one run and answers "is this chunk or its section in already?";
- `collect_references` detects the references of a frontier, drops those already visited or that
  resolve to nothing new, and resolves the rest (exact section lookup first);
- `collect_backlinks` finds first-stage hits that cite one of the best hits, or the numbered chapter
  that holds one (an exact key match, no search);
- `section_candidates` offers the other chunks of a candidate's section.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from rabbithole_lab.kb.retrieval.search import KnowledgeBase
from rabbithole_lab.language import repealed_spans
from rabbithole_lab.rabbithole.backlinks import SectionKey, cited_keys, seed_keys, shown_keys
from rabbithole_lab.rabbithole.candidates import Candidate
from rabbithole_lab.rabbithole.rank import new_terms_share
from rabbithole_lab.rabbithole.references import is_own_label
from rabbithole_lab.rabbithole.relevance import lexical_anchor
from rabbithole_lab.rabbithole.resolve import ReferenceResolver, Resolution
from rabbithole_lab.records import DetectedReference, Reason, ReferenceEdge, VectorResult

Detect = Callable[[str, str | None], list[DetectedReference]]


class Pool:
    """The candidates of one run, by chunk and by section."""

    def __init__(self) -> None:
        self.candidates: list[Candidate] = []
        self._by_chunk: dict[str, Candidate] = {}
        self._by_section: dict[tuple[str, str], Candidate] = {}

    def add(self, candidate: Candidate) -> None:
        self.candidates.append(candidate)
        self._by_chunk[candidate.chunk_id] = candidate
        if candidate.result.section:
            self._by_section.setdefault((candidate.result.doc, candidate.result.section), candidate)

    def holder(self, result: VectorResult) -> Candidate | None:
        """The candidate that already stands for this chunk: the chunk itself or its section."""
        found = self._by_chunk.get(result.chunk_id)
        if found is None and result.section:
            found = self._by_section.get((result.doc, result.section))
        return found

    def has_chunk(self, chunk_id: str) -> bool:
        return chunk_id in self._by_chunk


def unique_new_chunks(results: list[VectorResult], pool: Pool) -> list[VectorResult]:
    """`results` without the chunks the pool holds and without repeats, in order. A chunk whose section
    the pool stands for is kept: its holder does not say what it says."""
    seen: set[str] = set()
    out = []
    for result in results:
        if not pool.has_chunk(result.chunk_id) and result.chunk_id not in seen:
            seen.add(result.chunk_id)
            out.append(result)
    return out


@dataclass
class PendingReference:
    """A resolved reference of a frontier chunk, waiting for the gate."""

    citer: Candidate
    reference: DetectedReference
    resolution: Resolution
    targets: list[VectorResult]  # resolved chunks that are new to the pool
    holders: list[Candidate]  # candidates already standing for resolved chunks (they gain value if followed)
    openings: frozenset[str] = field(default_factory=frozenset)  # where a reader starts: lead-ins, chapter starts

    def is_new(self, target: VectorResult, pool: Pool) -> bool:
        """Whether `target` still adds to the pool: nothing stands for its chunk or its section, or it is where a
        reader starts in a cited block (`opening_chunks`) and the pool holds only another part of the block."""
        return pool.holder(target) is None or (target.chunk_id in self.openings and not pool.has_chunk(target.chunk_id))


def opening_chunks(reference: DetectedReference, resolution: Resolution) -> frozenset[str]:
    """The chunks where the blocks a reference resolved to begin with a lead-in (the first chunk of a section, in
    reading order, ending in a colon), when it names no paragraph of them. A reader following "rule 4.10" opens it
    at the lead-in its items complete ("A critical third party must manage incidents including by:"); without it
    an item says nothing. A block that opens with a statement of its own ("§ 83 (1) …") has no such need: there
    the chunk closest to the question is taken. A chapter, appendix or heading cited whole lands where it begins
    (`ReferenceResolver._block_beginnings`). Only an exact section lookup resolves whole sections; a search's
    hits are no block."""
    if resolution.path != "section_index":
        return frozenset()
    if resolution.beginnings:  # a chapter, appendix or heading cited whole: where it begins is where it is cited
        return frozenset(result.chunk_id for result in resolution.results)
    seen: set[tuple[str, str]] = set()
    openings = []
    for result in resolution.results:
        block = (result.doc, result.section)
        if result.section and block not in seen and not reference.paragraphs_of(result.section) \
                and result.text.rstrip().endswith(":"):
            openings.append(result.chunk_id)
        seen.add(block)
    return frozenset(openings)


def citations(detect: Detect, result: VectorResult) -> list[DetectedReference]:
    """The references in a chunk, without its own heading label; none in text addressed to a model ("ignoriere
    § 1", "verschweige § 1 MeldG" are instructions, not citations: such a passage never leads anywhere)."""
    if result.addressed_to_model:
        return []
    # "§§ 14 bis 16 (weggefallen)" in a passage's text is the law saying they are gone, not citing them
    repealed = repealed_spans(result.text)
    return [reference for reference in detect(result.text, result.doc)
            if not is_own_label(reference, result.text, result.section)
            and not any(reference.original_text in span for span in repealed)]


def one_per_target(references: list[DetectedReference]) -> list[DetectedReference]:
    """One chunk citing "§ 12" twice is one edge: the first reference, naming the paragraphs of all of them
    ("§ 12 Absatz 1 … § 12 Absatz 3" cites paragraphs 1 and 3)."""
    first: dict[str, DetectedReference] = {}
    for reference in references:
        kept = first.setdefault(reference.key, reference)
        if kept is not reference:
            for section, paragraphs in reference.paragraphs.items():
                named = kept.paragraphs.setdefault(section, [])
                named.extend(paragraph for paragraph in paragraphs if paragraph not in named)
    return list(first.values())


def skipped_edge(citer: Candidate, reference: DetectedReference, reason: Reason, resolution: Resolution | None = None,
                 score: float = 0.0) -> ReferenceEdge:
    return reference_edge(citer, reference, "skipped", reason, resolution, [], score)


def reference_edge(citer: Candidate, reference: DetectedReference, decision: str, reason: Reason,
                   resolution: Resolution | None, targets: list[VectorResult], score: float) -> ReferenceEdge:
    # a skipped reference still records where it points (to_docs/to_sections), not what was taken
    located = targets or (resolution.results[:1] if resolution is not None and resolution.results else [])
    sections = {t.section for t in located}
    return ReferenceEdge(
        from_chunk=citer.chunk_id, to_chunks=[t.chunk_id for t in targets], type=reference.type,
        target=reference.target, depth=citer.depth + 1, decision=decision,  # type: ignore[arg-type]
        **reason.edge_fields(), resolution=resolution.path if resolution else "", score=round(score, 4),
        from_doc=citer.result.doc, from_section=citer.result.section,
        to_docs=[t.doc for t in located], to_sections=[t.section for t in located],
        to_paragraphs=reference.paragraphs_of(sections.pop() if len(sections) == 1 else ""),
        relation=reference.relation)


def collect_references(frontier: list[Candidate], detect: Detect, resolver: ReferenceResolver, pool: Pool,
                       visited: set[str], anchor: str,
                       ) -> tuple[list[PendingReference], list[ReferenceEdge]]:
    """Every reference of the frontier that resolves to something, with the edges of those that do not."""
    pending: list[PendingReference] = []
    edges: list[ReferenceEdge] = []
    for citer in frontier:
        citer.references = citations(detect, citer.result)
        for reference in one_per_target(citer.references):
            if reference.type == "external":
                edges.append(skipped_edge(citer, reference, Reason("url_recorded"), Resolution("external")))
                continue
            if reference.key in visited:
                edges.append(skipped_edge(citer, reference, Reason("already_visited")))
                continue
            if reference.version:
                edges.append(skipped_edge(citer, reference, Reason("earlier_version", {"version": reference.version})))
                continue
            resolution = resolver.resolve(reference, anchor, citer.result.section)
            reference.found = resolution.found
            reference.resolution = resolution.path
            if not resolution.found:
                visited.add(reference.key)  # nothing to find: never ask again
                if resolution.path in ("section_not_found", "section_repealed"):
                    law = resolver.kb.registry.abbreviation_of(resolution.doc or "") or resolution.doc
                    reason = Reason(resolution.path, {"law": law or ""})
                else:
                    reason = Reason("not_in_collection" if resolution.path == "not_in_collection" else "not_in_kb")
                edges.append(skipped_edge(citer, reference, reason, resolution))
                continue
            own_section = (citer.result.doc, citer.result.section)
            item = PendingReference(citer, reference, resolution, [], [], opening_chunks(reference, resolution))
            for result in resolution.results:
                if result.chunk_id == citer.chunk_id or \
                        (result.section and (result.doc, result.section) == own_section):
                    continue
                if item.is_new(result, pool):
                    item.targets.append(result)
                elif (holder := pool.holder(result)) is not citer and holder not in item.holders:
                    item.holders.append(holder)
            if not item.targets and not item.holders:
                edges.append(skipped_edge(citer, reference, Reason("already_in_context"), resolution))
                continue
            pending.append(item)
    return pending, edges


def collect_backlinks(hits: list[Candidate], seeds: list[Candidate], detect: Detect,
                      target_document: Callable[[DetectedReference], str | None],
                      shown_name: Callable[[str], str] | None = None,
                      ) -> list[tuple[Candidate, Candidate, DetectedReference]]:
    """(citer, cited seed, reference) for every hit that cites one of `seeds` by exact section key: first those
    citing a seed's own section, then those citing the numbered chapter that holds one (weaker evidence: a
    chapter holds many rules); each in the hits' order."""
    own: dict[SectionKey, Candidate] = {}
    holding: dict[SectionKey, Candidate] = {}
    for seed in reversed(seeds):  # the better seed wins a key
        if seed.result.section:
            keys = seed_keys(seed.result.doc, seed.result.section)
            own.update({key: seed for key in [keys[0], *shown_keys(seed.result.text)]})
            holding.update({key: seed for key in keys[1:]})
    exact, by_chapter = [], []
    for hit in hits:
        if hit in seeds:
            continue
        references = [(reference, cited_keys(reference, target_document, shown_name))
                      for reference in citations(detect, hit.result)]
        for wanted, found in ((own, exact), (holding, by_chapter)):
            match = next(((wanted[key], reference) for reference, keys in references for key in keys
                          if key in wanted and (wanted[key].result.doc, wanted[key].result.section)
                          != (hit.result.doc, hit.result.section)), None)
            if match is not None:
                found.append((hit, *match))
                break
    return exact + by_chapter


def one_per_section(found: list[tuple[Candidate, Candidate, DetectedReference]]
                    ) -> list[tuple[Candidate, Candidate, DetectedReference]]:
    """The backlinks with one citer per section, the first: a section's second chunk citing a seed is the same
    provision's citation, and would take the place of another provision that cites it. Also a separate block
    that shares the label (a rule's list items each headed "4.24B (…)"): letting each compete gained one UKFIN
    question and cost German answers two verdicts (docs/decisions/043)."""
    seen: set[tuple[str, str]] = set()
    out = []
    for item in found:
        citer = item[0].result
        if citer.section and (citer.doc, citer.section) in seen:
            continue
        seen.add((citer.doc, citer.section))
        out.append(item)
    return out


def section_candidates(kb: KnowledgeBase, anchors: list[Candidate], pool: Pool, question: str, language: str,
                       known: dict[tuple[str, str], list[VectorResult]] | None = None) -> list[Candidate]:
    """The other chunks of each anchor's section, each worth the anchor's value times the share of the
    question's terms it adds to the anchor. `known` holds sections already read (doc, section -> chunks)."""
    out: list[Candidate] = []
    for anchor_item in anchors:
        result = anchor_item.result
        if not result.section or anchor_item.value <= 0:
            continue
        chunks = (known or {}).get((result.doc, result.section))
        if chunks is None:
            chunks = kb.section_lookup(result.doc, result.section, result.collection)
        for chunk in chunks:
            if pool.has_chunk(chunk.chunk_id):
                continue
            words, stemmer = lexical_anchor(question, language, kb.collection_language(chunk.collection))
            share = new_terms_share(words, result.text, chunk.text, stemmer)
            candidate = Candidate(chunk, "section", anchor_item.depth, anchor_item.relevance,
                                  value=anchor_item.value * share, tier=anchor_item.tier, parent=anchor_item.chunk_id,
                                  root=anchor_item.root, cited_by=anchor_item.cited_by, via=anchor_item.via)
            pool.add(candidate)
            out.append(candidate)
    return out
