"""How an answer names a document and a section: the registry's abbreviation or title, the section's number."""

from __future__ import annotations

import pytest

from rabbithole_lab.kb.store.registry import DISPLAY_NAME_MAX_CHARS, DocumentRegistry, RegistryEntry
from rabbithole_lab.reasoning.extractive.writer.answer import Provision, names_provision, shown_section

LONG_TITLE = "The approach to the supervision of moorings, berths and anchorages in tidal harbours"


def test_a_document_is_named_by_its_abbreviation_else_its_title_else_its_file():
    assert len(LONG_TITLE) > DISPLAY_NAME_MAX_CHARS
    registry = DocumentRegistry([
        RegistryEntry("QStrG.pdf", "laws", ["QStrG", "Quantenstrahlenschutzgesetz"]),
        RegistryEntry("rb_doc_3__ss-moorings.md", "rules", ["rb_doc_3__ss-moorings", "SS4/31 – Moorings", "SS4/31"]),
        RegistryEntry("rb_doc_9__rules_harbour-dues.md", "rules", ["rb_doc_9__rules_harbour-dues", "Harbour Dues"]),
        RegistryEntry("rb_doc_5__long.md", "rules", ["rb_doc_5__long", LONG_TITLE]),
        RegistryEntry("scan_0042.pdf", "misc", ["scan_0042"]),
        RegistryEntry("bericht-2024.pdf", "misc", ["bericht-2024", "Microsoft Word - Bericht_final.docx"]),
        RegistryEntry("notes.pdf", "misc", ["notes", "Untitled", "Field notes on tidal berths"]),
    ])
    assert registry.display_name("QStrG.pdf") == "QStrG"  # an abbreviation that is the file's stem too
    assert registry.display_name("rb_doc_3__ss-moorings.md") == "SS4/31"
    assert registry.display_name("rb_doc_9__rules_harbour-dues.md") == "Harbour Dues"
    assert registry.display_name("rb_doc_5__long.md") == "rb_doc_5__long"  # a title too long to label a quote
    assert registry.display_name("scan_0042.pdf") == "scan_0042"
    assert registry.display_name("unknown.pdf") == "unknown"
    # what a word processor left in the title field is no title
    assert registry.display_name("bericht-2024.pdf") == "bericht-2024"
    assert registry.display_name("notes.pdf") == "Field notes on tidal berths"


@pytest.mark.parametrize(("section", "shown"), [
    ("2.15 (Chapter 2 Dues > Dues payable on arrival)", "2.15"),
    ("Article 27(3) Mapping of vessels to berths", "Article 27(3)"),
    ("Footnote 12 (Chapter 1 Introduction)", "Footnote 12"),
    ("Article 3A: Materiality", "Article 3A"),
    # a number with its sub-units, a label with another number in its path, and no number stay whole
    ("§ 5 Absatz 2", "§ 5 Absatz 2"),
    ("Anlage 4 Teil B", "Anlage 4 Teil B"),
    ("Chapter 1 Introduction > Table 1: Berths", "Chapter 1 Introduction > Table 1: Berths"),
    ("§ 78", "§ 78"),
    ("Guidance", "Guidance"),
])
def test_a_section_is_shown_as_its_number_without_its_heading_path(section, shown):
    assert shown_section(section) == shown


def test_a_provision_named_either_way_is_named():
    provision = Provision("rb_doc_9__rules_harbour-dues.md", "3.2 (Chapter 3 Dues)", name="Harbour Dues")
    assert provision.label == "Harbour Dues, 3.2"
    assert names_provision("ohne Harbour Dues, 3.2", provision)
    assert names_provision("not rb_doc_9__rules_harbour-dues, 3.2 (Chapter 3 Dues)", provision)
    assert not names_provision("Harbour Dues, 3.3", provision)
    assert Provision("QStrG.pdf", "§ 12").label == "§ 12 QStrG"
