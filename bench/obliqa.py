"""ObliQA-XRef (English regulatory cross-references): flat, first stage only and rabbithole, no LLM.

Ingests ../shared/bench/obliqa-xref/corpus (40 ADGM rulebooks, one "## [PID ...]" heading per
passage), registers each rulebook's aliases from documents.json, runs every question three ways
(flat, first stage only, rabbithole), maps the ranked context to passage ids and scores with the
benchmark's own score.py on the ALL/DPEL/SCHEMA test splits and all 172 questions.

    .venv/bin/python bench/obliqa.py [--db /tmp/obliqa-db] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from rabbithole_lab.eval.xref import run_question
from rabbithole_lab.kb.factory import open_index, open_knowledge_base
from rabbithole_lab.kb.ingest import ingest
from rabbithole_lab.kb.registry import DocumentRegistry, RegistryEntry
from rabbithole_lab.rabbithole.engine import build_follower
from rabbithole_lab.settings import load_settings

BENCH = Path(__file__).resolve().parents[2] / "shared" / "bench" / "obliqa-xref"
PID = re.compile(r"\[PID ([^\]]+)\]")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", default=None, help="index folder (reused when it exists)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N questions")
    parser.add_argument("--out", default="bench/out/obliqa")
    args = parser.parse_args()
    settings = load_settings(env_file=None)
    corpus = BENCH / "corpus"
    db = Path(args.db or tempfile.mkdtemp(prefix="obliqa-db-"))
    started = time.perf_counter()
    report = ingest(corpus, open_index(settings, corpus, db), settings.kb, show_progress=True)
    ingest_s = time.perf_counter() - started
    kb = open_knowledge_base(settings, corpus, db)
    documents = json.loads((BENCH / "documents.json").read_text(encoding="utf-8"))
    hand = [RegistryEntry(Path(d["file"]).name, "corpus", d.get("aliases", []) + [d["title"]]) for d in documents.values()]
    kb.registry = DocumentRegistry.merged(hand, kb.registry.entries)
    questions = [json.loads(line) for line in (BENCH / "questions.eval.jsonl").read_text(encoding="utf-8").splitlines()]
    if args.limit:
        questions = questions[: args.limit]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    follower = build_follower(kb, settings)
    # flat is DESIGN §6's baseline (plain hybrid top-k); first_stage_only is the rabbithole's own retrieval
    # with following and backlinks off
    no_following = build_follower(kb, settings, limits=replace(follower.limits, follow_depth=0, max_cited_by=0))
    runs = {"flat": ("flat", None), "first_stage_only": ("rabbithole", no_following),
            "rabbithole": ("rabbithole", follower)}
    summary = {"ingest_s": round(ingest_s, 1), "chunks_added": report.chunks_added}
    for name, (mode, mode_follower) in runs.items():
        path = out / f"pred_{name}.jsonl"
        seconds = []
        with open(path, "w", encoding="utf-8") as sink:
            for question in questions:
                row = run_question(kb, question, mode, 10, mode_follower)
                seconds.append(row["seconds"])
                pids: list[str] = []
                for entry in row["context"]:
                    chunk = kb.index.get_chunks("corpus", ids=[entry["chunk_id"]])
                    heading = chunk[0].heading if chunk else ""
                    match = PID.search(heading) or PID.search(entry["text"])
                    if match and match.group(1) not in pids:
                        pids.append(match.group(1))
                sink.write(json.dumps({"id": question["id"], "retrieved_pids": pids}) + "\n")
        scores = {}
        for split in ("ADGM-ALL-test", "ADGM-DPEL-test", "ADGM-SCHEMA-test", "all"):
            result = subprocess.run([sys.executable, str(BENCH / "score.py"), str(path), "--split", split],
                                    capture_output=True, text=True, check=True).stdout.strip().splitlines()
            scores[split] = result[-1]
        summary[name] = {"seconds_mean": round(sum(seconds) / len(seconds), 3), **scores}
        print(name, json.dumps(summary[name]), flush=True)
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
