"""One research task (seed 003 phase 3, AC-3.6): queries -> rounds (search, follow, admit, extract)
-> assessment after each round -> summary. A unit of its own, testable without a graph: the
`execute_task` node builds one from the state and stores what it returns."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from rabbithole_lab.agent.nodes.node_common import chunk_key, concurrent_map
from rabbithole_lab.agent.services import Services
from rabbithole_lab.agent.state import TaskRound, TaskStats
from rabbithole_lab.evidence.citation_format import cited_statements, quotation_of, strip_citations
from rabbithole_lab.rabbithole.candidates import Candidate
from rabbithole_lab.rabbithole.engine import admit, ranking_below_cut
from rabbithole_lab.reasoning.dialogue_terms import excluded
from rabbithole_lab.reasoning.text import is_title_line
from rabbithole_lab.records import ChunkWithInfo, ReferenceEdge, ToDoItem, VectorResult, notice
from rabbithole_lab.schemas import TaskSummary
from rabbithole_lab.steps.plan_evidence import named_sections

logger = logging.getLogger(__name__)

QUESTION_TASK_ID = 0  # the to-do item that is the question itself (planning adds it first)
TITLE_LINE_RELEVANCE = 0.5  # a title line's relevance, as a share of its search score: a reader skips it
Progress = Callable[[int, int], None]


MIN_SHARED_QUOTE_CHARS = 30  # shorter quotations ("Beschäftigte", "§ 78") are words the answer and a task share


def _silent(done: int, total: int) -> None:
    return None


def without_excluded(summary: TaskSummary, exclusions: list[str]) -> TaskSummary:
    """A task summary quotes nothing about a case the researcher left out (an added task's summary quoted the
    excluded under-18 limit, and so did the saved report), whichever reasoner wrote it."""
    if not exclusions:
        return summary

    def kept(statements: list[str]) -> list[str]:
        return [statement for statement in statements if not excluded(strip_citations(statement), exclusions)]

    return summary.model_copy(update={"summary": " ".join(kept(cited_statements(summary.summary))),
                                      "key_findings": kept(summary.key_findings)})


def _plain(text: str) -> str:
    return " ".join(text.casefold().split())


def beyond_answer(summary: str, answer: str) -> tuple[str, int]:
    """What a task summary found that the answer does not already quote, and how many of its statements the
    answer holds (a statement whose quotation the answer quotes, or that holds one of the answer's quotations)."""
    quoted = [_plain(quotation_of(statement)) for statement in cited_statements(answer)]
    quoted = [quotation for quotation in quoted if len(quotation) >= MIN_SHARED_QUOTE_CHARS]
    plain_answer = _plain(strip_citations(answer))
    kept: list[str] = []
    for statement in cited_statements(summary):
        quotation = _plain(quotation_of(statement))
        if (len(quotation) >= MIN_SHARED_QUOTE_CHARS and quotation in plain_answer) or any(
                shared in quotation for shared in quoted):
            continue
        kept.append(statement)
    held = len(cited_statements(summary)) - len(kept)
    return " ".join(kept), held


def reading_anchor(task: str, origin: str, anchor: str) -> str:
    """The anchor a task's findings are read against: a researcher's own task leads with its words."""
    return f"{task} {anchor}" if origin == "user" and task not in anchor else anchor


@dataclass
class TaskOutcome:
    """What one task found: its findings (in the order found), the references it followed or skipped,
    its rounds and summary, and which passages and references it saw."""

    findings: list[ChunkWithInfo]
    edges: list[ReferenceEdge]
    rounds: list[TaskRound]
    summary: TaskSummary
    stats: TaskStats
    seen: set[str]
    visited: set[str]  # every reference resolved so far, this task's and earlier ones


@dataclass
class ResearchTask:
    """Researches one to-do item against the question (`anchor`) with the run's services."""

    services: Services
    task: ToDoItem
    anchor: str
    language: str
    concepts: list[str] = field(default_factory=list)
    collection: str | None = None
    seen: set[str] = field(default_factory=set)  # passages earlier tasks admitted (chunk_key)
    visited: set[str] = field(default_factory=set)  # references earlier tasks resolved
    # passages earlier tasks admitted that this task's searches found again (chunk ids): the answer's section
    # for the task names them as its findings too, instead of "not found"
    found_again: set[str] = field(default_factory=set)
    exclusions: list[str] = field(default_factory=list)  # cases the researcher left out: no summary quotes one
    below_cut: list[VectorResult] = field(default_factory=list)  # the question's ranking below the pool (search)
    search_progress: Progress = _silent
    follow_progress: Progress = _silent

    # ---- the steps --------------------------------------------------------------------------
    @property
    def reading_anchor(self) -> str:
        """What the task's passages are read against: the anchor, and a task the researcher wrote or edited
        in its own words first (it is researched as written, also where the question does not say it)."""
        return reading_anchor(self.task.task, self.task.origin, self.anchor)

    def queries(self) -> list[str]:
        """2 targeted queries + 1 base query (task + key concepts); task 0 searches the question itself, with
        what the clarification added (the anchor)."""
        targeted = self.services.reasoner.task_search_queries(self.task.task, self.anchor, self.concepts,
                                                               self.language)
        base = self.anchor if self.task.id == QUESTION_TASK_ID \
            else f"{self.task.task} {' '.join(self.concepts)}".strip()
        return list(dict.fromkeys([base, *targeted]))[: self.services.settings.search.queries_per_task]

    def search(self, queries: list[str]) -> list[VectorResult]:
        """The candidate pool's first stage: each query's hits not seen in earlier tasks, best first.
        The question itself gets the whole first stage (`retrieve`), each other query `k` hits; with
        REFERENCE_CITED_BY_DEPTH the question's ranking further down is kept in `below_cut` (backlinks only)."""
        kb, settings = self.services.kb, self.services.settings
        found: dict[str, VectorResult] = {}
        self.below_cut = []
        if self.anchor in queries:
            # a question in another language than the documents: the model writes queries in theirs
            corpus_language = kb.corpus_language(self.collection)
            if self.language != corpus_language:
                queries = [*queries, *self.services.reasoner.corpus_language_queries(self.anchor, corpus_language)]
        for query in queries:
            if query == self.anchor:
                hits = kb.retrieve(query, k=settings.search.first_stage_pool, collection=self.collection)
                self.below_cut = [hit for hit in ranking_below_cut(kb, settings.references, query, len(hits),
                                                                   self.collection)
                                  if chunk_key(hit) not in self.seen]
            else:
                hits = kb.search(query, k=settings.search.chunks_per_query, collection=self.collection)
            self.found_again |= {hit.chunk_id for hit in hits[: settings.search.chunks_per_query]
                                 if chunk_key(hit) in self.seen}
            for hit in hits:
                key = chunk_key(hit)
                if key not in self.seen and (key not in found or found[key].score < hit.score):
                    found[key] = hit
        for hit in self.named_sections:  # looked up, not searched: first, whatever their words
            if chunk_key(hit) not in self.seen:
                found[chunk_key(hit)] = hit.model_copy(update={"score": 1.0})
        return sorted(found.values(), key=lambda hit: -hit.score)

    @cached_property
    def named_sections(self) -> list[VectorResult]:
        """The sections a task names ("Was regelt § 77 StrlSchG?"), looked up. The question's own task is left
        to its search, which the retrieval benchmarks measure."""
        if self.task.id == QUESTION_TASK_ID:
            return []
        return named_sections(self.services, self.task.task, self.anchor, self.language)

    @cached_property
    def named_keys(self) -> set[str]:
        """The passages of the sections the task names (chunk keys)."""
        return {chunk_key(hit) for hit in self.named_sections}

    def budget_chars(self, iteration: int) -> int:
        search = self.services.settings.search
        if iteration > 1:
            return search.task_context_chars // 2
        if self.task.id == QUESTION_TASK_ID:
            # the question's own search is what the retrieval benchmark measures: it gets the budget
            # it is measured at, and the other tasks' searches (on task texts) add to it
            return search.question_context_chars
        return search.task_context_chars

    def extract(self, item) -> ChunkWithInfo:
        result = item.result
        info = self.services.reasoner.extract_info(result, self.reading_anchor, self.task.task, self.language)
        # a title line is found because it shares the question's words, but it states nothing to rely on
        relevance = item.score * (TITLE_LINE_RELEVANCE if is_title_line(result.text) else 1.0)
        finding = ChunkWithInfo.from_result(
            result, extracted_info=info.extracted_info, relevance_score=round(relevance, 4), depth=item.depth,
            tier=item.tier, references=item.references, preserved_quotes=info.preserved_quotes,
            cited_by=item.cited_by, cites=item.cites)
        named = chunk_key(result) in self.named_keys
        if (item.depth or self.task.id == QUESTION_TASK_ID or named) and not finding.extracted_info \
                and not result.addressed_to_model:
            # kept even when no sentence matched: a citation, the question's own search or the task naming the
            # section made it relevant
            finding.extracted_info = " ".join(result.text.split())[:600]
        return finding

    def summed_up(self, findings: list[ChunkWithInfo]) -> list[ChunkWithInfo]:
        """What the task's summary reads. A task that names sections ("Was regelt § 78 StrlSchG?") asks what they
        say: it is summed up by their passages, also those an earlier task admitted (read again against this task),
        not by the passages its search found because they cite the section (an incident criterion "… nach § 78 …"
        is no answer to what § 78 rules). Any other task: all it found."""
        if not self.named_sections:
            return findings
        wanted = {hit.chunk_id for hit in self.named_sections}
        named = {finding.chunk_id: finding for finding in findings if finding.chunk_id in wanted}
        for hit in self.named_sections:
            if hit.chunk_id not in named:
                named[hit.chunk_id] = self.extract(Candidate(hit, "section", 0, hit.score))
        return [finding for finding in named.values() if finding.extracted_info] or findings

    # ---- the loop ---------------------------------------------------------------------------
    def run(self) -> TaskOutcome:
        """Up to MAX_ITERATIONS_PER_TASK rounds (AC-3.6): each ends with an assessment of the task, and the
        next round searches for what the assessment names as missing, with its own share of the context."""
        started = time.perf_counter()
        reasoner, settings = self.services.reasoner, self.services.settings
        calls_before, llm_before = reasoner.calls, getattr(reasoner, "llm_calls", 0)
        findings: list[ChunkWithInfo] = []
        edges: list[ReferenceEdge] = []
        rounds: list[TaskRound] = []
        stop_reasons: list[dict] = []
        hits_total = tokens = 0
        queries = self.queries()
        round_queries = queries
        rounds_max = settings.search.max_iterations_per_task
        for iteration in range(1, rounds_max + 1):
            self.search_progress(iteration, rounds_max)
            hits = self.search(round_queries)
            hits_total += len(hits)
            if not hits:
                rounds.append(TaskRound(iteration=iteration, queries=round_queries, new_chunks=0, answered=False,
                                        missing=[], reason=notice("nothing_new")))
                break
            trail = self.services.follower().run(hits, self.anchor, self.language, visited=self.visited,
                                                 progress=self.follow_progress, below_cut=self.below_cut)
            items = admit(trail.candidates, self.budget_chars(iteration), strict=True)
            new_findings = concurrent_map(self.extract, items, settings.llm.concurrency)
            self.seen |= {chunk_key(item.result) for item in items}
            findings += new_findings
            edges += trail.edges
            self.visited |= set(trail.visited)
            tokens += trail.tokens_used
            stop_reasons += [reason for reason in trail.stop_reasons if reason not in stop_reasons]
            assessment = reasoner.assess_task(self.task.task, self.reading_anchor, findings, self.language,
                                              focus=self.task.focus)
            rounds.append(TaskRound(iteration=iteration, queries=round_queries, new_chunks=len(new_findings),
                                    answered=assessment.answered, missing=assessment.missing,
                                    reason=assessment.reason))
            if assessment.answered or not assessment.missing:
                break
            # the next round looks for what is missing, in the words of the task and the question
            round_queries = [f"{missing} {' '.join(self.concepts[:3])}".strip() for missing in assessment.missing]
        # a researcher's own task is summed up by what it asks; the others by the question
        summary_anchor = self.task.task if self.task.origin == "user" else self.anchor
        summary = without_excluded(reasoner.summarize_task(self.task.task, summary_anchor,
                                                           self.summed_up(findings), self.language),
                                   self.exclusions)
        stats = TaskStats(
            task_id=self.task.id, task=self.task.task, queries=queries, iterations=len(rounds), rounds=rounds,
            seconds=round(time.perf_counter() - started, 3), reasoner_calls=reasoner.calls - calls_before,
            llm_calls=getattr(reasoner, "llm_calls", 0) - llm_before, chunks=len(findings), seeds=hits_total,
            followed=sum(1 for e in edges if e.decision == "followed"),
            skipped=sum(1 for e in edges if e.decision == "skipped"), tokens_used=tokens, stop_reasons=stop_reasons,
            found_again=sorted(self.found_again))
        return TaskOutcome(findings, edges, rounds, summary, stats, self.seen, self.visited)
