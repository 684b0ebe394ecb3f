"""Shared fixtures: real settings, real embedder, real Chroma in temporary folders.

The demo KB (kb/ in the repo) is ingested once per session. The shared corpus
(../shared/corpus/de-strahlenschutz) is ingested once per machine into the index cache that the benchmarks
share (rabbithole_lab.eval.index_cache: keyed by the corpus's bytes, the chunker and the embedder, so a stale
index is never used; RABBITHOLE_INDEX_CACHE moves it). Every test that uses the corpus is marked `corpus`
(added here from its fixtures), so `-m "not corpus"` never pays for the ingest.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from rabbithole_lab.eval.index_cache import cached_index
from rabbithole_lab.kb.factory import open_index, open_knowledge_base
from rabbithole_lab.kb.ingest import ingest
from rabbithole_lab.settings import load_settings

REPO = Path(__file__).resolve().parent.parent
DEMO_KB = REPO / "kb"
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus" / "de-strahlenschutz"
CORPUS_MISSING = "needs ../shared/corpus/de-strahlenschutz next to the repository (absent here)"
CORPUS_FIXTURES = {"corpus_db", "corpus_kb"}

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
for noisy in ("bm25s", "chromadb", "httpx", "sentence_transformers"):
    logging.getLogger(noisy).setLevel(logging.WARNING)


@pytest.fixture(scope="session")
def settings():
    return load_settings(env_file=None)


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory, settings) -> Path:
    db = tmp_path_factory.mktemp("demo-db")
    report = ingest(DEMO_KB, open_index(settings, DEMO_KB, db), settings.kb, show_progress=False)
    assert report.ok and not report.skipped, report
    return db


@pytest.fixture(scope="session")
def demo_kb(settings, demo_db):
    return open_knowledge_base(settings, DEMO_KB, demo_db)


@pytest.fixture(scope="session")
def corpus_db(settings) -> Path:
    if not CORPUS.is_dir():
        pytest.skip(CORPUS_MISSING)
    db, report = cached_index(CORPUS, settings)
    assert report.ok and not report.skipped, report
    return db


@pytest.fixture(scope="session")
def corpus_kb(settings, corpus_db):
    return open_knowledge_base(settings, CORPUS, corpus_db)


def pytest_collection_modifyitems(items):
    """A test that uses the shared corpus is a corpus test, whether or not it says so."""
    for item in items:
        if CORPUS_FIXTURES & set(getattr(item, "fixturenames", ())) and not item.get_closest_marker("corpus"):
            item.add_marker(pytest.mark.corpus)


def english_only(embedder):
    """The same real embedder, declared to read English only (as MiniLM is): what the rules for an
    embedder that cannot read the text's language do, tested without a second model."""
    import copy

    copied = copy.copy(embedder)
    copied.languages = frozenset({"en"})
    return copied
