"""The German statute citation grammar: citation *chains* rather than single patterns.

    § 78 Absatz 1 Satz 2 des Strahlenschutzgesetzes      -> StrlSchG, ["78"]
    §§ 8, 9 und 12 StrlSchV                               -> StrlSchV, ["8", "9", "12"]
    §§ 184 bis 187 SGG                                    -> SGG, ["184", "185", "186", "187"]
    § 4 Nr. 9 und 10, § 5 UWG                             -> UWG, ["4", "5"]
    Anlage 4 Teil B                                       -> (containing document), ["Anlage 4"]

A chain without a book points into the document the text comes from (`doc`). `legal_references` is the
entry; English sections are read by citations_en.py, the other kinds of reference (EU acts named without a
chain, standards, citations, URLs) by rabbithole/references.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rabbithole_lab.language.section_units import expand_range, normal_unit
from rabbithole_lab.records import DetectedReference

# ---- building blocks ---------------------------------------------------------------------
_UNIT = re.compile(
    r"(?P<unit>§§?|Art(?:ikeln?|\.|(?=\s+\d))|Artt\.|Anlagen?|Anhang|Anh\.)\s*(?=\d|[IVX]+\b)"
)
# a letter suffix ("§ 9a") is not the start of an abbreviation ("§ 5 i.V.m.", "§ 3 a.F.")
_NUM = re.compile(r"(?P<num>\d{1,4}(?:\s?[a-z](?![a-zäöüß]|\.\s?[A-Za-z]\.))?|[IVX]{1,6}\b)(?!\d|[.,]\d|/)")
_SUBUNIT = (
    r"(?:Abs(?:atz|\.)?|Absätze|S(?:atz|ätze|\.|(?=\s\d))|Nr(?:n)?\.?|Nummer(?:n)?|Buchst(?:abe|aben|\.)?|lit\.|"
    r"Halbs(?:atz|\.)|Hs\.|Alt(?:ernative|\.)|Var(?:iante|\.)|UAbs\.|Unterabs(?:atz|\.)|Teil|Tabelle|Spalte|Zeile|"
    r"Spiegelstrich|Ziff(?:er|\.))"
)
_SUBVAL = r"(?:\d{1,4}[a-z]?|[a-z]{1,2}\)?|[IVX]{1,5}|[A-Z](?![a-zA-Z]))"
_SUBPART = re.compile(
    rf"\s*(?:(?:,|und|oder|sowie)\s+)?{_SUBUNIT}\s*{_SUBVAL}"
    # list items: "Abs. 1 und 3", "Nr. 7,10", "Absatz 1, 1a, 2"; after ", " only short values continue
    # the list, so "Nr. 7,10, 711 ZPO" keeps 711 as a section of its own
    rf"(?:(?:,(?=\S)|\s*,\s*(?=(?:\d{{1,2}}[a-z]?|[a-z]\)?)(?![\d\w]))|\s+(?:und|oder|bis|sowie|u\.)\s+){_SUBVAL}"
    rf"(?!\s*§)(?=[\s,;.)\]]|$))*"
)
# "§ 9a Absatz 3 Satz 2 zweiter Halbsatz des Atomgesetzes": an ordinal sub-part before the book
_ORDINAL_SUBPART = re.compile(
    r"\s*(?:(?:,|und|oder)\s+)?(?:erste[rns]?|zweite[rns]?|dritte[rns]?|vierte[rns]?|letzte[rns]?)\s+"
    r"(?:Halbsatz|Halbs\.|Satzteil|Teilsatz|Alternative|Alt\.|Variante|Spiegelstrich)(?![\wäöüß])"
)
_FF = re.compile(r"\s*(?:ff\.?|f\.)(?![a-zäöü])")
# ", und" before the bare comma: the first alternative that matches wins
_SECTION_CONNECTOR = re.compile(r"(?:\s*,\s*(?:und|oder|sowie)\s+|\s*,\s*|\s+(?:und|oder|sowie)\s+)")
_RANGE_CONNECTOR = re.compile(r"\s*(?:bis|-|–)\s*")
# "(5) Dauert …": a paragraph's number where it opens, at a sentence's start ("(2a) (weggefallen) (3) Die …" opens
# two); an inline "(2)" after a citation is none
PARAGRAPH_MARK = re.compile(r"(?:^|(?<=[.;:)]\s)|(?<=\n))\((\d{1,2}[a-z]?)\)\s*(?=[(\w§])")
# the paragraphs (Absätze) among a section's sub-parts: "Absatz 5", "Abs. 1 und 3", "Absätze 3 bis 5"
_PARAGRAPHS = re.compile(
    r"(?:Absatz|Absätze|Abs\.?)\s*(?P<values>\d{1,2}[a-z]?(?:\s*(?:,|und|oder|sowie|bis|-|–)\s*\d{1,2}[a-z]?(?![\d.]))*)")

_ROMAN = r"(?:XIV|XIII|XII|XI|X|IX|VIII|VII|VI|V|IV|III|II|I)"
_ORDINALS = (
    r"(?:Ersten|Erstes|Zweiten|Zweites|Dritten|Drittes|Vierten|Viertes|Fünften|Fünftes|Sechsten|Sechstes|"
    r"Siebten|Siebtes|Achten|Achtes|Neunten|Neuntes|Zehnten|Zehntes|Elften|Elftes|Zwölften|Zwölftes|"
    r"Vierzehnten|Vierzehntes)"
)
_BOOK_ABBREVIATION = re.compile(
    rf"(?P<book>SGB\s?(?:{_ROMAN}|\d{{1,2}})(?![A-Za-z])|"
    r"(?:[A-ZÄÖÜ][A-Za-zÄÖÜäöüß]*[A-ZÄÖÜ][A-Za-zÄÖÜäöüß0-9]*|[A-ZÄÖÜ]{2,})(?:\s(?:19|20)\d\d(?!\d))?"
    r"(?:\s(?:a\.\s?F\.|n\.\s?F\.))?)(?![\wÄÖÜäöüß])"
)
_LONG_NAME_SUFFIX = (
    r"(?:gesetz(?:es|s)?|gesetzbuch(?:es|s)?|ordnung|verordnung|richtlinie|vertrag(?:es|s)?|"
    r"abkommen(?:s)?|übereinkommen(?:s)?|statut(?:s)?|satzung)"
)
_ACT_TYPE_WORD = (
    r"(?:Gesetz(?:es|s)?|Gesetzbuch(?:es|s)?|Verordnung|Richtlinie|Vertrag(?:es|s)?|Abkommen(?:s)?|"
    r"Übereinkommen(?:s)?|Statut(?:s)?|Satzung)"
)
_GENITIVE_BOOK = re.compile(
    rf"\s*(?P<article>des|der|dem|den|im|zum|zur)\s+"
    rf"(?P<book>{_ORDINALS}\s+Buch(?:es|s)?\s+(?:des\s+)?Sozialgesetzbuch(?:es|s)?|"
    rf"(?:[A-ZÄÖÜ][\wäöüß-]*\s+){{1,3}}{_ACT_TYPE_WORD}|"
    rf"(?:[A-ZÄÖÜ][\wäöüß-]*\s+){{0,3}}[A-ZÄÖÜ][\wäöüß-]*(?:{_LONG_NAME_SUFFIX}|-{_ACT_TYPE_WORD})"
    rf"(?:\s+\((?P<abbr>[A-Z][\w-]{{1,15}})\))?)(?![\wäöüß])"
)
_PLAIN_LONG_BOOK = re.compile(
    rf"\s*(?P<book>{_ORDINALS}\s+Buch(?:es|s)?\s+(?:des\s+)?Sozialgesetzbuch(?:es|s)?|"
    rf"Sozialgesetzbuch(?:es|s)?\s+\(SGB\)\s+{_ROMAN}|"
    rf"[A-ZÄÖÜ][\wäöüß]*(?:-[A-ZÄÖÜ][\wäöüß]*)?{_LONG_NAME_SUFFIX}(?:\s(?:19|20)\d\d(?!\d))?)(?![\wäöüß])"
)
_CHAIN_CONTINUES = re.compile(
    rf"\d{{1,4}}(?:\s?[a-z](?![a-zäöüß]))?(?=\s*(?:[,;.)]|und\b|oder\b|bis\b|sowie\b|ff|f\.|$|{_SUBUNIT}\b|"
    r"des\b|der\b|dieses\b|dieser\b|[A-ZÄÖÜ][A-Za-zÄÖÜäöüß]*[A-Z]))"
)
# "nach § 117,\n2. bei der Notfallreaktion": a list item on the next line, not a second section
_ENUMERATION_ITEM = re.compile(r"\d{1,4}[a-z]?\.\s")
_SELF_BOOK = re.compile(r"\s*(?P<book>dieses\s+Gesetzes|dieser\s+Verordnung|dieser\s+Richtlinie|dieses\s+Abkommens)\b")
EU_ACT = re.compile(
    r"(?P<text>(?:(?:Durchführungs|Delegierte[rn]?\s)?(?:Richtlinie|Verordnung|Beschluss|Entscheidung)|"
    r"(?:Implementing\s|Delegated\s)?(?:Directive|Regulation|Decision))"
    r"\s+(?:\((?:EU|EG|EWG|Euratom)\)\s+)?(?:Nr\.\s*|No\.?\s*)?"
    r"(?P<number>\d{1,4}/\d{1,4}(?:/(?:EU|EG|EWG|EGKS|Euratom|EC|EEC))?))"
)
_NOT_BOOKS = {
    "BGH", "BVerfG", "BVerwG", "BAG", "BSG", "BFH", "OLG", "LG", "VG", "OVG", "VGH", "LSG", "SG", "AG",
    "EuGH", "NJW", "DB", "BB", "ZIP", "WRP", "GRUR", "BStBl", "BGBl", "BT", "BR", "Drucks", "Rn", "Urt",
    "Abs", "Nr", "Satz", "EU", "EG", "EWG", "DM", "EUR", "II", "III", "IV", "VI", "VII", "VIII", "IX", "XI",
}

_BARE_LABEL = re.compile(r"(?:§§?|Art\.|Artikel|Anlage)\s*\d{1,4}\s?[a-z]?")

# "in Verbindung mit", also ", jeweils auch in Verbindung mit" (UVPG Anlage 5)
_IN_CONNECTION_WITH = re.compile(
    r"\s*(?:,\s*)?(?:jeweils\s+)?(?:auch\s+)?(?:in\s+Verbindung\s+mit|i\.\s?V\.\s?m\.?)\s*")
# "Anlage X der Strahlenschutzverordnung in der bis zum 31. Dezember 2018 geltenden Fassung": an earlier version,
# whose sections need not be today's
_PAST_VERSION = re.compile(
    r"\s*,?\s*(?P<version>in\s+der\s+(?:bis\s+(?:zum|einschließlich)|vor\s+dem)\s+\d{1,2}\.\s*[A-Za-zäÄ]+\s+\d{4}\s+"
    r"(?:geltenden|gültigen|anzuwendenden)\s+Fassung)")
_OLD_VERSION_MARK = re.compile(r"\sa\.\s?F\.$")  # "§ 3 UWG a. F.": the old version of the law
_CUT_BEFORE_THE_BOOK = re.compile(r"\s+(?:des|der|dem|den|zum|zur)\s*")
# "§ 55 Absatz 1 … und die §§ 56 bis 58 des Bundes-Immissionsschutzgesetzes", "§ 81 Satz 3, den §§ 184 …"
_ENUMERATION_WITH_ARTICLE = re.compile(r"\s*(?:,\s*(?:und|oder|sowie)?|und|oder|sowie)\s+(?:die|den|der|dem)\s+")


@dataclass
class _Chain:
    unit: str
    start: int
    end: int
    sections: list[str] = field(default_factory=list)
    book: str | None = None
    self_book: bool = False
    paragraphs: dict[str, list[str]] = field(default_factory=dict)  # section -> the Absätze it cites


def _clean_number(number: str) -> str:
    return re.sub(r"\s+", "", number)


_TITLED_ACT = re.compile(
    r"\s*(?:des|der)\s+(?:Gesetzes|Verordnung)\s+(?:über|zur|zum|zu|für|vom)\s+[^()§;]{3,160}?"
    r"\s+\((?P<abbr>[A-Z][\wÄÖÜäöü-]{1,15})\)"
)
# "des Gesetzes über die Umweltverträglichkeitsprüfung": the title is the book. A German act title is a noun
# phrase: the preposition, an optional article and adjectives, the head noun, then genitive attributes
# ("über die friedliche Verwendung der Kernenergie"); the name ends there ("… mit den Vorgaben" is the sentence)
_TITLE_NOUN = r"(?:[a-zäöüß][\wäöüß-]*\s+){0,2}[A-ZÄÖÜ][\wäöüß-]*"
_TITLED_ACT_NAME = re.compile(
    r"\s*(?:des|der)\s+(?P<book>(?:Gesetzes|Verordnung)\s+(?:über|zur|zum|für)\s+"
    rf"(?:(?:die|den|das|der|dem|des)\s+)?{_TITLE_NOUN}(?:\s+(?:des|der)\s+{_TITLE_NOUN})*)"
    r"(?=[\s,;.()§]|$)"
)
# An act named only by type and date ("Artikel 237 der Verordnung vom 19. Juni 2020", "Art. 1 G v. 10.8.2021",
# the amendment notes of German statutes): a document of its own, never the containing one
_DATED_ACT = re.compile(
    r"(?:\s*(?:des|der)\s+(?P<named>(?:Gesetzes|Verordnung|Bekanntmachung)\s+vom\s+\d{1,2}\.\s*[A-Za-zä]+\s+\d{4})"
    r"|\s+(?P<noted>(?:G|V|Bek\.)\s+v\.\s*\d{1,2}\.\d{1,2}\.\d{4}))"
)
_ARTICLE_ABBREVIATION = re.compile(r"\s*(?:des|der|dem|den)\s+(?=[A-ZÄÖÜ][A-Za-zÄÖÜäöüß]*[A-Z])")


def paragraph_marks(text: str) -> list[str]:
    """The numbers of the paragraphs a statute's text opens ("(5) Dauert …" opens 5), in reading order."""
    return PARAGRAPH_MARK.findall(text)


def opens_paragraph(text: str, paragraphs: list[str] | None) -> bool:
    """Whether `text` opens one of `paragraphs` (a chunk of "§ 9g" holding "(5) …" for "§ 9g Absatz 5")."""
    return bool(paragraphs) and any(mark in paragraphs for mark in paragraph_marks(text))


def cited_paragraphs(subparts: str) -> list[str]:
    """The paragraph numbers a section's sub-parts name ("Absatz 3 bis 5 Satz 2" -> 3, 4, 5); none: the whole
    section. Only "Absatz" counts: a "Satz" or "Nummer" narrows inside the paragraph, which is quoted whole."""
    numbers: list[str] = []
    for match in _PARAGRAPHS.finditer(subparts):
        values = re.split(r"\s*(?:,|und|oder|sowie)\s*", match.group("values"))
        for value in values:
            ends = re.split(r"\s*(?:bis|-|–)\s*", value)
            expanded = expand_range(ends[0], ends[-1]) if len(ends) == 2 else ends
            numbers.extend(number for number in expanded if number and number not in numbers)
    return numbers


def _book_at(text: str, position: int) -> tuple[str | None, bool, int]:
    """(book, is_self_reference, end) for a book written right after a chain, else (None, False, position)."""
    self_ref = _SELF_BOOK.match(text, position)
    if self_ref:
        return self_ref.group("book"), True, self_ref.end()
    titled = _TITLED_ACT.match(text, position)
    if titled:
        return titled.group("abbr"), False, titled.end()
    dated = _DATED_ACT.match(text, position)
    if dated:
        return re.sub(r"\s+", " ", dated.group("named") or dated.group("noted")), False, dated.end()
    titled_name = _TITLED_ACT_NAME.match(text, position)
    if titled_name:
        return re.sub(r"\s+", " ", titled_name.group("book")).strip(), False, titled_name.end("book")
    article = _ARTICLE_ABBREVIATION.match(text, position)
    if article:
        abbreviation = _BOOK_ABBREVIATION.match(text, article.end())
        if abbreviation and abbreviation.group("book").split()[0] not in _NOT_BOOKS:
            return re.sub(r"\s+", " ", abbreviation.group("book")), False, abbreviation.end()
    eu_act = re.match(r"\s*(?:der|des)?\s*", text[position:])
    act = EU_ACT.match(text, position + eu_act.end()) if eu_act else None
    if act:  # "der Verordnung (EU) 2016/679": the act's number names it, "(EU)" is no abbreviation
        return re.sub(r"\s+", " ", act.group("text")), False, act.end()
    genitive = _GENITIVE_BOOK.match(text, position)
    if genitive:
        book, end, abbreviation = genitive.group("book"), genitive.end(), genitive.group("abbr")
        if abbreviation and sum(char.isupper() for char in abbreviation) >= 2:
            book = abbreviation  # "des Strahlenschutzgesetzes (StrlSchG)"
        elif abbreviation:  # "des Atomgesetzes (Endlager)": a term the text defines, not the law's abbreviation
            book = book[: book.rindex("(")].rstrip()
            end = genitive.start("book") + len(book)
        return re.sub(r"\s+", " ", book), False, end
    long_book = _PLAIN_LONG_BOOK.match(text, position)
    if long_book:
        return re.sub(r"\s+", " ", long_book.group("book")), False, long_book.end()
    gap = re.match(r"[ \t\u00a0]*\n?[ \t\u00a0]*", text[position:])
    abbreviation = _BOOK_ABBREVIATION.match(text, position + (gap.end() if gap else 0))
    if abbreviation and (gap is None or gap.end() > 0):
        book = abbreviation.group("book")
        if book.split()[0] not in _NOT_BOOKS:
            return re.sub(r"\s+", " ", book), False, abbreviation.end()
    return None, False, position


def _after_subparts(text: str, position: int) -> int:
    """Where the sub-parts after a section number end ("Absatz 3 Satz 2 zweiter Halbsatz")."""
    while True:
        sub = _SUBPART.match(text, position) or _ORDINAL_SUBPART.match(text, position)
        if not sub or sub.end() == position:
            return position
        position = sub.end()


def _parse_chain(text: str, match: re.Match) -> _Chain | None:
    """Parse one citation chain starting at a § / Art. / Anlage token."""
    if "\n" in match.group(0) and (match.group("unit") == "Anlagen" or _ENUMERATION_ITEM.match(text, match.end())):
        return None  # "Genehmigung von Anlagen\n2. gewährleistet ist": a plural noun before a list item
    chain = _Chain(unit=normal_unit(match.group("unit")), start=match.start(), end=match.end())
    position = match.end()
    expecting_unit = False
    while True:
        if expecting_unit:
            unit_match = _UNIT.match(text, position)
            if unit_match:
                position = unit_match.end()
        number = _NUM.match(text, position)
        if not number:
            break
        chain.sections.append(_clean_number(number.group("num")))
        position = chain.end = _after_subparts(text, number.end())
        cited = cited_paragraphs(text[number.end():position])
        if cited:
            chain.paragraphs[chain.sections[-1]] = cited
        ff = _FF.match(text, position)
        if ff:
            position = chain.end = ff.end()
        # "bis 187" -> range
        range_match = _RANGE_CONNECTOR.match(text, position)
        if range_match and range_match.end() > position:
            after = _NUM.match(text, range_match.end())
            if after and re.search(r"bis|-|–", text[position : range_match.end()]):
                first = chain.sections.pop()
                last = _clean_number(after.group("num"))
                chain.sections.extend(expand_range(first, last))
                position = chain.end = _after_subparts(text, after.end())
        connector = _SECTION_CONNECTOR.match(text, position)
        if not connector:
            break
        following = connector.end()
        unit_next = _UNIT.match(text, following)
        if unit_next and normal_unit(unit_next.group("unit")) == chain.unit:
            position = following
            expecting_unit = True
            continue
        # an enumeration's next item: on a new line, or after a single "§" on the same line ("2. Nachweis der
        # Fachkunde nach § 8, 3. Lageplan"); a list of sections is written "§§" ("nach den §§ 8 und 9. Die …")
        if _ENUMERATION_ITEM.match(text, following) and ("\n" in text[position:following] or
                                                          match.group("unit") == "§"):
            break
        if _NUM.match(text, following) and _CHAIN_CONTINUES.match(text, following):
            position = following
            expecting_unit = False
            continue
        break
    if not chain.sections:
        return None
    book, self_book, book_end = _book_at(text, chain.end)
    if book:
        chain.book, chain.self_book, chain.end = book, self_book, book_end
    else:
        # leading book: "HGB § 59", "ZPO §§ 91 ff."
        before = text[max(0, chain.start - 20) : chain.start]
        leading = re.search(r"(?P<book>\b[A-ZÄÖÜ][A-Za-zÄÖÜäöü]*[A-Z][A-Za-z]*)\s+$", before)
        if leading and leading.group("book") not in _NOT_BOOKS:
            chain.book = leading.group("book")
            chain.start = chain.start - (len(before) - leading.start())
    return chain


def _is_a_heading(text: str, chain: _Chain) -> bool:
    """A bare book-less label alone on its line ("\n\n§ 185\n") heads a quoted section; it cites nothing.
    A wrapped citation can stand alone on a line too, but carries sub-parts ("\n§ 66 Absatz 6 Satz 1\n")."""
    line_start = text.rfind("\n", 0, chain.start) + 1
    line_end = text.find("\n", chain.end)
    line = text[line_start:] if line_end == -1 else text[line_start:line_end]
    return chain.book is None and _BARE_LABEL.fullmatch(line.strip()) is not None


def _cites_a_statute(text: str, chain: _Chain) -> bool:
    if _is_a_heading(text, chain):
        return False
    # "… nach § 3a Absatz 2 des" at the end of a chunk: the next chunk holds it whole
    return not (chain.book is None and _CUT_BEFORE_THE_BOOK.fullmatch(text, chain.end))


def _share_books_across_enumerations(text: str, chains: list[_Chain]) -> None:
    """A book-less chain followed by "und die §§ … des X" or ", den §§ … des X" cites X too: the chain
    parser stops at the article, the law named at the end covers the whole enumeration."""
    for index in range(len(chains) - 2, -1, -1):
        earlier, later = chains[index], chains[index + 1]
        if earlier.book is None and later.book and not later.self_book and earlier.unit == later.unit and \
                _ENUMERATION_WITH_ARTICLE.fullmatch(text, earlier.end, later.start):
            earlier.book = later.book


def _books_joined_by_in_connection_with(text: str, chains: list[_Chain]) -> list[str | None]:
    """For each chain, the book of the chain it is joined to by "in Verbindung mit" ("§ 21 Abs. 3 in Verbindung
    mit § 54 des Atomgesetzes"), when it has none of its own. Only a fallback: in the corpus's statutes the
    first member is more often the citing law's own section ("§ 179 … in Verbindung mit § 17 … des Atomgesetzes"
    in the StrlSchG) than the named law's."""
    joined: list[str | None] = [None] * len(chains)
    for index in range(len(chains) - 2, -1, -1):
        earlier, later = chains[index], chains[index + 1]
        if earlier.book is None and earlier.unit == later.unit and \
                _IN_CONNECTION_WITH.fullmatch(text, earlier.end, later.start):
            joined[index] = later.book if later.book and not later.self_book else joined[index + 1]
    return joined


def legal_references(text: str, doc: str | None) -> list[DetectedReference]:
    chains: list[_Chain] = []
    position = 0
    while True:
        match = _UNIT.search(text, position)
        if not match:
            break
        chain = _parse_chain(text, match)
        if chain is None:
            position = match.end()
            continue
        position = max(chain.end, match.end())
        if _cites_a_statute(text, chain):
            chains.append(chain)
    _share_books_across_enumerations(text, chains)
    joined_books = _books_joined_by_in_connection_with(text, chains)
    references: list[DetectedReference] = []
    for chain, joined_book in zip(chains, joined_books, strict=True):
        book = None if chain.self_book else chain.book
        if chain.unit in {"Anlage", "Anhang"}:
            sections = [f"{chain.unit} {number}" for number in chain.sections]
        else:
            sections = list(chain.sections)
        paragraphs = {section: chain.paragraphs[number] for section, number in zip(sections, chain.sections,
                                                                                  strict=True)
                      if number in chain.paragraphs}
        context = book or doc
        label = f"{chain.unit} {', '.join(chain.sections)}" if chain.unit in {"§", "Art."} else ", ".join(sections)
        if chain.unit == "§" and len(chain.sections) > 1:
            label = "§§ " + ", ".join(chain.sections)
        target = f"{label} {context}".strip() if context else label
        version = _PAST_VERSION.match(text, chain.end)
        references.append(
            DetectedReference(
                type="legal_section",
                target=target,
                original_text=text[chain.start : chain.end],
                start=chain.start,
                end=chain.end,
                book=book,
                sections=sections,
                unit=chain.unit,
                document_context=context,
                joined_book=joined_book,
                version=(re.sub(r"\s+", " ", version.group("version")) if version
                         else "a. F." if book and _OLD_VERSION_MARK.search(book) else None),
                paragraphs=paragraphs,
                extraction_method="regex",
            )
        )
    return references
