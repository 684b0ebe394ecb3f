"""The citation grammar on German and English forms, positive and negative, plus property tests."""

import json
import logging
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rabbithole_lab.cli.main import main as cli_main
from rabbithole_lab.kb.ingest.sections import shows_name
from rabbithole_lab.kb.store.registry import DocumentRegistry, RegistryEntry
from rabbithole_lab.language.citations_en import NAMED_RULE_UNIT
from rabbithole_lab.rabbithole.reference_merge import detect_references, merge_hybrid
from rabbithole_lab.rabbithole.references import detect_references_regex, is_own_label, overlaps
from rabbithole_lab.rabbithole.resolve import ReferenceResolver
from rabbithole_lab.schemas import ExtractedReference, ExtractedReferenceList
from tests.conftest import CORPUS


def _one(text, doc=None):
    refs = detect_references_regex(text, doc)
    assert len(refs) == 1, refs
    return refs[0]


@pytest.mark.parametrize(
    "text, book, sections, unit",
    [
        ("§ 78 des Strahlenschutzgesetzes", "Strahlenschutzgesetzes", ["78"], "§"),
        ("§ 45 StrlSchV", "StrlSchV", ["45"], "§"),
        ("§ 7 Absatz 1 Satz 1 Nummer 1 AtG", "AtG", ["7"], "§"),
        ("§ 13 Abs. 3a S. 6 SGB V", "SGB V", ["13"], "§"),
        ("§ 6 Nr. 3 Buchst. b UStG", "UStG", ["6"], "§"),
        ("§§ 8 und 9 StrlSchG", "StrlSchG", ["8", "9"], "§"),
        ("§§ 8, 9 und 12 StrlSchV", "StrlSchV", ["8", "9", "12"], "§"),
        ("§§ 171 bis 174 SGG", "SGG", ["171", "172", "173", "174"], "§"),
        ("§§ 241 ff. SGB V", "SGB V", ["241"], "§"),
        ("§ 9a Absatz 2a des Atomgesetzes", "Atomgesetzes", ["9a"], "§"),
        ("§ 74 a Abs. 1 HGB", "HGB", ["74a"], "§"),
        ("Art. 74 Abs. 2 GG", "GG", ["74"], "Art."),
        ("Artikel 3 der Richtlinie 2013/59/Euratom", "Richtlinie 2013/59/Euratom", ["3"], "Art."),
        ("HGB § 59", "HGB", ["59"], "§"),
        ("§ 43 Abs 2 Satz 1 Zwölftes Buch Sozialgesetzbuch", "Zwölftes Buch Sozialgesetzbuch", ["43"], "§"),
        ("§ 160 Abs 2 Satz 3 Sozialgerichtsgesetz", "Sozialgerichtsgesetz", ["160"], "§"),
        ("§ 7 Abs. 2 der HeizkostenV", "HeizkostenV", ["7"], "§"),
        ("§ 8 UWG 2008", "UWG 2008", ["8"], "§"),
        ("§§ 10, und 12 AtG", "AtG", ["10", "12"], "§"),
    ],
)
def test_german_legal_chains(text, book, sections, unit):
    ref = _one(f"Es gilt {text} entsprechend.")
    assert (ref.type, ref.book, ref.sections, ref.unit) == ("legal_section", book, sections, unit)
    assert ref.original_text == text


def test_chain_with_several_units_shares_its_book():
    ref = _one("unzulässig (§ 6 Nr. 2 und 4, § 7 UWG).")
    assert ref.sections == ["6", "7"] and ref.book == "UWG"


def test_absatz_continuations_are_not_sections():
    ref = _one("§§ 6, 8 Abs. 2 und 3 Nr. 4 UWG")
    assert ref.sections == ["6", "8"]
    ref = _one("gemäß §§ 709 Nr. 3,11, 712 ZPO sicher")
    assert ref.sections == ["709", "712"] and ref.book == "ZPO"


def test_an_absatz_list_with_a_letter_suffix_is_not_sections():
    # an Absatz list with "1a" (as in KrWG § 60) read "1a" and "2" as sections of their own
    assert _one("gelten § 12 Absatz 1, 1a, 2 Satz 1 und 2, Absatz 5 und 6 sinngemäß").sections == ["12"]


@pytest.mark.parametrize(
    ("text", "paragraphs"),
    [
        ("nach § 14 Absatz 3 des Kranschutzgesetzes", {"14": ["3"]}),
        ("nach § 14 Abs. 2 Satz 1 Nr. 3 KranG", {"14": ["2"]}),  # a Satz or Nummer narrows inside the paragraph
        ("nach § 14 Absätze 1a, 2 und 4 KranG", {"14": ["1a", "2", "4"]}),
        ("nach § 14 Absatz 2 bis 4 KranG", {"14": ["2", "3", "4"]}),
        ("nach § 14 Abs. 1 Nr. 2 und Abs. 5 KranG", {"14": ["1", "5"]}),
        ("nach den §§ 3 und 14 Absatz 1 KranG", {"14": ["1"]}),  # § 3 is cited whole
        ("nach § 14 Nummer 2 KranG", {}),
        ("nach § 14 KranG", {}),
    ],
)
def test_the_paragraphs_a_reference_names_are_kept_per_section(text, paragraphs):
    reference = _one(f"Es gilt {text} entsprechend.")
    assert reference.paragraphs == paragraphs
    section = next(iter(paragraphs), reference.sections[-1])
    assert reference.paragraphs_of(f"§ {section}") == paragraphs.get(section, [])


@pytest.mark.parametrize(
    ("text", "books"),
    [
        # the law named at the end covers the member before the article (as in KrWG § 60, AtKostV § 1)
        ("gelten § 12 Absatz 1 und die §§ 13 bis 15 des Bundes-Immissionsschutzgesetzes sinngemäß",
         ["Bundes-Immissionsschutzgesetzes", "Bundes-Immissionsschutzgesetzes"]),
        ("Die nach § 40 Satz 2, den §§ 41 und 42 des Strahlenschutzgesetzes benannten Stellen",
         ["Strahlenschutzgesetzes", "Strahlenschutzgesetzes"]),
        # an explicit own-law member keeps its document; without an article it is one chain already
        ("nach § 4c dieses Gesetzes und § 9 der Atomrechtlichen Verfahrensverordnung",
         [None, "Atomrechtlichen Verfahrensverordnung"]),
        ("nach § 5 und die §§ 7 dieses Gesetzes", [None, None]),
    ],
)
def test_a_member_before_und_die_paragraphs_of_a_law_cites_that_law(text, books):
    assert [r.book for r in detect_references_regex(text, "X.pdf")] == books


def test_a_reference_cut_before_its_book_at_the_end_of_a_chunk_is_left_to_the_next_chunk():
    assert detect_references_regex("in Textform gemäß § 5a Absatz 1 Satz 3 und 4 des", "KrWG.pdf") == []
    assert _one("in Textform gemäß § 5a Absatz 1 Satz 3 und 4 des VwVfG").book == "VwVfG"
    assert _one("Das gilt nach § 3a Absatz 2 der Verordnung.").sections == ["3a"]  # not cut: still a reference
    assert _one("Das gilt nach § 3a Absatz 2.").book is None


def test_a_term_the_text_defines_in_parentheses_is_no_book():
    # as in StandAG § 2, where "(Endlager)" named the EndlagerVlV
    ref = _one("für ein Lager nach § 9a Absatz 3 des Atomgesetzes (Endlager), soweit")
    assert ref.book == "Atomgesetzes" and ref.original_text.endswith("Atomgesetzes")
    assert _one("nach § 5 des Strahlenschutzgesetzes (StrlSchG) gilt").book == "StrlSchG"


def test_a_list_item_on_the_next_line_is_not_a_chain_member():
    # StrlSchG § 92: "... nach diesem Kapitel und nach § 117,\n2. bei der Notfallreaktion ..."
    ref = _one("Rechtsverordnungen nach diesem Kapitel und nach § 117,\n2. bei der Notfallreaktion von den Behörden")
    assert ref.sections == ["117"]
    assert _one("nach den §§ 3,\n5 und 7 UWG").sections == ["3", "5", "7"]  # a wrapped chain still continues


@pytest.mark.parametrize(
    "text, book",
    [
        # sub-parts written as ordinals still lead to the book (StrlSchV, AtEV, StrlSchG cite § 9a AtG so)
        ("im Sinne des § 9a Absatz 3 Satz 1\nzweiter Satzteil des Atomgesetzes oder", "Atomgesetzes"),
        ("nach § 9a Absatz 3 Satz 2 zweiter Halbsatz\ndes Atomgesetzes zu übermitteln", "Atomgesetzes"),
        ("gemäß § 30 Absatz 1, 2 zweiter Teilsatz oder Absatz 5 des Strahlenschutzgesetzes genutzt",
         "Strahlenschutzgesetzes"),
        # a book whose last word is the act type itself
        ("Sicherheit im Sinne von § 232 des\nBürgerlichen Gesetzbuchs leistet", "Bürgerlichen Gesetzbuchs"),
        ("aus Artikel 5 Abs. d des Pariser\nÜbereinkommens etwas anderes", "Pariser Übereinkommens"),
        # a titled act without abbreviation: its title is the book
        ("auf Grund des § 31 Absatz 1 Satz 1 des\nGesetzes über die Umweltverträglichkeitsprüfung in der Fassung",
         "Gesetzes über die Umweltverträglichkeitsprüfung"),
        # acts named by type and date (amendment notes): a document of their own, never the containing one
        ("das zuletzt durch Artikel 5 des Gesetzes vom 6. Oktober 2011 (BGBl. I S. 2", "Gesetzes vom 6. Oktober 2011"),
        ("Zuletzt geändert durch: Art. 1 G v. 10.8.2021 I 3530", "G v. 10.8.2021"),
    ],
)
def test_books_after_ordinal_sub_parts_type_words_titles_and_dates(text, book):
    ref = _one(text)
    assert ref.book == book and ref.document_context == book


def test_the_next_item_of_an_enumeration_after_a_single_section_is_not_a_second_section():
    text = "Der Anzeige sind beizufügen: 1. eine Beschreibung, 2. der Nachweis nach § 8, 3. ein Lageplan der Anlage."
    assert [(r.sections, r.unit) for r in detect_references_regex(text, "QStrG.pdf", "de")] == [(["8"], "§")]
    # a list of sections is written with "§§": its last number ends the sentence and is still a section
    listed = detect_references_regex("Es gelten die §§ 8 und 9. Die Behörde entscheidet.", "QStrG.pdf", "de")
    assert [r.sections for r in listed] == [["8", "9"]]


def test_a_plural_unit_before_a_list_item_is_no_reference():
    assert detect_references_regex("§ 7 Genehmigung von Anlagen\n2. gewährleistet ist", "AtG.pdf")[0].sections == ["7"]
    assert len(detect_references_regex("§ 7 Genehmigung von Anlagen\n2. gewährleistet ist", "AtG.pdf")) == 1


def test_annex_with_part_and_bookless_reference_points_into_its_document():
    ref = _one("Die Dosis ist nach Anlage 4 Teil B zu ermitteln.", doc="StrlSchV.pdf")
    assert ref.sections == ["Anlage 4"] and ref.book is None and ref.document_context == "StrlSchV.pdf"
    ref = _one("Die Anzeige nach § 13 ist zu erstatten.", doc="StrlSchG.pdf")
    assert ref.target == "§ 13 StrlSchG.pdf" and ref.document_context == "StrlSchG.pdf"


def test_self_references_resolve_to_the_containing_document():
    ref = _one("die Vorschriften dieses Gesetzes nach § 2 dieses Gesetzes", doc="QStrG.pdf")
    assert ref.book is None and ref.document_context == "QStrG.pdf"


@pytest.mark.parametrize(
    "text, kind, target",
    [
        ("gemäß Richtlinie 2013/59/Euratom", "document_mention", "Richtlinie 2013/59/Euratom"),
        ("Regulation (EU) 2016/679 applies", "document_mention", "Regulation (EU) 2016/679"),
        ("die Anforderungen der KTA 1401 sind", "document_mention", "KTA 1401"),
        ("zertifiziert nach DIN EN ISO 9001", "document_mention", "DIN EN ISO 9001"),
        ("following ICRP Publication 103", "document_mention", "ICRP Publication 103"),
        ("as shown earlier [12].", "academic_numbered", "[12]"),
        ("as shown [1, 3].", "academic_numbered", "[1,3]"),
        ("proposed by [Mueller2022].", "academic_shortform", "[Mueller2022]"),
        ("see [Townsend79] for details", "academic_shortform", "[Townsend79]"),
        ("Data: https://example.org/quantum-dosimetry.", "external", "https://example.org/quantum-dosimetry"),
    ],
)
def test_documents_standards_citations_and_urls(text, kind, target):
    ref = _one(text)
    assert (ref.type, ref.target) == (kind, target)
    if kind.startswith("academic"):
        cited = _one(text, doc="paper.pdf")
        assert cited.target == f"{target} paper.pdf" and cited.document_context == "paper.pdf"
    assert text[ref.start : ref.end] == ref.original_text


@pytest.mark.parametrize(
    "text, sections, book",
    [
        ("The interval is given in section 4.2 of this guide.", ["4.2"], None),
        ("see section 5.2", ["5.2"], None),
        ("comply with Rule 3.3.16(1) of FSMR", ["3.3.16(1)"], "FSMR"),
        ("Rules 4.9.17 to 4.9.20 apply", ["4.9.17", "4.9.18", "4.9.19", "4.9.20"], None),  # dotted ranges too
        ("Rules 3.2 to 4.1 apply", ["3.2", "4.1"], None),  # different prefixes: the ends only
        ("under section 82 of the Financial Services and Markets Regulations", ["82"],
         "Financial Services and Markets Regulations"),
        ("as described in GEN Rule 2.2.1", ["2.2.1"], "GEN"),
        ("see Chapter 3", ["3"], None),
        ("sections 58 to 61 of FSMR", ["58", "59", "60", "61"], "FSMR"),  # whole-number ranges expand
        ("referred to in section 51(3)(b) and (c), the", ["51(3)(b)", "51(3)(c)"], None),  # a bare sub-part
        ("under section 1(1) and (2) of the FSMR.", ["1(1)", "1(2)"], "FSMR"),  # continues the list
        ("as required under rules 6.1 and 6.3 of this part", ["6.1", "6.3"], None),  # the unit word in lower case
        ("set out in paragraphs 3.4 and 3.5 of SS7/19 for", ["3.4", "3.5"], "SS7/19"),  # a publication's code
    ],
)
def test_english_section_references(text, sections, book):
    ref = _one(text)
    assert ref.type == "section" and ref.sections == sections and ref.book == book


def test_an_abbreviation_in_parentheses_after_rules_is_no_reference():
    assert detect_references_regex("Fund Passporting Rules (FP)\ndoc_id: adgm_doc_5", "FP.md") == []


def test_an_english_book_name_ends_before_the_next_unit():
    refs = detect_references_regex("Sections 58 to 59 of FSMR and Chapter 4 of COBS")
    assert [(r.book, r.sections) for r in refs] == [("FSMR", ["58", "59"]), ("COBS", ["4"])]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("paragraph 64 of Schedule 1 to FSMR", [("FSMR", ["64"]), ("FSMR", ["1"])]),
        ("under paragraph 64(2) of Schedule 1", [(None, ["64(2)"]), (None, ["1"])]),
        ("apply Rule 5 to Authorised Persons", [(None, ["5"])]),
        ("in accordance with Chapter 1 of Part 19 of FSMR", [("FSMR", ["1"]), ("FSMR", ["19"])]),
    ],
)
def test_a_unit_is_no_book_and_an_inner_unit_shares_the_book_of_the_enclosing_one(text, expected):
    assert [(r.book, r.sections) for r in detect_references_regex(text)] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("comply with Articles 3 and 4 of Chapter 5 and Chapters 7-8 of the Harbour Cranes Part",
         [("Harbour Cranes", ["3", "4"]), ("Harbour Cranes", ["5"]), ("Harbour Cranes", ["7", "8"])]),
        ("see Rule 2 or Rule 9 of the Quay Handling Code",
         [("Quay Handling Code", ["2"]), ("Quay Handling Code", ["9"])]),
        # another kind of unit, or a book of its own in between, keeps its own document
        ("see paragraph 2 and Article 9 of the Quay Handling Code", [(None, ["2"]), ("Quay Handling Code", ["9"])]),
        ("under Article 2 of this Regulation and Article 9 of the Quay Handling Code",
         [(None, ["2"]), ("Quay Handling Code", ["9"])]),
    ],
)
def test_units_joined_by_and_share_the_book_named_after_the_last(text, expected):
    assert [(r.book, r.sections) for r in detect_references_regex(text, language="en")] == expected


@pytest.mark.parametrize(
    "text",
    [
        "Im Jahr 2019 wurden 78 Anlagen geprüft.",
        "Der Paragraph wurde 1998 eingeführt; siehe oben.",
        "Die Dosis beträgt 20 Millisievert.",
        "Section headings are bold.",
        "Das Artikelverzeichnis enthält 12 Einträge.",
        "[citation needed]",
    ],
)
def test_no_false_references(text):
    assert detect_references_regex(text) == []


def test_a_bare_label_alone_on_its_line_heads_a_quoted_section():
    refs = detect_references_regex("Die Vorschriften lauten:\n\n§ 185\nDie Gebühr wird fällig.")
    assert [r for r in refs if r.type == "legal_section"] == []


@pytest.mark.parametrize(
    ("text", "joined_books"),
    [
        ("nach § 21b Abs. 3 in Verbindung mit § 54 des Atomgesetzes", ["Atomgesetzes", None]),
        ("nach § 12 i.V.m. § 13 i. V. m. § 14 StrlSchG", ["StrlSchG", "StrlSchG", None]),
        ("§ 5 i.V.m. Art. 3 GG", [None, None]),
        ("§ 12 dieses Gesetzes i.V.m. § 13 StrlSchG", [None, None]),
        ("nach § 20 Absatz 1 Nummer 4 oder § 21, jeweils auch in Verbindung mit § 22 Absatz 3 des "
         "Strahlenschutzgesetzes", ["Strahlenschutzgesetzes", None]),
    ],
)
def test_a_member_joined_by_in_verbindung_mit_keeps_the_later_book_as_a_fallback(text, joined_books):
    refs = detect_references_regex(text, "X.pdf")
    assert [r.joined_book for r in refs] == joined_books
    assert refs[0].book is None or refs[0].book == "dieses Gesetzes"


@pytest.mark.parametrize(("text", "sections"), [("§ 5 i.V.m. § 6", ["5"]), ("§ 3 a.F. gilt", ["3"]),
                                                ("nach § 9a. Der Betreiber", ["9a"])])
def test_an_abbreviation_after_the_number_is_no_letter_suffix(text, sections):
    assert detect_references_regex(text)[0].sections == sections


def test_a_wrapped_citation_alone_on_its_line_still_counts():
    refs = detect_references_regex("Absatz 7 Nummer 2, oder\n§ 66 Absatz 6 Satz 1 Nummer 5\noder einer", "UVPG.pdf")
    assert [r.sections for r in refs] == [["66"]]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("§§ .,;()[]/-abcdefgSatzAbsNrundbisff1234567890AtGStrlSchV\nhttps:/ ")),
               max_size=200))
def test_arbitrary_text_gives_consistent_spans(text):
    refs = detect_references_regex(text, doc="X.pdf")
    for ref in refs:
        assert 0 <= ref.start < ref.end <= len(text)
        assert text[ref.start : ref.end] == ref.original_text
    assert [ref.start for ref in refs] == sorted(ref.start for ref in refs)  # in text order
    # the longer match wins: no two citations (URLs aside) claim the same characters
    cited = [ref for ref in refs if ref.type != "external"]
    assert not any(overlaps(a, b) for i, a in enumerate(cited) for b in cited[i + 1:])


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_unicode_text_never_crashes(text):
    for ref in detect_references_regex(text):
        assert text[ref.start : ref.end] == ref.original_text


@pytest.mark.parametrize(
    ("text", "section", "own"),
    [
        ("[PID 1] Part 6.Chapter 6.78.(5)\nThe Regulator may act under section 78(2).", "Part 6.Chapter 6.78.(5)",
         ["Chapter 6.78.(5)"]),
        ("§ 5 Dosisbegrenzung\n(1) Die Grenzwerte nach § 12 QStrG sind einzuhalten.", "§ 5", ["§ 5"]),
        # a citation in the title is a citation, and the label repeated in the body is one too
        ("§ 212 Grenzwerte (§§ 78, 80)\nDer Grenzwert nach § 78 Absatz 2 gilt; § 212 bleibt.", "§ 212", ["§ 212"]),
    ],
)
def test_own_section_label_in_the_heading_is_not_a_citation(text, section, own):
    references = detect_references_regex(text, "X.pdf")
    assert [r.original_text for r in references if is_own_label(r, text, section)] == own
    assert any(not is_own_label(r, text, section) for r in references)
    assert not any(is_own_label(r, text, "") for r in references)


def test_hybrid_dedups_by_key_and_overlap():
    text = "Nach § 78 des Strahlenschutzgesetzes und gemäß KTA 1401 sowie dem Atomgesetz."
    llm = ExtractedReferenceList(references=[
        ExtractedReference(reference_text="§ 78 des Strahlenschutzgesetzes", reference_type="legal_section",
                           target_document="Strahlenschutzgesetz"),
        ExtractedReference(reference_text="KTA 1401", reference_type="document_mention", target_document="KTA 1401"),
        ExtractedReference(reference_text="Atomgesetz", reference_type="document_mention",
                           target_document="Atomgesetz"),
    ])
    refs = detect_references(text, doc="StrlSchV.pdf", method="hybrid", llm_extract=lambda _: llm)
    assert [(r.extraction_method, r.original_text) for r in refs] == [
        ("regex", "§ 78 des Strahlenschutzgesetzes"), ("regex", "KTA 1401"), ("llm", "Atomgesetz")]
    only_llm = detect_references(text, method="llm", llm_extract=lambda _: llm)
    assert {r.extraction_method for r in only_llm} == {"llm"} and len(only_llm) == 3
    assert merge_hybrid([], only_llm) == only_llm


def test_llm_failure_keeps_the_regex_layer():
    def broken(_text):
        raise TimeoutError("model timed out")

    refs = detect_references("gemäß § 5 StrlSchV", method="hybrid", llm_extract=broken)
    assert [r.target for r in refs] == ["§ 5 StrlSchV"]


def test_a_model_cut_off_by_the_breaker_leaves_the_rules_to_it_without_a_warning(caplog):
    """The breaker hands the step to the extractive stand-in, which extracts nothing (None): that is no
    failure to warn about on every passage."""
    with caplog.at_level(logging.WARNING):
        refs = detect_references("gemäß § 5 StrlSchV", method="hybrid", llm_extract=lambda _text: None)
    assert [r.target for r in refs] == ["§ 5 StrlSchV"] and not caplog.records


# ---- statute text from the shared corpus, annotated by hand for this test -------------------------


def _statute_text(doc, start_marker, length=1200):
    if not CORPUS.is_dir():
        pytest.skip("needs ../shared/corpus/de-strahlenschutz next to the repository (absent here)")
    md = next(CORPUS.glob(f"*/{doc.replace('.pdf', '.md')}")).read_text(encoding="utf-8")
    start = md.index(start_marker)
    return md[start : start + length]


def test_statute_sample_strlschv_55_cites_strlschg_78():
    text = _statute_text("StrlSchV.pdf", "§ 55 Zutritt zu Strahlenschutzbereichen", 3800)
    refs = detect_references_regex(text, doc="StrlSchV.pdf")
    by_book = {(r.book, tuple(r.sections)) for r in refs if r.type == "legal_section"}
    assert any(book and "Strahlenschutzgesetz" in book and "78" in sections for book, sections in by_book)


def test_statute_sample_bookless_references_resolve_to_the_containing_law():
    text = _statute_text("StrlSchG.pdf", "§ 57 Prüfung der angezeigten Tätigkeit", 2600)
    refs = [r for r in detect_references_regex(text, doc="StrlSchG.pdf") if r.type == "legal_section"]
    bookless = [r for r in refs if r.book is None]
    assert bookless and all(r.document_context == "StrlSchG.pdf" for r in bookless)
    cited = {s for r in bookless for s in r.sections}
    assert {"55", "7", "56", "6"} <= cited


def test_refs_cli_writes_the_contract(tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text(
        json.dumps({"id": "a", "text": "Nach § 78 des Strahlenschutzgesetzes und § 5.", "doc": "StrlSchV.pdf"}) + "\n"
        + json.dumps({"id": "b", "text": "Keine Verweise hier."}) + "\n"
    )
    out = tmp_path / "out.jsonl"
    assert cli_main(["refs", "--in", str(source), "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows[0]["id"] == "a" and rows[1] == {"id": "b", "refs": []}
    first, second = rows[0]["refs"]
    assert set(first) == {"start", "end", "type", "book", "sections", "text"}
    assert first["book"] == "Strahlenschutzgesetzes" and first["sections"] == ["78"]
    assert second["book"] == "StrlSchV" and second["sections"] == ["5"]


def test_refs_cli_rejects_malformed_lines(tmp_path, capsys):
    source = tmp_path / "in.jsonl"
    source.write_text("{not json\n")
    assert cli_main(["refs", "--in", str(source), "--out", str(tmp_path / "o.jsonl")]) == 2
    assert "expected a JSON object" in capsys.readouterr().err


# ---- statute forms: where a name ends, table columns, EU article lists, earlier versions ---------


def test_a_titled_act_ends_with_its_noun_phrase():
    ref = _one("gemäß § 12 Absatz 2 des Gesetzes über die Lärmminderung mit den Maßgaben der Behörde", "X.pdf")
    assert ref.book == "Gesetzes über die Lärmminderung"
    ref = _one("nach § 3 des Gesetzes über die sichere Lagerung der Brennelemente und den Schutz", "X.pdf")
    assert ref.book == "Gesetzes über die sichere Lagerung der Brennelemente"


def test_a_table_column_of_an_annex_keeps_the_book_named_after_it():
    ref = _one("die Werte der Anlage 2 Tabelle 3 Spalte 4 der Beispielverordnung übersteigen", "X.pdf")
    assert (ref.book, ref.sections) == ("Beispielverordnung", ["Anlage 2"])


def test_an_article_list_of_an_eu_regulation():
    ref = _one("nach den Artikeln 7, 8 und 12 der Verordnung (EU) 2020/123 gilt", "X.pdf")
    assert (ref.unit, ref.sections, ref.book) == ("Art.", ["7", "8", "12"], "Verordnung (EU) 2020/123")


def test_a_reference_to_an_earlier_version_is_marked():
    old = _one("nach § 4 der Beispielverordnung in der bis zum 30. Juni 2015 geltenden Fassung", "X.pdf")
    assert old.version == "in der bis zum 30. Juni 2015 geltenden Fassung" and old.sections == ["4"]
    assert _one("nach § 4 der Beispielverordnung gilt", "X.pdf").version is None
    assert _one("nach § 9 UWG a. F. gilt", "X.pdf").version == "a. F."


def test_a_hyphenated_law_name_is_a_book():
    assert _one("nach § 3 des Beta-Gesetzes gilt", "X.pdf").book == "Beta-Gesetzes"


def test_refs_names_books_by_the_registry_and_keeps_the_text(tmp_path, demo_db):
    from tests.conftest import DEMO_KB

    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": 1, "text": "Es gilt § 12 des Quantenstrahlenschutzgesetzes."}) + "\n")
    out = tmp_path / "out.jsonl"
    assert cli_main(["--env-file", "none", "refs", "--in", str(source), "--out", str(out), "--kb", str(DEMO_KB),
                     "--db", str(demo_db)]) == 0
    [row] = json.loads(out.read_text())["refs"]
    assert (row["book"], row["raw_book"]) == ("QStrG", "Quantenstrahlenschutzgesetzes")
    assert cli_main(["--env-file", "none", "refs", "--in", str(source), "--out", str(source)]) == 2
    assert source.read_text().strip()  # --out equal to --in: refused, nothing emptied


# ---- English rulebook forms without a unit word (english_grammar.py); text written for these tests --------
def _found(text: str, language: str | None = None) -> list[tuple[str, list[str], str | None]]:
    return [(r.unit, r.sections, r.book) for r in detect_references_regex(text, "Handbook.md", language)]


def test_a_bare_rule_number_after_a_citing_word_is_a_rule_of_the_citing_document():
    assert _found("An insurer must review the plan pursuant to 6.2 every year.") == [("rule", ["6.2"], None)]
    assert _found("The notice described in 3.14 above must be sent in writing.") == [("rule", ["3.14"], None)]
    assert _found("Subject to 2.1(4), 7.5 and 7.6 do not apply to a small insurer.") == [
        ("rule", ["2.1(4)"], None), ("rule", ["7.5"], None), ("rule", ["7.6"], None)]
    assert _found("Notwithstanding 9B.2, the board may delegate the review.") == [("rule", ["9B.2"], None)]
    # a decimal amount or a share is no rule
    assert _found("The buffer rises to 2.5 per cent of the exposure in 2027.") == []



def test_a_list_item_opening_with_rules_cites_them_and_of_the_part_names_their_part():
    # a list item that opens with rule numbers applies them: the citing document's, unless a part is named after
    assert _found("The levy is worked out under: (a) 5.4 for new members ; (b) 5.6 and 5.7 for the rest.") == [
        ("rule", ["5.4"], None), ("rule", ["5.6"], None), ("rule", ["5.7"], None)]
    # a factor, an amount or a multiple opening an item is no rule
    assert _found("The weight equals: (a) 0.8 for short exposures ; (b) 1.5 times the base ; (c) 2.5 million.") == []
    # "… of the Treasury Controls Part": that part's rules, found by its whole name or not at all
    found = detect_references_regex("(4) 3.3 , 3.9 and 4 of the Treasury Controls Part apply to a branch; "
                                    "unless 7.2 applies, report yearly.", "Handbook.md", "en")
    assert [(r.sections, r.book, r.book_exact) for r in found] == [
        (["3.3"], "Treasury Controls", True), (["3.9"], "Treasury Controls", True), (["7.2"], None, False)]
    registry = DocumentRegistry([RegistryEntry("treasury.md", "corpus", ["Treasury Controls"]),
                                 RegistryEntry("Handbook.md", "corpus", ["Handbook"])])
    resolver = ReferenceResolver(SimpleNamespace(registry=registry))
    assert resolver.target_document(found[0]) == ("treasury.md", "corpus")
    assert resolver.target_document(found[2]) == ("Handbook.md", "corpus")
    # a part the registry does not know is no licence to read the rule as the citing document's
    [unknown] = detect_references_regex("as set out in 2.4 of the Market Making Part", "Handbook.md", "en")
    assert resolver.target_document(unknown) == (None, None)

def test_a_rule_of_another_part_is_named_by_the_parts_title():
    assert _found("Assets must be valued as required by Liquidity Coverage Ratio 4.12 for each currency.") == [
        ("rule", ["4.12"], "Liquidity Coverage Ratio")]
    # the list that follows the part's title is the same part's, not rules of the citing document
    assert _found("The plan reflects the hedging policy (Liquidity Coverage Ratio 5.3 and 5.4).") == [
        ("rule", ["5.3", "5.4"], "Liquidity Coverage Ratio")]
    assert _found("Firms should apply Operational Continuity 2.7 when they outsource a service.") == [
        ("rule", ["2.7"], "Operational Continuity")]
    # a chapter of the part with a letter ("3A" is a chapter of its own, not chapter 3)
    assert _found("Liquidity Coverage Ratio 2B lists the eligible assets and Liquidity Coverage Ratio 2C the "
                  "haircuts.") == [
        ("rule", ["2B"], "Liquidity Coverage Ratio"), ("rule", ["2C"], "Liquidity Coverage Ratio")]


def test_a_part_named_by_one_word_is_read_only_as_that_parts_whole_name():
    found = detect_references_regex("Firms report as required by Reporting 3.3 (5)(d) and pay under Fees 3.7 "
                                    "and 3.8.", "Handbook.md", "en")
    assert [(r.sections, r.book, r.book_exact) for r in found] == [
        (["3.3(5)(d)"], "Reporting", True), (["3.7", "3.8"], "Fees", True)]
    # the list goes on after sub-units printed with a space: the rest of it is the same part's, not the citing
    # document's own rules
    [listed] = detect_references_regex("Firms disclose pursuant to Reporting 3.3 (5)(d), 3.4, 3.6B and 3.7A to 3.7C "
                                       "each year.", "Handbook.md", "en")
    assert (listed.sections, listed.book) == (["3.3(5)(d)", "3.4", "3.6B", "3.7A", "3.7C"], "Reporting")
    assert _found("A firm keeps its records pursuant to 4.1 (a) and 4.2 up to date.") == [
        ("rule", ["4.1(a)"], None), ("rule", ["4.2"], None)]
    # a citing word before a bare rule is no part's name; a longer title keeps its own reading
    assert _found("Notwithstanding 2.1, the board may delegate.") == [("rule", ["2.1"], None)]
    assert [(r.book, r.book_exact) for r in detect_references_regex(
        "as required by Liquidity Coverage Ratio 4.12", "Handbook.md", "en")] == [("Liquidity Coverage Ratio", False)]
    # resolved by the whole name only: "Coverage" is a word of a title, not a part's name
    registry = DocumentRegistry([RegistryEntry("reporting.md", "corpus", ["Reporting"]),
                                 RegistryEntry("liquidity-coverage-ratio.md", "corpus",
                                                               ["Liquidity Coverage Ratio"]),
                                 RegistryEntry("ss11.md", "corpus", ["SS11/15 – Solvency II: regulatory reporting"])])
    assert registry.exact_document_name("Reporting") == ("reporting.md", "corpus")
    assert registry.exact_document_name("Coverage") == (None, None)
    [word] = detect_references_regex("apply Coverage 4.12 first", "Handbook.md", "en")
    # what exactness prevents: any other reading finds a document with the word in its file name
    assert word.book_exact and registry.resolve_document_name("Coverage")[0] == "liquidity-coverage-ratio.md"
    resolver = ReferenceResolver(SimpleNamespace(registry=registry))
    assert resolver.target_document(word) == (None, None)
    assert resolver.target_document(found[0]) == ("reporting.md", "corpus")


def test_rules_cited_by_the_name_their_part_gives_them():
    """A part names its rules in their text ("Core Rule 2: A firm must …", held as rule 2.2); other documents
    cite them by that name, and the number is the name's, not a section number."""
    found = detect_references_regex("Firms meet their obligations under Core Rules 2, 4 and 5 and the PRA Core "
                                    "Rule 7 when they book trades abroad.", "guide.md", "en")
    assert [(r.unit, r.sections, r.book) for r in found] == [
        (NAMED_RULE_UNIT, ["Core Rule 2", "Core Rule 4", "Core Rule 5"], None),
        (NAMED_RULE_UNIT, ["PRA Core Rule 7"], None)]
    [standard] = detect_references_regex("Staff must also meet Individual Conduct Standard 2 at all times.", "g.md",
                                         "en")
    assert standard.sections == ["Individual Conduct Standard 2"]
    # the passage that shows a rule's name names itself: it cites nothing by that name
    own = detect_references_regex("Core Rule 1: A firm must act with integrity in all it does.", "core.md", "en")
    assert all(reference.unit != NAMED_RULE_UNIT for reference in own)
    # the passage shows the name at its opening, below a passage corpus's heading line; a longer name is another
    assert shows_name("[PID 0a] 2.2 (Chapter 2 Core Rules)\nCore Rule 2 : A firm must keep records.", "Core Rule 2")
    assert not shows_name("Pilot Core Rule 2: A pilot must stay sober.", "Core Rule 2")
    assert not shows_name("A firm must follow Core Rule 2: it keeps records.", "Core Rule 2")

def test_chapters_after_a_parts_title_are_that_parts_only_when_the_title_is_a_documents_whole_name():
    text = ("Quay Handling Chapters 2 and 3, supplemented by Non-Crane II Firms – Governance Chapter 7, apply. "
            "Responses to Chapter 4 follow.")
    found = detect_references_regex(text, "Handbook.md", "en")
    assert [(r.sections, r.book, r.book_exact) for r in found] == [
        (["2", "3"], "Quay Handling", True), (["7"], "Non-Crane II Firms – Governance", True),
        (["4"], "Responses to", True)]
    registry = DocumentRegistry([RegistryEntry("quay-handling.md", "corpus", ["Quay Handling"]),
                                 RegistryEntry("Handbook.md", "corpus", ["Handbook"]),
                                 RegistryEntry("responses-to-cp1.md", "corpus", ["Responses to CP1"])])
    resolver = ReferenceResolver(SimpleNamespace(registry=registry))
    assert resolver.target_document(found[0]) == ("quay-handling.md", "corpus")
    # words that are no document's whole name leave the chapter in the citing document, as it was read before
    # titles were: "Responses to", and a part this collection does not hold
    assert resolver.target_document(found[2]) == ("Handbook.md", "corpus")
    assert resolver.target_document(found[1]) == ("Handbook.md", "corpus")


def test_a_footnote_marker_is_a_candidate_and_a_quantity_is_not():
    text = ("Branches of overseas insurers are supervised differently. 12 The PRA may ask for more data. "
            "A firm with assets above £50 million, or more than 40 staff, reports quarterly within 10 days.")
    assert _found(text) == [("footnote", ["12"], None)]
    assert _found("the costs of winding down, 31 the costs of staff and the retention payments 32.") == [
        ("footnote", ["31"], None), ("footnote", ["32"], None)]


def test_footnote_markers_in_a_run_after_a_spaced_full_stop_and_after_a_clause_end():
    # two notes on one phrase, a space the page left before the full stop, a marker closing a list item
    assert _found("Plan for the buffer requirements (BRR). 14 15 Firms should start early.") == [
        ("footnote", ["14"], None), ("footnote", ["15"], None)]
    assert _found("Firms may also read the statement on branch capital ’ . 7") == [("footnote", ["7"], None)]
    assert _found("an analysis of the costs that arise once the books are sold on; 9 and") == [
        ("footnote", ["9"], None)]
    # a number after a marker that does not continue the run is no marker; a quantity stays one
    assert _found("Costs fall (see the annex). 14 40 staff left.") == [("footnote", ["14"], None)]
    assert _found("The fee is payable within 10 days.") == []


def test_english_unit_words_name_tables_footnotes_titles_and_lettered_numbers():
    found = _found("See Table 3 and footnote 8, Article 105a(2), Chapter 4 section B2, Title IV and Annex III.")
    assert [(unit, sections) for unit, sections, _ in found] == [
        ("table", ["3"]), ("footnote", ["8"]), ("article", ["105a(2)"]), ("chapter", ["4"]), ("section", ["B2"]),
        ("title", ["IV"]), ("annex", ["III"])]


def test_german_text_gets_no_english_rulebook_reading():
    text = "Der Betreiber meldet nach Satz 2 in Verbindung mit § 5 Absatz 1. 3 Die Behörde prüft die Meldung."
    assert [r.unit for r in detect_references_regex(text, "Gesetz.pdf")] == ["§"]
    # the same forms in English text, and a language given by the caller wins over detection
    assert _found("It applies under 4.3 as well.", "de") == []
    assert _found("It applies under 4.3 as well.", "en") == [("rule", ["4.3"], None)]


def test_a_publication_is_cited_by_its_code():
    [code] = detect_references_regex("Firms should also read SS7/19 on liquidity when they plan.", "Guide.md")
    assert (code.type, code.book) == ("document_mention", "SS7/19")
    assert [r.type for r in detect_references_regex("The amounts for 2024/25 are set out below.", "x.md")] == []


@pytest.mark.parametrize(("text", "language", "relation"), [
    ("Die Landesregierung wird ermächtigt, durch Rechtsverordnung nach § 14 Absatz 3 Fristen festzulegen.", "de",
     "delegates"),
    ("Für die Zwischenlagerung gilt § 6 Absatz 2 entsprechend.", "de", "applies_correspondingly"),
    ("§ 9 ist auf Anlagen zur Aufbereitung entsprechend anzuwenden.", "de", "applies_correspondingly"),
    ("Die Werte der Anlage 2 Teil A sind einzuhalten.", "de", "annex"),
    ("Die Frist nach § 12 beträgt drei Monate.", "de", "cites"),
    ("The firm must meet the requirements in rules made under section 88K.", "en", "delegates"),
    ("Rule 5.4 applies correspondingly to a third-country branch.", "en", "applies_correspondingly"),
    ("Chapter 6 applies to a mutual with the necessary modifications.", "en", "applies_correspondingly"),
    ("The template is in Appendix 3.", "en", "annex"),
    ("Section 4 sets out the scope.", "en", "cites"),
    ("The chair should be independent on appointment. 7 Where this is not the case, explain why.", "en", "note"),
])
def test_a_reference_says_what_it_does_in_either_language(text, language, relation):
    [reference] = detect_references_regex(text, "Ordnung.pdf", language)
    assert reference.relation == relation


def test_the_kind_of_a_reference_is_shown_in_the_graph_and_the_table():
    from rabbithole_lab.viz.display import edge_table
    from rabbithole_lab.viz.reference_graph import graph_html, reference_graph

    edge = {"type": "legal_section", "target": "§ 6 Hafenordnung.md", "depth": 1, "decision": "followed",
            "reason": "passt", "resolution": "section_index", "from_doc": "Lagerordnung.md", "from_section": "§ 2",
            "to_docs": ["Hafenordnung.md"], "to_sections": ["§ 6"], "relation": "applies_correspondingly"}
    graph = reference_graph([edge], [])
    assert "gilt entsprechend" in graph_html(graph, language="de")
    table = edge_table({"reference_edges": [edge], "detected_language": "en"}).to_html()
    assert "provision · applies correspondingly" in table


def test_a_chapters_headings_named_by_their_item_labels_are_its_sections():
    def sections(text):
        return [r.sections for r in detect_references_regex(text, "Guide.md", "en") if r.unit == "chapter"]

    assert sections("the guidance set out in Chapter 2 (vi) and (vii) applies.") == [["2(vi)", "2(vii)"]]
    # a letter after a Roman numeral is a heading under it; "(i)" right after "(h)" is a letter
    assert sections("against Chapter 2 (i) (b), (c) and (ii) of this statement") == [["2(i)(b)", "2(i)(c)", "2(ii)"]]
    assert sections("as in Chapter 3 (g), (h) and (i) above") == [["3(g)", "3(h)", "3(i)"]]
    assert sections("see Chapter 4 for the rest") == [["4"]]
