"""Reference resolution: exact section lookup -> scoped hybrid search -> broad hybrid search.

Each resolution records the path that produced it ("section_index", "scoped", "broad",
"external", "not_in_collection", "section_not_found", "none") and a score, so the reference graph can show
how a hop was made. A reference to a document the collection does not hold is "not_in_collection": nothing
is searched for it. A section its document's own numbering lacks ("§ 999 QStrG" in a law whose sections the
index knows) is "section_not_found": nothing is searched for it either; a scoped search is only for a
document whose sections are not numbered that way. A broad search (no target document known) admits only
passages that name the target: its section label, its number or its name. URLs are recorded, never fetched.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from rabbithole_lab.kb.ingest.sections import (
    BIBLIOGRAPHY_LABEL,
    normalise_section,
    numbering_kind,
    parent_keys,
    section_key,
)
from rabbithole_lab.kb.retrieval.search import KnowledgeBase
from rabbithole_lab.language import alternation
from rabbithole_lab.language.citations_en import NAMED_RULE_UNIT, name_variants, unit_kind
from rabbithole_lab.language.section_units import MAX_RANGE_EXPANSION
from rabbithole_lab.records import DetectedReference, VectorResult

logger = logging.getLogger(__name__)

ResolutionPath = Literal["section_index", "scoped", "broad", "external", "not_in_collection", "section_not_found",
                         "section_repealed", "none"]
# a document whose section index holds sections of a numbering (§, Art., Anlage, rules …) is taken to hold all
# of them: a section of that numbering it lacks does not exist there (repealed, a typo, an OCR error), and a
# search inside the document would only put other sections in its place ("Anlage 9" of a law with two annexes)
MIN_NUMBERED_SECTIONS = 1
# A whole expanded range ("§§ 184 bis 187", "sections 58 to 71") is looked up; following then takes
# the chunk most similar to the question, so a long range no longer stops at its first members.
MAX_SECTIONS_PER_REFERENCE = MAX_RANGE_EXPANSION + 1
MAX_ELSEWHERE_SECTIONS = 3  # a book-less reference is looked up in other documents only when it names few sections


@dataclass
class Resolution:
    path: ResolutionPath
    results: list[VectorResult] = field(default_factory=list)
    doc: str | None = None
    collection: str | None = None
    score: float = 0.0
    beginnings: bool = False  # the results are where named blocks begin (a chapter's first passage), not sections

    @property
    def found(self) -> bool:
        return bool(self.results)


# English units that group numbered sections: "Part 19" is not section 19 ("Part 3.19.")
_GROUPING_UNITS = {"part": "Part", "parts": "Part", "chapter": "Chapter", "chapters": "Chapter",
                   "schedule": "Schedule", "schedules": "Schedule"}
# units whose numbers are counted apart from the rules: "footnote 5" is not rule 5
_NUMBERED_APART = {"footnote": "Footnote", "footnotes": "Footnote", "table": "Table", "tables": "Table",
                   "title": "Title", "titles": "Title"}
# a bare number read as a reference only because of where it stands ("pursuant to 4.1", a footnote marker):
# it is a reference only if the citing document has that numbered block; nothing is searched for it
CANDIDATE_UNITS = {"rule", "footnote"}
_GROUPING_LABEL = re.compile(rf"(?P<unit>{alternation('GROUPING_UNITS')}) (?P<num>\d+[A-Z]?)")
_GROUPING_IN_LABEL = re.compile(rf"\b(?:{alternation('GROUPING_UNITS')})\s*\d", re.IGNORECASE)
# "paragraphs 2 and 3 of this Article" in "Article 306(4)", an article held paragraph by paragraph
_PARAGRAPH_UNITS = {"paragraph", "paragraphs"}
_ARTICLE_PARAGRAPH = re.compile(r"Article\s+\d+\w*\(\d+\)")


def section_labels(reference: DetectedReference, limit: int = MAX_SECTIONS_PER_REFERENCE) -> list[str]:
    """The section labels a reference names ("§ 78", "Art. 3", "3.2.4(a)", "Part 19"), at most `limit`."""
    labels = []
    for section in reference.sections[:limit]:
        grouping = _GROUPING_UNITS.get(reference.unit) if reference.type == "section" else None
        if reference.type == "legal_section" and reference.unit in ("§", "Art."):
            labels.append(normalise_section(reference.unit, section))
        elif reference.unit in _NUMBERED_APART:
            labels.append(f"{_NUMBERED_APART[reference.unit]} {section}")
        elif grouping and re.fullmatch(r"\d+[A-Z]?", section):
            labels.append(f"{grouping} {section}")
        else:
            labels.append(section)
    return labels


_CHAPTER_ITEM = re.compile(r"(?P<num>\d{1,3}[A-Z]?)(?P<items>(?:\(\w{1,5}\))+)")


def cited_blocks(reference: DetectedReference) -> list[list[str]]:
    """The heading blocks a reference names (`sections.heading_blocks`): "Table 1" -> [["table1"]], "Chapter 2
    (i) (d)" -> [["chapter2", "(i)", "(d)"]]; none for a reference of another kind."""
    out = []
    for section in reference.sections[:MAX_SECTIONS_PER_REFERENCE]:
        if reference.unit in ("table", "tables") and re.fullmatch(r"\d{1,3}[A-Z]?", section):
            out.append([f"table{section.lower()}"])
        elif reference.unit in ("chapter", "chapters") and (item := _CHAPTER_ITEM.fullmatch(section)):
            out.append([f"chapter{item.group('num').lower()}",
                        *(f"({label})" for label in re.findall(r"\((\w{1,5})\)", item.group("items")))])
    return out


# units a reference names whole, as a block of the heading paths: "Chapters 4 to 6", "Appendix 1", and a Part's
# bare number ("Matching Adjustment 5": the rulebook numbers its rules 5.1, 5.2 … under "Chapter 5")
_WHOLE_BLOCK_UNITS = {"chapter", "appendix", "annex"}


def whole_blocks(reference: DetectedReference) -> list[list[str]]:
    """The chapters, appendices and annexes a reference names whole, as heading blocks: "Chapters 4 to 6" ->
    [["chapter4"], ["chapter5"], ["chapter6"]]; a bare whole number of a named document ("Matching Adjustment
    5") is its chapter. Read only where the document keys no section by that label."""
    unit = unit_kind(reference.unit)
    if unit == "rule" and reference.book:
        unit = "chapter"
    if unit not in _WHOLE_BLOCK_UNITS:
        return []
    return [[f"{unit}{section.lower()}"] for section in reference.sections[:MAX_SECTIONS_PER_REFERENCE]
            if re.fullmatch(r"\d{1,3}[A-Z]?|[IVX]{1,5}", section)]


def lookup_section(kb: KnowledgeBase, doc: str, label: str, collection: str | None = None) -> list[VectorResult]:
    """`kb.section_lookup`, where "Chapter 3" / "Part 2" falls back to a plain numbered heading ("3.", the
    chapters of a rulebook), never to a section inside some part ("Part 3.19." for "Part 19"). A schedule
    is never a plain numbered heading ("Schedule 1" is not section 1)."""
    hits = kb.section_lookup(doc, label, collection)
    grouping = _GROUPING_LABEL.fullmatch(label)
    if hits or not grouping or grouping.group("unit") == "Schedule":
        return hits
    return [hit for hit in kb.section_lookup(doc, grouping.group("num"), collection)
            if not _GROUPING_IN_LABEL.search(hit.section or "")]


class ReferenceResolver:
    """Turns a DetectedReference into the chunks it points to."""

    def __init__(self, kb: KnowledgeBase, scoped_k: int = 3, broad_k: int = 3):
        self.kb = kb
        self.scoped_k = scoped_k
        self.broad_k = broad_k
        # one Chroma get per collection per label, once per resolver: a follower (and its resolver) lives
        # for one task or one evaluation run, while the index does not change
        self._holders: dict[tuple[str, str | None], dict[str, list[VectorResult]]] = {}

    def target_document(self, reference: DetectedReference) -> tuple[str | None, str | None]:
        """The document a reference points into: its book through the registry, else the containing doc."""
        registry = self.kb.registry
        if reference.book and not reference.book_exact:
            return registry.resolve_document_name(reference.book)
        if reference.book:  # a title read only as a document's whole name
            doc, collection = registry.exact_document_name(reference.book)
            if doc or reference.document_context in (None, reference.book):
                return doc, collection
            # words that name no document before "Chapter 2": the citing document's chapter
        if reference.document_context:
            doc, collection = registry.resolve_document_name(reference.document_context)
            if doc:
                return doc, collection
            if reference.document_context in registry.filenames():
                return reference.document_context, registry.collection_of(reference.document_context)
        return None, None

    def resolve(self, reference: DetectedReference, query_hint: str = "", citing_section: str = "") -> Resolution:
        """`citing_section`, the section the reference stands in, places a bare "paragraph (1)"."""
        if reference.type == "external":
            return Resolution("external")
        if reference.type in ("legal_section", "section"):
            sibling = self._sibling(reference, citing_section)
            if sibling is not None:
                return sibling
            return self._resolve_section(reference, query_hint)
        if reference.type in ("document", "document_mention"):
            return self._resolve_document(reference, query_hint)
        return self._resolve_citation(reference, query_hint)

    def _resolve_section(self, reference: DetectedReference, query_hint: str) -> Resolution:
        if reference.unit == NAMED_RULE_UNIT:
            return self._by_shown_name(reference)
        doc, collection = self.target_document(reference)
        if doc:
            # a heading block before the section index: "Chapter 2 (d)" read as a section key would be rule 2
            exact = (self._block_beginnings(doc, collection, cited_blocks(reference))
                     or self._section_index(reference, doc, collection)
                     or self._block_beginnings(doc, collection, whole_blocks(reference)))
            if exact is not None:
                return exact
            if reference.unit in CANDIDATE_UNITS and not reference.book:
                return Resolution("none", doc=doc, collection=collection)
            joined = self._in_joined_book(reference)
            if joined is not None:
                return joined
            elsewhere = (self._unique_elsewhere(reference, doc, collection)
                         or self._in_family(reference, doc, collection))
            if elsewhere is not None:
                return elsewhere
            if self._numbering_known(reference, doc, collection):
                keys = {section_key(label) for label in section_labels(reference)}
                gone = keys and keys <= self.kb.repealed_sections(doc, collection)
                return Resolution("section_repealed" if gone else "section_not_found", doc=doc, collection=collection)
            query = f"{reference.original_text} {query_hint}".strip()
            scoped = self.kb.search(query, k=self.scoped_k, doc=doc, collection=collection)
            if scoped:
                return Resolution("scoped", scoped, doc, collection, scoped[0].score)
        if reference.book and not doc:
            family = self._in_family(reference, None, collection)
            if family is not None:
                return family
            logger.debug("Book %r of %r is not in the registry", reference.book, reference.original_text)
            return Resolution("not_in_collection")  # a law we do not hold: searching would only add noise
        broad = self.kb.search(f"{reference.original_text} {query_hint}".strip(), k=self.broad_k + 2)
        broad = [hit for hit in broad if names_section(hit, reference)][: self.broad_k]
        return Resolution("broad", broad, score=broad[0].score) if broad else Resolution("none")

    def _sibling(self, reference: DetectedReference, citing_section: str) -> Resolution | None:
        """A bare sub-paragraph ("Paragraph (1) does not apply", "sub paragraph (2)(b)") is a paragraph of
        the citing rule; a bare letter ("paragraphs (a) and (b)") is an item of the citing passage itself. In
        an article held paragraph by paragraph ("Article 306(4)"), a paragraph named by its number alone
        ("paragraphs 2 and 3 of this Article") is the article's paragraph."""
        if reference.book or not citing_section or not reference.sections:
            return None
        sections = reference.sections[:MAX_SECTIONS_PER_REFERENCE]
        if reference.unit in _PARAGRAPH_UNITS and _ARTICLE_PARAGRAPH.match(citing_section) and \
                all(section.isdigit() for section in sections):
            sections = [f"({section})" for section in sections]
        if not all(section.startswith("(") for section in sections):
            return None
        doc = reference.document_context
        if not doc or doc not in self.kb.registry.filenames():
            return None
        rule = parent_keys(section_key(citing_section))[-1]  # "17.1.4(2)" -> "17.1.4"
        labels = [f"{rule}{section}" if re.match(r"\(\d", section) else citing_section for section in sections]
        hits = [hit for label in dict.fromkeys(labels) for hit in self.kb.section_lookup(doc, label)]
        return Resolution("section_index", hits, doc, self.kb.registry.collection_of(doc), 1.0) if hits else None

    def _by_shown_name(self, reference: DetectedReference) -> Resolution:
        """Rules cited by the name a part gives them ("Fundamental Rules 3 and 5"): the passages that open with
        that name ("Fundamental Rule 3: A firm must …"), in the citing document, else in the one document of
        the collection that shows it. Words the rule's own name lacks ("PRA Fundamental Rule 7") are dropped
        from the front. Nothing is searched for a name no passage shows: its number is no section number."""
        citing = reference.document_context
        collection = self.kb.registry.collection_of(citing) if citing else None
        hits: list[VectorResult] = []
        for label in section_labels(reference):
            for name in name_variants(label):
                holders = self._showing(name, collection)
                found = holders.get(citing or "") or (next(iter(holders.values())) if len(holders) == 1 else [])
                if found:
                    hits += found
                    break
        if not hits:
            return Resolution("none", doc=citing, collection=collection)
        return Resolution("section_index", hits, hits[0].doc, hits[0].collection or collection, 1.0)

    def shown_name(self, name: str) -> str:
        """The form of a rule's cited name that a passage of the knowledge base shows, as `_by_shown_name` drops
        words from its front ("PRA Fundamental Rule 7" -> "Fundamental Rule 7"); the name as cited when no
        passage shows any form of it."""
        return next((variant for variant in name_variants(name) if self._showing(variant, None)), name)

    def _showing(self, name: str, collection: str | None) -> dict[str, list[VectorResult]]:
        key = (f"shown: {name}", collection)
        if key not in self._holders:
            self._holders[key] = self.kb.documents_showing(name, collection)
        return self._holders[key]

    def _numbering_known(self, reference: DetectedReference, doc: str, collection: str | None) -> bool:
        """The document numbers its sections the way the reference does, and its index knows that numbering
        (`MIN_NUMBERED_SECTIONS`)."""
        kinds = {numbering_kind(section_key(label)) for label in section_labels(reference)}
        return bool(kinds) and all(self.kb.numbered_sections(doc, kind, collection) >= MIN_NUMBERED_SECTIONS
                                   for kind in kinds)

    def _in_joined_book(self, reference: DetectedReference) -> Resolution | None:
        """The section in the book of the reference this one is joined to by "in Verbindung mit"."""
        if reference.book or not reference.joined_book:
            return None
        doc, collection = self.kb.registry.resolve_document_name(reference.joined_book)
        return self._section_index(reference, doc, collection) if doc else None

    def _section_index(self, reference: DetectedReference, doc: str, collection: str | None) -> Resolution | None:
        """Every named section of `doc`, exactly, or None when it has none of them."""
        hits = [hit for label in section_labels(reference) for hit in lookup_section(self.kb, doc, label, collection)]
        return Resolution("section_index", hits, doc, collection, 1.0) if hits else None

    def _block_beginnings(self, doc: str, collection: str | None, named: list[list[str]]) -> Resolution | None:
        """The `named` blocks the document's heading paths show ("Table 1" in "Chapter 1 Introduction > Table 1:
        …", "Chapter 2 (vi)" in "2.72 (Chapter 2 … > (vi) Fire drills)", a whole chapter or appendix), each by its
        first passage: the reference points a reader to where the block begins, not to each of its many passages
        (decision 030); of several, following takes the beginning closest to the question. Held already, that
        passage gains the citation. None when the document shows none of them."""
        beginnings = [found[0] for blocks in named if (found := self.kb.block_lookup(doc, blocks, collection))]
        return Resolution("section_index", beginnings, doc, collection, 1.0, beginnings=True) if beginnings else None

    def _unique_elsewhere(self, reference: DetectedReference, doc: str, collection: str | None) -> Resolution | None:
        """A book-less reference its own document lacks ("Rule 11.7.1" in a guidance note on the rulebook):
        the one other document of the collection that has every named section, if exactly one has."""
        if reference.book or len(reference.sections) > MAX_ELSEWHERE_SECTIONS:
            return None
        return self._sole_holder(reference, collection, lambda holder: holder != doc)

    def _in_family(self, reference: DetectedReference, doc: str | None,
                   collection: str | None) -> Resolution | None:
        """A book that names a family of documents ("Article 449 of the CRR", where the parts "Disclosure (CRR)",
        "Trading Book (CRR)", … each carry the tag), when the registry names no document for it or one that
        lacks the section: the one document of the family that has every named section."""
        family = self.kb.registry.tagged(reference.book) if reference.book else set()
        if len(family) < 2:
            return None
        return self._sole_holder(reference, collection, lambda holder: holder in family and holder != doc)

    def _sole_holder(self, reference: DetectedReference, collection: str | None,
                     allowed: Callable[[str], bool]) -> Resolution | None:
        """The one `allowed` document that has every section the reference names, if exactly one has."""
        holders: set[str] | None = None
        hits: dict[str, list[VectorResult]] = {}
        for label in section_labels(reference):
            key = (label, collection)
            if key not in self._holders:
                self._holders[key] = self.kb.documents_with_section(label, collection)
            by_doc = {holder: chunks for holder, chunks in self._holders[key].items() if allowed(holder)}
            holders = set(by_doc) if holders is None else holders & set(by_doc)
            for holder, chunks in by_doc.items():
                hits.setdefault(holder, []).extend(chunks)
        if not holders or len(holders) != 1:
            return None
        (holder,) = holders
        return Resolution("section_index", hits[holder], holder,
                          self.kb.registry.collection_of(holder) or collection, 1.0)

    def _resolve_document(self, reference: DetectedReference, query_hint: str) -> Resolution:
        doc, collection = self.kb.registry.resolve_document_name(reference.book or reference.target)
        if not doc:
            # a named standard or directive we do not hold: the passages that merely name it too are not it
            return Resolution("not_in_collection")
        scoped = self.kb.search(query_hint or reference.target, k=self.scoped_k, doc=doc, collection=collection)
        return Resolution("scoped", scoped, doc, collection, scoped[0].score) if scoped else Resolution("none")

    def _resolve_citation(self, reference: DetectedReference, query_hint: str) -> Resolution:
        """[12] / [Mueller2022]: find the bibliography entry, then search for the work it names."""
        entry = ""
        doc = reference.document_context
        if doc and doc in self.kb.registry.filenames():
            for hit in self.kb.section_lookup(doc, BIBLIOGRAPHY_LABEL):
                for line in hit.text.splitlines():
                    if line.strip().startswith(reference.original_text):
                        entry = line.strip()[len(reference.original_text) :].strip()
                        break
        if not entry:
            return Resolution("none")  # the bibliography does not name the work: nothing to search for
        results = [hit for hit in self.kb.search(entry, k=self.broad_k + 2)
                   if hit.doc != doc and names_work(hit, entry)][: self.broad_k]
        if not results:
            return Resolution("none")
        return Resolution("broad", results, score=results[0].score)


def _flat(text: str) -> str:
    return " ".join(text.split()).lower()


def names_section(hit: VectorResult, reference: DetectedReference) -> bool:
    """Whether a passage is, or names, a section the reference cites: its label ("§ 12", "3.2.4") as the
    passage's section, or the label or its number ("§§ 11 und 12") in its text."""
    text = _flat(hit.text)
    names = [_flat(label) for label in section_labels(reference)]
    names += [_flat(section) for section in reference.sections[:MAX_SECTIONS_PER_REFERENCE]]
    if any(section_key(hit.section or "") == section_key(label) for label in section_labels(reference)):
        return True
    # a name stands alone: "§ 12" is not "§ 123", "3.2.4" not "3.2.4.1"
    return any(re.search(rf"(?<![\w.]){re.escape(name)}(?![\w.]*\d)", text) for name in dict.fromkeys(names) if name)


_TITLE_WORD = re.compile(r"[^\W\d_]{5,}")


def names_work(hit: VectorResult, entry: str) -> bool:
    """Whether a passage names the work a bibliography entry describes: most of the entry's longer words
    (its title and authors) stand in the passage or its document's name."""
    words = {word.lower() for word in _TITLE_WORD.findall(entry)}
    if not words:
        return False
    text = _flat(f"{hit.doc} {hit.section or ''} {hit.text}")
    return sum(1 for word in words if word in text) * 2 >= len(words)


def window_around(text: str, start: int, end: int, chars: int) -> str:
    """The ±`chars` characters around a span, cut at word boundaries."""
    left = max(0, start - chars)
    right = min(len(text), end + chars)
    window = text[left:right]
    if left > 0:
        window = re.sub(r"^\S*\s", "", window, count=1)
    if right < len(text):
        window = re.sub(r"\s\S*$", "", window, count=1)
    return window
