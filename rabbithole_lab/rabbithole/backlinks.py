"""Backlinks: which passage in the context does a reference point at (no search, no I/O)?

Following goes forward, from a citing chunk to the cited one. Its mirror image pulls a chunk that
first-stage retrieval ranked just below the cut into the context when it cites a passage already
there: the question was about the citing passage, and search only found what it cites.
The match is exact (document from the registry or the containing document, section key with
sub-paragraph fallback), so a backlink never rests on similarity alone.
"""

from __future__ import annotations

from collections.abc import Callable

from rabbithole_lab.kb.sections import canonical_section, parent_keys, section_key
from rabbithole_lab.rabbithole.resolve import MAX_SECTIONS_PER_REFERENCE, section_labels
from rabbithole_lab.records import DetectedReference

SectionKey = tuple[str, str]  # (doc, section key)


def context_key(doc: str, section: str) -> SectionKey:
    return doc, section_key(canonical_section(section))


def cited_keys(
    reference: DetectedReference, target_document: Callable[[DetectedReference], str | None]
) -> list[SectionKey]:
    """Every (doc, section key) the reference may name, most specific first."""
    if reference.type not in ("legal_section", "section") or not reference.sections:
        return []
    doc = target_document(reference)
    if not doc:
        return []
    keys: list[SectionKey] = []
    for label in section_labels(reference, MAX_SECTIONS_PER_REFERENCE):
        for key in parent_keys(section_key(canonical_section(label))):
            if (doc, key) not in keys:
                keys.append((doc, key))
    return keys
