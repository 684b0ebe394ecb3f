"""Language knowledge lives once per language, units in data files a knowledge base can extend (text written
for these tests)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from rabbithole_lab import language
from rabbithole_lab.reasoning.extractive.asked_kinds import asked_kinds, carries
from rabbithole_lab.reasoning.text import has_figure


@pytest.fixture
def restored_units():
    before = language.units()
    yield
    language._units[:] = before
    language.figure_pattern.cache_clear()
    language.stated_patterns.cache_clear()


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
    (tmp_path / language.KB_UNITS_FILE).write_text("# Schifffahrt\nKnoten\tamount\n", encoding="utf-8")
    assert language.extend_units(tmp_path) == 1
    assert carries(sentence, {"amount"}) and has_figure(sentence)
    assert language.extend_units(tmp_path) == 0  # once


def test_a_malformed_units_file_names_its_line(tmp_path, restored_units):
    (tmp_path / language.KB_UNITS_FILE).write_text("Knoten\tspeed\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"\.rabbithole-units\.tsv:1"):
        language.extend_units(tmp_path)


def test_an_english_exclusion_applies_to_german_text_word_by_word():
    from rabbithole_lab.reasoning.dialogue_terms import excluded

    minors = "Für Personen unter 18 Jahren gilt am Kran ein Grenzwert von 80 Prozent."
    adults = "Für alle anderen Personen gilt am Kran ein Grenzwert von 85 Prozent."
    assert excluded(minors, ["persons under 18"]) and excluded(minors, ["Personen unter 18 Jahren"])
    assert not excluded(adults, ["persons under 18"])  # its number is not there


# ---- no module outside language/ lists words of a language ---------------------------------------------
# two words joined by "|", each with a small letter (an acronym's "ICRP|IAEA" names no word of a language)
_WORD = r"(?=[A-Za-zÄÖÜäöüß]{2})[A-Za-zÄÖÜäöüß]*[a-zäöüß][A-Za-zÄÖÜäöüß]*"
_ALTERNATION = re.compile(rf"(?<![\\\w])({_WORD})\|({_WORD})(?![\w])")
# alternations of a format's or a program's words, not of a language
_NOT_LANGUAGE = {"pdf", "md", "txt", "auto", "ollama", "link", "script"}
def modules_with_word_alternations(package: Path) -> set[str]:
    """Modules outside language/ whose string literals hold an alternation of two or more words ("und|oder")."""
    found = set()
    for path in package.rglob("*.py"):
        module = path.relative_to(package).as_posix()
        if module.startswith("language/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and any(
                    not {found_.group(1), found_.group(2)} & _NOT_LANGUAGE
                    for found_ in _ALTERNATION.finditer(node.value)):
                found.add(module)
    return found


def test_words_of_a_language_live_in_its_profile():
    """Every alternation of a language's words is in language/: its word lists, the patterns built from them, and
    each language's citation grammar (citations_de.py, citations_en.py)."""
    holding = modules_with_word_alternations(Path(language.__file__).parents[1])
    assert not holding, sorted(holding)


def test_the_word_check_sees_an_alternation(tmp_path):
    (tmp_path / "language").mkdir()
    (tmp_path / "language" / "de.py").write_text('WORDS = r"(?:und|oder)"\n', encoding="utf-8")
    (tmp_path / "reader.py").write_text('SPLIT = r"\\s(?:und|oder)\\s"\nFILES = r"\\.(?:pdf|md)$"\n', encoding="utf-8")
    assert modules_with_word_alternations(tmp_path) == {"reader.py"}


def test_a_question_divides_where_each_language_asks_again():
    from rabbithole_lab.language import patterns

    split = patterns.clause_split()
    assert [part.strip() for part in split.split("Welche Grenzwerte gelten und wie lange gelten sie?") if part] == [
        "Welche Grenzwerte gelten", "wie lange gelten sie"]
    assert [part.strip() for part in split.split("Which limits apply and how long do they apply?") if part] == [
        "Which limits apply", "how long do they apply"]
    assert patterns.negation().search("ohne Genehmigungsverfahren").group("case") == "Genehmigungsverfahren"
    assert patterns.restriction().search("only adults, please").group("case") == "adults"
