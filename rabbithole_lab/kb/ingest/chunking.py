"""Section-aware chunking: a chunk never straddles a section heading.

Long sections are split on line boundaries with overlap; every continuation
chunk repeats the section heading so it stays findable and citable.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from rabbithole_lab.evidence.pages import encode_page_map
from rabbithole_lab.kb.ingest.parse import Line, ParsedDocument
from rabbithole_lab.kb.ingest.sections import (
    BIBLIOGRAPHY_LABEL,
    bibliography_heading,
    is_annex_part_heading,
    is_structural_heading,
    legal_heading_label,
    markdown_heading_label,
    numbered_heading_label,
)
from rabbithole_lab.language import addresses_a_model
from rabbithole_lab.records import Chunk

_SENTENCE_END = re.compile(r"(?<=[.;:!?])\s+")
_PLAIN_HEADING_MAX_CHARS = 100
_ANNEX_UNITS = ("Anlage", "Annex", "Appendix", "Schedule")


@dataclass
class SectionBlock:
    label: str
    heading: str
    heading_page: int
    lines: list[Line] = field(default_factory=list)


def _heading_kind(line: Line, previous: Line | None, styled_doc: bool) -> tuple[str, str] | None:
    """('section', label) | ('structural', '') | None for body text."""
    text = line.text
    if line.markdown_level:
        if is_structural_heading(text):
            return "structural", ""
        return "section", markdown_heading_label(text)
    if bibliography_heading(text) and (line.styled or styled_doc is False):
        return "section", BIBLIOGRAPHY_LABEL
    if styled_doc:
        if not line.styled:
            return None
        label = legal_heading_label(text, styled=True)
        if label:
            return "section", label
        if is_structural_heading(text):
            return "structural", ""
        label = numbered_heading_label(text)
        return ("section", label) if label else None
    # Unstyled text: the grammar alone, guarded against wrapped body lines.
    if len(text) > _PLAIN_HEADING_MAX_CHARS:
        return None
    if previous is not None and previous.text and not previous.markdown_level and previous.text[-1] not in ".:;!?)":
        return None  # a wrapped body line (a Markdown heading before it is no body text)
    label = legal_heading_label(text) or numbered_heading_label(text)
    if label:
        return "section", label
    return ("structural", "") if is_structural_heading(text) else None


def _is_subheading(label: str) -> bool:
    return bool(re.fullmatch(r"(?:\d+|[A-Z])(?:\.\d+)*", label))


def _annex_part_heading(annex: str, heading: str) -> str:
    """German annex parts are printed without the annex ("Teil C: …", "2. Anlagentechnik"); every chunk
    repeats its heading, so the annex label goes in front to keep the part findable as "Anlage 3"."""
    return f"{annex} {heading}" if annex.startswith("Anlage") else heading


def split_sections(document: ParsedDocument) -> list[SectionBlock]:
    blocks: list[SectionBlock] = [SectionBlock(label="", heading="", heading_page=1)]
    previous: Line | None = None
    for line in document.lines:
        kind = _heading_kind(line, previous, document.has_styled_headings)
        current = blocks[-1]
        if kind is None:
            continuing_heading = (
                line.styled
                and not line.markdown_level
                and previous is not None
                and previous.styled
                and current.heading
                and not current.lines
            )
            if continuing_heading:  # a heading wrapped onto a second line
                current.heading = f"{current.heading} {line.text}"
            else:
                current.lines.append(line)
        else:
            section = kind[0] == "section"
            label = kind[1]
            parent = next((b.label for b in reversed(blocks) if b.label), "")
            # "1. Radiologie" inside Anlage 1 and "Teil C: …" inside Anlage 3 are parts of that annex
            part = _is_subheading(label) if section else is_annex_part_heading(line.text)
            if part and parent.startswith(_ANNEX_UNITS):
                blocks.append(SectionBlock(label=parent, heading=_annex_part_heading(parent, line.text),
                                           heading_page=line.page))
            else:
                blocks.append(SectionBlock(label=label, heading=line.text, heading_page=line.page))
        previous = line
    return [block for block in blocks if block.lines or block.label]


def _pieces(line: Line, max_chars: int) -> list[Line]:
    """Split one over-long line (a Markdown paragraph) at sentence ends, then words."""
    if len(line.text) <= max_chars:
        return [line]
    parts: list[str] = []
    current = ""
    for sentence in _SENTENCE_END.split(line.text):
        while len(sentence) > max_chars:
            cut = sentence.rfind(" ", 0, max_chars)
            cut = cut if cut > max_chars // 2 else max_chars
            parts.append((current + " " + sentence[:cut]).strip() if current else sentence[:cut])
            current = ""
            sentence = sentence[cut:].strip()
        if current and len(current) + 1 + len(sentence) > max_chars:
            parts.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}".strip()
    if current:
        parts.append(current)
    return [Line(text=part, page=line.page, table=line.table) for part in parts]


def _table_chars(lines: list[Line]) -> dict[int, int]:
    """The characters each table's rows take in a chunk."""
    sizes: dict[int, int] = {}
    for line in lines:
        if line.table:
            sizes[line.table] = sizes.get(line.table, 0) + len(line.text) + 1
    return sizes


def chunk_id(collection: str, doc: str, char_start: int, text: str) -> str:
    payload = f"{collection}\x00{doc}\x00{char_start}\x00{text}".encode()
    return hashlib.sha1(payload).hexdigest()[:24]


def chunk_document(
    document: ParsedDocument, collection: str, max_chunk_chars: int, overlap_chars: int
) -> list[Chunk]:
    chunks: list[Chunk] = []
    offset = 0
    for block in split_sections(document):
        heading = block.heading
        budget = max(max_chunk_chars - len(heading) - 1, max_chunk_chars // 2)
        lines = [piece for line in block.lines for piece in _pieces(line, budget)]
        block_start = offset
        offset += len(heading) + 1 + sum(len(line.text) + 1 for line in lines)
        if not lines:
            if block.label:  # a heading with no body, e.g. "§ 12 (weggefallen)"
                chunks.append(_make(collection, document, block, heading, [], block_start, True))
            continue
        window: list[Line] = []
        first = True
        window_chars = 0
        window_start = block_start
        position = block_start + len(heading) + 1
        table_chars = _table_chars(lines)
        for line in lines:
            # a table that fits in a chunk starts one rather than run over two
            starts_table = line.table and (not window or window[-1].table != line.table)
            whole_table = bool(starts_table) and table_chars[line.table] <= budget
            needed = table_chars[line.table] if whole_table else len(line.text) + 1
            if window and window_chars + needed > budget:
                chunks.append(_make(collection, document, block, heading, window, window_start, first))
                first = False
                tail: list[Line] = []
                tail_chars = 0
                for old in reversed(window):
                    if tail_chars + len(old.text) + 1 > overlap_chars:
                        break
                    if whole_table and tail_chars + len(old.text) + 1 + needed > budget:
                        break  # the overlap gives way to the whole table
                    tail.insert(0, old)
                    tail_chars += len(old.text) + 1
                window, window_chars = tail, tail_chars
                window_start = position - tail_chars
            window.append(line)
            window_chars += len(line.text) + 1
            position += len(line.text) + 1
        if window:
            chunks.append(_make(collection, document, block, heading, window, window_start, first))
    return chunks


def _make(
    collection: str,
    document: ParsedDocument,
    block: SectionBlock,
    heading: str,
    window: list[Line],
    char_start: int,
    first: bool,
) -> Chunk:
    text = "\n".join(([heading] if heading else []) + [line.text for line in window])
    pages = [line.page for line in window] + ([block.heading_page] if first or not window else [])
    # the page of every line; a continuation chunk's repeated heading counts as its first line's page
    line_pages = ([block.heading_page if first or not window else window[0].page] if heading else [])
    line_pages += [line.page for line in window]
    starts: list[tuple[int, int]] = []
    offset = 0
    for line_text, page in zip(([heading] if heading else []) + [line.text for line in window], line_pages,
                               strict=True):
        if not starts or starts[-1][1] != page:
            starts.append((offset, page))
        offset += len(line_text) + 1
    return Chunk(
        id=chunk_id(collection, document.doc, char_start, text),
        text=text,
        doc=document.doc,
        collection=collection,
        page_start=min(pages),
        page_end=max(pages),
        section=block.label,
        heading=heading,
        char_start=char_start,
        page_map=encode_page_map(starts),
        continuation=not first,
        addressed_to_model=addresses_a_model(text),
    )
