"""Reasons in words: the follower records why it followed or skipped a reference (and why it stopped) as a
catalogue key with its values; the front ends, the report and the writer turn them into the reader's language
here. A model's own words are shown as they are; a record saved before reasons were keys holds only words."""

from __future__ import annotations

from collections.abc import Mapping

from rabbithole_lab.messages.catalogue import run_text, ui_text
from rabbithole_lab.records import RESEARCH_SUMMARY


def reason_text(key: str, values: Mapping | None, words: str, language: str) -> str:
    """The reason in `language`: the catalogue's sentence for `key`, else `words`."""
    template = run_text(language).get(key) if key else None
    if template is None:
        return words or key
    try:
        return template.format(**(values or {}))
    except (KeyError, IndexError, ValueError):
        return words or key


def notice_text(item: Mapping | str, language: str) -> str:
    """A notice (records.notice: a key with its values, a value possibly a notice itself) in `language`; words
    (a run saved before notices were keys, a model's or a reasoner's own words) as they are."""
    if isinstance(item, str):
        return item
    values = {name: notice_text(value, language) if isinstance(value, Mapping) else value
              for name, value in (item.get("values") or {}).items()}
    if item.get("key") == RESEARCH_SUMMARY:
        return research_summary(values, language)
    return reason_text(item.get("key", ""), values, item.get("text", ""), language)


def research_summary(anchor: Mapping, language: str) -> str:
    """What will be researched, line by line: the question, then what was added, left out and named."""
    said = run_text(language)
    lines = [said["summary_question"].format(question=anchor.get("question", ""))]
    for key in ("additions", "exclusions", "provisions"):
        if anchor.get(key):
            lines.append(said[f"summary_{key}"].format(items="; ".join(anchor[key])))
    return "\n".join(lines)


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
