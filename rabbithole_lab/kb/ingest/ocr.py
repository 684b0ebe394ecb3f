"""Scanned pages read by Tesseract: the adapter to the `tesseract` command and the cache of what it read.

A PDF page without a usable text layer is rendered by PyMuPDF and read by Tesseract's command line (TSV output:
every word with its box and confidence). The words are kept in a cache keyed by the file's content hash, the page,
the resolution and the languages, so the page-exact check and the page viewer read the same text the ingest did,
and no page is read twice. Tesseract runs with one thread per page (`OMP_THREAD_LIMIT=1`); pages of a document
are read side by side on the cores other processes leave free.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import os
import shutil
import statistics
import subprocess
import tempfile
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from statistics import fmean

from rabbithole_lab.language import tesseract_code
from rabbithole_lab.language.detection import detect_language
from rabbithole_lab.settings import OcrSettings

logger = logging.getLogger(__name__)

INSTALL_HINT = "apt-get install tesseract-ocr tesseract-ocr-deu tesseract-ocr-eng"
OCR_CACHE_VERSION = 1  # raised when what a cache file holds changes: older files are read again
WORD_LEVEL = "5"  # Tesseract TSV: 1 page, 2 block, 3 paragraph, 4 line, 5 word
NARROW_AFTER_CHARS = 200  # a first page with less text does not tell the document's language


class OcrError(Exception):
    """Tesseract could not read a page; str() is the one-line reason."""


@dataclass(frozen=True)
class OcrWord:
    text: str
    x0: float  # the box in PDF points on the unrotated page
    y0: float
    x1: float
    y1: float
    confidence: float  # Tesseract's 0-100
    block: int
    paragraph: int
    line: int


@dataclass(frozen=True)
class OcrLine:
    text: str
    height: float  # points
    confidence: float
    starts_paragraph: bool


@dataclass(frozen=True)
class OcrPage:
    page: int  # 1-based
    words: tuple[OcrWord, ...]

    @property
    def confidence(self) -> float:
        """Mean word confidence, 0 for a page with no word."""
        return round(fmean(word.confidence for word in self.words), 1) if self.words else 0.0

    def lines(self) -> list[OcrLine]:
        """The page's lines in reading order, each with its paragraph start marked."""
        grouped: dict[tuple[int, int, int], list[OcrWord]] = {}
        for word in self.words:
            grouped.setdefault((word.block, word.paragraph, word.line), []).append(word)
        out, previous_paragraph = [], None
        for (block, paragraph, _), words in grouped.items():
            text = " ".join(word.text for word in words)
            height = statistics.median(word.y1 - word.y0 for word in words)  # one "Ü" or "(" makes no title
            out.append(OcrLine(text, height, fmean(word.confidence for word in words),
                               (block, paragraph) != previous_paragraph))
            previous_paragraph = (block, paragraph)
        return out


def tesseract_missing(settings: OcrSettings) -> str | None:
    """Why OCR cannot run here (None when it can): switched off, Tesseract not installed, a language missing."""
    if settings.mode == "off":
        return "OCR is off (OCR=off)"
    binary = shutil.which("tesseract")
    if binary is None:
        return f"Tesseract is not installed ({INSTALL_HINT})"
    try:
        listed = subprocess.run([binary, "--list-langs"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        return f"Tesseract does not run ({exc})"
    have = {line.strip() for line in listed.splitlines()[1:]}
    missing = [code for code in settings.languages.split("+") if code not in have]
    if missing:
        packages = " ".join(f"tesseract-ocr-{code}" for code in missing)
        return f"Tesseract lacks the language(s) {', '.join(missing)} (apt-get install {packages})"
    return None


class PageCache:
    """What Tesseract read from a page, as JSON under the file's content hash (no document text elsewhere)."""

    def __init__(self, settings: OcrSettings):
        self.folder = settings.cache_dir()
        self.key = f"{settings.dpi}dpi-{settings.languages}-v{OCR_CACHE_VERSION}"

    def path(self, file_hash: str, page: int) -> Path:
        return self.folder / file_hash[:2] / f"{file_hash}-p{page}-{self.key}.json"

    def get(self, file_hash: str, page: int) -> OcrPage | None:
        try:
            stored = json.loads(self.path(file_hash, page).read_text(encoding="utf-8"))
            return OcrPage(page, tuple(OcrWord(**word) for word in stored["words"]))
        except (OSError, ValueError, TypeError, KeyError):  # absent, or damaged: read again
            return None

    def put(self, file_hash: str, result: OcrPage) -> None:
        target = self.path(file_hash, result.page)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", dir=target.parent, delete=False, suffix=".tmp",
                                             encoding="utf-8") as handle:
                json.dump({"words": [asdict(word) for word in result.words]}, handle, ensure_ascii=False)
            os.replace(handle.name, target)  # whole or not at all: a killed ingest leaves no half file
        except OSError as exc:  # a read-only cache costs a second reading later, never the ingest
            logger.warning("OCR cache %s not written: %s", target.parent, exc)


def _words_from_tsv(tsv: str, scale: float, derotate) -> tuple[OcrWord, ...]:
    import pymupdf

    words = []
    for row in csv.DictReader(io.StringIO(tsv), delimiter="\t", quoting=csv.QUOTE_NONE):
        text = (row.get("text") or "").strip()
        if row.get("level") != WORD_LEVEL or not text:
            continue
        left, top = float(row["left"]) * scale, float(row["top"]) * scale
        box = pymupdf.Rect(left, top, left + float(row["width"]) * scale, top + float(row["height"]) * scale)
        box = box * derotate
        words.append(OcrWord(text, round(box.x0, 2), round(box.y0, 2), round(box.x1, 2), round(box.y1, 2),
                             max(0.0, float(row["conf"])), int(row["block_num"]), int(row["par_num"]),
                             int(row["line_num"])))
    return tuple(words)


def _narrowed(page: OcrPage, languages: str) -> str:
    """The one configured model for the language `page` is written in, else all of `languages`."""
    text = " ".join(word.text for word in page.words)
    if len(text) < NARROW_AFTER_CHARS:
        return languages
    code = tesseract_code(detect_language(text))
    return code if code in languages.split("+") else languages


class TesseractReader:
    """Reads scanned PDF pages with Tesseract, through the cache."""

    def __init__(self, settings: OcrSettings):
        self.settings = settings
        self.cache = PageCache(settings)
        self.pages_read = 0  # pages Tesseract read in this process (the cache's hits are not counted)

    def read(self, pdf_page, file_hash: str) -> OcrPage:
        """One page (a PyMuPDF page of an open document), from the cache or Tesseract."""
        number = pdf_page.number + 1
        cached = self.cache.get(file_hash, number)
        if cached is not None:
            return cached
        self.pages_read += 1
        return self._run_and_store(*self._image(pdf_page), number, file_hash)

    def read_pages(self, pdf, numbers: list[int], file_hash: str, workers: int = 1
                   ) -> Iterator[tuple[int, OcrPage | OcrError]]:
        """Pages `numbers` (1-based) of the open document `pdf`, in order, each read or the reason it was not;
        rendered one after another (PyMuPDF is not thread-safe) and read by `workers` Tesseract processes side
        by side, with a few rendered pages waiting at most (a long scan is never held in memory whole). The first
        page read tells the document's language: the others are read with that language's model alone (on a law
        scan 0.62 pages a second against 0.54 with every configured language, the same confidence)."""
        workers, languages = max(1, workers), ""
        with ThreadPoolExecutor(max_workers=workers) as pool:
            pending: deque = deque()
            for number in numbers:
                item: OcrPage | Future | None = self.cache.get(file_hash, number)
                if item is None and not languages:
                    item = pool.submit(self._run_and_store, *self._image(pdf[number - 1]), number, file_hash)
                    found = self._done(number, item)[1]
                    languages = _narrowed(found, self.settings.languages) if isinstance(found, OcrPage) \
                        else self.settings.languages
                    item = found if isinstance(found, OcrPage) else item
                elif item is None:
                    item = pool.submit(self._run_and_store, *self._image(pdf[number - 1]), number, file_hash,
                                       languages)
                elif not languages:
                    languages = _narrowed(item, self.settings.languages)
                pending.append((number, item))
                while len(pending) > 2 * workers:
                    yield self._done(*pending.popleft())
            while pending:
                yield self._done(*pending.popleft())

    def _done(self, number: int, item) -> tuple[int, OcrPage | OcrError]:
        if isinstance(item, OcrPage):
            return number, item
        try:
            result = item.result()
        except OcrError as exc:
            return number, exc
        self.pages_read += 1
        return number, result

    def _run_and_store(self, png: bytes, scale: float, derotate, number: int, file_hash: str,
                       languages: str = "") -> OcrPage:
        result = OcrPage(number, _words_from_tsv(self._run(png, languages or self.settings.languages), scale,
                                                 derotate))
        self.cache.put(file_hash, result)
        return result

    def _image(self, pdf_page) -> tuple[bytes, float, object]:
        import pymupdf

        pixmap = pdf_page.get_pixmap(dpi=self.settings.dpi, colorspace=pymupdf.csGRAY)
        return pixmap.tobytes("png"), 72.0 / self.settings.dpi, pdf_page.derotation_matrix

    def _run(self, png: bytes, languages: str) -> str:
        binary = shutil.which("tesseract")
        if binary is None:
            raise OcrError(f"Tesseract is not installed ({INSTALL_HINT})")
        # no search for white-on-black text: a scanned document has none, and it takes a tenth of the time
        command = [binary, "stdin", "stdout", "-l", languages, "--dpi", str(self.settings.dpi),
                   "-c", "tessedit_do_invert=0", "tsv"]
        try:
            done = subprocess.run(command, input=png, capture_output=True, timeout=self.settings.page_timeout_s,
                                  env={**os.environ, "OMP_THREAD_LIMIT": "1"})
        except subprocess.TimeoutExpired:
            raise OcrError(f"Tesseract took longer than {self.settings.page_timeout_s:.0f} s (OCR_PAGE_TIMEOUT_S)") \
                from None
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise OcrError(f"Tesseract failed ({said[-1] if said else f'exit {done.returncode}'})")
        return done.stdout.decode("utf-8", "replace")


class OcrAccess:
    """What an ingest reads scanned pages with: the reader, or why there is none (asked once, at the first scanned
    page: an ingest of text files never starts Tesseract), and how many pages at once."""

    def __init__(self, settings: OcrSettings, workers: Callable[[], int] | None = None, show_progress: bool = False):
        from rabbithole_lab.kb.embedding.free_cores import FreeCores

        self.settings = settings
        self.show_progress = show_progress  # a bar over the pages of a long scan
        self.workers = workers or FreeCores()  # one page per core other processes leave free
        self._missing: str | None = None
        self._reader: TesseractReader | None = None

    @property
    def missing(self) -> str:
        """Why scanned pages cannot be read here, "" when they can."""
        if self._missing is None:
            self._missing = tesseract_missing(self.settings) or ""
        return self._missing

    @property
    def reader(self) -> TesseractReader | None:
        if self.missing:
            return None
        if self._reader is None:
            self._reader = TesseractReader(self.settings)
        return self._reader
