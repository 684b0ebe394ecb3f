"""Language knowledge lives once per language, units in data files a knowledge base can extend (text written
for these tests)."""

from __future__ import annotations

import pytest

from rabbithole_lab import vocabulary
from rabbithole_lab.reasoning.extractive.asked_kinds import asked_kinds, carries
from rabbithole_lab.reasoning.text import has_figure


@pytest.fixture
def restored_units():
    before = vocabulary.units()
    yield
    vocabulary._units[:] = before
    vocabulary.figure_pattern.cache_clear()
    vocabulary.stated_patterns.cache_clear()


def test_each_language_asks_for_the_same_kinds_by_its_own_words():
    assert asked_kinds("Wie lange ist das Kranbuch aufzubewahren?") == {"deadline"}
    assert asked_kinds("How long must the crane log be kept?") == {"deadline"}
    assert asked_kinds("Wer ist zuständig?") == asked_kinds("Who is responsible?") == {"body"}


def test_a_figure_needs_a_unit_from_the_unit_files():
    assert has_figure("Der Grenzwert beträgt 20 Millisievert im Kalenderjahr.")  # a domain unit
    assert has_figure("Die Haftung ist auf 70 Millionen Euro begrenzt.") and has_figure("Es gilt für 12 % der Fläche.")
    assert carries("Das Kranbuch ist zehn Jahre lang aufzubewahren.", {"deadline"})
    assert not has_figure("Die Anlage 3 gilt entsprechend.")  # a number without a unit is no figure


def test_a_knowledge_base_adds_the_units_of_its_domain(tmp_path, restored_units):
    sentence = "Im Hafenbecken gilt eine Höchstgeschwindigkeit von 6 Knoten."
    assert not carries(sentence, {"amount"})
    (tmp_path / vocabulary.KB_UNITS_FILE).write_text("# Schifffahrt\nKnoten\tamount\n", encoding="utf-8")
    assert vocabulary.extend_units(tmp_path) == 1
    assert carries(sentence, {"amount"}) and has_figure(sentence)
    assert vocabulary.extend_units(tmp_path) == 0  # once


def test_a_malformed_units_file_names_its_line(tmp_path, restored_units):
    (tmp_path / vocabulary.KB_UNITS_FILE).write_text("Knoten\tspeed\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"\.rabbithole-units\.tsv:1"):
        vocabulary.extend_units(tmp_path)


def test_an_english_exclusion_applies_to_german_text_word_by_word():
    from rabbithole_lab.reasoning.dialogue_terms import excluded

    minors = "Für Personen unter 18 Jahren gilt am Kran ein Grenzwert von 80 Prozent."
    adults = "Für alle anderen Personen gilt am Kran ein Grenzwert von 85 Prozent."
    assert excluded(minors, ["persons under 18"]) and excluded(minors, ["Personen unter 18 Jahren"])
    assert not excluded(adults, ["persons under 18"])  # its number is not there
