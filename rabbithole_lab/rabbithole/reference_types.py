"""What a reference does, read from the words around it (RefWalk's kinds), in each language we serve.

    cites                    the plain case: the text names another provision
    delegates                an enabling clause: "durch Rechtsverordnung nach § 10", "rules made under section 137G"
    applies_correspondingly  the cited rule applies here too: "§ 5 gilt entsprechend", "7.2 applies correspondingly"
    annex                    an annex or appendix of the law: "Anlage 4", "Appendix 1", "Schedule 2"
    note                     a footnote of the passage: "… from that jurisdiction. 53", "footnote 53"

The kind is on the reference, on its edge in the graph and in the tables. The phrases of each language are
listed once, in each language's profile (language/de.py, en.py).
"""

from __future__ import annotations

import re

from rabbithole_lab.language import patterns, words_of
from rabbithole_lab.records import DetectedReference, Relation

ANNEX_UNITS = frozenset(words_of("ANNEX_UNITS"))
NOTE_UNITS = frozenset(words_of("NOTE_UNITS"))
WINDOW_CHARS = 80  # how far around a reference its verb is looked for, within its sentence
_CLAUSE_END = re.compile(r"[.;:]\s|\n\s*\n")


def relation_of(reference: DetectedReference, text: str, language: str) -> Relation:
    """The kind of `reference`, by the words around it in `text` ("de"/"en")."""
    if reference.unit in ANNEX_UNITS:
        return "annex"
    if reference.unit in NOTE_UNITS:
        return "note"
    before = _CLAUSE_END.split(text[max(0, reference.start - WINDOW_CHARS):reference.start])[-1]
    if patterns.delegates_before(language).search(before):
        return "delegates"
    start = max(0, reference.start - WINDOW_CHARS)
    head = _CLAUSE_END.split(text[start:reference.start])[-1]
    tail = _CLAUSE_END.split(text[reference.end:reference.end + WINDOW_CHARS])[0]
    if patterns.applies_in_clause(language).search(f"{head}{reference.original_text}{tail}"):
        return "applies_correspondingly"
    return "cites"
