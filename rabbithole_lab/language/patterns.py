"""The patterns the reasoning reads sentences, replies and questions by, built from each language's words
(`de.py`, `en.py`) in one order (German first): the modules that match them hold no words of a language."""

from __future__ import annotations

import re
from functools import lru_cache

from rabbithole_lab.language import LANGUAGES


def _in_order(name: str) -> str:
    """Every language's words for `name` as one alternation, in the order they are written."""
    return "|".join(word for module in LANGUAGES.values() for word in getattr(module, name))


# ---- sentences ----------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def abbreviation_end() -> re.Pattern:
    """A sentence piece ending in an abbreviation's period ("vgl.", "e.g."): no sentence end."""
    return re.compile(rf"\b(?:{_in_order('ABBREVIATIONS')})\.$")


@lru_cache(maxsize=1)
def value_cell() -> re.Pattern:
    """A table cell that holds a value: figures, with the words a value range is written with between them."""
    return re.compile(rf"^[<>≤≥]?\s*\d[\d\s.,/%–-]*(?:\s*(?:{_in_order('VALUE_WORDS')})\s*[\d\s.,/%–-]*)*$")


@lru_cache(maxsize=1)
def ordinal_end() -> re.Pattern:
    """A sentence piece ending in an ordinal after an article or preposition ("… das 75."): no sentence end."""
    return re.compile(rf"\b(?:{_in_order('ORDINAL_LEADS')})\s+\d{{1,4}}\.$", re.IGNORECASE)


@lru_cache(maxsize=1)
def authorises_regulation() -> re.Pattern:
    """The drafting formula of an enabling clause."""
    return re.compile(_in_order("AUTHORISES_REGULATION"))


@lru_cache(maxsize=1)
def what_a_regulation_governs() -> re.Pattern:
    """An enabling clause's item: an indirect question or a "dass" clause after its first word."""
    return re.compile(rf"^\S+\s+(?:(?:{_in_order('GOVERNS_PREPOSITIONS')})\s+)?(?:{_in_order('GOVERNS_OPENERS')})\b",
                      re.IGNORECASE)


@lru_cache(maxsize=1)
def asks_about_authorisation() -> re.Pattern:
    return re.compile(_in_order("ASKS_ABOUT_AUTHORISATION"), re.IGNORECASE)


@lru_cache(maxsize=1)
def duty() -> re.Pattern:
    """A duty or a permission stated ("muss", "ist verpflichtet", "shall", "may not")."""
    return re.compile(rf"\b(?:{_in_order('DUTY')})\b", re.IGNORECASE)


@lru_cache(maxsize=1)
def definition_opener() -> re.Pattern:
    return re.compile(rf"\b(?:{_in_order('DEFINITION_OPENERS')})\b", re.IGNORECASE)


# ---- a researcher's reply ---------------------------------------------------------------------------
def _clause_end() -> str:
    return rf"(?=[,.;:!?]|\s(?:{_in_order('CLAUSE_CONJUNCTIONS')})\s|$)"


def _case_after(words: str) -> re.Pattern:
    return re.compile(rf"\b(?:{_in_order(words)})\s+(?:(?:{_in_order('CASE_PREPOSITIONS')})\s+)?"
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
    return re.compile(rf"^(?:(?:{_in_order('LEADING_WORDS')})\s+)+", re.IGNORECASE)


@lru_cache(maxsize=1)
def case_after() -> re.Pattern:
    """"keine Regeln für Personen unter 18 Jahren": the case is what the rules are for."""
    return re.compile(rf"^\S+\s+(?:{_in_order('CASE_AFTER')})\s+(?P<case>.+)$", re.IGNORECASE)


# ---- a question's parts -----------------------------------------------------------------------------
@lru_cache(maxsize=1)
def clause_split() -> re.Pattern:
    """Where a question divides into the parts it asks: at ";" and "?", at a comma before a question word (in
    German also ", und welche …"), and at each language's "and" before one of its question words."""
    leads = "|".join(module.COMMA_LEAD for module in LANGUAGES.values() if module.COMMA_LEAD)
    comma = rf",\s*(?=(?:{leads}\s+)?(?:{_in_order('CLAUSE_OPENERS')})\b)"
    joined = "".join(rf"|\s+{module.PART_CONJUNCTION}\s+(?=(?:{'|'.join(module.PART_OPENERS)})\b)"
                     for module in LANGUAGES.values())
    return re.compile(rf"[;?]|{comma}{joined}", re.IGNORECASE)
