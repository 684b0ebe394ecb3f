"""Text helpers for LLM-free reasoning: sentences, query concepts, citations."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rabbithole_lab.kb.retrieval.lexical import analyze, compound_parts
from rabbithole_lab.language import (
    alternation,
    figure_pattern,
    furniture_pattern,
    patterns,
    points_back_pattern,
    question_stop_words,
    singular_forms,
)
from rabbithole_lab.messages.catalogue import run_text

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-ZÄÖÜ§(])|\n(?=\s*(?:\d+[.)]|[a-z]\)|[-•])\s)")
_ABBREVIATION_END = patterns.abbreviation_end()
# German writes ordinals with a period ("das 75. Lebensjahr"): "<number>." after an article opens a noun phrase,
# not a new sentence ("nach Absatz 2. Die Behörde" still ends one); the words are each language's
_ORDINAL_END = patterns.ordinal_end()
_LIST_MARKER = re.compile(r"\d{1,3}[a-z]?[.)]")  # an enumeration's item number, alone on its line
_ITEM_START = re.compile(r"^(?:\d{1,3}[a-z]?[.)]|[a-z]{1,2}\))\s")  # "4. Absaugung …", "2) Jede …", "c) zu …"
# an enumeration run on in one line ("1. Beschreibung der Quelle, 2. Nachweis der Fachkunde, 3. Lageplan"): the next
# item's number after a comma or semicolon, where the item before it is numbered one less
_INLINE_ITEM_END = re.compile(r"[,;]\s(\d{1,3})\.$")
# The drafting formulas of an enabling clause (Verordnungsermächtigung): such a sentence lists what a regulation may
# govern, so it carries every term of a question on those topics, and states no rule that applies; the rule is in
# the regulation. It lists that as indirect questions or "dass" clauses, which a rule's own items do not open with.
_AUTHORISES_REGULATION = patterns.authorises_regulation()
_WHAT_A_REGULATION_GOVERNS = patterns.what_a_regulation_governs()
_ASKS_ABOUT_AUTHORISATION = patterns.asks_about_authorisation()
_WORD = re.compile(r"[A-Za-zÄÖÜäöüß][\wÄÖÜäöüß-]*")
_DUTY = patterns.duty()
_DEFINITION = patterns.definition_opener()

def points_back(sentence: str) -> bool:
    """The sentence's subject or scope is the sentence before it: its first words point back ("Sie ist jedoch
    auf die Änderungen zu beschränken.", "Satz 1 gilt nicht für …", "Abweichend von Satz 1 …"). Alone it says
    nothing, or it leaves the rule before it quoted without its exception; the two are one statement. A
    sentence opening a paragraph ("(2) …") starts afresh, and "Diese Verordnung" / "This Act" names the whole
    text. The words are each language's (`language.points_back_pattern`)."""
    return bool(points_back_pattern().match(sentence.strip()))


def is_list_item(text: str) -> bool:
    """The text is an enumeration's item, opened by its number ("4. Absaugung …,", "c) zu 2,8 Prozent …"): whole
    as an item, whatever it ends with."""
    return bool(_ITEM_START.match(text.strip()))


def _sentence_pieces(text: str) -> list[list[str]]:
    """The passage's sentences, each as the pieces it was joined from: its lead-in, then each list item (an
    item opens on its own line with its number: "1.", "2)", "a)"). Text that states nothing (a repealed
    paragraph, an annex's note of where it was published: `language.furniture_pattern`) belongs to no sentence
    and ends the one before it; each sentence stays the page's own words."""
    flat = re.sub(r"[ \t]+", " ", text)
    return [sentence for block in furniture_pattern().split(flat) for sentence in _block_pieces(block)]


def _block_pieces(flat: str) -> list[list[str]]:
    sentences: list[list[str]] = []
    after_marker = False
    for piece in _SENTENCE_END.split(flat):
        piece = " ".join(piece.split())
        if not piece:
            continue
        last = " ".join(sentences[-1]) if sentences else ""
        opens_item = after_marker or _opens_next_item(last)
        if sentences and (opens_item or _ABBREVIATION_END.search(last) or _ORDINAL_END.search(last)
                          or not last.endswith((".", "!", "?"))):
            if opens_item:  # a list item's number ("3. Kernzone, wenn …") opens the item: what follows is in it
                sentences[-1][-1] = f"{sentences[-1][-1]} {piece}"
            else:
                sentences[-1].append(piece)
        else:
            sentences.append([piece])
        after_marker = bool(_LIST_MARKER.fullmatch(piece))
    return sentences


def _opens_next_item(sentence: str) -> bool:
    """The sentence so far ends with the number of an enumeration's next item, run on in the line ("1. Beschreibung
    der Quelle, 2."): the item before it is numbered one less. "nach den Absätzen 1, 2. Die Behörde …" ends one."""
    found = _INLINE_ITEM_END.search(sentence)
    if found is None or int(found.group(1)) < 2:
        return False
    return re.search(rf"(?:^|[\s:,;]){int(found.group(1)) - 1}\.\s", sentence[:found.start() + 1]) is not None


def _items(pieces: list[str]) -> tuple[str, list[str]]:
    """A sentence's lead-in and its list items, each item with the pieces that continue it."""
    lead: list[str] = []
    items: list[list[str]] = []
    for piece in pieces:
        if _ITEM_START.match(piece):
            items.append([piece])
        elif items:
            items[-1].append(piece)
        else:
            lead.append(piece)
    return " ".join(lead), [" ".join(item) for item in items]


def _cut(sentence: str, max_chars: int) -> str:
    return sentence if len(sentence) <= max_chars else sentence[:max_chars].rsplit(" ", 1)[0] + " …"


def _states_a_rule(item: str, lead: str, lead_whole: bool) -> bool:
    """An enabling clause's items state no rule (the regulation does): known by its lead-in, or, where the
    lead-in is not (or not wholly) in the text, by the item's own grammar."""
    if authorises_regulation(lead):
        return False
    return bool(lead and lead_whole) or not _WHAT_A_REGULATION_GOVERNS.match(item)


def split_sentences(text: str, min_chars: int = 25, max_chars: int = 700,
                    opens_mid_sentence: bool = False) -> list[str]:
    """Sentences of a passage; a lead-in and its numbered list stay one sentence ("beträgt 1. ..., 2. ...").

    A statute's enumeration can run over a page ("mindestens eine der folgenden Maßnahmen: 1. …, 2. …, … 5. …"):
    one longer than `max_chars` is cut, and each item the cut lost is quoted on its own ("4. Absaugung von
    Radon …"), so no item is lost; scored by its own words, an item competes with the other sentences as an
    equal (with its lead-in every item would score as the lead-in does). `opens_mid_sentence`: the text
    continues a sentence begun elsewhere (a continuation chunk); that fragment is not quoted, but the list
    items it holds are whole, and are."""
    out = []
    for index, pieces in enumerate(_sentence_pieces(text)):
        whole = " ".join(pieces)
        lead, items = _items(pieces)
        fragment = index == 0 and opens_mid_sentence
        quoted = "" if fragment else _cut(whole, max_chars)
        out += [quoted] if quoted else []
        if fragment or len(whole) > max_chars:  # the items the fragment holds or the cut lost, each on its own
            out += [_cut(item, max_chars) for item in items
                    if item not in quoted and _states_a_rule(item, lead, not fragment)]
    return [sentence for sentence in out if len(sentence) >= min_chars]


# A table as a PDF's text layer gives it: a cell a line, short and without a sentence's end ("Westmark 2",
# "31.12.2014"; "über 20 bis 100", "Tonnen", "0,0031"). A run of such lines is a table; prose wrapped at
# the page's width runs longer, and a heading or the end of a paragraph stands alone.
_CELL_MAX_CHARS = 45
_TABLE_MIN_LINES = 6
_CELL_END = re.compile(r"[.!?;:]$")
# a value cell: a figure, a date, a range of them, with a currency or percent ("30 bis 70", "< 0,1", "30. 6.2001")
_VALUE_CELL = patterns.value_cell()
# an entry's number ("1.4.2.1", "9.4") is a label, not a figure; German writes a decimal with a comma
_NUMBERING = re.compile(r"^\d{1,2}(?:\.\d{1,2}){1,4}\.?$")
_ROW_MAX_LABEL_LINES = 6


def _is_cell(line: str) -> bool:
    return 0 < len(line) <= _CELL_MAX_CHARS and not _CELL_END.search(line)


def table_rows(text: str) -> list[str]:
    """The rows of the tables in a passage, each quotable on its own: a row is the label cells that name it
    followed by the value cells that give its figures ("Westmark 2 31.12.2014"). A table states its figures in
    no sentence, so without its rows no figure of it could be quoted. Cells that name no figure (a table of
    words, a table of contents) make no row."""
    lines = [" ".join(line.split()) for line in text.splitlines()]
    rows: list[str] = []
    start = 0
    while start < len(lines):
        end = start
        while end < len(lines) and _is_cell(lines[end]):
            end += 1
        if end - start >= _TABLE_MIN_LINES:
            rows += _rows_of(lines[start:end])
        start = max(end, start + 1)
    return rows


def _rows_of(cells: list[str]) -> list[str]:
    rows: list[str] = []
    labels: list[str] = []
    values: list[str] = []
    for cell in [*cells, ""]:
        if cell and _VALUE_CELL.match(cell) and not _NUMBERING.match(cell):
            values.append(cell)
            continue
        if values:  # a label after values opens the next row
            if labels:
                rows.append(" ".join(labels[-_ROW_MAX_LABEL_LINES:] + values))
            labels, values = [], []
        if cell:
            labels.append(cell)
    return rows


def named_rows(rows: list[str], question: str, table_name: str = "") -> set[str]:
    """The rows of a table the question names by label: a table is looked up by its labels ("Westmark 2"), so
    a word of the question that labels exactly one row names that row, whatever the rest of the row says. A
    word many rows share (a column's unit, "Kernkraftwerk") names none, nor does the table's own name
    ("Anlage"), which its caption puts before the first row."""
    own = {word.casefold() for word in _WORD.findall(table_name)}
    asked = {word.casefold() for word in _WORD.findall(question) if len(word) >= 4} - own
    labels = [{word.casefold() for word in _WORD.findall(row)} & asked for row in rows]
    named: set[str] = set()
    for row, words in zip(rows, labels, strict=True):
        if any(sum(word in other for other in labels) == 1 for word in words):
            named.add(row)
    return named


_NEW_PARAGRAPH = re.compile(r"^(?:\(\d+[a-z]?\)|\d+[a-z]?\.\s|[a-z]\)\s|§)")


def _body(text: str, heading: str) -> str:
    return (text[len(heading):] if heading and text.startswith(heading) else text).strip()


def passage_rows(text: str, heading: str = "") -> list[str]:
    """The table rows `passage_sentences` gives of the same passage (read without its heading line)."""
    return table_rows(_body(text, heading))


# a line that is only a label ("Tabelle 2", "Anlage 4", "Teil B") heads what follows it: it is no word of the
# sentence after it (a caption's label can stand alone at the foot of a page, its table on the next)
_LABEL_LINE = re.compile(rf"^[ \t]*(?:{alternation('CAPTION_LABELS')})[ \t]+"
                         r"[0-9A-Z][0-9a-z.]{0,5}[ \t]*$\n?", re.MULTILINE)


def passage_sentences(text: str, heading: str = "", continuation: bool = False, min_chars: int = 25) -> list[str]:
    """The sentences a passage states, each verbatim on its page: without the heading line (a continuation
    chunk repeats it although its page does not show it), without a leading fragment of the sentence the
    previous chunk began (a continuation's first sentence, unless a paragraph or list item opens it; any
    first sentence in lower case) but with the list items that fragment holds, and without headings or
    labels alone (`_LABEL_LINE`); with the rows of its tables (`table_rows`), which state their figures in no
    sentence."""
    body = _body(text, heading)
    fragment = body[:1].islower() or (continuation and not _NEW_PARAGRAPH.match(body))
    sentences = split_sentences(_LABEL_LINE.sub("", body), min_chars=min_chars, opens_mid_sentence=fragment)
    whole = [s for s in sentences if s.endswith((".", "!", "?", ";", ":", "…")) or is_list_item(s)]
    return whole + [row for row in table_rows(body) if row not in whole]


TITLE_LINE_MAX_WORDS, TITLE_LINE_MAX_LINES = 20, 2


def is_title_line(text: str) -> bool:
    """A passage that is only a title or a heading ("Guide to Quantum Detector Calibration", "4 Intervals and
    records", "§§ 14 bis 16 (weggefallen)"): a line or two of a few words, and no sentence in it. A short
    table, line under line, is no title."""
    lines = [line for line in text.splitlines() if line.strip()]
    return len(lines) <= TITLE_LINE_MAX_LINES and len(text.split()) <= TITLE_LINE_MAX_WORDS \
        and not passage_sentences(text)


def concepts(query: str, language: str, limit: int = 7) -> list[str]:
    """Content words of the query in their written form (no question words), longest-first ties kept in order."""
    stop = question_stop_words()
    seen: set[str] = set()
    found = []
    for word in _WORD.findall(query):
        key = word.lower()
        if len(word) < 4 or key in stop or key in seen:
            continue
        seen.add(key)
        found.append(word)
    return found[:limit]


def stems(text: str) -> set[str]:
    """Stems in both stemmers, so an English concept can match English text and German compounds match."""
    return set(analyze(text, "de")) | set(analyze(text, "en"))


def _held(phrase: str, text_stems: set[str]) -> bool:
    """Every word of `phrase` is in the text: as itself (either stemmer), or as all of its compound parts."""
    words = [w for w in re.findall(r"\w+", phrase.lower()) if len(w) > 2]
    if not words:
        return False
    return all(_word_held(word, text_stems) or any(_word_held(form, text_stems) for form in _plural_forms(word))
               for word in words)


def _word_held(word: str, text_stems: set[str]) -> bool:
    whole = set(analyze(word, "de")[:1]) | set(analyze(word, "en")[:1])
    parts = set(analyze(" ".join(compound_parts(word)), "de")) if compound_parts(word) else set()
    return bool(whole & text_stems or (parts and parts <= text_stems))


def _plural_forms(word: str) -> list[str]:
    """The word read as an irregular plural: its singulars, and a compound's with its last part's singular
    ("organdosen" -> "organdosis")."""
    forms = singular_forms(word)
    parts = compound_parts(word)
    if parts:
        forms += ["".join(parts[:-1]) + form for form in singular_forms(parts[-1])]
    return forms


def contains_concept(concept: str, text_stems: set[str], alternatives: Sequence[str] | None = None) -> bool:
    """The concept (or one of its alternatives, e.g. glossary translations) is in the text: each of its words
    as itself or as all of its compound parts — a compound is not found by one of its parts alone."""
    return any(_held(candidate, text_stems) for candidate in [concept, *(alternatives or [])])


def authorises_regulation(sentence: str) -> bool:
    """The sentence empowers someone to issue a regulation (an enabling clause), in German drafting formulas."""
    return bool(_AUTHORISES_REGULATION.search(sentence))


def asks_about_authorisation(question: str) -> bool:
    """The question is about who may issue a regulation: then enabling clauses answer it."""
    return bool(_ASKS_ABOUT_AUTHORISATION.search(question))


def has_figure(sentence: str) -> bool:
    return bool(figure_pattern().search(sentence))


def quote_reason(sentence: str, language: str) -> str | None:
    """Why a sentence must be kept verbatim, or None when it is ordinary prose."""
    if has_figure(sentence):
        return run_text(language)["quote_figure"]
    if _DUTY.search(sentence):
        return run_text(language)["quote_duty"]
    if _DEFINITION.search(sentence):
        return run_text(language)["quote_definition"]
    return None




_WEB_ADDRESS = re.compile(r"\b(?:https?://|www\.)\S+|\bdoi:\s*\S+", re.IGNORECASE)
_BIBLIOGRAPHY_KEY = re.compile(r"^\s*\[[^\]\s]{2,40}\]\s")  # "[Mueller2022] B. Mueller, …"


def points_elsewhere(sentence: str, passage: str = "") -> bool:
    """A sentence that points to other text instead of stating something: one with a web address or DOI
    ("Data are available at https://…"), or a piece of a bibliography entry of `passage` (a line opening with
    its key, "[Mueller2022] B. Mueller, Title, J. …", which the sentence splitter cuts at every initial)."""
    if _WEB_ADDRESS.search(sentence) or _BIBLIOGRAPHY_KEY.match(sentence):
        return True
    shown = " ".join(sentence.split())
    return bool(shown) and any(shown in " ".join(line.split()) for line in passage.splitlines()
                               if _BIBLIOGRAPHY_KEY.match(line))
