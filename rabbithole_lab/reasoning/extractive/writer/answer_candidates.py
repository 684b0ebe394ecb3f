"""The answer's candidates: every sentence of the graded context, grouped by provision, with the ranker's
features (`sentence_ranker.FEATURES`) measured.

What the researcher excluded is gone before anything is measured: its sentences, and a provision an
exclusion names ("ohne § 13 QStrG") whole; so is a clause that only empowers a regulation, unless the
question asks who may regulate.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rabbithole_lab.reasoning.base import SynthesisInput
from rabbithole_lab.reasoning.dialogue_terms import excluded
from rabbithole_lab.reasoning.extractive.asked_kinds import KINDS, asked_kinds, carried_kinds
from rabbithole_lab.reasoning.extractive.extractive_base import ExtractiveBase, sentences_of
from rabbithole_lab.reasoning.extractive.question_parts import part_readings, question_parts
from rabbithole_lab.reasoning.extractive.writer.answer import (
    Links,
    Phrases,
    Provision,
    excluded_provision,
    links_of,
    name_rows,
    provisions_of,
    reached_from,
    read_links,
)
from rabbithole_lab.reasoning.extractive.writer.excerpts import excerpt
from rabbithole_lab.reasoning.extractive.writer.provision_score import Verdict, decide, provision_features
from rabbithole_lab.reasoning.extractive.writer.sentence_ranker import Candidate, rank
from rabbithole_lab.reasoning.text import (
    asks_about_authorisation,
    authorises_regulation,
    has_figure,
)
from rabbithole_lab.records import TIER_WEIGHTS

FULL_LENGTH_CHARS = 600  # the `length` feature is 1 from here on


@dataclass
class AnswerContext:
    """The candidates, ranked, and what the selection needs besides them."""

    candidates: list[Candidate] = field(default_factory=list)  # best first
    provisions: list[Provision] = field(default_factory=list)
    entry: Provision | None = None
    links: Links = field(default_factory=dict)
    read: Phrases = field(default_factory=dict)  # links only read in the citing text, with their words
    parts: list[str] = field(default_factory=list)  # the question's parts, each as it is read
    part_kinds: list[set[str]] = field(default_factory=list)  # what each part asks for
    excerpts: dict[int, str] = field(default_factory=dict)  # id(sentence) -> how a long one is quoted
    verdict: Verdict | None = None  # the decisive provision by the fitted provision score (`provision_score.py`)


class CandidateReader(ExtractiveBase):
    """Measures the ranker's features of every sentence of a synthesis request."""

    def answer_context(self, request: SynthesisInput) -> AnswerContext:
        chunks = request.all_chunks()
        question = request.question or request.anchor
        readings = self._sentence_readings(request.anchor, chunks)
        provisions = provisions_of(chunks, sentences_of, lambda batch: [0.0] * len(batch), request.document_names)
        # a clause that only empowers a regulation ("… wird ermächtigt, durch Rechtsverordnung …") answers only
        # a question about who may regulate
        skip_enabling = not asks_about_authorisation(request.anchor)
        for provision in provisions:
            provision.sentences = [] if excluded_provision(provision, request.exclusions) else [
                s for s in provision.sentences if not excluded(s.text, request.exclusions)
                and not (skip_enabling and authorises_regulation(s.text))]
        provisions = [p for p in provisions if p.sentences]
        sentences = [s for p in provisions for s in p.sentences]
        texts = [s.text for s in sentences]
        terms, meaning = readings.terms(texts), readings.meaning(texts)
        # the relevance a provision's strength and the entry are read by (no fitted weight: the entry is a
        # feature of the ranker, so it cannot be chosen by it)
        for sentence, value in zip(sentences, readings.blend(terms, meaning), strict=True):
            sentence.score = value
        name_rows(provisions, question)
        parts = part_readings(question_parts(question))
        part_terms = [readings.terms(texts, part) for part in parts] if len(parts) > 1 else [terms]
        kinds = asked_kinds(question)
        links = links_of(request.chains)
        searched = sorted((p for p in provisions if p.depth == 0), key=lambda p: -p.strength)
        entry = searched[0] if searched else max(provisions, key=lambda p: p.strength, default=None)
        from_entry = {id(p) for p in reached_from(provisions, entry, links)} if entry else set()
        strongest = max((p.strength for p in provisions), default=0.0) or 1.0
        named_paragraphs: dict[tuple[str, str], set[str]] = {}
        for cited in links.values():
            for key, paragraphs in cited.items():
                named_paragraphs.setdefault(key, set()).update(paragraphs)
        task_terms = [readings.terms_of(" ".join(self._task_terms(task.task, request.language, task.focus)))
                      for task in request.tasks]
        all_kinds = set(KINDS)
        candidates: list[Candidate] = []
        index = 0
        for provision in provisions:
            named = named_paragraphs.get((provision.doc, provision.section), set())
            for sentence in provision.sentences:
                text = sentence.text
                stated = frozenset(carried_kinds(text, all_kinds))
                carried = stated & kinds
                by_task = [readings.weights.overlap(wanted, text) for wanted in task_terms]
                features = {
                    "terms": terms[index],
                    "meaning": meaning[index],
                    "part": max(each[index] for each in part_terms),
                    "asked_kind": len(carried) / len(kinds) if kinds else 0.0,
                    "figure": float(has_figure(text)),
                    "cited_paragraph": float(bool(sentence.paragraphs & named)),
                    "named_row": float(sentence.named),
                    "entry": float(provision is entry),
                    "reached_from_entry": float(id(provision) in from_entry),
                    "provision_strength": provision.strength / strongest,
                    "completes": float(sentence.continues),
                    "tier": TIER_WEIGHTS.get(sentence.chunk.tier, 1.0),
                    "length": min(1.0, len(text) / FULL_LENGTH_CHARS),
                }
                candidates.append(Candidate(sentence, provision, features,
                                            [each[index] for each in part_terms], by_task, stated))
                index += 1
        excerpts = {id(sentence): shown for sentence in sentences
                    if (shown := excerpt(sentence.text, readings.terms)) != sentence.text}
        ranked = rank(candidates)
        part_kinds = [asked_kinds(part) for part in parts]
        verdict = decide(provision_features(provisions, ranked, links, part_kinds, kinds,
                                            request.question or request.anchor))
        return AnswerContext(ranked, provisions, entry, links, read_links(request.chains), parts, part_kinds, excerpts,
                             verdict)
