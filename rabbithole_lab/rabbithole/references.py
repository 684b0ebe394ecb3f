"""Reference detection: a German/English citation grammar, the LLM layer and the hybrid of both.

The regex layer parses citation *chains* rather than single patterns:

    § 78 Absatz 1 Satz 2 des Strahlenschutzgesetzes      -> StrlSchG, ["78"]
    §§ 8, 9 und 12 StrlSchV                               -> StrlSchV, ["8", "9", "12"]
    §§ 184 bis 187 SGG                                    -> SGG, ["184", "185", "186", "187"]
    § 4 Nr. 9 und 10, § 5 UWG                             -> UWG, ["4", "5"]
    Anlage 4 Teil B                                       -> (containing document), ["Anlage 4"]
    Rule 3.3.16(1) / section 82 of FSMR / see section 4.2 -> "section" references

plus EU acts, named standards (KTA, DIN/EN/ISO), "ICRP Publication 103", numbered and
author-year citations and URLs. A chain without a book points into the document the
text comes from (`doc`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from rabbithole_lab.kb.sections import normal_unit
from rabbithole_lab.records import DetectedReference
from rabbithole_lab.schemas import ExtractedReferenceList

logger = logging.getLogger(__name__)

MAX_RANGE_EXPANSION = 30

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
_EU_ACT = re.compile(
    r"(?P<text>(?:(?:Durchführungs|Delegierte[rn]?\s)?(?:Richtlinie|Verordnung|Beschluss|Entscheidung)|"
    r"(?:Implementing\s|Delegated\s)?(?:Directive|Regulation|Decision))"
    r"\s+(?:\((?:EU|EG|EWG|Euratom)\)\s+)?(?:Nr\.\s*|No\.?\s*)?"
    r"(?P<number>\d{1,4}/\d{1,4}(?:/(?:EU|EG|EWG|EGKS|Euratom|EC|EEC))?))"
)
_STANDARD = re.compile(
    r"(?P<text>(?:KTA|DIN(?:\s+EN)?(?:\s+ISO)?(?:\s+IEC)?|EN(?:\s+ISO)?|ISO(?:/IEC)?|IEC|VDI|VDE|DGUV(?:\s+Vorschrift)?)"
    r"\s+(?P<number>\d{1,5}(?:[-‑.]\d+)*(?::\d{4})?))(?![\d])"
)
_ICRP = re.compile(r"(?P<text>(?:ICRP|IAEA|IAEO)\s+(?:Publication|Publikation|Veröffentlichung|Pub\.|"
                   r"Safety\s+Standards?\s+Series\s+No\.|GSR\s+Part)\s*(?P<number>\d+[A-Za-z]?))")
_URL = re.compile(r"(?P<text>https?://[^\s<>\"'\]\)]+[^\s<>\"'\]\).,;:!?])")
_NUMBERED_CITATION = re.compile(r"\[(?P<body>\d{1,3}(?:\s*[,–-]\s*\d{1,3})*)\]")
_SHORTFORM_CITATION = re.compile(r"\[(?P<body>[A-Z][A-Za-zÄÖÜäöüß\-]+(?:\s?(?:et\s?al\.?|&\s?[A-Z][a-z]+))?\s?(?:19|20)?\d{2}[a-z]?)\]")
# English section references: "see section 4.2", "Rule 3.3.16(1)", "section 82 of FSMR", "Chapter 3".
_EN_UNIT = (r"(?P<unit>[Ss]ections?|[Ss]ec\.|Rules?|[Pp]aragraphs?|[Cc]hapters?|[Pp]arts?|[Aa]rticles?|"
            r"[Aa]ppendi(?:x|ces)|[Aa]nnex(?:es)?|[Ss]chedules?|[Cc]lauses?)")
_EN_UNIT_WORD = _EN_UNIT.replace("?P<unit>", "?:")
# a bare sub-part "(b)" continues a list ("section 51(3)(b) and (c)"); "(PRU)" after "Rules" is an abbreviation
_EN_SUB = r"\((?:\d{1,3}[a-z]?|[a-z]{1,4}|[A-Z])\)"
_EN_NUM = rf"(?:\d+(?:\.\d+)*\.?(?:\(\w{{1,4}}\))*|{_EN_SUB}(?:{_EN_SUB})*|[A-Z](?:\.\d+)*)"
_EN_REF = re.compile(
    rf"(?P<lead>(?:\b(?:see|cf\.|under|in|of|to|with|by)\s+)?(?:(?P<prefix>[A-Z]{{2,6}})\s+)?)"
    rf"\b{_EN_UNIT}\s+(?P<nums>{_EN_NUM}(?:\s*(?:,|and|or|to|-|–)\s*{_EN_NUM})*)(?![\w.])"
    rf"(?:\s+(?:of|in)\s+(?:the\s+)?(?P<book>(?!{_EN_UNIT_WORD}\b)[A-Z][A-Za-z]*(?:\s+(?:(?:and|of|for|on)\s+)?(?!{_EN_UNIT_WORD}\b)[A-Z][A-Za-z]*){{0,6}}))?"
)
_SCHEDULE_TO_BOOK = re.compile(r"\s+to\s+(?:the\s+)?(?P<book>[A-Z][A-Za-z]*(?:\s+(?:(?:and|of|for|on)\s+)?[A-Z][A-Za-z]*){0,6})")
_EN_RANGE = re.compile(rf"(?P<a>{_EN_NUM})\s*(?:to|-|–)\s*(?P<b>{_EN_NUM})")
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


def _clean_number(number: str) -> str:
    return re.sub(r"\s+", "", number)


def _expand_range(first: str, last: str) -> list[str]:
    """"184" to "187" and "4.13.5" to "4.13.7" expand (same prefix, last part numeric); others stay ends."""
    prefix, _, low = first.rpartition(".")
    last_prefix, _, high = last.rpartition(".")
    if (prefix == last_prefix and low.isdigit() and high.isdigit()
            and 0 < int(high) - int(low) <= MAX_RANGE_EXPANSION):
        return [f"{prefix}.{n}" if prefix else str(n) for n in range(int(low), int(high) + 1)]
    return [first, last]


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
    act = _EU_ACT.match(text, position + eu_act.end()) if eu_act else None
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
                chain.sections.extend(_expand_range(first, last))
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
        if "\n" in text[position:following] and _ENUMERATION_ITEM.match(text, following):
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


def _legal_references(text: str, doc: str | None) -> list[DetectedReference]:
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
                extraction_method="regex",
            )
        )
    return references


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
                sections.extend(_expand_range(range_match.group("a").rstrip("."), range_match.group("b").rstrip(".")))
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
    """"paragraph 64 of Schedule 1 to FSMR", "Chapter 1 of Part 19 of FSMR": the inner unit is in the book
    of the unit that encloses it."""
    for index in range(len(references) - 2, -1, -1):
        inner, outer = references[index], references[index + 1]
        joined = re.fullmatch(r"\s+of\s+(?:the\s+)?", text[inner.end : outer.start])
        if joined and inner.book is None and outer.book:
            inner.book = inner.document_context = outer.book
            inner.target = f"{inner.unit} {', '.join(inner.sections)} {outer.book}"


def _simple(pattern: re.Pattern, kind: str, text: str, target: Callable[[re.Match], str],
            doc: str | None = None) -> list[DetectedReference]:
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


def _overlaps(a: DetectedReference, b: DetectedReference) -> bool:
    return a.start < b.end and b.start < a.end


def detect_references_regex(text: str, doc: str | None = None) -> list[DetectedReference]:
    """Every reference the grammar finds in `text`, in text order, without overlaps.

    `doc` is the document the text comes from: book-less references point into it.
    """
    if not text:
        return []
    found: list[DetectedReference] = []
    found += _simple(_URL, "external", text, lambda m: m.group("text"))
    found += _simple(_EU_ACT, "document_mention", text, lambda m: " ".join(m.group("text").split()))
    found += _simple(_STANDARD, "document_mention", text, lambda m: " ".join(m.group("text").split()))
    found += _simple(_ICRP, "document_mention", text, lambda m: " ".join(m.group("text").split()))
    found += _simple(_NUMBERED_CITATION, "academic_numbered", text,
                     lambda m: f"[{m.group('body').replace(' ', '')}]", doc)
    found += _simple(_SHORTFORM_CITATION, "academic_shortform", text, lambda m: f"[{m.group('body')}]", doc)
    legal = _legal_references(text, doc)
    english = _english_section_references(text, doc)
    # Longer, more specific matches win: legal chains swallow an EU act named as their book.
    ordered = sorted(legal + english + found, key=lambda r: (-(r.end - r.start), r.start))
    kept: list[DetectedReference] = []
    for reference in ordered:
        if reference.type == "external" or not any(_overlaps(reference, other) for other in kept):
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


def _llm_to_detected(result: ExtractedReferenceList, text: str, doc: str | None) -> list[DetectedReference]:
    references = []
    for item in result.references:
        snippet = item.reference_text.strip()
        if not snippet:
            continue
        start = text.find(snippet)
        parsed = detect_references_regex(snippet, doc)
        sections = parsed[0].sections if parsed else []
        book = (parsed[0].book if parsed else None) or item.target_document
        context = book or (doc if item.reference_type == "legal_section" else None)
        references.append(
            DetectedReference(
                type=item.reference_type,
                target=snippet if not context or context in snippet else f"{snippet} {context}",
                original_text=snippet,
                start=max(start, 0),
                end=max(start, 0) + len(snippet) if start >= 0 else 0,
                book=book,
                sections=sections,
                unit=parsed[0].unit if parsed else "",
                document_context=context,
                extraction_method="llm",
            )
        )
    return references


def merge_hybrid(regex_refs: list[DetectedReference], llm_refs: list[DetectedReference]) -> list[DetectedReference]:
    """Seed 000 §4c: regex first; an LLM result is dropped when its type:target key was seen
    or its target text overlaps an existing reference."""
    seen = {ref.key for ref in regex_refs}
    combined = list(regex_refs)
    for ref in llm_refs:
        if ref.key in seen:
            continue
        if any(
            (ref.end > ref.start and _overlaps(ref, other))
            or ref.original_text.lower() in other.original_text.lower()
            or other.original_text.lower() in ref.original_text.lower()
            for other in combined
        ):
            continue
        seen.add(ref.key)
        combined.append(ref)
    return combined


def detect_references(
    text: str,
    doc: str | None = None,
    method: str = "regex",
    llm_extract: Callable[[str], ExtractedReferenceList] | None = None,
) -> list[DetectedReference]:
    """Detect references with `method` regex | llm | hybrid. `llm_extract` runs the LLM prompt."""
    if method == "regex" or llm_extract is None:
        if method != "regex":
            logger.debug("No LLM for reference extraction; using the regex layer")
        return detect_references_regex(text, doc)
    try:
        llm_refs = _llm_to_detected(llm_extract(text), text, doc)
    except Exception as exc:  # an LLM failure must not lose the regex layer's findings
        logger.warning("LLM reference extraction failed (%s); using the regex layer", exc)
        return detect_references_regex(text, doc)
    if method == "llm":
        return llm_refs
    return merge_hybrid(detect_references_regex(text, doc), llm_refs)
