"""Consecutive chunks of a section joined into one passage: on the real, overlapping chunks of a long section
of the corpus, with every sentence checked against the PDF page it cites."""

from __future__ import annotations

import re

import pymupdf
import pytest

from rabbithole_lab.evidence.pages import quote_pages
from rabbithole_lab.reasoning.passages import joined_passages
from rabbithole_lab.reasoning.text import passage_sentences
from rabbithole_lab.records import ChunkWithInfo
from rabbithole_lab.steps.synthesis_context import with_neighbours
from tests.conftest import CORPUS

pytestmark = pytest.mark.corpus


def _finding(result, tier="primary") -> ChunkWithInfo:
    return ChunkWithInfo.from_result(result, tier=tier)


def _sentences(chunk: ChunkWithInfo) -> list[str]:
    return passage_sentences(chunk.chunk_text, chunk.heading, chunk.continuation)


def _squash(text: str) -> str:
    """Page text without its running footer ("AtG Seite 11 von 54"), spaces and hyphens: a sentence that runs
    over a page break is then one string."""
    text = re.sub(r"^.{0,40}\bSeite \d+ von \d+\s*$", "", text, flags=re.MULTILINE)
    return re.sub(r"[\s\-\u00ad]+", "", text).casefold()


@pytest.fixture(scope="module")
def long_section(corpus_kb) -> list[ChunkWithInfo]:
    # § 7 AtG (licensing of installations) is indexed as several overlapping chunks over three pages
    chunks = [_finding(r) for r in corpus_kb.section_lookup("AtG.pdf", "§ 7")]
    assert len(chunks) >= 4 and all(c.continuation for c in chunks[1:])
    return chunks


def test_consecutive_chunks_become_one_passage_without_repeating_their_overlap(long_section):
    [passage] = joined_passages(list(reversed(long_section)))  # the order in the context does not matter
    first, last = long_section[0], long_section[-1]
    body = last.chunk_text[len(last.heading) + 1:]
    assert len(passage.chunk_text) == last.char_start + len(body) - first.char_start
    for chunk in long_section[1:]:
        assert chunk.chunk_text[len(chunk.heading) + 1:] in passage.chunk_text
    assert passage.chunk_text.count(first.heading) == 1 and passage.page == first.page
    assert passage.page_end == max(c.page_end for c in long_section)


def test_a_sentence_across_a_chunk_boundary_is_whole_and_cites_the_page_it_starts_on(long_section):
    [passage] = joined_passages(long_section)
    single = {s for chunk in long_section for s in _sentences(chunk)}
    whole = _sentences(passage)
    across = [s for s in whole if s not in single]
    assert across, "no sentence of § 7 AtG runs over a chunk boundary"
    with pymupdf.open(CORPUS / "AtomR__db_inserted" / "AtG.pdf") as pdf:
        for sentence in whole:
            page, end_page = quote_pages(passage.chunk_text, passage.page_map, sentence, passage.page)
            pages = _squash(" ".join(pdf[p - 1].get_text() for p in range(page, end_page + 1)))
            # an over-long enumeration is quoted as its lead-in and a run of items, elided with "…"
            parts = [_squash(part) for part in sentence.split("…") if part.strip()]
            assert parts[0][:60] in _squash(pdf[page - 1].get_text()), (page, sentence[:80])
            at = 0
            for part in parts:
                at = pages.find(part, at)
                assert at >= 0, (page, end_page, part[:80])


def test_chunks_that_do_not_follow_each_other_stay_apart_and_each_chunk_counts_once(long_section):
    first, third = long_section[0], long_section[2]
    passages = joined_passages([first, third, first])
    assert [p.chunk_text for p in passages] == [first.chunk_text, third.chunk_text]
    joined = joined_passages([long_section[1], first.model_copy(update={"tier": "secondary"})])
    assert len(joined) == 1 and joined[0].tier == "primary"  # the passage weighs as its best chunk


def test_the_synthesis_context_reads_a_passage_with_its_neighbours_within_the_budget(corpus_kb, long_section):
    middle = long_section[2].model_copy(update={"tier": "secondary", "relevance_score": 0.7, "depth": 1,
                                                "cited_by": "a-citing-chunk"})
    context = {"primary": [], "secondary": [middle], "tertiary": []}
    grown = with_neighbours(context, corpus_kb, budget_chars=100_000)
    added = [c for c in grown["secondary"] if c.chunk_id != middle.chunk_id]
    assert {c.chunk_id for c in added} == {long_section[1].chunk_id, long_section[3].chunk_id}
    # read as the passage they continue, without its findings or the reference that led to it
    assert all(c.tier == "secondary" and c.relevance_score == 0.7 and c.depth == 1 and not c.cited_by
               for c in added)
    [passage] = joined_passages(grown["secondary"])
    assert len(_sentences(passage)) > len(_sentences(middle))
    # no room: the context stays as it is
    tight = with_neighbours(context, corpus_kb, budget_chars=len(middle.chunk_text) + 10)
    assert [c.chunk_id for c in tight["secondary"]] == [middle.chunk_id]
