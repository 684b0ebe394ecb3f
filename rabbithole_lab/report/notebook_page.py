"""The executed report notebook as a static page (`research_report.html`), and the batch's index pages.

nbconvert's own sanitiser (`HTMLExporter(sanitize_html=True)`) keeps only bleach's dozen inline tags: every
heading, paragraph and table cell of the report came out as escaped text, and inline styles (left-aligned
extracts, the legend's colours) were dropped. So the page is sanitised here, with the allow-list an untrusted
notebook is shown with in JupyterLab (structure, tables, links and a few layout styles; never a script, an
event handler, a form or a frame), and nbconvert renders the already clean outputs.
"""

from __future__ import annotations

import html
from pathlib import Path

ALLOWED_TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "caption", "code", "col", "colgroup", "dd", "del", "details", "div",
    "dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd",
    "li", "mark", "ol", "p", "pre", "s", "small", "span", "strong", "sub", "summary", "sup", "table", "tbody",
    "td", "tfoot", "th", "thead", "tr", "u", "ul",
})
ALLOWED_ATTRIBUTES = {
    "*": ["class", "id", "title", "style", "lang", "dir"],
    "a": ["href", "name", "target", "rel"],
    "img": ["src", "alt", "width", "height"],
    "td": ["colspan", "rowspan", "align"], "th": ["colspan", "rowspan", "align", "scope"],
    "ol": ["start"], "details": ["open"],
}
ALLOWED_STYLES = frozenset({
    "background", "background-color", "border", "border-bottom", "border-collapse", "border-left", "border-right",
    "border-top", "box-sizing", "color", "display", "font-size", "font-style", "font-weight", "height",
    "line-height", "margin", "margin-bottom", "margin-left", "margin-right", "margin-top", "max-width", "min-width",
    "overflow-wrap", "padding", "table-layout", "text-align", "vertical-align", "white-space", "width",
    "word-break",
})
ALLOWED_PROTOCOLS = frozenset({"http", "https", "mailto", "data"})  # data: only reaches <img> (embedded PNGs)


def sanitised_html(fragment: str) -> str:
    """`fragment` with every tag, attribute, style and URL scheme outside the allow-lists removed or escaped."""
    import bleach
    from bleach.css_sanitizer import CSSSanitizer

    return bleach.clean(fragment, tags=ALLOWED_TAGS, attributes=ALLOWED_ATTRIBUTES, protocols=ALLOWED_PROTOCOLS,
                        css_sanitizer=CSSSanitizer(allowed_css_properties=ALLOWED_STYLES), strip=True,
                        strip_comments=True)


def write_notebook_html(executed: Path, target: Path) -> Path:
    """The executed notebook as a static page for a browser: code hidden, every output and Markdown cell
    sanitised as above, nothing loaded from a CDN. The interactive graph is left out (its page, graph.html,
    is linked from the notebook and the index); its PNG and legend stay."""
    import nbformat
    from nbconvert import HTMLExporter
    from nbconvert.filters import markdown2html

    book = nbformat.read(executed, as_version=4)
    for cell in book.cells:
        if cell.cell_type == "markdown":
            cell.source = sanitised_html(markdown2html(cell.source))
        elif cell.cell_type == "code":
            cell.outputs = [output for output in cell.get("outputs", [])
                            if 'class="rh-graph"' not in str(output.get("data", {}).get("text/html", ""))]
            for output in cell.outputs:
                data = output.get("data", {})
                if "image/png" in data:  # nbconvert's lab template drops an image's alt text: written here
                    alt = (output.get("metadata", {}).get("image/png") or {}).get("alt", "")
                    data["text/html"] = (f'<img src="data:image/png;base64,{"".join(data.pop("image/png").split())}"'
                                         f' alt="{html.escape(alt, quote=True)}" style="max-width:100%">')
                if "text/markdown" in data:
                    data["text/html"] = markdown2html(data.pop("text/markdown"))
                if "text/html" in data:
                    data["text/html"] = sanitised_html(data["text/html"])
                for unsafe in ("image/svg+xml", "application/javascript", "application/vnd.jupyter.widget-view+json"):
                    data.pop(unsafe, None)
    exporter = HTMLExporter(exclude_input=True, sanitize_html=False, embed_images=True, mathjax_url="",
                            require_js_url="", jquery_url="", mermaid_js_url="", mermaid_layout_elk_js_url="")
    page, _ = exporter.from_notebook_node(book)
    target.write_text(page, encoding="utf-8")
    return target


INDEX_HEAD = ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Rabbithole Lab reports</title>"
              "<style>body{font-family:system-ui,sans-serif;margin:2rem}td,th{border:1px solid #ccc;padding:.3rem;"
              "text-align:left;vertical-align:top}table{border-collapse:collapse}</style></head><body>")


def index_html(rows: list[tuple[str, str, list[tuple[str, str]], str]]) -> str:
    """The batch's index for a browser: one row per question (question, status, links, details). Opened
    inside JupyterLab its links cannot load (the Lab's HTML viewer sends no referrer, and the server refuses
    a file request without one), so the page says to open index.md there."""
    body = "".join(
        f"<tr><td>{html.escape(question)}</td><td>{html.escape(status)}</td><td>"
        + " · ".join(f'<a href="{html.escape(href, quote=True)}">{html.escape(label)}</a>' for href, label in links)
        + f"</td><td>{html.escape(detail)}</td></tr>"
        for question, status, links, detail in rows)
    return (INDEX_HEAD + "<h1>Reports</h1><p>In JupyterLab, open <a href=\"index.md\">index.md</a> instead: "
            "its links open inside the Lab.</p><table><tr><th>question</th><th>status</th><th>files</th>"
            "<th>details</th></tr>" + body + "</table></body></html>")


def index_markdown(rows: list[tuple[str, str, list[tuple[str, str]], str]]) -> str:
    """The same index as Markdown: JupyterLab opens a relative link of a rendered Markdown file as a document
    of its own (the notebook in the notebook editor, a page in the HTML viewer)."""
    lines = ["# Reports", "", "| question | status | files | details |", "|---|---|---|---|"]
    for question, status, links, detail in rows:
        files = " · ".join(f"[{_markdown_text(label)}](<{href}>)" for href, label in links)
        lines.append(f"| {_markdown_text(question)} | {_markdown_text(status)} | {files} | {_markdown_text(detail)} |")
    return "\n".join(lines) + "\n"


def _markdown_text(text: str) -> str:
    """Text shown as itself in a Markdown table cell: HTML escaped, Markdown's own characters backslashed."""
    escaped = html.escape(" ".join(text.split()), quote=False)
    return "".join("\\" + char if char in "\\`*_[]()#+-!|<>{}" else char for char in escaped)
