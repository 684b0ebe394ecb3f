"""Render the fictional demo documents to PDFs in kb/ (run: python scripts/build_demo_kb.py [KB_DIR]).

The PDFs and kb/document_registry.json are committed; rerun only after editing
scripts/demo_kb_sources.py.
"""

from __future__ import annotations

import html
import json
import sys
from pathlib import Path

import pymupdf

sys.path.insert(0, str(Path(__file__).resolve().parent))
from demo_kb_sources import DOCUMENTS, REGISTRY  # noqa: E402

CSS = """
body { font-family: serif; font-size: 10pt; }
h1 { font-family: sans-serif; font-size: 14pt; font-weight: bold; }
h2 { font-family: sans-serif; font-size: 10.5pt; font-weight: bold; margin-top: 8pt; }
p { margin-top: 3pt; }
"""


def render(path: Path, title: str, subject: str, blocks: list[tuple[str, str]]) -> None:
    body = "".join(f"<{tag}>{html.escape(text)}</{tag}>" for tag, text in blocks)
    story = pymupdf.Story(html=f"<body>{body}</body>", user_css=CSS)
    mediabox = pymupdf.paper_rect("a4")
    where = mediabox + (60, 60, -60, -70)
    tmp = path.with_suffix(".tmp.pdf")
    writer = pymupdf.DocumentWriter(str(tmp))
    more = True
    while more:
        device = writer.begin_page(mediabox)
        more, _ = story.place(where)
        story.draw(device)
        writer.end_page()
    writer.close()
    document = pymupdf.open(tmp)
    short = title.split(" - ")[-1].rstrip(")") if " - " in title else path.stem
    for number, page in enumerate(document, start=1):
        page.insert_text((60, mediabox.height - 40), f"{short} - Seite {number} von {document.page_count}",
                         fontsize=8, fontname="helv")
    document.set_metadata({"title": title, "subject": subject, "author": "Rabbithole Lab demo (fictional)",
                           "creator": "scripts/build_demo_kb.py", "producer": "PyMuPDF"})
    document.save(path, garbage=3, deflate=True)
    document.close()
    tmp.unlink()


def main(kb_dir: Path) -> None:
    for collection, filename, title, subject, blocks in DOCUMENTS:
        folder = kb_dir / f"{collection}__db_inserted"
        folder.mkdir(parents=True, exist_ok=True)
        render(folder / filename, title, subject, blocks)
    (kb_dir / "document_registry.json").write_text(
        json.dumps(REGISTRY, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "kb")
