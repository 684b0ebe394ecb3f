"""Section headings: which lines open a section and how its label is normalised.

A label is what a reference resolves to: "§ 78", "§ 9a", "Art. 3", "Anlage 4",
"4.2" (numbered headings), "3.3.16.(1)" (rulebook paragraphs).
"""

from __future__ import annotations

import re

from rabbithole_lab.language import alternation, patterns
from rabbithole_lab.language.section_units import is_roman_item, normal_unit

# "§ 78 Grenzwerte ...", "§§ 8 und 9 (weggefallen)", "Art. 3 ...", "Artikel 3", "Anlage 4 (zu § 8)"
_LEGAL_HEADING = re.compile(
    rf"^\s*(?P<unit>{alternation('HEADING_UNITS')})(?![a-zäöüß])\s*"
    r"(?P<num>\d+(?:\s?[a-z](?![a-zäöüß]))?|[IVXLC]+\b)?"
)
# "4.2 Calibration intervals", "3 Scope", "3.3.16.(1)", "A.1 Title"
_NUMBERED_HEADING = re.compile(r"^\s*(?P<num>(?:\d+|[A-Z])(?:\.\d+)*\.?(?:\(\w+\))*)\s+(?P<title>\S.*)$")
_RULEBOOK_LABEL = re.compile(r"^(?:\d+|[A-Z])(?:\.\d+)+\.?(?:\(\w+\))*$|^\d+\.?(?:\(\w+\))+$")
# Structural headings that group sections but are not citation targets themselves.
_STRUCTURAL_HEADING = patterns.structural_heading()  # the words are each language's
_BODY_STARTERS = patterns.body_starters()
_PID_HEADING = re.compile(r"^\[PID [^\]]+\]\s*(?P<label>.*)$")
_PID_MARKER = re.compile(r"^\[PID [^\]]+\]\s*")


def embedding_text(chunk_text: str) -> str:
    """What the embedder reads of a chunk: its text without the passage-id marker a passage corpus puts in
    each heading ("[PID 704b70fea119699c] 4.1 (Chapter 4 …)"), sixteen hex digits that carry no meaning
    and cost a fifth of a short passage's tokens."""
    return _PID_MARKER.sub("", chunk_text, count=1)


def passage_body(chunk_text: str) -> str:
    """The passage's own text, below the heading line a passage corpus gives it ("[PID …] 2.7 (Chapter 2 …)")."""
    return chunk_text.split("\n", 1)[1] if _PID_MARKER.match(chunk_text) and "\n" in chunk_text else chunk_text


def shows_name(chunk_text: str, name: str) -> bool:
    """The passage opens with `name` as its own label ("Fundamental Rule 7: A firm must …")."""
    return re.match(rf"\s*{re.escape(name)}\s*:", passage_body(chunk_text)) is not None


# the one normaliser of a section's unit is language/section_units.py's
_LABEL = re.compile(rf"({alternation('LABEL_UNITS')})\s*(\d+(?:\s?[a-z](?![a-zäöüß]))?)", re.IGNORECASE)


def normalise_section(unit: str, number: str) -> str:
    """('§§', '78 ') -> '§ 78'; ('Artikel', '3') -> 'Art. 3'; ('anlage', '4') -> 'Anlage 4'."""
    number = re.sub(r"\s+", "", number or "")
    return f"{normal_unit(unit)} {number}".strip()


def canonical_section(label: str) -> str:
    """'§78' / '§§ 78' / 'Artikel 3' -> '§ 78' / 'Art. 3'; other labels unchanged."""
    text = label.strip()
    match = _LABEL.match(text)
    if match and match.end() == len(text):
        return normalise_section(match.group(1), match.group(2))
    return text


def label_tokens(text: str) -> list[str]:
    """Every section label in `text` as one search token: '§ 78' -> '§78', 'Artikel 3' -> 'art.3'."""
    return [normalise_section(unit, number).replace(" ", "").lower() for unit, number in _LABEL.findall(text)]


_BIBLIOGRAPHY = re.compile(
    rf"^\s*({alternation('BIBLIOGRAPHY_HEADINGS')})\s*$",
    re.IGNORECASE,
)
BIBLIOGRAPHY_LABEL = "References"


def bibliography_heading(line: str) -> bool:
    return bool(_BIBLIOGRAPHY.match(line))


def legal_heading_label(line: str, styled: bool = False) -> str | None:
    """The label if `line` looks like a legal section heading, else None.

    `styled` (bold/large) lines are trusted: "§§ 14 bis 16 (weggefallen)" is a heading there.
    """
    match = _LEGAL_HEADING.match(line)
    if not match:
        return None
    number = match.group("num") or ""
    rest = line[match.end():].strip()
    if not styled and _BODY_STARTERS.match(rest):
        return None  # "§ 55 Absatz 1 ..." wrapped to a line start is body text
    if match.group("unit").lower() in {"§", "§§", "art.", "artikel"} and not number:
        return None
    return normalise_section(match.group("unit"), number)


def numbered_heading_label(line: str) -> str | None:
    match = _NUMBERED_HEADING.match(line)
    if not match:
        return None
    num = match.group("num").rstrip(".")
    title = match.group("title")
    if not title[:1].isupper() or len(line) > 120:
        return None
    if re.fullmatch(r"\d+", num) and int(num) > 50:
        return None  # a year or an amount, not a chapter number
    return num


def markdown_heading_label(heading_text: str) -> str:
    """Label for a Markdown heading (without the leading #'s)."""
    text = heading_text.strip()
    pid = _PID_HEADING.match(text)
    if pid:
        label = pid.group("label").strip()
        return label or text
    legal = legal_heading_label(text)
    if legal:
        return legal
    numbered = numbered_heading_label(text)
    if numbered:
        return numbered
    if _RULEBOOK_LABEL.match(text):
        return text.rstrip(".")
    return ""


def is_structural_heading(line: str) -> bool:
    return bool(_STRUCTURAL_HEADING.match(line))


# German annexes are divided into "Teil A", "Teil C", "Teil 1"; "C" also reads as a Roman numeral
_ANNEX_PART_HEADING = re.compile(r"^\s*Teil\s+(?:\d+|[A-Z]|[IVX]+)\b")


def is_annex_part_heading(line: str) -> bool:
    return bool(_ANNEX_PART_HEADING.match(line))


# a block a page shows with its number first and its heading after: "4.1 (Chapter 4 Key Functions)",
# "Article 277(3) Mapping of Transactions", "Article 19: Annual Template …", "Footnote 53 (Chapter 6 …)", "Table 1",
# "3A2.3 Volume Measure"
_NUMBERED_BLOCK = re.compile(
    rf"^(?:(?P<unit>{alternation('NUMBERED_BLOCK_UNITS')})\s+)?"
    r"(?P<num>\d{1,3}[A-Za-z]{0,2}\d{0,2}(?:\.\d{1,3}[A-Z]{0,2})*(?:\(\w{1,4}\))*|[IVX]{1,5})"
    r"(?::|\s+(?:\(|[A-Z])|$)")
_KEYED_UNITS = {"Footnote", "Table", "Annex", "Appendix", "Title", "Chapter"}  # their numbers are counted apart
_OUTLINE_PREFIX = re.compile(rf"^(?:(?:{alternation('OUTLINE_UNITS')})\s+\w+\.\s*)+", re.IGNORECASE)


def section_key(label: str) -> str:
    """A comparable key: 'Part 6.Chapter 1.70.(1)' -> '70(1)', '3.3.16.(1)' -> '3.3.16(1)', '68)' -> '68',
    '§ 78' -> '§ 78'; a numbered block keyed by its number: '4.1 (Chapter 4 Key Functions)' -> '4.1',
    'Article 277(3) Mapping' -> '277(3)', 'Footnote 53 (Chapter 6)' and 'Footnote 53' -> 'footnote53'."""
    text = label.strip()
    if text.startswith(("§", "Art.", "Anlage")):
        return text
    block = _NUMBERED_BLOCK.match(text)
    if block and (block.group("unit") or "." in block.group("num") or block.end() < len(text)):
        unit = block.group("unit") if block.group("unit") in _KEYED_UNITS else ""
        return f"{unit}{block.group('num')}".lower()
    if re.fullmatch(r"\d+\)", text):
        return text[:-1]  # "68)": a guidance paragraph numbered like a list item, cited as "paragraph 68"
    text = _OUTLINE_PREFIX.sub("", text)
    text = re.sub(r"\.\s*(?=\()", "", text)
    text = re.sub(r"\s+", "", text).rstrip(".")
    return text.lower()


def numbering_kind(key: str) -> str:
    """The numbering a section key belongs to: '§ 78' -> '§', 'Art. 3' -> 'art', 'footnote53' -> 'footnote',
    '4.1' and '277(3)' -> 'number'. A document that numbers its sections one way can say that it lacks one."""
    prefix = re.match(r"[^\d\s(]+", key.strip())
    return prefix.group().rstrip(".").lower() if prefix else "number"


def parent_keys(key: str) -> list[str]:
    """'3.10.7(g)' -> ['3.10.7(g)', '3.10.7']; '70(1)(a)' -> ['70(1)(a)', '70(1)', '70']."""
    keys = [key]
    while True:
        stripped = re.sub(r"\([^()]*\)$", "", keys[-1])
        if stripped == keys[-1] or not stripped:
            break
        keys.append(stripped)
    return keys


# A rulebook's heading path names labelled blocks a reference can cite: "Chapter 2 Key recovery plan components >
# (d) Timelines", "Chapter 1 Introduction > Table 1: Non-exhaustive list …". Its own section key is the rule's
# number ("2.25") or the chapter's ("chapter1"), so "Table 1" and "Chapter 2 (d)" are read from the path.
_PATH_BLOCK = re.compile(rf"^(?:(?P<unit>{alternation('PATH_BLOCK_UNITS')})\s+(?P<num>\d{{1,3}}[A-Z]?|[IVX]{{1,5}})"
                         r"(?![\w.])|\((?P<item>[ivx]{1,5}|[a-z])\)\s)")
_PATH_TOP = re.compile(rf"^[^(>]*?\(((?:{alternation('PATH_TOP_UNITS')})\s.*)\)$")



def heading_path(label: str) -> list[str]:
    """The heading path of a section label: '2.25 (Chapter 2 Key … > (d) Timelines)' -> ['Chapter 2 Key …',
    '(d) Timelines'], '1.1 (Appendix 1 > References …)' -> ['Appendix 1', 'References …']; a label that is a
    path itself ('Chapter 1 Introduction > Table 1: …') is split as it is."""
    text = label.strip()
    inner = _PATH_TOP.match(text)
    return [part.strip() for part in (inner.group(1) if inner else text).split(">") if part.strip()]


def heading_blocks(label: str) -> list[str]:
    """The labelled blocks of a section's heading path, each as a key: 'chapter2', 'table1', 'box1', '(d)',
    '(vi)' (a heading's own item label, as the page shows it)."""
    blocks = []
    for part in heading_path(label):
        match = _PATH_BLOCK.match(part)
        if match and match.group("unit"):
            blocks.append(f"{match.group('unit')}{match.group('num')}".lower())
        elif match:
            blocks.append(f"({match.group('item')})")
    return blocks


def block_paths(labels: list[str]) -> list[frozenset[str]]:
    """Each section's blocks in context, for labels in reading order: a lettered heading under a numbered one
    shows only its letter ('> (d) Timelines' under '> (i) Recovery options'), so it is read in the Roman-numbered
    heading before it in its chapter ('Chapter 2 (i) (d)'), as `is_roman_item` tells them apart."""
    paths: list[frozenset[str]] = []
    chapter, roman, letter = "", "", ""
    for label in labels:
        blocks = heading_blocks(label)
        chapters = [block for block in blocks if block.startswith("chapter")]
        if chapters and chapters[0] != chapter:
            chapter, roman, letter = chapters[0], "", ""
        items = [block for block in blocks if block.startswith("(")]
        extra: list[str] = []
        if items:
            item = items[-1][1:-1]
            if is_roman_item(item, letter):
                roman, letter = item, ""
            else:
                letter = item
                extra = [f"({roman})"] if roman else []
        paths.append(frozenset(blocks + extra))
    return paths
