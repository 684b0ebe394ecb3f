"""What a question asks for, and which sentences carry it: an amount (a figure with its unit), a deadline
(a period, a date or "unverzüglich"), a frequency ("alle zehn Jahre", "jährlich"), a body (an authority, an
office) or a condition ("wenn", "sofern"). The answer's findings state first the sentences that carry what
was asked ("Wie hoch ist der Grenzwert …?" → the sentence with the figure; "Wer ist zuständig …?" → the
sentence naming the authority). The words and units are the vocabulary's (`rabbithole_lab/vocabulary`), of
every language it knows: the corpus may be German and a question English."""

from __future__ import annotations

from rabbithole_lab.vocabulary import asked_patterns, stated_patterns

KINDS = ("amount", "deadline", "frequency", "body", "condition")


def asked_kinds(question: str) -> set[str]:
    """What the question asks for: "amount", "deadline", "frequency", "body", "condition" (none: it asks for
    the rule)."""
    return {kind for kind, pattern in asked_patterns().items() if pattern.search(question)}


def carries(sentence: str, kinds: set[str]) -> bool:
    """The sentence states something of a kind the question asks for."""
    stated = stated_patterns()
    return any(stated[kind].search(sentence) for kind in kinds)


def carried_kinds(sentence: str, kinds: set[str]) -> set[str]:
    """The kinds the question asks for that the sentence states (empty: none, so it reads as False)."""
    stated = stated_patterns()
    return {kind for kind in kinds if stated[kind].search(sentence)}
