"""Phase 4 without an LLM: the answer as cited quotations in its shape (`answer_shape.py`): the findings,
a section per approved task, the reference chain (the quality check is `extractive_judging.py`)."""

from __future__ import annotations

import logging
from statistics import median

from rabbithole_lab.kb.query import glossary
from rabbithole_lab.reasoning.answer import (
    MAX_SENTENCES,
    Provision,
    Sentence,
    links_of,
    name_rows,
    plan_answer,
    provisions_of,
    read_links,
)
from rabbithole_lab.reasoning.answer_shape import (
    SENTENCES_PER_TASK,
    excluded_provision,
    names_provision,
    opening_statements,
    shape_answer,
)
from rabbithole_lab.reasoning.answer_text import written_answer
from rabbithole_lab.reasoning.asked_kinds import asked_kinds, carried_kinds, carries
from rabbithole_lab.reasoning.base import AnswerTask, SynthesisInput
from rabbithole_lab.reasoning.dialogue_terms import excluded
from rabbithole_lab.reasoning.extractive_base import (
    IRRELEVANT_BELOW,
    REMEDIATED_SENTENCES,
    ExtractiveBase,
    reasoner_words,
    sentences_of,
)
from rabbithole_lab.reasoning.question_parts import part_readings, question_parts
from rabbithole_lab.reasoning.text import (
    contains_concept,
    has_figure,
    stems,
)
from rabbithole_lab.records import ChunkWithInfo
from rabbithole_lab.schemas import (
    SynthesisFinding,
    SynthesisOutput,
)

logger = logging.getLogger(__name__)
PART_SHARE = 0.5  # a part's sentence is read by the part's words and the whole question's in equal shares


class ExtractiveWriter(ExtractiveBase):
    def synthesize(self, request: SynthesisInput) -> SynthesisOutput:
        self._count()
        language = request.language
        text = reasoner_words(language)
        chunks = request.all_chunks()
        provisions = provisions_of(chunks, sentences_of, self._sentence_scorer(request.anchor, chunks))
        # what the researcher excluded is not presented as applicable: its sentences are left out, and a
        # provision the exclusion names ("ohne § 13 QStrG") is left out whole
        for provision in provisions:
            provision.sentences = [] if excluded_provision(provision, request.exclusions) else [
                s for s in provision.sentences if not excluded(s.text, request.exclusions)]
        name_rows(provisions, request.question or request.anchor)
        # a rewrite keeps fewer sentences, each carrying a term of the question
        if request.remediation:
            for provision in provisions:
                provision.sentences = [s for s in provision.sentences if self._overlap(request.anchor, s.text) > 0]
        kinds = asked_kinds(request.question or request.anchor)
        carries_kind = (lambda sentence: carried_kinds(sentence, kinds)) if kinds else None
        plan = plan_answer(provisions, IRRELEVANT_BELOW, REMEDIATED_SENTENCES if request.remediation else MAX_SENTENCES,
                           links_of(request.chains), carries_kind, read_links(request.chains))
        if not plan.parts:
            nothing = text["no_answer"].format(anchor=request.question or request.anchor)
            return SynthesisOutput(answer=nothing, nothing_found=nothing)
        # a rewrite keeps to the plan's fewer sentences: no task adds its own
        # a planned task adds a sentence of its own only when it is as much on the question as the plan's
        # typical sentence (the median of what the plan quotes); the researcher's own task is read as written
        typical = float(median(s.score for s in plan.sentences() if id(s) not in plan.companions))
        carries_asked = carries_kind or has_figure
        # a rewrite keeps to the plan's fewer sentences: its findings draw on nothing beyond them; nor does a
        # question that asks for no kind (any figure would do, which says nothing about what it asks)
        beyond = () if request.remediation or not kinds else tuple(provisions)
        opening = opening_statements(plan, carries_asked, beyond, IRRELEVANT_BELOW)
        asked = self._asked_sentences(request.parts, provisions, [sentence.text for _, sentence in opening])
        opening += [(p, s) for p, s in asked if all(s is not held for _, held in opening)]
        # a question that asks several things gets a statement for each part it asks
        for provision, sentence in self._part_sentences(request.question or request.anchor, provisions, chunks):
            if all(sentence is not held for _, held in opening):
                opening.append((provision, sentence))
        shaped = shape_answer(plan, provisions, request.tasks,
                              (lambda task, found, quoted: []) if request.remediation else
                              (lambda task, found, quoted: self._own_sentences(task, found, request.exclusions,
                                                                               quoted, typical)),
                              opening=opening)
        lines = written_answer(shaped, language)
        findings = [SynthesisFinding(claim=s.text, sources=[f"{provision.doc} p. {s.page}"])
                    for provision, s in shaped.opening]
        return SynthesisOutput(answer="\n".join(lines), key_findings=findings)

    def _asked_sentences(self, parts: list[str], provisions: list[Provision],
                         stated: list[str]) -> list[tuple[Provision, Sentence]]:
        """For each part the researcher asked for (an aspect or a named provision) that the findings do not
        state yet, the best sentence that holds it: one of the named provision's, or one with the aspect's
        words (or a glossary translation). Excluded sentences are gone from the provisions already."""
        held = self._held_concepts(parts, stated) if stated else [False] * len(parts)
        terms = glossary()
        out: list[tuple[Provision, Sentence]] = []
        for part, is_held in zip(parts, held, strict=True):
            if is_held:
                continue
            named = [p for p in provisions if p.section and names_provision(part, p)]
            candidates = ([(p, s) for p in named for s in p.sentences] if named else
                          [(p, s) for p in provisions for s in p.sentences
                           if contains_concept(part, stems(s.text), terms.get(part.lower(), []))])
            if candidates:
                out.append(max(candidates, key=lambda item: item[1].score))
        return out

    def _part_sentences(self, question: str, provisions: list[Provision],
                        chunks: list[ChunkWithInfo]) -> list[tuple[Provision, Sentence]]:
        """For each part of a question that asks several things (`question_parts`), the sentence that best
        answers that part: read by the part's own words and the whole question's alike (a part's "dabei"
        or "it" means the question's subject), carrying what the part asks for (a figure, a period, a body)
        when it asks for one. One question asking one thing gets nothing here."""
        parts = question_parts(question)
        if len(parts) < 2:
            return []
        out: list[tuple[Provision, Sentence]] = []
        for part, reading in zip(parts, part_readings(parts), strict=True):
            # what the part asks for is its own; what it is about may be the part's before it
            kinds = asked_kinds(part)
            score = self._sentence_scorer(reading, chunks)
            best: tuple[float, Provision, Sentence] | None = None
            for provision in provisions:
                by_part = score([sentence.text for sentence in provision.sentences])
                for sentence, on_part in zip(provision.sentences, by_part, strict=True):
                    if kinds and not carries(sentence.text, kinds):
                        continue
                    value = PART_SHARE * on_part + (1 - PART_SHARE) * sentence.score
                    if best is None or value > best[0]:
                        best = (value, provision, sentence)
            if best is not None and best[0] >= IRRELEVANT_BELOW and all(best[2] is not s for _, s in out):
                out.append((best[1], best[2]))
        return out

    def _own_sentences(self, task: AnswerTask, found: list[Provision], exclusions: list[str],
                       quoted: set[int], on_question: float) -> list[tuple[Provision, list[Sentence]]]:
        """A task's best sentences by its own words: what a task the researcher wrote asked for. A planned
        task's sentence must also be on the question; the researcher's own task is read as written."""
        chunks = [chunk for provision in found for chunk in provision.chunks]
        if not chunks:
            return []
        by_key = {(p.doc, p.section): p for p in found}
        candidates: list[tuple[float, Provision, Sentence]] = []
        for own in provisions_of(chunks, sentences_of, self._sentence_scorer(task.task, chunks)):
            target = by_key[(own.doc, own.section)]
            # the sentence as the answer's provision holds it, so the answer never quotes it twice
            held = {s.text: s for s in target.sentences}
            candidates += [(sentence.score, target, held[sentence.text]) for sentence in own.sentences
                           if sentence.score >= IRRELEVANT_BELOW and sentence.text in held
                           and id(held[sentence.text]) not in quoted
                           and (task.own or held[sentence.text].score >= on_question)
                           and not excluded(sentence.text, exclusions)]
        best = sorted(candidates, key=lambda item: -item[0])[:SENTENCES_PER_TASK]
        out: dict[int, tuple[Provision, list[Sentence]]] = {}
        for _, provision, sentence in best:
            out.setdefault(id(provision), (provision, []))[1].append(sentence)
        # a task's sentence is quoted with the neighbour it forms one statement with (a rule with the
        # restriction its next sentence makes), unless the answer quotes that neighbour already
        chosen = {id(sentence) for _, _, sentence in best}
        return [(provision, [s for s in provision.whole_statements(sentences)
                             if id(s) in chosen or id(s) not in quoted])
                for provision, sentences in out.values()]
