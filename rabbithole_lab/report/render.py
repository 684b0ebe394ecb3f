"""FinalReport to Markdown and to self-contained HTML (all document text escaped)."""

from __future__ import annotations

import html

from rabbithole_lab.records import FinalReport

_LABELS = {
    "de": {"title": "Recherchebericht", "question": "Frage", "answer": "Antwort", "findings": "Kernaussagen",
           "quality": "Qualität", "sources": "Quellen", "references": "Verfolgte Verweise", "tasks": "Aufgaben",
           "run": "Ablauf", "warnings": "Hinweise", "dimension": "Dimension", "score": "Punkte",
           "document": "Dokument", "page": "Seite", "section": "Abschnitt", "relevance": "Relevanz",
           "from": "Von", "to": "Nach", "decision": "Entscheidung", "reason": "Begründung",
           "reasoner": "Reasoner", "hitl": "Klärungsdialog beendet durch", "none": "keine"},
    "en": {"title": "Research report", "question": "Question", "answer": "Answer", "findings": "Key findings",
           "quality": "Quality", "sources": "Sources", "references": "Followed references", "tasks": "Tasks",
           "run": "Run", "warnings": "Warnings", "dimension": "Dimension", "score": "Score",
           "document": "Document", "page": "Page", "section": "Section", "relevance": "Relevance",
           "from": "From", "to": "To", "decision": "Decision", "reason": "Reason",
           "reasoner": "Reasoner", "hitl": "Clarification ended by", "none": "none"},
}


def labels(language: str) -> dict[str, str]:
    return _LABELS["en" if language == "en" else "de"]


def _reasoner_line(report: FinalReport) -> str:
    info = report.metadata.get("reasoner", {})
    model = f" {info.get('model')}" if info.get("model") else ""
    return f"{info.get('provider', '?')}{model} ({info.get('reason', '')})"


def _edge_rows(edges: list[dict]) -> list[dict]:
    return [e for e in edges if e.get("decision") == "followed"]


def render_markdown(report: FinalReport, edges: list[dict]) -> str:
    t = labels(report.metadata.get("language", "de"))

    def cell(text: object) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    lines = [f"# {t['title']}", "", f"**{t['question']}:** {report.query}", "", f"## {t['answer']}", "",
             report.answer, ""]
    if report.findings:
        lines += [f"## {t['findings']}", ""]
        for finding in report.findings:
            links = ", ".join(f"[{s.doc_id}, {t['page']} {s.page_number}]({s.link or s.path})" for s in finding.sources)
            lines.append(f"- {finding.claim}" + (f" — {links}" if links else ""))
        lines.append("")
    lines += [f"## {t['quality']}: {report.quality_score}/500", "", f"| {t['dimension']} | {t['score']} |", "|---|---|"]
    lines += [f"| {name} | {value} |" for name, value in report.quality_breakdown.items()]
    issues = report.metadata.get("quality_issues", [])
    if issues:
        lines += ["", *[f"- {cell(issue)}" for issue in issues]]
    lines += ["", f"## {t['sources']}", "", f"| {t['document']} | {t['page']} | {t['section']} | {t['relevance']} |",
              "|---|---|---|---|"]
    for source in report.sources:
        target = f"[{cell(source.doc_id)}]({source.link})" if source.link else cell(source.doc_id)
        lines.append(f"| {target} | {source.page_number} | {cell(source.section)} | {source.relevance_score:.2f} |")
    followed = _edge_rows(edges)
    lines += ["", f"## {t['references']} ({len(followed)})", ""]
    if followed:
        lines += [f"| {t['from']} | {t['to']} | {t['reason']} |", "|---|---|---|"]
        for edge in followed:
            to = ", ".join(f"{d} {s}".strip() for d, s in zip(edge.get("to_docs", []), edge.get("to_sections", []), strict=False))
            lines.append(f"| {cell(edge.get('from_doc', ''))} {cell(edge.get('from_section', ''))} → "
                         f"{cell(edge['target'])} | {cell(to)} | {cell(edge.get('reason', ''))} |")
    else:
        lines.append(t["none"])
    lines += ["", f"## {t['tasks']}", ""]
    lines += [f"{task['id']}. {task['task']}" for task in report.metadata.get("tasks", [])]
    lines += ["", f"## {t['run']}", "", f"- {t['reasoner']}: {_reasoner_line(report)}",
              f"- {t['hitl']}: {report.metadata.get('hitl_termination_reason', '')}",
              f"- LLM calls: {report.metadata.get('llm_calls', 0)}; reasoning steps: {report.metadata.get('reasoner_calls', 0)}"]
    warnings = report.metadata.get("warnings", [])
    if warnings:
        lines += ["", f"## {t['warnings']}", "", *[f"- {w}" for w in warnings]]
    return "\n".join(lines) + "\n"


_CSS = """body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;line-height:1.5}
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left}
.answer{white-space:pre-wrap;background:#f6f8fa;padding:1rem;border-radius:6px}.muted{color:#666}"""


def render_html(report: FinalReport, edges: list[dict], graph_file: str | None = "graph.html") -> str:
    t = labels(report.metadata.get("language", "de"))
    e = html.escape

    def link(url: str, text: str) -> str:
        return f'<a href="{e(url, quote=True)}" target="_blank">{e(text)}</a>' if url else e(text)

    parts = [f"<!DOCTYPE html><html lang=\"{e(report.metadata.get('language', 'de'))}\"><head><meta charset=\"utf-8\">",
             f"<title>{e(t['title'])}: {e(report.query)}</title><style>{_CSS}</style></head><body>",
             f"<h1>{e(t['title'])}</h1><p><strong>{e(t['question'])}:</strong> {e(report.query)}</p>",
             f"<h2>{e(t['answer'])}</h2><div class=\"answer\">{e(report.answer)}</div>"]
    if report.findings:
        parts.append(f"<h2>{e(t['findings'])}</h2><ul>")
        for finding in report.findings:
            sources = ", ".join(link(s.link, f"{s.doc_id}, {t['page']} {s.page_number}") for s in finding.sources)
            parts.append(f"<li>{e(finding.claim)}" + (f" — {sources}" if sources else "") + "</li>")
        parts.append("</ul>")
    parts.append(f"<h2>{e(t['quality'])}: {report.quality_score}/500</h2><table><tr><th>{e(t['dimension'])}</th>"
                 f"<th>{e(t['score'])}</th></tr>")
    parts += [f"<tr><td>{e(name)}</td><td>{value}</td></tr>" for name, value in report.quality_breakdown.items()]
    parts.append("</table>")
    issues = report.metadata.get("quality_issues", [])
    if issues:
        parts.append("<ul>" + "".join(f"<li>{e(i)}</li>" for i in issues) + "</ul>")
    parts.append(f"<h2>{e(t['sources'])}</h2><table><tr><th>{e(t['document'])}</th><th>{e(t['page'])}</th>"
                 f"<th>{e(t['section'])}</th><th>{e(t['relevance'])}</th></tr>")
    for s in report.sources:
        parts.append(f"<tr><td>{link(s.link, s.doc_id)}</td><td>{link(s.link, str(s.page_number))}</td>"
                     f"<td>{e(s.section)}</td><td>{s.relevance_score:.2f}</td></tr>")
    parts.append("</table>")
    followed = _edge_rows(edges)
    parts.append(f"<h2>{e(t['references'])} ({len(followed)})</h2>")
    if graph_file:
        parts.append(f'<p>{link(graph_file, "graph.html")}</p>')
    if followed:
        parts.append(f"<table><tr><th>{e(t['from'])}</th><th>{e(t['to'])}</th><th>{e(t['reason'])}</th></tr>")
        for edge in followed:
            to = ", ".join(f"{d} {s}".strip() for d, s in zip(edge.get("to_docs", []), edge.get("to_sections", []), strict=False))
            parts.append(f"<tr><td>{e(edge.get('from_doc', ''))} {e(edge.get('from_section', ''))} → {e(edge['target'])}"
                         f"</td><td>{e(to)}</td><td>{e(edge.get('reason', ''))}</td></tr>")
        parts.append("</table>")
    parts.append(f"<h2>{e(t['tasks'])}</h2><ol start=\"0\">")
    parts += [f"<li>{e(task['task'])}</li>" for task in report.metadata.get("tasks", [])]
    parts.append("</ol>")
    parts.append(f"<h2>{e(t['run'])}</h2><ul><li>{e(t['reasoner'])}: {e(_reasoner_line(report))}</li>"
                 f"<li>{e(t['hitl'])}: {e(report.metadata.get('hitl_termination_reason', ''))}</li>"
                 f"<li>LLM calls: {report.metadata.get('llm_calls', 0)}</li></ul>")
    warnings = report.metadata.get("warnings", [])
    if warnings:
        parts.append(f"<h2>{e(t['warnings'])}</h2><ul>" + "".join(f"<li>{e(w)}</li>" for w in warnings) + "</ul>")
    parts.append("</body></html>")
    return "\n".join(parts)
