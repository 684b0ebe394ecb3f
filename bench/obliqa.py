"""ObliQA-XRef (English regulatory cross-references): flat against rabbithole, no LLM, on two rulebooks.

- **ADGM** (shared/bench/obliqa-xref): 40 rulebooks, 13,879 passages, 172 questions with the published test
  splits (ALL-test, DPEL-test, SCHEMA-test).
- **UKFIN** (shared/bench/obliqa-xref-ukfin): the UK PRA Rulebook, 334 pages, 38,916 passages, 314 dev
  questions (the test splits are held back by the maintainers).

Each corpus is ingested once into the index cache, each rulebook's title and aliases from documents.json go
into the registry (what a user's registry file would hold), and every question runs flat (the same candidate
pool and assembler, nothing followed) and with the rabbithole. The admitted context is mapped to passage ids
and scored with the benchmark's own score.py: Both@10 over the ten most valuable items (an item budget, as
`rabbithole eval --k 10` does), and Both within the first 12k and 25k characters of context.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import bm25s
from tqdm.auto import tqdm

from bench.common import SHARED, BenchContext, require, write_jsonl, write_result
from rabbithole_lab.eval.xref_eval import run_question, without_following
from rabbithole_lab.kb.kb_factory import open_knowledge_base
from rabbithole_lab.kb.store.registry import DocumentRegistry, RegistryEntry
from rabbithole_lab.rabbithole.engine import build_follower
from rabbithole_lab.reasoning.factory import build_gate

PID = re.compile(r"\[PID ([^\]]+)\]")
BLOCK = re.compile(r"^## \[PID ([^\]]+)\][^\n]*\n\n(.*?)(?=^## \[PID |\Z)", re.MULTILINE | re.DOTALL)
BOTH = re.compile(r"Both@\d+=([\d.]+)")
CUTS = {"both@10": None, "both@12k": 12_000, "both@25k": 25_000}
NO_BACKLINKS = "rabbithole without backlinks"
# what the benchmark's authors published for Both@10 on the test splits (their README), the anchor we are
# measured against; the UKFIN test splits are held back, so only the maintainers score them
PUBLISHED = {
    "adgm": {"ADGM-ALL-test": {"BM25": 0.785, "E5": 0.892},
             "ADGM-DPEL-test": {"BM25": 0.795, "E5": 0.841, "RRF": 0.932},
             "ADGM-SCHEMA-test": {"BM25": 0.780, "E5": 0.920, "RRF": 0.940}},
    # dev: the authors' runs scored by score.py (RRF recomputed), and plain bm25s over the passages
    "ukfin": {"UKFIN-ALL-dev": {"BM25": 0.587, "E5": 0.668, "RRF": 0.726, "bm25s": 0.707},
              "UKFIN-DPEL-dev": {"bm25s": 0.709}, "UKFIN-SCHEMA-dev": {"bm25s": 0.656}},
}
SETS = {
    "adgm": {"folder": SHARED / "bench" / "obliqa-xref", "questions": "questions.eval.jsonl",
             "splits": ("ADGM-ALL-test", "ADGM-DPEL-test", "ADGM-SCHEMA-test", "all")},
    "ukfin": {"folder": SHARED / "bench" / "obliqa-xref-ukfin", "questions": "questions.dev.eval.jsonl",
              "splits": ("UKFIN-ALL-dev", "UKFIN-DPEL-dev", "UKFIN-SCHEMA-dev", "all")},
}


def cut_at_chars(context: list[dict], budget: int) -> list[dict]:
    """The scorer's rule (shared/bench/score_xref.py): items while the running size is below the budget."""
    kept, total = [], 0
    for entry in context:
        if total >= budget:
            break
        kept.append(entry)
        total += len(entry.get("text", ""))
    return kept


def passages(folder: Path) -> dict[str, str]:
    """Each passage's text as the corpus folder ships it (the Markdown block under its `## [PID …]` line)."""
    texts = {}
    for path in sorted((folder / "corpus").glob("*.md")):
        for pid, body in BLOCK.findall(path.read_text(encoding="utf-8")):
            texts[pid] = body.strip()
    return texts


def plain_bm25s(folder: Path, questions: list[dict], out: Path) -> Path:
    """The anchor run again here: bm25s with its defaults and English stop words over the shipped passages,
    the ten best for each question (the benchmark README's own run read another copy of the passages)."""
    texts = passages(folder)
    pids = list(texts)
    index = bm25s.BM25()
    index.index(bm25s.tokenize([texts[pid] for pid in pids], stopwords="en", show_progress=False),
                show_progress=False)
    path = out / "pred_bm25s_both_10.jsonl"
    write_jsonl(path, [{"id": question["id"], "retrieved_pids": [pids[i] for i in index.retrieve(
        bm25s.tokenize([question["question"]], stopwords="en", show_progress=False), k=10,
        show_progress=False)[0][0]]} for question in questions])
    return path


def registry_entries(folder: Path) -> list[RegistryEntry]:
    documents = json.loads((folder / "documents.json").read_text(encoding="utf-8"))
    return [RegistryEntry(Path(d["file"]).name, "corpus", [*d.get("aliases", []), d["title"]])
            for d in documents.values()]


def score(folder: Path, predictions: Path, split: str, cut: str) -> float | None:
    """Both at a cut, by the benchmark's own scorer (which reads its own question file)."""
    k = ["--k", "10"] if cut == "both@10" else ["--k", "1000", "--pairmrr-depth", "0"]
    printed = subprocess.run([sys.executable, str(folder / "score.py"), str(predictions), "--split", split,
                              *k],
                             capture_output=True, text=True, check=True).stdout.strip().splitlines()
    found = BOTH.search(printed[-1])
    return float(found.group(1)) if found else None


def bench_set(context: BenchContext, name: str, limit: int = 0) -> dict:
    spec = SETS[name]
    folder = require(spec["folder"], f"ObliQA-XRef {name.upper()} (shared/bench/{spec['folder'].name})")
    started = time.perf_counter()
    corpus = folder / "corpus"
    db = context.index(corpus)
    ingest_s = round(time.perf_counter() - started, 1)
    kb = open_knowledge_base(context.settings, corpus, db)
    kb.registry = DocumentRegistry.merged(registry_entries(folder), kb.registry.entries)
    questions = [json.loads(line) for line in (folder / spec["questions"]).read_text(encoding="utf-8").splitlines()]
    questions = questions[:limit] if limit else questions
    out = context.out(f"obliqa-{name}")
    gate = build_gate(context.settings, kb.index.embedder)
    followers = {"flat": build_follower(kb, context.settings, gate,
                                        references=without_following(context.settings.references)),
                 "rabbithole": build_follower(kb, context.settings, gate),
                 # the backlink side's ablation (issue 73): following as shipped, no passage that cites a best hit
                 NO_BACKLINKS: build_follower(kb, context.settings, gate, references=context.settings.references
                                              .model_copy(update={"max_cited_by": 0}))}
    pid_of: dict[str, str] = {}

    def pids(entries: list[dict]) -> list[str]:
        found: list[str] = []
        for entry in entries:
            if entry["chunk_id"] not in pid_of:
                chunk = kb.index.get_chunks("corpus", ids=[entry["chunk_id"]])
                match = PID.search(chunk[0].heading if chunk else "") or PID.search(entry["text"])
                pid_of[entry["chunk_id"]] = match.group(1) if match else ""
            if pid_of[entry["chunk_id"]] and pid_of[entry["chunk_id"]] not in found:
                found.append(pid_of[entry["chunk_id"]])
        return found

    numbers: dict = {"ingest_s": ingest_s, "questions": len(questions)}
    for mode, follower in followers.items():
        rows = {cut: [] for cut in CUTS}
        seconds = []
        for question in tqdm(questions, desc=f"{name} {mode}", unit="q", disable=not context.show_progress):
            row = run_question(kb, question, "flat" if mode == "flat" else "rabbithole", follower, 25_000,
                               top_items=10)
            seconds.append(row["seconds"])
            for cut, chars in CUTS.items():
                entries = row["top_items"] if chars is None else cut_at_chars(row["context"], chars)
                rows[cut].append({"id": question["id"], "retrieved_pids": pids(entries)})
        numbers[mode] = {"seconds_per_question": round(sum(seconds) / len(seconds), 3)}
        for cut, predictions in rows.items():
            path = out / f"pred_{mode.replace(' ', '-')}_{cut.replace('@', '_')}.jsonl"
            write_jsonl(path, predictions)
            for split in spec["splits"]:
                numbers[mode].setdefault(split, {})[cut] = score(folder, path, split, cut)
    numbers["published_both@10"] = PUBLISHED[name]
    anchor = plain_bm25s(folder, questions, out)
    numbers["bm25s_shipped_passages"] = {split: score(folder, anchor, split, "both@10") for split in spec["splits"]}
    return {"numbers": numbers, "path": write_result(f"obliqa-{name}", context, numbers, started)}
