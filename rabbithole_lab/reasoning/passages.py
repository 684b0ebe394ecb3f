"""Consecutive chunks of one section joined into one passage, so a sentence across a chunk boundary is whole.

A long section is indexed as overlapping chunks (`kb/ingest/chunking.py`): each continuation chunk repeats the
section heading and then the last lines of the chunk before it. A sentence that runs over the boundary is
cut at the end of the first chunk and starts mid-sentence in the second, so neither holds it whole and
the answer can quote it from neither. When the context holds both chunks, their texts are joined where
they overlap (known exactly from each chunk's offset in the document text) and the page maps with them.
"""

from __future__ import annotations

from rabbithole_lab.evidence.pages import decode_page_map, encode_page_map, page_at
from rabbithole_lab.records import TIER_WEIGHTS, ChunkWithInfo


def _document_text(chunk: ChunkWithInfo) -> str:
    """The chunk's text as it stands in the document at `char_start`: a continuation's repeated heading is not."""
    if chunk.continuation and chunk.heading and chunk.chunk_text.startswith(chunk.heading):
        return chunk.chunk_text[len(chunk.heading) + 1:]
    return chunk.chunk_text


def _join(first: ChunkWithInfo, second: ChunkWithInfo) -> ChunkWithInfo | None:
    """`first` and the continuation `second` as one passage; None when they are not consecutive."""
    first_end = first.char_start + len(_document_text(first))
    body = _document_text(second)
    skip = first_end - second.char_start  # characters of `second` that `first` already holds
    if skip < -1 or skip >= len(body) or (skip > 0 and body[:skip] != _document_text(first)[-skip:]):
        return None
    added = body[skip:] if skip >= 0 else "\n" + body
    offset_in_second = len(second.chunk_text) - len(added)  # where `added` starts inside second.chunk_text
    pairs = decode_page_map(first.page_map) or [(0, first.page)]
    join_page = page_at(second.page_map, max(0, offset_in_second), second.page)
    if pairs[-1][1] != join_page:
        pairs.append((len(first.chunk_text), join_page))
    for offset, page in decode_page_map(second.page_map):
        if offset > offset_in_second and page != pairs[-1][1]:
            pairs.append((len(first.chunk_text) + offset - offset_in_second, page))
    tier = max((first.tier, second.tier), key=lambda t: TIER_WEIGHTS.get(t, 1.0))
    return first.model_copy(update={
        "chunk_text": first.chunk_text + added, "page_map": encode_page_map(pairs), "tier": tier,
        "page_end": max(first.page_end or first.page, second.page_end or second.page),
        "relevance_score": max(first.relevance_score, second.relevance_score),
        "depth": min(first.depth, second.depth)})


def joined_passages(chunks: list[ChunkWithInfo]) -> list[ChunkWithInfo]:
    """The chunks, each once, with every run of consecutive chunks of one section joined into one passage;
    the passage takes the list place of the run's first chunk in document order."""
    by_id: dict[str, ChunkWithInfo] = {}
    for chunk in chunks:
        by_id.setdefault(chunk.chunk_id or str(id(chunk)), chunk)
    runs: dict[tuple[str, str, str], list[ChunkWithInfo]] = {}
    for chunk in by_id.values():
        if chunk.section:
            runs.setdefault((chunk.collection, chunk.document, chunk.section), []).append(chunk)
    replaced: dict[int, ChunkWithInfo | None] = {}  # id(chunk) -> the passage standing in its place, or None
    for members in runs.values():
        if len(members) < 2:
            continue
        members.sort(key=lambda c: c.char_start)
        passage, head = members[0], members[0]
        for chunk in members[1:]:
            joined = _join(passage, chunk) if chunk.continuation else None
            if joined is None:
                replaced[id(head)] = passage
                passage, head = chunk, chunk
            else:
                passage = joined
                replaced[id(chunk)] = None
        replaced[id(head)] = passage
    out = []
    for chunk in by_id.values():
        passage = replaced.get(id(chunk), chunk)
        if passage is not None:
            out.append(passage)
    return out
