"""Which PDF pages need OCR, and what an OCR'd line is: the page-level decisions of reading a scan.

A page needs OCR when it shows an image and its text layer holds almost nothing, or when its text layer is garbage
(a bad font mapping leaves "(cid:12)" runs, private-use glyphs or replacement characters, not words). Tesseract
cannot tell bold from regular, so an OCR'd line is marked as a heading by what it says and where it stands: a short
line that opens a paragraph (or follows a finished sentence) and reads as a section heading by the heading grammar,
or a line much taller than the page's usual line (a title).
"""

from __future__ import annotations

import re
import statistics
from dataclasses import replace

from rabbithole_lab.kb.ingest.ocr import OcrPage
from rabbithole_lab.kb.ingest.sections import is_structural_heading, legal_heading_label, numbered_heading_label
from rabbithole_lab.language import correct_ocr
from rabbithole_lab.language.detection import detect_language

MIN_PAGE_TEXT_CHARS = 20  # a page with an image and fewer characters than this in its text layer is a scan
MIN_READABLE_SHARE = 0.85  # of a text layer's non-space characters: letters, digits and common punctuation
HEADING_MAX_CHARS = 100  # as for headings of unstyled text (kb/ingest/chunking.py)
TITLE_HEIGHT_RATIO = 1.3  # a line this much taller than the page's median line is a title or heading
_PUNCTUATION = set(".,;:!?()[]{}§%/\\-–—'\"„“”‚‘’«»*+=<>&#@°^_|~$€")
_CID = re.compile(r"\(cid:\d+\)")
_SENTENCE_DONE = ".:;!?)"


def readable_share(text: str) -> float:
    """The share of `text`'s non-space characters that belong to words and ordinary punctuation."""
    text = _CID.sub("\ufffd", text)
    shown = [char for char in text if not char.isspace()]
    if not shown:
        return 0.0
    readable = sum(1 for char in shown if (char.isalnum() and char.isprintable()) or char in _PUNCTUATION)
    return readable / len(shown)


def needs_ocr(text_layer: str, shows_image: bool) -> bool:
    """Whether a page is read by OCR rather than from its text layer."""
    chars = len("".join(text_layer.split()))
    if chars < MIN_PAGE_TEXT_CHARS:
        return shows_image
    return readable_share(text_layer) < MIN_READABLE_SHARE


def ocr_lines(page: OcrPage) -> list[tuple[str, bool]]:
    """The page's lines as (text, marked as a heading), in reading order."""
    lines = page.lines()
    if not lines:
        return []
    language = detect_language(" ".join(line.text for line in lines))
    usual_height = statistics.median(line.height for line in lines)
    out: list[tuple[str, bool]] = []
    previous = ""
    for line in lines:
        line = replace(line, text=correct_ocr(line.text, language))
        stands_alone = line.starts_paragraph or not previous or previous[-1] in _SENTENCE_DONE
        heading = stands_alone and len(line.text) <= HEADING_MAX_CHARS and bool(
            legal_heading_label(line.text) or numbered_heading_label(line.text) or is_structural_heading(line.text))
        title = usual_height > 0 and line.height >= TITLE_HEIGHT_RATIO * usual_height
        out.append((line.text, heading or title))
        previous = line.text
    return out
