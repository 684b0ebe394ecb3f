"""One report, two formats: the `ReportView` rendered to HTML through an autoescaping Jinja2 template
and to Markdown from the same view. Document, question and model text is data in both: escaped for
HTML by the template, and for Markdown so it renders as the text it is (no links, images or HTML of
its own); the citations in the answer are links that open the PDF at the page.
"""

from __future__ import annotations

import re
from functools import lru_cache

from rabbithole_lab.evidence.sources import page_link
from rabbithole_lab.records import FinalReport
from rabbithole_lab.report.view import PageLink, ReportView, labels, report_view
from rabbithole_lab.support.terminal_safety import visible_controls

__all__ = ["answer_markdown", "answer_text", "labels", "render_html", "render_markdown"]

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|])")


def md(text: object) -> str:
    """Text as Markdown shows it literally: its own emphasis, links, images and HTML are escaped."""
    escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", str(text).replace("&", "&amp;"))
    return re.sub(r"^(\s*)([#>+-])", r"\1\\\2", escaped.replace("\n", " "))


@lru_cache(maxsize=1)
def _template():
    from jinja2 import Environment, PackageLoader, select_autoescape

    environment = Environment(loader=PackageLoader("rabbithole_lab.report", "templates"),
                              autoescape=select_autoescape(["html", "j2"], default=True))
    return environment.get_template("report.html.j2")


def render_html(report: FinalReport, edges: list[dict], graph_file: str | None = "graph.html") -> str:
    return _template().render(v=report_view(report, edges, graph_file))


def _answer_markdown(lines_of_pieces: list) -> list[str]:
    """The answer's lines, each ending in a hard line break: Markdown would join consecutive lines into one
    paragraph, and the lead states one provision per line (as the workbench shows it)."""
    lines = []
    for line in lines_of_pieces:
        rendered = ""
        for piece in line:
            if piece.kind == "cite":
                rendered += f"[{md(piece.text)}]({piece.url})" if piece.url else md(piece.text)
            elif piece.kind == "strong":
                rendered += f"**{md(piece.text)}**"
            else:
                rendered += md(piece.text)
        lines.append(f"{rendered}  " if rendered.strip() else rendered)
    return lines


def _citation_list(view: ReportView) -> list[str]:
    """The cited pages under the answer, each once: "StrlSchG.pdf, S. 52 (§ 78)", a link to the page (the answer's
    brackets name the document and section; this names the file they open)."""
    lines = []
    for citation in view.citations:
        text = md(citation.link.text) + (f" ({md(citation.section)})" if citation.section else "")
        linked = f"[{text}]({citation.link.url})" if citation.link.url else text
        lines.append(f"- {linked}")
    return lines


def answer_markdown(report: FinalReport, link: PageLink | None = None) -> str:
    """The answer alone as Markdown (the workbench shows it) with its numbered sources: its text escaped,
    citations linked. `link` turns (source path, page) into the URL, e.g. relative to the notebook for
    JupyterLab."""
    view = report_view(report, [], graph_file=None, link=link or page_link)
    lines = _answer_markdown(view.answer)
    return "\n".join(lines + ([""] + _citation_list(view) if view.citations else []))


def _markdown(view: ReportView) -> str:
    t = view.t
    lines = [f"# {md(t['title'])}", "", f"**{md(t['question'])}:** {md(view.query)}", ""]
    if view.clarification:
        said = "; ".join(f"{md(what)}: {md(items)}" for what, items in view.clarification)
        lines += [f"**{md(t['clarification'])}:** {said}", ""]
    lines += [f"## {md(t['answer'])}", ""]
    lines += _answer_markdown(view.answer)
    lines += ["", *_citation_list(view), ""] if view.citations else [""]
    lines += [f"## {md(t['quality'])}: {view.quality_score}/500", "", f"| {md(t['dimension'])} | {md(t['score'])} |",
              "|---|---|", *[f"| {md(name)} | {value} |" for name, value in view.quality]]
    if view.issues:
        lines += ["", *[f"- {md(issue)}" for issue in view.issues]]
    if view.invented:
        lines += ["", f"**{md(t['invented'])}:**", "", *[f"- {md(claim)}" for claim in view.invented]]
    lines += [
        "",
        f"## {md(t['sources'])}",
        "",
        f"| {md(t['document'])} | {md(t['page'])} | {md(t['section'])} | {md(t['relevance'])} |",
        "|---|---|---|---|",
    ]
    for doc, page, section, relevance in view.sources:
        target = f"[{md(doc.text)}]({doc.url})" if doc.url else md(doc.text)
        lines.append(f"| {target} | {md(page.text)} | {md(section)} | {relevance:.2f} |")
    if view.consulted:
        consulted = ", ".join(f"[{md(link.text)}]({link.url})" if link.url else md(link.text)
                              for link in view.consulted)
        lines += ["", f"**{md(t['consulted'])}:** {consulted}"]
    if view.addressed_to_model:
        passages = ", ".join(f"[{md(link.text)}]({link.url})" if link.url else md(link.text)
                             for link in view.addressed_to_model)
        lines += ["", f"**{md(t['addressed_to_model'])}:** {passages}"]
    lines += ["", f"## {md(t['references'])} ({len(view.chains)})", ""]
    if view.chains:
        lines += [f"| {md(t['from'])} | {md(t['via'])} | {md(t['to'])} | {md(t['found_by'])} | {md(t['why'])} |",
                  "|---|---|---|---|---|"]
        lines += [f"| {md(c.source)} | {md(c.reference)} | {md(c.target)} | {md(c.reached)} | {md(c.reason)} |"
                  for c in view.chains]
    else:
        lines.append(md(t["none"]))
    if view.unresolved:
        lines += ["", f"**{md(t['unresolved'])}:**", ""]
        lines += [f"- {md(c.source)} → {md(c.reference)}: {md(c.reason)}" for c in view.unresolved]
    lines += ["", f"## {md(t['tasks'])}", ""]
    for task in view.tasks:
        lines.append(f"{task.id}. **{md(task.task)}**" + (f" ({md(task.relevance)})" if task.relevance else ""))
        if task.summary:
            lines.append(f"   {md(task.summary)}")
        lines += [f"   - {md(note)}" for note in task.notes]
    lines += ["", f"## {md(t['run'])}", "", *[f"- {md(name)}: {md(value)}" for name, value in view.run]]
    if view.warnings:
        lines += ["", f"## {md(t['warnings'])}", "", *[f"- {md(warning)}" for warning in view.warnings]]
    return "\n".join(lines) + "\n"


def render_markdown(report: FinalReport, edges: list[dict], link: PageLink | None = None) -> str:
    """The whole report as Markdown; `link` as in `answer_markdown` (file URIs by default). A control character
    from a document or a model is shown, never kept raw (report.md is read in terminals too)."""
    return visible_controls(_markdown(report_view(report, edges, graph_file=None, link=link or page_link)))


def answer_text(report: FinalReport) -> str:
    """The answer for a terminal: citations by document name and section and, under it, each cited page with
    its file and link (a terminal shows text as it is; nothing is interpreted)."""
    view = report_view(report, [], graph_file=None)
    lines = ["".join(piece.text for piece in line) for line in view.answer]
    if view.citations:
        lines.append("")
        lines += [f"- {c.link.text}" + (f" ({c.section})" if c.section else "")
                  + (f" {c.link.url}" if c.link.url else "") for c in view.citations]
    return "\n".join(lines)
