"""The references of a run counted one way everywhere (CLI, report, workbench, graph): a reference is
one citation in one passage ("§ 78 StrlSchG" in StrlSchV § 55); met again by another task it is the same
reference, and it counts as followed when any task followed it."""

from __future__ import annotations

import re
from collections.abc import Callable

from rabbithole_lab.language import alternation


def reference_key(edge: dict) -> tuple[str, str, str]:
    return edge.get("from_doc", ""), edge.get("from_section", ""), edge.get("target", "")


def distinct_references(edges: list[dict]) -> list[dict]:
    """One edge per reference, in the order first met; a followed edge stands for its reference."""
    chosen: dict[tuple[str, str, str], dict] = {}
    for edge in edges:
        key = reference_key(edge)
        if key not in chosen or (edge.get("decision") == "followed" and chosen[key].get("decision") != "followed"):
            chosen[key] = edge
    return list(chosen.values())


def followed_count(edges: list[dict]) -> tuple[int, int]:
    """(followed, skipped) references."""
    distinct = distinct_references(edges)
    followed = sum(1 for edge in distinct if edge.get("decision") == "followed")
    return followed, len(distinct) - followed


_FILE_NAME = re.compile(r"(?<=\s)([^\s/]+)\.(?:pdf|md|txt)$", re.IGNORECASE)


_EXTENSION = re.compile(r"(?<=\S)\.(?:pdf|md|txt)(?=[\s,;)]|$)", re.IGNORECASE)


def section_label(node: str) -> str:
    """A section as a reader names it: "QStrG.pdf § 12" is shown as "QStrG § 12" (the law's short name)."""
    return _EXTENSION.sub("", node.strip())


def reference_label(target: str) -> str:
    """A reference as a reader names it: a book-less reference carries its document's file name
    ("§ 6 QStrV.pdf"); shown, it is the law's short name, the file's stem ("§ 6 QStrV")."""
    return _FILE_NAME.sub(r"\1", target.strip())


UNRESOLVED_PATHS = ("section_not_found", "section_repealed")  # the cited law is there, the section is not
# a note to the reader inside the answer ("(⚠ § 999 QStrG: …)"): no claim of the documents, never checked as one
READER_NOTE = re.compile(r"\s*\(⚠[^()]*\)")


def unresolved_references(edges: list[dict]) -> list[dict]:
    """The references whose law the knowledge base holds but not the section they name (a typo, a section that
    does not exist, one repealed), each once, with the engine's reason: what the reader must be told where a
    quote cites it."""
    return [edge for edge in distinct_references(edges)
            if edge.get("decision") == "skipped" and edge.get("resolution") in UNRESOLVED_PATHS]


_SECTION_NUMBER = re.compile(rf"^(?P<mark>{alternation('QUOTED_SECTION_UNITS')})\s*(?P<number>\d+\w*)")


def mark_unresolved(answer: str, edges: list[dict], reason_of: Callable[[dict], str]) -> str:
    """The answer with a note after each line that quotes a passage's reference to a section that is not there:
    "(§ 999 QStrG: Abschnitt in QStrG nicht vorhanden)", the edge's reason worded by `reason_of`. The reader sees
    it where the quote stands, not only in the report's list."""
    lines = answer.splitlines()
    for edge in unresolved_references(edges):
        label = reference_label(edge.get("target", ""))
        found = _SECTION_NUMBER.match(label)
        if not found:
            continue
        cited = re.compile(rf"{re.escape(found['mark'])}\s*{re.escape(found['number'])}(?!\w)")
        note = f"(⚠ {label}: {reason_of(edge)})"
        stem = edge.get("from_doc", "").rsplit(".", 1)[0]
        for at, line in enumerate(lines):
            if cited.search(line) and note not in line and (not stem or stem in line):
                lines[at] = f"{line} {note}"
    return "\n".join(lines)
