"""How a law's and a rulebook's units are named, whatever the language: the one normaliser of a section's unit
("§§" -> "§", "Artikel" -> "Art.", "Anlagen" -> "Anlage"), list items that are Roman numerals, and a range of
section numbers written out. The headings at ingest, both citation grammars and the resolver read them."""

from __future__ import annotations

MAX_RANGE_EXPANSION = 30

# The one normaliser of section labels: headings at ingestion, references, lookups and BM25 tokens
# all name a section the same way ("§ 78", "Art. 3", "Anlage 4", "Anhang II").
_UNITS = {"art": "Art.", "artikel": "Art.", "artikeln": "Art.", "artt": "Art.", "anlage": "Anlage", "anlagen": "Anlage",
          "anhang": "Anhang", "anh": "Anhang"}


def normal_unit(unit: str) -> str:
    """'§§' -> '§'; 'Artikel' / 'Artt.' -> 'Art.'; 'Anlagen' -> 'Anlage'; 'Anh.' -> 'Anhang'."""
    key = unit.strip().lower().rstrip(".")
    if key.startswith("§"):
        return "§"
    return _UNITS.get(key, unit.strip().title())


ROMAN_ITEMS = frozenset({"i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x", "xi", "xii", "xiii", "xiv",
                         "xv"})


def is_roman_item(item: str, previous_letter: str) -> bool:
    """An item label ("vi", "d") is a Roman numeral, not a letter: "i", "v" and "x" right after the letter
    before them ("(h) … (i)") are letters."""
    after_letter = len(item) == 1 and bool(previous_letter) and ord(item) == ord(previous_letter) + 1
    return item in ROMAN_ITEMS and not after_letter


def expand_range(first: str, last: str) -> list[str]:
    """"184" to "187" and "4.13.5" to "4.13.7" expand (same prefix, last part numeric); others stay ends."""
    prefix, _, low = first.rpartition(".")
    last_prefix, _, high = last.rpartition(".")
    if (prefix == last_prefix and low.isdigit() and high.isdigit()
            and 0 < int(high) - int(low) <= MAX_RANGE_EXPANSION):
        return [f"{prefix}.{n}" if prefix else str(n) for n in range(int(low), int(high) + 1)]
    return [first, last]
