"""Tier tables: one pandas DataFrame per tier of the graded context, and its readable HTML (a Styler:
headers in the reader's language, extracts left-aligned and wrapped, the full text as a tooltip)."""

from __future__ import annotations

import html

import pandas as pd

from rabbithole_lab.evidence.findings import TIERS, context_entries, finding_tasks, tier_entries
from rabbithole_lab.evidence.pages import find_span, page_at
from rabbithole_lab.messages.catalogue import column_headers
from rabbithole_lab.messages.reasons import reached_by
from rabbithole_lab.support.shown_text import shorten
from rabbithole_lab.viz.reference_graph import section_node

COLUMNS = ["doc", "section", "page", "depth", "score", "task", "cited_by", "cites", "extract"]
EXTRACT_CHARS = 300


def context_chunks(state: dict) -> list[dict]:
    """Every context entry of a run's state, primary first."""
    return context_entries(state)


def extract_pages(entry: dict) -> str:
    """Where the extract stands: the page its first sentence starts on, and its last page when it runs on."""
    extract = entry.get("extracted_info") or ""
    first = entry.get("page")
    text, page_map = entry.get("chunk_text", ""), entry.get("page_map", "")
    # an extract joins sentences of the chunk: it starts where its first words do, ends where its last do
    head, tail = find_span(text, extract[:80]), find_span(text, extract[-80:])
    span = (head[0], tail[1]) if head and tail and tail[1] > head[0] else head
    if span is None or first is None:
        return str(first)
    start, end = page_at(page_map, span[0], first), page_at(page_map, max(span[0], span[1] - 1), first)
    return str(start) if start == end else f"{start}–{end}"


def _section_of(entry: dict) -> str:
    return section_node(entry["document"], entry.get("section", ""))


def _section_labels(state: dict) -> dict[str, str]:
    """chunk id -> "doc section" for every chunk in the context (cited_by/cites name sections, not hashes)."""
    return {entry["chunk_id"]: _section_of(entry) for entry in context_chunks(state) if entry.get("chunk_id")}


def followed_links(state: dict) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(cited by, cites) per section ("doc section"), from every followed reference of the run: a passage
    search found and a reference also reached names the section that reached it, not only a passage that
    only the reference brought."""
    cited_by: dict[str, list[str]] = {}
    cites: dict[str, list[str]] = {}
    for edge in state.get("reference_edges", []) or []:
        if edge.get("decision") != "followed":
            continue
        source = section_node(edge.get("from_doc", ""), edge.get("from_section", ""))
        for doc, section in zip(edge.get("to_docs", []), edge.get("to_sections", []), strict=False):
            target = section_node(doc, section)
            if target != source:
                cited_by.setdefault(target, []).append(source)
                cites.setdefault(source, []).append(target)
    return cited_by, cites


def _joined(*labels: str | list[str]) -> str:
    flat = [label for group in labels for label in ([group] if isinstance(group, str) else group) if label]
    return ", ".join(dict.fromkeys(flat))


def tier_tables(state: dict) -> dict[str, pd.DataFrame]:
    tables = {}
    label_of = _section_labels(state)
    reached_from, reaching = followed_links(state)
    # tasks are shown as their number 1..N in the plan, as everywhere else (ids skip after a removal)
    task_number = {item["id"]: number for number, item in
                   enumerate((state.get("todo_list") or {}).get("items", []), start=1)}
    # every task that found the passage, not only the first (later tasks find what the question's found)
    tasks_of = finding_tasks(state)
    for tier in TIERS:
        rows = [{
            "doc": entry["document"],
            "section": entry.get("section", ""),
            "page": extract_pages(entry),
            "depth": entry.get("depth", 0),
            "score": round(float(entry.get("relevance_score", 0.0)), 3),
            "task": ", ".join(str(task_number[t]) for t in tasks_of.get(entry.get("chunk_id", ""), [])
                              if t in task_number),
            "cited_by": _joined(label_of.get(entry.get("cited_by", ""), entry.get("cited_by", "")),
                                reached_from.get(_section_of(entry), [])),
            "cites": _joined(label_of.get(entry.get("cites", ""), entry.get("cites", "")),
                             reaching.get(_section_of(entry), [])),
            "extract": shorten(entry.get("extracted_info") or "", EXTRACT_CHARS),
        } for entry in tier_entries(state, tier)]
        frame = pd.DataFrame(rows, columns=COLUMNS)
        tables[tier] = frame.sort_values("score", ascending=False, kind="stable").reset_index(drop=True)
    return tables


_CELL_STYLE = "text-align:left; vertical-align:top; padding:2px 6px; border-bottom:1px solid #e0e0e0;"
# a number, a file name or a section number is never broken: on a narrow panel the extract gives way (it
# wraps anywhere), the labels of other sections wrap between their words only
_BETWEEN_WORDS = " white-space:normal; overflow-wrap:normal; word-break:normal;"
_WRAPPING = {"extract": " white-space:normal; overflow-wrap:anywhere; min-width:12em; width:100%;",
             "task": _BETWEEN_WORDS, "cited_by": _BETWEEN_WORDS, "cites": _BETWEEN_WORDS,
             "depth": _BETWEEN_WORDS}  # "1 Verweis(e) vom Einstieg" is words, not a number
_WHOLE = " white-space:nowrap;"


def _role(column: str) -> str:
    """The cell's class: kept whole, wrapped between words, or the extract (wrapped anywhere)."""
    return "rh-extract" if column == "extract" else "rh-words" if column in _WRAPPING else "rh-whole"


def tier_table_html(frame: pd.DataFrame, language: str, full_texts: list[str] | None = None) -> str:
    """A tier table as HTML in the reader's language: headers (no field names), how each passage was found
    ("Suche", "1 Verweis vom Einstieg") in the words the graph and the reference table use. Every cell is
    left-aligned by an inline style (a notebook opened untrusted drops `<style>` blocks but keeps inline
    styles), numbers and names are kept whole while the extract takes the remaining width and wraps, and a
    cut extract shows its full text as a tooltip. Every cell and tooltip is escaped."""
    headers = column_headers(language)
    tips = full_texts if full_texts is not None and len(full_texts) == len(frame) else None

    def cell(column: str, value: object, row: int) -> str:
        text = "" if value is None or (isinstance(value, float) and pd.isna(value)) else value
        shown = reached_by(int(text or 0), language) if column == "depth" else f"{text:.3f}" if isinstance(
            text, float) else str(text)
        title = ""
        if column == "extract" and tips is not None:
            title = f' title="{html.escape(" ".join(tips[row].split()), quote=True)}"'
        style = _CELL_STYLE + _WRAPPING.get(column, _WHOLE)
        return f'<td class="{_role(column)}" style="{style}"{title}>{html.escape(shown)}</td>'

    # a header over words ("gefunden durch") wraps between them as its cells do; over a number it stays whole
    head = "".join(f'<th class="{_role(c)}" style="{_CELL_STYLE} vertical-align:bottom;'
                   f'{_BETWEEN_WORDS if _role(c) == "rh-words" else _WHOLE}">'
                   f"{html.escape(headers.get(c, c))}</th>" for c in frame.columns)
    body = "".join("<tr>" + "".join(cell(column, record[column], row) for column in frame.columns) + "</tr>"
                   for row, record in enumerate(frame.to_dict("records")))
    return (f'<table class="rh-tier-table" style="width:100%; border-collapse:collapse; table-layout:auto;">'
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


def full_extracts(state: dict, tier: str) -> list[str]:
    """The untruncated extracts of a tier, in the order of its table (best score first)."""
    entries = tier_entries(state, tier)
    order = sorted(range(len(entries)), key=lambda i: -float(entries[i].get("relevance_score", 0.0)))
    return [entries[i].get("extracted_info") or "" for i in order]
