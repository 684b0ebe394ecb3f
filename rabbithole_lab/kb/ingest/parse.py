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

from rabbithole_lab.kb.ingest.sections import markdown_heading_label
from rabbithole_lab.language import patterns

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

    @property
    def doc(self) -> str:
        return self.path.name


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def parse_file(path: Path) -> ParsedDocument:
    """Parse one file or raise DocumentError saying why it cannot be used."""
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
    document = _parse_pdf(path) if suffix == ".pdf" else _parse_text(path, markdown=suffix == ".md")
    document.file_hash = file_hash
    text_chars = sum(len(line.text.strip()) for line in document.lines)
    if text_chars < MIN_TEXT_CHARS:
        if document.repaired:
            raise DocumentError(f"corrupt PDF: damaged or truncated, no text could be read ({text_chars} characters)")
        if suffix == ".pdf":
            raise DocumentError(
                f"no text layer ({document.page_count} page(s), {text_chars} characters): "
                "scanned PDF? run OCR first"
            )
        raise DocumentError(f"no usable text ({text_chars} characters)")
    document.synonyms = _synonyms(document)
    return document


def _parse_pdf(path: Path) -> ParsedDocument:
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
        raw: list[tuple[str, int, bool, float, int]] = []
        size_chars: Counter[float] = Counter()
        try:
            for page_index, page in enumerate(pdf, start=1):
                for block in page.get_text("dict", sort=False).get("blocks", []):
                    for line in block.get("lines", []):
                        # a space between words can be a span of its own: it belongs to the text
                        # ("0,5 0,25" in a table row) but says nothing about the line's style
                        text = "".join(span.get("text", "") for span in line.get("spans", []))
                        text = text.translate(_LIGATURES).strip()
                        spans = [span for span in line.get("spans", []) if span.get("text", "").strip()]
                        if not spans:
                            continue
                        bold = any(
                            (span.get("flags", 0) & 16) or "bold" in span.get("font", "").lower()
                            for span in spans
                        )
                        size = round(max(span.get("size", 0.0) for span in spans), 1)
                        size_chars[size] += len(text)
                        raw.append((text, page_index, bold, size, len(text)))
        except Exception as exc:
            raise DocumentError(f"corrupt PDF: text extraction failed ({exc})") from None
        body_size = size_chars.most_common(1)[0][0] if size_chars else 0.0
        lines = []
        for text, page, bold, size, _ in raw:
            if _FOOTER.match(text) or _PAGE_NUMBER_ONLY.match(text):
                continue
            lines.append(Line(text=text, page=page, styled=bold or size >= body_size * 1.15))
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
        )
    finally:
        pdf.close()


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
