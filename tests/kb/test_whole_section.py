"""Context items carry their whole section: chunks joined without repeated headings or overlaps."""

from __future__ import annotations

import re


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def test_a_multi_chunk_section_is_joined_once(corpus_kb):
    chunks = corpus_kb.section_lookup("StrlSchV.pdf", "§ 55")
    assert len(chunks) >= 3
    whole = corpus_kb.whole_section(chunks[1], 100_000)
    assert whole.chunk_id == chunks[1].chunk_id and whole.section == "§ 55"
    assert whole.text.count(chunks[0].heading) == 1  # the repeated heading appears once
    assert len(whole.text) < sum(len(c.text) for c in chunks)  # overlaps removed
    body = _norm(whole.text)
    for chunk in chunks:  # nothing lost
        assert _norm(chunk.text.removeprefix(chunk.heading))[-200:] in body
    assert whole.page_start == min(c.page_start for c in chunks)
    assert whole.page_end == max(c.page_end for c in chunks)


def test_the_window_grows_around_the_hit_within_the_limit(corpus_kb):
    chunks = corpus_kb.section_lookup("StrlSchV.pdf", "§ 55")
    limit = len(chunks[0].text) + len(chunks[1].text) + 10
    window = corpus_kb.whole_section(chunks[1], limit)
    assert len(window.text) <= limit
    assert _norm(chunks[1].text)[-100:] in _norm(window.text)
    assert corpus_kb.whole_section(chunks[1], 0) == chunks[1]
    assert corpus_kb.whole_section(chunks[1], 10) == chunks[1]  # not even the hit's neighbour fits


def test_a_one_chunk_section_is_unchanged(demo_kb):
    hit = demo_kb.section_lookup("QStrG.pdf", "§ 12")
    assert len(hit) == 1
    assert demo_kb.whole_section(hit[0], 6000) == hit[0]
