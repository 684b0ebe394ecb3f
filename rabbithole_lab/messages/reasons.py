"""Reasons in words: the follower records why it followed or skipped a reference (and why it stopped) as a
catalogue key with its values; the front ends, the report and the writer turn them into the reader's language
here. A model's own words are shown as they are; a record saved before reasons were keys holds only words."""

from __future__ import annotations

from collections.abc import Mapping

from rabbithole_lab.messages.catalogue import run_text, ui_text


def reason_text(key: str, values: Mapping | None, words: str, language: str) -> str:
    """The reason in `language`: the catalogue's sentence for `key`, else `words`."""
    template = run_text(language).get(key) if key else None
    if template is None:
        return words or key
    try:
        return template.format(**(values or {}))
    except (KeyError, IndexError, ValueError):
        return words or key


def edge_reason(edge: Mapping, language: str) -> str:
    """Why a reference edge (a `ReferenceEdge` as a dict) was followed or skipped, in `language`."""
    return reason_text(edge.get("reason_key", ""), edge.get("reason_values"), edge.get("reason", ""), language)


def stop_reason(stop: Mapping | str, language: str) -> str:
    """Why following stopped (`{"key", "values"}`, or the words of a run saved before), in `language`."""
    if isinstance(stop, str):
        return stop
    return reason_text(stop.get("key", ""), stop.get("values"), "", language)


def reached_by(depth: int | None, language: str) -> str:
    """How a passage was reached, the same words in every table, the graph and the report: by search (depth
    0), or by n references from the entry the search found."""
    said = ui_text(language)
    count = int(depth or 0)
    return said["by_search"] if count <= 0 else said["by_references"].format(count=count)
