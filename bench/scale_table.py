"""Scale on the scoreboard (issue 73 item 5): for the German law corpus, ObliQA-XRef ADGM and UKFIN, the time and
peak memory of `rabbithole ingest` into an empty index, and the first stage's search latency, on an idle machine
and beside one CPU-bound process.

Each ingest runs as its own process (what a user runs) with the default settings and an empty vector cache, as
`bench/ingest_speed.py` runs them; its peak RSS is its own (`os.wait4`). Search latency is the first stage of a
research (`KnowledgeBase.retrieve`: the question, its clauses and the documents it names, fused) over the index
just built, p50 and p95 over the corpus's first questions after a warm-up search (the last of them) that opens
the index, and the wall time and peak RSS of one `rabbithole search` command (a cold start: what a user waits
for). Each measurement embeds its questions into a vector cache of its own, as a user's new question is embedded.
"Shared" is the same with one busy loop on the machine, started a moment before.

The whole run takes about 90 minutes on two cores (UKFIN's two ingests are an hour of it).
`BENCH_SCALE_CORPORA=law,adgm` measures only those (the result names the ones left out).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from bench.common import CORPUS, DEV_QUESTIONS, SHARED, BenchContext, require, write_result
from bench.ingest_speed import ingest_into, timed_process
from bench.shared_ingest import BUSY_LOOP, SETTLE_S

ADGM = SHARED / "bench" / "obliqa-xref"
UKFIN = SHARED / "bench" / "obliqa-xref-ukfin"
CORPORA = {"law": (CORPUS, DEV_QUESTIONS), "adgm": (ADGM / "corpus", ADGM / "questions.jsonl"),
           "ukfin": (UKFIN / "corpus", UKFIN / "questions.dev.jsonl")}
QUERIES = 50


@contextmanager
def machine(shared: bool):
    """The machine idle, or with one CPU-bound process running beside what is measured."""
    loop = subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) if shared else None
    try:
        time.sleep(SETTLE_S if loop else 0)
        yield
    finally:
        if loop:
            loop.kill()
            loop.wait()


def questions_of(path: Path, count: int = QUERIES) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["question"] for line in lines if line.strip()][:count]


def search(kb_dir: Path, db: Path, questions: list[str], context: BenchContext, vectors: Path) -> dict:
    """The first stage's latency over the index in `db`. The questions' vectors go to `vectors`, a cache of this
    measurement's own: a question is embedded as a user's new question is (with the shared cache, the second
    measurement of a corpus read the first one's vectors back, 12 ms against 84 ms on the law corpus)."""
    from rabbithole_lab.kb.kb_factory import open_knowledge_base

    embedding = context.settings.embedding.model_copy(update={"vector_cache": str(vectors / "in-process")})
    settings = context.settings.model_copy(update={"embedding": embedding})
    started = time.perf_counter()
    kb = open_knowledge_base(settings, kb_dir, db)
    # opening the index (search files, BM25, the embedder) is not query work: the last question opens it
    kb.retrieve(questions[-1], k=10)
    open_s = time.perf_counter() - started
    latencies = []
    for question in questions[:-1]:
        started = time.perf_counter()
        kb.retrieve(question, k=10)
        latencies.append((time.perf_counter() - started) * 1000)
    _, code, cli_s, cli_rss_mb = timed_process(
        [sys.executable, "-m", "rabbithole_lab.cli.main", "--env-file", "none", "search", questions[1], "--kb",
         str(kb_dir), "--db", str(db), "--k", "10"],
        {**os.environ, "LLM_PROVIDER": "extractive", "EMBEDDING_VECTOR_CACHE": str(vectors / "command")})
    if code != 0:
        raise RuntimeError(f"rabbithole search over {kb_dir} failed ({code})")
    return {"queries": len(latencies), "query_vectors": "embedded", "open_index_s": round(open_s, 2),
            "search_p50_ms": round(statistics.median(latencies), 1),
            "search_p95_ms": round(statistics.quantiles(latencies, n=20)[18], 1),
            "cli_search_s": round(cli_s, 2), "cli_search_peak_rss_mb": round(cli_rss_mb, 1)}


def measure(kb_dir: Path, questions: list[str], context: BenchContext, shared: bool) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as folder, machine(shared):
        scratch = Path(folder)
        return {"ingest": ingest_into(kb_dir, scratch),
                "search": search(kb_dir, scratch / "db", questions, context, scratch / "query-vectors")}


def bench(context: BenchContext) -> dict:
    chosen = [name.strip() for name in os.environ.get("BENCH_SCALE_CORPORA", ",".join(CORPORA)).split(",")]
    unknown = [name for name in chosen if name not in CORPORA]
    if unknown:
        raise ValueError(f"BENCH_SCALE_CORPORA: unknown corpora {unknown}; known: {', '.join(CORPORA)}")
    for name in chosen:
        require(CORPORA[name][0], f"the {name} corpus ({CORPORA[name][0]})")
        require(CORPORA[name][1], f"the {name} questions ({CORPORA[name][1]})")
    started = time.perf_counter()
    numbers: dict = {"queries": QUERIES, "not measured": [name for name in CORPORA if name not in chosen]}
    for name in chosen:
        kb_dir, questions_path = CORPORA[name]
        questions = questions_of(questions_path)
        numbers[name] = {"idle": measure(kb_dir, questions, context, shared=False),
                         "shared": measure(kb_dir, questions, context, shared=True)}
        # each corpus as it is measured: a long run that stops keeps what it has
        write_result("scale", context, numbers, started)
    return {"numbers": numbers, "path": write_result("scale", context, numbers, started)}
