"""Moving a collection to another embedder: every chunk embedded again from the text the store holds (no file is
parsed again), into a collection beside the old one that replaces it only when all are in."""

from __future__ import annotations

from rabbithole_lab.kb.store.chroma_records import get_all

UPSERT_BATCH = 256
REEMBED_SUFFIX = "__reembed"  # a collection being re-embedded, beside the one it replaces


def reembed(index, collection: str, progress=None) -> int:
    """Re-embed every chunk of `collection` of `index` (a kb/store/index.py ChromaIndex) with its embedder. A process
    killed half-way leaves the old collection whole, and the next `reembed` goes on from the chunks already
    done. Returns the number of chunks."""
    name = index.chroma_name(collection)
    old = index.client.get_collection(name, embedding_function=None)
    got = get_all(old, ["documents", "metadatas"])
    fresh = index.client.get_or_create_collection(name + REEMBED_SUFFIX, embedding_function=None,
                                                  metadata=index._metadata(collection))
    done = set(get_all(fresh, [])["ids"])
    todo = [i for i, chunk_id in enumerate(got["ids"]) if chunk_id not in done]
    if progress is not None:
        progress.total = len(got["ids"])
        progress.update(len(got["ids"]) - len(todo))
    for start in range(0, len(todo), UPSERT_BATCH):
        rows = todo[start : start + UPSERT_BATCH]
        texts = [got["documents"][i] for i in rows]
        fresh.upsert(ids=[got["ids"][i] for i in rows], documents=texts,
                     embeddings=index.embed_texts(texts).tolist(),
                     metadatas=[got["metadatas"][i] for i in rows])
        if progress is not None:
            progress.update(len(rows))
    index.client.delete_collection(name)
    fresh.modify(name=name)
    index._handles.pop(collection, None)  # the old collection's handle
    index.files.drop(collection, name)  # the vectors file is stale
    return len(got["ids"])
