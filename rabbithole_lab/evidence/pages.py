"""Page-exact positions inside a chunk: which PDF page a character of the chunk's text is on.

A chunk can run over a page break; it stores a page map, "offset:page" pairs at each page change
("0:5,812:6": characters 0-811 are on page 5, from 812 on page 6). A quote cites the page where it
starts, and its last page when it runs on.
"""

from __future__ import annotations

import re


def encode_page_map(starts: list[tuple[int, int]]) -> str:
    """[(offset, page), ...] at every page change, as stored in the index metadata."""
    return ",".join(f"{offset}:{page}" for offset, page in starts)


def decode_page_map(page_map: str) -> list[tuple[int, int]]:
    pairs = []
    for item in (page_map or "").split(","):
        offset, _, page = item.partition(":")
        if offset.strip().isdigit() and page.strip().isdigit():
            pairs.append((int(offset), int(page)))
    return pairs


def page_at(page_map: str, offset: int, default: int) -> int:
    """The page of the character at `offset`; `default` (the chunk's first page) without a map."""
    page = default
    for start, start_page in decode_page_map(page_map):
        if start > offset:
            break
        page = start_page
    return page


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


_ELISION = re.compile(r"\s*…\s*")


def find_span(text: str, quote: str) -> tuple[int, int] | None:
    """Where `quote` stands in `text`, comparing whitespace-insensitively; None when it does not. A quote
    that elides with "…" stands there when its parts do, in order: from where the first starts to where the
    last ends."""
    parts = [part for part in _ELISION.split(quote) if part.strip()]
    if len(parts) < 2:
        return _find_span(text, quote)
    spans: list[tuple[int, int]] = []
    offset = 0
    for part in parts:
        span = _find_span(text[offset:], part)
        if span is None:
            return None
        spans.append((offset + span[0], offset + span[1]))
        offset = spans[-1][1]
    return spans[0][0], spans[-1][1]


def _find_span(text: str, quote: str) -> tuple[int, int] | None:
    if not quote.strip():
        return None
    index = text.find(quote)
    if index >= 0:
        return index, index + len(quote)
    # map positions of the whitespace-squashed text back to the original
    squashed, positions = [], []
    previous_space = False
    for position, char in enumerate(text):
        if char.isspace():
            if previous_space or not squashed:
                continue
            squashed.append(" ")
            previous_space = True
        else:
            squashed.append(char)
            previous_space = False
        positions.append(position)
    index = "".join(squashed).find(_squash(quote).rstrip(" …"))
    if index < 0:
        return None
    end = min(index + len(_squash(quote).rstrip(" …")) - 1, len(positions) - 1)
    return positions[index], positions[end] + 1


def quote_pages(text: str, page_map: str, quote: str, first_page: int) -> tuple[int, int]:
    """(page where the quote starts, page where it ends) inside a chunk; the chunk's first page when the
    quote is not found in it."""
    span = find_span(text, quote)
    if span is None:
        return first_page, first_page
    return page_at(page_map, span[0], first_page), page_at(page_map, max(span[0], span[1] - 1), first_page)
