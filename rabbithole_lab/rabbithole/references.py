"""Reference detection by rules: German statute chains (citation_grammar.py), English section references
("Rule 3.3.16(1)", "section 82 of FSMR", "see section 4.2"), EU acts, named standards (KTA, DIN/EN/ISO),
"ICRP Publication 103", numbered and author-year citations and URLs. The LLM layer and the hybrid of
both are in reference_merge.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rabbithole_lab.language.detection import detect_language
from rabbithole_lab.rabbithole.citation_grammar import (
    EU_ACT,
    expand_range,
    legal_references,
)
from rabbithole_lab.rabbithole.english_grammar import DOCUMENT_CODE, RULE_NUMBER, english_rulebook_references
from rabbithole_lab.rabbithole.reference_types import relation_of
from rabbithole_lab.records import DetectedReference

_STANDARD = re.compile(
    r"(?P<text>(?:KTA|DIN(?:\s+EN)?(?:\s+ISO)?(?:\s+IEC)?|EN(?:\s+ISO)?|ISO(?:/IEC)?|IEC|VDI|VDE|DGUV(?:\s+Vorschrift)?)"
    r"\s+(?P<number>\d{1,5}(?:[-‑.]\d+)*(?::\d{4})?))(?![\d])"
)
_ICRP = re.compile(r"(?P<text>(?:ICRP|IAEA|IAEO)\s+(?:Publication|Publikation|Veröffentlichung|Pub\.|"
                   r"Safety\s+Standards?\s+Series\s+No\.|GSR\s+Part)\s*(?P<number>\d+[A-Za-z]?))")
_URL = re.compile(r"(?P<text>https?://[^\s<>\"'\]\)]+[^\s<>\"'\]\).,;:!?])")
_NUMBERED_CITATION = re.compile(r"\[(?P<body>\d{1,3}(?:\s*[,–-]\s*\d{1,3})*)\]")
_SHORTFORM_CITATION = re.compile(
    r"\[(?P<body>[A-Z][A-Za-zÄÖÜäöüß\-]+(?:\s?(?:et\s?al\.?|&\s?[A-Z][a-z]+))?\s?(?:19|20)?\d{2}[a-z]?)\]"
)
# English section references: "see section 4.2", "Rule 3.3.16(1)", "section 82 of FSMR", "Chapter 3".
_EN_UNIT = (
    r"(?P<unit>[Ss]ections?|[Ss]ec\.|[Rr]ules?|[Pp]aragraphs?|[Cc]hapters?|[Pp]arts?|[Aa]rticles?|"
    r"[Aa]ppendi(?:x|ces)|[Aa]nnex(?:es)?|[Ss]chedules?|[Cc]lauses?|[Tt]ables?|[Ff]ootnotes?|Titles?)"
)
_EN_UNIT_WORD = _EN_UNIT.replace("?P<unit>", "?:")
# a bare sub-part "(b)" continues a list ("section 51(3)(b) and (c)"); "(PRU)" after "Rules" is an abbreviation
_EN_SUB = r"\((?:\d{1,3}[a-z]?|[a-z]{1,4}|[A-Z])\)"
# "4.1", "277a(1)", "4.25AE", "8A.1", "A4" (a section of a chapter), "II" (a title), "(b)"
_EN_NUM = (rf"(?:\d+(?:\.\d+)*\.?(?:\(\w{{1,4}}\))*|{RULE_NUMBER}|\d+[a-zA-Z]{{0,2}}\.?(?:\(\w{{1,4}}\))*|"
           rf"{_EN_SUB}(?:{_EN_SUB})*|[A-Z]\d+(?:\.\d+)*|[IVX]{{1,5}}\.?|[A-Z](?:\.\d+)*)")
_EN_REF = re.compile(
    rf"(?P<lead>(?:\b(?:see|cf\.|under|in|of|to|with|by)\s+)?(?:(?P<prefix>[A-Z]{{2,6}})\s+)?)"
    rf"\b{_EN_UNIT}\s+(?P<nums>{_EN_NUM}(?:\s*(?:,|and|or|to|-|–)\s*{_EN_NUM})*)(?![\w.])"
    rf"(?:\s+(?:of|in)\s+(?:the\s+)?(?P<book>{DOCUMENT_CODE}(?![\w/])|(?!{_EN_UNIT_WORD}\b)[A-Z][A-Za-z]*(?:\s+(?:(?:and|of|for|on)\s+)?(?!{_EN_UNIT_WORD}\b)[A-Z][A-Za-z]*){{0,6}}))?"
)
_SCHEDULE_TO_BOOK = re.compile(
    r"\s+to\s+(?:the\s+)?(?P<book>[A-Z][A-Za-z]*(?:\s+(?:(?:and|of|for|on)\s+)?[A-Z][A-Za-z]*){0,6})"
)
_EN_RANGE = re.compile(rf"(?P<a>{_EN_NUM})\s*(?:to|-|–)\s*(?P<b>{_EN_NUM})")


def _english_section_references(text: str, doc: str | None) -> list[DetectedReference]:
    references = []
    for match in _EN_REF.finditer(text):
        unit = match.group("unit").rstrip(".").lower()
        nums = match.group("nums")
        sections: list[str] = []
        for piece in re.split(r"\s*(?:,|and|or)\s*", nums):
            piece = piece.strip()
            if piece.startswith("(") and sections and not sections[-1].startswith("("):
                # "51(3)(b) and (c)" -> 51(3)(c): a bare sub-part replaces the last sub-part of the previous one
                piece = re.sub(r"\([^()]*\)$", "", sections[-1]) + piece
            range_match = _EN_RANGE.fullmatch(piece)
            if range_match:
                sections.extend(expand_range(range_match.group("a").rstrip("."), range_match.group("b").rstrip(".")))
            elif piece:
                sections.append(piece.rstrip("."))
        if unit.startswith(("chapter", "part")) and not any(ch.isdigit() for ch in nums):
            continue
        book = match.group("book") or match.group("prefix")
        if not book and unit.startswith("schedule"):
            annexed = _SCHEDULE_TO_BOOK.match(text, match.end())  # "Schedule 1 to FSMR"
            book = annexed.group("book") if annexed else None
        if book and book.split()[0] in {"The", "This", "These", "Such", "A", "An"}:
            book = None
        start = match.start("unit") if not match.group("prefix") else match.start("prefix")
        context = book or doc
        label = f"{unit} {', '.join(sections)}"
        references.append(
            DetectedReference(
                type="section",
                target=f"{label} {context}".strip() if context else label,
                original_text=text[start : match.end()],
                start=start,
                end=match.end(),
                book=book,
                sections=sections,
                unit=unit,
                document_context=context,
                extraction_method="regex",
            )
        )
    _share_books_with_the_enclosing_unit(text, references)
    return references


def _share_books_with_the_enclosing_unit(text: str, references: list[DetectedReference]) -> None:
    """ "paragraph 64 of Schedule 1 to FSMR", "Chapter 1 of Part 19 of FSMR": the inner unit is in the book
    of the unit that encloses it. "Chapter 2 and Chapters 4-6 of the Securitisation Part", "Article 5 or
    Article 7 of the CRR": a unit joined to the next one of its kind shares that one's book, as the German
    chain shares "des Atomgesetzes" across "§§ 5 und 6 sowie § 8"."""
    for index in range(len(references) - 2, -1, -1):
        inner, outer = references[index], references[index + 1]
        gap = text[inner.end : outer.start]
        joined = re.fullmatch(r"\s+of\s+(?:the\s+)?", gap) or (
            _COORDINATION.fullmatch(gap) and unit_kind(inner.unit) == unit_kind(outer.unit))
        if joined and inner.book is None and outer.book:
            inner.book = inner.document_context = outer.book
            inner.target = f"{inner.unit} {', '.join(inner.sections)} {outer.book}"


_COORDINATION = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+")


def unit_kind(unit: str | None) -> str:
    """ "chapters" and "chapter" are one kind of unit; "appendices" and "appendix" too."""
    unit = (unit or "").lower()
    return {"appendices": "appendix", "annexes": "annex"}.get(unit, unit.removesuffix("s"))


def _simple(
    pattern: re.Pattern, kind: str, text: str, target: Callable[[re.Match], str], doc: str | None = None
) -> list[DetectedReference]:
    out = []
    for match in pattern.finditer(text):
        academic = kind.startswith("academic")
        out.append(
            DetectedReference(
                type=kind,  # type: ignore[arg-type]
                # "[1]" means different works in different papers: the citing document is part of the key
                target=f"{target(match)} {doc}" if academic and doc else target(match),
                original_text=match.group(0),
                start=match.start(),
                end=match.end(),
                book=target(match) if kind == "document_mention" else None,
                # a numbered or author-year citation points into the citing document's bibliography
                document_context=doc if academic else None,
                extraction_method="regex",
            )
        )
    return out


def overlaps(a: DetectedReference, b: DetectedReference) -> bool:
    return a.start < b.end and b.start < a.end


def detect_references_regex(text: str, doc: str | None = None, language: str | None = None) -> list[DetectedReference]:
    """Every reference the grammar finds in `text`, in text order, without overlaps.

    `doc` is the document the text comes from: book-less references point into it. `language` ("de"/"en",
    detected from the text when not given) decides whether the English rulebook forms that carry no unit word
    (a bare "4.1", a footnote marker, "Matching Adjustment 4.16") are read: in German text such numbers are
    sentence numbers, amounts and list items.
    """
    if not text:
        return []
    found: list[DetectedReference] = []
    found += _simple(_URL, "external", text, lambda m: m.group("text"))
    found += _simple(EU_ACT, "document_mention", text, lambda m: " ".join(m.group("text").split()))
    found += _simple(_STANDARD, "document_mention", text, lambda m: " ".join(m.group("text").split()))
    found += _simple(_ICRP, "document_mention", text, lambda m: " ".join(m.group("text").split()))
    found += _simple(
        _NUMBERED_CITATION, "academic_numbered", text, lambda m: f"[{m.group('body').replace(' ', '')}]", doc
    )
    found += _simple(_SHORTFORM_CITATION, "academic_shortform", text, lambda m: f"[{m.group('body')}]", doc)
    legal = legal_references(text, doc)
    english = _english_section_references(text, doc)
    language = language or detect_language(text[:600])
    if language == "en":
        english += english_rulebook_references(text, doc)
    # Longer, more specific matches win: legal chains swallow an EU act named as their book.
    ordered = sorted(legal + english + found, key=lambda r: (-(r.end - r.start), r.start))
    kept: list[DetectedReference] = []
    for reference in ordered:
        if reference.type == "external" or not any(overlaps(reference, other) for other in kept):
            reference.relation = relation_of(reference, text, language)
            kept.append(reference)
    return sorted(kept, key=lambda r: r.start)


def _compact(text: str) -> str:
    return re.sub(r"[\s.]+", "", text).lower()


def is_own_label(reference: DetectedReference, text: str, section: str) -> bool:
    """The reference is the chunk's own section label in its first (heading) line, e.g. the
    "Chapter 6.78.(5)" of a passage headed "Part 6.Chapter 6.78.(5)": it names the chunk itself,
    it does not cite anything. Citations in a title ("(§§ 78, 80)") are not the label."""
    if not section:
        return False
    first_line_end = text.find("\n")
    if first_line_end >= 0 and reference.start >= first_line_end:
        return False
    cited = _compact(reference.original_text)
    return bool(cited) and cited in _compact(section)
