"""The reasoner's roles (small Protocols: clarifier, planner, extractor, judge, synthesiser) and the
`Reasoner` that plays them all: one method per reasoning step the research graph needs.

Two implementations: `LLMReasoner` (prompts.py through a LangChain chat model) and
`ExtractiveReasoner` (deterministic, no LLM). Every method takes the output language
("de" or "en") where its output is read by people.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from rabbithole_lab.records import ChunkWithInfo, Notice, PreservedQuote, ToDoItem, VectorResult, notice_or_words
from rabbithole_lab.schemas import (
    AnchorTerms,
    ExtractedReferenceList,
    InfoExtractionWithQuotes,
    QualityAssessment,
    RelevanceScore,
    RemediationDecision,
    RetrievalAnalysis,
    SynthesisOutput,
    TaskAssessment,
    TaskSummary,
    TodoAdaptation,
    TodoPlan,
)


class ReasonerUnavailableError(RuntimeError):
    """The reasoning backend cannot be reached (e.g. Ollama down); the run must pause, not guess."""


class ModelHostNotOllamaError(ReasonerUnavailableError):
    """The configured host answers, but not as Ollama (an HTML page of a proxy or another service): starting
    Ollama would not help, the address is wrong."""


@dataclass
class AnswerTask:
    """An approved task as the answer needs it: its words, what it searched and which passages it found."""

    id: int
    task: str
    queries: list[str] = field(default_factory=list)
    chunk_ids: set[str] = field(default_factory=set)
    own: bool = False  # written or edited by the researcher: read by its own words, not only the question's
    focus: str = ""  # what a template-phrased task is about (`ToDoItem.focus`); empty: all its words


@dataclass(frozen=True)
class FoundProvision:
    """A provision the clarification's search found, as the planner names it, with the provisions its passages
    cite that the search did not find."""

    label: str  # its section and document: "§ 12 QStrG"
    cites: tuple[str, ...] = ()  # "§ 6 QStrV": resolved in the section index, so each exists


@dataclass
class AskedFor:
    """What the researcher asked for besides the question, as the quality check measures it."""

    parts: list[str] = field(default_factory=list)  # the anchor's additions and named provisions
    question: str = ""  # the question as the researcher wrote it: its parts and what each asks for
    exclusions: list[str] = field(default_factory=list)  # cases left out
    tasks: list[str] = field(default_factory=list)  # the approved tasks' words, one answer section each
    # what the answer names as decisive (the writer's verdict record, `provision_score.verdict_record`): the check
    # weighs it against its own scoring of the retrieved context
    verdict: dict = field(default_factory=dict)


@dataclass
class SynthesisInput:
    anchor: str
    language: str
    hitl_summary: str = ""
    primary: list[ChunkWithInfo] = field(default_factory=list)
    secondary: list[ChunkWithInfo] = field(default_factory=list)
    tertiary: list[ChunkWithInfo] = field(default_factory=list)
    quotes: list[PreservedQuote] = field(default_factory=list)
    task_summaries: list[dict] = field(default_factory=list)
    remediation: str = ""
    # followed references: source, reference, target, reason (text); citing [doc, section], cited [[doc, section]]
    chains: list[dict] = field(default_factory=list)
    question: str = ""  # the question as the researcher wrote it (`anchor` adds what the dialogue added)
    exclusions: list[str] = field(default_factory=list)  # cases the researcher left out
    tasks: list[AnswerTask] = field(default_factory=list)  # the approved tasks, one answer section each
    parts: list[str] = field(default_factory=list)  # what the researcher asked for besides the question
    task_findings: list[str] = field(default_factory=list)  # written per task when the context exceeds one call
    lead_max_chars: int = 1_200  # the extractive answer's lead (`AnswerSettings`)
    answer_max_chars: int = 4_000  # the whole extractive answer
    document_names: dict[str, str] = field(default_factory=dict)  # file -> how the answer names it (registry)

    def all_chunks(self) -> list[ChunkWithInfo]:
        return self.primary + self.secondary + self.tertiary


@dataclass
class ReasonerInfo:
    """What the UI, CLI and report show about the reasoner in use."""

    provider: str  # "ollama" or "extractive"
    model: str | None
    reason: str  # in English, for logs and the terminal
    reason_key: str = ""  # the catalogue's key for the reason (messages.reasoner_reason), "" when there is none
    reason_values: dict = field(default_factory=dict)
    window_tokens: int | None = None  # the num_ctx every call is sized to (a model's reasoner only)
    context_tokens: int | None = None  # the model's own context length, as Ollama reported it

    def reason_notice(self) -> Notice | str:
        """Why this reasoner runs, for the reader (the catalogue's `reason_<key>`), else the English words."""
        if not self.reason_key:
            return self.reason
        return notice_or_words(f"reason_{self.reason_key}", self.reason_values, self.reason)


class Clarifier(Protocol):
    """Phase 1: the clarification dialogue (queries, what the retrieval shows, questions, its summary)."""

    def hitl_queries(self, query: str, iteration: int, conversation: list[dict], gaps: list[str],
                     concepts: list[str], language: str, count: int) -> list[str]: ...

    def analyze_retrieval(self, query: str, passages: list[VectorResult], language: str) -> RetrievalAnalysis: ...

    def follow_up_questions(self, query: str, analysis: RetrievalAnalysis, passages: list[VectorResult],
                            language: str, count: int, conversation: list[dict] | None = None) -> list[str]:
        """`conversation`: the dialogue so far ({"role": "assistant"|"user", "content"}); the questions build on
        it and never repeat one asked before."""
        ...

    def hitl_context_summary(self, query: str, conversation: list[dict], concepts: list[str],
                             language: str) -> str: ...

    def research_queries(self, query: str, summary: str, concepts: list[str], language: str) -> list[str]: ...

    def anchor_terms(self, query: str, conversation: list[dict], language: str) -> AnchorTerms:
        """What the researcher's answers add to the question: additions, exclusions, named provisions."""
        ...


class Planner(Protocol):
    """Phases 2-3: the to-do list, each task's searches, and the re-planning after a task."""

    def generate_todo(self, query: str, summary: str, queries: list[str], concepts: list[str],
                      language: str, count: int, found: tuple[FoundProvision, ...] = ()) -> TodoPlan:
        """The researcher's clarification answers are in `summary` and in the anchor every task reads; they are
        never a task of their own. `found`: what round 1 found, best first, for tasks that name it."""
        ...

    def task_search_queries(self, task: str, anchor: str, concepts: list[str], language: str) -> list[str]: ...

    def corpus_language_queries(self, question: str, corpus_language: str) -> list[str]: ...

    def adapt_todo(self, anchor: str, tasks: list[ToDoItem], summary: str, missing: list[str], provisions: list[dict],
                   gaps: list[str], saturated: list[int], room: int, language: str) -> TodoAdaptation: ...


class Extractor(Protocol):
    """Phase 3: what a passage says for the task, its references, and what a task's findings add up to."""

    def extract_info(self, chunk: VectorResult, anchor: str, task: str, language: str) -> InfoExtractionWithQuotes: ...

    def extract_references(self, text: str) -> ExtractedReferenceList | None: ...

    def summarize_task(self, task: str, anchor: str, findings: list[ChunkWithInfo], language: str) -> TaskSummary: ...

    def assess_task(self, task: str, anchor: str, findings: list[ChunkWithInfo], language: str,
                    focus: str = "") -> TaskAssessment:
        """`focus`: what the task is about apart from its template's words (`ToDoItem.focus`); empty: all of
        `task`."""
        ...


class Judge(Protocol):
    """Phases 3.5-4: relevance of a finding, quality of the answer, and whether to write it again."""

    # whether score_relevance reads a passage with more than search already used (a model does; the
    # extractive reasoner reads it through the same embedder and the question's words)
    judges_beyond_search: bool

    def score_relevance(self, anchor: str, finding: ChunkWithInfo, language: str) -> RelevanceScore: ...

    def assess_quality(self, query: str, answer: str, sources: list[ChunkWithInfo], language: str,
                       asked: AskedFor | None = None) -> QualityAssessment:
        """`asked`: what the researcher asked for besides the question (see `AskedFor`): an answer that
        leaves a part without a cited statement does not answer the question, one that quotes an excluded
        case as applicable does not either, and one without a section for an approved task is incomplete."""
        ...

    def decide_remediation(
        self, query: str, assessment: QualityAssessment, threshold: int, language: str
    ) -> RemediationDecision: ...


class Synthesiser(Protocol):
    """Phase 4: the answer from the graded context."""

    context_chars: int  # characters of graded context the synthesis reads (the assembler's budget)

    def synthesize(self, request: SynthesisInput) -> SynthesisOutput: ...


@runtime_checkable
class Reasoner(Clarifier, Planner, Extractor, Judge, Synthesiser, Protocol):
    """Every role, with what the UI and the report show about the reasoner (the gate is apart:
    `rabbithole/gate.py`'s `ReferenceDecider`)."""

    info: ReasonerInfo
    calls: int
    tokens: int

    def drain_warnings(self) -> list[str]: ...
