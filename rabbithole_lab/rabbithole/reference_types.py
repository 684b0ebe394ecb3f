"""What a reference does, read from the words around it (RefWalk's kinds), in each language we serve.

    cites                    the plain case: the text names another provision
    delegates                an enabling clause: "durch Rechtsverordnung nach § 10", "rules made under section 137G"
    applies_correspondingly  the cited rule applies here too: "§ 5 gilt entsprechend", "7.2 applies correspondingly"
    annex                    an annex or appendix of the law: "Anlage 4", "Appendix 1", "Schedule 2"
    note                     a footnote of the passage: "… from that jurisdiction. 53", "footnote 53"

The kind is on the reference, on its edge in the graph and in the tables. The phrases of each language are
listed once, here.
"""

from __future__ import annotations

import re

from rabbithole_lab.records import DetectedReference, Relation

ANNEX_UNITS = {"Anlage", "Anlagen", "Anhang", "Anh.", "annex", "annexes", "appendix", "appendices", "schedule",
               "schedules"}
NOTE_UNITS = {"footnote", "footnotes", "Fußnote", "Fußnoten"}
WINDOW_CHARS = 80  # how far around a reference its verb is looked for, within its sentence

# the words before a reference that make it the source of a power to legislate
_DELEGATES_BEFORE = {
    "de": re.compile(r"(?:durch|in\s+einer|in\s+der|die)\s+Rechtsverordnung(?:en)?\s+(?:nach|auf\s+Grund(?:\s+des)?|"
                     r"aufgrund(?:\s+des)?|gemäß)\s*$|(?:auf\s+Grund|aufgrund)\s+(?:des|der)\s*$|"
                     r"Ermächtigung\s+(?:nach|in|des)\s*$", re.IGNORECASE),
    "en": re.compile(r"(?:rules|regulations|orders|an\s+order|directions|requirements|instruments?)\s+(?:made|"
                     r"issued|given)\s+(?:under|pursuant\s+to)\s*$|(?:powers?|power\s+conferred)\s+(?:under|by)\s*$",
                     re.IGNORECASE),
}
# the words of a reference's clause that apply it here ("Für X gilt § 5 entsprechend", "§ 7 ist auf Y
# entsprechend anzuwenden", "Rule 7.2 applies correspondingly", "… apply with the necessary modifications")
_APPLIES_IN_CLAUSE = {
    "de": re.compile(r"\b(?:gilt|gelten)\b(?:\s+\S+){0,8}?\s+entsprechend\b|"
                     r"\bentsprechend\s+(?:anzuwenden|gilt|gelten)\b|\bentsprechende\s+Anwendung\b", re.IGNORECASE),
    "en": re.compile(r"\b(?:applies|apply|shall\s+apply|is\s+to\s+apply)\b(?:\s+\S+){0,4}?\s+"
                     r"(?:correspondingly|mutatis\s+mutandis|with\s+(?:the\s+)?(?:necessary\s+)?modifications)\b",
                     re.IGNORECASE),
}
_CLAUSE_END = re.compile(r"[.;:]\s|\n\s*\n")


def relation_of(reference: DetectedReference, text: str, language: str) -> Relation:
    """The kind of `reference`, by the words around it in `text` ("de"/"en")."""
    if reference.unit in ANNEX_UNITS:
        return "annex"
    if reference.unit in NOTE_UNITS:
        return "note"
    before = _CLAUSE_END.split(text[max(0, reference.start - WINDOW_CHARS):reference.start])[-1]
    if _DELEGATES_BEFORE[language].search(before):
        return "delegates"
    start = max(0, reference.start - WINDOW_CHARS)
    head = _CLAUSE_END.split(text[start:reference.start])[-1]
    tail = _CLAUSE_END.split(text[reference.end:reference.end + WINDOW_CHARS])[0]
    if _APPLIES_IN_CLAUSE[language].search(f"{head}{reference.original_text}{tail}"):
        return "applies_correspondingly"
    return "cites"
