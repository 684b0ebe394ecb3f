"""Phase 4 without an LLM: the answer as cited quotations. Every sentence of the graded context is a
candidate scored by the one ranker (`answer_candidates.py`, `sentence_ranker.py`); the selection covers
what the question and the researcher ask for and fills the rest of the budget by score
(`answer_selection.py`); the lead states the deciding statements first (`answer_text.py`). The quality check
is `extractive_judging.py`."""

from __future__ import annotations

import logging

from rabbithole_lab.reasoning.answer_candidates import CandidateReader
from rabbithole_lab.reasoning.answer_selection import select
from rabbithole_lab.reasoning.answer_text import statement_cost, written_answer
from rabbithole_lab.reasoning.base import SynthesisInput
from rabbithole_lab.reasoning.extractive_base import reasoner_words
from rabbithole_lab.schemas import SynthesisFinding, SynthesisOutput

logger = logging.getLogger(__name__)


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
        selection = select(context, request.parts,
                           lambda statement: statement_cost(statement, language, context.excerpts),
                           lead_max, answer_max, request.tasks)
        if request.remediation:
            selection.body = []  # the rewrite is its lead alone
        if not selection.lead:
            nothing = reasoner_words(language)["no_answer"].format(anchor=request.question or request.anchor)
            return SynthesisOutput(answer=nothing, nothing_found=nothing)
        lines = written_answer(selection, request.tasks, language)
        # the budget holds for what is written: headings and framing take room too
        while len("\n".join(lines)) > answer_max and selection.body:
            selection.body.pop()
            lines = written_answer(selection, request.tasks, language)
        findings = [SynthesisFinding(claim=s.text, sources=[f"{statement.provision.doc} p. {s.page}"])
                    for statement in selection.lead for s in statement.sentences]
        return SynthesisOutput(answer="\n".join(lines), key_findings=findings)
