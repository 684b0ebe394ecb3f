"""Knowledge-base benchmark on the shared corpus.

Measures ingestion split into PDF parsing, chunking and embedding+indexing, the raw
embedder throughput on the same chunk texts, peak RSS, and hybrid search latency
(p50/p95 over 100 queries). Usage:

    .venv/bin/python bench/kb.py [--corpus ../shared/corpus/de-strahlenschutz]
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import statistics
import tempfile
import time
from pathlib import Path

from rabbithole_lab.kb.ingest.chunking import chunk_document
from rabbithole_lab.kb.ingest.kb_folder import discover
from rabbithole_lab.kb.ingest.parse import parse_file
from rabbithole_lab.kb.kb_factory import open_index, open_knowledge_base, shared_embedder
from rabbithole_lab.settings import load_settings


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--corpus", default=str(Path(__file__).resolve().parents[2] / "shared/corpus/de-strahlenschutz")
    )
    args = parser.parse_args()
    corpus = Path(args.corpus)
    settings = load_settings(env_file=None)
    embedder = shared_embedder(settings)
    embedder.embed_query("warm up")  # model load is not ingestion work

    files, _ = discover(corpus)
    started = time.perf_counter()
    parsed = [(f.collection, parse_file(f.path)) for f in files]
    parse_s = time.perf_counter() - started
    pages = sum(doc.page_count for _, doc in parsed)

    started = time.perf_counter()
    chunked = [
        (collection, doc, chunk_document(doc, collection, *settings.kb.chunking_for(collection)))
        for collection, doc in parsed
    ]
    chunk_s = time.perf_counter() - started
    n_chunks = sum(len(chunks) for _, _, chunks in chunked)

    with tempfile.TemporaryDirectory() as db:
        index = open_index(settings, corpus, Path(db), embedder=embedder)
        started = time.perf_counter()
        for collection, doc, chunks in chunked:
            index.replace_document(collection, doc.doc, chunks, doc.file_hash)
        for collection in sorted({c for c, _, _ in chunked}):
            index.rebuild_bm25(collection)
        index_s = time.perf_counter() - started

        texts = [chunk.text for _, _, chunks in chunked for chunk in chunks]
        started = time.perf_counter()
        embedder.embed_documents(texts)
        raw_embed_s = time.perf_counter() - started

        kb = open_knowledge_base(settings, corpus, Path(db), embedder=embedder)
        questions = [json.loads(line)["question"] for line in (corpus / "questions.dev.jsonl").open()]
        titles = [
            f'{json.loads(line)["section"]} {json.loads(line)["title"]}' for line in (corpus / "sections.jsonl").open()
        ]
        queries = (questions + titles[:: max(1, len(titles) // 60)])[:100]
        kb.search("warm up", k=10)
        latencies = []
        for query in queries:
            started = time.perf_counter()
            kb.search(query, k=10)
            latencies.append((time.perf_counter() - started) * 1000)

    total_s = parse_s + chunk_s + index_s
    result = {
        "files": len(files),
        "pages": pages,
        "chunks": n_chunks,
        "parse_s": round(parse_s, 2),
        "chunk_s": round(chunk_s, 2),
        "embed_index_s": round(index_s, 2),
        "ingest_pages_per_s": round(pages / total_s, 2),
        "ingest_chunks_per_s": round(n_chunks / total_s, 2),
        "raw_embedder_chunks_per_s": round(n_chunks / raw_embed_s, 2),
        "ingest_vs_raw_embedder": round((n_chunks / total_s) / (n_chunks / raw_embed_s), 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "search_queries": len(latencies),
        "search_p50_ms": round(statistics.median(latencies), 1),
        "search_p95_ms": round(statistics.quantiles(latencies, n=20)[18], 1),
        "machine": f"{platform.machine()} {platform.processor() or ''} cpus={__import__('os').cpu_count()}".strip(),
        "date": time.strftime("%Y-%m-%d"),
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
