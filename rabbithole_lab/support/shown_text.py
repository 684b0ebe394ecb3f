"""How text is cut where the reader sees only part of it: at a word, ended with "…" (the full text goes
into a tooltip or a panel that opens)."""

from __future__ import annotations


def shorten(text: str, max_chars: int) -> str:
    """`text` on one line, cut at a word before `max_chars` and ended with "…" when it was cut."""
    flat = " ".join(text.split())
    if len(flat) <= max_chars:
        return flat
    cut = flat[: max_chars - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut[max_chars // 2:] else cut).rstrip(" ,;:") + "…"


OPENING_WORDS = 6


def section_or_opening(section: str | None, text: str, words: int = OPENING_WORDS) -> str:
    """What a terminal row names a passage by: its section, or, for a passage before any section (a title
    page, a preamble), its first words in quotes instead of a bare "-"."""
    if section:
        return section
    opening = text.split()
    shown = " ".join(opening[:words]) + (" …" if len(opening) > words else "")
    return f"“{shown}”" if shown else "-"
