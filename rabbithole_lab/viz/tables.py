"""Tier tables: one pandas DataFrame per tier of the graded context, and its readable HTML (a Styler:
headers in the reader's language, extracts left-aligned and wrapped, the full text as a tooltip)."""

from __future__ import annotations

import html

import pandas as pd

from rabbithole_lab.findings import TIERS, context_entries, finding_tasks, tier_entries
from rabbithole_lab.pages import find_span, page_at

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


def _section_labels(state: dict) -> dict[str, str]:
    """chunk id -> "doc section" for every chunk in the context (cited_by/cites name sections, not hashes)."""
    return {entry["chunk_id"]: f"{entry['document']} {entry.get('section', '')}".strip()
            for entry in context_chunks(state) if entry.get("chunk_id")}


def tier_tables(state: dict) -> dict[str, pd.DataFrame]:
    tables = {}
    label_of = _section_labels(state)
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
            "cited_by": label_of.get(entry.get("cited_by", ""), entry.get("cited_by", "")),
            "cites": label_of.get(entry.get("cites", ""), entry.get("cites", "")),
            "extract": " ".join((entry.get("extracted_info") or "").split())[:EXTRACT_CHARS],
        } for entry in tier_entries(state, tier)]
        frame = pd.DataFrame(rows, columns=COLUMNS)
        tables[tier] = frame.sort_values("score", ascending=False, kind="stable").reset_index(drop=True)
    return tables


def tier_table_html(frame: pd.DataFrame, headers: dict[str, str], full_texts: list[str] | None = None) -> str:
    """A tier table as HTML: `headers` names the columns in the reader's language (no field names), the
    extract is left-aligned and wraps, and its full text shows as a tooltip. Every cell is escaped."""
    shown = frame.rename(columns={column: headers.get(column, column) for column in frame.columns})
    extract = headers.get("extract", "extract")
    styler = (shown.style.hide(axis="index").format(escape="html", precision=3, na_rep="")
              .set_table_attributes('class="rh-tier-table"')
              .set_table_styles([{"selector": "th", "props": "text-align:left; vertical-align:bottom;"},
                                 {"selector": "td", "props": "text-align:left; vertical-align:top; padding:2px 6px;"}])
              .set_properties(subset=[extract], **{"white-space": "normal", "min-width": "24em", "max-width": "48em"}))
    if full_texts is not None and len(full_texts) == len(frame):
        # pandas puts tooltips into the title attribute unescaped: escape them here
        tips = pd.DataFrame("", index=shown.index, columns=shown.columns)
        tips[extract] = [html.escape(" ".join(text.split()), quote=True) for text in full_texts]
        styler = styler.set_tooltips(tips, as_title_attribute=True)
    return styler.to_html()


def full_extracts(state: dict, tier: str) -> list[str]:
    """The untruncated extracts of a tier, in the order of its table (best score first)."""
    entries = tier_entries(state, tier)
    order = sorted(range(len(entries)), key=lambda i: -float(entries[i].get("relevance_score", 0.0)))
    return [entries[i].get("extracted_info") or "" for i in order]
