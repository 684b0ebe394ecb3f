"""The references of a run counted one way everywhere (CLI, report, workbench, graph): a reference is
one citation in one passage ("§ 78 StrlSchG" in StrlSchV § 55); met again by another task it is the same
reference, and it counts as followed when any task followed it."""

from __future__ import annotations

import re


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
