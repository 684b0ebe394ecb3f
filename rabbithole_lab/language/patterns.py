"""The patterns the reasoning reads sentences, replies and questions by, built from each language's words
(`de.py`, `en.py`) in one order (German first): the modules that match them hold no words of a language."""

from __future__ import annotations

import re
from functools import lru_cache

from rabbithole_lab.language import LANGUAGES, alternation, words_of


# ---- sentences ----------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def abbreviation_end() -> re.Pattern:
    """A sentence piece ending in an abbreviation's period ("vgl.", "e.g."): no sentence end."""
    return re.compile(rf"\b(?:{alternation('ABBREVIATIONS')})\.$")


@lru_cache(maxsize=1)
def value_cell() -> re.Pattern:
    """A table cell that holds a value: figures, with the words a value range is written with between them."""
    return re.compile(rf"^[<>≤≥]?\s*\d[\d\s.,/%–-]*(?:\s*(?:{alternation('VALUE_WORDS')})\s*[\d\s.,/%–-]*)*$")


@lru_cache(maxsize=1)
def ordinal_end() -> re.Pattern:
    """A sentence piece ending in an ordinal after an article or preposition ("… das 75."): no sentence end."""
    return re.compile(rf"\b(?:{alternation('ORDINAL_LEADS')})\s+\d{{1,4}}\.$", re.IGNORECASE)


@lru_cache(maxsize=1)
def authorises_regulation() -> re.Pattern:
    """The drafting formula of an enabling clause."""
    return re.compile(alternation("AUTHORISES_REGULATION"))


@lru_cache(maxsize=1)
def what_a_regulation_governs() -> re.Pattern:
    """An enabling clause's item: an indirect question or a "dass" clause after its first word."""
    prepositions, openers = alternation("GOVERNS_PREPOSITIONS"), alternation("GOVERNS_OPENERS")
    return re.compile(rf"^\S+\s+(?:(?:{prepositions})\s+)?(?:{openers})\b", re.IGNORECASE)


@lru_cache(maxsize=1)
def asks_about_authorisation() -> re.Pattern:
    return re.compile(alternation("ASKS_ABOUT_AUTHORISATION"), re.IGNORECASE)


@lru_cache(maxsize=1)
def duty() -> re.Pattern:
    """A duty or a permission stated ("muss", "ist verpflichtet", "shall", "may not")."""
    return re.compile(rf"\b(?:{alternation('DUTY')})\b", re.IGNORECASE)


@lru_cache(maxsize=1)
def definition_opener() -> re.Pattern:
    return re.compile(rf"\b(?:{alternation('DEFINITION_OPENERS')})\b", re.IGNORECASE)


# ---- a researcher's reply ---------------------------------------------------------------------------
def _clause_end() -> str:
    return rf"(?=[,.;:!?]|\s(?:{alternation('CLAUSE_CONJUNCTIONS')})\s|$)"


def _case_after(words: str) -> re.Pattern:
    return re.compile(rf"\b(?:{alternation(words)})\s+(?:(?:{alternation('CASE_PREPOSITIONS')})\s+)?"
                      rf"(?P<case>[^,.;:!?]+?){_clause_end()}", re.IGNORECASE)


@lru_cache(maxsize=1)
def negation() -> re.Pattern:
    """A case the reply leaves out, after a negating word ("ohne …", "nicht für …", "except …")."""
    return _case_after("NEGATIONS")


@lru_cache(maxsize=1)
def restriction() -> re.Pattern:
    """A case the reply narrows the question to ("nur Erwachsene", "only adults")."""
    return _case_after("RESTRICTIONS")


@lru_cache(maxsize=1)
def leading_words() -> re.Pattern:
    return re.compile(rf"^(?:(?:{alternation('LEADING_WORDS')})\s+)+", re.IGNORECASE)


@lru_cache(maxsize=1)
def case_after() -> re.Pattern:
    """"keine Regeln für Personen unter 18 Jahren": the case is what the rules are for."""
    return re.compile(rf"^\S+\s+(?:{alternation('CASE_AFTER')})\s+(?P<case>.+)$", re.IGNORECASE)


# ---- a question's parts -----------------------------------------------------------------------------
@lru_cache(maxsize=1)
def clause_split() -> re.Pattern:
    """Where a question divides into the parts it asks: at ";" and "?", at a comma before a question word (in
    German also ", und welche …"), and at each language's "and" before one of its question words."""
    leads = "|".join(module.COMMA_LEAD for module in LANGUAGES.values() if module.COMMA_LEAD)
    comma = rf",\s*(?=(?:{leads}\s+)?(?:{alternation('CLAUSE_OPENERS')})\b)"
    joined = "".join(rf"|\s+{module.PART_CONJUNCTION}\s+(?=(?:{'|'.join(module.PART_OPENERS)})\b)"
                     for module in LANGUAGES.values())
    return re.compile(rf"[;?]|{comma}{joined}", re.IGNORECASE)


# ---- what a reference does --------------------------------------------------------------------------
@lru_cache(maxsize=4)
def delegates_before(language: str) -> re.Pattern:
    """The words before a reference that make it the source of a power to legislate, in `language`."""
    return re.compile(LANGUAGES[language].DELEGATES_BEFORE, re.IGNORECASE)


@lru_cache(maxsize=4)
def applies_in_clause(language: str) -> re.Pattern:
    """The words of a reference's clause that apply the cited rule here, in `language`."""
    return re.compile(LANGUAGES[language].APPLIES_IN_CLAUSE, re.IGNORECASE)


# ---- documents: ingest and names ------------------------------------------------------------------
@lru_cache(maxsize=1)
def page_footer() -> re.Pattern:
    """A page's footer line ("Seite 3 von 12", "StrlSchG - Page 3 of 12")."""
    page, of = alternation("PAGE_WORDS"), alternation("PAGE_OF_WORDS")
    return re.compile(rf"^(.{{0,80}}\s[-–]\s)?({page})\s+\d+(\s+({of})\s+\d+)?\s*$", re.IGNORECASE)


@lru_cache(maxsize=1)
def structural_heading() -> re.Pattern:
    """A heading of the law's structure ("Teil 2", "Kapitel IV", "Part 3")."""
    return re.compile(rf"^\s*({alternation('STRUCTURAL_HEADINGS')})\s+(\d+|[IVXLC]+)\b", re.IGNORECASE)


@lru_cache(maxsize=1)
def body_starters() -> re.Pattern:
    return re.compile(rf"^({alternation('BODY_STARTERS')})\b")


@lru_cache(maxsize=1)
def defined_in_the_sense() -> re.Pattern:
    """A term defined "im Sinne dieses Gesetzes" (each language's form, where it has one)."""
    return re.compile("|".join(module.DEFINED_IN_THE_SENSE for module in LANGUAGES.values()
                               if module.DEFINED_IN_THE_SENSE))


@lru_cache(maxsize=1)
def no_title() -> re.Pattern:
    """What a word processor leaves in a PDF's title field instead of a title ("Microsoft Word - Bericht.docx")."""
    words = "|".join(rf"{word}\b" for word in words_of("NO_TITLE_WORDS"))
    return re.compile(rf"\.(?:docx?|odt|rtf|pdf|tex|indd|pptx?|xlsx?)\b|^(?:Microsoft\b|{words})", re.IGNORECASE)


@lru_cache(maxsize=1)
def name_article() -> re.Pattern:
    return re.compile(rf"^({alternation('NAME_ARTICLES')})\s+", re.IGNORECASE)


@lru_cache(maxsize=1)
def inflection() -> re.Pattern:
    return re.compile(rf"({alternation('INFLECTION_ENDINGS')})$")


@lru_cache(maxsize=1)
def compound_act_name() -> re.Pattern:
    return re.compile(rf"^[A-ZÄÖÜ][a-zäöüß-]{{3,}}({alternation('ACT_TYPE_ENDINGS')})$")
