"""The extractive reasoner's shared parts: the embedder read through its band, the question's words,
sentence choice by maximal marginal relevance, and the bookkeeping every role counts in."""

from __future__ import annotations

import logging
import re
import threading

import numpy as np

from rabbithole_lab.evidence.citation_format import citation_label, strip_citations
from rabbithole_lab.evidence.pages import quote_pages
from rabbithole_lab.kb.embedding.embedder import Embedder, reads_language
from rabbithole_lab.language import bridge
from rabbithole_lab.language.detection import detect_language
from rabbithole_lab.messages.catalogue import reasoner_text
from rabbithole_lab.rabbithole.relevance import keyword_overlap
from rabbithole_lab.reasoning.base import ReasonerInfo
from rabbithole_lab.reasoning.extractive.term_weights import TermWeights, sentence_terms
from rabbithole_lab.reasoning.text import (
    concepts as query_concepts,
)
from rabbithole_lab.reasoning.text import (
    contains_concept,
    passage_sentences,
    split_sentences,
    stems,
)
from rabbithole_lab.records import ChunkWithInfo, VectorResult

logger = logging.getLogger(__name__)


SENTENCES_PER_CHUNK = 3
IRRELEVANT_BELOW = 0.12
MEANING_SHARE = 0.6  # of a sentence's relevance, for text the embedder reads; the rest is the question's terms
LANGUAGE_SAMPLE_CHARS = 2_000  # of the context, to tell its language
REMEDIATED_SENTENCES = 5
VECTOR_CACHE_SIZE = 20_000  # 384 floats each: ~30 MB at most
MMR_LAMBDA = 0.7
ON_TOPIC_OVERLAP = 0.3
HELD_MEANING = 0.5  # a text holds a concept in meaning when it lies nearer an answering text than an unrelated one



def sentences_of(chunk: ChunkWithInfo) -> list[str]:
    """A passage's whole sentences, without the heading a continuation repeats."""
    return passage_sentences(chunk.chunk_text, chunk.heading, chunk.continuation)


def reasoner_words(language: str) -> dict:
    return reasoner_text(language)


MEANING_SAMPLE_CHARS = 2000  # of a passage judged by meaning: its opening, where a provision states its subject


class ExtractiveBase:
    """What every extractive role shares: the embedder read through its band, the question's words, counts."""

    # the answer is chosen sentence by sentence from the context, each embedded on the CPU: about
    # ten laws' worth of sections (a 25k-character context per question in the benchmarks, times two)
    context_chars = 50_000
    judges_beyond_search = False

    def __init__(self, embedder: Embedder, reason: str = "LLM_PROVIDER=extractive"):
        self._embedder = embedder
        self.info = ReasonerInfo("extractive", None, reason)
        self.calls = 0
        self.llm_calls = 0
        self.tokens = 0
        self._warnings: list[str] = []
        self._lock = threading.Lock()
        self._vector_cache: dict[str, np.ndarray] = {}

    # ---- bookkeeping ------------------------------------------------------------------------
    def _count(self) -> None:
        with self._lock:
            self.calls += 1

    def drain_warnings(self) -> list[str]:
        with self._lock:
            out, self._warnings = self._warnings, []
        return out

    def _similarities(self, anchor: str, texts: list[str]) -> np.ndarray:
        """Cosine of each text to the anchor, the anchor embedded as a query and the texts as passages
        (the sides an asymmetric model such as e5 was trained on)."""
        if not texts:
            return np.zeros(0, dtype=np.float32)
        return self._vectors(texts) @ self._anchor_vector(anchor)

    def _anchor_vector(self, anchor: str) -> np.ndarray:
        return self._embedder.embed_query(anchor)

    def _meaning(self, cosine: float) -> float:
        """A cosine read through the band of the model that made it: 0 unrelated, 1 answering."""
        return self._embedder.band.score(cosine)

    def _vectors(self, texts: list[str]) -> np.ndarray:
        """Embeddings, each text once per run: extraction, summaries, relevance, synthesis and the quality
        check read the same sentences, and embedding them is most of the reasoner's time on the CPU."""
        with self._lock:
            found = {text: self._vector_cache[text] for text in texts if text in self._vector_cache}
        missing = [text for text in dict.fromkeys(texts) if text not in found]
        if missing:
            fresh = dict(zip(missing, self._embedder.embed_documents(missing), strict=True))
            found |= fresh
            with self._lock:
                if len(self._vector_cache) + len(fresh) > VECTOR_CACHE_SIZE:
                    self._vector_cache.clear()
                self._vector_cache.update(fresh)
        return np.stack([found[text] for text in texts])

    @staticmethod
    def _lexical_anchor(anchor: str) -> str:
        """English questions about German documents compare through the glossary's German terms."""
        extra = bridge.rendering(anchor, bridge.TARGET)
        return f"{anchor} {extra}" if extra else anchor

    def _reads(self, text: str) -> bool:
        """The embedder was trained on the text's language: only then does its similarity say something."""
        return reads_language(self._embedder.languages, detect_language(text[:LANGUAGE_SAMPLE_CHARS]))

    def _held_concepts(self, concepts: list[str], texts: list[str]) -> list[bool]:
        """Which concepts the texts hold: in their words (or a glossary translation), or, in text of a
        language the embedder reads, in their meaning: a passage whose similarity to the concept, read
        through the model's band, lies nearer an answering passage than an unrelated one."""
        if not concepts:
            return []
        text_stems = stems(" ".join(texts))
        held = [contains_concept(c, text_stems, bridge.glossary_alternatives(c)) for c in concepts]
        readable = [text[:MEANING_SAMPLE_CHARS] for text in texts if text.strip() and self._reads(text)]
        if readable and not all(held):
            rows = self._vectors(readable)
            held = [is_held or self._meaning(float((rows @ self._anchor_vector(concept)).max())) > HELD_MEANING
                    for concept, is_held in zip(concepts, held, strict=True)]
        return held

    def _overlap(self, anchor: str, text: str) -> float:
        lexical = self._lexical_anchor(anchor)
        return max(keyword_overlap(lexical, text, "de"), keyword_overlap(anchor, text, "en"))


    @staticmethod
    def _task_terms(task: str, language: str, focus: str = "") -> list[str]:
        """The concepts a task is about: those of its focus, which it carries as data when a template phrased
        it; a task the researcher wrote or edited has none and is read by all its words."""
        return query_concepts(focus or task, language, limit=10)


    # ---- the answer's sentences ----------------------------------------------------------------
    def _sentence_readings(self, anchor: str, chunks: list[ChunkWithInfo]) -> SentenceReadings:
        """How a sentence of this context is read against the question, in two measures: the question's terms
        it carries, each weighted by how few of the context's sentences hold it (`TermWeights`), and, for text
        in a language the embedder was trained on, its meaning. An English-only model (MiniLM) is no evidence
        on German statute text (bench/RESULTS.md, session 12). Synthesis and the quality check read the same
        context, so they agree."""
        sentences = [s for chunk in chunks for s in passage_sentences(chunk.chunk_text, chunk.heading,
                                                                       chunk.continuation)]
        weights = TermWeights(sentences)
        sample = " ".join(sentences)[:LANGUAGE_SAMPLE_CHARS]
        sample_language = detect_language(sample)
        meaning = bool(sample) and reads_language(self._embedder.languages, sample_language)
        # e5 sets an English question further from a German sentence than a German one of the same meaning
        # (bench/RESULTS.md, session 22): the glossary's German terms for the question, asked like a section
        # title (the form the band was measured on), read the sentence in its own language; its meaning is
        # the better of the two readings
        return SentenceReadings(self, anchor, weights, meaning, bridge.rendering(anchor, sample_language))

    # ---- helpers ----------------------------------------------------------------------------
    def _mmr(self, anchor: str, candidates: list[tuple[str, float]], limit: int) -> list[str]:
        """Maximal marginal relevance over (sentence, weight) pairs; returns sentences in pick order."""
        if not candidates:
            return []
        bodies = [strip_citations(sentence) for sentence, _ in candidates]
        anchor_vector, rows = self._anchor_vector(anchor), self._vectors(bodies)
        relevance = [weight * blended(self._meaning(float(rows[i] @ anchor_vector)), self._overlap(anchor, bodies[i]))
                     for i, (_, weight) in enumerate(candidates)]
        picked: list[int] = []
        while len(picked) < min(limit, len(candidates)):
            best, best_value = -1, -1e9
            for i in range(len(candidates)):
                if i in picked:
                    continue
                redundancy = max((float(rows[i] @ rows[j]) for j in picked), default=0.0)
                if redundancy > 0.92:
                    continue
                value = MMR_LAMBDA * relevance[i] - (1 - MMR_LAMBDA) * redundancy
                if value > best_value:
                    best, best_value = i, value
            if best < 0:
                break
            picked.append(best)
        return [candidates[i][0] for i in picked]



class SentenceReadings:
    """A context's sentences read against one anchor: its terms (`terms`, any text, e.g. a question part) and
    the anchor's meaning (`meaning`)."""

    def __init__(self, reasoner: ExtractiveBase, anchor: str, weights: TermWeights, reads_meaning: bool,
                 rendering: str):
        self._reasoner, self.anchor, self.weights = reasoner, anchor, weights
        self.reads_meaning, self._rendering = reads_meaning, rendering

    def terms_of(self, text: str) -> frozenset[str]:
        """The terms of a question (or part) as the sentences are compared with them: an English one's with
        the glossary's German terms."""
        german = bridge.rendering(text, bridge.TARGET)
        return sentence_terms(f"{text} {german}") | sentence_terms(text)

    def terms(self, batch: list[str], text: str | None = None) -> list[float]:
        """Each sentence's share of the term weight of `text` (the anchor when None)."""
        wanted = self.terms_of(self.anchor if text is None else text)
        return [self.weights.overlap(wanted, sentence) for sentence in batch]

    def relevance(self, batch: list[str]) -> list[float]:
        """Each sentence's relevance to the anchor in one number: meaning and terms blended (`MEANING_SHARE`),
        the terms alone where the embedder cannot read the text. A provision's strength and the entry are read
        by it (not by the ranker, whose features they are)."""
        return self.blend(self.terms(batch), self.meaning(batch))

    def blend(self, terms: list[float], meaning: list[float]) -> list[float]:
        """Terms and meaning measured already, blended as `relevance` blends them."""
        if not self.reads_meaning:
            return list(terms)
        return [blended(m, t) for t, m in zip(terms, meaning, strict=True)]

    def meaning(self, batch: list[str]) -> list[float]:
        """Each sentence's similarity to the anchor read through the model's band (0 where it cannot read)."""
        if not self.reads_meaning or not batch:
            return [0.0] * len(batch)
        similarity = self._reasoner._similarities(self.anchor, batch)
        if self._rendering:
            similarity = np.maximum(similarity, self._reasoner._similarities(self._rendering, batch))
        return [self._reasoner._meaning(float(value)) for value in similarity]


def blended(meaning: float, terms: float) -> float:
    """A sentence's relevance from its meaning and its share of the anchor's terms, the one blend every reading
    of a sentence uses (`MEANING_SHARE`; where the embedder cannot read the text, the terms alone are taken
    instead of calling this)."""
    return MEANING_SHARE * meaning + (1 - MEANING_SHARE) * terms


def unique(items: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        key = " ".join(item.split()).lower()
        if key and key not in seen:
            seen.add(key)
            out.append(" ".join(item.split()))
    return out


def cited_sentences(chunks: list[ChunkWithInfo], language: str,
                     weights: dict[str, float] | None = None) -> list[tuple[str, float]]:
    """Every sentence of every extraction, with its citation appended and its tier weight."""
    out: list[tuple[str, float]] = []
    seen: set[str] = set()
    for chunk in chunks:
        for sentence in split_sentences(chunk.extracted_info):
            if sentence in seen:
                continue
            seen.add(sentence)
            weight = (weights or {}).get(chunk.tier, 1.0)
            page, _ = quote_pages(chunk.chunk_text, chunk.page_map, sentence, chunk.page)  # where it starts
            out.append((f"{sentence} {citation_label(chunk.document, page, language)}", weight))
    return out


def normal_question(question: str) -> str:
    return " ".join(re.sub(r"^\s*\d+[.)]\s*", "", question).lower().split())


def doc_name(doc: str) -> str:
    return re.sub(r"\.(?:pdf|md|txt)$", "", doc, flags=re.IGNORECASE)


def passage_provisions(passages: list[VectorResult]) -> list[tuple[str, str]]:
    """("§ 12 QStrG", its title) for each distinct section of the passages, best first."""
    out: dict[str, str] = {}
    for passage in passages:
        if not passage.section:
            continue
        label = f"{passage.section} {doc_name(passage.doc)}"
        heading = " ".join(passage.heading.split())
        title = heading[len(passage.section):].strip(" .:-") if heading.startswith(passage.section) else heading
        out.setdefault(label, title[:70])
    return list(out.items())
