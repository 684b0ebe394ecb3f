"""What a question asks for, and the findings that state it first (text written for these tests)."""

from __future__ import annotations

import pytest

from rabbithole_lab.reasoning.extractive.asked_kinds import asked_kinds, carries
from rabbithole_lab.reasoning.extractive.extractive_base import reasoner_words
from rabbithole_lab.reasoning.extractive.writer.answer import Provision, Sentence
from rabbithole_lab.records import ChunkWithInfo


@pytest.mark.parametrize(("question", "kinds"), [
    ("Wie hoch ist der Grenzwert für Lagerarbeiter?", {"amount"}),
    ("Wie lange muss das Logbuch aufbewahrt werden?", {"deadline"}),
    ("Wer ist für die Abnahme der Kräne zuständig?", {"body"}),
    ("Unter welchen Voraussetzungen darf der Kran betrieben werden?", {"condition"}),
    ("How quickly must the operator notify the authority?", {"deadline"}),
    ("Was regelt das Kranbuch?", set()),
    ("Wie oft ist der Kran zu prüfen?", {"frequency"}),
    ("At what intervals must the crane be inspected?", {"frequency"}),
    ("By what date must the crane log be submitted?", {"deadline"}),
    ("Für welchen Zeitraum wird die Kranerlaubnis erteilt?", {"deadline"}),
    # a German compound means what its last part means: a "-menge", "-grenze", "-summe" is a quantity
    ("Bis zu welcher Jahreshubmenge darf der Kran ohne Prüfung laufen?", {"amount"}),
    ("Wo liegt die Traglastobergrenze?", {"amount"}),
    ("Wie setzt sich die Haftungssumme des Kranverleihers zusammen?", {"amount"}),
    ("Bis zu welchem Zeitpunkt ist das Kranbuch vorzulegen?", {"deadline"}),
    ("What percentage of the crane's load may the hook bear?", {"amount"}),
    ("Welcher Grundsatz gilt für die Absätze des Kranbuchs?", set()),
    # "how much" asks for a quantity, "how much time" for a period
    ("Wie viel Zeit hat der Kranführer nach der Störung für seine Meldung?", {"deadline"}),
    ("Wie viele Wochen darf der Kran ungeprüft stehen?", {"deadline"}),
    ("Wie viel Ballast trägt der Kranausleger?", {"amount"}),
    ("Wie viele Anschläger braucht der Kran?", {"amount"}),
    ("Nach wie vielen Tagen ist der Kran erneut zu prüfen?", {"deadline"}),
    ("How much time does the crane operator have to report a fault?", {"deadline"}),
    ("How many days may the crane stand uninspected?", {"deadline"}),
    ("How much ballast does the jib carry?", {"amount"}),
])
def test_a_question_asks_for_kinds_by_its_words(question, kinds):
    assert asked_kinds(question) == kinds


def test_what_is_asked_is_read_in_the_asking_phrase_not_in_the_subject_further_on():
    """The authority a question names as its subject is not what it asks for; the question word says that."""
    assert asked_kinds("Ab welcher Hubmenge ist der Kran der Aufsichtsbehörde zu melden?") == {"amount"}
    assert "body" not in asked_kinds("Bis wann muss die Prüfbescheinigung bei der Behörde sein?")
    assert asked_kinds("Which crane types must the operator report to the authority?") == set()
    # without a question word the whole question is read
    assert asked_kinds("Ist der Kran der Behörde zu melden?") == {"body"}
    assert asked_kinds("Welche Behörde ist für den Kran zuständig?") == {"body"}


@pytest.mark.parametrize("language", ["de", "en"])
def test_the_planned_tasks_ask_for_the_same_kinds_in_either_language(language):
    """"Zuständigkeiten" and "responsibilities" ask for a body alike."""
    asked = [asked_kinds(task.format(focus="Kran")) for task, *_ in reasoner_words(language)["tasks"]]
    assert asked == [set(), {"amount", "deadline"}, {"body", "condition"}, set()]


def test_a_sentence_carries_a_kind_by_its_figures_and_words():
    assert carries("Die Last darf 12 Tonnen nicht übersteigen, höchstens 5 Prozent mehr.", {"amount"})
    # English figures alike: an English rulebook states its amounts and periods in English units
    assert carries("The load may not exceed 12 tonnes, and at most 5 percent more.", {"amount"})
    assert carries("Comments may be made within two weeks.", {"deadline"})
    assert not carries("Comments may be made within two weeks.", {"amount"})
    assert carries("Das Logbuch ist zehn Jahre lang aufzubewahren.", {"deadline"})
    assert carries("Die Meldung ist unverzüglich zu erstatten.", {"deadline"})
    assert carries("Zuständig ist die Landesbehörde für Arbeitsschutz.", {"body"})
    assert carries("Der Kran darf betrieben werden, wenn er abgenommen ist.", {"condition"})
    assert not carries("Das Logbuch ist zehn Jahre lang aufzubewahren.", {"amount", "body"})
    # an interval is a frequency; a date and "längstens" are deadlines
    assert carries("Der Kran ist alle vier Jahre zu prüfen.", {"frequency"})
    assert carries("Die Sichtprüfung ist mindestens einmal jährlich durchzuführen.", {"frequency"})
    assert carries("Die Seile werden in zeitlichen Abständen von zwei bis vier Jahren geprüft.", {"frequency"})
    assert carries("Die Haken werden in Zeitabständen von drei Monaten geprüft.", {"frequency"})
    assert not carries("Die Sichtprüfung ist sorgfältig durchzuführen.", {"frequency", "deadline"})
    assert carries("Das Logbuch ist bis zum 30.6.2031 vorzulegen.", {"deadline"})
    assert carries("Die Kranerlaubnis wird längstens für drei Jahre erteilt.", {"deadline"})
    # a figure's scale in words stands between it and its unit; tonnes, grams and cubic metres are units
    assert carries("Die Haftung ist auf 70 Millionen Euro begrenzt.", {"amount"})
    assert carries("Der Kran hebt bis zu 40 000 Tonnen im Jahr.", {"amount"})
    assert carries("Je Hub sind höchstens 15 Kilogramm Ballast zulässig.", {"amount"})
    assert carries("Der Ballastraum fasst 30 Kubikmeter.", {"amount"})
    assert carries("Das Fundament muss zehn Millionen Jahre lang tragen.", {"deadline"})
    assert not carries("Der Kran hebt bis zu 40 000 Tonnen im Jahr.", {"deadline"})


def _provision(section: str, texts: list[str], scores: list[float]) -> Provision:
    chunk = ChunkWithInfo(chunk_text=" ".join(texts), document="KranV.pdf", page=1, chunk_id=section)
    provision = Provision("KranV.pdf", section, [chunk], [chunk])
    provision.sentences = [Sentence(text, chunk, score, order) for order, (text, score)
                           in enumerate(zip(texts, scores, strict=True))]
    return provision


def test_a_body_is_named_in_any_case_and_number_and_a_verb_on_stellen_names_none():
    # plural and genitive name bodies as the nominative singular does
    assert carries("Am Verfahren sind alle Behörden der Länder und der Gemeinden zu beteiligen.", {"body"})
    assert carries("Die Zustimmung des Bundesamtes für Kranbau ist einzuholen.", {"body"})
    assert carries("Die Ministerien der Länder werden unterrichtet.", {"body"})
    assert carries("Die Prüfstellen übermitteln die Ergebnisse.", {"body"})
    assert carries("Die Kommission gibt eine Empfehlung ab.", {"body"})
    assert carries("Die Vergleichsmessungen führt die Bundesanstalt für Prüfwesen durch.", {"body"})
    # verbs and adverbs that merely end like an office
    assert not carries("Der Betreiber hat sicherzustellen, dass die Seile insgesamt geprüft werden.", {"body"})
    assert not carries("Die Prüfer stellen die Tragfähigkeit fest.", {"body"})
