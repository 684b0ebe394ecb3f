"""A scanned copy of a PDF: every page rendered to a grayscale image and put back into a PDF with no text layer.

Used by the OCR benchmark (`bench/ocr_scans.py`) and the tests to make scans of the demo knowledge base and of
corpus laws where they are needed (a temporary folder); a copy is never put into the repository. The pages are clean
renderings: a real scan adds skew, speckle and blur, so the accuracy measured on them is an upper bound.

    .venv/bin/python -m bench.scanned_copy SOURCE.pdf TARGET.pdf [--dpi 200] [--pages 1-5]
"""

from __future__ import annotations

import argparse
from pathlib import Path

SCAN_DPI = 200  # a common office-scanner setting


def scanned_copy(source: Path, target: Path, dpi: int = SCAN_DPI, pages: list[int] | None = None) -> Path:
    """Write `target`: the pages of `source` (all, or the 1-based `pages`) as images only. Pages not listed keep
    their text layer, so a mixed document is made by listing some pages."""
    import pymupdf

    scanned = set(pages) if pages is not None else None
    with pymupdf.open(source) as original, pymupdf.open() as copy:
        for number, page in enumerate(original, start=1):
            if scanned is not None and number not in scanned:
                copy.insert_pdf(original, from_page=number - 1, to_page=number - 1)
                continue
            image = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
            blank = copy.new_page(width=page.rect.width, height=page.rect.height)
            blank.insert_image(blank.rect, pixmap=image)
        copy.set_metadata({"title": (original.metadata or {}).get("title") or "", "producer": "scanned_copy"})
        target.parent.mkdir(parents=True, exist_ok=True)
        copy.save(target, garbage=3, deflate=True)
    return target


def _page_list(text: str) -> list[int]:
    first, _, last = text.partition("-")
    return list(range(int(first), int(last or first) + 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("target", type=Path)
    parser.add_argument("--dpi", type=int, default=SCAN_DPI)
    parser.add_argument("--pages", type=_page_list, default=None, help="first-last pages to scan (1-based)")
    args = parser.parse_args()
    scanned_copy(args.source, args.target, args.dpi, args.pages)


if __name__ == "__main__":
    main()
