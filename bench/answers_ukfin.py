"""The extractive answer on a second corpus: UKFIN dev (UK PRA Rulebook, 314 questions, English).

UKFIN gives no answer facts, but each question needs two passages: the source and the one it cites. So the
measure is whether the answer quotes them: the lead (the lines before the first section heading, as for the
German answers) and the whole answer. A quotation counts for a passage when it is found in that passage's text
(`pages.find_span`, which reads an elision "…").

The answer is written by the extractive reasoner from the rabbithole context of 25,000 characters (what
`bench/obliqa.py` measures at @25k), with the followed references as its chains and the registry's document
names. It is the writer on a corpus it was not fitted on, not a whole research run: no clarification, no tasks.

    .venv/bin/python -m bench --only answers-ukfin [--limit N]
"""

from __future__ import annotations

import json
import statistics
import time

from tqdm.auto import tqdm

from bench.common import BenchContext, require, write_jsonl, write_result
from bench.obliqa import PID, SETS, registry_entries
from rabbithole_lab.eval.xref_eval import follow_question
from rabbithole_lab.evidence.pages import find_span
from rabbithole_lab.kb.store.registry import DocumentRegistry
from rabbithole_lab.rabbithole.engine import admit
from rabbithole_lab.reasoning.base import SynthesisInput
from rabbithole_lab.reasoning.checks.claim_check import quotations
from rabbithole_lab.reasoning.checks.quality import lead_of
from rabbithole_lab.records import ChunkWithInfo
from rabbithole_lab.steps.synthesis_context import reference_chains
from rabbithole_lab.usecase.research_case import open_services

CONTEXT_CHARS = 25_000


def quoted_passages(text: str, chunks: list[ChunkWithInfo]) -> set[str]:
    """The passage ids whose text holds a quotation of `text`."""
    quotes = quotations(text)
    found = set()
    for chunk in chunks:
        marker = PID.search(chunk.chunk_text) or PID.search(chunk.heading or "")
        if marker and any(find_span(chunk.chunk_text, quote) for quote in quotes):
            found.add(marker.group(1))
    return found


def ukfin_services(context: BenchContext):
    """The UKFIN index's services with the rulebook's document names, its follower and its dev questions."""
    folder = SETS["ukfin"]["folder"]
    require(folder / "questions.dev.jsonl", "ObliQA-XRef UKFIN (shared/bench/obliqa-xref-ukfin)")
    corpus = folder / "corpus"
    services = open_services(context.settings, corpus, context.index(corpus), show_progress=False)
    services.kb.registry = DocumentRegistry.merged(registry_entries(folder), services.kb.registry.entries)
    questions = [json.loads(line) for line in (folder / "questions.dev.jsonl").read_text(encoding="utf-8").splitlines()]
    return services, services.follower(), questions


def ukfin_request(context: BenchContext, services, follower, question: dict) -> SynthesisInput:
    """The synthesis request for one question: the rabbithole context of `CONTEXT_CHARS`, its followed references
    as chains, the registry's document names."""
    kb = services.kb
    trail = follow_question(kb, follower, question["question"], "en")
    chunks = [ChunkWithInfo.from_result(item.result, depth=item.depth, tier=item.tier or "primary",
                                        relevance_score=item.relevance)
              for item in admit(trail.candidates, CONTEXT_CHARS)]
    chains = reference_chains({"reference_edges": [edge.model_dump() for edge in trail.edges],
                               "detected_language": "en"}, {"primary": chunks},
                              lambda book: kb.registry.resolve_document_name(book)[0])
    return SynthesisInput(anchor=question["question"], language="en", question=question["question"],
                          primary=chunks, chains=chains,
                          document_names=kb.registry.display_names(chunk.document for chunk in chunks),
                          lead_max_chars=context.settings.answer.lead_max_chars,
                          answer_max_chars=context.settings.answer.answer_max_chars)


def passage_ids(chunk: ChunkWithInfo) -> set[str]:
    return {match.group(1) for text in (chunk.chunk_text, chunk.heading or "") for match in PID.finditer(text)}


def bench(context: BenchContext, limit: int = 0) -> dict:
    started = time.perf_counter()
    services, follower, questions = ukfin_services(context)
    questions = questions[:limit] if limit else questions
    rows = []
    for question in tqdm(questions, desc="UKFIN answers", unit="q", disable=not context.show_progress):
        asked = time.perf_counter()
        request = ukfin_request(context, services, follower, question)
        chunks = request.primary
        output = services.reasoner.synthesize(request)
        answer = output.answer
        lead = lead_of(answer)
        in_lead, in_answer = quoted_passages(lead, chunks), quoted_passages(answer, chunks)
        pair = {question["source_pid"], question["target_pid"]}
        verdict = output.verdict or {}
        named = [chunk for chunk in chunks if verdict.get("stated") and chunk.document == verdict.get("doc")
                 and chunk.section == verdict.get("section")]
        named_pids = set().union(*(passage_ids(chunk) for chunk in named)) if named else set()
        rows.append({"id": question["id"], "answer": answer, "lead_chars": len(lead), "answer_chars": len(answer),
                     "lead_quotes": sorted(in_lead), "answer_quotes": sorted(in_answer),
                     "lead_source": question["source_pid"] in in_lead, "lead_target": question["target_pid"] in in_lead,
                     "lead_either": bool(pair & in_lead), "answer_either": bool(pair & in_answer),
                     "answer_both": pair <= in_answer, "verdict": verdict,
                     "verdict_stated": bool(verdict.get("stated")),
                     "verdict_entry": question["source_pid"] in named_pids,
                     "verdict_chain": bool(pair & named_pids),
                     "lead_quotes_named": bool(named_pids & in_lead),
                     "seconds": round(time.perf_counter() - asked, 3)})
    write_jsonl(context.out("answers-ukfin") / "answers.jsonl", rows)

    def share(key: str) -> float:
        return round(sum(row[key] for row in rows) / len(rows), 3) if rows else 0.0

    stated = [row for row in rows if row["verdict_stated"]]
    numbers = {"n": len(rows), **verdict_numbers(rows, stated),
               "lead_either": share("lead_either"), "lead_source": share("lead_source"),
               "lead_target": share("lead_target"), "answer_either": share("answer_either"),
               "answer_both": share("answer_both"),
               "lead_chars": statistics.median(row["lead_chars"] for row in rows) if rows else 0,
               "answer_chars": statistics.median(row["answer_chars"] for row in rows) if rows else 0,
               "seconds_per_question": round(statistics.fmean(row["seconds"] for row in rows), 3) if rows else 0.0}
    return {"numbers": numbers, "path": write_result("answers-ukfin", context, numbers, started)}


def verdict_numbers(rows: list[dict], stated: list[dict]) -> dict:
    """The verdict rows of issue 69: the named provision is the entry (the source passage), on the chain (source or
    target); abstention; precision of a stated verdict; the lead quoting the named provision and the entry."""
    if not rows:
        return {}
    return {"verdict_entry": round(sum(row["verdict_entry"] for row in rows) / len(rows), 3),
            "verdict_chain": round(sum(row["verdict_chain"] for row in rows) / len(rows), 3),
            "abstention": round(1 - len(stated) / len(rows), 3),
            "verdict_precision_entry": round(sum(row["verdict_entry"] for row in stated) / len(stated), 3)
            if stated else None,
            "verdict_precision_chain": round(sum(row["verdict_chain"] for row in stated) / len(stated), 3)
            if stated else None,
            "lead_quotes_named": round(sum(row["lead_quotes_named"] for row in stated) / len(stated), 3)
            if stated else None,
            "lead_quotes_entry": round(sum(row["lead_source"] for row in rows) / len(rows), 3)}
