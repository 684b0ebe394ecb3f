"""Phases 2-3 without an LLM: the to-do list from the question's focus and the user's answers, each
task's searches, and the re-planning after a task."""

from __future__ import annotations

import logging

from rabbithole_lab.reasoning.extractive.asked_kinds import asked_kinds
from rabbithole_lab.reasoning.extractive.extractive_base import ExtractiveBase, reasoner_words, unique
from rabbithole_lab.reasoning.text import (
    concepts as query_concepts,
)
from rabbithole_lab.records import ToDoItem
from rabbithole_lab.schemas import (
    ClosedTask,
    PlanChange,
    PlannedTask,
    TodoAdaptation,
    TodoPlan,
)

logger = logging.getLogger(__name__)


class ExtractivePlanner(ExtractiveBase):
    # ---- Phase 2 ----------------------------------------------------------------------------
    def generate_todo(self, query, summary, queries, concepts, language, count, found=()):
        # `found` (what round 1 found) is not phrased into tasks here: tasks naming those provisions ran where
        # these templates closed early, and the context they added cost the verdict (docs/decisions/041); the
        # planning step proposes only the tasks whose search finds something new
        self._count()
        text = reasoner_words(language)
        nouns = [c for c in concepts if c[:1].isupper()] if language == "de" else []
        focus = ", ".join((nouns if len(nouns) >= 2 else concepts)[:3]) or query
        # a task for kinds the question does not ask would find only what the question's search found, and
        # close early: it is not proposed
        asked = asked_kinds(query)
        # each task carries its focus and kinds as data: what reads the task later never parses its template back
        tasks = [PlannedTask(task=task.format(focus=focus), context=context, focus=focus, kinds=list(kinds))
                 for task, context, kinds in text["tasks"] if not kinds or not asked or asked & set(kinds)]
        # the researcher's clarification answers are read into the anchor (its additions, exclusions, case),
        # which every task's search and the answer read: made into a task of its own ("Präzisierung des Nutzers
        # prüfen: …") it only repeated the context and always closed early
        return TodoPlan(tasks=tasks[: max(3, min(count, 5))])

    # ---- Phase 3 ----------------------------------------------------------------------------
    def task_search_queries(self, task, anchor, concepts, language):
        self._count()
        task_terms = [c for c in query_concepts(task, language, limit=10) if c.lower() not in
                      {w.lower() for w in concepts}]
        return unique([anchor, " ".join([*concepts, *task_terms])])[:2]

    def adapt_todo(self, anchor: str, tasks: list[ToDoItem], summary: str, missing: list[str],
                   provisions: list[dict], gaps: list[str], saturated: list[int], room: int,
                   language: str) -> TodoAdaptation:
        """By rules: close the open tasks whose search finds only what the context holds; add a task for a
        provision reached by following that no task covers, and for a clarification gap still open."""
        self._count()
        text = reasoner_words(language)
        close = [ClosedTask(id=task_id, reason=text["why_saturated"]) for task_id in saturated]
        add: list[PlanChange] = []
        for provision in provisions[:1]:
            add.append(PlanChange(task=text["task_provision"].format(provision=provision["label"]),
                                  reason=text["why_provision"].format(via=provision["via"])))
        for gap in gaps[:1]:
            add.append(PlanChange(task=f"{gap}: {anchor}", reason=text["why_gap"]))
        return TodoAdaptation(close=close, add=add[:room])

    def corpus_language_queries(self, question: str, corpus_language: str) -> list[str]:
        """No model to translate: the search itself adds the glossary's terms (kb/retrieval/query.py)."""
        return []
