"""Files -> lines with page numbers and style, ready for section-aware chunking.

PDFs are read with PyMuPDF (bold/size tell headings apart from body lines that
merely start with "§"); Markdown headings are marked by '#'; plain text falls
back to the heading grammar alone. Every problem becomes a `DocumentError` with a
one-line reason.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from rabbithole_lab.kb.ingest.ocr import OcrAccess, OcrError
from rabbithole_lab.kb.ingest.pdf_tables import PageTable, page_tables
from rabbithole_lab.kb.ingest.scanned_pages import needs_ocr, ocr_lines
from rabbithole_lab.kb.ingest.sections import markdown_heading_label
from rabbithole_lab.language import patterns
from rabbithole_lab.support.progress_bars import progress

logger = logging.getLogger(__name__)

SUPPORTED_SUFFIXES = {".pdf", ".md", ".txt"}
MIN_TEXT_CHARS = 20
_FOOTER = patterns.page_footer()  # "Seite 3 von 12": each language's words
# a page number stands bare or between two dashes ("12", "- 12 -"); "–10" or "10 –" is an exponent or
# an open range in a table cell, not a page number
_PAGE_NUMBER_ONLY = re.compile(r"^\s*(?:\d{1,4}|[-–]\s*\d{1,4}\s*[-–])\s*$")
_MD_HEADING = re.compile(r"^(#{1,6})\s+(.*\S)\s*$")
_PARENTHESISED = re.compile(r"\(([^()]{2,80})\)")
_LIGATURES = str.maketrans({"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl",
                            "\ufb05": "st", "\ufb06": "st", "\u00ad": ""})


class DocumentError(Exception):
    """A file that cannot be ingested; str() is the one-line reason."""


@dataclass
class Line:
    text: str
    page: int
    styled: bool = False  # bold, larger than body, or a Markdown heading
    markdown_level: int = 0
    table: int = 0  # a table row's table (counted in the document from 1), 0 for text: a chunk keeps a table whole


@dataclass
class ParsedDocument:
    path: Path
    lines: list[Line]
    page_count: int
    title: str = ""
    first_heading: str = ""
    has_styled_headings: bool = False
    repaired: bool = False  # PyMuPDF had to rebuild a damaged or truncated PDF's structure to open it
    file_hash: str = ""
    synonyms: list[str] = field(default_factory=list)
    ocr_confidence: dict[int, float] = field(default_factory=dict)  # page -> mean word confidence, pages OCR read
    unread_pages: dict[int, str] = field(default_factory=dict)  # page -> why a page without text was not read

    @property
    def doc(self) -> str:
        return self.path.name


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def parse_file(path: Path, ocr: OcrAccess | None = None, tables: bool = False) -> ParsedDocument:
    """Parse one file or raise DocumentError saying why it cannot be used. Scanned PDF pages are read by `ocr`
    where it can run (kb/ingest/ocr.py); with `tables`, a ruled table is read as rows (kb/ingest/pdf_tables.py)."""
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise DocumentError(f"unsupported file type '{suffix or '(none)'}' (use .pdf, .md or .txt)")
    try:
        size = path.stat().st_size
        if size == 0:
            raise DocumentError("empty file (0 bytes)")
        file_hash = file_sha256(path)
    except PermissionError:
        raise DocumentError("unreadable: permission denied") from None
    except OSError as exc:
        raise DocumentError(f"unreadable: {exc.strerror or exc}") from None
    if suffix == ".pdf":
        document = _parse_pdf(path, file_hash, ocr, tables)
    else:
        document = _parse_text(path, markdown=suffix == ".md")
    document.file_hash = file_hash
    text_chars = sum(len(line.text.strip()) for line in document.lines)
    if text_chars < MIN_TEXT_CHARS:
        if document.repaired:
            raise DocumentError(f"corrupt PDF: damaged or truncated, no text could be read ({text_chars} characters)")
        if suffix == ".pdf":
            reasons = "; ".join(sorted(set(document.unread_pages.values())))
            scanned = f": {reasons}" if reasons else (
                f", and OCR read no text on {len(document.ocr_confidence)} scanned page(s)"
                if document.ocr_confidence else "")
            raise DocumentError(f"no text layer ({document.page_count} page(s), {text_chars} characters){scanned}")
        raise DocumentError(f"no usable text ({text_chars} characters)")
    document.synonyms = _synonyms(document)
    return document


def _parse_pdf(path: Path, file_hash: str, ocr: OcrAccess | None, tables: bool) -> ParsedDocument:
    import pymupdf

    with open(path, "rb") as handle:
        magic = handle.read(1024)
    if b"%PDF-" not in magic:
        raise DocumentError("not a PDF (no %PDF header): wrong extension?")
    try:
        pdf = pymupdf.open(path)
    except Exception as exc:  # PyMuPDF raises its own FileDataError and friends
        raise DocumentError(f"corrupt PDF: {_first_line(exc)}") from None
    try:
        if pdf.needs_pass or pdf.is_encrypted:
            raise DocumentError("encrypted PDF (password required)")
        try:
            page_count = pdf.page_count
        except Exception as exc:  # a truncated file's page tree: "Invalid number of pages"
            raise DocumentError(f"corrupt PDF: damaged or truncated ({_first_line(exc)})") from None
        if page_count == 0:
            raise DocumentError("corrupt PDF: no readable pages")
        raw: list[TextLine] = []
        size_chars: Counter[float] = Counter()
        scanned: list[int] = []
        tables_read = 0
        try:
            for page_index, page in enumerate(pdf, start=1):
                entries = text_layer_lines(page, page_index)
                if needs_ocr(" ".join(entry.text for entry in entries), bool(page.get_images())):
                    scanned.append(page_index)
                    continue
                found = page_tables(page) if tables else []
                entries = _with_tables(entries, found, tables_read + 1) if found else entries
                tables_read += len(found)
                for entry in entries:
                    size_chars[entry.size] += len(entry.text)
                raw.extend(entries)
        except Exception as exc:
            raise DocumentError(f"corrupt PDF: text extraction failed ({exc})") from None
        body_size = size_chars.most_common(1)[0][0] if size_chars else 0.0
        lines = [Line(text=entry.text, page=entry.page, table=entry.table,
                      styled=not entry.table and (entry.bold or entry.size >= body_size * 1.15)) for entry in raw]
        read = _read_scanned(pdf, scanned, file_hash, ocr)
        lines = [line for line in lines if not _page_furniture(line.text)]
        lines = sorted(lines + read.lines, key=lambda line: line.page)
        metadata = pdf.metadata or {}
        try:
            toc = pdf.get_toc(simple=True)
        except Exception:  # a damaged outline costs the title guess, not the document
            toc = []
        first_heading = toc[0][1] if toc else next((line.text for line in lines if line.styled), "")
        return ParsedDocument(
            path=path,
            lines=lines,
            page_count=page_count,
            repaired=bool(pdf.is_repaired),
            title=(metadata.get("title") or "").strip(),
            first_heading=first_heading.strip(),
            has_styled_headings=any(line.styled for line in lines),
            ocr_confidence=read.confidence,
            unread_pages=read.unread,
        )
    finally:
        pdf.close()


@dataclass(frozen=True)
class TextLine:
    """A text-layer line as PyMuPDF gives it, before headings are told apart."""

    text: str
    page: int
    bold: bool
    size: float
    box: tuple[float, float, float, float]
    table: int = 0  # a table row's table, counted in the document from 1; 0 for text


def text_layer_lines(page, page_index: int) -> list[TextLine]:
    """A page's text-layer lines in reading order."""
    entries = []
    for block in page.get_text("dict", sort=False).get("blocks", []):
        for line in block.get("lines", []):
            # a space between words can be a span of its own: it belongs to the text
            # ("0,5 0,25" in a table row) but says nothing about the line's style
            text = "".join(span.get("text", "") for span in line.get("spans", []))
            text = text.translate(_LIGATURES).strip()
            spans = [span for span in line.get("spans", []) if span.get("text", "").strip()]
            if not spans:
                continue
            bold = any((span.get("flags", 0) & 16) or "bold" in span.get("font", "").lower() for span in spans)
            size = round(max(span.get("size", 0.0) for span in spans), 1)
            entries.append(TextLine(text, page_index, bold, size, tuple(line.get("bbox", (0, 0, 0, 0)))))
    return entries


def _with_tables(entries: list[TextLine], tables: list[PageTable], first_table: int) -> list[TextLine]:
    """The page's lines with each table's rows in place of the text lines inside its box."""
    out: list[TextLine] = []
    placed: set[int] = set()
    for entry in entries:
        inside = next((number for number, table in enumerate(tables) if table.holds(entry.box)), None)
        if inside is None:
            out.append(entry)
            continue
        if inside not in placed:  # the rows stand where the table's first line stood
            placed.add(inside)
            table = tables[inside]
            out.extend(TextLine(row, entry.page, False, entry.size, table.box, first_table + inside)
                       for row in table.rows)
    return out


@dataclass
class _ScannedRead:
    lines: list[Line] = field(default_factory=list)
    confidence: dict[int, float] = field(default_factory=dict)
    unread: dict[int, str] = field(default_factory=dict)


def _read_scanned(pdf, pages: list[int], file_hash: str, ocr: OcrAccess | None) -> _ScannedRead:
    """The scanned pages read by OCR where it can run; the others named with the reason."""
    read = _ScannedRead()
    if not pages:
        return read
    if ocr is None or ocr.reader is None:
        reason = ocr.missing if ocr is not None else "OCR is not set up"
        read.unread = dict.fromkeys(pages, reason)
        return read
    pages_read = ocr.reader.read_pages(pdf, pages, file_hash, workers=ocr.workers())
    bar = progress(pages_read, desc=f"OCR {Path(pdf.name).name}", unit="page", total=len(pages),
                   show=ocr.show_progress and len(pages) > 1)
    for number, result in bar:
        if isinstance(result, OcrError):
            read.unread[number] = str(result)
            continue
        read.confidence[number] = result.confidence
        page_lines = ocr_lines(result)
        # a page number or footer stands first or last on a page; a bare number inside it is a table's cell
        read.lines.extend(Line(text=text, page=number, styled=heading) for position, (text, heading)
                          in enumerate(page_lines)
                          if not (position in (0, len(page_lines) - 1) and _page_furniture(text)))
    return read


def _page_furniture(text: str) -> bool:
    """A running footer ("Seite 3 von 12") or a bare page number."""
    return bool(_FOOTER.match(text) or _PAGE_NUMBER_ONLY.match(text))


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def read_text(path: Path) -> str:
    """A text file's content: UTF-8 (with or without BOM; a few bad bytes replaced, with a warning), else the
    encoding charset-normalizer detects (UTF-16 with or without BOM, cp1252, ...); binary content is an
    error."""
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    # UTF-8 with a few stray bytes (a bad copy, a cut download) is still UTF-8: read whole as cp1250 it loses
    # every "§" and umlaut, so the bad bytes are replaced instead, and said
    replaced = raw.decode("utf-8-sig", errors="replace")
    bad = replaced.count("\ufffd") - raw.count("\ufffd".encode())
    multibyte = sum(1 for char in replaced if ord(char) > 127 and char != "\ufffd")
    if 0 < bad <= multibyte:
        logger.warning("%s: UTF-8 with %d undecodable byte sequence(s), shown as \ufffd", path.name, bad)
        return replaced
    from charset_normalizer import from_bytes

    best = from_bytes(raw).best()
    if best is None:
        raise DocumentError("binary content in a text file: wrong extension?")
    logger.info("%s: read as %s (not UTF-8)", path.name, best.encoding)
    return str(best)


def _parse_text(path: Path, markdown: bool) -> ParsedDocument:
    content = read_text(path)
    if "\x00" in content[:4096]:
        raise DocumentError("binary content in a text file: wrong extension?")
    raw_lines = content.splitlines()
    if markdown and raw_lines and raw_lines[0].strip() == "---":
        end = next((i for i, line in enumerate(raw_lines[1:], start=1) if line.strip() == "---"), None)
        if end is not None:
            raw_lines = [""] * (end + 1) + raw_lines[end + 1 :]
    lines: list[Line] = []
    title = ""
    for text in raw_lines:
        if not text.strip():
            continue
        heading = _MD_HEADING.match(text) if markdown else None
        if heading:
            heading_text = heading.group(2).strip().strip("#").strip()
            lines.append(Line(text=heading_text, page=1, styled=True, markdown_level=len(heading.group(1))))
            title = title or heading_text
        else:
            lines.append(Line(text=text.strip(), page=1))
    return ParsedDocument(
        path=path,
        lines=lines,
        page_count=1,
        title=title,
        first_heading=title,
        # Markdown headings are the sections only when they carry section labels; a document with just a
        # "# Title" heading keeps its plain "§ 3 …" lines as section headings
        has_styled_headings=markdown and any(line.markdown_level and markdown_heading_label(line.text)
                                             for line in lines),
    )


def _synonyms(document: ParsedDocument) -> list[str]:
    """Names this document may be cited by: file stem, title, first heading, (Abbrev.)."""
    names: list[str] = [document.path.stem]
    for source in (document.title, document.first_heading):
        if not source:
            continue
        names.append(source)
        for inside in _PARENTHESISED.findall(source):
            for part in re.split(r"\s[-–]\s|;|,", inside):
                if 2 <= len(part.strip()) <= 60:
                    names.append(part.strip())
        without = _PARENTHESISED.sub("", source).strip(" -–")
        if without:
            names.append(without)
        for part in re.split(r"\s[-–]\s", without):
            if len(part) > 3:
                names.append(part.strip())
    seen: set[str] = set()
    unique = []
    for name in names:
        key = name.lower()
        if name and key not in seen:
            seen.add(key)
            unique.append(name)
    return unique
