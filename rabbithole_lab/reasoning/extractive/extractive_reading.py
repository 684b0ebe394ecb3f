"""Phase 3 without an LLM: the sentences of a passage that carry the task, the task's assessment and
summary, and a finding's relevance to the question."""

from __future__ import annotations

import logging

from rabbithole_lab.evidence.citation_format import strip_citations
from rabbithole_lab.evidence.pages import quote_pages
from rabbithole_lab.language import addresses_a_model
from rabbithole_lab.rabbithole.relevance import CITATION_DECAY
from rabbithole_lab.reasoning.extractive.extractive_base import (
    IRRELEVANT_BELOW,
    SENTENCES_PER_CHUNK,
    ExtractiveBase,
    blended,
    cited_sentences,
    reasoner_words,
)
from rabbithole_lab.reasoning.text import (
    concepts as query_concepts,
)
from rabbithole_lab.reasoning.text import (
    is_title_line,
    passage_sentences,
    points_elsewhere,
    quote_reason,
)
from rabbithole_lab.records import ChunkWithInfo, PreservedQuote
from rabbithole_lab.schemas import (
    ExtractedReferenceList,
    InfoExtractionWithQuotes,
    RelevanceScore,
    TaskAssessment,
    TaskSummary,
)

logger = logging.getLogger(__name__)


class ExtractiveReader(ExtractiveBase):
    def assess_task(self, task: str, anchor: str, findings: list[ChunkWithInfo], language: str,
                    focus: str = "") -> TaskAssessment:
        """Answered when the passages hold every concept of the task's focus (not its template's words);
        otherwise the concepts they lack are what the next iteration searches for."""
        self._count()
        text = reasoner_words(language)
        wanted = self._task_terms(task, language, focus) or query_concepts(anchor, language)
        if not findings:
            return TaskAssessment(answered=False, missing=wanted[:3], reason=text["task_nothing"])
        held = self._held_concepts(wanted, [f.chunk_text for f in findings])
        missing = [c for c, is_held in zip(wanted, held, strict=True) if not is_held]
        if not missing:
            return TaskAssessment(answered=True, reason=text["task_answered"])
        return TaskAssessment(answered=False, missing=missing[:3],
                              reason=text["task_missing"].format(missing=", ".join(missing[:3])))

    def extract_info(self, chunk, anchor, task, language):
        self._count()
        if chunk.addressed_to_model:  # instructions to a model are no finding: the passage is shown as not used
            return InfoExtractionWithQuotes(extracted_info="")
        # titles and headings alone ("Gesetz zum Schutz vor …") state nothing: keep real sentences
        sentences = [s for s in passage_sentences(chunk.text, chunk.heading, chunk.continuation)
                     if not addresses_a_model(s)]  # document text never speaks to the reader as an instruction
        if not sentences:
            return InfoExtractionWithQuotes(extracted_info="")
        if self._reads(chunk.text):
            similarity = self._similarities(anchor, sentences)
            scored = [(blended(self._meaning(float(similarity[i])), self._overlap(anchor, sentence)), i)
                      for i, sentence in enumerate(sentences)]
        else:  # the embedder's similarity says nothing about text in a language it was not trained on
            scored = [(self._overlap(anchor, sentence), i) for i, sentence in enumerate(sentences)]
        best = sorted(scored, reverse=True)[:SENTENCES_PER_CHUNK]
        if not best or best[0][0] < IRRELEVANT_BELOW:
            return InfoExtractionWithQuotes(extracted_info="")
        chosen = sorted(i for score, i in best if score >= IRRELEVANT_BELOW)
        quotes = []
        for i in chosen:
            reason = quote_reason(sentences[i], language)
            if reason:
                page, _ = quote_pages(chunk.text, chunk.page_map, sentences[i], chunk.page_start)
                quotes.append(PreservedQuote(quote=sentences[i], relevance_reason=reason, document=chunk.doc,
                                             page=page))
        return InfoExtractionWithQuotes(extracted_info=" ".join(sentences[i] for i in chosen),
                                        preserved_quotes=quotes)

    def extract_references(self, text: str) -> ExtractedReferenceList | None:
        return None  # the regex grammar does it

    def summarize_task(self, task, anchor, findings, language):
        self._count()
        text = reasoner_words(language)
        # a summary says what was found: a bibliography line, a web address or a document's title is no finding
        passages = "\n".join(f.chunk_text for f in findings)
        candidates = [(sentence, weight) for sentence, weight in cited_sentences(findings, language)
                      if not points_elsewhere(strip_citations(sentence), passages)
                      and not is_title_line(strip_citations(sentence))]
        picked = self._mmr(anchor, candidates, 5)
        relevant = [f for f in findings if f.extracted_info]
        ranked = sorted((f.relevance_score for f in relevant), reverse=True)[:3]
        score = round(sum(ranked) / len(ranked), 3) if ranked else 0.0
        irrelevant = [f"{f.document} {f.section}".strip() for f in findings if not f.extracted_info]
        return TaskSummary(
            summary=" ".join(picked),
            key_findings=picked[:3],
            relevance_assessment=text["assessment"].format(kept=len(relevant), total=len(findings), score=score),
            relevance_score=min(1.0, score),
            irrelevant_findings=irrelevant,
        )

    def score_relevance(self, anchor, finding, language):
        self._count()
        body = finding.extracted_info or finding.chunk_text
        vector = self._meaning(float(self._similarities(anchor, [body[:2000]])[0])) if self._reads(body) else 0.0
        overlap = self._overlap(anchor, body)
        inherited = finding.relevance_score * CITATION_DECAY if finding.depth > 0 else 0.0
        text = reasoner_words(language)
        note = text["inherited"].format(score=inherited) if inherited else ""
        return RelevanceScore(score=round(min(1.0, max(vector, overlap, inherited)), 4),
                              reason=text["relevance"].format(vector=vector, overlap=overlap, inherited=note))
