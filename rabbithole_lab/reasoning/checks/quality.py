"""Measured answer quality: what the extractive reasoner's quality check counts.

Every statement of an answer is a quotation with its citation. A citation is correct when its
quotation stands in a source of the cited document and starts on the cited page (the answer
benchmark's rule). An answer that skips the decisive provision — the best first-stage provision the
context holds for the question — does not answer it; one that skips what that provision refers to
answers it only in part.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from rabbithole_lab.evidence.citation_format import CITATION, citations_in, quotation_of, strip_citations
from rabbithole_lab.evidence.pages import find_span, page_at
from rabbithole_lab.evidence.reference_edges import READER_NOTE
from rabbithole_lab.messages.catalogue import reasoner_text
from rabbithole_lab.reasoning.extractive.writer.answer import Provision
from rabbithole_lab.reasoning.text import is_list_item
from rabbithole_lab.records import ChunkWithInfo

_LEAD = re.compile(r"^[\s\-*•>#\d.)]*")
_SENTENCE_END = (".", "!", "?", ";", ":", "…")


@dataclass
class Statement:
    """One quotation of an answer with the citations that follow it."""

    text: str  # as written, without its citations
    quote: str  # the verbatim text it relies on
    citations: list[tuple[str, int]] = field(default_factory=list)


def statements(answer: str) -> list[Statement]:
    """The answer's statements: the text up to each citation (a line's lead-in "**§ 78 StrlSchG**:" is
    part of the statement, the quotation inside it is what it quotes)."""
    found = []
    for line in answer.splitlines():
        line = READER_NOTE.sub("", line)  # a note to the reader ("(⚠ § 999 QStrG: …)") states nothing of the documents
        start = 0
        matches = list(CITATION.finditer(line))
        groups: list[tuple[int, int]] = []
        for match in matches:  # consecutive citations belong to one statement
            if groups and line[groups[-1][1] : match.start()].strip() == "":
                groups[-1] = (groups[-1][0], match.end())
            else:
                groups.append((match.start(), match.end()))
        for cite_start, cite_end in groups:
            text = line[start:cite_start]
            start = cite_end
            quote = quotation_of(text)
            if quote:
                found.append(Statement(strip_citations(text).strip(), quote, citations_in(line[cite_start:cite_end])))
        tail = line[start:].strip()
        if tail and not tail.endswith(":") and groups:
            found.append(Statement(tail, _LEAD.sub("", tail).strip()))  # text after the last citation, uncited
    return found


def lead_of(answer: str) -> str:
    """The answer's lead: its lines up to the first section heading (a bold line after the first)."""
    lines = answer.splitlines()
    end = next((i for i, line in enumerate(lines) if i > 0 and line.startswith("**") and
                line.rstrip().endswith("**")), len(lines))
    return "\n".join(lines[:end]).strip()


def quote_page(quote: str, doc: str, sources: list[ChunkWithInfo]) -> int | None:
    """The page where `quote` starts in a source chunk of `doc`; None when no chunk holds it."""
    for source in sources:
        if source.document != doc:
            continue
        span = find_span(source.chunk_text, quote)
        if span is not None:
            return page_at(source.page_map, span[0], source.page)
    return None


def on_cited_page(statement: Statement, sources: list[ChunkWithInfo]) -> bool:
    return bool(statement.citations) and all(
        quote_page(statement.quote, doc, sources) == page for doc, page in statement.citations)


def is_fragment(quote: str, whole: set[str] | frozenset[str] = frozenset()) -> bool:
    """A quotation that is not a whole sentence: it starts in lower case or stops mid-sentence. An enumeration's
    item opened by its number is whole ("4. Absaugung von Radon an Randfugen …,"), and so is any of `whole`, the
    statements of the sources as `text.passage_sentences` splits them (a table's row ends without a period)."""
    text = quote.strip()
    if is_list_item(text) or " ".join(text.split()) in whole:
        return False
    return not text or text[:1].islower() or not text.endswith(_SENTENCE_END)


def cites_provision(answer_statements: list[Statement], provision: Provision) -> bool:
    """Some statement quotes text that stands in one of the provision's passages (its chunks, joined)."""
    return any(doc == provision.doc and any(find_span(passage.chunk_text, s.quote) for passage in provision.passages)
               for s in answer_statements for doc, _ in s.citations)


# what an answer that quotes text addressed to a model keeps of its factual and relevance scores: it states what a
# document told the reader's assistant, not what the documents say
MODEL_TEXT_CEILING = 20


def quoted_model_text(answer: str, sources: list[ChunkWithInfo]) -> list[str]:
    """Where the answer quotes a passage addressed to an AI system ("HinwV.md § 1"), each once."""
    flagged = [source for source in sources if source.addressed_to_model]
    found: list[str] = []
    for statement in statements(answer) if flagged else []:
        for source in flagged:
            where = f"{source.document} {source.section}".strip()
            if where not in found and len(statement.quote) > 12 and find_span(source.chunk_text, statement.quote):
                found.append(where)
    return found


def lowered_for_model_text(assessment, answer: str, sources: list[ChunkWithInfo], language: str):
    """The assessment of an answer that quotes text addressed to a model, its factual accuracy and relevance
    capped (`MODEL_TEXT_CEILING`) with the issue named; whichever reasoner judged it, for a model may quote
    what the extractive writer never does. The issue is said in `language`."""
    found = quoted_model_text(answer, sources)
    if not found:
        return assessment
    return assessment.model_copy(update={
        "factual_accuracy": min(assessment.factual_accuracy, MODEL_TEXT_CEILING),
        "query_relevance": min(assessment.query_relevance, MODEL_TEXT_CEILING),
        "issues_found": [*assessment.issues_found,
                         reasoner_text(language)["issue_model_text"].format(where=", ".join(found))]})


def label(doc: str, section: str) -> str:
    return f"{section} {Path(doc).stem}".strip()
