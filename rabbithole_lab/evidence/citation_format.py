"""How an answer cites: one format for every part that writes or reads a citation.

The writer and the model write "[StrlSchG.pdf, S. 12]" / "[Guide.pdf, p. 3]" after a statement: the file and the
page, which the claim check, the quality check, the page-exact check and the benchmarks read back. The views show
the same citation by the registry's name of the document and the section its quotation stands in
("[StrlSchG § 78, S. 12]", "[Allocation of Responsibilities 3.2, p. 1]"), linked to the file's page."""

from __future__ import annotations

import re

CITATION = re.compile(r"\[([^\[\]]+?),\s*(?:S\.|p\.)\s*(\d+)\]")  # "[doc, S. 3]": (doc, page)
# a statement quotes one passage; the passage may quote terms itself (die Begriffe „Kernanlage“ und ...), so
# the quotation runs from the first opening mark to the last closing one
_QUOTED = re.compile(r"[„“](.+)[“”]")
_LEAD = re.compile(r"^[\s\-*•>#\d.)]*")

def page_word(language: str) -> str:
    return "S." if language == "de" else "p."


def citation_label(document: str, page: int, language: str) -> str:
    """The citation written after a sentence: "[StrlSchG.pdf, S. 12]" / "[Guide.pdf, p. 3]"."""
    return f"[{document}, {page_word(language)} {page}]"


def citations_in(text: str) -> list[tuple[str, int]]:
    """Every (document, page) the text cites, in its order."""
    return [(doc.strip(), int(page)) for doc, page in CITATION.findall(text)]


def strip_citations(text: str) -> str:
    return " ".join(CITATION.sub(" ", text).split())


def shown_citation(name: str, section: str, page: int, language: str) -> str:
    """How a view shows a citation: the document's name and the quotation's section ("[StrlSchV § 73, S. 56]");
    the name alone where the section is not known."""
    return f"[{f'{name} {section}'.strip()}, {page_word(language)} {page}]"


def quotation_of(text: str) -> str:
    """What a statement (its text up to its citations) quotes: the text within its quotation marks, else the
    statement without its list marks."""
    quoted = _QUOTED.search(text)
    return quoted.group(1) if quoted else _LEAD.sub("", strip_citations(text)).strip().strip("„“\"”")


def cited_statements(text: str) -> list[str]:
    """A summary's statements, each with the citations after it ("… im Kalenderjahr. [QStrG.pdf, S. 1]")."""
    units: list[str] = []
    start = 0
    for match in CITATION.finditer(text):
        unit = text[start:match.end()].strip()
        if units and not strip_citations(unit):  # a second citation of the same statement
            units[-1] = f"{units[-1]} {unit}"
        else:
            units.append(unit)
        start = match.end()
    if rest := text[start:].strip():
        units.append(rest)
    return units
