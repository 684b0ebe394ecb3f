"""What a question asks for, and the findings that state it first (text written for these tests)."""

from __future__ import annotations

import pytest

from rabbithole_lab.reasoning.answer import AnswerPlan, Provision, Sentence, plan_answer
from rabbithole_lab.reasoning.answer_shape import opening_statements
from rabbithole_lab.reasoning.asked_kinds import asked_kinds, carried_kinds, carries
from rabbithole_lab.reasoning.extractive_base import reasoner_words
from rabbithole_lab.records import ChunkWithInfo


@pytest.mark.parametrize(("question", "kinds"), [
    ("Wie hoch ist der Grenzwert für Lagerarbeiter?", {"amount"}),
    ("Wie lange muss das Logbuch aufbewahrt werden?", {"deadline"}),
    ("Wer ist für die Abnahme der Kräne zuständig?", {"body"}),
    ("Unter welchen Voraussetzungen darf der Kran betrieben werden?", {"condition"}),
    ("How quickly must the operator notify the authority?", {"deadline", "body"}),
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
])
def test_a_question_asks_for_kinds_by_its_words(question, kinds):
    assert asked_kinds(question) == kinds


@pytest.mark.parametrize("language", ["de", "en"])
def test_the_planned_tasks_ask_for_the_same_kinds_in_either_language(language):
    """"Zuständigkeiten" and "responsibilities" ask for a body alike."""
    asked = [asked_kinds(task.format(focus="Kran")) for task, _ in reasoner_words(language)["tasks"]]
    assert asked == [set(), {"amount", "deadline"}, {"body", "condition"}, set()]


def test_a_sentence_carries_a_kind_by_its_figures_and_words():
    assert carries("Die Last darf 12 Tonnen nicht übersteigen, höchstens 5 Prozent mehr.", {"amount"})
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


def test_the_findings_state_the_sentence_that_carries_what_was_asked_even_when_it_scores_lower():
    decisive = _provision("§ 3", ["Der Betreiber führt ein Logbuch über jeden Kran.",
                                  "Das Logbuch ist zehn Jahre lang aufzubewahren.",
                                  "Das Logbuch enthält die Prüfungen."], [0.9, 0.4, 0.6])
    other = _provision("§ 4", ["Die Behörde kann Einsicht verlangen."], [0.5])
    plan = AnswerPlan([(decisive, None, decisive.sentences), (other, None, other.sentences)])
    asked = asked_kinds("Wie lange ist das Logbuch aufzubewahren?")
    stated = [s.text for _, s in opening_statements(plan, lambda text: carries(text, asked))]
    assert stated[:2] == ["Der Betreiber führt ein Logbuch über jeden Kran.",
                          "Das Logbuch ist zehn Jahre lang aufzubewahren."]
    # without the kind, the decisive provision's best sentence and the next provision's best
    plain = [s.text for _, s in opening_statements(plan)]
    assert "Das Logbuch ist zehn Jahre lang aufzubewahren." not in plain
    assert plain == ["Der Betreiber führt ein Logbuch über jeden Kran.", "Die Behörde kann Einsicht verlangen."]


def test_the_findings_state_what_was_asked_wherever_the_research_found_it_after_the_plan():
    decisive = _provision("§ 3", ["Der Betreiber führt ein Logbuch über jeden Kran."], [0.9])
    beyond = _provision("§ 8", ["Die Prüfbescheinigung ist drei Jahre lang aufzubewahren.",
                                "Die Prüfbescheinigung ist sorgfältig aufzubewahren.",
                                "Eine Kopie ist zwei Wochen lang auszuhängen."], [0.5, 0.7, 0.05])
    plan = AnswerPlan([(decisive, None, decisive.sentences)])
    asked = asked_kinds("Wie lange ist die Prüfbescheinigung aufzubewahren?")
    stated = [s.text for _, s in opening_statements(plan, lambda text: carries(text, asked), (decisive, beyond),
                                                    floor=0.1)]
    # the plan's statement first, then the sentence of a provision the plan does not quote that carries the
    # period asked for; not the one without a period, and not one below the floor
    assert stated == ["Der Betreiber führt ein Logbuch über jeden Kran.",
                      "Die Prüfbescheinigung ist drei Jahre lang aufzubewahren."]
    # without the provisions found beyond the plan, the findings are the plan's
    assert [s.text for _, s in opening_statements(plan, lambda text: carries(text, asked))] == stated[:1]


def test_the_answer_quotes_first_the_sentences_that_carry_what_was_asked():
    decisive = _provision("§ 3", ["Der Betreiber führt ein Logbuch über jeden Kran des Hafens.",
                                  "Das Logbuch enthält die Prüfungen und die Störungen.",
                                  "Der Betreiber bewahrt das Logbuch zehn Jahre lang auf.",
                                  "Das Logbuch ist in deutscher Sprache zu führen.",
                                  "Das Logbuch liegt im Büro des Hafenmeisters."], [0.9, 0.8, 0.5, 0.7, 0.65])
    further = _provision("§ 5", ["Die Kopie des Logbuchs liegt im Kranhaus aus.",
                                 "Die Kopie ist zwei Jahre lang aufzubewahren.",
                                 "Eine Abschrift ist drei Monate lang auszuhängen."], [0.6, 0.3, 0.05])
    asked = asked_kinds("Wie lange ist das Logbuch aufzubewahren?")
    quoted = [s.text for s in plan_answer([decisive, further], 0.1, max_sentences=5,
                                          asked=lambda text: carries(text, asked)).sentences()]
    # the period is quoted, of the decisive provision and of the room left, though other sentences score higher;
    # one below the floor is not, period or not
    assert "Der Betreiber bewahrt das Logbuch zehn Jahre lang auf." in quoted
    assert "Die Kopie ist zwei Jahre lang aufzubewahren." in quoted
    assert "Eine Abschrift ist drei Monate lang auszuhängen." not in quoted
    # without what was asked, the most similar sentences fill the room
    plain = [s.text for s in plan_answer([decisive, further], 0.1, max_sentences=5).sentences()]
    assert "Der Betreiber bewahrt das Logbuch zehn Jahre lang auf." not in plain
    assert "Die Kopie ist zwei Jahre lang aufzubewahren." not in plain


def test_a_provision_asked_for_two_kinds_is_quoted_with_a_sentence_of_each():
    question = "When must the crane be inspected again, and how quickly must the authority decide?"
    kinds = asked_kinds(question)
    assert {"condition", "deadline"} <= kinds
    provision = _provision("§ 6", ["Der Kran ist erneut zu prüfen, wenn er umgebaut wurde.",
                                   "Die Prüfung entfällt, wenn der Kran stillgelegt ist.",
                                   "Die Behörde entscheidet spätestens vier Wochen nach dem Antrag.",
                                   "Der Prüfer ist unabhängig."], [0.8, 0.7, 0.1, 0.6])
    both = [s.text for s in provision.best(2, asked=lambda text: carried_kinds(text, kinds))]
    # the deadline is stated though two conditions read closer to the question
    assert both == ["Der Kran ist erneut zu prüfen, wenn er umgebaut wurde.",
                    "Die Behörde entscheidet spätestens vier Wochen nach dem Antrag."]
    # asked only whether a sentence carries any kind, the two conditions would be quoted
    assert [s.text for s in provision.best(2, asked=lambda text: carries(text, kinds))] == [
        "Der Kran ist erneut zu prüfen, wenn er umgebaut wurde.",
        "Die Prüfung entfällt, wenn der Kran stillgelegt ist."]
    assert carried_kinds("Der Prüfer ist unabhängig.", kinds) == set()


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
