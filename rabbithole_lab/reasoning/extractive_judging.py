"""The extractive quality check: the answer's quality from measurable properties, and the decision to
write it again (phase 4, the judge's half; `extractive_writing` writes the answer)."""

from __future__ import annotations

import re

from rabbithole_lab.language import detect_language
from rabbithole_lab.pages import find_span
from rabbithole_lab.reasoning import quality
from rabbithole_lab.reasoning.answer import Provision, entry_provisions, provisions_of, reached_from
from rabbithole_lab.reasoning.answer_shape import excluded_provision
from rabbithole_lab.reasoning.base import AskedFor
from rabbithole_lab.reasoning.dialogue_terms import excluded
from rabbithole_lab.reasoning.extractive_base import (
    IRRELEVANT_BELOW,
    ON_TOPIC_OVERLAP,
    ExtractiveBase,
    reasoner_words,
    sentences_of,
    supported_by_source,
)
from rabbithole_lab.reasoning.passages import joined_passages
from rabbithole_lab.reasoning.text import strip_citations
from rabbithole_lab.schemas import QualityAssessment, RemediationDecision

PART_MISSING_RELEVANCE = 50  # of 100: the answer leaves out a part the researcher asked for
TASK_SECTION_MISSING = 20  # of 100 structure points, for each approved task without its section


def _has_section(answer: str, task: str) -> bool:
    """The answer has a heading line that names the task (as written, without markup)."""
    words = " ".join(re.sub(r"[*\[\]]", "", task).split()).casefold()
    return any(words in " ".join(line.replace("*", "").split()).casefold() for line in answer.splitlines()
               if line.lstrip().startswith(("**", "#")))




class ExtractiveJudge(ExtractiveBase):
    """The answer's quality, measured (see `quality.py`), and whether a rewrite would fix it."""

    def _off_anchor(self, query: str, quotes: list[str]) -> list[str]:
        """Quotations without a term of the question and, in text the embedder reads, without its meaning."""
        unmatched = [q for q in quotes if self._overlap(query, q) == 0]
        readable = [q for q in unmatched if self._reads(q)]
        if not readable:
            return unmatched
        similar = self._similarities(query, readable)
        meaningful = {q for q, cosine in zip(readable, similar, strict=True) if self._meaning(float(cosine)) > 0.5}
        return [q for q in unmatched if q not in meaningful]

    def assess_quality(self, query, answer, sources, language, asked=None):
        """Measured, not estimated (see `quality.py`): citations whose quotation starts on the cited page,
        statements their source supports, whole sentences without repeats, whether the answer quotes the
        decisive provision and what it refers to, and what the researcher asked for (`AskedFor`): every
        part with a cited statement, no excluded case quoted, a section per approved task, no quotation
        off the question."""
        self._count()
        asked = asked or AskedFor()
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
        # the statements the answer could quote, split as the answer split them (a table's rows among them)
        whole = {statement for source in passages for statement in sentences_of(source)}
        fragments = sum(1 for q in quotes if quality.is_fragment(q, whole))
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
        provisions = provisions_of(sources, sentences_of, self._sentence_scorer(query, sources))
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
        cap, penalty, semantic_cap, asked_issues = self._asked_issues(query, answer, quotes, cited, provisions,
                                                                      entries, asked, text)
        relevance, structure, semantic = min(relevance, cap), max(0, structure - penalty), min(semantic, semantic_cap)
        issues += asked_issues
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

    def _asked_issues(self, query: str, answer: str, quotes: list[str], cited: list, provisions: list[Provision],
                      entries: list[Provision], asked: AskedFor, text: dict) -> tuple[float, int, int, list[str]]:
        """What the researcher asked for, measured: (relevance cap, structure penalty, semantic cap, issues)."""
        cap, penalty, semantic_cap, issues = 100.0, 0, 100, []
        # a part the researcher asked for that no cited statement holds (by its words or meaning)
        held = self._held_concepts(asked.parts, [s.quote for s in cited])
        unanswered = [part for part, is_held in zip(asked.parts, held, strict=True) if not is_held]
        if unanswered:
            cap = PART_MISSING_RELEVANCE
            issues.append(text["issue_part"].format(parts=", ".join(unanswered)))
        # an excluded case quoted as if it applied
        left_out = [p for p in provisions if excluded_provision(p, asked.exclusions)]
        quoted_excluded = [s.quote for s in cited if excluded(s.quote, asked.exclusions)
                           or any(find_span(passage.chunk_text, s.quote) for p in left_out for passage in p.passages)]
        if quoted_excluded:
            cap = PART_MISSING_RELEVANCE
            issues.append(text["issue_excluded"].format(count=len(quoted_excluded), cases=", ".join(asked.exclusions)))
        # an approved task without its section (a finding or "not found")
        missing_sections = [task for task in asked.tasks if not _has_section(answer, task)]
        if missing_sections:
            penalty = TASK_SECTION_MISSING * len(missing_sections)
            issues.append(text["issue_task"].format(tasks="; ".join(missing_sections)))
        # quotations off the question: none of its terms and not its meaning, and not reached by a reference
        # of the decisive provision (what that provision refers to is evidence whatever its words)
        referred = reached_from(provisions, entries[0]) if entries else []
        off = [q for q in self._off_anchor(query, quotes)
               if not any(find_span(passage.chunk_text, q) for p in referred for passage in p.passages)]
        if off:
            semantic_cap = round(100 * (len(quotes) - len(off)) / len(quotes))
            issues.append(text["issue_off_anchor"].format(count=len(off)))
        return cap, penalty, semantic_cap, issues

    def decide_remediation(self, query, assessment, threshold, language):
        self._count()
        text = reasoner_words(language)
        fixable = assessment.citation_correctness < 100 or assessment.factual_accuracy < 100 \
            or assessment.query_relevance < 60 or assessment.semantic_validity < 100
        if assessment.passes(threshold) or not fixable:
            return RemediationDecision(retry=False, instructions=text["no_remedy"])
        return RemediationDecision(retry=True, instructions=text["remedy"])
