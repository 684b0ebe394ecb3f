"""The answer and its sources with clickable citations: a click opens the cited page beside the answer.

The HTML is built here from the report, every piece of document, question or model text escaped;
the widget's script only puts that HTML in place and reports which citation was clicked (its
number), so no text from a document ever reaches a script. Each citation keeps a real link to the
PDF at its page (`#page=`) for a middle-click or a copied address.
"""

from __future__ import annotations

import html
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import anywidget
import traitlets

from rabbithole_lab.reasoning.checks.quality import statements
from rabbithole_lab.records import FinalReport
from rabbithole_lab.report.view import report_view

logger = logging.getLogger(__name__)



@dataclass(frozen=True)
class CitationTarget:
    """What a click on citation number N opens: the document's file, the page and the text to mark."""

    doc: str
    page: int
    path: str
    quote: str = ""


def _quotes_of_line(line: str) -> dict[tuple[str, int], str]:
    quotes: dict[tuple[str, int], str] = {}
    for statement in statements(line):
        for citation in statement.citations:
            quotes.setdefault(citation, statement.quote)
    return quotes


def answer_html(
    report: FinalReport, link: Callable[[str, int], str], language: str
) -> tuple[str, list[CitationTarget]]:
    """The answer and the source list as HTML, each citation named ("[StrlSchV § 73, S. 56]") and a link, and
    what each link opens."""
    view = report_view(report, [], graph_file=None)
    paths = {source.doc_id: source.path for source in report.sources if source.path}
    targets: list[CitationTarget] = []

    def anchor(target: CitationTarget, text: str, css: str, title: str = "") -> str:
        targets.append(target)
        href = link(target.path, target.page) if target.path else "#"
        return (
            f'<a class="{css}" data-cite="{len(targets) - 1}" href="{html.escape(href, quote=True)}"'
            f' title="{html.escape(title, quote=True)}">{html.escape(text)}</a>'
        )

    lines, cited_quotes = [], {}
    for raw_line, pieces in zip(report.answer.splitlines(), view.answer, strict=True):
        quotes = _quotes_of_line(raw_line)
        for key, quote in quotes.items():
            cited_quotes.setdefault(key, quote)
        rendered = ""
        for piece in pieces:
            if piece.kind == "cite" and paths.get(piece.doc):
                quote = quotes.get((piece.doc, piece.page), "")
                target = CitationTarget(piece.doc, piece.page, paths[piece.doc], quote)
                rendered += anchor(target, piece.text, "rh-cite", f"{piece.doc}, {piece.page}")
            elif piece.kind == "strong":
                rendered += f"<b>{html.escape(piece.text)}</b>"
            else:
                rendered += html.escape(piece.text)
        lines.append(f"<p>{rendered}</p>" if rendered.strip() else "")
    t = view.t
    items = []
    for citation in view.citations:  # the cited pages: document, page (sections)
        doc, page = citation.doc, citation.page
        label = citation.link.text
        # the source opens its page with the quote the answer takes from it marked (never its heading)
        shown = (anchor(CitationTarget(doc, page, paths[doc], cited_quotes.get((doc, page), "")), label, "rh-source")
                 if paths.get(doc) else html.escape(label))
        items.append(f"<li>{shown} {html.escape(citation.section)}</li>")
    consulted = ", ".join(html.escape(link.text) for link in view.consulted)
    addressed = ", ".join(html.escape(link.text) for link in view.addressed_to_model)
    body = (
        f"<div class='rh-answer' lang='{html.escape(language)}'>{''.join(lines)}</div>"
        f"<h4>{html.escape(t['sources'])}</h4><ul class='rh-sources'>{''.join(items)}</ul>"
        + (f"<p class='rh-consulted'><b>{html.escape(t['consulted'])}:</b> {consulted}</p>" if consulted else "")
        + (f"<p class='rh-addressed-to-model'><b>{html.escape(t['addressed_to_model'])}:</b> {addressed}</p>"
           if addressed else "")
    )
    return body, targets


class CitedAnswer(anywidget.AnyWidget):
    """Shows `html` (built by `answer_html`, already escaped) and sends {"cite": N} when citation N is clicked."""

    _esm = """
    function render({ model, el }) {
      const draw = () => { el.innerHTML = model.get("html"); };
      el.addEventListener("click", (event) => {
        const link = event.target.closest("[data-cite]");
        if (!link || event.button !== 0 || event.ctrlKey || event.metaKey) return;
        event.preventDefault();
        model.send({ cite: Number(link.dataset.cite) });
      });
      model.on("change:html", draw);
      draw();
    }
    export default { render };
    """
    _css = """
    .rh-answer p { margin: .35em 0; line-height: 1.5; }
    a.rh-cite, a.rh-source { color: #0b57d0; text-decoration: underline; cursor: pointer; }
    a.rh-cite:hover, a.rh-source:hover { color: #063f9c; }
    .rh-score { color: #666; }
    """
    html = traitlets.Unicode("").tag(sync=True)

    def __init__(self, on_citation: Callable[[CitationTarget], None] | None = None, **kwargs):
        super().__init__(**kwargs)
        self.targets: list[CitationTarget] = []
        self.on_citation = on_citation
        self.on_msg(self._received)

    def show(self, report: FinalReport, link: Callable[[str, int], str], language: str) -> None:
        self.html, self.targets = answer_html(report, link, language)

    def click(self, number: int) -> None:
        """What a click on citation `number` does (also called by the front end's message)."""
        if 0 <= number < len(self.targets) and self.on_citation is not None:
            self.on_citation(self.targets[number])

    def _received(self, _widget, content, _buffers) -> None:
        number = content.get("cite") if isinstance(content, dict) else None
        if isinstance(number, int):
            self.click(number)
        else:
            logger.debug("ignored message from the answer view: %r", content)


def open_in(viewer, target: CitationTarget) -> bool:
    """Open a citation's page in a `PdfPageView`."""
    return viewer.open(Path(target.path), target.page, target.quote, label=target.doc)
