"""What a passage states: a title line states nothing."""

from __future__ import annotations

import pytest

from rabbithole_lab.reasoning.text import is_title_line

SHORT_TABLE = "Messgerät\nPrüffrist\nDosimeter\n12 Monate\nZählrohr\n6 Monate\nFilmplakette\n1 Monat"


@pytest.mark.parametrize("text", ["Handbuch zur Kalibrierung von Messgeräten (KMG-Handbuch)",
                                  "3 Prüffristen und Nachweise", "§§ 21 bis 23 (weggefallen)",
                                  "Field Guide to Survey Meters"])
def test_a_title_or_heading_alone_is_a_title_line(text):
    assert is_title_line(text)


@pytest.mark.parametrize("text", ["Die Prüfung ist jährlich zu wiederholen.",
                                  "3.2 Intervals Survey meters are checked every six months.", SHORT_TABLE])
def test_a_sentence_or_a_table_row_is_no_title_line(text):
    assert not is_title_line(text)
