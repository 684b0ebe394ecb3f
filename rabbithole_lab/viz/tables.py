"""Tier tables: one pandas DataFrame per tier of the graded context."""

from __future__ import annotations

import pandas as pd

from rabbithole_lab.pages import find_span, page_at

TIERS = ("primary", "secondary", "tertiary")
COLUMNS = ["doc", "section", "page", "depth", "score", "task_id", "cited_by", "cites", "extract"]
EXTRACT_CHARS = 300


def context_chunks(state: dict) -> list[dict]:
    """Every context entry of a run's state, primary first."""
    return [entry for tier in TIERS for entry in state.get(f"{tier}_context", []) or []]


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


def tier_tables(state: dict) -> dict[str, pd.DataFrame]:
    tables = {}
    for tier in TIERS:
        rows = [{
            "doc": entry["document"],
            "section": entry.get("section", ""),
            "page": extract_pages(entry),
            "depth": entry.get("depth", 0),
            "score": round(float(entry.get("relevance_score", 0.0)), 3),
            "task_id": entry.get("task_id"),
            "cited_by": entry.get("cited_by", ""),
            "cites": entry.get("cites", ""),
            "extract": " ".join((entry.get("extracted_info") or "").split())[:EXTRACT_CHARS],
        } for entry in state.get(f"{tier}_context", [])]
        frame = pd.DataFrame(rows, columns=COLUMNS)
        tables[tier] = frame.sort_values("score", ascending=False, kind="stable").reset_index(drop=True)
    return tables
