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
        # a German compound means what its last part means: "Jahresmenge", "Obergrenze", "Deckungssumme" ask for
        # a quantity as "Menge", "Grenze", "Summe" do
        r"\b(?:wie\s+(?:hoch|viel|viele|groß)|\w*(?:werte?|beträge?|betrag|summen?|grenzen?|mengen?|dosis|dosen|"
        r"prozentsatz|anteil)\b|grenzwert\w*|höchstwert\w*|höhe\b|dosis\w*|"
        r"how\s+(?:much|high|many|large)|limits?\b|values?\b|amounts?\b|sums?\b|dose\b|thresholds?\b|"
        r"percent\w*|ceiling\b|cap\b)",
        re.IGNORECASE),
    "deadline": re.compile(
        r"\b(?:fristen?\b|wie\s+lange|bis\s+wann|wann\b|wie\s+schnell|innerhalb\s+welche\w*|aufbewahr\w*|"
        r"(?:welche[nm]?|bis\s+zu\s+welche[mnr]?)\s+(?:zeitraum|zeitpunkt|datum|termin|stichtag|tag)\b|"
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
        # a figure with its unit, its scale in words between them ("500 Millionen Euro")
        r"\d[\d.,]*\s*(?:(?:Millionen|Milliarden|Tausend)\s+)?(?:(?:[Mm]illi|[Mm]ikro|[Kk]ilo|[Gg]iga|[Mm]ega|[Tt]era)?"
        r"(?:[Ss]ievert|[Bb]ecquerel|[Gg]ray|[Gg]ramm|[Ww]att|[Mm]eter|[Ll]iter)|Kubikmeter|Quadratmeter|Tonnen|mSv|µSv|"
        r"Sv|Bq|GBq|MBq|kBq|TBq|Gy|mGy|%|Prozent|Euro|m|cm|mm|kg|g|t|Mg|MW|kW|ha)\b"),
    "deadline": re.compile(
        r"\d[\d.,]*\s*(?:(?:Millionen|Tausend)\s+)?(?:Jahre?n?|Monate?n?|Wochen?|Tage?n?|Stunden?|Kalenderjahr\w*)\b|"
        r"\b(?:ein|zwei|drei|vier|fünf|sechs|sieben|acht|neun|zehn|zwölf|dreißig|hundert)\s+(?:(?:Millionen|Tausend)\s+)?"
        r"(?:Jahre?n?|Monate?n?|Wochen?|Tage?n?|Stunden?)\b|"
        r"\b(?:unverzüglich|spätestens|binnen|innerhalb\s+von|Frist\w*|bis\s+zum|längstens)\b|"
        r"\b\d{1,2}\.\s?\d{1,2}\.\s?\d{4}\b|\b\d{1,2}\.\s+(?:Januar|Februar|März|April|Mai|Juni|Juli|August|"
        r"September|Oktober|November|Dezember)\s+\d{4}\b"),
    "frequency": re.compile(
        r"\b(?:alle[nrs]?|jede[nrs]?)\s+(?:\w+\s+)?(?:Jahre?n?|Monate?n?|Wochen?|Tage?n?|Kalenderjahr\w*)\b|"
        r"\b(?:jährlich|halbjährlich|vierteljährlich|monatlich|wöchentlich|täglich|einmal|zweimal)\b|"
        r"\bin\s+(?:\w+\s+)?(?:Zeit)?[Aa]bständen\b|\bIntervall\w*|\bturnusmäßig\b"),
    # in every case and number ("die Behörden des Bundes", "des Bundesamtes", "die Ministerien"), and a public
    # institute ("Bundesanstalt") as well as an authority; a compound naming an office is a noun, capitalised
    # ("Meldestellen"), where "sicherzustellen" is a verb
    "body": re.compile(
        r"\b\w*(?:[Bb]ehörden?|[Aa]nstalt(?:en)?|[Mm]inisteri(?:ums?|en)|[Kk]ommission(?:en)?)\b|"
        r"\b[A-ZÄÖÜ]\w*(?:stellen?|amt|amtes|ämtern?)\b|\b(?:Stellen?|Amt|Amtes|Ämtern?)\b"),
    "condition": re.compile(r"\b(?:wenn|sofern|soweit|falls|vorausgesetzt|es\s+sei\s+denn|unless|provided)\b"),
}


KINDS = tuple(_QUESTION)  # amount, deadline, frequency, body, condition


def asked_kinds(question: str) -> set[str]:
    """What the question asks for: "amount", "deadline", "frequency", "body", "condition" (none: it asks for
    the rule)."""
    return {kind for kind, pattern in _QUESTION.items() if pattern.search(question)}


def carries(sentence: str, kinds: set[str]) -> bool:
    """The sentence states something of a kind the question asks for."""
    return any(_SENTENCE[kind].search(sentence) for kind in kinds)


def carried_kinds(sentence: str, kinds: set[str]) -> set[str]:
    """The kinds the question asks for that the sentence states (empty: none, so it reads as False)."""
    return {kind for kind in kinds if _SENTENCE[kind].search(sentence)}
