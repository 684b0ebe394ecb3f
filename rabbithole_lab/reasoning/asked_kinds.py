"""What a question asks for, and which sentences carry it: an amount (a figure with its unit), a deadline
(a period, a date or "unverzüglich"), a frequency ("alle zehn Jahre", "jährlich"), a body (an authority, an
office) or a condition ("wenn", "sofern"). The answer's findings state first the sentences that carry what
was asked ("Wie hoch ist der Grenzwert …?" → the sentence with the figure; "Wer ist zuständig …?" → the
sentence naming the authority). German and English question words; sentences in either language (the
corpus is German, a question may be English)."""

from __future__ import annotations

import re

_QUESTION = {
    "amount": re.compile(
        r"\b(?:wie\s+(?:hoch|viel|viele|groß)|grenzwert\w*|höchstwert\w*|werte?\b|betrag|höhe\b|dosis\w*|"
        r"mengen?\b|how\s+(?:much|high|many|large)|limits?\b|values?\b|amounts?\b|dose\b|thresholds?\b)",
        re.IGNORECASE),
    "deadline": re.compile(
        r"\b(?:fristen?\b|wie\s+lange|bis\s+wann|wann\b|wie\s+schnell|innerhalb\s+welche\w*|aufbewahr\w*|"
        r"welche[nm]?\s+(?:zeitraum|datum|termin|stichtag)|bis\s+zu\s+welche\w*|"
        r"how\s+long|how\s+quickly|how\s+soon|by\s+when|by\s+(?:what|which)\s+date|(?:what|which)\s+period|"
        r"when\b|deadlines?\b|periods?\b|retain\w*|kept\b)",
        re.IGNORECASE),
    # how often something recurs: an interval, not a deadline ("alle zehn Jahre", "mindestens einmal jährlich")
    "frequency": re.compile(
        r"\b(?:wie\s+oft|wie\s+häufig|in\s+welche[nm]\s+(?:abständen|abstand|rhythmus|turnus|intervall\w*)|"
        r"how\s+often|how\s+frequently|(?:at|in)\s+what\s+intervals?|how\s+regularly|"
        r"wiederhol\w*|repeat\w*|recurr\w*)", re.IGNORECASE),
    "body": re.compile(
        r"\b(?:wer\b|wem\b|an\s+wen|welche\s+behörde|behörde\w*|zuständig\w*|who\b|whom\b|authorit\w+|"
        r"responsib\w*|competent|notif\w+|melde\w*|anzeige\w*)", re.IGNORECASE),
    "condition": re.compile(
        r"\b(?:voraussetzung\w*|unter\s+welchen|in\s+welchen\s+fällen|ob\b|wann\b|conditions?\b|"
        r"under\s+what|whether|when\b|if\b)", re.IGNORECASE),
}
_SENTENCE = {
    "amount": re.compile(
        r"\d[\d.,]*\s*(?:(?:[Mm]illi|[Mm]ikro|[Kk]ilo|[Gg]iga|[Mm]ega)?(?:[Ss]ievert|[Bb]ecquerel|[Gg]ray)|mSv|µSv|"
        r"Sv|Bq|GBq|MBq|kBq|TBq|Gy|mGy|%|Prozent|Euro|m|cm|mm|kg|g|t)\b"),
    "deadline": re.compile(
        r"\d[\d.,]*\s*(?:Jahre?n?|Monate?n?|Wochen?|Tage?n?|Stunden?|Kalenderjahr\w*)\b|\b(?:ein|zwei|drei|vier|"
        r"fünf|sechs|sieben|acht|neun|zehn|zwölf|dreißig)\s+(?:Jahre?n?|Monate?n?|Wochen?|Tage?n?|Stunden?)\b|"
        r"\b(?:unverzüglich|spätestens|binnen|innerhalb\s+von|Frist\w*|bis\s+zum|längstens)\b|"
        r"\b\d{1,2}\.\s?\d{1,2}\.\s?\d{4}\b|\b\d{1,2}\.\s+(?:Januar|Februar|März|April|Mai|Juni|Juli|August|"
        r"September|Oktober|November|Dezember)\s+\d{4}\b"),
    "frequency": re.compile(
        r"\b(?:alle[nrs]?|jede[nrs]?)\s+(?:\w+\s+)?(?:Jahre?n?|Monate?n?|Wochen?|Tage?n?|Kalenderjahr\w*)\b|"
        r"\b(?:jährlich|halbjährlich|vierteljährlich|monatlich|wöchentlich|täglich|einmal|zweimal)\b|"
        r"\bin\s+(?:regelmäßigen\s+)?Abständen\b|\bIntervall\w*|\bturnusmäßig\b"),
    "body": re.compile(r"\b\w*(?:[Bb]ehörde|[Bb]undesamt|[Mm]inisterium|[Ss]telle|[Kk]ommission|[Aa]mt)\b"),
    "condition": re.compile(r"\b(?:wenn|sofern|soweit|falls|vorausgesetzt|es\s+sei\s+denn|unless|provided)\b"),
}


def asked_kinds(question: str) -> set[str]:
    """What the question asks for: "amount", "deadline", "frequency", "body", "condition" (none: it asks for
    the rule)."""
    return {kind for kind, pattern in _QUESTION.items() if pattern.search(question)}


def carries(sentence: str, kinds: set[str]) -> bool:
    """The sentence states something of a kind the question asks for."""
    return any(_SENTENCE[kind].search(sentence) for kind in kinds)
