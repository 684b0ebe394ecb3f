"""Citations by name (issue 72 item 7): the answer's brackets show the registry's name of the document and the
section the quotation stands in, with the file's page as the link; the answer text keeps the one format the
writer, the checks and the benchmarks read ("[QStrG.pdf, S. 1]")."""

from __future__ import annotations

from rabbithole_lab.eval.answer_eval import answer_citations
from rabbithole_lab.records import FinalReport, LinkedSource
from rabbithole_lab.report.render import answer_markdown, answer_text
from rabbithole_lab.report.view import report_view

ANSWER = ("§ 12 QStrG: „Der Grenzwert beträgt 20 Millisievert.“ [QStrG.pdf, S. 1] „Für die Haut gilt 500 "
          "Millisievert.“ [QStrG.pdf, S. 1]\n"
          "§ 2 QStrG: „Beruflich exponierte Person ist, wer mehr als 1 Millisievert erhalten kann.“ [QStrG.pdf, S. 1] "
          "[QStrV.pdf, S. 2]\n"
          "Guide: “Calibrate every year.” [Guide.pdf, p. 3]")


def _report(language: str = "de", names: bool = True) -> FinalReport:
    sources = [LinkedSource(doc_id=doc, page_number=page, section=section, path=f"/kb/{doc}", cited=True)
               for doc, page, section in (("QStrG.pdf", 1, "§ 12, § 2"), ("QStrV.pdf", 2, "§ 5"), ("Guide.pdf", 3, ""))]
    metadata = {"language": language}
    if names:
        metadata |= {"document_names": {"QStrG.pdf": "QStrG", "QStrV.pdf": "QStrV",
                                        "Guide.pdf": "Detector Calibration Guide"},
                     "quote_sections": [
                         {"doc": "QStrG.pdf", "page": 1, "quote": "Der Grenzwert beträgt 20 Millisievert.",
                          "section": "§ 12"},
                         {"doc": "QStrG.pdf", "page": 1, "quote": "Für die Haut gilt 500 Millisievert.",
                          "section": "§ 12"},
                         {"doc": "QStrG.pdf", "page": 1, "section": "§ 2",
                          "quote": "Beruflich exponierte Person ist, wer mehr als 1 Millisievert erhalten kann."},
                         {"doc": "QStrV.pdf", "page": 2, "section": "§ 5",
                          "quote": "Beruflich exponierte Person ist, wer mehr als 1 Millisievert erhalten kann."}]}
    return FinalReport(query="Frage", answer=ANSWER, sources=sources, metadata=metadata)


def _cites(report: FinalReport) -> list[tuple[str, str]]:
    view = report_view(report, [], graph_file=None)
    return [(piece.text, piece.url) for line in view.answer for piece in line if piece.kind == "cite"]


def test_each_bracket_names_the_document_and_its_quotations_section_and_links_the_file():
    cites = _cites(_report())
    assert [text for text, _ in cites] == ["[QStrG § 12, S. 1]", "[QStrG § 12, S. 1]", "[QStrG § 2, S. 1]",
                                           "[QStrV § 5, S. 2]", "[Detector Calibration Guide, S. 3]"]
    # one page holds two provisions: each quotation is cited by its own; every bracket opens the file's page
    assert [url.rsplit("/", 1)[1] for _, url in cites] == ["QStrG.pdf#page=1", "QStrG.pdf#page=1",
                                                           "QStrG.pdf#page=1", "QStrV.pdf#page=2", "Guide.pdf#page=3"]


def test_the_page_word_is_the_reports_language():
    shown = [text for text, _ in _cites(_report("en"))]
    assert shown[-2:] == ["[QStrV § 5, p. 2]", "[Detector Calibration Guide, p. 3]"]


def test_without_names_a_bracket_names_the_file_stem_and_the_pages_one_section():
    assert [text for text, _ in _cites(_report(names=False))][:1] == ["[QStrG, S. 1]"]


def test_the_views_show_names_and_the_answer_keeps_the_format_the_checks_and_benchmarks_read():
    report = _report()
    shown = answer_text(report)
    assert "[QStrG § 2, S. 1]" in shown and "[QStrG.pdf, S. 1]" not in shown
    assert "QStrG.pdf, S. 1 (§ 12, § 2) file:///kb/QStrG.pdf#page=1" in shown  # the file under the answer
    assert "[\\[QStrG § 12, S. 1\\]](file:///kb/QStrG.pdf#page=1)" in answer_markdown(report)
    # what the benchmarks score: each citation as the file and page, with the quotation it ends
    assert answer_citations(report.answer)[0] == {"doc": "QStrG.pdf", "page": 1,
                                                  "quote": "Der Grenzwert beträgt 20 Millisievert."}
