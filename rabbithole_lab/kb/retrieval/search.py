"""Search use cases over the index: dense, BM25, hybrid (RRF), scoped, section lookup.

Results are `VectorResult` records. `score` is the fused score scaled to [0, 1]
(1 = ranked first by both retrievers); `similarity` on each hit is the cosine
similarity of chunk and query, comparable across modes and collections.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Literal

from rabbithole_lab.kb.embedding.embedder import reads_language
from rabbithole_lab.kb.ingest.sections import (
    block_paths,
    canonical_section,
    label_tokens,
    numbering_kind,
    parent_keys,
    section_key,
    shows_name,
)
from rabbithole_lab.kb.retrieval.query import clauses, lexical_expansion, named_documents
from rabbithole_lab.kb.store.index import ChromaIndex
from rabbithole_lab.kb.store.registry import DocumentRegistry
from rabbithole_lab.language import bridge, repealed_pattern
from rabbithole_lab.records import Chunk, VectorResult
from rabbithole_lab.settings import SearchSettings

logger = logging.getLogger(__name__)

# the whole question's own search against 1 for each of its clauses and `named_document_weight` for a search
# within a document it names
QUESTION_RUN_WEIGHT = 3.0

SearchMode = Literal["hybrid", "dense", "bm25"]


def result_of(chunk: Chunk, score: float, retrieval: str) -> VectorResult:
    """A stored chunk as a search result found by `retrieval`, its score clipped to 0..1."""
    return VectorResult(
        chunk_id=chunk.id,
        text=chunk.text,
        doc=chunk.doc,
        collection=chunk.collection,
        page_start=chunk.page_start,
        page_end=chunk.page_end,
        section=chunk.section,
        heading=chunk.heading,
        score=max(0.0, min(1.0, score)),
        retrieval=retrieval,  # type: ignore[arg-type]
        page_map=chunk.page_map,
        continuation=chunk.continuation,
        char_start=chunk.char_start,
        addressed_to_model=chunk.addressed_to_model,
    )


MAX_REPEALED_RANGE = 200  # "§§ 14 bis 16": longer ranges are read as an error of the text, their ends only


def _repealed_keys(found) -> set[str]:
    unit = "§" if found["unit"].startswith("§") else found["unit"]
    numbers = [found["first"]] + ([found["last"]] if found["last"] else [])
    if found["last"] and found["first"].isdigit() and found["last"].isdigit():
        first, last = int(found["first"]), int(found["last"])
        if 0 < last - first <= MAX_REPEALED_RANGE:
            numbers = [str(n) for n in range(first, last + 1)]
    return {section_key(canonical_section(f"{unit} {number}")) for number in numbers}


def reciprocal_rank_fusion(
    rankings: Iterable[list[str]], k: int = 60, weights: list[float] | None = None
) -> dict[str, float]:
    fused: dict[str, float] = {}
    for index, ranking in enumerate(rankings):
        weight = weights[index] if weights else 1.0
        for rank, key in enumerate(ranking):
            fused[key] = fused.get(key, 0.0) + weight / (k + rank + 1)
    return fused


class KnowledgeBase:
    """Everything upper layers need from the knowledge base."""

    def __init__(self, index: ChromaIndex, registry: DocumentRegistry, settings: SearchSettings):
        self.index = index
        self.registry = registry
        self.settings = settings
        self._keys_of_document: dict[tuple[str, str, int], dict[str, list[Chunk]]] = {}
        self._blocks_of_document: dict[tuple[str, str, int], list[tuple[Chunk, frozenset[str]]]] = {}

    def collections(self) -> list[str]:
        return self.index.collections()

    def _targets(self, collection: str | None, doc: str | None) -> list[str]:
        if collection:
            return [collection]
        if doc:
            owner = self.registry.collection_of(doc)
            if owner:
                return [owner]
        return self.collections()

    def search(
        self,
        query: str,
        k: int = 10,
        mode: SearchMode | None = None,
        collection: str | None = None,
        doc: str | None = None,
        lexical_extra: str = "",
    ) -> list[VectorResult]:
        """Top-k chunks for `query`, optionally scoped to one collection or one document.
        `lexical_extra` is added to the query the lexical fields see (names of the documents it means)."""
        mode = mode or self.settings.mode
        if not query.strip():
            return []
        targets = self._targets(collection, doc)
        candidates = max(k, self.settings.candidates)
        # hybrid search ranks by meaning only where the embedder reads the collection's language
        dense_targets = [t for t in targets if mode == "dense" or (mode == "hybrid" and self.embedder_reads(t))]
        query_vector = (
            self.index.embedder.embed_query(self._dense_query(query, dense_targets)) if dense_targets else None
        )
        where = {"doc": doc} if doc else None
        dense_ranked: list[tuple[str, float]] = []
        bm25_ranked: list[tuple[str, float]] = []
        owner_of: dict[str, str] = {}
        for target in targets:
            if target in dense_targets:
                for chunk_id, similarity in self.index.dense_ids(target, query_vector, candidates, where):
                    dense_ranked.append((chunk_id, similarity))
                    owner_of[chunk_id] = target
            if mode in ("bm25", "hybrid"):
                bm25 = self.index.bm25(target)
                lexical_query = f"{self._bridged(query, bm25.language)} {lexical_extra}".strip()
                for chunk_id, score in bm25.search(lexical_query, candidates, doc=doc):
                    bm25_ranked.append((chunk_id, score))
                    owner_of.setdefault(chunk_id, target)
        dense_ranked.sort(key=lambda item: -item[1])
        bm25_ranked.sort(key=lambda item: -item[1])

        def chunks_of(ids: list[str]) -> dict[str, Chunk]:
            """Only the chunks a search returns are read (ranking works on ids and scores)."""
            by_target: dict[str, list[str]] = {}
            for chunk_id in ids:
                by_target.setdefault(owner_of[chunk_id], []).append(chunk_id)
            return {
                chunk.id: chunk
                for target, wanted in by_target.items()
                for chunk in self.index.get_chunks(target, ids=wanted)
            }

        if mode == "dense":
            top = dense_ranked[:k]
            chunks = chunks_of([cid for cid, _ in top])
            return [result_of(chunks[cid], sim, "dense") for cid, sim in top if cid in chunks]
        if mode == "bm25":
            top = bm25_ranked[:k]
            chunks = chunks_of([cid for cid, _ in top])
            best = top[0][1] if top else 1.0
            return [result_of(chunks[cid], score / best, "bm25") for cid, score in top if cid in chunks]
        # An exact "§ 78" in the query is lexical evidence the embedder cannot see: weight BM25 up.
        lexical_weight = self.settings.bm25_weight * (2.0 if label_tokens(query) else 1.0)
        rankings = [(dense_ranked, 1.0)] if dense_targets else []
        rankings.append((bm25_ranked, lexical_weight))
        weights = [weight for _, weight in rankings]
        fused = reciprocal_rank_fusion(
            [[cid for cid, _ in ranking[:candidates]] for ranking, _ in rankings],
            self.settings.rrf_k,
            weights=weights,
        )
        best_possible = sum(weights) / (self.settings.rrf_k + 1)
        ranked = sorted(fused.items(), key=lambda item: -item[1])[:k]
        chunks = chunks_of([cid for cid, _ in ranked])
        return [result_of(chunks[cid], score / best_possible, "hybrid") for cid, score in ranked if cid in chunks]

    def retrieve(
        self, question: str, k: int = 10, collection: str | None = None, distinct_sections: bool = True
    ) -> list[VectorResult]:
        """First-stage retrieval for a whole question: the question (optionally each of its clauses)
        and a scoped search in every document the question names, fused by reciprocal rank.
        With `distinct_sections` only the best chunk of each section text is kept: a chunk that continues a
        section (a long section's later window) is left out when a chunk of the same (doc, section) is in, while
        separate blocks that share a label (a rule's list items each headed "2.5 (…)", the parts of an annex)
        are texts of their own and each may be a hit."""
        candidates = max(k, self.settings.candidates)
        # the documents the question names (also through the glossary's German for an English question):
        # their names join the lexical query, and each gets a search of its own
        bridged = bridge.glossary_terms(question) if self.settings.glossary_bridge else ""
        named = named_documents(f"{question} {bridged}", self.registry)
        names = " ".join(self.registry.names_of(doc) for doc in named)
        runs = [self.search(question, k=candidates, collection=collection, lexical_extra=names)]
        weights = [QUESTION_RUN_WEIGHT]
        if self.settings.multi_query:
            for clause in clauses(question):
                runs.append(self.search(clause, k=candidates, collection=collection))
                weights.append(1.0)
        for doc in named:  # a search within each named document
            owner = self.registry.collection_of(doc)
            if collection and owner != collection:
                continue
            runs.append(self.search(question, k=candidates, doc=doc, collection=owner))
            weights.append(self.settings.named_document_weight)
        by_id = {hit.chunk_id: hit for run in runs for hit in run}
        fused = reciprocal_rank_fusion([[hit.chunk_id for hit in run] for run in runs], self.settings.rrf_k,
                                       weights=weights)
        best_possible = sum(weights) / (self.settings.rrf_k + 1)
        ranked = sorted(fused.items(), key=lambda item: -item[1])
        results: list[VectorResult] = []
        sections: dict[tuple[str, str], bool] = {}  # (doc, section) -> a taken chunk of it continues its section
        for cid, score in ranked:
            hit = by_id[cid]
            key = (hit.doc, hit.section or cid)
            if distinct_sections and key in sections and (hit.continuation or sections[key]):
                continue
            sections[key] = sections.get(key, False) or hit.continuation
            results.append(hit.model_copy(update={"score": min(1.0, score / best_possible)}))
            if len(results) == k:
                break
        return results

    def _dense_query(self, query: str, targets: list[str]) -> str:
        """What the dense leg embeds: an English question over German text also carries the glossary's German
        terms, as the lexical leg does. A small multilingual model matches a query in the documents' own
        language better than across languages (dev English questions: both@12k 0.552 -> 0.655, bench/RESULTS.md)."""
        if any(bridge.gives_terms_in(self.collection_language(target)) for target in targets):
            return self._bridged(query, bridge.TARGET)
        return query

    def _bridged(self, query: str, index_language: str) -> str:
        return lexical_expansion(query, index_language) if self.settings.glossary_bridge else query

    def holds_term(self, term: str, collection: str | None = None, context: str = "") -> bool:
        """The collection's text holds the term's words (any inflection, or inside a compound), or, over German
        text, the glossary's German term for it ("employee" -> "Beschäftigte") or for the phrase of `context`
        (the question) the term is a word of ("effective" in "the effective dose" -> "effektive Dosis")."""
        phrases = [" ".join(terms) for phrase, terms in bridge.glossary_phrases(context)
                   if term.lower() in phrase.split()]
        for target in self._targets(collection, None):
            bm25 = self.index.bm25(target)
            renderings = [bridge.glossary_terms(term), *phrases] if bridge.gives_terms_in(bm25.language) else []
            if any(bm25.holds_words(text) for text in (term, *renderings) if text):
                return True
        return False

    def term_share(self, word: str, collection: str | None = None) -> float:
        """The share of the collection's chunks that hold `word` (over German text, an English word by the
        glossary's German term): how little the word tells one passage from another."""
        holding = total = 0
        for target in self._targets(collection, None):
            bm25 = self.index.bm25(target)
            translated = bridge.glossary_terms(word) if bridge.gives_terms_in(bm25.language) else ""
            holding += max(bm25.chunks_holding(text) for text in (word, translated) if text)
            total += len(bm25.ids)
        return holding / total if total else 0.0

    def embedder_reads(self, collection: str) -> bool:
        """Whether the embedder was trained on the language of `collection`. MiniLM reads English only: on
        German statutes its similarity ranked the entry section lower than BM25 alone did, so with it hybrid
        search of such a collection is lexical (dense search stays available as a mode)."""
        return reads_language(self.index.embedder.languages, self.collection_language(collection))

    def collection_language(self, collection: str) -> str:
        """The language ("de", "en") `collection` is written in, as its BM25 index knows it."""
        return self.index.bm25(collection).language

    def corpus_language(self, collection: str | None = None) -> str:
        """'de' or 'en': the language most of the searched collections are written in."""
        languages = [self.collection_language(target) for target in self._targets(collection, None)]
        german = languages.count("de")
        return "de" if german * 2 >= len(languages) else "en"

    def search_by_database_name(
        self, database_name: str, query: str, k: int = 10, mode: SearchMode | None = None
    ) -> list[VectorResult]:
        """Search one collection chosen by name (the UI's collection picker)."""
        return self.search(query, k=k, mode=mode, collection=database_name)

    def section_lookup(self, doc: str, section: str, collection: str | None = None) -> list[VectorResult]:
        """All chunks of one section of one document, in reading order (exact, no ranking).

        Matches the label ("§ 78", "Anlage 4") or its key ("70(1)" for "Part 6.Chapter 1.70.(1)");
        a sub-paragraph falls back to its parent ("3.10.7(g)" -> "3.10.7"), and a rule to its paragraphs:
        "19.14.2" -> "19.14.2.(1)", "19.14.2.(2)", beside the rule's own passages if it has any ("Article 8"
        of a regulation is its paragraphs "Article 8(1)" … and the passage "Article 8" that lists its
        amending instruments).
        """
        label = canonical_section(section)
        targets = self._targets(collection, doc)
        for target in targets:
            chunks = self.index.get_chunks(target, where={"$and": [{"doc": doc}, {"section": label}]})
            if chunks:
                chunks.sort(key=lambda chunk: chunk.char_start)
                return [result_of(chunk, 1.0, "section") for chunk in chunks]
        own = section_key(label)
        for key in parent_keys(own):
            for target in targets:
                chunks = self.index.get_chunks(target, where={"$and": [{"doc": doc}, {"section_key": key}]})
                if chunks:
                    if key == own:  # "Article 8" is also its paragraphs "Article 8(1)", "Article 8(2)", …
                        held = {chunk.id for chunk in chunks}
                        chunks += [chunk for chunk in self._sub_paragraphs(target, doc, key) if chunk.id not in held]
                    chunks.sort(key=lambda chunk: chunk.char_start)
                    return [result_of(chunk, 1.0, "section") for chunk in chunks]
        # "Rule 19.14.2" of a rulebook that has only its paragraphs "19.14.2.(1)", "19.14.2.(2)", …
        for target in targets:
            chunks = self._sub_paragraphs(target, doc, section_key(label))
            if chunks:
                return [result_of(chunk, 1.0, "section") for chunk in chunks]
        return []

    def _sub_paragraphs(self, collection: str, doc: str, key: str) -> list[Chunk]:
        """The chunks whose section key continues `key` with a sub-paragraph ("19.14.2(1)" for "19.14.2"),
        in reading order."""
        if not key or key.startswith(("§", "Art.", "Anlage")):
            return []
        by_key = self._document_keys(collection, doc)
        chunks = [chunk for child, found in by_key.items() if child.startswith(f"{key}(") for chunk in found]
        return sorted(chunks, key=lambda chunk: chunk.char_start)

    def _document_keys(self, collection: str, doc: str) -> dict[str, list[Chunk]]:
        """One document's chunks by section key. Chroma cannot match a prefix, so a document's keys are read
        once and kept while its collection keeps its size."""
        cache_key = (collection, doc, self.index.count(collection))
        by_key = self._keys_of_document.get(cache_key)
        if by_key is None:
            by_key = {}
            for chunk in self.index.get_chunks(collection, where={"doc": doc}):
                by_key.setdefault(section_key(chunk.section), []).append(chunk)
            self._keys_of_document[cache_key] = by_key
        return by_key

    def block_lookup(self, doc: str, blocks: list[str], collection: str | None = None) -> list[VectorResult]:
        """The chunks of `doc` inside a labelled block its heading paths show (`sections.heading_blocks`:
        ["table1"], ["chapter2", "(vi)"], ["chapter2", "(i)", "(d)"]), in reading order."""
        wanted = set(blocks)
        return [result_of(chunk, 1.0, "section") for target in self._targets(collection, doc)
                for chunk, path in self._document_blocks(target, doc) if wanted <= path]

    def _document_blocks(self, collection: str, doc: str) -> list[tuple[Chunk, frozenset[str]]]:
        """One document's chunks in reading order, each with the blocks of its heading path
        (`sections.block_paths`); read once while the collection keeps its size, as `_document_keys`."""
        cache_key = (collection, doc, self.index.count(collection))
        found = self._blocks_of_document.get(cache_key)
        if found is None:
            chunks = sorted((chunk for same_key in self._document_keys(collection, doc).values()
                             for chunk in same_key), key=lambda chunk: chunk.char_start)
            found = list(zip(chunks, block_paths([chunk.section for chunk in chunks]), strict=True))
            self._blocks_of_document[cache_key] = found
        return found

    def repealed_sections(self, doc: str, collection: str | None = None) -> set[str]:
        """The section keys a document says are gone ("§§ 14 bis 16 (weggefallen)": § 14, § 15 and § 16), read
        from its text (`language.repealed_pattern`); a range is expanded as far as MAX_REPEALED_RANGE."""
        keys: set[str] = set()
        for target in self._targets(collection, doc):
            for chunks in self._document_keys(target, doc).values():
                for chunk in chunks:
                    for found in repealed_pattern().finditer(chunk.text):
                        keys |= _repealed_keys(found)
        return keys

    def numbered_sections(self, doc: str, kind: str, collection: str | None = None) -> int:
        """How many distinct sections of one numbering (`numbering_kind`: "§", "art", "number", …) the
        document's section index holds: with any, a section of that numbering it lacks is missing there, not
        merely unlabelled (`resolve.MIN_NUMBERED_SECTIONS`)."""
        keys = {key for target in self._targets(collection, doc) for key in self._document_keys(target, doc)
                if key and numbering_kind(key) == kind}
        return len(keys)

    def documents_with_section(self, section: str, collection: str | None = None) -> dict[str, list[VectorResult]]:
        """Every document that has a section with this exact label or key, with its chunks in reading order."""
        label = canonical_section(section)
        found: dict[str, list[VectorResult]] = {}
        for target in self._targets(collection, None):
            chunks = self.index.get_chunks(target, where={"section": label}) or self.index.get_chunks(
                target, where={"section_key": section_key(label)}
            )
            for chunk in chunks:  # get_chunks returns them by document, in reading order
                found.setdefault(chunk.doc, []).append(result_of(chunk, 1.0, "section"))
        return found

    def documents_showing(self, name: str, collection: str | None = None,
                          doc: str | None = None) -> dict[str, list[VectorResult]]:
        """Every document (or only `doc`) with a passage that opens with `name` as its own label ("Fundamental
        Rule 7: A firm must …", `sections.shows_name`), with those passages in reading order."""
        found: dict[str, list[VectorResult]] = {}
        for target in self._targets(collection, doc):
            for chunk in self.index.get_chunks(target, where={"doc": doc} if doc else None, containing=name):
                if shows_name(chunk.text, name):
                    found.setdefault(chunk.doc, []).append(result_of(chunk, 1.0, "section"))
        return found

    def similarity(self, results: list[VectorResult], query: str) -> dict[str, float]:
        """Cosine similarity of each result's chunk to `query`."""
        vector = self.index.embedder.embed_query(query)
        out: dict[str, float] = {}
        by_collection: dict[str, list[str]] = {}
        for result in results:
            by_collection.setdefault(result.collection, []).append(result.chunk_id)
        for collection, ids in by_collection.items():
            out.update(self.index.similarities(collection, ids, vector))
        return out
