"""The parts of a question: a researcher often asks several things at once ("Welche Einwendungen werden
behandelt, wie viel Zeit soll mindestens dazwischen liegen, und wie lange können sie erhoben werden?").
Each interrogative clause is a part the answer's findings should state, read by its own words: the
sentence that best answers the whole question rarely answers its second and third part.

A part starts where a question word opens a new clause after a comma or "und"/"oder"/"and"/"or" (with a
preposition before it: "bis wann", "unter welchen", "to whom"); statements before the question ("Wir
betreiben ein Labor.") are context, not parts. A clause stating the case before what is asked ("When a firm
…, what …", "Wenn …, welche …") is the last part, read by its subject words: the answer states what is asked
first, and still says what the case is. The question words are the language profiles', of every language they
know (`rabbithole_lab/language`).
"""

from __future__ import annotations

import re

from rabbithole_lab.language import case_opening, conjunctions, question_opening

_OPENING = question_opening()
_CASE = re.compile(rf"^\s*{case_opening()}", re.IGNORECASE)
_JOIN = f"(?:,\\s*(?:(?:{conjunctions()})\\s+)?|\\s+(?:{conjunctions()})\\s+)"
_SPLIT = re.compile(rf"{_JOIN}(?={_OPENING})", re.IGNORECASE)
_STARTS_AS_QUESTION = re.compile(rf"^\s*{_OPENING}", re.IGNORECASE)
_SENTENCES = re.compile(r"(?<=[.?!])\s+(?=[A-ZÄÖÜ])")
MIN_PART_WORDS = 3  # "und wann?" alone says nothing to search by
# A part this short is a phrase, not a clause: its verb and its subject are those of the part before it
# ("…, unter welchen Voraussetzungen", "…, in welcher Form", "…, Wer entscheidet").
FRAGMENT_MAX_WORDS = 3


def question_parts(question: str) -> list[str]:
    """The question's interrogative clauses, in order; one part when it asks one thing (or none is found)."""
    asked = [sentence for sentence in _SENTENCES.split(" ".join(question.split())) if sentence.endswith("?")]
    parts: list[str] = []
    for sentence in asked:
        clauses = [clause.strip(" ,?") for clause in _SPLIT.split(sentence)]
        for clause in clauses:
            if len(clause.split()) < MIN_PART_WORDS and parts:
                parts[-1] = f"{parts[-1]}, {clause}"  # too short to stand alone: it belongs to the clause before
            elif clause:
                parts.append(clause)
    # a clause that does not open with a question word continues the one before ("Welche Pflichten gelten,
    # wenn …" is one part)
    merged: list[str] = []
    for part in parts:
        if merged and not _STARTS_AS_QUESTION.match(part):
            merged[-1] = f"{merged[-1]}, {part}"
        else:
            merged.append(part)
    # the case the question is about, stated before what it asks ("When a firm has to keep its list up to date,
    # what has to be on it?"), asks nothing itself: the parts that ask come first, and the case follows them read
    # by its subject words alone (without "When", which would ask for a date)
    if len(merged) > 1 and states_the_case(merged[0]):
        case = _CASE.sub("", merged.pop(0)).strip(" ,")
        if len(case.split()) >= MIN_PART_WORDS:
            merged.append(case)
    return merged or [question.strip()]


def states_the_case(clause: str) -> bool:
    """The clause opens with a word that states a case ("When a firm …", "For a composite firm …", "Wenn …")
    rather than a question word ("When must …", "Under which conditions …", "Bei wem …")."""
    opening = _CASE.match(clause)
    if opening is None:
        return False
    asks_after_it = _STARTS_AS_QUESTION.match(clause[opening.end():].lstrip())  # "Under which …", "Bei wem …"
    return not _STARTS_AS_QUESTION.match(clause) or not asks_after_it


def leans_on_the_part_before(part: str) -> bool:
    """Whether a part cannot be read by its own words: a phrase without a clause of its own. A clause with a
    pronoun for what the part before named ("wie lange ist er auszulegen") is not one: its own words say what
    it asks, and the question's words, which every part's sentence is also read by, say what "er" is (reading
    such a clause with the part before it lost on-topic sentences of their own subject on the dev questions)."""
    return len(part.split()) <= FRAGMENT_MAX_WORDS


def part_readings(parts: list[str]) -> list[str]:
    """Each part as it is to be read: a part that leans on the one before it (`leans_on_the_part_before`) is
    read together with that part's reading ("Darf die Behörde X zulassen, unter welchen Voraussetzungen"), so
    "unter welchen Voraussetzungen" is not matched to any sentence that merely uses the word."""
    readings: list[str] = []
    for part in parts:
        if readings and leans_on_the_part_before(part):
            readings.append(f"{readings[-1]}, {part}")
        else:
            readings.append(part)
    return readings
