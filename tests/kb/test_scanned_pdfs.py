"""Scanned PDFs (issue 74): pages without a text layer are read by Tesseract on ingest, page-exact, through the cache.

The laws here are written for these tests (a harbour-crane act and its ordinance); the scans are made from them by
`bench/scanned_copy.py` (every page an image, no text layer). Tesseract is the real engine, installed by `.ci/run`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pymupdf
import pytest

from bench.scanned_copy import scanned_copy
from rabbithole_lab.kb.ingest.chunking import chunk_document
from rabbithole_lab.kb.ingest.ocr import OcrAccess
from rabbithole_lab.kb.ingest.page_reading import page_text, scanned_page
from rabbithole_lab.kb.ingest.parse import parse_file
from rabbithole_lab.kb.ingest.scanned_pages import needs_ocr, readable_share
from rabbithole_lab.settings import OcrSettings
from rabbithole_lab.ui.pdf_view import render_page
from tests.conftest import REPO

NO_TESSERACT = "needs Tesseract with German and English (apt-get install tesseract-ocr tesseract-ocr-deu " \
               "tesseract-ocr-eng; .ci/run installs it)"
needs_tesseract = pytest.mark.skipif(
    shutil.which("tesseract") is None or not {"deu", "eng"} <= set(
        subprocess.run(["tesseract", "--list-langs"], capture_output=True, text=True).stdout.split()),
    reason=NO_TESSERACT)
RABBITHOLE = REPO / ".venv" / "bin" / "rabbithole"

CRANE_ACT = [  # (page, heading, body)
    (1, "§ 11 Geltungsbereich", "(1) Dieses Gesetz gilt für Hafenkräne mit einer Tragkraft über zwei Tonnen."),
    (1, "§ 12 Prüfwerte", "(1) Der Prüfwert für die Last eines Hafenkrans beträgt vierzig Tonnen. "
                          "(2) Der Prüfwert für den Wind beträgt zwölf Meter je Sekunde."),
    (2, "§ 13 Prüfer", "(1) Prüfer ist, wer die Sachkunde nach der Kranverordnung nachweist."),
]
CRANE_ORDINANCE = [
    (1, "§ 2 Tägliche Sichtprüfung", "(1) Der Kranführer prüft vor Schichtbeginn Seile, Haken und Bremsen."),
    (2, "§ 3 Überschreitung", "(1) Wird ein Prüfwert nach § 12 des Hafenkrangesetzes überschritten, ist der Kran "
                              "sofort stillzulegen. (2) Die Stilllegung ist der Hafenbehörde zu melden."),
    (3, "§ 4 Aufzeichnungen", "(1) Jede Stilllegung wird im Kranbuch mit Datum und Ursache eingetragen."),
]


def _law(path: Path, title: str, sections: list[tuple[int, str, str]]) -> Path:
    """A text PDF: bold section headings and wrapped body text, one page per page number."""
    document = pymupdf.open()
    for number in sorted({page for page, _, _ in sections}):
        page = document.new_page()
        y = 80.0
        if number == 1:
            page.insert_text((72, y), title, fontsize=15, fontname="hebo")
            y += 36
        for _, heading, body in (section for section in sections if section[0] == number):
            page.insert_text((72, y), heading, fontsize=12, fontname="hebo")
            y += 22
            box = pymupdf.Rect(72, y, 523, y + 120)
            left = page.insert_textbox(box, body, fontsize=11, fontname="helv")
            y += 120 - max(0.0, left) + 18
    document.set_metadata({"title": title})
    document.save(path)
    document.close()
    return path


@pytest.fixture
def ocr_settings(tmp_path, monkeypatch) -> OcrSettings:
    monkeypatch.setenv("OCR_CACHE", str(tmp_path / "ocr-cache"))
    return OcrSettings(_env_file=None)


def test_a_page_needs_ocr_when_it_shows_an_image_and_has_no_text_or_garbage_text():
    words = "Der Prüfwert für die Last eines Hafenkrans beträgt vierzig Tonnen (§ 12 Abs. 1)."
    assert not needs_ocr(words, shows_image=True)
    assert needs_ocr("", shows_image=True) and not needs_ocr("  ", shows_image=False)
    garbage = "(cid:12)(cid:7)(cid:44) (cid:3)(cid:19) \ue001\ue002\ue003 \ufffd\ufffd" * 4
    assert readable_share(garbage) < 0.5 < readable_share(words)
    assert needs_ocr(garbage, shows_image=False)


@needs_tesseract
def test_a_scanned_law_is_read_with_its_sections_on_their_pages(tmp_path, ocr_settings):
    scan = scanned_copy(_law(tmp_path / "KranV-text.pdf", "Kranverordnung (KranV)", CRANE_ORDINANCE),
                        tmp_path / "KranV.pdf")
    assert not "".join(page.get_text() for page in pymupdf.open(scan)).strip()  # really no text layer
    access = OcrAccess(ocr_settings)
    document = parse_file(scan, access)

    assert sorted(document.ocr_confidence) == [1, 2, 3] and min(document.ocr_confidence.values()) > 70
    chunks = chunk_document(document, "Hafen", 1500, 200)
    where = {chunk.section: chunk.page_start for chunk in chunks if chunk.section}
    assert where == {"§ 2": 1, "§ 3": 2, "§ 4": 3}
    stop = next(chunk for chunk in chunks if chunk.section == "§ 3")
    assert "stillzulegen" in stop.text and "§ 12" in stop.text

    # read again: every page comes from the cache, Tesseract does not run
    again = OcrAccess(ocr_settings)
    assert [line.text for line in parse_file(scan, again).lines] == [line.text for line in document.lines]
    assert access.reader.pages_read == 3 and again.reader.pages_read == 0


@needs_tesseract
def test_a_mixed_pdf_reads_its_text_pages_and_ocrs_only_the_scanned_one(tmp_path, ocr_settings):
    mixed = scanned_copy(_law(tmp_path / "text.pdf", "Kranverordnung (KranV)", CRANE_ORDINANCE),
                         tmp_path / "KranV.pdf", pages=[2])
    document = parse_file(mixed, OcrAccess(ocr_settings))
    assert list(document.ocr_confidence) == [2]
    pages = {line.page for line in document.lines}
    assert pages == {1, 2, 3}
    assert any("Stilllegung" in line.text and line.page == 2 for line in document.lines)


def _crane_kb(tmp_path: Path) -> tuple[Path, Path]:
    """A knowledge base of the crane act as a text PDF and its ordinance scanned; the KB and its one collection."""
    kb = tmp_path / "kb"
    folder = kb / "Hafen__db_inserted"
    folder.mkdir(parents=True)
    _law(folder / "HKranG.pdf", "Hafenkrangesetz (HKranG)", CRANE_ACT)
    scanned_copy(_law(tmp_path / "KranV-text.pdf", "Kranverordnung (KranV)", CRANE_ORDINANCE), folder / "KranV.pdf")
    return kb, folder


def _cli(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(RABBITHOLE), "--env-file", "none", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=600)


@needs_tesseract
def test_the_cli_ingests_a_scanned_ordinance_follows_its_reference_into_a_text_law_and_quotes_page_exactly(tmp_path):
    kb, folder = _crane_kb(tmp_path)
    cache = tmp_path / "ocr-cache"
    env = {**os.environ, "OCR_CACHE": str(cache), "LLM_PROVIDER": "extractive",
           "EMBEDDING_VECTOR_CACHE": str(tmp_path / "vectors")}

    ingested = _cli("ingest", str(kb), "--no-progress", env=env, cwd=tmp_path)
    assert ingested.returncode == 0, ingested.stdout + ingested.stderr
    assert "OCR: 3 scanned page(s) read by Tesseract" in ingested.stdout

    found = _cli("search", "Wann ist der Kran stillzulegen?", "--kb", str(kb), "--json", env=env, cwd=tmp_path)
    hits = json.loads(found.stdout)
    stop = next(hit for hit in hits if hit["doc"] == "KranV.pdf" and hit["section"] == "§ 3")
    assert stop["page_start"] == 2

    trail = _cli("trail", "Wann ist der Kran stillzulegen?", "--kb", str(kb), "--json", env=env, cwd=tmp_path)
    assert trail.returncode == 0, trail.stderr
    reached = json.dumps(json.loads(trail.stdout), ensure_ascii=False)
    assert "HKranG.pdf" in reached and "§ 12" in reached

    # the page-exact check reads the ingest's OCR text from the cache: with OCR off it still reads it
    cached_only = OcrSettings(_env_file=None, OCR_CACHE=str(cache), OCR="off")
    on_page = " ".join(page_text(folder / "KranV.pdf", 2, cached_only).split())
    sentence = " ".join(stop["text"].split())
    assert "sofort stillzulegen" in on_page and sentence[sentence.index("Wird"):][:60] in on_page


@needs_tesseract
def test_the_page_viewer_marks_a_quote_on_a_scanned_page_from_the_ocr_word_boxes(tmp_path, ocr_settings):
    scan = scanned_copy(_law(tmp_path / "text.pdf", "Kranverordnung (KranV)", CRANE_ORDINANCE),
                        tmp_path / "KranV.pdf")
    parse_file(scan, OcrAccess(ocr_settings))  # the ingest's reading fills the cache
    marked = render_page(scan, 2, "ist der Kran sofort stillzulegen", ocr=ocr_settings)
    assert marked.quote_found == "marked" and marked.highlights == 1
    missing = render_page(scan, 2, "Der Hafenmeister gibt die Liegeplätze frei", ocr=ocr_settings)
    assert missing.quote_found == "missing"
    assert scanned_page(_law(tmp_path / "plain.pdf", "Text", CRANE_ACT), 1, ocr_settings) is None


def test_without_tesseract_a_scan_is_skipped_with_the_install_command_and_the_doctor_says_so(tmp_path):
    kb, folder = _crane_kb(tmp_path)
    env = {**os.environ, "PATH": str(tmp_path / "no-tools"), "OCR_CACHE": str(tmp_path / "ocr-cache"),
           "LLM_PROVIDER": "extractive", "EMBEDDING_VECTOR_CACHE": str(tmp_path / "vectors")}

    ingested = _cli("ingest", str(kb), "--no-progress", env=env, cwd=tmp_path)
    assert ingested.returncode == 1, ingested.stdout + ingested.stderr  # one file could not be read
    skipped = next(line for line in ingested.stdout.splitlines() if "KranV.pdf" in line)
    assert "no text layer" in skipped and "apt-get install tesseract-ocr" in skipped
    assert not (tmp_path / "ocr-cache").exists()

    doctor = _cli("doctor", "--kb", str(kb), env=env, cwd=tmp_path)
    assert "OCR unavailable" in doctor.stdout and "apt-get install tesseract-ocr" in doctor.stdout


DOSE_TABLE = [("Organ", "Grenzwert im Kalenderjahr"), ("Augenlinse", "20 Millisievert"), ("Haut", "500 Millisievert"),
              ("Hände und Füße", "500 Millisievert")]


def _table_law(path: Path, filler_paragraphs: int = 0) -> Path:
    """A section with text, then a ruled two-column table, then more text."""
    document = pymupdf.open()
    page = document.new_page()
    page.insert_text((72, 80), "§ 7 Organgrenzwerte", fontsize=12, fontname="hebo")
    y = 100.0
    for number in range(filler_paragraphs):
        page.insert_textbox(pymupdf.Rect(72, y, 523, y + 40), f"({number + 1}) Für Tätigkeiten im Hafen gilt die "
                            "folgende Ordnung der Grenzwerte, die der Betreiber einhält und aufzeichnet.",
                            fontsize=10, fontname="helv")
        y += 40
    y += 10
    for label, value in DOSE_TABLE:
        for x0, x1, text in ((72, 250, label), (250, 480, value)):
            page.draw_rect(pymupdf.Rect(x0, y, x1, y + 20), color=(0, 0, 0), width=0.8)
            page.insert_text((x0 + 4, y + 14), text, fontsize=10, fontname="helv")
        y += 20
    page.insert_textbox(pymupdf.Rect(72, y + 16, 523, y + 60), "(9) Die Grenzwerte gelten je Person.",
                        fontsize=10, fontname="helv")
    document.save(path)
    document.close()
    return path


def test_a_ruled_table_becomes_rows_that_keep_their_header_and_stays_in_one_chunk(tmp_path):
    assert "Organ | Grenzwert im Kalenderjahr" not in [  # the default reads the text layer as it stands
        line.text for line in parse_file(_table_law(tmp_path / "Text.pdf")).lines]
    document = parse_file(_table_law(tmp_path / "HafenDosisV.pdf", filler_paragraphs=6), tables=True)
    texts = [line.text for line in document.lines]
    assert "Organ | Grenzwert im Kalenderjahr" in texts and "Augenlinse | 20 Millisievert" in texts
    assert "Hände und Füße | 500 Millisievert" in texts
    assert not any(text in ("Augenlinse", "20 Millisievert") for text in texts)  # no cell read alone
    header = texts.index("Organ | Grenzwert im Kalenderjahr")
    assert texts[header + 1] == "Augenlinse | 20 Millisievert"

    # a budget the table fits in but not after the paragraphs before it: the table starts a chunk, whole
    rows = [line for line in document.lines if line.table]
    table_chars = sum(len(line.text) + 1 for line in rows)
    chunks = chunk_document(document, "Hafen", table_chars + 80, 60)
    holding = [chunk for chunk in chunks if "Millisievert" in chunk.text]
    assert len(holding) == 1 and all(line.text in holding[0].text for line in rows)
    assert holding[0].section == "§ 7" and holding[0].text.startswith("§ 7 Organgrenzwerte")


def test_switching_tables_to_rows_chunks_the_pdf_again_and_back(tmp_path):
    from rabbithole_lab.kb.ingest.ingest import ingest
    from rabbithole_lab.kb.kb_factory import open_index
    from rabbithole_lab.settings import load_settings

    kb = tmp_path / "kb"
    (kb / "Hafen__db_inserted").mkdir(parents=True)
    _table_law(kb / "Hafen__db_inserted" / "HafenDosisV.pdf", filler_paragraphs=2)
    as_text = load_settings(env_file=None, embedding={"vector_cache": str(tmp_path / "vectors")})
    as_rows = load_settings(env_file=None, embedding={"vector_cache": str(tmp_path / "vectors")},
                            kb={"pdf_tables": "rows"})

    def texts(settings) -> tuple[int, str]:
        index = open_index(settings, kb, tmp_path / "db")
        report = ingest(kb, index, settings.kb, show_progress=False, ocr=settings.ocr)
        return report.files_ingested, "\n".join(chunk.text for chunk in index.get_chunks("Hafen"))

    assert texts(as_text)[0] == 1 and "Augenlinse | 20 Millisievert" not in texts(as_text)[1]
    ingested, rows = texts(as_rows)
    assert ingested == 1 and "Augenlinse | 20 Millisievert" in rows
    assert texts(as_rows)[0] == 0  # unchanged: not read again
    assert texts(as_text)[0] == 1


def test_the_first_page_read_narrows_tesseract_to_the_documents_language():
    from rabbithole_lab.kb.ingest.ocr import OcrPage, OcrWord, _narrowed

    def page(text: str) -> OcrPage:
        return OcrPage(1, tuple(OcrWord(word, 0, 0, 1, 1, 95.0, 1, 1, 1) for word in text.split()))

    german = page("Der Betreiber hat dafür zu sorgen, dass die Grenzwerte für beruflich exponierte Personen im "
                  "Hafen nicht überschritten werden. Die Überschreitung ist der Behörde unverzüglich mitzuteilen; "
                  "die weitere Beschäftigung ist nur mit Zustimmung der Behörde zulässig.")
    english = page("The operator shall ensure that the limits for occupationally exposed persons in the harbour "
                   "are not exceeded. Any exceedance shall be reported to the authority without delay; further "
                   "employment is only permitted with the consent of the authority.")
    assert _narrowed(german, "deu+eng") == "deu" and _narrowed(english, "deu+eng") == "eng"
    assert _narrowed(english, "deu+fra") == "deu+fra"  # a language not configured is never chosen
    assert _narrowed(page("§ 3 Kran"), "deu+eng") == "deu+eng"  # too little text to tell


def test_german_ocr_misreads_of_the_section_sign_are_corrected_and_list_items_are_no_headings():
    from rabbithole_lab.kb.ingest.ocr import OcrPage, OcrWord
    from rabbithole_lab.kb.ingest.scanned_pages import ocr_lines

    lines = ["Die Stilllegung ist der Hafenbehörde unverzüglich zu melden und im Kranbuch einzutragen.",
             "& 13 Prüfer", "(1) Ein Prüfer nach $ 12 des Hafenkrangesetzes prüft, ob die Krane",
             "1. Seile und Haken,", "2. Bremsen", "in Ordnung sind.", "88 14 bis 16 (weggefallen)",
             "855 Zutritt zum Kai", "Es gelten 855 Plätze als Liegeplätze im Hafen der Stadt."]
    words = tuple(OcrWord(word, 0, 10.0 * number, 10, 10.0 * number + 9, 95.0, 1, number, 1)
                  for number, line in enumerate(lines, start=1) for word in line.split())
    read = dict(ocr_lines(OcrPage(1, words)))
    assert read["§ 13 Prüfer"] and read["§§ 14 bis 16 (weggefallen)"] and read["§ 55 Zutritt zum Kai"]
    assert "(1) Ein Prüfer nach § 12 des Hafenkrangesetzes prüft, ob die Krane" in read
    assert not read["1. Seile und Haken,"] and not read["2. Bremsen"]  # items of a list, each a paragraph
    assert "Es gelten 855 Plätze als Liegeplätze im Hafen der Stadt." in read  # a figure in a sentence stays


def test_on_a_scanned_page_only_a_first_or_last_bare_number_is_a_page_number():
    from rabbithole_lab.kb.ingest.ocr import OcrPage, OcrWord
    from rabbithole_lab.kb.ingest.parse import _read_scanned

    lines = ["12", "§ 9 Kranlasten", "Kran A", "5", "Kran B", "7", "- 13 -"]
    words = tuple(OcrWord(line, 0, 10.0 * number, 10, 10.0 * number + 9, 95.0, 1, number, 1)
                  for number, line in enumerate(lines, start=1))

    class Cached:  # the reader's answer for the page, as its cache would give it
        def read_pages(self, pdf, pages, file_hash, workers=1):
            yield 1, OcrPage(1, words)

    class Access:
        reader, missing, show_progress = Cached(), "", False

        def workers(self):
            return 1

    read = _read_scanned(SimpleNamespace(name="Kran.pdf"), [1], "hash", Access())
    assert [line.text for line in read.lines] == ["§ 9 Kranlasten", "Kran A", "5", "Kran B", "7"]


def test_the_benchs_page_pieces_stop_at_the_next_page_and_a_page_of_only_the_heading_has_none():
    """bench/ocr_scans.py looks each page's piece of a chunk up on that page: a piece that ran on into the next
    page's text, or a page whose part is only the repeated heading, would count a right page map as wrong."""
    from bench.ocr_scans import _page_pieces

    heading = "§ 9 Kranlasten"
    text = f"{heading}\nDie Last eines Krans ist\nauf dem Kai anzuschlagen und zu sichern."
    turn = text.index("auf dem Kai")  # page 4 begins here
    pieces = _page_pieces(text, f"0:3,{turn}:4", 3, len(heading) + 1)
    assert pieces == [(3, "Die Last eines Krans ist"), (4, "auf dem Kai anzuschlagen und zu sichern")]
    # the heading alone stands on page 7: its page has no piece, the body is looked up on page 8
    assert _page_pieces(text, f"0:7,{len(heading) + 1}:8", 7, len(heading) + 1) == [
        (7, ""), (8, "Die Last eines Krans ist auf dem Kai anz")]


def test_a_line_tesseract_could_hardly_read_opens_no_section_however_tall():
    """Text set sideways (a table's rotated column heads) comes back as tall noise ("3 Ela ae as (aaa:"); read as a
    heading it would open a section "3". The same line read with confidence is a title."""
    from rabbithole_lab.kb.ingest.ocr import OcrPage, OcrWord
    from rabbithole_lab.kb.ingest.scanned_pages import ocr_lines

    def page(confidence: float) -> OcrPage:
        lines = [("Die Kranführer tragen die Last und sichern sie am Kai.", 10.0, 95.0),
                 ("Sie melden jede Störung sofort der Hafenbehörde.", 10.0, 95.0),
                 ("3 Ela ae as (aaa:", 30.0, confidence)]
        return OcrPage(1, tuple(OcrWord(word, 0, 40.0 * number, 10, 40.0 * number + height, conf, number, 1, 1)
                                for number, (line, height, conf) in enumerate(lines, start=1)
                                for word in line.split()))

    assert not dict(ocr_lines(page(21.0)))["3 Ela ae as (aaa:"]
    assert dict(ocr_lines(page(95.0)))["3 Ela ae as (aaa:"]
