"""The JSON shapes a reasoning step answers with (the output formats of the prompts in prompts.py).

The LLM reasoner validates a model's reply against these; the extractive reasoner builds them directly.
Records that live in the state, reports and the index are in records.py.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, computed_field
from pydantic.json_schema import SkipJsonSchema

from rabbithole_lab.records import PreservedQuote


class ExtractedReference(BaseModel):
    """LLM output item for reference extraction."""

    reference_text: str
    reference_type: Literal[
        "legal_section", "academic_numbered", "academic_shortform", "document_mention"
    ]
    target_document: str | None = None


class ExtractedReferenceList(BaseModel):
    references: list[ExtractedReference] = Field(default_factory=list)


class InfoExtractionWithQuotes(BaseModel):
    extracted_info: str
    preserved_quotes: list[PreservedQuote] = Field(default_factory=list)


class QualityAssessment(BaseModel):
    """Five dimensions of 0-100 each; total 0-500."""

    factual_accuracy: int = Field(0, ge=0, le=100)
    semantic_validity: int = Field(0, ge=0, le=100)
    structural_integrity: int = Field(0, ge=0, le=100)
    citation_correctness: int = Field(0, ge=0, le=100)
    query_relevance: int = Field(0, ge=0, le=100)
    issues_found: list[str] = Field(default_factory=list)
    # not asked of a model (left out of its schema): measured by the extractive check when the answer carries a
    # verdict record
    verdict: SkipJsonSchema[int | None] = Field(
        None, ge=0, le=100, description="How well the provision the answer names as decisive stands against the "
                                        "check's own scoring of the context (its score against the best, whether "
                                        "it is quoted, whether the chain it claims is in the context)")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def overall_score(self) -> int:
        """The five dimensions' sum (0-500). The verdict dimension stands beside it, with its reasons: scaling the
        total by it lowered the total's Spearman against the facts from 0.31 to 0.11 on German dev gen 1
        (decision 035)."""
        return self.content_score

    @property
    def content_score(self) -> int:
        """The five dimensions' sum without the verdict's scaling: what a rewrite of the same context can change
        (it keeps the verdict)."""
        return (self.factual_accuracy + self.semantic_validity + self.structural_integrity + self.citation_correctness
                + self.query_relevance)

    def passes(self, threshold: int) -> bool:
        return self.overall_score >= threshold


class SearchQueries(BaseModel):
    queries: list[str] = Field(default_factory=list)


class RetrievalAnalysis(BaseModel):
    key_concepts: list[str] = Field(default_factory=list)
    entities: list[str] = Field(default_factory=list)
    scope: str = ""
    knowledge_gaps: list[str] = Field(default_factory=list)
    coverage_score: float = Field(0.0, ge=0.0, le=1.0)


class FollowUpQuestions(BaseModel):
    questions: list[str] = Field(default_factory=list)


class ContextSummary(BaseModel):
    summary: str = ""


class PlannedTask(BaseModel):
    task: str
    context: str = ""
    # not asked of a model (left out of its schema): set by the rules that phrase a task from a template
    focus: SkipJsonSchema[str] = Field("", description="What the task is about, apart from the words of the "
                                                       "template that phrased it (the question's concepts, a "
                                                       "researcher's answer); empty: all its words are its focus")
    kinds: SkipJsonSchema[list[str]] = Field(default_factory=list, description="The asked kinds (amount, "
                                                                               "deadline, ...) the template aims at")


class TodoPlan(BaseModel):
    tasks: list[PlannedTask] = Field(default_factory=list)


class TaskSummary(BaseModel):
    summary: str = ""
    key_findings: list[str] = Field(default_factory=list)
    relevance_assessment: str = ""
    relevance_score: float = Field(0.0, ge=0.0, le=1.0)
    irrelevant_findings: list[str] = Field(default_factory=list)


class TaskAssessment(BaseModel):
    """How one iteration of a research task ended: answered, or what is still missing."""

    answered: bool = False
    missing: list[str] = Field(default_factory=list, description="Facts or provisions the task still lacks")
    reason: str = ""


class PlanChange(BaseModel):
    task: str
    reason: str = ""


class ClosedTask(BaseModel):
    id: int
    reason: str = ""


class TodoAdaptation(BaseModel):
    """How the open to-do list changes after a task: tasks added, tasks closed early."""

    add: list[PlanChange] = Field(default_factory=list)
    close: list[ClosedTask] = Field(default_factory=list)


class RelevanceScore(BaseModel):
    score: float = Field(0.0, ge=0.0, le=1.0)
    reason: str = ""


class SynthesisFinding(BaseModel):
    claim: str
    sources: list[str] = Field(default_factory=list, description='"document p. N" labels')


class SynthesisOutput(BaseModel):
    answer: str = ""
    decisive: str = Field("", description='The provision that decides the question, as the answer cites it ("§ 73 '
                                          'StrlSchV"); "" when several come into question')
    key_findings: list[SynthesisFinding] = Field(default_factory=list)
    # not asked of a model (left out of its schema): set when the answer is that nothing answers the question
    nothing_found: SkipJsonSchema[str] = Field("", description="Why nothing answers the question, when so")
    invented_citations: SkipJsonSchema[list[str]] = Field(
        default_factory=list, description="Claims removed because their citation or quotation is not in what was "
                                          "retrieved (`claim_check.py`)")
    verdict: SkipJsonSchema[dict] = Field(
        default_factory=dict, description="The provision the answer names as decisive, with its fitted score and "
                                          "margin, or that it names none (`provision_score.verdict_record`)")


class RemediationDecision(BaseModel):
    retry: bool = False
    instructions: str = ""


class AnchorTerms(BaseModel):
    """What the clarification dialogue adds to the question: aspects to include, cases to leave out, and
    the provisions or documents the researcher named."""

    additions: list[str] = Field(default_factory=list, description="Aspects the researcher asked to include")
    exclusions: list[str] = Field(default_factory=list, description="Cases the researcher asked to leave out")
    provisions: list[str] = Field(default_factory=list, description='Named provisions or documents ("§ 12 QStrG")')
