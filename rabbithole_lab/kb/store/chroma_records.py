"""How a chunk is stored in Chroma: its metadata record, the chunk read back from one, the embedder a
collection's metadata names, and whole-collection reads in pages."""

from __future__ import annotations

from rabbithole_lab.kb.ingest.sections import section_key
from rabbithole_lab.language import addresses_a_model
from rabbithole_lab.records import Chunk


def chunk_metadata(chunk: Chunk, file_hash: str) -> dict:
    return {
        "doc": chunk.doc,
        "collection": chunk.collection,
        "page_start": chunk.page_start,
        "page_end": chunk.page_end,
        "section": chunk.section,
        "section_key": section_key(chunk.section),
        "heading": chunk.heading[:500],
        "char_start": chunk.char_start,
        "page_map": chunk.page_map,
        "continuation": chunk.continuation,
        "addressed_to_model": chunk.addressed_to_model,
        "file_hash": file_hash,
    }


def stored_identity(metadata: dict | None) -> str:
    """The embedder a collection's metadata names; indexes from before backends were named are MiniLM's
    through sentence-transformers."""
    metadata = metadata or {}
    model = metadata.get("embedding_model")
    if not model:
        return ""
    return f"{metadata.get('embedding_backend', 'sentence-transformers')}:{model}"


# Chroma answers a `get` of a whole collection with one SQL statement whose variables grow with the
# number of chunks; SQLite refuses past its limit (a 10,000-page collection of ~46,000 chunks did), so
# whole-collection reads go page by page.
GET_PAGE_SIZE = 5_000


def get_all(handle, include: list[str], where: dict | None = None) -> dict[str, list]:
    """Every record of a Chroma collection (optionally filtered), read in pages of GET_PAGE_SIZE."""
    out: dict[str, list] = {"ids": [], **{name: [] for name in include}}
    offset = 0
    while True:
        got = handle.get(where=where, include=include, limit=GET_PAGE_SIZE, offset=offset)
        out["ids"].extend(got["ids"])
        for name in include:
            values = got.get(name)
            out[name].extend(list(values) if values is not None else [])
        if len(got["ids"]) < GET_PAGE_SIZE:
            return out
        offset += GET_PAGE_SIZE


def chunk_from(chunk_id: str, text: str, metadata: dict) -> Chunk:
    return Chunk(
        id=chunk_id,
        text=text,
        doc=metadata["doc"],
        collection=metadata["collection"],
        page_start=int(metadata["page_start"]),
        page_end=int(metadata["page_end"]),
        section=metadata.get("section", ""),
        heading=metadata.get("heading", ""),
        char_start=int(metadata.get("char_start", 0)),
        page_map=metadata.get("page_map", ""),
        continuation=bool(metadata.get("continuation", False)),
        # an index from before the flag: read from the text, as the ingest would have
        addressed_to_model=bool(metadata["addressed_to_model"]) if "addressed_to_model" in metadata
        else addresses_a_model(text),
    )
