"""What a question asks for, and which sentences carry it: an amount (a figure with its unit), a deadline
(a period, a date or "unverzüglich"), a frequency ("alle zehn Jahre", "jährlich"), a body (an authority, an
office) or a condition ("wenn", "sofern"). The answer's findings state first the sentences that carry what
was asked ("Wie hoch ist der Grenzwert …?" → the sentence with the figure; "Wer ist zuständig …?" → the
sentence naming the authority). The words and units are the language profiles' (`rabbithole_lab/language`), of
every language it knows: the corpus may be German and a question English."""

from __future__ import annotations

import re
from functools import lru_cache

from rabbithole_lab.language import asked_patterns, question_opening, stated_patterns

KINDS = ("amount", "deadline", "frequency", "body", "condition")
# words after a question word that still say what it asks for ("Wie setzt sich die Haftungssumme …");
# measured on dev gen 1: 2, 3 and 4 words gave the same answers, 4 keeps a verb and an article before the noun
ASKING_PHRASE_WORDS = 4


@lru_cache(maxsize=1)
def _asking_phrase() -> re.Pattern:
    return re.compile(rf"\b{question_opening()}(?:[ \t]+[^\s,;:?.!]+){{0,{ASKING_PHRASE_WORDS}}}", re.IGNORECASE)


def asking_phrases(question: str) -> list[str]:
    """The phrases that ask: each question word with the words right after it ("Ab welcher
    Dosisüberschreitung", "bis wann muss die", "how high is that"); none when the question has no question
    word ("Ist die Anlage zu melden?")."""
    return [match.group(0) for match in _asking_phrase().finditer(question)]


def asked_kinds(question: str) -> set[str]:
    """What the question asks for: "amount", "deadline", "frequency", "body", "condition" (none: it asks for
    the rule). Read in its asking phrases: "bis wann muss die Meldung bei der Behörde sein" asks for a
    deadline, and the authority it names further on is its subject, not what it asks for. A question without
    a question word is read whole."""
    asked = " … ".join(asking_phrases(question)) or question
    return {kind for kind, pattern in asked_patterns().items() if pattern.search(asked)}


def carries(sentence: str, kinds: set[str]) -> bool:
    """The sentence states something of a kind the question asks for."""
    stated = stated_patterns()
    return any(stated[kind].search(sentence) for kind in kinds)


def carried_kinds(sentence: str, kinds: set[str]) -> set[str]:
    """The kinds the question asks for that the sentence states (empty: none, so it reads as False)."""
    stated = stated_patterns()
    return {kind for kind in kinds if stated[kind].search(sentence)}
