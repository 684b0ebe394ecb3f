"""The English citation grammar, a peer of the German chain grammar (citations_de.py): section references with a
unit word ("see section 4.2", "Rule 3.3.16(1)", "section 82 of FSMR", `english_section_references`), and the
regulatory forms that name no unit word (`english_rulebook_references`).

Rulebooks and supervisory statements cite their own numbered paragraphs bare, a rule of another part by the
part's name, and footnotes by a marker:

    A firm must keep its identification pursuant to 4.1 up-to-date.      -> rule 4.1 (this document)
    the notice referred to in 2.49 above                                  -> rule 2.49
    paragraphs 4.24A - 4.25Z and 4.25AE                                   -> (a unit word: below)
    as per Matching Adjustment 4.16 for assets                           -> rule 4.16 of "Matching Adjustment"
    likely not be prepared to host such a branch. 53 In the case of …    -> footnote 53 (this document)

Each is only a candidate: a bare number resolves where the citing document has that numbered block (the
section index knows "4.1" and "Footnote 53"), a part's name where the registry knows that document. So a
number that is no reference ("£100 million, 10 and where …" with no footnote 10) resolves to nothing.
"""

from __future__ import annotations

import re

from rabbithole_lab.language.section_units import expand_range, is_roman_item
from rabbithole_lab.records import DetectedReference

# a rule number as rulebooks print it: 4.1, 2.49, 4.25AE, 3.7C, 8A.1, 3A2.3, 2.4(1), 15.3(2)(a)
RULE_NUMBER = r"\d{1,3}[A-Z]{0,2}\d{0,2}(?:\.\d{1,3}[A-Z]{0,2})+(?:\(\w{1,4}\))*"
# words after which a bare rule number is cited: "pursuant to 4.1", "set out in 3.2", "see 2.7", "under 5.1"
_CUE = (r"(?i:pursuant\s+to|in\s+accordance\s+with|referred\s+to\s+in|set\s+out\s+in|described\s+in|"
        r"specified\s+in|required\s+by|provided\s+(?:for\s+)?in|as\s+per|notwithstanding|within|under|see|in|"
        r"to|by|with|at|and|or|of|unless|except|but|if|where)")
# in a list, a rule's sub-units may stand after a space, as a page prints them ("Reporting 3.3 (5)(d), 3.4 and
# 3.7A"): the list goes on after them
_LISTED_RULE = rf"{RULE_NUMBER}(?:\s\(\w{{1,4}}\)(?:\(\w{{1,4}}\))*)?"
_LIST_NEXT = r"(?:\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|to)\s+|\s*[-–]\s*)"
_CUED_RULE = re.compile(rf"\b{_CUE}\s+(?P<num>{_LISTED_RULE}(?:{_LIST_NEXT}{_LISTED_RULE})*)(?![\w%]|\.\d)"
                        rf"(?!\s*(?:%|per\s*cent|percent))")
# "… in accordance with 19 to 23": whole-number rules, cued and in a range or list
_CUED_WHOLE_RULES = re.compile(rf"\b(?:in\s+accordance\s+with|under|pursuant\s+to|referred\s+to\s+in)\s+"
                               rf"(?P<num>\d{{1,3}}(?:{_LIST_NEXT}\d{{1,3}})+)(?![\w%]|\.\d)")
_PLACED_RULE = re.compile(rf"(?<![\w.(£$€%/-])(?P<num>{RULE_NUMBER})\s+(?:above|below)\b")
# a rule as the subject of its clause: "2.1 has effect as if …", "22.3 and 22.4 do not apply"
_SUBJECT_RULE = re.compile(rf"(?:^|(?<=[,;:]\s)|(?<=\.\s))(?P<num>{RULE_NUMBER}(?:{_LIST_NEXT}{RULE_NUMBER})*)"
                           r"(?=\s+(?:has|have|applies|apply|does|do|requires|require|shall|must|is|are)\b)")
# a list item that opens with the rules it applies: "(a) 3.7 for firms in their first fee year ;", "(9) 2.3 , 2.7
# and 3 of the Risk Control Part" (no rule number starts with 0: "(a) 0.9 for long-term obligations" is a factor)
_ITEM_RULE = re.compile(rf"(?:^|(?<=[\s:;]))\((?:[a-z]{{1,2}}|[ivx]{{1,5}}|\d{{1,2}})\)\s+"
                        rf"(?P<num>(?!0){_LISTED_RULE}(?:{_LIST_NEXT}{_LISTED_RULE})*)(?![\w%]|\.\d)")
# the small words a part's title may hold between its capitalised words ("Allocation of Responsibilities",
# "Skills, Knowledge and Expertise")
_TITLE_LINK = r"of|and|for|the|to|in"
# "2.3 , 2.7 and 3 of the Risk Control Part", "6.4(7) and 6.4(8) of the Credit Unions Part": the rules are that
# part's, named by its whole title (after the cited list, with any whole chapters in it)
_OF_PART = re.compile(r"(?:\s*(?:,|and|or)\s*\d{1,3}[A-Z]?)*\s+of\s+the\s+(?P<book>[A-Z][A-Za-z’'-]*"
                      rf"(?:,?\s+(?:[–-]\s+)?(?:[A-Z][A-Za-z’'-]*|{_TITLE_LINK})){{0,6}}?)\s+Part\b")
_NUMBER_IN_LIST = re.compile(rf"{_LISTED_RULE}|\d{{1,3}}[A-Z]{{0,2}}(?![a-z])")
# "Matching Adjustment 4.16", "Insurance – Senior Management Functions 8.2", "Own Funds 3A": a part of the
# rulebook named by its title, then the rule; the title must be one the registry knows to resolve
_PART_WORD = r"[A-Z][a-z][A-Za-z’']*"  # a title-cased word: an acronym ("ICRP Publication 103") names no part
# "Conditions Governing Business 3.2 and 3.3": the list that follows is the same part's
_NAMED_RULE = re.compile(
    rf"(?P<book>{_PART_WORD}(?:\s+(?:[–-]\s+)?(?:{_PART_WORD}|{_TITLE_LINK})){{1,6}}?)\s+"
    rf"(?P<num>{_LISTED_RULE}(?:{_LIST_NEXT}{_LISTED_RULE})*|\d{{1,3}}[A-Z]{{0,2}}(?:\(\w{{1,4}}\))*)(?![\w%]|\.\d)")
# "Reporting 3.3 (5)(d)", "Fees 3.7": a part named by one word, with a rule number (a dot in it)
_ONE_WORD_NAMED_RULE = re.compile(
    rf"(?<![\w’'.-])(?P<book>[A-Z][a-z][a-z’'-]+)\s+(?P<num>{_LISTED_RULE}(?:{_LIST_NEXT}{_LISTED_RULE})*)"
    rf"(?![\w%]|\.\d)")
# "Conditions Governing Business Chapters 2 and 3", "Non-Solvency II Firms – Governance Chapter 7": a part's
# title before the chapters it names (read only as a document's whole name: "Responses to Chapter 2" is none)
_TITLE_WORD = r"(?:[A-Z][a-z][A-Za-z’'-]*|[IVX]{1,4})"
_TITLED_CHAPTERS = re.compile(
    rf"(?<![\w’'-])(?P<book>{_TITLE_WORD}(?:\s+(?:[–-]\s+)?(?:{_TITLE_WORD}|{_TITLE_LINK})){{0,6}}?)\s+"
    rf"(?P<unit>Chapters?)\s+(?P<num>\d{{1,3}}[A-Z]?(?:{_LIST_NEXT}\d{{1,3}}[A-Z]?)*)(?![\w.]|\.\d)")
_NOT_PART_NAMES = {"Article", "Articles", "Section", "Sections", "Chapter", "Chapters", "Part", "Parts", "Rule",
                   "Rules", "Paragraph", "Paragraphs", "Appendix", "Annex", "Schedule", "Table", "Figure",
                   "Footnote", "Regulation", "Directive", "Title", "Titles", "Box", "Step", "Stage", "Tier",
                   "Pillar", "Level", "Class", "Publication", "Category", "Option", "Scenario", "Phase", "The", "This",
                   "These",
                   "In", "On", "At", "By", "See", "Under", "From", "As", "For", "To", "Of", "And", "Or"}
# a footnote marker: a bare number after a word or a clause's end ("… exit costs, 24 operational costs",
# "… jurisdiction. 53 In the case", "… 2019/348; 5"), unless a quantity is meant ("more than £100 million",
# "within 10 days", "at least 3 directors")
_FOOTNOTE_MARKER = re.compile(
    r"(?<=[A-Za-z’')\]\d][.,;:]\s)(?P<num>\d{1,3})(?=\s+[\w(]|\s*$)"
    r"|(?<=[A-Za-z’')\]]\s)(?P<num2>\d{1,3})(?=\s*[,;.)]|\s+[\w(]|\s*$)"
    r"|(?<=[A-Za-z’')\]][.,;:])(?P<num3>\d{1,3})(?=\s|$)"
    # a page's extraction may leave a space before the clause's end ("… UK insurance firms’ . 16")
    r"|(?<=[A-Za-z’')\]]\s[.;:]\s)(?P<num4>\d{1,3})(?=\s+[\w(]|\s*$)")
# markers in a run ("… (OCIR). 71 72 Banks should …"): each next number right after a marker is one too
_NEXT_MARKER = re.compile(r"\s(\d{1,3})(?=\s|$|[,;.])")
_QUANTITY_BEFORE = re.compile(r"(?:£|\$|€|\b(?:than|of|to|by|at|over|under|within|about|least|most|only|every|"
                              r"first|last|next|previous|top|the|a|an|per|page|pages|year|years|day|days|"
                              r"Article|Section|Chapter|Part|Rule|paragraph|paragraphs|Table|Figure|Pillar|Tier|"
                              r"Footnote|Annex|Appendix|Schedule|point|points|No|no|number|numbers|Level|Stage|"
                              r"Class|Category|Step|Phase|Title|Box|Option|has|have|had|is|are|was|were|be|"
                              r"and|or|with|from|into|between|in|on|for|all|any|each|two|three|some)\s*[,:]?\s*)$",
                              re.IGNORECASE)
_UNIT_AFTER = re.compile(r"\s*(?:%|per\s*cent|percent|million|billion|bn|m\b|years?|months?|weeks?|days?|"
                         r"hours?|minutes?|business|calendar|working|times|basis|bps|[-–]\s*\d|\.\d|/\d|:\d)",
                         re.IGNORECASE)


# A rule a part names in its own text, at a passage's opening ("Fundamental Rule 7: A firm must deal with its
# regulators …", "Individual Conduct Rule 2: You must act with due skill …"), cited by that name: "Fundamental
# Rules 3, 5, 6 and 8", "PRA Fundamental Rule 7". The number is the name's, not a section number (the rule
# stands as 2.7), so it resolves only where a passage shows the name (`resolve.ReferenceResolver`).
NAMED_RULE_UNIT = "named rule"
_RULE_NAME = r"(?:[A-Z]{2,5}\s+)?(?:[A-Z][a-z]+\s+){1,3}"  # "Fundamental ", "CTP Fundamental ", "Individual Conduct "
_NAMED_UNIT = r"Rule|Standard|Principle"
_SHOWN_NAME = re.compile(rf"\s*(?P<name>{_RULE_NAME}(?:{_NAMED_UNIT})\s+\d{{1,2}}[A-Z]?)\s*:")
_NAMED_RULES = re.compile(
    rf"(?<![\w’'-])(?P<name>{_RULE_NAME})(?P<unit>{_NAMED_UNIT})s?\s+"
    rf"(?P<num>\d{{1,2}}[A-Z]?(?:{_LIST_NEXT}\d{{1,2}}[A-Z]?)*)(?![\w.%/]|\.\d|\s*:)")

# a chapter's headings named by their item labels: "Chapter 2 (vi) and (vii)", "Chapter 2 (i) (b), (c) and (ii)"
_CHAPTER_ITEMS = re.compile(r"\bChapter\s+(?P<num>\d{1,3}[A-Z]?)\s*(?P<items>\([ivx]{1,5}\)|\([a-z]\))"
                            r"(?P<more>(?:\s*,?\s*(?:and\s+|or\s+)?\((?:[ivx]{1,5}|[a-z])\))*)")


# a publication's code: "SS4/21", "PS15/24", "SoP3/16", "CP 12/23" (letters, a number, a slash, the year)
DOCUMENT_CODE = r"[A-Z][A-Za-z]{1,3}\s?\d{1,3}/\d{2,4}"
_DOCUMENT_CODE = re.compile(rf"(?<![\w/])(?P<code>{DOCUMENT_CODE})(?![\w/])")


def document_codes(text: str) -> list[DetectedReference]:
    """Publications cited by their code ("see SS4/21"): the registry knows a document's code from its title."""
    return [DetectedReference(type="document_mention", target=match.group("code"), original_text=match.group(0),
                              start=match.start(), end=match.end(), book=match.group("code"),
                              extraction_method="regex")
            for match in _DOCUMENT_CODE.finditer(text)]


def _reference(unit: str, number: str, start: int, end: int, text: str, doc: str | None,
               book: str | None = None, sections: list[str] | None = None) -> DetectedReference:
    context = book or doc
    label = f"{unit} {', '.join(sections or [number])}"
    return DetectedReference(type="section", target=f"{label} {context}".strip() if context else label,
                             original_text=text[start:end], start=start, end=end, book=book,
                             sections=sections or [number], unit=unit, document_context=context,
                             extraction_method="regex")


def _part_rule(number: str, start: int, end: int, text: str, part: str) -> DetectedReference:
    """A rule of the part a title names as a whole ("… of the Risk Control Part"): that part's, or none."""
    found = _reference("rule", number, start, end, text, None, part)
    return found.model_copy(update={"book_exact": True, "document_context": part})


def _rule_label(number: str) -> str:
    """A rule number as the section index keys it: "3.3 (5)(d)" -> "3.3(5)(d)"."""
    return re.sub(r"\s+(?=\()", "", number)


def bare_rule_references(text: str, doc: str | None) -> list[DetectedReference]:
    """Rule numbers cited without a unit word: after a citing verb or preposition (with the list or range that
    follows it), placed "above"/"below", the subject of their clause, or opening a list item; "… of the Risk
    Control Part" after them names the part they are in."""
    found: dict[int, DetectedReference] = {}
    for pattern in (_CUED_RULE, _CUED_WHOLE_RULES, _PLACED_RULE, _SUBJECT_RULE, _ITEM_RULE):
        for match in pattern.finditer(text):
            if _UNIT_AFTER.match(text, match.end("num")):  # "(b) 2.5 times the …", "(a) 1.5 million"
                continue
            part = _OF_PART.match(text, match.end("num"))
            book = " ".join(part.group("book").split()) if part else None
            offset = match.start("num")
            for number in _NUMBER_IN_LIST.finditer(match.group("num")):
                start, end, label = offset + number.start(), offset + number.end(), _rule_label(number.group(0))
                found.setdefault(start, _part_rule(label, start, end, text, book) if book
                                 else _reference("rule", label, start, end, text, doc))
    return list(found.values())


def named_rule_references(text: str) -> list[DetectedReference]:
    """A rule of another part named by the part's title ("Matching Adjustment 4.16"); the title is the book. A
    one-word title ("Reporting 3.3") names a part only as that part's whole name (`book_exact`): a single word
    would otherwise match any title holding it."""
    out: list[DetectedReference] = []
    for match in _NAMED_RULE.finditer(text):
        title = _title_words(match, "book")
        if title is None or len(title[0]) < 2 or not any(w[:1].isupper() for w in title[0][1:]):
            continue
        words, start = title
        book = " ".join(words)
        numbers = [_rule_label(number.group(0)) for number in _NUMBER_IN_LIST.finditer(match.group("num"))]
        out.append(_reference("rule", numbers[0], start, match.end("num"), text, None, book, numbers))
    for match in _ONE_WORD_NAMED_RULE.finditer(text):
        inside = any(named.start <= match.start("book") < named.end for named in out)  # "Matching Adjustment 4.16"
        cue = re.fullmatch(_CUE, match.group("book"))  # "Notwithstanding 2.1" cites this document's rule
        if match.group("book") not in _NOT_PART_NAMES and not inside and not cue:
            numbers = [_rule_label(number.group(0)) for number in _NUMBER_IN_LIST.finditer(match.group("num"))]
            found = _reference("rule", numbers[0], match.start("book"), match.end("num"), text, None,
                               match.group("book"), numbers)
            out.append(found.model_copy(update={"book_exact": True}))
    return out


def _title_words(match: re.Match, group: str) -> tuple[list[str], int] | None:
    """The words of a title before a number, without leading words that name no title ("Under", "The"), and
    where they start; None when none is left or the last names a unit ("… Rule")."""
    words = match.group(group).split()
    while words and words[0] in _NOT_PART_NAMES:
        words = words[1:]
    if not words or words[-1] in _NOT_PART_NAMES:
        return None
    return words, match.start(group) + match.group(group).index(words[0])


def shown_rule_name(body: str) -> str | None:
    """The name a passage gives its rule at its opening ("Fundamental Rule 7: A firm must …" -> "Fundamental Rule
    7"), if it gives one."""
    match = _SHOWN_NAME.match(body)
    return " ".join(match.group("name").split()) if match else None


def name_variants(name: str) -> list[str]:
    """A rule's name as cited, then without the words before the rule's own name that a citation may add: "PRA
    Fundamental Rule 7" -> ["PRA Fundamental Rule 7", "Fundamental Rule 7"] (one word of the name stays)."""
    words = name.split()
    return [" ".join(words[first:]) for first in range(max(1, len(words) - 2))]


def rule_name_references(text: str, doc: str | None) -> list[DetectedReference]:
    """Rules cited by the name a part gives them ("Fundamental Rules 3 and 5"): one section per number, each the
    whole name ("Fundamental Rule 3"), as the passage that holds the rule shows it. A block naming itself
    ("Fundamental Rule 1: A firm must …") cites nothing."""
    out = []
    for match in _NAMED_RULES.finditer(text):
        if (title := _title_words(match, "name")) is None:
            continue
        words, start = title
        name = f"{' '.join(words)} {match.group('unit')}"
        sections = [f"{name} {number}" for number in re.findall(r"\d{1,2}[A-Z]?", match.group("num"))]
        cited = text[start:match.end()]
        out.append(DetectedReference(type="section", target=cited, original_text=cited, start=start, end=match.end(),
                                     sections=sections, unit=NAMED_RULE_UNIT, document_context=doc,
                                     extraction_method="regex"))
    return out


def titled_chapter_references(text: str, doc: str | None) -> list[DetectedReference]:
    """Chapters of a part named by its title before them ("Conditions Governing Business Chapters 2 and 3").
    The title counts only as a document's whole name (`book_exact`); words that name none ("Responses to
    Chapter 2") leave the chapters in the citing document, as they were read without the title."""
    out = []
    for match in _TITLED_CHAPTERS.finditer(text):
        if (title := _title_words(match, "book")) is None:
            continue
        words, start = title
        numbers = [_rule_label(number.group(0)) for number in _NUMBER_IN_LIST.finditer(match.group("num"))]
        found = _reference(match.group("unit").lower(), numbers[0], start, match.end("num"), text, None,
                           " ".join(words), numbers)
        out.append(found.model_copy(update={"book_exact": True, "document_context": doc}))
    return out


def footnote_markers(text: str, doc: str | None) -> list[DetectedReference]:
    """Bare footnote markers ("… from that jurisdiction. 53 In the case …"): candidates that resolve only where
    the citing document has that footnote."""
    out = []
    for match in _FOOTNOTE_MARKER.finditer(text):
        group = next(name for name in ("num", "num2", "num3", "num4") if match.group(name))
        start, end = match.span(group)
        if _QUANTITY_BEFORE.search(text[max(0, start - 16):start]) or _UNIT_AFTER.match(text, end):
            continue
        out.append(_reference("footnote", match.group(group), start, end, text, doc))
        number = int(match.group(group))
        while (following := _NEXT_MARKER.match(text, end)) and int(following.group(1)) == number + 1:
            number, (start, end) = number + 1, following.span(1)
            out.append(_reference("footnote", following.group(1), start, end, text, doc))
    return out


def chapter_heading_references(text: str, doc: str | None) -> list[DetectedReference]:
    """A chapter's headings named by their item labels ("Chapter 2 (vi) and (vii)"): each a section
    "2(vi)". A letter after a Roman numeral is a heading under it ("Chapter 2 (i) (b), (c)" -> "2(i)(b)",
    "2(i)(c)"); `sections.is_roman_item` tells a numeral from a letter, as the heading paths are read."""
    out = []
    for match in _CHAPTER_ITEMS.finditer(text):
        chapter = match.group("num")
        sections: list[str] = []
        roman, letter, roman_alone = "", "", False
        for item in re.findall(r"\((\w{1,5})\)", match.group("items") + match.group("more")):
            if is_roman_item(item, letter):
                if roman_alone:
                    sections.append(f"{chapter}({roman})")
                roman, letter, roman_alone = item, "", True
            else:
                sections.append(f"{chapter}({roman})({item})" if roman else f"{chapter}({item})")
                letter, roman_alone = item, False
        if roman_alone:
            sections.append(f"{chapter}({roman})")
        out.append(_reference("chapter", chapter, match.start(), match.end(), text, doc, sections=sections))
    return out


def english_rulebook_references(text: str, doc: str | None) -> list[DetectedReference]:
    return [*rule_name_references(text, doc), *named_rule_references(text), *bare_rule_references(text, doc),
            *footnote_markers(text, doc),
            *document_codes(text), *chapter_heading_references(text, doc), *titled_chapter_references(text, doc)]


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


def english_section_references(text: str, doc: str | None) -> list[DetectedReference]:
    """English section references with a unit word ("see section 4.2", "Rule 3.3.16(1)", "section 82 of FSMR",
    "Schedule 1 to FSMR"), each with its book where one is named."""
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
