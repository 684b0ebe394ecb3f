"""Every claim of an answer checked against what was retrieved, whoever wrote it (a model, or the extractive
writer, whose claims always pass).

A claim is the text before a citation "[doc, p. N]" (since the previous citation on its line). It stands when:

- the cited page is in a retrieved passage of that document, and
- a quotation it holds („…“, “…”, "…") is found in a retrieved passage of that document, starting on the cited
  page (or running on from it).

A claim that does not stand is removed from the answer with its citation and named ("StrlSchG.pdf p. 99: not
retrieved", "… p. 52: quotation not found", "… p. 51: quotation on p. 52"), so the report can count and show
what the model invented. A paraphrase passed off as a quotation is a quotation not found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rabbithole_lab.evidence.citation_format import CITATION
from rabbithole_lab.evidence.pages import find_span, page_at
from rabbithole_lab.reasoning.passages import joined_passages
from rabbithole_lab.records import ChunkWithInfo

_QUOTATION = re.compile(r"„([^“”]+)[“”]|“([^”]+)”|\"([^\"]+)\"")
MIN_QUOTE_CHARS = 12  # shorter quoted words ("Anlage", a defined term) are names, not quotations


@dataclass
class CheckedAnswer:
    answer: str
    invented: list[str] = field(default_factory=list)  # each removed claim, named by its citation and reason


def quotations(text: str) -> list[str]:
    """The quotations of a text („…“, “…”, "…"), each at least `MIN_QUOTE_CHARS` long."""
    return [next(group for group in match.groups() if group) for match in _QUOTATION.finditer(text)
            if len(next(group for group in match.groups() if group).strip()) >= MIN_QUOTE_CHARS]


def _claim_fault(claim: str, doc: str, page: int, passages: list[ChunkWithInfo]) -> str:
    """Why the claim does not stand ("" when it does)."""
    of_doc = [p for p in passages if p.document == doc]
    if not any(p.page <= page <= (p.page_end or p.page) for p in of_doc):
        return "not retrieved"
    for quotation in quotations(claim):
        starts = [page_at(p.page_map, span[0], p.page) for p in of_doc
                  if (span := find_span(p.chunk_text, quotation)) is not None]
        if not starts:
            return "quotation not found"
        if page not in starts:
            return f"quotation on p. {starts[0]}"
    return ""


def checked_answer(answer: str, sources: list[ChunkWithInfo]) -> CheckedAnswer:
    """The answer without the claims that do not stand, and what was removed."""
    passages = joined_passages(sources)
    invented: list[str] = []
    lines = []
    for line in answer.splitlines():
        kept, start = [], 0
        for match in CITATION.finditer(line):
            claim = line[start:match.start()]
            doc, page = match.group(1).strip(), int(match.group(2))
            fault = _claim_fault(claim, doc, page, passages)
            if fault:
                invented.append(f"{doc} p. {page}: {fault}")
            else:
                kept.append(line[start:match.end()])
            start = match.end()
        if kept or start == 0:
            lines.append("".join(kept) + line[start:] if kept else line)
        elif line[start:].strip(" .;,"):  # every claim of the line removed: what is left is uncited
            lines.append(line[start:].strip())
    return CheckedAnswer("\n".join(lines).strip(), invented)
