"""Phase 4 without an LLM: the answer as cited quotations, its quality from measurable properties, and
the decision to write it again."""

from __future__ import annotations

import logging
from collections.abc import Callable

from rabbithole_lab.language import detect_language
from rabbithole_lab.reasoning import quality
from rabbithole_lab.reasoning.answer import (
    MAX_SENTENCES,
    Provision,
    Sentence,
    entry_provisions,
    links_of,
    plan_answer,
    provisions_of,
    reached_from,
)
from rabbithole_lab.reasoning.answer_shape import SENTENCES_PER_TASK, shape_answer
from rabbithole_lab.reasoning.answer_text import written_answer
from rabbithole_lab.reasoning.base import AnswerTask, SynthesisInput
from rabbithole_lab.reasoning.dialogue_terms import excluded
from rabbithole_lab.reasoning.extractive_base import (
    FIGURE_BONUS,
    IRRELEVANT_BELOW,
    LANGUAGE_SAMPLE_CHARS,
    MEANING_SHARE,
    ON_TOPIC_OVERLAP,
    REMEDIATED_SENTENCES,
    ExtractiveBase,
    reasoner_words,
    supported_by_source,
)
from rabbithole_lab.reasoning.passages import joined_passages
from rabbithole_lab.reasoning.term_weights import TermWeights, sentence_terms
from rabbithole_lab.reasoning.text import (
    asks_about_authorisation,
    authorises_regulation,
    has_figure,
    passage_sentences,
    strip_citations,
)
from rabbithole_lab.records import ChunkWithInfo
from rabbithole_lab.schemas import (
    QualityAssessment,
    RemediationDecision,
    SynthesisFinding,
    SynthesisOutput,
)

logger = logging.getLogger(__name__)


def _sentences_of(chunk: ChunkWithInfo) -> list[str]:
    return passage_sentences(chunk.chunk_text, chunk.heading, chunk.continuation)

PART_MISSING_RELEVANCE = 50  # of 100: the answer leaves out a part the researcher asked for


class ExtractiveWriter(ExtractiveBase):
    # ---- Phase 4 ----------------------------------------------------------------------------
    def _sentence_scorer(self, anchor: str,
                         chunks: list[ChunkWithInfo]) -> Callable[[list[str]], list[float]]:
        """How much a sentence of this context says about the question: the question's terms it carries,
        each weighted by how few of the context's sentences hold it (`TermWeights`), its figures (a limit,
        a deadline, an amount is what a question about a provision usually wants), and, for text in a
        language the embedder was trained on, its meaning. An English-only model (MiniLM) is no evidence on
        German statute text: every share of its similarity in the score cost answer facts on the dev
        questions (bench/RESULTS.md, session 12). Synthesis and the quality check build the scorer from the
        same context, so they agree."""
        sentences = [s for chunk in chunks for s in passage_sentences(chunk.chunk_text, chunk.heading,
                                                                       chunk.continuation)]
        weights = TermWeights(sentences)
        question = sentence_terms(self._lexical_anchor(anchor)) | sentence_terms(anchor)
        sample = " ".join(sentences)[:LANGUAGE_SAMPLE_CHARS]
        meaning = bool(sample) and self._reads(sample)
        enabling_is_no_answer = not asks_about_authorisation(anchor)

        def score(batch: list[str]) -> list[float]:
            terms = [weights.overlap(question, s) for s in batch]
            if meaning and batch:
                similarity = self._similarities(anchor, batch)
                terms = [MEANING_SHARE * self._meaning(float(similarity[i])) + (1 - MEANING_SHARE) * term
                         for i, term in enumerate(terms)]
            return [0.0 if enabling_is_no_answer and authorises_regulation(s) else
                    term + (FIGURE_BONUS if has_figure(s) else 0.0) for s, term in zip(batch, terms, strict=True)]

        return score

    def synthesize(self, request: SynthesisInput) -> SynthesisOutput:
        self._count()
        language = request.language
        text = reasoner_words(language)
        chunks = request.all_chunks()
        provisions = provisions_of(chunks, _sentences_of, self._sentence_scorer(request.anchor, chunks))
        # what the researcher excluded is not presented as applicable: its sentences are left out
        for provision in provisions:
            provision.sentences = [s for s in provision.sentences if not excluded(s.text, request.exclusions)]
        # a rewrite keeps fewer sentences, each carrying a term of the question
        if request.remediation:
            for provision in provisions:
                provision.sentences = [s for s in provision.sentences if self._overlap(request.anchor, s.text) > 0]
        plan = plan_answer(provisions, IRRELEVANT_BELOW, REMEDIATED_SENTENCES if request.remediation else MAX_SENTENCES,
                           links_of(request.chains))
        if not plan.parts:
            return SynthesisOutput(answer=text["no_answer"].format(anchor=request.question or request.anchor))
        # a rewrite keeps to the plan's fewer sentences: no task adds its own
        shaped = shape_answer(plan, provisions, request.tasks,
                              (lambda task, found: []) if request.remediation else
                              (lambda task, found: self._own_sentences(task, found, request.exclusions)))
        lines = written_answer(shaped, language)
        findings = [SynthesisFinding(claim=s.text, sources=[f"{provision.doc} p. {s.page}"])
                    for provision, s in shaped.opening]
        return SynthesisOutput(answer="\n".join(lines), key_findings=findings)

    def _own_sentences(self, task: AnswerTask, found: list[Provision],
                       exclusions: list[str]) -> list[tuple[Provision, list[Sentence]]]:
        """A task's best sentences by its own words: what a task the researcher wrote asked for. A planned
        task's sentence must also be on the question; the researcher's own task is read as written."""
        chunks = [chunk for provision in found for chunk in provision.chunks]
        if not chunks:
            return []
        by_key = {(p.doc, p.section): p for p in found}
        candidates: list[tuple[float, Provision, Sentence]] = []
        for own in provisions_of(chunks, _sentences_of, self._sentence_scorer(task.task, chunks)):
            target = by_key[(own.doc, own.section)]
            # the sentence as the answer's provision holds it, so the answer never quotes it twice
            held = {s.text: s for s in target.sentences}
            candidates += [(sentence.score, target, held[sentence.text]) for sentence in own.sentences
                           if sentence.score >= IRRELEVANT_BELOW and sentence.text in held
                           and (task.own or held[sentence.text].score >= IRRELEVANT_BELOW)
                           and not excluded(sentence.text, exclusions)]
        best = sorted(candidates, key=lambda item: -item[0])[:SENTENCES_PER_TASK]
        out: dict[int, tuple[Provision, list[Sentence]]] = {}
        for _, provision, sentence in best:
            out.setdefault(id(provision), (provision, []))[1].append(sentence)
        return [(provision, sorted(sentences, key=lambda s: s.order)) for provision, sentences in out.values()]

    def assess_quality(self, query, answer, sources, language, parts=None):
        """Measured, not estimated (see `quality.py`): citations whose quotation starts on the cited page,
        statements their source supports, whole sentences without repeats, and whether the answer quotes
        the decisive provision and what it refers to."""
        self._count()
        text = reasoner_words(language)
        found = quality.statements(answer)
        cited = [s for s in found if s.citations]
        passages = joined_passages(sources)  # a quotation may run over a chunk boundary, as the answer's may
        correct = [s for s in cited if quality.on_cited_page(s, passages)]
        by_page: dict[tuple[str, int], list[str]] = {}
        for source in passages:
            for page in range(source.page, (source.page_end or source.page) + 1):
                by_page.setdefault((source.document, page), []).append(source.chunk_text)
        supported = [s for s in cited if supported_by_source(s.quote, s.citations, by_page)]
        quotes = [" ".join(s.quote.split()) for s in found]
        duplicates = len(quotes) - len(set(quotes))
        fragments = sum(1 for q in quotes if quality.is_fragment(q))
        citation_correctness = round(100 * len(correct) / len(found)) if found else 0
        factual_accuracy = round(100 * len(supported) / len(cited)) if cited else 0
        structure = (40 if found else 0) + (30 if len(found) >= 2 else 0) + 30
        structure = max(0, structure - 25 * fragments - 20 * duplicates)
        on_topic = [q for q in quotes if self._overlap(query, q) >= ON_TOPIC_OVERLAP]
        semantic = max(0, round(100 * len(on_topic) / len(quotes)) - 20 * duplicates) if quotes else 0
        overlap = self._overlap(query, answer)
        cosine = float(self._similarities(query, [strip_citations(answer)[:2000]])[0]) if answer else 0.0
        relevance = 100 * max(overlap, self._meaning(cosine))
        issues = []
        # the decisive provision and what it refers to: the same choice the answer is built from
        provisions = provisions_of(sources, _sentences_of, self._sentence_scorer(query, sources))
        entries = entry_provisions(provisions, IRRELEVANT_BELOW)
        if entries and not quality.cites_provision(found, entries[0]):
            relevance, semantic = 0, min(semantic, 50)  # it does not answer the question
            issues.append(text["issue_entry"].format(provision=entries[0].label))
        elif entries:
            followed = reached_from(provisions, entries[0])
            if followed and not any(quality.cites_provision(found, p) for p in followed):
                relevance /= 2  # it answers only in part
                issues.append(text["issue_followed"].format(provision=entries[0].label,
                                                            target=followed[0].label))
        # a part the researcher asked for that no cited statement holds (by its words or meaning)
        asked = list(parts or [])
        unanswered = [part for part, held in zip(asked, self._held_concepts(asked, [s.quote for s in cited]),
                                                 strict=True) if not held]
        if unanswered:
            relevance = min(relevance, PART_MISSING_RELEVANCE)
            issues.append(text["issue_part"].format(parts=", ".join(unanswered)))
        if len(correct) < len(found):
            issues.append(text["issue_citation"].format(count=len(found) - len(correct)))
        if len(supported) < len(cited):
            issues.append(text["issue_support"].format(count=len(cited) - len(supported)))
        if len(found) < 2:
            issues.append(text["issue_structure"])
        if fragments:
            issues.append(text["issue_fragments"].format(count=fragments))
        if duplicates:
            issues.append(text["issue_duplicates"].format(count=duplicates))
        framing = strip_citations(" ".join(s.text.replace(s.quote, "") for s in found))
        if len(framing) >= 20 and detect_language(framing, language) != language:
            issues.append(text["issue_language"])
        return QualityAssessment(factual_accuracy=factual_accuracy, semantic_validity=semantic,
                                 structural_integrity=structure, citation_correctness=citation_correctness,
                                 query_relevance=min(100, round(relevance)), issues_found=issues)

    def decide_remediation(self, query, assessment, threshold, language):
        self._count()
        text = reasoner_words(language)
        fixable = assessment.citation_correctness < 100 or assessment.factual_accuracy < 100 \
            or assessment.query_relevance < 60 or assessment.semantic_validity < 100
        if assessment.passes(threshold) or not fixable:
            return RemediationDecision(retry=False, instructions=text["no_remedy"])
        return RemediationDecision(retry=True, instructions=text["remedy"])
