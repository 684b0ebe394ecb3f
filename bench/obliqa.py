"""ObliQA-XRef (English regulatory cross-references): flat, first stage only and rabbithole, no LLM.

Ingests ../shared/bench/obliqa-xref/corpus (40 ADGM rulebooks, one "## [PID ...]" heading per
passage), registers each rulebook's aliases from documents.json, runs every question flat (the same
candidate pool and assembler, nothing followed) and with the rabbithole at the same character budget,
maps the admitted context to passage ids and scores with the benchmark's own score.py on the
ALL/DPEL/SCHEMA test splits and all 172 questions: Both@10 over passages, and Both within the first
12k and 25k characters of context.

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
from pathlib import Path

from rabbithole_lab.eval.xref import run_question, without_following
from rabbithole_lab.kb.factory import open_index, open_knowledge_base
from rabbithole_lab.kb.ingest import ingest
from rabbithole_lab.kb.registry import DocumentRegistry, RegistryEntry
from rabbithole_lab.rabbithole.engine import build_follower
from rabbithole_lab.reasoning.factory import build_gate
from rabbithole_lab.settings import load_settings

BENCH = Path(__file__).resolve().parents[2] / "shared" / "bench" / "obliqa-xref"
PID = re.compile(r"\[PID ([^\]]+)\]")


def cut_at_chars(context: list[dict], budget: int) -> list[dict]:
    """The scorer's rule (shared/bench/score_xref.py): items while the running size is below the budget."""
    kept, total = [], 0
    for entry in context:
        if total >= budget:
            break
        kept.append(entry)
        total += len(entry.get("text", ""))
    return kept


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", default=None, help="index folder (reused when it exists)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N questions")
    parser.add_argument("--out", default="bench/out/obliqa")
    parser.add_argument("--budget-chars", type=int, default=25_000)
    args = parser.parse_args()
    settings = load_settings(env_file=None)
    corpus = BENCH / "corpus"
    db = Path(args.db or tempfile.mkdtemp(prefix="obliqa-db-"))
    started = time.perf_counter()
    report = ingest(corpus, open_index(settings, corpus, db), settings.kb, show_progress=True)
    ingest_s = time.perf_counter() - started
    kb = open_knowledge_base(settings, corpus, db)
    documents = json.loads((BENCH / "documents.json").read_text(encoding="utf-8"))
    hand = [RegistryEntry(Path(d["file"]).name, "corpus", d.get("aliases", []) + [d["title"]])
            for d in documents.values()]
    kb.registry = DocumentRegistry.merged(hand, kb.registry.entries)
    questions = [json.loads(line) for line in (BENCH / "questions.eval.jsonl").read_text(encoding="utf-8").splitlines()]
    if args.limit:
        questions = questions[: args.limit]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    gate = build_gate(settings, kb.index.embedder)
    # flat: the same pool and assembler with nothing followed; both at the same character budget
    runs = {"flat": build_follower(kb, settings, gate, references=without_following(settings.references)),
            "rabbithole": build_follower(kb, settings, gate)}
    summary = {"ingest_s": round(ingest_s, 1), "chunks_added": report.chunks_added}
    pid_of: dict[str, str] = {}

    def pid(entry: dict) -> str | None:
        if entry["chunk_id"] not in pid_of:
            chunk = kb.index.get_chunks("corpus", ids=[entry["chunk_id"]])
            match = PID.search(chunk[0].heading if chunk else "") or PID.search(entry["text"])
            pid_of[entry["chunk_id"]] = match.group(1) if match else ""
        return pid_of[entry["chunk_id"]] or None

    for name, follower in runs.items():
        cuts = {"10": out / f"pred_{name}.jsonl", "10 of context": out / f"pred_{name}_10ctx.jsonl",
                "12k": out / f"pred_{name}_12k.jsonl", "25k": out / f"pred_{name}_25k.jsonl"}
        sinks = {cut: open(path, "w", encoding="utf-8") for cut, path in cuts.items()}
        seconds = []
        for question in questions:
            row = run_question(kb, question, name, follower, args.budget_chars, top_items=10)
            seconds.append(row["seconds"])
            for cut, chars in (("10", None), ("10 of context", None), ("12k", 12_000), ("25k", 25_000)):
                pids: list[str] = []
                # Both@10 counts items: the ten most valuable (an item budget); "10 of context" is the first
                # ten of the character-budget context, which admits by value per character
                entries = (row["top_items"] if cut == "10" else row["context"] if cut == "10 of context"
                           else cut_at_chars(row["context"], chars))
                for entry in entries:
                    found = pid(entry)
                    if found and found not in pids:
                        pids.append(found)
                sinks[cut].write(json.dumps({"id": question["id"], "retrieved_pids": pids}) + "\n")
        for sink in sinks.values():
            sink.close()
        scores = {}
        for split in ("ADGM-ALL-test", "ADGM-DPEL-test", "ADGM-SCHEMA-test", "all"):
            for cut, path in cuts.items():
                k = ["--k", "10"] if cut.startswith("10") else ["--k", "1000", "--pairmrr-depth", "0"]
                result = subprocess.run([sys.executable, str(BENCH / "score.py"), str(path), "--split", split, *k],
                                        capture_output=True, text=True, check=True).stdout.strip().splitlines()
                both = re.search(r"Both@\d+=([\d.]+)", result[-1])
                scores[f"{split} both@{cut}"] = float(both.group(1)) if both else None
                if cut == "10":
                    scores[f"{split} @10"] = result[-1]
        summary[name] = {"seconds_mean": round(sum(seconds) / len(seconds), 3), **scores}
        print(name, json.dumps(summary[name]), flush=True)
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
