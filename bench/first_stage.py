"""Where the first stage loses the pair: each leg and each step of retrieval alone, on UKFIN dev and ADGM.

Both@10 of the passage pair (source and cited target) over the first ten distinct passages of:
- `bm25s plain`: bm25s over the passage text only (English stop words), the anchor the issue names;
- `bm25 leg`, `dense leg`: each of our two legs alone (`KnowledgeBase.search` in one mode);
- `hybrid`: both legs fused by reciprocal rank (`KnowledgeBase.search`);
- `retrieve`: the first stage of a question (named documents' own searches, one hit per section);
- `flat items`: the flat pipeline's ten most valuable items (what Both@10 in `obliqa-*` measures).
Written to bench/results/first-stage-<set>.json; run with `python -m bench --only first-stage-ukfin`.
"""

from __future__ import annotations

import json
import time

import bm25s
from tqdm.auto import tqdm

from bench.common import BenchContext, require, write_result
from bench.obliqa import PID, SETS, passages, registry_entries
from rabbithole_lab.eval.xref_eval import run_question, without_following
from rabbithole_lab.kb.kb_factory import open_knowledge_base
from rabbithole_lab.kb.store.registry import DocumentRegistry
from rabbithole_lab.rabbithole.engine import build_follower
from rabbithole_lab.reasoning.factory import build_gate


def gold_pairs(folder, questions_file: str) -> dict[str, tuple[str, str]]:
    scorer_questions = "questions.dev.jsonl" if "ukfin" in folder.name else "questions.jsonl"
    pairs = {}
    for line in (folder / scorer_questions).read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        source = item.get("source_pid") or item.get("source_passage_id")
        target = item.get("target_pid") or item.get("target_passage_id")
        pairs[item["id"]] = (source, target)
    return pairs


def bm25_variants(kb) -> dict:
    """The BM25 leg with one thing changed at a time (what the leg adds to a passage's own words): the heading
    field left out, the document's name left out of the body, and both with the heading line too."""
    from rabbithole_lab.kb.retrieval.lexical import Bm25Index, analyze, defined_terms
    from rabbithole_lab.kb.retrieval.search import _result
    from rabbithole_lab.kb.store.index import get_all

    got = get_all(kb.index._collection("corpus"), ["documents", "metadatas"])
    language = kb.index.bm25("corpus").language
    by_id = {cid: (text, meta) for cid, text, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True)}

    def build(doc_name: bool, heading_line: bool) -> Bm25Index:
        index = Bm25Index([], [], language)
        bm25s_module = __import__("bm25s")
        body, heading = [], []
        for cid in by_id:
            text, meta = by_id[cid]
            own = text if heading_line else text.split("\n", 1)[-1]
            tokens = analyze(own, language) + (analyze(meta["doc"].rsplit(".", 1)[0], language) if doc_name else [])
            body.append(tokens or ["\u2205"])
            heading.append(analyze(" ".join([meta.get("heading", ""), *defined_terms(text, meta.get("heading", ""))]),
                                   language) or ["\u2205"])
        index._body, index._heading = bm25s_module.BM25(), bm25s_module.BM25()
        index._body.index(body, show_progress=False)
        index._heading.index(heading, show_progress=False)
        index.ids = list(by_id)
        index.docs = [by_id[cid][1]["doc"] for cid in by_id]
        index._doc_array = __import__("numpy").array(index.docs, dtype=object)
        return index

    def searcher(index: Bm25Index, fields: tuple[str, ...]):
        def search(question: str) -> list:
            ranked = index.search(question, 10, fields=fields)
            chunks = {chunk.id: chunk for chunk in kb.index.get_chunks("corpus", ids=[cid for cid, _ in ranked])}
            return [_result(chunks[cid], score, "bm25") for cid, score in ranked if cid in chunks]
        return search

    default = kb.index.bm25("corpus")
    no_name = build(doc_name=False, heading_line=True)
    text_only = build(doc_name=False, heading_line=False)
    return {"bm25 leg, no heading field": searcher(default, ("body",)),
            "bm25 leg, no document name": searcher(no_name, ("body", "heading")),
            "bm25 leg, passage text only": searcher(text_only, ("body",))}


def both_at(found: list[str], pair: tuple[str, str], k: int = 10) -> float:
    top = found[:k]
    return float(pair[0] in top and pair[1] in top)


def bench(context: BenchContext, name: str) -> dict:
    spec = SETS[name]
    folder = require(spec["folder"], f"ObliQA-XRef {name.upper()}")
    started = time.perf_counter()
    corpus = folder / "corpus"
    kb = open_knowledge_base(context.settings, corpus, context.index(corpus))
    kb.registry = DocumentRegistry.merged(registry_entries(folder), kb.registry.entries)
    questions = [json.loads(line) for line in (folder / spec["questions"]).read_text(encoding="utf-8").splitlines()]
    pairs = gold_pairs(folder, spec["questions"])
    texts = passages(folder)
    pids = list(texts)
    plain = bm25s.BM25()
    plain.index(bm25s.tokenize([texts[pid] for pid in pids], stopwords="en", show_progress=False),
                show_progress=False)
    pid_of: dict[str, str] = {}

    def to_pids(hits) -> list[str]:
        out = []
        for hit in hits:
            if hit.chunk_id not in pid_of:
                match = PID.search(hit.heading or "") or PID.search(hit.text)
                pid_of[hit.chunk_id] = match.group(1) if match else ""
            if pid_of[hit.chunk_id] and pid_of[hit.chunk_id] not in out:
                out.append(pid_of[hit.chunk_id])
        return out

    gate = build_gate(context.settings, kb.index.embedder)
    flat = build_follower(kb, context.settings, gate, references=without_following(context.settings.references))
    legs = {
        "bm25s plain": lambda q: [pids[i] for i in plain.retrieve(bm25s.tokenize([q], stopwords="en",
                                                                                 show_progress=False),
                                                                  k=10, show_progress=False)[0][0]],
        "bm25 leg": lambda q: to_pids(kb.search(q, k=10, mode="bm25")),
        "dense leg": lambda q: to_pids(kb.search(q, k=10, mode="dense")),
        "hybrid": lambda q: to_pids(kb.search(q, k=10, mode="hybrid")),
        "retrieve": lambda q: to_pids(kb.retrieve(q, k=10)),
    }
    scores = {leg: [] for leg in [*legs, "flat items"]}
    for question in tqdm(questions, desc=f"first stage {name}", unit="q", disable=not context.show_progress):
        pair = pairs[question["id"]]
        for leg, search in legs.items():
            scores[leg].append(both_at(search(question["question"]), pair))
        row = run_question(kb, question, "flat", flat, 25_000, top_items=10)
        found = []
        for entry in row["top_items"]:
            chunk = kb.index.get_chunks("corpus", ids=[entry["chunk_id"]])
            match = PID.search(chunk[0].heading if chunk else "")
            if match and match.group(1) not in found:
                found.append(match.group(1))
        scores["flat items"].append(both_at(found, pair))
    for variant, search in bm25_variants(kb).items():
        scores[variant] = [both_at(to_pids(search(q["question"])), pairs[q["id"]]) for q in questions]
    numbers = {leg: round(sum(values) / len(values), 3) for leg, values in scores.items()}
    numbers["questions"] = len(questions)
    return {"numbers": numbers, "path": write_result(f"first-stage-{name}", context, numbers, started)}
