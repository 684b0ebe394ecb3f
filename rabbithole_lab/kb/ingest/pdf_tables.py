"""Tables on a PDF page as rows of text that keep their header.

PyMuPDF's table finder gives each table's box and cells. A table becomes a header line and one line per row,
cells joined by " | " ("Organ | Grenzwert", "Augenlinse | 20 Millisievert"), in place of the text layer's lines
inside the table's box, which read cell by cell and lose which value belongs to which label. A table of one row or
one column is left as text: it is a framed paragraph, not a table.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

logger = logging.getLogger(__name__)

CELL_SEPARATOR = " | "
MIN_RULES = 3  # vector drawings a page needs before the table finder looks at it


@dataclass(frozen=True)
class PageTable:
    box: tuple[float, float, float, float]  # x0, y0, x1, y1 in points
    rows: tuple[str, ...]  # the header first when the table has one

    def holds(self, box: tuple[float, float, float, float]) -> bool:
        """Whether a text line with `box` lies inside the table (its centre does)."""
        x, y = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        return self.box[0] <= x <= self.box[2] and self.box[1] <= y <= self.box[3]


def _cell_texts(table, words: list[tuple]) -> list[list[str]]:
    """Each cell's words, from the page's words whose centre lies in the cell (the finder's own cell text can lose
    the spaces between words, and a cell's box can overlap the next row's line)."""
    rows = []
    for row in table.rows:
        cells = []
        for box in row.cells:
            inside = [word[4] for word in words if box is not None
                      and box[0] <= (word[0] + word[2]) / 2 <= box[2] and box[1] <= (word[1] + word[3]) / 2 <= box[3]]
            cells.append(" ".join(inside))
        rows.append(cells)
    return rows


def page_tables(page) -> list[PageTable]:
    """The tables PyMuPDF finds on `page`, each as its box and its rows of text. Only a page with ruled lines is
    searched: the finder takes about a second a page, the check for lines a millisecond."""
    try:
        if len(page.get_cdrawings()) < MIN_RULES:
            return []
        found = page.find_tables()
    except Exception as exc:  # a damaged drawing costs the tables of a page, never the page's text
        logger.debug("table finder failed on page %s: %s", page.number + 1, exc)
        return []
    tables = []
    words = page.get_text("words") if found.tables else []
    for table in found.tables:
        # a header printed inside the box is the first row; one printed above it stays a text line before the rows
        rows = [row for row in _cell_texts(table, words) if any(row)]
        if len(rows) < 2 or max(len([cell for cell in row if cell]) for row in rows) < 2:
            continue
        lines = tuple(CELL_SEPARATOR.join(cell for cell in row if cell) for row in rows)
        tables.append(PageTable(tuple(round(value, 2) for value in table.bbox), lines))
    return tables
