"""The extractive reasoner: every reasoning step without an LLM, deterministic.

Sentences are selected by the question's terms they carry (plus the embedder's similarity for text in a
language the embedder was trained on: the default multilingual-e5 reads German and English; an
English-only model such as MiniLM gives no evidence on German statute text) and kept verbatim, so every claim in the report is a quotation with its
citation. Clarification questions and
the to-do list are built from the query's concepts that retrieval did not cover. Quality is scored
from measurable properties of the answer (citation coverage, support of each sentence by the cited
source, structure, relevance to the question).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable

import numpy as np

from rabbithole_lab.kb.embedder import Embedder, reads_language
from rabbithole_lab.kb.query import german_terms, glossary
from rabbithole_lab.language import detect_language
from rabbithole_lab.messages import reasoner_text
from rabbithole_lab.pages import quote_pages
from rabbithole_lab.rabbithole.references import detect_references_regex
from rabbithole_lab.rabbithole.relevance import CITATION_DECAY, keyword_overlap
from rabbithole_lab.reasoning import quality
from rabbithole_lab.reasoning.answer import (
    MAX_SENTENCES,
    addressed_to_a_model,
    entry_provisions,
    links_of,
    plan_answer,
    provisions_of,
    reached_from,
)
from rabbithole_lab.reasoning.base import ReasonerInfo, SynthesisInput, citation_label
from rabbithole_lab.reasoning.passages import joined_passages
from rabbithole_lab.reasoning.term_weights import TermWeights, sentence_terms
from rabbithole_lab.reasoning.text import (
    asks_about_authorisation,
    authorises_regulation,
    contains_concept,
    has_figure,
    passage_sentences,
    quote_reason,
    split_sentences,
    stems,
    strip_citations,
)
from rabbithole_lab.reasoning.text import (
    concepts as query_concepts,
)
from rabbithole_lab.records import ChunkWithInfo, PreservedQuote, ToDoItem, VectorResult
from rabbithole_lab.schemas import (
    ClosedTask,
    ExtractedReferenceList,
    InfoExtractionWithQuotes,
    PlanChange,
    PlannedTask,
    QualityAssessment,
    RelevanceScore,
    RemediationDecision,
    RetrievalAnalysis,
    SynthesisFinding,
    SynthesisOutput,
    TaskAssessment,
    TaskSummary,
    TodoAdaptation,
    TodoPlan,
)

logger = logging.getLogger(__name__)

SENTENCES_PER_CHUNK = 3
IRRELEVANT_BELOW = 0.12
FIGURE_BONUS = 0.1  # a sentence with a figure (limit, deadline, amount) over one without, all else equal
MEANING_SHARE = 0.6  # of a sentence's score, for text the embedder reads; the rest is the question's terms
LANGUAGE_SAMPLE_CHARS = 2_000  # of the context, to tell its language
REMEDIATED_SENTENCES = 5
VECTOR_CACHE_SIZE = 20_000  # 384 floats each: ~30 MB at most
MMR_LAMBDA = 0.7
SUPPORT_OVERLAP = 0.6
ON_TOPIC_OVERLAP = 0.3



def _t(language: str) -> dict:
    return reasoner_text(language)


MEANING_SAMPLE_CHARS = 2000  # of a passage judged by meaning: its opening, where a provision states its subject


class ExtractiveReasoner:
    """Deterministic reasoning: the configured embedder's similarity and the question's words."""

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
        if detect_language(anchor) == "en":
            extra = german_terms(anchor)
            return f"{anchor} {extra}" if extra else anchor
        return anchor

    def _reads(self, text: str) -> bool:
        """The embedder was trained on the text's language: only then does its similarity say something."""
        return reads_language(self._embedder.languages, detect_language(text[:LANGUAGE_SAMPLE_CHARS]))

    def _held_concepts(self, concepts: list[str], texts: list[str]) -> list[bool]:
        """Which concepts the texts hold: in their words (or a glossary translation), or, in text of a
        language the embedder reads, in their meaning: a passage whose similarity to the concept, read
        through the model's band, lies nearer an answering passage than an unrelated one."""
        if not concepts:
            return []
        terms = glossary()
        text_stems = stems(" ".join(texts))
        held = [contains_concept(c, text_stems, terms.get(c.lower(), [])) for c in concepts]
        readable = [text[:MEANING_SAMPLE_CHARS] for text in texts if text.strip() and self._reads(text)]
        if readable and not all(held):
            rows = self._vectors(readable)
            held = [is_held or self._meaning(float((rows @ self._anchor_vector(concept)).max())) > 0.5
                    for concept, is_held in zip(concepts, held, strict=True)]
        return held

    def _overlap(self, anchor: str, text: str) -> float:
        lexical = self._lexical_anchor(anchor)
        return max(keyword_overlap(lexical, text, "german"), keyword_overlap(anchor, text, "english"))

    # ---- Phase 1 ----------------------------------------------------------------------------
    def hitl_queries(self, query, iteration, conversation, gaps, concepts, language, count):
        self._count()
        text = _t(language)
        focus = " ".join(concepts or query_concepts(query, language))
        if iteration == 0:
            candidates = [query, f"{focus} {text['broader']}", f"{focus} {text['angle']}"]
        else:
            answers = [turn["content"] for turn in conversation if turn.get("role") == "user"]
            latest = answers[-1] if answers else ""
            candidates = [f"{query} {latest}".strip()]
            candidates += [f"{gap} {focus}" for gap in gaps]
            candidates += [focus, f"{focus} {text['angle']}", f"{focus} {text['broader']}"]
        return _unique(candidates)[:count]

    def analyze_retrieval(self, query, passages, language):
        self._count()
        text = _t(language)
        found = query_concepts(query, language)
        held = self._held_concepts(found, [f"{p.heading} {p.text}" for p in passages])
        covered = [c for c, is_held in zip(found, held, strict=True) if is_held]
        gaps = [c for c in found if c not in covered]
        coverage = len(covered) / len(found) if found else (1.0 if passages else 0.0)
        if not passages:
            coverage = 0.0
        counts: dict[str, int] = {}
        for passage in passages:
            for reference in detect_references_regex(passage.text, passage.doc):
                if reference.type in ("legal_section", "section", "document", "document_mention"):
                    target = re.sub(r"\.(?:pdf|md|txt)\b", "", reference.target)
                    counts[target] = counts.get(target, 0) + 1
        entities = [target for target, _ in sorted(counts.items(), key=lambda kv: -kv[1])][:8]
        docs = sorted({p.doc for p in passages})
        scope = text["scope"].format(count=len(passages), docs=", ".join(docs) or text["none"])
        return RetrievalAnalysis(key_concepts=covered or found, entities=entities, scope=scope,
                                 knowledge_gaps=gaps, coverage_score=round(coverage, 3))

    def follow_up_questions(self, query, analysis, passages, language, count, conversation=None):
        """Questions built on this round: the user's last answer against what was found now, same-numbered
        sections of different documents, the provisions found, the gaps; none asked before."""
        self._count()
        text = _t(language)
        conversation = conversation or []
        asked = {_normal_question(line) for turn in conversation if turn.get("role") == "assistant"
                 for line in str(turn.get("content", "")).splitlines()}
        answers = [str(turn["content"]) for turn in conversation if turn.get("role") == "user" and turn.get("content")]
        found = _provisions(passages)
        candidates = []
        if answers and found:
            candidates.append(text["q_answer"].format(answer=" ".join(answers[-1].split())[:80],
                                                      provisions=", ".join(label for label, _ in found[:2])))
        documents_of: dict[str, set[str]] = {}
        for passage in passages:
            if passage.section:
                documents_of.setdefault(passage.section, set()).add(_doc_name(passage.doc))
        candidates += [text["q_same_number"].format(section=section, docs=" / ".join(sorted(docs)))
                       for section, docs in documents_of.items() if len(docs) > 1][:1]
        if found:
            candidates.append(text["q_provisions"].format(
                provisions="; ".join(f"{label} ({title})" if title else label for label, title in found[:3])))
        candidates += [text["q_gap"].format(gap=gap) for gap in analysis.knowledge_gaps[:3]]
        if analysis.entities:
            candidates.append(text["q_entity"].format(entity=analysis.entities[0]))
        candidates.append(text["q_scope"])
        docs = sorted({p.doc for p in passages})
        if docs:
            candidates.append(text["q_docs"].format(docs=", ".join(docs[:3])))
        return [q for q in _unique(candidates) if _normal_question(q) not in asked][: max(2, count)]

    def hitl_context_summary(self, query, conversation, concepts, language):
        self._count()
        text = _t(language)
        answers = [turn["content"] for turn in conversation if turn.get("role") == "user"]
        return text["summary"].format(query=query, answers="; ".join(answers) or text["none"],
                                      concepts=", ".join(concepts) or text["none"])

    def research_queries(self, query, summary, concepts, language):
        self._count()
        focus = " ".join(concepts)
        return _unique([query, focus, *[f"{concept} {focus}" for concept in concepts[:3]]])[:5]

    # ---- Phase 2 ----------------------------------------------------------------------------
    def generate_todo(self, query, summary, queries, concepts, language, count):
        self._count()
        text = _t(language)
        nouns = [c for c in concepts if c[:1].isupper()] if language == "de" else []
        focus = ", ".join((nouns if len(nouns) >= 2 else concepts)[:3]) or query
        tasks = [PlannedTask(task=task.format(focus=focus), context=context) for task, context in text["tasks"]]
        marker = text["answers_marker"]
        if marker in summary:
            answers = summary.split(marker, 1)[1].split(". ", 1)[0]
            for answer in answers.split("; "):
                if answer and answer != text["none"]:
                    tasks.append(PlannedTask(task=text["refinement_task"].format(answer=answer),
                                             context=text["refinement_context"]))
        return TodoPlan(tasks=tasks[: max(3, min(count, 5))])

    # ---- Phase 3 ----------------------------------------------------------------------------
    def task_search_queries(self, task, anchor, concepts, language):
        self._count()
        task_terms = [c for c in query_concepts(task, language, limit=10) if c.lower() not in
                      {w.lower() for w in concepts}]
        return _unique([anchor, " ".join([*concepts, *task_terms])])[:2]

    def _task_terms(self, task: str, language: str) -> list[str]:
        """The task's own concepts: without the words this reasoner's task templates put around the focus."""
        text = _t(language)
        template_words = {word.lower() for template, context in text["tasks"]
                          for word in query_concepts(template.replace("{focus}", ""), language, limit=50)}
        template_words |= {word.lower() for word in query_concepts(
            text["refinement_task"].replace("{answer}", ""), language, limit=50)}
        return [c for c in query_concepts(task, language, limit=10) if c.lower() not in template_words]

    def assess_task(self, task: str, anchor: str, findings: list[ChunkWithInfo], language: str) -> TaskAssessment:
        """Answered when the passages hold every concept of the task (its own words, not the template's);
        otherwise the concepts they lack are what the next iteration searches for."""
        self._count()
        text = _t(language)
        wanted = self._task_terms(task, language) or query_concepts(anchor, language)
        if not findings:
            return TaskAssessment(answered=False, missing=wanted[:3], reason=text["task_nothing"])
        held = self._held_concepts(wanted, [f.chunk_text for f in findings])
        missing = [c for c, is_held in zip(wanted, held, strict=True) if not is_held]
        if not missing:
            return TaskAssessment(answered=True, reason=text["task_answered"])
        return TaskAssessment(answered=False, missing=missing[:3],
                              reason=text["task_missing"].format(missing=", ".join(missing[:3])))

    def adapt_todo(self, anchor: str, tasks: list[ToDoItem], summary: str, missing: list[str],
                   provisions: list[dict], gaps: list[str], saturated: list[int], room: int,
                   language: str) -> TodoAdaptation:
        """By rules: close the open tasks whose search finds only what the context holds; add a task for a
        provision reached by following that no task covers, and for a clarification gap still open."""
        self._count()
        text = _t(language)
        close = [ClosedTask(id=task_id, reason=text["why_saturated"]) for task_id in saturated]
        add: list[PlanChange] = []
        for provision in provisions[:1]:
            add.append(PlanChange(task=text["task_provision"].format(provision=provision["label"]),
                                  reason=text["why_provision"].format(via=provision["via"])))
        for gap in gaps[:1]:
            add.append(PlanChange(task=f"{gap}: {anchor}", reason=text["why_gap"]))
        return TodoAdaptation(close=close, add=add[:room])

    def corpus_language_queries(self, question: str, corpus_language: str) -> list[str]:
        """No model to translate: the search itself adds the glossary's terms (kb/query.py)."""
        return []

    def extract_info(self, chunk, anchor, task, language):
        self._count()
        # titles and headings alone ("Gesetz zum Schutz vor …") state nothing: keep real sentences
        sentences = [s for s in passage_sentences(chunk.text, chunk.heading, chunk.continuation)
                     if not addressed_to_a_model(s)]  # document text never speaks to the reader as an instruction
        if not sentences:
            return InfoExtractionWithQuotes(extracted_info="")
        if self._reads(chunk.text):
            similarity = self._similarities(anchor, sentences)
            scored = [(0.6 * self._meaning(float(similarity[i])) + 0.4 * self._overlap(anchor, sentence), i)
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
        text = _t(language)
        candidates = _cited_sentences(findings, language)
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
        text = _t(language)
        note = text["inherited"].format(score=inherited) if inherited else ""
        return RelevanceScore(score=round(min(1.0, max(vector, overlap, inherited)), 4),
                              reason=text["relevance"].format(vector=vector, overlap=overlap, inherited=note))

    # ---- Phase 4 ----------------------------------------------------------------------------
    def _sentence_scorer(self, anchor: str,
                         chunks: list[ChunkWithInfo]) -> Callable[[list[str]], list[float]]:
        """How much a sentence of this context says about the question: the question's terms it carries,
        each weighted by how few of the context's sentences hold it (`TermWeights`), its figures (a limit,
        a deadline, an amount is what a question about a provision usually wants), and, for text in a
        language the embedder was trained on, its meaning. An English-only model (MiniLM) is no evidence on
        German statute text: every share of its similarity in the score cost answer facts on the dev
        questions (bench/RESULTS.md, session 12). Synthesis and the quality check build the scorer from the same context, so they agree."""
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
        text = _t(language)
        open_quote, close_quote = ("„", "“") if language == "de" else ("“", "”")
        chunks = request.all_chunks()
        provisions = provisions_of(chunks, lambda chunk: passage_sentences(chunk.chunk_text, chunk.heading,
                                                                          chunk.continuation),
                                   self._sentence_scorer(request.anchor, chunks))
        # a rewrite keeps fewer sentences, each carrying a term of the question
        if request.remediation:
            for provision in provisions:
                provision.sentences = [s for s in provision.sentences if self._overlap(request.anchor, s.text) > 0]
        plan = plan_answer(provisions, IRRELEVANT_BELOW, REMEDIATED_SENTENCES if request.remediation else MAX_SENTENCES,
                           links_of(request.chains))
        if not plan.parts:
            return SynthesisOutput(answer=text["no_answer"].format(anchor=request.anchor))
        lines = [text["intro"].format(anchor=request.anchor)]
        findings = []
        for provision, source, sentences in plan.parts:
            quoted = " ".join(f"{open_quote}{s.text}{close_quote} {citation_label(provision.doc, s.page, language)}"
                              for s in sentences)
            lead = (text["chain"].format(source=source.label, target=provision.label) if source is not None
                    else f"**{provision.label}**:")
            lines += ["", f"{lead} {quoted}"]
            findings += [SynthesisFinding(claim=s.text, sources=[f"{provision.doc} p. {s.page}"]) for s in sentences]
        return SynthesisOutput(answer="\n".join(lines), key_findings=findings)

    def assess_quality(self, query, answer, sources, language):
        """Measured, not estimated (see `quality.py`): citations whose quotation starts on the cited page,
        statements their source supports, whole sentences without repeats, and whether the answer quotes
        the decisive provision and what it refers to."""
        self._count()
        text = _t(language)
        found = quality.statements(answer)
        cited = [s for s in found if s.citations]
        passages = joined_passages(sources)  # a quotation may run over a chunk boundary, as the answer's may
        correct = [s for s in cited if quality.on_cited_page(s, passages)]
        by_page: dict[tuple[str, int], list[str]] = {}
        for source in passages:
            for page in range(source.page, (source.page_end or source.page) + 1):
                by_page.setdefault((source.document, page), []).append(source.chunk_text)
        supported = [s for s in cited if _supported(s.quote, s.citations, by_page)]
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
        provisions = provisions_of(sources, lambda c: passage_sentences(c.chunk_text, c.heading, c.continuation),
                                   self._sentence_scorer(query, sources))
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
        text = _t(language)
        fixable = assessment.citation_correctness < 100 or assessment.factual_accuracy < 100 \
            or assessment.query_relevance < 60 or assessment.semantic_validity < 100
        if assessment.passes(threshold) or not fixable:
            return RemediationDecision(retry=False, instructions=text["no_remedy"])
        return RemediationDecision(retry=True, instructions=text["remedy"])

    # ---- helpers ----------------------------------------------------------------------------
    def _mmr(self, anchor: str, candidates: list[tuple[str, float]], limit: int) -> list[str]:
        """Maximal marginal relevance over (sentence, weight) pairs; returns sentences in pick order."""
        if not candidates:
            return []
        bodies = [strip_citations(sentence) for sentence, _ in candidates]
        anchor_vector, rows = self._anchor_vector(anchor), self._vectors(bodies)
        relevance = [
            weight * (0.6 * self._meaning(float(rows[i] @ anchor_vector)) + 0.4 * self._overlap(anchor, bodies[i]))
            for i, (_, weight) in enumerate(candidates)
        ]
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


def _unique(items: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        key = " ".join(item.split()).lower()
        if key and key not in seen:
            seen.add(key)
            out.append(" ".join(item.split()))
    return out


def _cited_sentences(chunks: list[ChunkWithInfo], language: str,
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


def _supported(sentence: str, cites: list[tuple[str, int]], by_page: dict[tuple[str, int], list[str]]) -> bool:
    words = stems(sentence)
    if not words:
        return False
    for key in cites:
        for source in by_page.get(key, []):
            if len(words & stems(source)) / len(words) >= SUPPORT_OVERLAP:
                return True
    return False


def _normal_question(question: str) -> str:
    return " ".join(re.sub(r"^\s*\d+[.)]\s*", "", question).lower().split())


def _doc_name(doc: str) -> str:
    return re.sub(r"\.(?:pdf|md|txt)$", "", doc, flags=re.IGNORECASE)


def _provisions(passages: list[VectorResult]) -> list[tuple[str, str]]:
    """("§ 12 QStrG", its title) for each distinct section of the passages, best first."""
    out: dict[str, str] = {}
    for passage in passages:
        if not passage.section:
            continue
        label = f"{passage.section} {_doc_name(passage.doc)}"
        heading = " ".join(passage.heading.split())
        title = heading[len(passage.section):].strip(" .:-") if heading.startswith(passage.section) else heading
        out.setdefault(label, title[:70])
    return list(out.items())
