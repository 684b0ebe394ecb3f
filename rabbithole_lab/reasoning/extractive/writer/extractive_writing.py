"""Phase 4 without an LLM: the answer as cited quotations. Every sentence of the graded context is a
candidate scored by the one ranker (`answer_candidates.py`, `sentence_ranker.py`); the selection covers
what the question and the researcher ask for and fills the rest of the budget by score
(`answer_selection.py`); the lead states the deciding statements first (`answer_text.py`). The quality check
is `extractive_judging.py`."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace

from rabbithole_lab.reasoning.base import SynthesisInput
from rabbithole_lab.reasoning.extractive.extractive_base import reasoner_words
from rabbithole_lab.reasoning.extractive.writer.answer import names_provision, reached_from
from rabbithole_lab.reasoning.extractive.writer.answer_candidates import AnswerContext, CandidateReader
from rabbithole_lab.reasoning.extractive.writer.answer_selection import Selection, Statement, select
from rabbithole_lab.reasoning.extractive.writer.answer_text import (
    decisive_chain_provisions,
    statement_cost,
    written_answer,
)
from rabbithole_lab.reasoning.extractive.writer.provision_score import verdict_record
from rabbithole_lab.schemas import SynthesisFinding, SynthesisOutput

logger = logging.getLogger(__name__)

# the headings and framing lines take room the selection cannot count before the answer is written: a selection
# that overshoots is made again within the room they leave, at most this many times, before statements are cut
MAX_RESELECTIONS = 2


class ExtractiveWriter(CandidateReader):
    def synthesize(self, request: SynthesisInput) -> SynthesisOutput:
        self._count()
        language = request.language
        context = self.answer_context(request)
        lead_max, answer_max = request.lead_max_chars, request.answer_max_chars
        if request.remediation:
            # a rewrite states fewer, surer statements: its lead alone, of sentences that carry a term of the
            # question
            context.candidates = [c for c in context.candidates if c.features["terms"] > 0]
            answer_max = lead_max

        def cost(statement: Statement) -> int:
            return statement_cost(statement, language, context.excerpts)

        selection, lines = _written_within(context, request, cost, lead_max, answer_max)
        if not selection.lead:
            nothing = reasoner_words(language)["no_answer"].format(anchor=request.question or request.anchor)
            return SynthesisOutput(answer=nothing, nothing_found=nothing)
        findings = [SynthesisFinding(claim=s.text, sources=[f"{statement.provision.doc} p. {s.page}"])
                    for statement in selection.lead for s in statement.sentences]
        chain = decisive_chain_provisions(selection)
        verdict = verdict_record(selection.verdict, None if selection.abstains else chain[0],
                                 [] if selection.abstains else chain[1:])
        return SynthesisOutput(answer="\n".join(lines), key_findings=findings, verdict=verdict)

    def verdict_of(self, request: SynthesisInput, output: SynthesisOutput) -> dict:
        """The verdict record of an answer another writer wrote (a model's): the provision its `decisive` field
        names, scored by the fitted provision score over the same context, with the context provisions it cites
        that the answer names too; not stated when the field names no provision of the context."""
        context = self.answer_context(request)
        if context.verdict is None or not context.verdict.ranked:
            return {}
        named = next((p for p in context.provisions if output.decisive.strip()
                      and names_provision(output.decisive, p)), None)
        chain = [p for p in reached_from(context.provisions, named, context.links)
                 if names_provision(output.answer, p)] if named else []
        return verdict_record(replace(context.verdict, stated=named is not None), named, chain)


def _written_within(context: AnswerContext, request: SynthesisInput, cost: Callable[[Statement], int],
                    lead_max: int, answer_max: int) -> tuple[Selection, list[str]]:
    """The selection and its written lines within `answer_max` characters as written. Where the headings and
    framing push the written answer over, the selection is made again in the room they leave, so the budget is
    filled with what fits instead of losing a whole statement at the end; what still does not fit is cut from
    the end of the body."""
    room = answer_max
    for _ in range(MAX_RESELECTIONS + 1):
        selection = select(context, request.parts, cost, lead_max, room, request.tasks)
        if request.remediation:
            selection.body = []  # the rewrite is its lead alone
        lines = written_answer(selection, request.tasks, request.language)
        over = len("\n".join(lines)) - answer_max
        if over <= 0 or not selection.body or room - over < lead_max:
            break
        room -= over
    while len("\n".join(lines)) > answer_max and selection.body:
        selection.body.pop()
        lines = written_answer(selection, request.tasks, request.language)
    return selection, lines
