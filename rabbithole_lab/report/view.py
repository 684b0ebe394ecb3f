"""The report as data: one view of a finished run, rendered to HTML and to Markdown alike.

Everything a reader sees is here once — labels in the run's language, the answer split into text,
emphasis and citations (each citation a link that opens the PDF at its page), the quality check,
the sources, why each reference was followed, the tasks and how the plan changed. The renderers
only format it; neither decides anything.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rabbithole_lab.evidence.citation_format import CITATION, quotation_of, shown_citation
from rabbithole_lab.evidence.reference_edges import distinct_references, reference_label, unresolved_references
from rabbithole_lab.evidence.sources import page_link
from rabbithole_lab.messages.catalogue import dialogue_end, reasoner_reason, report_labels, run_text
from rabbithole_lab.messages.reasons import edge_reason, notice_text, reached_by
from rabbithole_lab.records import FinalReport, LinkedSource

_PIECES = re.compile(rf"\*\*[^*]+\*\*|{CITATION.pattern}")  # emphasis, or a citation (its document and page)


def labels(language: str) -> dict[str, str]:
    return report_labels(language)


@dataclass
class Piece:
    """A piece of the answer: plain text, emphasis, or a citation with the link to its page."""

    kind: str  # "text" | "strong" | "cite"
    text: str
    url: str = ""
    number: int = 0  # its page's place among the cited pages, in the order the answer first cites each
    doc: str = ""
    page: int = 0


@dataclass
class Link:
    text: str
    url: str = ""


@dataclass
class Citation:
    """One cited page of the answer, listed under it: "StrlSchG.pdf, S. 52 (§ 78)", a link to the page."""

    number: int
    link: Link
    section: str = ""
    doc: str = ""
    page: int = 0


@dataclass
class Chain:
    """One followed reference: where it stands, what it cites, where it led and why it was followed."""

    source: str
    reference: str
    target: str
    reason: str
    resolution: str
    reached: str = ""  # how the target was reached, in the words of the tables and the graph


@dataclass
class TaskRow:
    id: int
    task: str
    relevance: str
    summary: str
    notes: list[str]


@dataclass
class ReportView:
    language: str
    t: dict[str, str]
    query: str
    answer: list[list[Piece]]  # lines of pieces
    findings: list[tuple[str, list[Link]]]
    quality_score: int
    quality: list[tuple[str, int]]
    issues: list[str]
    sources: list[tuple[Link, Link, str, float]]  # document, page, section, relevance: what the answer cites
    consulted: list[Link]  # documents (and sections) the answer was written from without citing them
    citations: list[Citation]
    chains: list[Chain]
    tasks: list[TaskRow]
    run: list[tuple[str, str]]
    warnings: list[str]
    graph_file: str | None = None
    clarification: list[tuple[str, str]] = field(default_factory=list)  # (what, the items), e.g. ("ergänzt", "…")
    invented: list[str] = field(default_factory=list)  # claims removed from the answer, with their reason
    addressed_to_model: list[Link] = field(default_factory=list)  # passages that speak to a model: not used
    unresolved: list[Chain] = field(default_factory=list)  # references to a section the cited law does not have
    extra: dict = field(default_factory=dict)


PageLink = Callable[[Path, int], str]


ShownCitation = Callable[[str, int, str], str]  # (document, page, the quotation it stands for) -> what is shown


def _answer_lines(answer: str, link_of: dict[str, str], link: PageLink = page_link,
                  shown: ShownCitation | None = None) -> list[list[Piece]]:
    """The answer's lines as pieces; each citation shown by `shown` (by default its document and page as
    written), each page numbered in the order it is first cited."""
    numbers: dict[tuple[str, int], int] = {}
    lines = []
    for line in answer.splitlines():
        pieces: list[Piece] = []
        start = statement_start = 0
        quote = ""
        for match in _PIECES.finditer(line):
            if match.start() > start:
                pieces.append(Piece("text", line[start:match.start()]))
            part, before, start = match.group(0), line[start:match.start()], match.end()
            if part.startswith("**"):
                pieces.append(Piece("strong", part[2:-2]))
                continue
            if before.strip() or not quote:  # consecutive citations are one statement's (`checks.quality`)
                quote = quotation_of(line[statement_start:match.start()])
            statement_start = match.end()
            doc, page = match.group(1).strip(), int(match.group(2))
            number = numbers.setdefault((doc, page), len(numbers) + 1)
            path = link_of.get(doc)
            url = link(Path(path), page) if path else ""
            text = shown(doc, page, quote) if shown else part
            pieces.append(Piece("cite", text, url, number, doc, page))
        if start < len(line):
            pieces.append(Piece("text", line[start:]))
        lines.append(pieces)
    return lines


def citation_shower(report: FinalReport) -> ShownCitation:
    """How the report's citations are shown: the registry's name of the document and the section its quotation
    stands in ("[StrlSchV § 73, S. 56]"; the attribution step found each quotation's section), else the one
    section the page's quotations are from, else the name alone. The link still opens the file's page."""
    language = report.metadata.get("language", "de")
    names = report.metadata.get("document_names") or {}
    by_quote = {(item["doc"], int(item["page"]), item["quote"]): item["section"]
                for item in report.metadata.get("quote_sections", []) if item.get("section")}
    by_page: dict[tuple[str, int], set[str]] = {}
    for (doc, page, _), section in by_quote.items():
        by_page.setdefault((doc, page), set()).add(section)
    for source in report.sources:  # a page whose quotations' sections were not recorded: its source's, if one
        if (source.doc_id, source.page_number) not in by_page and source.section and "," not in source.section:
            by_page[(source.doc_id, source.page_number)] = {source.section}

    def shown(doc: str, page: int, quote: str) -> str:
        on_page = by_page.get((doc, page), set())
        section = by_quote.get((doc, page, quote)) or (next(iter(on_page)) if len(on_page) == 1 else "")
        return shown_citation(names.get(doc) or Path(doc).stem, section, page, language)

    return shown


def citations(lines: list[list[Piece]], page_word: str, sections: dict[tuple[str, int], str]) -> list[Citation]:
    """The cited pages under the answer, each once, in the order the answer first cites them."""
    seen: dict[int, Citation] = {}
    for piece in (piece for line in lines for piece in line if piece.kind == "cite"):
        seen.setdefault(piece.number, Citation(piece.number, Link(f"{piece.doc}, {page_word} {piece.page}", piece.url),
                                               sections.get((piece.doc, piece.page), ""), piece.doc, piece.page))
    return [seen[number] for number in sorted(seen)]


def cited_sources(report: FinalReport) -> list[LinkedSource]:
    """The sources the answer cites: its Sources list in every view, and what a summary counts as sources (the
    others were read, not cited)."""
    link_of = {source.doc_id: source.path for source in report.sources if source.path}
    cited_pages = {(piece.doc, piece.page) for line in _answer_lines(report.answer, link_of)
                   for piece in line if piece.kind == "cite"}
    return [source for source in report.sources if (source.doc_id, source.page_number) in cited_pages]


@dataclass(frozen=True)
class RunCounts:
    """What every view counts the same way: the sources the answer cites, the others read, the references
    followed (one reference followed in two tasks counts once)."""

    cited: int
    read: int
    followed: int


def run_counts(report: FinalReport) -> RunCounts:
    """The CLI's summary line, the workbench's and the report's headings read these numbers."""
    cited = len(cited_sources(report))
    return RunCounts(cited=cited, read=len(report.sources) - cited,
                     followed=int(report.metadata.get("followed_references", 0) or 0))


def _task_rows(tasks: list[dict], t: dict[str, str], language: str) -> list[TaskRow]:
    rows = []
    for number, task in enumerate(tasks, start=1):  # numbered 1..N, as in the workbench
        notes = []
        if task.get("origin") == "added":
            notes.append(f"{t['added']}: {task.get('added_reason', '')}")
        if task.get("closed_reason"):
            notes.append(f"{t['closed']}: {task['closed_reason']}")
        rounds = task.get("rounds", [])
        if len(rounds) > 1:
            notes += [f"{t['round']} {r['iteration']}: {notice_text(r.get('reason', ''), language)}" for r in rounds]
        if task.get("irrelevant_findings"):  # counted, not listed: a list of chunk names buried the summary
            notes.append(t["irrelevant"].format(count=len(task["irrelevant_findings"])))
        if task.get("in_answer"):  # the summary shows what the task adds; what the answer quotes is counted
            notes.append(t["in_answer"].format(count=task["in_answer"]))
        score = task.get("relevance_score")
        relevance = f"{t['relevance']} {score:.2f}" if isinstance(score, (int, float)) else ""
        rows.append(TaskRow(number, task["task"], relevance, task.get("summary", ""), notes))
    return rows


def _chains(edges: list[dict], language: str) -> list[Chain]:
    """One chain per followed reference (one reference followed in two tasks is one chain)."""
    chains = []
    for edge in distinct_references(edges):
        if edge.get("decision") != "followed":
            continue
        target = ", ".join(f"{d} {s}".strip() for d, s in zip(edge.get("to_docs", []), edge.get("to_sections", []),
                                                               strict=False))
        source = f"{edge.get('from_doc', '')} {edge.get('from_section', '')}".strip()
        chains.append(Chain(source, reference_label(edge["target"]), target, edge_reason(edge, language),
                            edge.get("resolution", ""), reached_by(edge.get("depth") or 1, language)))
    return chains


def _consulted(report: FinalReport, cited_pages: set, url: Callable[[LinkedSource], str]) -> list[Link]:
    """What the answer was written from without citing it: each document once, with its sections."""
    by_doc: dict[str, tuple[str, list[str]]] = {}
    for source in report.sources:
        if (source.doc_id, source.page_number) in cited_pages:
            continue
        link, sections = by_doc.setdefault(source.doc_id, (url(source), []))
        if source.section and source.section not in sections:
            sections.append(source.section)
    return [Link(f"{doc} ({', '.join(sections)})" if sections else doc, link)
            for doc, (link, sections) in by_doc.items()]


def _addressed_to_model(report: FinalReport, t: dict[str, str], link: PageLink) -> list[Link]:
    """The passages addressed to a model, each where it stands ("HinwV.md § 1, Seite 1"), linked to its page."""
    out = []
    for item in report.metadata.get("addressed_to_model", []):
        doc, page = item.get("doc", ""), int(item.get("page") or 1)
        text = f"{doc} {item.get('section', '')}".strip() + f", {t['page']} {page}"
        out.append(Link(text, link(Path(item["path"]), page) if item.get("path") else ""))
    return out


def report_view(report: FinalReport, edges: list[dict], graph_file: str | None = "graph.html",
                link: PageLink = page_link) -> ReportView:
    """What a report shows, in its language. `link` turns (source path, page) into a URL: a file URI by
    default, a link relative to a notebook's folder where JupyterLab shows the report."""
    language = report.metadata.get("language", "de")
    t = labels(language)
    link_of = {source.doc_id: source.path for source in report.sources if source.path}
    page_word = run_text(language)["page_short"]
    answer = _answer_lines(report.answer, link_of, link, citation_shower(report))

    def url(source: LinkedSource) -> str:
        return link(Path(source.path), source.page_number) if source.path else source.link

    numbered = citations(answer, page_word, {(s.doc_id, s.page_number): s.section for s in report.sources})
    cited_pages = {(piece.doc, piece.page) for line in answer for piece in line if piece.kind == "cite"}
    info = report.metadata.get("reasoner", {})
    model = " " + info["model"] if info.get("model") else ""
    reasoner = f"{info.get('provider', '?')}{model} ({reasoner_reason(info, language)})"
    return ReportView(
        language=language,
        t=t,
        query=report.query,
        answer=answer,
        findings=[
            (finding.claim, [Link(f"{s.doc_id}, {t['page']} {s.page_number}", url(s)) for s in finding.sources])
            for finding in report.findings
        ],
        quality_score=report.quality_score,
        quality=[(t.get(name, name), value) for name, value in report.quality_breakdown.items()],
        issues=list(report.metadata.get("quality_issues", [])),
        sources=[(Link(s.doc_id, url(s)), Link(str(s.page_number), url(s)), s.section, s.relevance_score)
                 for s in cited_sources(report)],
        consulted=_consulted(report, cited_pages, url),
        addressed_to_model=_addressed_to_model(report, t, link),
        unresolved=[Chain(f"{e.get('from_doc', '')} {e.get('from_section', '')}".strip(), reference_label(e["target"]),
                          "", edge_reason(e, language), e.get("resolution", ""))
                    for e in unresolved_references(edges)],
        citations=numbered,
        chains=_chains(edges, language),
        tasks=_task_rows(report.metadata.get("tasks", []), t, language),
        run=[
            (t["reasoner"], reasoner),
            (t["hitl"], dialogue_end(report.metadata.get("hitl_termination_reason", ""), language)),
            (t["llm_calls"], str(report.metadata.get("llm_calls", 0))),
        ],
        warnings=[notice_text(warning, language) for warning in report.metadata.get("warnings", [])],
        graph_file=graph_file,
        clarification=[(t[f"clarified_{kind}"], "; ".join(items))
                       for kind, items in (report.metadata.get("clarification") or {}).items() if items],
        invented=list(report.metadata.get("invented_citations", [])),
    )
