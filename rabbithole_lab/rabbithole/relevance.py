"""Relevance of a chunk to the query anchor: vector similarity plus keyword overlap.

score = max(meaning, keyword_overlap, inherited), where
  meaning         cosine similarity read through the embedder's band (unrelated -> 0, answering -> 1)
  keyword_overlap share of the anchor's content words (stemmed) found in the chunk (seed formula)
  inherited       a chunk reached through an explicit reference keeps `decay` x its citer's score

Words are compared in the language of the text (`lexical_anchor`): an English question over a German
statute is compared through the glossary's German terms, the bridge the lexical search and the gate use.
Stemming English words and looking for them in German text finds nothing, and that nothing would
read as "irrelevant" to early refusal, the drift filter and the value of a section's other chunks.
"""

from __future__ import annotations

from dataclasses import dataclass

from rabbithole_lab.kb.embedding.embedder import SimilarityBand
from rabbithole_lab.kb.retrieval.lexical import analyze, content_terms
from rabbithole_lab.language.bridge import rendering

CITATION_DECAY = 0.9


def lexical_anchor(anchor: str, anchor_language: str, text_language: str) -> tuple[str, str]:
    """(words, language) to compare `anchor` (asked in `anchor_language`) with text in `text_language` ("de",
    "en"): an anchor the language bridge crosses (English over German text) becomes its glossary terms; with
    none, it stays as it is (nothing to compare it by, and nothing invented)."""
    return rendering(anchor, text_language, anchor_language) or anchor, text_language


def keyword_overlap(anchor: str, text: str, language: str = "de") -> float:
    query_words = content_terms(anchor, language)
    if not query_words:
        return 0.0
    chunk_words = set(analyze(text, language))
    return min(1.0, len(query_words & chunk_words) / len(query_words))


def relevance_score(cosine: float, band: SimilarityBand, anchor: str, text: str, inherited: float = 0.0,
                    language: str = "de") -> float:
    return round(max(band.score(cosine), keyword_overlap(anchor, text, language), inherited), 4)


@dataclass
class Scored:
    item: object
    score: float


def filter_by_relevance(
    scored: list[Scored], threshold: float, min_results: int = 0
) -> tuple[list[Scored], list[Scored]]:
    """(kept, dropped): keep scores >= threshold; backfill from the best rejected up to `min_results`."""
    kept = [entry for entry in scored if entry.score >= threshold]
    rejected = sorted((entry for entry in scored if entry.score < threshold), key=lambda e: -e.score)
    while len(kept) < min_results and rejected:
        kept.append(rejected.pop(0))
    kept_ids = {id(entry) for entry in kept}
    return [entry for entry in scored if id(entry) in kept_ids], rejected
