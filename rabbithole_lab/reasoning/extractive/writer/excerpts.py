"""A long sentence quoted as its excerpt: its opening, and of its list items and clauses those that carry the
question, the rest elided with "…" ("… mindestens eine der folgenden Maßnahmen: … 4. Absaugung von Radon an
Randfugen …"). A statute's enumeration runs to hundreds of characters, and quoted whole one item of it takes
half the lead; the excerpt leaves room for the next statement. Its pieces stand in the passage in the order
quoted, so the quotation is still found on its page (`pages.find_span` reads an elision so).
"""

from __future__ import annotations

import re
from collections.abc import Callable

ELISION = "…"
# a sentence shorter than this is quoted whole: its pieces are short already
EXCERPT_MIN_CHARS = 250
# a piece is kept when it carries at least this share of the best piece's weight of the question's terms
KEEP_SHARE = 0.8
# an excerpt that does not save at least this share of the sentence is not worth its elisions
MIN_SAVING_SHARE = 0.15
# where a sentence divides: before a list item's number after a comma, colon or semicolon ("…: 1. Verringerung
# …, 2. gezielte …", "…; b) …"), and after a semicolon that ends a clause
_PIECE_BREAK = re.compile(r"(?<=[,;:])\s+(?=(?:\d{1,3}[a-z]?\.|[a-z]{1,2}\))\s)|(?<=;)\s+")

Weigh = Callable[[list[str]], list[float]]  # each text's weight of the question's terms


def sentence_pieces(text: str) -> list[str]:
    """The sentence's opening, then each list item and clause, in order; joined by spaces they are the text."""
    return [piece for piece in _PIECE_BREAK.split(text) if piece.strip()]


def excerpt(text: str, weigh: Weigh) -> str:
    """The sentence as quoted: the whole when it is short, divides into fewer than three pieces, or no piece
    after its opening carries a term of the question; else its opening and the pieces that carry the question
    best, the others elided."""
    if len(text) < EXCERPT_MIN_CHARS:
        return text
    pieces = sentence_pieces(text)
    if len(pieces) < 3:
        return text
    weights = weigh(pieces[1:])
    best = max(weights)
    if best <= 0:
        return text
    kept = [True] + [weight > 0 and weight >= best * KEEP_SHARE for weight in weights]
    out: list[str] = []
    for index, (piece, keep) in enumerate(zip(pieces, kept, strict=True)):
        if keep:
            out.append(piece)
        elif index == 0 or kept[index - 1]:  # one elision for a run of dropped pieces
            out.append(ELISION)
    shown = " ".join(out)
    return shown if len(shown) <= len(text) * (1 - MIN_SAVING_SHARE) else text
