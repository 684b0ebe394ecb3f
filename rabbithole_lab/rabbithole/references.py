"""Reference detection by rules: each language's citation grammar (language/citations_de.py: German statute
chains; language/citations_en.py: English section references, "Rule 3.3.16(1)", "section 82 of FSMR", "see
section 4.2", and a rulebook's forms without a unit word), EU acts, named standards (KTA, DIN/EN/ISO),
"ICRP Publication 103", numbered and author-year citations and URLs. The LLM layer and the hybrid of
both are in reference_merge.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rabbithole_lab.language import alternation
from rabbithole_lab.language.citations_de import EU_ACT, legal_references
from rabbithole_lab.language.citations_en import english_rulebook_references, english_section_references
from rabbithole_lab.language.detection import detect_language
from rabbithole_lab.rabbithole.reference_types import relation_of
from rabbithole_lab.records import DetectedReference

_STANDARD = re.compile(
    r"(?P<text>(?:KTA|DIN(?:\s+EN)?(?:\s+ISO)?(?:\s+IEC)?|EN(?:\s+ISO)?|ISO(?:/IEC)?|IEC|VDI|VDE|DGUV(?:\s+Vorschrift)?)"
    r"\s+(?P<number>\d{1,5}(?:[-‑.]\d+)*(?::\d{4})?))(?![\d])"
)
_ICRP = re.compile(rf"(?P<text>(?:ICRP|IAEA|IAEO)\s+(?:{alternation('PUBLICATION_WORDS')})\s*(?P<number>\d+[A-Za-z]?))")
_URL = re.compile(r"(?P<text>https?://[^\s<>\"'\]\)]+[^\s<>\"'\]\).,;:!?])")
_NUMBERED_CITATION = re.compile(r"\[(?P<body>\d{1,3}(?:\s*[,–-]\s*\d{1,3})*)\]")
_SHORTFORM_CITATION = re.compile(
    r"\[(?P<body>[A-Z][A-Za-zÄÖÜäöüß\-]+(?:\s?(?:et\s?al\.?|&\s?[A-Z][a-z]+))?\s?(?:19|20)?\d{2}[a-z]?)\]"
)
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
    english = english_section_references(text, doc)
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
