"""Where a source document lives and the link that opens it at a page (one module for every layer:
attribution, report, workbench)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rabbithole_lab.kb.ingest.kb_folder import COLLECTION_SUFFIX


def resolve_source_path(kb_dir: Path | None, collection: str, doc: str) -> Path | None:
    """`<kb>/<collection>__db_inserted/<doc>`, else the first file named `doc` under the KB folder."""
    if kb_dir is None:
        return None
    kb_dir = Path(kb_dir)
    direct = kb_dir / f"{collection}{COLLECTION_SUFFIX}" / doc
    if direct.is_file():
        return direct.resolve()
    for candidate in sorted(kb_dir.rglob(doc)) if kb_dir.is_dir() else []:
        if candidate.is_file():
            return candidate.resolve()
    return None


def page_link(path: Path, page: int) -> str:
    """A file URI that PDF viewers open at `page` (the #page= fragment of RFC 8118)."""
    return f"{Path(path).resolve().as_uri()}#page={max(1, int(page))}"


def relative_page_link(path: Path, page: int, start: Path) -> str:
    """The same link relative to `start`, percent-encoded (a space would end a Markdown link); JupyterLab opens
    relative links inside its file browser."""
    import os
    from urllib.parse import quote

    relative = os.path.relpath(Path(path).resolve(), Path(start).resolve())
    return f"{quote(Path(relative).as_posix())}#page={max(1, int(page))}"


def links_relative_to(start: Path) -> Callable[[Path, int], str]:
    """A `(path, page) -> link` function for links relative to `start` (a notebook's folder)."""
    return lambda path, page: relative_page_link(Path(path), page, start)
