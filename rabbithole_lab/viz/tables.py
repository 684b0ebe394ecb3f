"""Tier tables: one pandas DataFrame per tier of the graded context."""

from __future__ import annotations

import pandas as pd

TIERS = ("primary", "secondary", "tertiary")
COLUMNS = ["doc", "section", "page", "depth", "score", "task_id", "cited_by", "cites", "extract"]
EXTRACT_CHARS = 300


def context_chunks(state: dict) -> list[dict]:
    """Every context entry of a run's state, primary first."""
    return [entry for tier in TIERS for entry in state.get(f"{tier}_context", []) or []]


def tier_tables(state: dict) -> dict[str, pd.DataFrame]:
    tables = {}
    for tier in TIERS:
        rows = [{
            "doc": entry["document"],
            "section": entry.get("section", ""),
            "page": entry.get("page"),
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
