"""A PDF page shown inside the notebook, with the quoted passage highlighted.

A citation or a source in the workbench opens its page here, beside the answer, in the same
JupyterLab: the page is rendered by PyMuPDF (no browser PDF plug-in needed) and the text the answer
relies on is marked on it. Prev/next turn the page, −/+ zoom (the page is drawn again at the zoom, so
text stays sharp); the quote is searched on every page shown, and the title says whether it was found.
"""

from __future__ import annotations

import html
import logging
import re
from dataclasses import dataclass
from pathlib import Path

import ipywidgets as w

from rabbithole_lab.kb.ingest.page_reading import scanned_page, words_of
from rabbithole_lab.messages.catalogue import ui_text
from rabbithole_lab.settings import OcrSettings

logger = logging.getLogger(__name__)

RENDER_ZOOM = 1.4  # 72 dpi x 1.4: a legible A4 page about 830 px wide
ZOOM_STEPS = (0.75, 1.0, 1.5, 2.0, 3.0)  # of the panel's width; 1.0 fits the page to the panel
HIGHLIGHT_RGB = (1.0, 0.85, 0.0)
# a quote is looked up in windows of this many words: a whole quote rarely matches a page's text
# verbatim (hyphenation at line ends, footnote marks), a few words in a row almost always do
QUOTE_WINDOW_WORDS = 5
MAX_HIGHLIGHTS = 40
QUOTE_MARGIN = 0.08  # of the page's height kept above the quote when a zoomed page is drawn from the quote


@dataclass(frozen=True)
class RenderedPage:
    png: bytes
    page: int  # 1-based, clamped to the document
    pages: int
    highlights: int  # marked passages of the quote on this page
    windows: int = 0  # passages of the quote searched for

    @property
    def quote_found(self) -> str:
        """"" (no quote), "marked" (at least half the quote found), "partly" or "missing"."""
        if not self.windows:
            return ""
        if self.highlights * 2 >= self.windows:
            return "marked"
        return "partly" if self.highlights else "missing"


class PdfViewError(ValueError):
    """The page cannot be shown (no such file, not a PDF, damaged)."""


def _windows(quote: str) -> list[str]:
    words = re.sub(r"\s+", " ", quote).strip().split(" ")
    words = [word for word in words if word]
    if len(words) <= QUOTE_WINDOW_WORDS:
        return [" ".join(words)] if words else []
    starts = list(range(0, len(words) - QUOTE_WINDOW_WORDS + 1, QUOTE_WINDOW_WORDS))
    if starts[-1] + QUOTE_WINDOW_WORDS < len(words):  # the quote's last words too, not only whole windows
        starts.append(len(words) - QUOTE_WINDOW_WORDS)
    return [" ".join(words[start:start + QUOTE_WINDOW_WORDS]) for start in starts]


def render_page(path: Path, page: int, quote: str = "", zoom: float = RENDER_ZOOM,
                from_quote: bool = False, ocr: OcrSettings | None = None) -> RenderedPage:
    """Page `page` (1-based) of the PDF at `path` as PNG, the parts of `quote` found on it highlighted (on a
    scanned page, from the boxes of the words OCR read). With `from_quote` the page is drawn from a little above
    the quote down (a zoomed page opens at the quote, not at the page's top, which a frame scrolled to its start
    would show)."""
    import pymupdf

    path = Path(path)
    if not path.is_file():
        raise PdfViewError(f"file not found: {path}")
    try:
        document = pymupdf.open(path)
    except Exception as exc:  # PyMuPDF raises its own types for damaged files
        raise PdfViewError(f"cannot open {path.name}: {exc}") from None
    try:
        if not document.is_pdf or document.page_count == 0:
            raise PdfViewError(f"{path.name} has no PDF pages")
        if document.needs_pass:
            raise PdfViewError(f"{path.name} is encrypted")
        number = max(1, min(int(page), document.page_count))
        shown = document[number - 1]
        highlights, windows, top = 0, _windows(quote), None
        # ligatures ("ﬀ") expanded and words hyphenated at a line end joined, as the indexed text has them
        flags = pymupdf.TEXT_DEHYPHENATE | pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_MEDIABOX_CLIP
        found = [shown.search_for(window, quads=True, flags=flags) for window in windows]
        # nothing of the quote in the page's text: a scanned page marks it from the words OCR read
        scanned = scanned_page(path, number, ocr or OcrSettings()) if windows and not any(found) else None
        if scanned is not None:
            found = [[pymupdf.Rect(word.x0, word.y0, word.x1, word.y1).quad for word in words_of(scanned, window)]
                     for window in windows]
        for quads in found:
            if quads and highlights < MAX_HIGHLIGHTS:
                first = min(quad.rect.y0 for quad in quads)
                top = first if top is None else min(top, first)
                annotation = shown.add_highlight_annot(quads)
                annotation.set_colors(stroke=HIGHLIGHT_RGB)
                annotation.update()
                highlights += 1
        clip = None
        if from_quote and top is not None:
            area = shown.rect
            clip = pymupdf.Rect(area.x0, max(area.y0, top - QUOTE_MARGIN * area.height), area.x1, area.y1)
        pixmap = shown.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), annots=True, clip=clip)
        return RenderedPage(pixmap.tobytes("png"), number, document.page_count, highlights, len(windows))
    finally:
        document.close()  # the highlights were made on this copy in memory; the file is never written


class PdfPageView:
    """The page viewer panel: title (document, page, whether the quote is marked), prev / next, zoom out /
    in, close, and the rendered page. At zoom 1 the page is as wide as the panel; above it the page
    scrolls inside its own frame, so the panel never grows past its column."""

    def __init__(self, language: str = "de"):
        self.text = ui_text(language)
        self.title = w.HTML()
        # no side margin or border on the image: with width 100% either would widen the panel past its column
        self.image = w.Image(format="png", layout=w.Layout(width="100%", height="auto", margin="2px 0",
                                                           max_width="none"))
        self.frame = w.Box([self.image], layout=w.Layout(overflow="auto", width="100%", max_height="90vh"))
        self.frame.add_class("rh-pdf-frame")
        self.previous = w.Button(description="◀", layout=w.Layout(width="3em"))
        self.next = w.Button(description="▶", layout=w.Layout(width="3em"))
        self.zoom_out = w.Button(description="−", layout=w.Layout(width="3em"))
        self.zoom_in = w.Button(description="+", layout=w.Layout(width="3em"))
        self.zoom_label = w.HTML(layout=w.Layout(width="auto"))
        self.close = w.Button(description=self.text["close"], icon="times", layout=w.Layout(width="auto"))
        self.previous.on_click(lambda _: self.turn(-1))
        self.next.on_click(lambda _: self.turn(1))
        self.zoom_out.on_click(lambda _: self.step_zoom(-1))
        self.zoom_in.on_click(lambda _: self.step_zoom(1))
        self.close.on_click(lambda _: self.hide())
        self.path: Path | None = None
        self.page = self.pages = 0
        self.zoom = 1.0
        self.quote = self.label = ""
        self.set_language(language)
        controls = w.HBox([self.previous, self.next, self.zoom_out, self.zoom_label, self.zoom_in, self.close],
                          layout=w.Layout(align_items="center", flex_flow="row wrap"))
        self.widget = w.VBox([self.title, controls, self.frame],
                             layout=w.Layout(display="none", flex="1 1 50%", min_width="0", border="1px solid #ccc"))
        self.widget.add_class("rh-pdf-view")

    def set_language(self, language: str) -> None:
        self.text = ui_text(language)
        self.close.description = self.text["close"]
        for button, key in ((self.previous, "pdf_previous"), (self.next, "pdf_next"),
                            (self.zoom_out, "pdf_zoom_out"), (self.zoom_in, "pdf_zoom_in")):
            button.tooltip = self.text[key]

    def open(self, path: str | Path, page: int, quote: str = "", label: str = "") -> bool:
        """Show `page` of the PDF at `path` with `quote` marked; a problem shows as a message."""
        self.path, self.quote, self.label = Path(path), quote, label or Path(path).name
        return self._show(page)

    def turn(self, step: int) -> None:
        if self.path is not None:
            self._show(self.page + step)

    def step_zoom(self, step: int) -> None:
        """One zoom step out (-1) or in (+1); the page is drawn again at the new size."""
        index = min(range(len(ZOOM_STEPS)), key=lambda i: abs(ZOOM_STEPS[i] - self.zoom))
        self.zoom = ZOOM_STEPS[max(0, min(len(ZOOM_STEPS) - 1, index + step))]
        if self.path is not None:
            self._show(self.page)

    def hide(self) -> None:
        self.widget.layout.display = "none"

    def _show(self, page: int) -> bool:
        self.widget.layout.display = "flex"
        try:
            rendered = render_page(self.path, page, self.quote, zoom=RENDER_ZOOM * max(1.0, self.zoom),
                                   from_quote=self.zoom > 1.0)
        except PdfViewError as exc:
            self.title.value = (
                f"<span class='rh-pdf-error'>{html.escape(self.text['pdf_failed'].format(error=exc))}</span>"
            )
            self.frame.layout.display = "none"
            return False
        self.page, self.pages = rendered.page, rendered.pages
        self.image.value = rendered.png
        self.image.layout.width = f"{self.zoom * 100:.0f}%"
        self.frame.layout.display = "block"
        found = rendered.quote_found
        status = self.text[f"pdf_quote_{found}"] if found else ""
        self.title.value = (
            f"<b class='rh-pdf-title'>{html.escape(self.label)}, {self.text['page']} {rendered.page}"
            f"</b> <span style='color:#666'>/ {rendered.pages}</span>"
            + (f" <span class='rh-pdf-quote rh-pdf-quote-{found}'>· {html.escape(status)}</span>" if status else "")
        )
        self.zoom_label.value = f"<span class='rh-pdf-zoom'>{self.zoom * 100:.0f} %</span>"
        self.previous.disabled = rendered.page <= 1
        self.next.disabled = rendered.page >= rendered.pages
        self.zoom_out.disabled, self.zoom_in.disabled = self.zoom <= ZOOM_STEPS[0], self.zoom >= ZOOM_STEPS[-1]
        return True
