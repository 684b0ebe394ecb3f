"""Scale benchmark: a generated statute-like corpus of many pages, ingested and searched.

Generates `--pages` PDF pages (default 10,000) of fictional statutes: numbered sections with
Absätze that cite other sections of the same law and of the other laws ("nach § 12 Absatz 2 des
Synthesegesetzes 4"), written with PyMuPDF. Then runs the product's ingest on them and records
wall time, peak RSS, chunks/s, the raw embedder's throughput on a sample of the same chunk texts,
hybrid search latency in process (p50/p95) and the wall time of a `rabbithole search` command.
Usage:

    .venv/bin/python bench/scale.py [--pages 10000] [--work /tmp/scale-bench] [--keep]
    .venv/bin/python bench/scale.py --reuse --work /tmp/scale-bench   # search only, on a kept index

The text is generated from a small vocabulary written for this benchmark; it is no law.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

WORDS = ("Betreiber Anlage Genehmigung Behörde Prüfung Anzeige Messung Schutzmaßnahme Aufsicht Bericht "
         "Grenzwert Überwachung Verfahren Unterlage Nachweis Frist Sachverständige Einrichtung Personal "
         "Ausbildung Dokumentation Auflage Betrieb Stilllegung Sicherheit Vorsorge Ermittlung Bewertung "
         "Anforderung Zulassung Prüfbericht Aufzeichnung Kontrolle Wartung Lagerung Beförderung").split()
VERBS = ("hat … sicherzustellen|ist … verpflichtet|kann … anordnen|darf … nur erteilen|hat … unverzüglich "
         "mitzuteilen|ist … vorzulegen|bedarf … der Zustimmung").split("|")
FONT_SIZE = 9
LINES_PER_PAGE = 40


def law_name(number: int) -> tuple[str, str]:
    return f"Synthesegesetz {number}", f"SynG{number}"


def _sentence(rng: random.Random, own: int, laws: int, sections: int) -> str:
    subject, obj = rng.sample(WORDS, 2)
    verb = rng.choice(VERBS).replace("…", f"die {obj}")
    text = f"Die {subject} {verb}"
    roll = rng.random()
    if roll < 0.35:  # a reference into the same law
        text += f" nach § {rng.randint(1, sections)} Absatz {rng.randint(1, 4)}"
    elif roll < 0.55:  # a reference into another law, by its genitive name
        other = rng.choice([n for n in range(1, laws + 1) if n != own] or [own])
        text += f" nach § {rng.randint(1, sections)} des {law_name(other)[0].replace('gesetz', 'gesetzes')}"
    return text + "."


def _law_lines(rng: random.Random, number: int, laws: int, pages: int) -> list[str]:
    """Lines of one law filling about `pages` pages."""
    name, short = law_name(number)
    sections = max(1, pages * 2)
    lines = [f"{name} ({short})", ""]
    section = 0
    while len(lines) < pages * LINES_PER_PAGE:
        section += 1
        lines += ["", f"§ {section} {rng.choice(WORDS)} und {rng.choice(WORDS)}"]
        for paragraph in range(1, rng.randint(2, 5)):
            body = " ".join(_sentence(rng, number, laws, sections) for _ in range(rng.randint(2, 4)))
            words, line = body.split(), f"({paragraph})"
            for word in words:
                if len(line) + len(word) > 90:
                    lines.append(line)
                    line = word
                else:
                    line += " " + word
            lines.append(line)
    return lines


def generate(folder: Path, total_pages: int, laws: int, seed: int = 7) -> int:
    """Write `laws` PDFs with `total_pages` pages between them; returns the page count written."""
    import pymupdf

    rng = random.Random(seed)
    target = folder / "Synthese__db_inserted"
    target.mkdir(parents=True, exist_ok=True)
    written = 0
    per_law = max(1, total_pages // laws)
    for number in range(1, laws + 1):
        lines = _law_lines(rng, number, laws, per_law)
        pdf = pymupdf.open()
        for start in range(0, len(lines), LINES_PER_PAGE):
            page = pdf.new_page()
            page.insert_text((40, 40), "\n".join(lines[start:start + LINES_PER_PAGE]), fontsize=FONT_SIZE)
            written += 1
        pdf.save(target / f"{law_name(number)[1]}.pdf", garbage=3, deflate=True)
        pdf.close()
    return written


def _queries(rng: random.Random, count: int) -> list[str]:
    queries = []
    for _ in range(count):
        a, b = rng.sample(WORDS, 2)
        queries.append(rng.choice([f"Wer hat die {a} der {b} sicherzustellen?",
                                   f"§ {rng.randint(1, 400)} SynG{rng.randint(1, 9)}",
                                   f"{a} und {b} nach dem Synthesegesetz {rng.randint(1, 9)}"]))
    return queries


def _search_numbers(kb_dir: Path, db: Path, settings, embedder) -> dict:
    """Hybrid search latency in process (after one warm-up search that opens the index) and the wall time
    of a `rabbithole search` command on the same index."""
    from rabbithole_lab.kb.kb_factory import open_knowledge_base

    started = time.perf_counter()
    kb = open_knowledge_base(settings, kb_dir, db, embedder=embedder)
    kb.search("Aufsicht der Behörde", k=10)  # opening the index (search files, BM25) is not query work
    open_s = time.perf_counter() - started
    rng = random.Random(11)
    latencies = []
    for query in _queries(rng, 100):
        started = time.perf_counter()
        kb.search(query, k=10)
        latencies.append((time.perf_counter() - started) * 1000)
    cli = Path(sys.executable).with_name("rabbithole")
    started = time.perf_counter()
    done = subprocess.run([str(cli), "--env-file", "none", "search", "Prüfung der Anlage durch die Behörde", "--kb",
                           str(kb_dir), "--db", str(db), "--k", "5"], capture_output=True, text=True)
    return {"open_index_s": round(open_s, 2), "search_p50_ms": round(statistics.median(latencies), 1),
            "search_p95_ms": round(statistics.quantiles(latencies, n=20)[18], 1),
            "cli_search_s": round(time.perf_counter() - started, 2), "cli_search_rc": done.returncode}


def measure_search(work: Path) -> None:
    from rabbithole_lab.kb.kb_factory import shared_embedder
    from rabbithole_lab.settings import load_settings

    kb_dir, db = work / "kb", work / "db"
    if not db.is_dir():
        raise SystemExit(f"no kept index in {db}: run with --keep first")
    settings = load_settings(env_file=None)
    embedder = shared_embedder(settings)
    result = {"reused_index": str(db), **_search_numbers(kb_dir, db, settings, embedder),
              "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
              "machine": f"{platform.machine()} cpus={os.cpu_count()}", "date": time.strftime("%Y-%m-%d")}
    print(json.dumps(result, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--laws", type=int, default=20)
    parser.add_argument("--work", default="/tmp/scale-bench", help="folder for the generated corpus and its index")
    parser.add_argument("--keep", action="store_true", help="keep the generated corpus and index")
    parser.add_argument("--raw-sample", type=int, default=3000, help="chunks embedded raw for the throughput ratio")
    parser.add_argument("--reuse", action="store_true",
                        help="measure search only, in a fresh process, on the index a --keep run left in --work")
    args = parser.parse_args()
    if args.reuse:
        measure_search(Path(args.work))
        return

    from rabbithole_lab.kb.ingest.ingest import ingest
    from rabbithole_lab.kb.kb_factory import open_index, shared_embedder
    from rabbithole_lab.settings import load_settings

    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    kb_dir, db = work / "kb", work / "db"
    started = time.perf_counter()
    pages = generate(kb_dir, args.pages, args.laws)
    generate_s = time.perf_counter() - started

    settings = load_settings(env_file=None, embedding={"vector_cache": "off"})  # every chunk embedded
    embedder = shared_embedder(settings)
    embedder.embed_query("warm up")  # the model load is not ingestion work
    index = open_index(settings, kb_dir, db, embedder=embedder)
    started = time.perf_counter()
    report = ingest(kb_dir, index, settings.kb, show_progress=True)
    ingest_s = time.perf_counter() - started
    chunks = report.chunks_added
    ingest_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    collection = index._collection("Synthese")
    sample = collection.get(limit=args.raw_sample, include=["documents"])["documents"]
    started = time.perf_counter()
    embedder.embed_documents(sample)
    raw_chunks_per_s = len(sample) / (time.perf_counter() - started)

    search = _search_numbers(kb_dir, db, settings, embedder)
    result = {
        "pages": pages, "laws": args.laws, "chunks": chunks, "generate_s": round(generate_s, 1),
        "ingest_s": round(ingest_s, 1), "ingest_chunks_per_s": round(chunks / ingest_s, 1),
        "raw_embedder_chunks_per_s": round(raw_chunks_per_s, 1),
        "ingest_vs_raw_embedder": round((chunks / ingest_s) / raw_chunks_per_s, 3),
        "peak_rss_mb_ingest": round(ingest_rss_mb, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        **search,
        "machine": f"{platform.machine()} cpus={os.cpu_count()}", "date": time.strftime("%Y-%m-%d"),
    }
    print(json.dumps(result, indent=1))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
