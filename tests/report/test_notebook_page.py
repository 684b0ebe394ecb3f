"""The static page of an executed report notebook keeps the report's structure and drops anything active."""

from __future__ import annotations

import nbformat

from rabbithole_lab.report.notebook_page import index_html, index_markdown, sanitised_html, write_notebook_html


def test_structure_and_layout_styles_stay_while_scripts_handlers_and_frames_go():
    fragment = ('<h2 id="q">Quellen</h2><p>Text</p><table><thead><tr><th style="text-align:left">Dok</th></tr>'
                '</thead><tbody><tr><td style="white-space:nowrap; position:fixed">a.pdf</td></tr></tbody></table>'
                '<span style="background:#1b7837">x</span><script>alert(1)</script>'
                '<img src="x" onerror="alert(2)"><iframe src="http://example.org"></iframe>'
                '<a href="javascript:alert(3)">j</a><a href="a.pdf#page=2">p</a>')
    clean = sanitised_html(fragment).replace(" ", "")
    for kept in ("<h2", "<p>", "<table>", "<thead>", "<th", "<td", "text-align:left", "white-space:nowrap",
                 "background:#1b7837", 'href="a.pdf#page=2"'):
        assert kept in clean, kept
    assert "script" not in clean and "onerror" not in clean and "<iframe" not in clean
    assert "position" not in clean and "javascript:" not in clean


def test_the_page_of_a_notebook_renders_markdown_and_html_outputs(tmp_path):
    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_markdown_cell("# Bericht\n\nEin **Absatz**."),
                  nbformat.v4.new_code_cell("show()", outputs=[
                      nbformat.v4.new_output("display_data", data={"text/markdown": "## Antwort\n\n„Zitat“ [1]"}),
                      nbformat.v4.new_output("display_data", data={
                          "text/html": '<table class="rh-tier-table"><tr><td style="text-align:left">§ 5</td></tr>'
                                       "</table><script>alert(1)</script>"})])]
    notebook = tmp_path / "run.ipynb"
    nbformat.write(book, notebook)
    page = write_notebook_html(notebook, tmp_path / "run.html").read_text(encoding="utf-8")
    assert "<h1" in page and "<strong>Absatz</strong>" in page and "<h2" in page and "rh-tier-table" in page
    assert "&lt;h1" not in page and "&lt;table" not in page and "&lt;td" not in page
    assert "<script>alert(1)" not in page and "show()" not in page  # no input code, no script from an output


def test_both_indexes_escape_what_a_question_says_and_link_every_file():
    rows = [("Was gilt nach <b>§ 5</b> | [x](javascript:alert(1))?", "done",
             [("2026_q/report.html", "report"), ("2026_q/research_report.ipynb", "notebook (.ipynb)")], "")]
    page, markdown = index_html(rows), index_markdown(rows)
    assert "<b>§ 5</b>" not in page and "&lt;b&gt;§ 5&lt;/b&gt;" in page and 'href="2026_q/report.html"' in page
    assert "](<2026_q/research_report.ipynb>)" in markdown and "<b>" not in markdown
    assert "](javascript" not in markdown  # the question's own link syntax is escaped, not a link
    assert markdown.count("\n|") == 3  # the question's "|" does not open a column
