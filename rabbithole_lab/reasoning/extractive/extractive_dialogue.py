"""Phase 1 without an LLM: clarification queries, what the retrieval covers, questions built from the
concepts and provisions retrieval found, and the dialogue's summary."""

from __future__ import annotations

import logging
import re

from rabbithole_lab.language import alternation, dialogue_filler_words, is_definitions_heading, is_term_word
from rabbithole_lab.rabbithole.references import detect_references_regex
from rabbithole_lab.reasoning.dialogue_terms import anchor_terms as dialogue_anchor_terms
from rabbithole_lab.reasoning.dialogue_terms import user_answers
from rabbithole_lab.reasoning.extractive.extractive_base import (
    HELD_MEANING,
    ExtractiveBase,
    doc_name,
    normal_question,
    passage_provisions,
    reasoner_words,
    unique,
)
from rabbithole_lab.reasoning.text import (
    concepts as query_concepts,
)
from rabbithole_lab.reasoning.text import contains_concept, passage_sentences, stems
from rabbithole_lab.schemas import (
    RetrievalAnalysis,
)

logger = logging.getLogger(__name__)

_LEGAL_SECTION = re.compile(rf"(?:{alternation('LEGAL_SECTION_UNITS')})\s*\S")


def competing_definitions(query: str, passages: list, language: str) -> list[tuple[str, list[str]]]:
    """A concept of the question that two documents define, each in its definitions section ("Begriffs-
    bestimmungen", "Definitions"): the question may mean either (term, the documents)."""
    defined: dict[str, set[str]] = {}
    for passage in passages:
        if not is_definitions_heading(passage.heading or passage.text[:120]):
            continue
        text_stems = stems(passage.text)
        for concept in query_concepts(query, language):
            if contains_concept(concept, text_stems):
                defined.setdefault(concept, set()).add(doc_name(passage.doc))
    return [(term, sorted(docs)) for term, docs in defined.items() if len(docs) > 1]


class ExtractiveClarifier(ExtractiveBase):
    # ---- Phase 1 ----------------------------------------------------------------------------
    def hitl_queries(self, query, iteration, conversation, gaps, concepts, language, count):
        self._count()
        text = reasoner_words(language)
        focus = " ".join(concepts or query_concepts(query, language))
        if iteration == 0:
            candidates = [query, f"{focus} {text['broader']}", f"{focus} {text['angle']}"]
        else:
            answers = [turn["content"] for turn in conversation if turn.get("role") == "user"]
            latest = answers[-1] if answers else ""
            candidates = [f"{query} {latest}".strip()]
            candidates += [f"{gap} {focus}" for gap in gaps]
            candidates += [focus, f"{focus} {text['angle']}", f"{focus} {text['broader']}"]
        return unique(candidates)[:count]

    def analyze_retrieval(self, query, passages, language):
        self._count()
        text = reasoner_words(language)
        found = query_concepts(query, language)
        held = self._held_concepts(found, [f"{p.heading} {p.text}" for p in passages])
        covered = [c for c, is_held in zip(found, held, strict=True) if is_held]
        # a gap is a subject the collection does not cover, never an ordinary word of the question ("wurde",
        # "vergangenen", "occupationally"): the language's fillers and words that name no subject are not asked
        filler = dialogue_filler_words()
        gaps = [c for c in found if c not in covered and c.lower() not in filler and is_term_word(c, language)]
        gaps = self._unheld_by_any_sentence(gaps, passages)
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

    def _unheld_by_any_sentence(self, concepts: list[str], passages: list) -> list[str]:
        """The concepts no single sentence of the passages holds in meaning, read through the model's band as
        `_held_concepts` reads a passage's opening: an English "quantum" is held by "Quantenquelle ist jede
        Vorrichtung, die Quantenstrahlung aussendet." deep in a German passage, which no word of it matches."""
        if not concepts:
            return []
        sentences = [s for p in passages if self._reads(p.text) for s in passage_sentences(p.text, p.heading, False)]
        if not sentences:
            return concepts
        rows = self._vectors(sentences)
        return [c for c in concepts if self._meaning(float((rows @ self._anchor_vector(c)).max())) <= HELD_MEANING]

    def follow_up_questions(self, query, analysis, passages, language, count, conversation=None):
        """Questions built on this round: the user's last answer against what was found now, same-numbered
        sections of different documents, the provisions found, the gaps; none asked before."""
        self._count()
        text = reasoner_words(language)
        conversation = conversation or []
        asked = {normal_question(line) for turn in conversation if turn.get("role") == "assistant"
                 for line in str(turn.get("content", "")).splitlines()}
        answers = [str(turn["content"]) for turn in conversation if turn.get("role") == "user" and turn.get("content")]
        found = passage_provisions(passages)
        candidates = []
        if answers and found:
            # the researcher's answer echoed whole: a cut ("…but no") can turn its meaning round
            candidates.append(text["q_answer"].format(answer=" ".join(answers[-1].split()),
                                                      provisions=", ".join(label for label, _ in found[:2])))
        documents_of: dict[str, set[str]] = {}
        for passage in passages:
            # one number in two laws is a question of which law; "1" in two manuals is not
            if _LEGAL_SECTION.match(passage.section or ""):
                documents_of.setdefault(passage.section, set()).add(doc_name(passage.doc))
        candidates += [text["q_same_number"].format(section=section, docs=" / ".join(sorted(docs)))
                       for section, docs in documents_of.items() if len(docs) > 1][:1]
        candidates += [text["q_meanings"].format(term=term, docs=" / ".join(docs))
                       for term, docs in competing_definitions(query, passages, language)][:1]
        if found:
            candidates.append(text["q_provisions"].format(
                provisions="; ".join(f"{label} ({title})" if title else label for label, title in found[:3])))
        # nothing the researcher already answered is asked again: an aspect their words hold, the case once
        # they named one, the documents once they named a provision, an entity they mentioned
        said = dialogue_anchor_terms(query, answers, language) if answers else None
        said_stems = stems(" ".join(answers))
        candidates += [text["q_gap"].format(gap=gap) for gap in analysis.knowledge_gaps[:3]
                       if not contains_concept(gap, said_stems)]
        if analysis.entities and not contains_concept(analysis.entities[0], said_stems):
            candidates.append(text["q_entity"].format(entity=analysis.entities[0]))
        if not (said and (said.additions or said.exclusions)):
            candidates.append(text["q_scope"])
        docs = sorted({p.doc for p in passages})
        if docs and not (said and said.provisions):
            candidates.append(text["q_docs"].format(docs=", ".join(docs[:3])))
        return [q for q in unique(candidates) if normal_question(q) not in asked][: max(2, count)]

    def hitl_context_summary(self, query, conversation, concepts, language):
        self._count()
        text = reasoner_words(language)
        # each answer without its closing full stop: the template's own ends the list ("…the skin." not "..")
        answers = [str(turn["content"]).strip().rstrip(".").strip() for turn in conversation
                   if turn.get("role") == "user"]
        return text["summary"].format(query=query, answers="; ".join(answers) or text["none"],
                                      concepts=", ".join(concepts) or text["none"])

    def anchor_terms(self, query, conversation, language):
        self._count()
        return dialogue_anchor_terms(query, user_answers(conversation), language)

    def research_queries(self, query, summary, concepts, language):
        self._count()
        focus = " ".join(concepts)
        return unique([query, focus, *[f"{concept} {focus}" for concept in concepts[:3]]])[:5]
