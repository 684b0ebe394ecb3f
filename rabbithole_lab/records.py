"""Typed records shared by every layer (the seeds' model names are kept).

Nothing here talks to a library: these are plain Pydantic models that round-trip
through JSON, so they can live in LangGraph state, reports and CLI output.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

ReferenceType = Literal[
    "section",
    "document",
    "external",
    "legal_section",
    "academic_numbered",
    "academic_shortform",
    "document_mention",
]
Tier = Literal["primary", "secondary", "tertiary"]
# what a reference does (rabbithole/reference_types.py reads it from the words around the reference)
Relation = Literal["cites", "delegates", "applies_correspondingly", "annex", "note"]
TIER_WEIGHTS: dict[str, float] = {"primary": 1.0, "secondary": 0.7, "tertiary": 0.4}
CHARS_PER_TOKEN = 4  # documented estimate (qwen/llama tokenizers average ~4 characters per token)


class Chunk(BaseModel):
    """One indexed piece of a document, never straddling a section heading."""

    id: str = Field(description="Content hash of collection, doc and text")
    text: str
    doc: str = Field(description="File name, e.g. StrlSchG.pdf")
    collection: str
    page_start: int = Field(ge=1)
    page_end: int = Field(ge=1)
    section: str = Field("", description='Normalised label like "§ 78" or "Anlage 4"; "" if none')
    heading: str = Field("", description="The heading line of the section")
    char_start: int = Field(0, ge=0, description="Offset of the chunk in the document text")
    page_map: str = Field("", description='Page changes inside the text, "offset:page" pairs ("0:5,812:6")')
    continuation: bool = Field(False, description="Not the first chunk of its section: its text starts inside "
                                                  "a sentence the chunk before it began")
    addressed_to_model: bool = Field(False, description="Its text speaks to an AI system (a note to a model, an "
                                                        "imperative about what to say or conceal): data, never "
                                                        "quoted, decisive or followed (language.addresses_a_model)")


class VectorResult(BaseModel):
    """A search hit. `score` is in [0, 1]; higher is better."""

    chunk_id: str
    text: str
    doc: str
    collection: str
    page_start: int
    page_end: int
    section: str = ""
    heading: str = ""
    score: float = 0.0
    retrieval: Literal["dense", "bm25", "hybrid", "section"] = "hybrid"
    page_map: str = Field("", description='Page changes inside the text, "offset:page" pairs')
    continuation: bool = False
    char_start: int = Field(0, ge=0, description="Offset of the chunk in its document's text")
    addressed_to_model: bool = Field(False, description="Its text speaks to an AI system (`Chunk`)")

    # seed names
    @property
    def doc_id(self) -> str:
        return self.doc

    @property
    def chunk_text(self) -> str:
        return self.text

    @property
    def page_number(self) -> int:
        return self.page_start

    @property
    def relevance_score(self) -> float:
        return self.score

    def public_dict(self) -> dict:
        """The CLI/JSON shape: doc, collection, section, page_start, page_end, score, text."""
        return {
            "doc": self.doc,
            "collection": self.collection,
            "section": self.section,
            "page_start": self.page_start,
            "page_end": self.page_end,
            "score": round(self.score, 4),
            "text": self.text,
        }


class NestedChunk(BaseModel):
    """Content a followed reference resolved to."""

    chunk: str
    document: str
    page: int
    chunk_id: str = ""
    section: str = ""
    collection: str = ""
    extracted_info: str = ""
    relevance_score: float = 0.0
    depth: int = 1


class DetectedReference(BaseModel):
    """A reference found in a chunk."""

    type: ReferenceType
    target: str = Field(description="Normalised target, e.g. '§ 78 StrlSchG' or a URL")
    original_text: str = Field(description="The matched text as written")
    start: int = Field(0, ge=0, description="Character span start in the scanned text")
    end: int = Field(0, ge=0, description="Character span end (exclusive)")
    book: str | None = Field(None, description="The cited document as written ('StrlSchG')")
    sections: list[str] = Field(default_factory=list, description="Section numbers, e.g. ['78']")
    unit: str = Field("", description="§, Art., Anlage, section, Rule ...")
    paragraphs: dict[str, list[str]] = Field(
        default_factory=dict, description="The paragraphs (Absätze) cited per section as in `sections` "
        "({'78': ['2']} for '§ 78 Absatz 2'); a section not listed is cited whole")
    found: bool = False
    nested_chunks: list[NestedChunk] = Field(default_factory=list)
    document_context: str | None = Field(None, description="Resolved document name hint")
    book_exact: bool = Field(
        False, description="The book is a single word ('Reporting 3.3'): it names a document only as that "
        "document's whole name, never by a partial or fuzzy match")
    joined_book: str | None = Field(
        None,
        description="Book of the reference this one is joined to by 'in Verbindung mit' ('§ 21 Abs. 3 i.V.m. § 54 "
        "AtG'); tried when the containing document lacks the section",
    )
    version: str | None = Field(
        None, description="An earlier version the reference names ('in der bis zum 31. Dezember 2018 geltenden "
        "Fassung'); today's text of that section is not what it cites, so it is never resolved")
    extraction_method: Literal["regex", "llm"] = "regex"
    resolution: str = Field("", description="How it was resolved: section_index, scoped, broad, external, "
                                            "not_in_collection, section_not_found, none")
    relation: Relation = Field(
        "cites", description="What the reference does, read from the words around it "
        "(rabbithole/reference_types.py): cites, delegates (an enabling clause), applies_correspondingly, annex, "
        "note (a footnote of the passage)")

    @property
    def key(self) -> str:
        return f"{self.type}:{self.target}"

    def paragraphs_of(self, section_label: str = "") -> list[str]:
        """The paragraphs this reference cites of the section labelled `section_label` ("§ 9g", "Anlage 4"), or of
        its one section; [] for all of it."""
        if len(self.sections) == 1:
            return self.paragraphs.get(self.sections[0], [])
        number = section_label.split()[-1] if section_label.strip() else ""
        return self.paragraphs.get(section_label) or self.paragraphs.get(number, [])


class PreservedQuote(BaseModel):
    """A verbatim quote kept for legal/technical precision."""

    quote: str
    relevance_reason: str = ""
    document: str = ""
    page: int | None = None


class ChunkWithInfo(BaseModel):
    """A retrieved chunk with its extraction, references and tier."""

    chunk_text: str
    extracted_info: str = ""
    document: str
    page: int
    page_end: int | None = None
    chunk_id: str = ""
    section: str = ""
    collection: str = ""
    relevance_score: float = 0.0
    depth: int = 0
    tier: Tier = "primary"
    references: list[DetectedReference] = Field(default_factory=list)
    preserved_quotes: list[PreservedQuote] = Field(default_factory=list)
    cited_by: str = Field("", description="chunk_id of the chunk whose reference led here")
    cites: str = Field("", description="A backlink: chunk_id of the context chunk this one cites")
    page_map: str = Field("", description='Page changes inside chunk_text, "offset:page" pairs')
    heading: str = Field("", description="The section heading the chunk text starts with")
    continuation: bool = Field(False, description="The chunk continues its section's previous chunk")
    char_start: int = Field(0, ge=0, description="Offset of the chunk in its document's text: where consecutive "
                                                 "chunks of a section overlap")
    addressed_to_model: bool = Field(False, description="Its text speaks to an AI system (`Chunk`): shown as not "
                                                        "used, never quoted, decisive or followed")

    @classmethod
    def from_result(cls, result: VectorResult, **fields) -> ChunkWithInfo:
        """The chunk of a search result with what the caller knows about it (extraction, score, tier, ...)."""
        return cls(chunk_text=result.text, document=result.doc, page=result.page_start, page_end=result.page_end,
                   chunk_id=result.chunk_id, section=result.section, collection=result.collection,
                   page_map=result.page_map, heading=result.heading, continuation=result.continuation,
                   char_start=result.char_start, addressed_to_model=result.addressed_to_model, **fields)


# What the research tells its reader on the way (progress, a warning, an error): a catalogue key with its values
# (a value may be a notice itself), worded only by the use case, the report and the front ends (messages/reasons.py)
Notice = dict  # {"key": str, "values": {name: str | float | list[str] | Notice}, "text"?: words without a key}
RESEARCH_SUMMARY = "research_summary"  # the notice of what will be researched (question, additions, ...)


def notice(key: str, **values) -> Notice:
    return {"key": key, "values": values}


def notice_or_words(key: str, values: dict, words: str) -> Notice:
    """A notice whose `words` (English, for logs) are shown where the catalogue has no sentence for `key`."""
    return {"key": key, "values": dict(values), "text": words}


@dataclass(frozen=True)
class Reason:
    """Why the follower did what it did: a catalogue key with its values, which only the front ends turn into
    words (messages/reasons.py), or a model's own words."""

    key: str = ""
    values: dict[str, str | float] = field(default_factory=dict)
    text: str = ""

    def __bool__(self) -> bool:
        return bool(self.key or self.text)

    def edge_fields(self) -> dict:
        return {"reason": self.text, "reason_key": self.key, "reason_values": dict(self.values)}


class ReferenceEdge(BaseModel):
    """One edge of the followed-reference graph."""

    from_chunk: str
    to_chunks: list[str] = Field(default_factory=list)
    type: ReferenceType
    target: str
    depth: int
    decision: Literal["followed", "skipped"]
    reason: str = Field("", description="A model's own words for its decision, shown as they are")
    reason_key: str = Field("", description="Why, as a catalogue key the front ends word (messages/reasons.py)")
    reason_values: dict[str, str | float] = Field(default_factory=dict)
    resolution: str = ""
    score: float = 0.0
    from_doc: str = ""
    from_section: str = ""
    to_docs: list[str] = Field(default_factory=list, description="Where the reference points, also when skipped")
    to_sections: list[str] = Field(default_factory=list)
    to_paragraphs: list[str] = Field(default_factory=list, description="The paragraphs (Absätze) of the one "
                                     "cited section the reference names ('§ 9g Absatz 5'); empty: all of it")
    relation: Relation = Field(
        "cites", description="What the reference does: cites, delegates, applies_correspondingly, annex, note")


class QueryAnalysis(BaseModel):
    original_query: str
    key_concepts: list[str] = Field(default_factory=list)
    entities: list[str] = Field(default_factory=list)
    scope: str = ""
    assumed_context: list[str] = Field(default_factory=list)
    clarification_needed: bool = False
    hitl_refinements: list[str] = Field(default_factory=list)
    detected_language: Literal["de", "en"] = "de"


class ToDoItem(BaseModel):
    id: int
    task: str
    context: str = ""
    context_key: str = Field("", description="The catalogue's key for a context the research gave the task (the "
                                             "question itself, a query of the dialogue); the front ends word it")
    completed: bool = False
    subtasks: list[str] = Field(default_factory=list)
    origin: Literal["planned", "user", "added"] = Field(
        "planned", description="planned before approval, given by the user, or added during research")
    added_reason: str = Field("", description="Why the task was added during research")
    closed_reason: str = Field("", description="Why the task was closed early, without its own research")
    focus: str = Field("", description="What the task is about, apart from its template's words; empty for a "
                                       "task the researcher wrote or edited, which is read by its own words")
    kinds: list[str] = Field(default_factory=list, description="The asked kinds its template aims at")


class ToDoList(BaseModel):
    items: list[ToDoItem] = Field(default_factory=list)
    max_items: int = 15
    current_item_id: int | None = None

    def add_task(self, task: str, context: str = "", focus: str = "", kinds: list[str] | None = None) -> ToDoItem:
        if len(self.items) >= self.max_items:
            raise ValueError(f"The to-do list is full ({self.max_items} tasks)")
        item = ToDoItem(id=max((i.id for i in self.items), default=-1) + 1, task=task, context=context,
                        focus=focus, kinds=list(kinds or []))
        self.items.append(item)
        return item

    def get_next_task(self) -> ToDoItem | None:
        return next((item for item in self.items if not item.completed), None)

    def run_position(self, task: ToDoItem) -> tuple[int, int]:
        """(n, N): `task` is the n-th of the N tasks that are researched; a task closed early without its own
        research is not counted (the counter jumped from "1/4" to "5/5")."""
        running = [item.id for item in self.items if not item.closed_reason]
        return (running.index(task.id) + 1 if task.id in running else len(running)), len(running)

    def renumber(self) -> None:
        for index, item in enumerate(self.items):
            item.id = index


class SearchQueryResult(BaseModel):
    """Everything one research task gathered."""

    query: str
    task_id: int | None = None
    chunks: list[ChunkWithInfo] = Field(default_factory=list)
    summary: str | None = None
    summary_references: list[str] = Field(default_factory=list)
    quality_score: float | None = None
    web_search_results: list[str] | None = None


class ResearchContextMetadata(BaseModel):
    total_iterations: int = 0
    documents_referenced: list[str] = Field(default_factory=list)
    visited_refs: list[str] = Field(default_factory=list)
    external_sources_used: bool = False


class ResearchContext(BaseModel):
    search_queries: list[SearchQueryResult] = Field(default_factory=list)
    metadata: ResearchContextMetadata = Field(default_factory=ResearchContextMetadata)

    def has_visited_ref(self, key: str) -> bool:
        return key in self.metadata.visited_refs

    def mark_ref_visited(self, key: str) -> None:
        if key not in self.metadata.visited_refs:
            self.metadata.visited_refs.append(key)


class LinkedSource(BaseModel):
    doc_id: str
    page_number: int
    relevance_score: float = 0.0
    collection: str = ""
    category: str = ""
    section: str = ""
    path: str = ""
    link: str = ""
    cited: bool = Field(False, description="The answer cites this page; the other sources were consulted")


class Finding(BaseModel):
    claim: str
    evidence: str = ""
    sources: list[LinkedSource] = Field(default_factory=list)


class FinalReport(BaseModel):
    query: str
    answer: str
    findings: list[Finding] = Field(default_factory=list)
    sources: list[LinkedSource] = Field(default_factory=list)
    quality_score: int = 0
    quality_breakdown: dict[str, int] = Field(default_factory=dict)
    metadata: dict = Field(default_factory=dict)


class IngestIssue(BaseModel):
    """A file that could not be ingested, with a one-line reason."""

    path: str
    reason: str
    duplicate: bool = Field(False, description="Its content is indexed under another name: nothing is missing")


class IngestReport(BaseModel):
    files_seen: int = 0
    files_ingested: int = 0
    files_unchanged: int = 0
    chunks_added: int = 0
    chunks_removed: int = 0
    chunks_reembedded: int = 0  # chunks of collections moved to another embedder (`ingest --reindex`)
    skipped: list[IngestIssue] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)  # "collection/doc": documents that left the index
    not_used: list[IngestIssue] = Field(default_factory=list)  # a PDF's text file, not used as the PDF was read
    collections: list[str] = Field(default_factory=list)
    seconds: float = 0.0  # the ingest's wall time
    pages_ocr: int = 0  # scanned pages Tesseract read (or its cache gave)
    ocr_mean_confidence: float = 0.0  # their mean word confidence, 0-100
    ocr_poor_pages: list[str] = Field(default_factory=list)  # "scan.pdf p. 3 (41)": below OCR_CONFIDENCE_FLOOR
    unread_pages: list[str] = Field(default_factory=list)  # "mixed.pdf p. 2: <why>": no text layer, no OCR

    @property
    def ok(self) -> bool:
        return (self.files_ingested + self.files_unchanged) > 0

    @property
    def complete(self) -> bool:
        """Every file of the folder is in the index (a copy of another counts as in): `ingest` exits 0."""
        return self.ok and not any(not issue.duplicate for issue in self.skipped)


# ---- the reference gate's contract: the follower asks, a reasoner's gate or the extractive decider answers ----
class ReferenceDecision(BaseModel):
    """The gate's verdict on one reference: a model's reason in its words, a rule's as a catalogue key."""

    follow: bool
    reason: str = ""
    reason_key: SkipJsonSchema[str] = ""
    reason_values: SkipJsonSchema[dict[str, str | float]] = Field(default_factory=dict)

    def why(self) -> Reason:
        return Reason(self.reason_key, self.reason_values, self.reason)


@dataclass
class GateInput:
    reference: DetectedReference
    window: str
    document: str
    target_title: str = ""
    target_text: str = ""  # the resolved target, when known (look-ahead)
    target_similarity: float | None = None  # cosine of the target chunk to the anchor, from the index


class ReferenceDecider(Protocol):
    """Decides whether a reference is worth following: the LLM reasoner, the extractive decider."""

    def decide_reference(self, item: GateInput, anchor: str, language: str) -> ReferenceDecision: ...


@dataclass
class GateVerdict:
    decision: ReferenceDecision
    score: float  # the decider's confidence in [0, 1]; 1.0 when an LLM said follow
