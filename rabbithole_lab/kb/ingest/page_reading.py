"""What a PDF page says, as the ingest read it: its text layer, or what OCR read from a scanned page.

The page-exact check and the page viewer read a page through here, so a quote from a scanned page is checked
against the same OCR text the ingest indexed (from the cache, by the file's content hash: no second OCR run), and
the viewer marks a quote on a scan from the OCR word boxes.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from rabbithole_lab.kb.ingest.ocr import OcrError, OcrPage, OcrWord, TesseractReader, tesseract_missing
from rabbithole_lab.kb.ingest.parse import file_sha256, text_layer_lines
from rabbithole_lab.kb.ingest.scanned_pages import needs_ocr, ocr_lines
from rabbithole_lab.settings import OcrSettings

_EDGE_PUNCTUATION = re.compile(r"^[^\w]+|[^\w%]+$")  # "§" too: OCR may have read it as "$", the text says "§"


def ocr_unavailable(settings: OcrSettings) -> str:
    """Why scanned pages cannot be read here ("" when Tesseract can read them)."""
    return tesseract_missing(settings) or ""


@functools.lru_cache(maxsize=64)
def _content_hash(path: str, modified_ns: int, size: int) -> str:  # the stamp keys the cache: an edit reads again
    return file_sha256(Path(path))


def scanned_page(path: Path, page: int, settings: OcrSettings) -> OcrPage | None:
    """What OCR read from page `page` (1-based) of the PDF at `path`, when the ingest reads it by OCR; None for a
    page read from its text layer. From the cache; read now only when the cache lacks it and Tesseract can run
    (another machine's index), else None."""
    import pymupdf

    stat = path.stat()
    digest = _content_hash(str(path), stat.st_mtime_ns, stat.st_size)
    with pymupdf.open(path) as pdf:
        shown = pdf[max(1, min(page, pdf.page_count)) - 1]
        layer = " ".join(entry.text for entry in text_layer_lines(shown, page))
        if not needs_ocr(layer, bool(shown.get_images())):
            return None
        reader = TesseractReader(settings)
        cached = reader.cache.get(digest, shown.number + 1)
        if cached is not None or ocr_unavailable(settings):
            return cached
        try:
            return reader.read(shown, digest)
        except OcrError:
            return None


def page_text(path: Path, page: int, settings: OcrSettings) -> str:
    """The text the ingest read from page `page` of the PDF at `path`."""
    scanned = scanned_page(path, page, settings)
    if scanned is not None:  # as the ingest indexed it: misreads corrected
        return "\n".join(text for text, _ in ocr_lines(scanned))
    import pymupdf

    with pymupdf.open(path) as pdf:
        return pdf[page - 1].get_text()


def _normal(word: str) -> str:
    return _EDGE_PUNCTUATION.sub("", word).casefold()


def words_of(scanned: OcrPage, passage: str) -> list[OcrWord]:
    """The OCR words that spell `passage` in a row on the page (compared without case and edge punctuation);
    [] when they do not."""
    wanted = [_normal(word) for word in passage.split() if _normal(word)]
    words = [word for word in scanned.words if _normal(word.text)]
    spelled = [_normal(word.text) for word in words]
    if not wanted:
        return []
    for start in range(len(spelled) - len(wanted) + 1):
        if spelled[start:start + len(wanted)] == wanted:
            return words[start:start + len(wanted)]
    return []
