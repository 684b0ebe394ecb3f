"""The ONNX query encoder: made from the local model, checked against it, used only while the full model is
not loaded, and a `rabbithole search` runs without importing torch."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from rabbithole_lab.kb.embedder import SentenceTransformerEmbedder
from rabbithole_lab.kb.query_encoder import ONNX_FILE, cache_root, encoder_dir, export_encoder, load_encoder
from rabbithole_lab.settings import load_settings
from tests.conftest import DEMO_KB, REPO

TEXTS = ["Welche Pflichten hat die Betreiberin einer Prüfanlage?",
         "calibration interval of the reference detector",
         "§ 4 Absatz 2 der Musterverordnung " * 60]  # longer than the model's 256 tokens: truncated alike


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """An embedder whose query encoders live in a folder of their own, and that folder."""
    root = tmp_path_factory.mktemp("encoders")
    settings = load_settings(env_file=None, embedding={"query_encoder_dir": str(root)})
    return SentenceTransformerEmbedder(settings.embedding), root


def test_no_copy_means_the_full_model_embeds_the_query(fresh):
    embedder, root = fresh
    assert load_encoder(root, embedder._model_dir()) is None
    assert cache_root("off") is None and cache_root("") is not None


def test_the_copy_embeds_queries_as_the_model_does(fresh):
    embedder, root = fresh
    model = embedder._load()  # loading the full model makes the copy
    folder = encoder_dir(root, embedder._model_dir())
    assert (folder / ONNX_FILE).is_file()
    copy = load_encoder(root, embedder._model_dir())
    expected = model.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)
    for text, vector in zip(TEXTS, expected, strict=True):
        assert float(np.dot(copy.encode(text), vector)) > 0.9999


def test_a_query_uses_the_copy_and_never_loads_the_full_model(fresh):
    embedder, root = fresh
    assert export_encoder(embedder._load(), embedder._model_dir(), root) is not None  # made before
    settings = load_settings(env_file=None, embedding={"query_encoder_dir": str(root)})
    searcher = SentenceTransformerEmbedder(settings.embedding)
    vector = searcher.embed_query(TEXTS[0])
    assert searcher._model is None and vector.shape == (384,)
    assert float(np.dot(vector, embedder._load().encode([TEXTS[0]], normalize_embeddings=True)[0])) > 0.9999


def test_a_damaged_copy_is_passed_over(fresh, tmp_path, caplog):
    embedder, root = fresh
    embedder._load()
    model_dir = embedder._model_dir()
    good, damaged = encoder_dir(root, model_dir), encoder_dir(tmp_path, model_dir)
    damaged.mkdir(parents=True)
    (damaged / ONNX_FILE).write_bytes((good / ONNX_FILE).read_bytes()[:4096])  # cut short, as by a full disk
    (damaged / "encoder.json").write_text((good / "encoder.json").read_text())
    assert load_encoder(tmp_path, model_dir) is None and "unusable" in caplog.text
    settings = load_settings(env_file=None, embedding={"query_encoder_dir": str(tmp_path)})
    searcher = SentenceTransformerEmbedder(settings.embedding)
    assert searcher.embed_query(TEXTS[1]).shape == (384,) and searcher._model is not None  # the full model answered


def test_a_search_command_imports_no_torch(demo_db):
    """What makes `rabbithole search` start fast: neither torch nor sentence-transformers is imported, and
    chromadb does not compile jsonschema's IRI grammar."""
    probe = ("import json, sys\nfrom rabbithole_lab.cli import main\n"
             f"code = main(['--env-file', 'none', 'search', 'Grenzwerte', '--kb', {str(DEMO_KB)!r}, '--db', "
             f"{str(demo_db)!r}, '--k', '2', '--json'])\n"
             "print(json.dumps({'code': code, 'heavy': sorted(m for m in ('torch', 'sentence_transformers', "
             "'rfc3987_syntax') if sys.modules.get(m) is not None)}))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=300,
                          env=os.environ.copy())
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary == {"code": 0, "heavy": []}
