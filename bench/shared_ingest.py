"""Ingest beside competing processes (issue 73 item 4): `rabbithole ingest` of one collection of the law corpus
(EntsorgR, 146 chunks) alone, beside one, two and three CPU-bound processes, and two ingests at once, each with
the embedding threads chosen from the free cores (the default, `kb/embedding/free_cores.py`) and with every core
asked for (EMBEDDING_THREADS = the core count: the behaviour before).

Each ingest runs as its own process into an empty index with an empty vector cache, as `bench/ingest_speed.py`
runs whole ingests. Its throughput is set against its idle figure and against its fair share of the machine
with k competitors, 1/(k+1) of the idle figure. Two ingests at once are set against one idle ingest's time.
Targets: at least 0.8 of the fair share beside one, two and three competitors; two ingests at once finished in
at most 2.5 times one idle ingest.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import CORPUS, BenchContext, require, write_result

COLLECTION = "EntsorgR__db_inserted"
COMPETITORS = (1, 2, 3)
SETTLE_S = 1.0  # the competitors run this long before the ingest starts: the machine is busy when it looks
CHUNKS = re.compile(r"chunks \+(\d+)")
BUSY_LOOP = "while True: pass"


def _start_ingest(kb: Path, scratch: Path, name: str, threads: int) -> subprocess.Popen:
    env = {**os.environ, "LLM_PROVIDER": "extractive", "EMBEDDING_VECTOR_CACHE": str(scratch / f"vectors-{name}"),
           "EMBEDDING_THREADS": str(threads)}
    return subprocess.Popen([sys.executable, "-m", "rabbithole_lab.cli.main", "--env-file", "none", "ingest", str(kb),
                             "--db", str(scratch / f"db-{name}"), "--no-progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)


def _finish(process: subprocess.Popen, started: float) -> dict:
    printed = process.stdout.read() if process.stdout else ""
    code = process.wait()
    wall_s = time.perf_counter() - started
    if code not in (0, 1):
        raise RuntimeError(f"rabbithole ingest failed ({code}): {printed[-500:]}")
    found = CHUNKS.search(printed)
    chunks = int(found.group(1)) if found else 0
    return {"chunks": chunks, "wall_s": round(wall_s, 1), "chunks_per_s": round(chunks / wall_s, 2)}


def ingests(threads: int, count: int = 1, competitors: int = 0) -> list[dict]:
    """`count` ingests started together beside `competitors` busy loops; each one's chunks, time and rate."""
    with tempfile.TemporaryDirectory(prefix="bench-shared-ingest-") as folder:
        scratch = Path(folder)
        kb = CORPUS / COLLECTION  # one folder of files, read in place; the index and vectors go to scratch
        loops = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(competitors)]
        try:
            time.sleep(SETTLE_S if loops else 0)
            started = time.perf_counter()
            running = [_start_ingest(kb, scratch, str(number), threads) for number in range(count)]
            return [_finish(process, started) for process in running]
        finally:
            for loop in loops:
                loop.kill()
                loop.wait()


def measure(threads: int) -> dict:
    idle = ingests(threads)[0]
    out = {"idle": idle}
    for k in COMPETITORS:
        shared = ingests(threads, competitors=k)[0]
        fair = idle["chunks_per_s"] / (k + 1)
        out[f"beside {k}"] = shared | {"of_idle": round(shared["chunks_per_s"] / idle["chunks_per_s"], 2),
                                       "of_fair_share": round(shared["chunks_per_s"] / fair, 2)}
    pair = ingests(threads, count=2)
    slowest = max(run["wall_s"] for run in pair)
    out["two at once"] = {"wall_s": slowest, "of_one_idle": round(slowest / idle["wall_s"], 2),
                          "chunks_per_s": [run["chunks_per_s"] for run in pair]}
    return out


def bench(context: BenchContext) -> dict:
    require(CORPUS / COLLECTION, "The German law corpus (shared/corpus/de-strahlenschutz)")
    started = time.perf_counter()
    cores = len(os.sched_getaffinity(0))
    numbers = {"collection": COLLECTION, "cores": cores,
               "free cores (default)": measure(0), "every core (before)": measure(cores)}
    return {"numbers": numbers, "path": write_result("ingest-shared", context, numbers, started)}
