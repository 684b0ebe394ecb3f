"""A long enumeration is quoted as its opening and the items that carry the question; the quotation is still
found on its page."""

from rabbithole_lab.evidence.pages import find_span
from rabbithole_lab.reasoning.extractive.term_weights import TermWeights, sentence_terms
from rabbithole_lab.reasoning.extractive.writer.excerpts import ELISION, excerpt, sentence_pieces

LIST = ("Die Pflicht, den Zutritt von Bodengas in Werkhallen zu erschweren, gilt als erfüllt, wenn mindestens "
        "eine der folgenden Maßnahmen durchgeführt wird: 1. Verringerung der Gaskonzentration unter der Bodenplatte "
        "durch ein Kiesbett mit Entlüftung, 2. gezielte Beeinflussung der Luftdruckdifferenz zwischen dem "
        "Hallenraum und der Bodenluft an den Außenwänden, 3. Begrenzung der Rissbildung in Wänden und Böden mit "
        "Erdkontakt durch bewehrten Beton, 4. Absaugung von Bodengas an den Randfugen der Bodenplatte, "
        "5. Verwendung diffusionshemmender Folien unter der gesamten Bodenplatte.")


def _weigh(question):
    weights = TermWeights([LIST, "Ein Kiesbett ist zu prüfen.", "Die Halle hat Randfugen."])
    wanted = sentence_terms(question)
    return lambda texts: [weights.overlap(wanted, text) for text in texts]


def test_a_long_enumeration_is_quoted_as_its_opening_and_the_items_the_question_asks_about():
    shown = excerpt(LIST, _weigh("Genügt die Absaugung an den Randfugen?"))
    assert shown.startswith("Die Pflicht, den Zutritt von Bodengas")
    assert "4. Absaugung von Bodengas an den Randfugen" in shown
    assert "Kiesbett" not in shown and "Folien" not in shown and ELISION in shown
    assert len(shown) < len(LIST) * 0.75
    assert find_span(LIST, shown) is not None  # the elided quotation is still found where the sentence stands
    # its pieces are the sentence, in order
    assert " ".join(sentence_pieces(LIST)) == LIST and len(sentence_pieces(LIST)) == 6


def test_a_sentence_is_quoted_whole_when_it_is_short_or_no_item_carries_the_question():
    assert excerpt(LIST, _weigh("Wer trägt die Kosten der Messung?")) == LIST
    short = "Die Anzeige ist zu erstatten: 1. schriftlich, 2. binnen eines Monats, 3. bei der Behörde."
    assert excerpt(short, _weigh("Binnen welcher Frist?")) == short
    # most items carry the question: an excerpt would save too little to be worth its elisions
    assert excerpt(LIST, lambda texts: [1.0] * len(texts)) == LIST
    assert excerpt(LIST, lambda texts: [1.0, 1.0, 1.0, 0.0, 1.0]) == LIST
