"""Backlinks: which passage in the context does a reference point at (no search, no I/O)?

Following goes forward, from a citing chunk to the cited one. Its mirror image pulls a chunk that
first-stage retrieval ranked just below the cut into the context when it cites a passage already
there: the question was about the citing passage, and search only found what it cites.
The match is exact (document from the registry or the containing document, section key with
sub-paragraph fallback), so a backlink never rests on similarity alone. A reference to a numbered chapter
cites every rule in it: "Own Funds 3A" and "Chapter 3A" cite rule 3A.1 as "4.1" cites 4.1 (`seed_keys`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rabbithole_lab.kb.ingest.sections import canonical_section, parent_keys, passage_body, section_key
from rabbithole_lab.language.citations_en import NAMED_RULE_UNIT, shown_rule_name
from rabbithole_lab.rabbithole.resolve import MAX_SECTIONS_PER_REFERENCE, section_labels
from rabbithole_lab.records import DetectedReference

SectionKey = tuple[str, str]  # (doc, section key)


def context_key(doc: str, section: str) -> SectionKey:
    return doc, section_key(canonical_section(section))


_DOTTED_RULE = re.compile(r"\d{1,3}[a-z]{0,2}(?:\.\d{1,3}[a-z]{0,2})+")


def seed_keys(doc: str, section: str) -> list[SectionKey]:
    """The keys a reference may cite a passage by: its own (and its rule's, for a sub-paragraph), then each
    numbered unit that holds it ("3A.1" is in chapter 3A: "3a.1", "3a", "chapter3a"; "3.2.4": "3.2", "3",
    "chapter3"). A section without dotted numbering ("§ 78", "Article 19") is cited by its own key only."""
    own = [(doc, key) for key in parent_keys(context_key(doc, section)[1])]  # "3.2.4(a)" is cited as "3.2.4" too
    rule = own[-1][1]
    if not _DOTTED_RULE.fullmatch(rule):
        return own
    parts = rule.split(".")
    units = [".".join(parts[:end]) for end in range(len(parts) - 1, 0, -1)]
    return [*own, *((doc, unit) for unit in units), (doc, f"chapter{parts[0]}")]


# a rule cited by the name its part gives it ("Fundamental Rule 7") names no document: its key is the name's,
# in any document of the collection (`shown_keys`)
ANY_DOCUMENT = ""


def shown_keys(chunk_text: str) -> list[SectionKey]:
    """The key of the name a passage gives its rule at its opening ("Fundamental Rule 7: …"), if it gives one."""
    name = shown_rule_name(passage_body(chunk_text))
    return [(ANY_DOCUMENT, section_key(name))] if name else []


def cited_keys(
    reference: DetectedReference, target_document: Callable[[DetectedReference], str | None],
    shown_name: Callable[[str], str] | None = None,
) -> list[SectionKey]:
    """Every (doc, section key) the reference may name, most specific first. A rule cited by its name is keyed
    by the name a passage shows for it (`shown_name`, as resolution finds it: "PRA Fundamental Rule 7" is shown
    as "Fundamental Rule 7"), else by the name as cited ("Pilot Core Rule 2" is not "Core Rule 2")."""
    if reference.type not in ("legal_section", "section") or not reference.sections:
        return []
    if reference.unit == NAMED_RULE_UNIT:
        shown = shown_name or (lambda name: name)
        return [(ANY_DOCUMENT, section_key(shown(name)))
                for name in section_labels(reference, MAX_SECTIONS_PER_REFERENCE)]
    doc = target_document(reference)
    if not doc:
        return []
    keys: list[SectionKey] = []
    for label in section_labels(reference, MAX_SECTIONS_PER_REFERENCE):
        for key in parent_keys(section_key(canonical_section(label))):
            if (doc, key) not in keys:
                keys.append((doc, key))
    return keys
