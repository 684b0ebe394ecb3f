"""Which PDF pages need OCR, and what an OCR'd line is: the page-level decisions of reading a scan.

A page needs OCR when it shows an image and its text layer holds almost nothing, or when its text layer is garbage
(a bad font mapping leaves "(cid:12)" runs, private-use glyphs or replacement characters, not words). Tesseract
cannot tell bold from regular, so an OCR'd line is marked as a heading by what it says and where it stands: a short
line that opens a paragraph (or follows a finished sentence) and reads as a section heading by the heading grammar,
or a line much taller than the page's usual line (a title); never a line Tesseract could hardly read.
"""

from __future__ import annotations

import re
import statistics

from rabbithole_lab.kb.ingest.ocr import OcrPage
from rabbithole_lab.kb.ingest.sections import (
    bibliography_heading,
    is_structural_heading,
    legal_heading_label,
    numbered_heading_label,
)
from rabbithole_lab.language import correct_ocr, repealed_pattern
from rabbithole_lab.language.detection import detect_language

MIN_PAGE_TEXT_CHARS = 20  # a page with an image and fewer characters than this in its text layer is a scan
MIN_READABLE_SHARE = 0.85  # of a text layer's non-space characters: letters, digits and common punctuation
HEADING_MAX_CHARS = 100  # as for headings of unstyled text (kb/ingest/chunking.py)
NUMBERED_HEADING_MAX_CHARS = 60  # "4.1 Records"; a longer numbered line is an item of a list
TITLE_HEIGHT_RATIO = 1.3  # a line this much taller than the page's median line is a title or heading
# a line Tesseract read with less mean word confidence than this is never a heading: the tall, low-confidence
# lines are noise read from text set sideways (a table's rotated column heads: 7-55 on StrlSchV's Anlage 4, where
# headings read 93-96), and "3 Ela ae as (aaa:" would open a section "3"
HEADING_MIN_CONFIDENCE = 60.0
_PUNCTUATION = set(".,;:!?()[]{}§%/\\-–—'\"„“”‚‘’«»*+=<>&#@°^_|~$€")
_CID = re.compile(r"\(cid:\d+\)")
_SENTENCE_DONE = ".:;!?)"
_LIST_ITEM_ENDS = ".,;:"


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


def _reads_as_heading(text: str, numbered_may: bool) -> bool:
    """A section, structural, bibliography or repealed heading; a numbered line only when it reads as a title,
    not as an item of a list ("1. Aufforderung zum Aufenthalt in Gebäuden," is an item)."""
    if legal_heading_label(text) or is_structural_heading(text) or bibliography_heading(text) \
            or repealed_pattern().match(text):
        return True
    number = numbered_heading_label(text)
    return numbered_may and bool(number) and len(text) <= NUMBERED_HEADING_MAX_CHARS and text[-1] not in _LIST_ITEM_ENDS


def ocr_lines(page: OcrPage) -> list[tuple[str, bool]]:
    """The page's lines as (text, marked as a heading), in reading order."""
    lines = page.lines()
    if not lines:
        return []
    language = detect_language(" ".join(line.text for line in lines))
    usual_height = statistics.median(line.height for line in lines)
    out: list[tuple[str, bool]] = []
    previous, previous_heading = "", False
    for line in lines:
        text = correct_ocr(line.text, language)
        # a heading opens a paragraph or follows a finished sentence or another heading ("Abschnitt 1 - …" then
        # "§ 1 Zweck …"; Tesseract may put both in one paragraph)
        stands_alone = line.starts_paragraph or not previous or previous[-1] in _SENTENCE_DONE or previous_heading
        heading, legible = False, line.confidence >= HEADING_MIN_CONFIDENCE
        if stands_alone and legible and len(text) <= HEADING_MAX_CHARS:
            as_heading = correct_ocr(text, language, heading=True)
            # a numbered title follows a finished sentence or a heading: a list's items follow "…, " or "… als"
            titled = not previous or previous[-1] in _SENTENCE_DONE or previous_heading
            if _reads_as_heading(as_heading, titled):
                text, heading = as_heading, True
            else:
                heading = _reads_as_heading(text, titled)
        title = usual_height > 0 and line.height >= TITLE_HEIGHT_RATIO * usual_height and legible
        out.append((text, heading or title))
        previous, previous_heading = text, heading or title
    return out
