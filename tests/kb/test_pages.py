"""Page-exact positions: the page map of a chunk, on written text and on the real PDFs of the corpus."""

from __future__ import annotations

import re

import pymupdf
import pytest

from rabbithole_lab.evidence.pages import decode_page_map, encode_page_map, find_span, page_at, quote_pages
from tests.conftest import CORPUS


def test_a_page_map_names_the_page_of_every_character():
    page_map = encode_page_map([(0, 7), (120, 8), (400, 9)])
    assert page_map == "0:7,120:8,400:9" and decode_page_map(page_map) == [(0, 7), (120, 8), (400, 9)]
    assert [page_at(page_map, offset, 1) for offset in (0, 119, 120, 399, 5000)] == [7, 7, 8, 8, 9]
    assert page_at("", 50, 3) == 3  # no map: the chunk's first page


def test_a_quote_is_found_whitespace_insensitively_and_cites_where_it_starts_and_ends():
    text = "Erster Satz auf Seite eins.\nZweiter Satz beginnt hier\nund endet auf Seite zwei."
    page_map = encode_page_map([(0, 1), (text.index("und endet"), 2)])
    assert find_span(text, "Zweiter Satz beginnt hier und endet auf Seite zwei.") is not None
    assert quote_pages(text, page_map, "Zweiter Satz beginnt hier und endet auf Seite zwei.", 1) == (1, 2)
    assert quote_pages(text, page_map, "und endet auf Seite zwei.", 1) == (2, 2)
    assert quote_pages(text, page_map, "Ein Satz, der fehlt.", 1) == (1, 1)


@pytest.mark.corpus
def test_the_text_after_a_page_break_of_a_corpus_chunk_is_on_the_later_pdf_page(corpus_kb):
    chunks = [c for c in corpus_kb.index.get_chunks("StrlSch", where={"doc": "StrlSchG.pdf"})
              if c.page_end > c.page_start]
    assert chunks, "no chunk of the StrlSchG runs over a page break"
    with pymupdf.open(CORPUS / "StrlSch__db_inserted" / "StrlSchG.pdf") as pdf:
        for chunk in chunks[:10]:
            starts = decode_page_map(chunk.page_map)
            assert [page for _, page in starts] == list(range(chunk.page_start, chunk.page_end + 1))
            offset, page = starts[-1]
            words = re.sub(r"\s+", " ", chunk.text[offset : offset + 60]).strip()[:30]
            printed = re.sub(r"\s+", " ", pdf[page - 1].get_text())
            assert words in printed, (chunk.section, page, words)


def test_an_elided_quote_is_found_by_its_parts_in_order_and_cites_where_it_starts():
    text = "(1) Es gilt,\nwenn 1. erstens etwas vorliegt,\n2. zweitens etwas anderes vorliegt und\n3. drittens nichts."
    page_map = encode_page_map([(0, 4), (text.index("3. drittens"), 5)])
    quote = "(1) Es gilt, wenn … 3. drittens nichts."
    assert find_span(text, quote) == (0, len(text))
    assert quote_pages(text, page_map, quote, 4) == (4, 5)
    assert quote_pages(text, page_map, "zweitens etwas anderes vorliegt und … 3. drittens nichts.", 4) == (4, 5)
    assert find_span(text, "3. drittens nichts. … (1) Es gilt,") is None  # parts out of order
    assert find_span(text, "(1) Es gilt, wenn 1. erstens etwas vorliegt, …") == (0, text.index(",\n2.") + 1)
