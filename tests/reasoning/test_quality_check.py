"""The quality check measures the answer, not the writer's choices: a complete answer scores as one, an
off-topic one does not score 100, and every deduction says why (text written for these tests)."""

from __future__ import annotations

import pytest

from rabbithole_lab.reasoning.base import AskedFor
from rabbithole_lab.reasoning.extractive.extractive_reasoner import ExtractiveReasoner
from rabbithole_lab.records import ChunkWithInfo

QUESTION = "Wie hoch ist der Grenzwert für Kranführer, und wie lange ist das Kranbuch aufzubewahren?"
LIMITS = ("§ 3 Grenzwerte\n(1) Für Kranführer gilt ein Grenzwert der Lärmdosis von 85 Prozent des Tageswerts. "
          "(2) Für Kranführer unter 18 Jahren gilt ein Grenzwert von 80 Prozent des Tageswerts.")
RECORDS = ("§ 7 Kranbuch\n(1) Der Betreiber führt für jeden Kran ein Kranbuch. (2) Das Kranbuch ist zehn Jahre "
           "lang aufzubewahren. (3) Der Hafenmeister prüft das Kranbuch jährlich.")
PAPER = ("Appendix\nData are available at https://example.org for all measurements of this study. "
         "The authors thank the harbour staff for their help.")


@pytest.fixture(scope="module")
def reasoner(demo_kb):
    return ExtractiveReasoner(demo_kb.index.embedder)


def _sources() -> list[ChunkWithInfo]:
    return [ChunkWithInfo(chunk_text=text, document=doc, page=page, chunk_id=f"{doc}{section}", section=section,
                          char_start=1_000 * page)
            for doc, page, section, text in (("KranV.pdf", 2, "§ 3", LIMITS), ("KranV.pdf", 4, "§ 7", RECORDS),
                                             ("Paper.pdf", 9, "", PAPER))]


COMPLETE = ("**Ergebnis:** Maßgeblich ist § 3 KranV.\n"
            "§ 3 KranV: „(1) Für Kranführer gilt ein Grenzwert der Lärmdosis von 85 Prozent des Tageswerts.“ "
            "[KranV.pdf, S. 2]\n"
            "§ 7 KranV: „(2) Das Kranbuch ist zehn Jahre lang aufzubewahren.“ [KranV.pdf, S. 4]")


def test_a_complete_answer_scores_as_one(reasoner):
    quality = reasoner.assess_quality(QUESTION, COMPLETE, _sources(), "de", asked=AskedFor(question=QUESTION))
    assert quality.query_relevance == 100 and quality.citation_correctness == 100
    assert quality.factual_accuracy == 100 and quality.structural_integrity == 100
    assert quality.passes(450), quality.issues_found
    assert quality.issues_found == []


def test_an_off_topic_answer_does_not_score_100(reasoner):
    off = ("**In short:** The decisive provision is 9 Paper.\n"
           "Paper: “Data are available at https://example.org for all measurements of this study.” [Paper.pdf, p. 9]")
    quality = reasoner.assess_quality(QUESTION, off, _sources(), "en", asked=AskedFor(question=QUESTION))
    assert quality.query_relevance == 0 and quality.semantic_validity == 0
    assert not quality.passes(375)
    assert quality.issues_found  # it says why


def test_a_part_left_unanswered_costs_its_share_and_is_named(reasoner):
    half = COMPLETE.rsplit("\n", 1)[0]  # without the retention period
    quality = reasoner.assess_quality(QUESTION, half, _sources(), "de", asked=AskedFor(question=QUESTION))
    assert 0 < quality.query_relevance < 100
    assert any("wie lange ist das Kranbuch aufzubewahren" in issue for issue in quality.issues_found)


def test_a_part_counts_as_far_as_its_quotation_states_it(reasoner):
    """Two quotations both hold the part's word and a period; the one that states how long the book is kept
    answers the part, the one about lending a copy hardly does (the sentence model reads them apart)."""
    records = RECORDS + " (4) Eine Abschrift des Kranbuchs darf der Betreiber für zwei Wochen an die Werft geben."
    sources = [_sources()[0], ChunkWithInfo(chunk_text=records, document="KranV.pdf", page=4, chunk_id="kranv7",
                                            section="§ 7", char_start=4_000)]
    question = "Wie lange ist das Kranbuch aufzubewahren?"
    keeping = ("**Ergebnis:** Maßgeblich ist § 7 KranV.\n"
               "§ 7 KranV: „(2) Das Kranbuch ist zehn Jahre lang aufzubewahren.“ [KranV.pdf, S. 4]")
    lending = ("**Ergebnis:** Maßgeblich ist § 7 KranV.\n"
               "§ 7 KranV: „(4) Eine Abschrift des Kranbuchs darf der Betreiber für zwei Wochen an die Werft geben.“ "
               "[KranV.pdf, S. 4]")
    kept = reasoner.assess_quality(question, keeping, sources, "de", asked=AskedFor(question=question))
    lent = reasoner.assess_quality(question, lending, sources, "de", asked=AskedFor(question=question))
    assert lent.query_relevance < kept.query_relevance
    assert lent.citation_correctness == kept.citation_correctness == 100


def test_the_lead_must_state_what_is_asked(reasoner):
    # the period is in the answer, but only below the first section heading
    late = COMPLETE.replace("\n§ 7 KranV:", "\n\n**Aufgabe 1: Kranbuch**\n\n**§ 7 KranV**:")
    quality = reasoner.assess_quality(QUESTION, late, _sources(), "de", asked=AskedFor(question=QUESTION))
    full = reasoner.assess_quality(QUESTION, COMPLETE, _sources(), "de", asked=AskedFor(question=QUESTION))
    assert quality.query_relevance < full.query_relevance
    assert any("Frist" in issue for issue in quality.issues_found)


def test_what_the_case_tells_is_not_asked(reasoner):
    """A sentence telling the case ("… when the crane lifts a load.") asks for no period: the kinds asked are
    read from the question's parts, so a complete answer to "how high is the limit" is not missing a deadline."""
    rules = ("Rule 3 Noise limits\n(1) The noise limit for crane operators is 85 % of the daily noise dose. "
             "(2) The harbour master checks the noise dose of crane operators every year.")
    sources = [ChunkWithInfo(chunk_text=rules, document="CraneRules.pdf", page=3, chunk_id="crane3", section="Rule 3",
                             char_start=3_000)]
    question = ("Our crane operator is exposed to noise when the crane lifts a load. "
                "How high is the noise limit for crane operators?")
    lead = ("**In short:** The decisive provision is Rule 3 CraneRules.\n"
            "Rule 3 CraneRules: “(1) The noise limit for crane operators is 85 % of the daily noise dose.” "
            "[CraneRules.pdf, p. 3]")
    quality = reasoner.assess_quality(question, lead, sources, "en", asked=AskedFor(question=question))
    assert quality.query_relevance == 100, quality.issues_found
    # a period that is asked is still asked
    asked_when = question + " When is the noise dose checked?"
    quality = reasoner.assess_quality(asked_when, lead, sources, "en", asked=AskedFor(question=asked_when))
    assert quality.query_relevance < 100


def test_an_excluded_case_and_an_invented_quotation_are_deducted_with_their_reasons(reasoner):
    minors = COMPLETE + ("\n§ 3 KranV: „(2) Für Kranführer unter 18 Jahren gilt ein Grenzwert von 80 Dezibel je "
                         "Schicht.“ [KranV.pdf, S. 2]")
    excluded = reasoner.assess_quality(QUESTION, minors, _sources(), "de",
                                       asked=AskedFor(question=QUESTION, exclusions=["Kranführer unter 18 Jahren"]))
    assert excluded.semantic_validity <= 50
    assert any("ausgeschlossen" in issue for issue in excluded.issues_found)
    invented = COMPLETE + "\n§ 9 KranV: „Kranführer dürfen unbegrenzt arbeiten.“ [KranV.pdf, S. 4]"
    made_up = reasoner.assess_quality(QUESTION, invented, _sources(), "de", asked=AskedFor(question=QUESTION))
    assert made_up.factual_accuracy < 100 and made_up.citation_correctness < 100
    assert any("keiner gefundenen Stelle" in issue for issue in made_up.issues_found)


def test_what_the_researcher_added_must_be_quoted(reasoner):
    asked = AskedFor(question=QUESTION, parts=["Hafenmeister"])
    missing = reasoner.assess_quality(QUESTION, COMPLETE, _sources(), "de", asked=asked)
    held = reasoner.assess_quality(QUESTION, COMPLETE + (
        "\n§ 7 KranV: „(3) Der Hafenmeister prüft das Kranbuch jährlich.“ [KranV.pdf, S. 4]"), _sources(), "de",
        asked=asked)
    assert missing.query_relevance < held.query_relevance == 100
    assert any("Hafenmeister" in issue for issue in missing.issues_found)


def test_an_addition_quoted_in_another_form_is_no_false_alarm(reasoner):
    """What the researcher added is held by a quotation that states it in another form: a plural the stemmer
    does not bring back ("Lärmdosen" by "Lärmdosis"), or, asked in English, the glossary's German term for it
    ("skin" by "Haut"); a word the quotations do not hold is still named."""
    plural = reasoner.assess_quality(QUESTION, COMPLETE, _sources(), "de",
                                     asked=AskedFor(question=QUESTION, parts=["Lärmdosen"]))
    assert plural.query_relevance == 100, plural.issues_found
    assert not any("Lärmdosen" in issue for issue in plural.issues_found)
    skin = ("§ 4 Schutz der Beschäftigten\n(1) Beschäftigte tragen zum Schutz der Haut Handschuhe. "
            "(2) Die Handschuhe sind jährlich zu prüfen.")
    sources = [*_sources(), ChunkWithInfo(chunk_text=skin, document="KranV.pdf", page=3, chunk_id="KranV§4",
                                          section="§ 4", char_start=3_000)]
    question = "Which protection do workers get?"
    answer = ("**In short:** The decisive provision is § 4 KranV.\n"
              "§ 4 KranV: “(1) Beschäftigte tragen zum Schutz der Haut Handschuhe.” [KranV.pdf, p. 3]")
    held = reasoner.assess_quality(question, answer, sources, "en", asked=AskedFor(question=question, parts=["skin"]))
    assert held.query_relevance > 50 and not any("skin" in issue for issue in held.issues_found), held.issues_found
    missing = reasoner.assess_quality(question, answer, sources, "en",
                                      asked=AskedFor(question=question, parts=["harbour master"]))
    assert any("harbour master" in issue for issue in missing.issues_found), missing.issues_found
