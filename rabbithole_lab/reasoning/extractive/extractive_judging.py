"""The extractive quality check: the answer's quality from measured properties of the answer itself, not
from the writer's own choices, and the decision to write it again (phase 4, the judge's half;
`extractive_writing` writes the answer).

Each dimension is 0-100 and each deduction names its reason (`issues_found`):

- **citation correctness**: the share of quotations that stand on their cited page;
- **factual accuracy**: the share of quotations found in a retrieved passage at all (a quotation from
  outside the context is invented);
- **query relevance**: the share of what was asked that the answer states: for each question part (the whole
  question when it asks one thing), how likely its best cited statement states what that part asks, read by
  the fitted sentence model (`sentence_ranker`: the part's words, its meaning, the kinds it asks, a figure …)
  from the quotations as they stand and the retrieved context alone (no reference chain, no task: not the
  writer's view); each kind asked stated in the lead; each of the researcher's additions quoted; an answer
  none of whose quotations is on the question answers nothing;
- **semantic validity**: the share of quotations on the question (its terms or, in text the embedder reads,
  its meaning; a statement reached by a reference, "A → B", is evidence whatever its words); an answer quoting
  an excluded case (its words, or a provision an exclusion names) has at most 50 here and in query relevance;
- **structural integrity**: a lead with a cited statement, whole sentences, no repeats;
- **verdict** (when the answer carries a verdict record): the provision it names as decisive against the check's
  own provision scores of the retrieved context (`provision_score`, measured without the writer's reference
  chains): the check's belief that it decides (its share by the check's own table, a softmax over the context's
  provisions fitted for belief, not the writer's table), halved when the answer does not quote it, lowered when
  the chain it claims is not in the context; an answer naming none scores by how clearly one provision leads.
"""

from __future__ import annotations

import numpy as np

from rabbithole_lab.evidence.citation_format import strip_citations
from rabbithole_lab.evidence.pages import find_span
from rabbithole_lab.language import bridge
from rabbithole_lab.language.detection import detect_language
from rabbithole_lab.reasoning.base import AskedFor, SynthesisInput
from rabbithole_lab.reasoning.checks import quality
from rabbithole_lab.reasoning.dialogue_terms import excluded
from rabbithole_lab.reasoning.extractive.asked_kinds import asked_kinds, carries
from rabbithole_lab.reasoning.extractive.extractive_base import ON_TOPIC_OVERLAP, reasoner_words, sentences_of
from rabbithole_lab.reasoning.extractive.question_parts import question_parts
from rabbithole_lab.reasoning.extractive.writer.answer_candidates import CandidateReader
from rabbithole_lab.reasoning.extractive.writer.answer_text import ARROW
from rabbithole_lab.reasoning.extractive.writer.provision_score import UNSURE_BELIEF, fitted_check_weights
from rabbithole_lab.reasoning.extractive.writer.sentence_ranker import Candidate, score_for_part
from rabbithole_lab.reasoning.passages import joined_passages
from rabbithole_lab.schemas import QualityAssessment, RemediationDecision

FRAGMENT_PENALTY = 25  # structure points per quotation that is not a whole sentence
DUPLICATE_PENALTY = 20  # structure points per statement quoted twice
NO_LEAD_PENALTY = 50  # structure points when the answer does not open with a cited statement
EXCLUDED_CAP = 50  # semantic validity and query relevance at most this when an excluded case is quoted
ANSWERED_PROBABILITY = 0.5  # a part whose best cited statement is less likely to answer it is named unanswered
UNANSWERED_ADDITION_CAP = 50  # query relevance at most this when one of the researcher's additions is not quoted
QUOTE_PREFIX_CHARS = 80  # a quotation shortened to an excerpt ("… “) is found by its opening
MIN_OPENING_CHARS = 20  # an opening shorter than this ("(1) Der") could stand in any sentence


class ExtractiveJudge(CandidateReader):
    """The answer's quality, measured, and whether a rewrite would fix it."""

    def _on_question(self, anchor: str, quotes: list[str]) -> list[bool]:
        """Each quotation carries a term of the question or, in text the embedder reads, its meaning."""
        lexical = [self._overlap(anchor, q) >= ON_TOPIC_OVERLAP for q in quotes]
        readable = [i for i, q in enumerate(quotes) if not lexical[i] and self._reads(q)]
        if readable:
            texts = [quotes[i] for i in readable]
            similar = self._similarities(anchor, texts)
            # an English question read against German quotations: also by the glossary's German terms for it,
            # asked in the quotations' language (as the writer reads them, `SentenceReadings`)
            rendering = bridge.rendering(anchor, bridge.TARGET)
            if rendering:
                similar = np.maximum(similar, self._similarities(rendering, texts))
            for i, cosine in zip(readable, similar, strict=True):
                lexical[i] = self._meaning(float(cosine)) > 0.5
        return lexical

    def assess_quality(self, query, answer, sources, language, asked=None):
        self._count()
        asked = asked or AskedFor()
        text = reasoner_words(language)
        issues: list[str] = []
        found = quality.statements(answer)
        cited = [s for s in found if s.citations]
        passages = joined_passages(sources)  # a quotation may run over a chunk boundary, as the answer's may
        quotes = [" ".join(s.quote.split()) for s in found]
        # citations on their page; quotations found in the context at all
        correct = [s for s in cited if quality.on_cited_page(s, passages)]
        inside = [s for s in cited if any(find_span(p.chunk_text, s.quote) for p in passages)]
        citation_correctness = round(100 * len(correct) / len(found)) if found else 0
        factual_accuracy = round(100 * len(inside) / len(cited)) if cited else 0
        if len(correct) < len(found):
            issues.append(text["issue_citation"].format(count=len(found) - len(correct)))
        if len(inside) < len(cited):
            issues.append(text["issue_outside"].format(count=len(cited) - len(inside)))
        # on the question: by the question's words or meaning; a reference's target is evidence anyway
        on_question = self._on_question(query, [s.quote for s in cited]) if cited else []
        by_reference = [ARROW.strip() in s.text.split("„")[0].split("“")[0] for s in cited]
        on_topic = sum(1 for held, referred in zip(on_question, by_reference, strict=True) if held or referred)
        semantic = round(100 * on_topic / len(cited)) if cited else 0
        if cited and on_topic < len(cited):
            issues.append(text["issue_off_anchor"].format(count=len(cited) - on_topic))
        # an excluded case quoted as if it applied: its words, or a passage of a provision an exclusion names
        left_out = [p for p in passages if p.section and any(
            " ".join(quality.label(p.document, p.section).split()).casefold() in " ".join(case.split()).casefold()
            for case in asked.exclusions)]
        quoted_excluded = [s for s in cited if excluded(s.quote, asked.exclusions)
                           or any(find_span(p.chunk_text, s.quote) for p in left_out)]
        context = self._judged_context(query, asked, sources, language)
        relevance = self._relevance(query, asked, answer, cited, on_question, text, issues, context)
        verdict = self._verdict(asked.verdict, context, answer, text, issues) if asked.verdict else None
        if quoted_excluded:
            semantic, relevance = min(semantic, EXCLUDED_CAP), min(relevance, EXCLUDED_CAP)
            issues.append(text["issue_excluded"].format(count=len(quoted_excluded), cases=", ".join(asked.exclusions)))
        # structure: a cited lead, whole sentences, no repeats
        whole = {statement for source in passages for statement in sentences_of(source)}
        fragments = sum(1 for q in quotes if quality.is_fragment(q, whole))
        duplicates = len(quotes) - len(set(quotes))
        lead_cited = any(s.citations for s in quality.statements(quality.lead_of(answer)))
        structure = 100 if cited else 0
        structure -= FRAGMENT_PENALTY * fragments + DUPLICATE_PENALTY * duplicates
        if cited and not lead_cited:
            structure -= NO_LEAD_PENALTY
            issues.append(text["issue_no_lead"])
        if not cited:
            issues.append(text["issue_structure"])
        if fragments:
            issues.append(text["issue_fragments"].format(count=fragments))
        if duplicates:
            issues.append(text["issue_duplicates"].format(count=duplicates))
        # the framing (what is not a quotation or a provision's name) in the question's language
        framing = strip_citations(" ".join(s.text.replace(s.quote, "") for s in found))
        framing = " ".join(word for word in framing.split() if word.isalpha() and len(word) > 3)
        if len(framing) >= 40 and detect_language(framing, language) != language:
            issues.append(text["issue_language"])
        return QualityAssessment(factual_accuracy=factual_accuracy, semantic_validity=max(0, semantic),
                                 structural_integrity=max(0, structure), citation_correctness=citation_correctness,
                                 query_relevance=relevance, issues_found=issues, verdict=verdict)

    def _judged_context(self, query: str, asked: AskedFor, sources: list, language: str):
        """The retrieved context read by the candidate reader alone: no reference chain, no task (not the
        writer's view)."""
        question = asked.question or query
        request = SynthesisInput(anchor=query, language=language, question=question,
                                 exclusions=list(asked.exclusions),
                                 **{tier: [s for s in sources if s.tier == tier]
                                    for tier in ("primary", "secondary", "tertiary")})
        return self.answer_context(request)

    def _verdict(self, claimed: dict, context, answer: str, text: dict, issues: list[str]) -> int:
        """The check's belief that the named provision decides: its share by the check's own table (a softmax
        over the provisions of the check's reading of the context, so a close rival lowers it); halved when the
        answer does not quote it, three quarters when a provision of its claimed chain is not in the context. An
        answer naming no provision: 100 unless one provision clears the thresholds by the check's scoring."""
        verdict = context.verdict
        if verdict is None or not verdict.ranked:
            return 0
        if not claimed.get("stated"):
            if verdict.stated and len(verdict.ranked) > 1:
                leading = verdict.ranked[0]
                issues.append(text["issue_verdict_open"].format(best=leading.provision.label,
                                                                best_score=leading.score))
                return 60
            return 100
        beliefs = verdict.beliefs(fitted_check_weights())
        named = next(((item, belief) for item, belief in beliefs if (item.provision.doc, item.provision.section)
                      == (claimed.get("doc"), claimed.get("section"))), None)
        label = claimed.get("label") or claimed.get("section", "")
        if named is None:
            issues.append(text["issue_verdict_missing"].format(named=label))
            return 0
        (item, value), (best, best_belief) = named, beliefs[0]
        if item is not best:
            issues.append(text["issue_verdict_weaker"].format(named=label, score=value, best=best.provision.label,
                                                              best_score=best_belief))
        elif len(beliefs) > 1 and value < UNSURE_BELIEF:
            rival, rival_belief = beliefs[1]
            issues.append(text["issue_verdict_unsure"].format(named=label, score=value, rival=rival.provision.label,
                                                              rival_score=rival_belief))
        if not quality.cites_provision(quality.statements(quality.lead_of(answer)), item.provision):
            value *= 0.5
            issues.append(text["issue_entry"].format(provision=label))
        present = {(p.doc, p.section) for p in context.provisions}
        missing = [link.get("label", "") for link in claimed.get("chain", [])
                   if (link.get("doc"), link.get("section")) not in present]
        if missing:
            value *= 0.75
            issues.append(text["issue_verdict_chain"].format(chain=", ".join(missing)))
        return max(0, min(100, round(100 * value)))

    def _relevance(self, query: str, asked: AskedFor, answer: str, cited: list, on_question: list[bool],
                   text: dict, issues: list[str], context) -> int:
        """The share of what was asked that the answer states (each check one share, a part's as likely as its
        best cited statement answers it), 0 when no quotation is on the question."""
        if not cited or not any(on_question):
            if cited:
                issues.append(text["issue_relevance"].format(score=0.0))
            return 0
        checks: list[float] = []
        question = asked.question or query
        parts = question_parts(question)
        likelihoods = self._parts_answered(context, [s.quote for s in cited])
        unanswered = [part for part, likely in zip(parts, likelihoods, strict=False) if likely < ANSWERED_PROBABILITY]
        checks += likelihoods
        if unanswered:
            issues.append(text["issue_question_part"].format(parts="; ".join(unanswered)))
        lead_quotes = [s.quote for s in quality.statements(quality.lead_of(answer)) if s.citations]
        # the kinds the question asks, read from what it asks: "… when it hits a target." before "Under which
        # conditions …?" tells the case, it does not ask for a date
        kinds_asked = set().union(*(asked_kinds(part) for part in parts)) if parts else asked_kinds(question)
        missing_kinds = [kind for kind in sorted(kinds_asked) if not any(carries(q, {kind}) for q in lead_quotes)]
        checks += [kind not in missing_kinds for kind in sorted(kinds_asked)]
        if missing_kinds:
            issues.append(text["issue_kind_lead"].format(kinds=", ".join(text["kind_names"][k] for k in missing_kinds)))
        if asked.parts:
            held = self._held_concepts(asked.parts, [s.quote for s in cited])
            checks += held
            unanswered_additions = [part for part, is_held in zip(asked.parts, held, strict=True) if not is_held]
            if unanswered_additions:
                issues.append(text["issue_part"].format(parts=", ".join(unanswered_additions)))
                # what the researcher added in the dialogue is what they asked: without it, no answer
                return min(UNANSWERED_ADDITION_CAP, round(100 * sum(checks) / len(checks)))
        return round(100 * sum(checks) / len(checks)) if checks else 100

    def _parts_answered(self, context, quotes: list[str]) -> list[float]:
        """For each question part, the probability that the best of `quotes` states what it asks: the fitted
        sentence model's reading of the quoted sentence for that part (`score_for_part`), its features
        measured in the retrieved context alone. Only a statement carrying the part's words and a kind it asks
        counts: the model's other features (a figure, the strongest provision) speak for any part."""
        quoted = [found for quote in quotes if (found := _quoted_candidate(quote, context.candidates)) is not None]
        return [max((score_for_part(candidate, index, kinds) for candidate in quoted
                     if _carries_part(candidate, index, kinds)), default=0.0)
                for index, kinds in enumerate(context.part_kinds)]

    def decide_remediation(self, query, assessment, threshold, language):
        self._count()
        text = reasoner_words(language)
        fixable = assessment.citation_correctness < 100 or assessment.factual_accuracy < 100 \
            or assessment.query_relevance < 60 or assessment.semantic_validity < 100
        # a rewrite states fewer statements of the same context under the same verdict: a score the verdict alone
        # brings under the threshold is not fixed by it (it would only cut the answer to its lead)
        if assessment.passes(threshold) or not fixable or assessment.content_score >= threshold:
            return RemediationDecision(retry=False, instructions=text["no_remedy"])
        return RemediationDecision(retry=True, instructions=text["remedy"])


def _quoted_candidate(quote: str, candidates: list[Candidate]) -> Candidate | None:
    """The context's sentence a quotation quotes, the best-scored one when it quotes several (a quotation may
    join sentences, or show an excerpt of a long one: found by its opening)."""
    shown = " ".join(quote.split())
    opening = shown.split("…")[0].strip()[:QUOTE_PREFIX_CHARS]
    matching = [candidate for candidate in candidates if (said := " ".join(candidate.text.split()))
                and (said in shown or (len(opening) >= MIN_OPENING_CHARS and opening in said))]
    return max(matching, key=lambda candidate: candidate.score, default=None)


def _carries_part(candidate: Candidate, part: int, kinds: set[str]) -> bool:
    """The sentence holds one of part `part`'s words and, when the part asks for kinds, one of them."""
    words = candidate.part_terms[part] > 0 if part < len(candidate.part_terms) else True
    return words and (not kinds or bool(candidate.kinds & kinds))
