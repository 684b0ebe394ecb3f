"""The in-notebook page viewer on real PDFs: the page is rendered, the quote marked, problems are messages."""

from __future__ import annotations

import pymupdf
import pytest

from rabbithole_lab.records import FinalReport, LinkedSource
from rabbithole_lab.ui.answer_view import CitedAnswer, answer_html
from rabbithole_lab.ui.pdf_view import PdfPageView, PdfViewError, render_page
from tests.conftest import DEMO_KB


@pytest.fixture
def two_page_pdf(tmp_path):
    path = tmp_path / "Probe.pdf"
    document = pymupdf.open()
    for text in ("§ 1 Zweck\nDieses Probegesetz regelt die Aufbewahrung von Messprotokollen.",
                 "§ 2 Fristen\nDie Protokolle sind zehn Jahre lang aufzubewahren und auf Verlangen vorzulegen."):
        document.new_page().insert_text((50, 72), text, fontsize=11)
    document.save(path)
    document.close()
    return path


def test_the_quoted_page_is_rendered_with_the_quote_marked(two_page_pdf):
    rendered = render_page(two_page_pdf, 2, "Die Protokolle sind zehn Jahre lang aufzubewahren")
    assert rendered.png.startswith(b"\x89PNG") and rendered.page == 2 and rendered.pages == 2
    assert rendered.highlights >= 1
    assert render_page(two_page_pdf, 1, "Die Protokolle sind zehn Jahre lang aufzubewahren").highlights == 0
    assert render_page(two_page_pdf, 99).page == 2  # clamped to the last page
    assert pymupdf.open(two_page_pdf)[1].first_annot is None  # the file itself is never changed


def test_a_zoomed_page_opens_at_the_quote_not_at_the_pages_top(tmp_path):
    path = tmp_path / "Lang.pdf"
    document = pymupdf.open()
    document.new_page().insert_text((50, 700), "Die Protokolle sind zehn Jahre lang aufzubewahren.", fontsize=11)
    document.save(path)
    document.close()
    whole = pymupdf.Pixmap(render_page(path, 1, "Die Protokolle sind zehn Jahre", zoom=2.0).png)
    at_quote = pymupdf.Pixmap(render_page(path, 1, "Die Protokolle sind zehn Jahre", zoom=2.0, from_quote=True).png)
    assert at_quote.width == whole.width and at_quote.height < whole.height / 2  # the top of the page left out
    unmarked = pymupdf.Pixmap(render_page(path, 1, "nicht auf der Seite", zoom=2.0, from_quote=True).png)
    assert unmarked.height == whole.height  # no quote on the page: the whole page


def test_a_missing_or_broken_file_is_a_message(tmp_path):
    with pytest.raises(PdfViewError, match="file not found"):
        render_page(tmp_path / "gone.pdf", 1)
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.7 not really")
    with pytest.raises(PdfViewError):
        render_page(broken, 1)
    viewer = PdfPageView("en")
    assert viewer.open(tmp_path / "gone.pdf", 1) is False
    assert "Cannot show the page" in viewer.title.value and viewer.widget.layout.display == "flex"


def test_the_viewer_turns_pages_and_closes(two_page_pdf):
    viewer = PdfPageView("de")
    assert viewer.open(two_page_pdf, 1, "Aufbewahrung von Messprotokollen")
    assert "Probe.pdf, S. 1</b>" in viewer.title.value and viewer.previous.disabled and not viewer.next.disabled
    viewer.next.click()
    assert viewer.page == 2 and viewer.next.disabled
    viewer.close.click()
    assert viewer.widget.layout.display == "none"


def test_citations_become_named_links_and_a_click_opens_the_cited_page(two_page_pdf):
    report = FinalReport(
        query="Wie lange <b>?",
        answer="**§ 2 Probegesetz**: „Die Protokolle sind zehn Jahre lang aufzubewahren“ [Probe.pdf, S. 2]\n"
               "<img src=x onerror=alert(1)> steht nirgends.",
        sources=[LinkedSource(doc_id="Probe.pdf", page_number=2, section="§ 2", path=str(two_page_pdf))],
        metadata={"language": "de"})
    body, targets = answer_html(report, lambda path, page: f"Probe.pdf#page={page}", "de")
    # named by the document (no registry name: its file's stem) and the page's one section, linked to the page
    assert '<a class="rh-cite" data-cite="0" href="Probe.pdf#page=2" title="Probe.pdf, 2">[Probe § 2, S. 2]</a>' in body
    assert ">Probe.pdf, S. 2</a> § 2</li>" in body
    assert 'class="rh-source" data-cite="1"' in body
    assert "<img" not in body and "&lt;img src=x" in body
    assert targets[0].page == 2 and targets[0].quote == "Die Protokolle sind zehn Jahre lang aufzubewahren"
    # the source entry opens the same page with the cited quote marked, not its section's heading
    assert targets[1].quote == targets[0].quote
    opened = []
    widget = CitedAnswer(on_citation=opened.append)
    widget.show(report, lambda path, page: f"Probe.pdf#page={page}", "de")
    widget._received(widget, {"cite": 0}, [])
    widget._received(widget, {"cite": "0; alert(1)"}, [])  # anything but a number is ignored
    widget._received(widget, {"cite": 7}, [])
    assert opened == [targets[0]]


def test_a_quote_is_found_across_ligatures_as_the_index_has_it():
    # the demo law's PDF sets "effektiven" with an ff ligature; the indexed text has two letters
    page = pymupdf.open(DEMO_KB / "Recht__db_inserted" / "QStrG.pdf")[0]
    assert not page.search_for("Grenzwert der effektiven Dosis")  # what a plain search misses
    assert render_page(DEMO_KB / "Recht__db_inserted" / "QStrG.pdf", 1,
                       "Grenzwert der effektiven Dosis").highlights == 1


def test_the_viewer_zooms_and_says_honestly_whether_the_quote_is_on_the_page(two_page_pdf):
    viewer = PdfPageView("de")
    assert viewer.open(two_page_pdf, 2, "Die Protokolle sind zehn Jahre lang aufzubewahren und auf Verlangen")
    assert "Zitat markiert" in viewer.title.value and viewer.image.layout.width == "100%"
    small = len(viewer.image.value)
    viewer.zoom_in.click()
    viewer.zoom_in.click()
    # drawn again at the zoom (sharper, a larger PNG), wider than the panel, scrolling inside its frame
    assert viewer.zoom == 2.0 and viewer.image.layout.width == "200%" and len(viewer.image.value) > small
    assert viewer.frame.layout.overflow == "auto" and "200 %" in viewer.zoom_label.value
    for _ in range(6):
        viewer.zoom_out.click()
    assert viewer.zoom == 0.75 and viewer.zoom_out.disabled and not viewer.zoom_in.disabled
    # the quote is on page 2: page 1 says it is not there instead of claiming a mark
    viewer.previous.click()
    assert viewer.page == 1 and "Zitat auf dieser Seite nicht gefunden" in viewer.title.value
    assert "Zitat markiert" not in viewer.title.value
    # five words of a long quote on the page: only partly found, not "marked"
    partly = render_page(two_page_pdf, 2, "Die Protokolle sind zehn Jahre nach der Verordnung über Messgeräte "
                                          "und deren Eichung von der zuständigen Behörde festzulegen")
    assert partly.quote_found == "partly" and partly.highlights == 1
    assert render_page(two_page_pdf, 2).quote_found == ""  # nothing asked, nothing claimed


@pytest.mark.parametrize(("language", "label"), [("de", "Text an KI-Systeme gerichtet, nicht verwendet"),
                                                 ("en", "Text addressed to AI systems, not used")])
def test_the_workbench_answer_names_text_addressed_to_a_model_as_not_used(language, label):
    """The report's list of passages addressed to a model stands under the workbench's answer too, escaped."""
    report = FinalReport(query="Frist?", answer="„Ein Störfall ist binnen 24 Stunden zu melden.“ [MeldG.md, S. 1]",
                         sources=[LinkedSource(doc_id="MeldG.md", page_number=1, section="§ 1", cited=True)],
                         metadata={"language": language, "addressed_to_model": [
                             {"doc": "Hinw<b>V.md", "section": "§ 1", "page": 1, "path": ""}]})
    body, _ = answer_html(report, lambda path, page: f"{path}#page={page}", language)
    assert label in body and "Hinw&lt;b&gt;V.md § 1" in body and "<b>V" not in body
