"""The search files beside the index (BM25 and the dense vectors in its order) stay in step with Chroma."""

from __future__ import annotations

import numpy as np

from rabbithole_lab.kb.ingest.ingest import ingest
from rabbithole_lab.kb.kb_factory import open_index
from rabbithole_lab.kb.store.index import get_all
from rabbithole_lab.kb.store.search_files import VECTORS_FILE

FIRST = "§ 1 Zweck\nDiese Ordnung regelt das Wiegen von Kürbissen auf Jahrmärkten.\n\n" \
        "§ 2 Waagen\nJede Waage ist vor dem Markttag zu eichen.\n"
CHANGED = "§ 1 Zweck\nDiese Ordnung regelt das Zählen von Laternen im Hafen.\n\n" \
          "§ 2 Waagen\nJede Waage ist vor dem Markttag zu eichen.\n"


def _kb(tmp_path, text: str):
    folder = tmp_path / "kb" / "Markt__db_inserted"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Marktordnung.md").write_text(text, encoding="utf-8")
    return tmp_path / "kb"


def test_the_vectors_beside_the_index_are_chromas_in_the_bm25_order(tmp_path, settings):
    kb = _kb(tmp_path, FIRST)
    index = open_index(settings, kb, tmp_path / "db")
    ingest(kb, index, settings.kb, show_progress=False)
    folder = index.search_files_folder("Markt")
    vectors = np.load(folder / VECTORS_FILE)
    bm25 = index.bm25("Markt")
    stored = get_all(index._collection("Markt"), ["embeddings"])
    by_id = dict(zip(stored["ids"], stored["embeddings"], strict=True))
    assert vectors.shape[0] == len(bm25.ids) == 2
    for row, chunk_id in enumerate(bm25.ids):
        assert np.allclose(vectors[row], by_id[chunk_id])
    assert not list(folder.parent.glob("*.partial-*"))  # written beside, then swapped in


def test_a_changed_document_is_searched_as_it_is_now_in_a_new_process(tmp_path, settings):
    kb = _kb(tmp_path, FIRST)
    ingest(kb, open_index(settings, kb, tmp_path / "db"), settings.kb, show_progress=False)
    _kb(tmp_path, CHANGED)
    ingest(kb, open_index(settings, kb, tmp_path / "db"), settings.kb, show_progress=False)
    fresh = open_index(settings, kb, tmp_path / "db")  # as a later `rabbithole search` opens it
    query = fresh.embedder.embed_query("Laternen im Hafen zählen")
    [(best, similarity)] = fresh.dense("Markt", query, k=1)
    assert "Laternen" in best.text and similarity > 0.3
    assert all("Kürbis" not in chunk.text for chunk, _ in fresh.dense("Markt", query, k=5))


def test_missing_vectors_are_rebuilt_on_the_first_search(tmp_path, settings):
    kb = _kb(tmp_path, FIRST)
    ingest(kb, open_index(settings, kb, tmp_path / "db"), settings.kb, show_progress=False)
    fresh = open_index(settings, kb, tmp_path / "db")
    (fresh.search_files_folder("Markt") / VECTORS_FILE).unlink()  # an index written before the file existed
    hits = fresh.dense("Markt", fresh.embedder.embed_query("Waage eichen"), k=1)
    assert hits and "Waage" in hits[0][0].text
    assert (fresh.search_files_folder("Markt") / VECTORS_FILE).exists()


def test_a_title_shared_by_many_blocks_weighs_little_and_a_sections_own_title_fully():
    from rabbithole_lab.kb.retrieval.lexical import heading_weight, title_words

    assert title_words("[PID 9a8b] 4.1 (Chapter 4 Key Functions)") == "chapter key functions"
    # a law: each section's title is its own; a long section's windows repeat its heading (one block)
    assert heading_weight(["G.pdf"] * 4, ["§ 1 Zweck", "§ 2 Begriffe", "§ 2 Begriffe", "§ 3 Pflichten"]) == 1.0
    # a rulebook that heads every passage with its chapter's title: four blocks share one title
    rulebook = [f"[PID {n}] 4.{n} (Chapter 4 Key Functions)" for n in range(1, 5)]
    assert heading_weight(["R.md"] * 4, rulebook) == 0.25
    assert heading_weight(["R.md"] * 3, ["1.1", "1.2", "1.3"]) == 1.0  # numbers only: no title to weigh
