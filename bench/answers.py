"""End-to-end answers on the German law dev set, scored by shared/bench/score_answers.py. No LLM.

Full mode runs the whole agent unattended on all 80 dev questions (about a minute each) and keeps each run's
state before `synthesize` in the session cache. Quick mode re-synthesises those kept states with today's code
(synthesis, quality check, remediation, attribution: seconds a question): an answer change is measured on
the same research. The kept states are stale once the code that runs before `synthesize`, the index or the
settings change (`bench.resynthesis.research_code_hash`); quick mode then runs research again
first, unless `--reuse-sessions` says to measure on the old research anyway (the result records it).

Measured per dev generation and language: facts (whole answer), facts in the lead (the lines before the
first section heading), entry or required section cited, the lead citing one (the share of answers whose
lead cites the entry or a required section; and the scorer's mean share of those sections it cites),
page-exact, the median answer and lead length in characters, citation precision (the share of citations
in the entry, a required section or a section a followed reference reached from the entry), invented
citations (claims the claim check removed) and the Spearman correlation of the quality score with the facts.
"""

from __future__ import annotations

import hashlib
import json
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

from tqdm.auto import tqdm

from bench.common import (
    CORPUS,
    DEV_QUESTIONS,
    SHARED,
    BenchContext,
    read_jsonl,
    require,
    subsets,
    write_jsonl,
    write_result,
)
from bench.common import run as run_command
from bench.index_cache import cache_folder, index_key
from bench.resynthesis import (
    load_state,
    research_code_hash,
    resynthesize,
    save_state,
    state_before_synthesis,
)
from rabbithole_lab.eval.answer_eval import answer_citations
from rabbithole_lab.reasoning.checks.quality import lead_of
from rabbithole_lab.usecase.research_case import Research, open_services

logger = logging.getLogger(__name__)
SESSIONS_ENV = "RABBITHOLE_SESSION_CACHE"


def sessions_root() -> Path:
    return cache_folder(SESSIONS_ENV, "sessions")


def sessions_recipe(context: BenchContext) -> dict:
    """What decides the kept research: the index, the research code, the settings and the questions."""
    settings = context.settings.model_dump(mode="json")
    return {"index": index_key(CORPUS, context.settings), "research_code": research_code_hash(),
            "settings": hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16],
            "questions": hashlib.sha256(DEV_QUESTIONS.read_bytes()).hexdigest()[:16]}


QUALITY_DIMENSIONS = ("factual_accuracy", "semantic_validity", "structural_integrity", "citation_correctness",
                      "query_relevance", "verdict")


def answer_row(question: dict, status, seconds: float) -> dict:
    report = status.report or {}
    answer = report.get("answer", "")
    row = {"id": question["id"], "answer": answer, "citations": answer_citations(answer),
           "seconds": round(seconds, 3), "llm_calls": 0,
           "quality": report.get("quality_score"),
           # each dimension apart, so that which of them follows the facts can be read (issue 46's check)
           "quality_dimensions": {name: ((status.state or {}).get("quality_assessment") or {}).get(name)
                                  for name in QUALITY_DIMENSIONS},
           "invented": len((report.get("metadata") or {}).get("invented_citations", [])),
           "verdict": (report.get("metadata") or {}).get("verdict") or {},
           "followed": sorted({(edge.get("from_doc", ""), edge.get("from_section", ""), doc, section)
                               for edge in ((status.state or {}).get("reference_edges") or [])
                               if edge.get("decision") == "followed"
                               for doc, section in zip(edge.get("to_docs", []), edge.get("to_sections", []),
                                                       strict=False)})}
    if status.kind != "done":
        row["error"] = status.error or status.kind
    return row


def research_all(context: BenchContext, services, questions: list[dict], folder: Path) -> list[dict]:
    """Whole unattended runs; each run's state before `synthesize` is kept in `folder`. A run stopped part-way
    (killed, or out of time) goes on where it stopped: a question whose state the same research already kept
    is answered by synthesising that state again, which gives the answer its run gave."""
    rows = []
    resumed = 0
    with tempfile.TemporaryDirectory(prefix="bench-sessions-") as scratch:
        for question in tqdm(questions, desc="research (keeps each run's state)", unit="q",
                             disable=not context.show_progress):
            kept = folder / "states" / f"{question['id']}.json"
            started = time.perf_counter()
            if kept.is_file():
                status = resynthesize(services, load_state(kept), Path(scratch) / "resumed.sqlite")
                rows.append(answer_row(question, status, time.perf_counter() - started))
                resumed += 1
                continue
            research = Research(services, Path(scratch) / "sessions.sqlite")
            try:
                status = research.run_unattended(question["question"])
                state = state_before_synthesis(research.session) if research.session else None
            finally:
                research.close()
            if state is not None:
                save_state(folder / "states" / f"{question['id']}.json", state)
            rows.append(answer_row(question, status, time.perf_counter() - started))
    if resumed:
        logger.warning("%d of %d questions were researched by an earlier, stopped run of the same research (%s): "
                       "their kept states were synthesised again", resumed, len(questions), folder)
    return rows


def resynthesize_all(context: BenchContext, services, questions: list[dict], folder: Path) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-resynthesis-") as scratch:
        for question in tqdm(questions, desc="re-synthesis", unit="q", disable=not context.show_progress):
            path = folder / "states" / f"{question['id']}.json"
            started = time.perf_counter()
            if not path.is_file():  # the research never reached synthesis: no answer, as in a fresh run
                rows.append({"id": question["id"], "answer": "", "citations": [], "seconds": 0.0, "llm_calls": 0,
                             "error": "no kept state"})
                continue
            status = resynthesize(services, load_state(path), Path(scratch) / "sessions.sqlite")
            rows.append(answer_row(question, status, time.perf_counter() - started))
    return rows


def score_each(questions: list[dict], rows: list[dict], out: Path, tag: str) -> dict[str, dict]:
    """Each question's scores by shared/bench/score_answers.py --per-question, in one run of the scorer for
    all questions (it reads the corpus PDFs at every start): {"facts", "cited_req", "citations", "not_exact"}."""
    write_jsonl(out / f"questions_{tag}.jsonl", questions)
    write_jsonl(out / f"answers_{tag}.jsonl", rows)
    printed = run_command([sys.executable, str(SHARED / "bench" / "score_answers.py"),
                           str(out / f"questions_{tag}.jsonl"), str(out / f"answers_{tag}.jsonl"),
                           "--corpus", str(CORPUS), "--per-question"])
    return {item["id"]: item for item in (json.loads(line) for line in printed.splitlines() if line.startswith("{"))}


def aggregate(chosen: list[dict], scored: dict[str, dict]) -> dict:
    """The scorer's summary line over a subset, from its per-question scores (the same arithmetic:
    a quote that starts on the cited page and runs on counts as exact)."""
    items = [scored[question["id"]] for question in chosen]
    citations = sum(item["citations"] for item in items)
    inexact = sum(len(item["not_exact"]) for item in items)
    return {"facts": round(statistics.fmean(item["facts"] for item in items), 3),
            "facts_all": round(sum(1 for question, item in zip(chosen, items, strict=True)
                                   if question.get("answer_facts") and item["facts"] >= 1.0) / len(items), 3),
            "cited": round(statistics.fmean(item["cited_req"] for item in items), 3),
            "cited_any": round(statistics.fmean(item["cited_req"] > 0 for item in items), 3),
            "page_exact": round((citations - inexact) / citations, 3) if citations else 0.0}


def section_pages() -> dict[str, list[tuple[str, int, int]]]:
    """Each document's sections with their page ranges (the corpus's sections.jsonl)."""
    pages: dict[str, list[tuple[str, int, int]]] = {}
    for record in read_jsonl(CORPUS / "sections.jsonl"):
        pages.setdefault(record["doc"], []).append((record["section"], record["pages"][0], record["pages"][1]))
    return pages


def on_the_chain(question: dict, followed: list) -> set[tuple[str, str]]:
    """The entry, the required sections and every section a followed reference reached from the entry
    (transitively)."""
    entry = (question["entry"]["doc"], question["entry"]["section"])
    allowed = {entry} | {(item["doc"], item["section"]) for item in question.get("required", [])}
    reached, frontier = {entry}, [entry]
    while frontier:
        source = frontier.pop()
        for from_doc, from_section, doc, section in followed:
            if (from_doc, from_section) == source and (doc, section) not in reached:
                reached.add((doc, section))
                frontier.append((doc, section))
    return allowed | reached


def citation_precision(question: dict, row: dict, pages: dict[str, list[tuple[str, int, int]]]) -> float | None:
    """The share of the answer's citations whose page lies in a section on the chain (`on_the_chain`); a page
    holding several sections counts when one of them is. None: the answer cites nothing."""
    allowed = on_the_chain(question, row.get("followed", []))
    cited = row.get("citations", [])
    if not cited:
        return None
    precise = sum(1 for citation in cited if any(
        (citation["doc"], section) in allowed for section, first, last in pages.get(citation["doc"], [])
        if first <= citation["page"] <= last))
    return precise / len(cited)


def cites_section(citations: list[dict], doc: str, section: str, pages: dict[str, list[tuple[str, int, int]]]) -> bool:
    """Some citation's page lies in the section (a page holding several sections counts for each)."""
    return any(citation["doc"] == doc and any(name == section and first <= citation["page"] <= last
                                              for name, first, last in pages.get(doc, []))
               for citation in citations)


def verdict_row(question: dict, row: dict, lead_citations: list[dict],
                pages: dict[str, list[tuple[str, int, int]]]) -> dict:
    """What the answer names as decisive (the report's verdict record) against the gold: the entry, the chain
    (the entry or a required section); whether the lead quotes the named provision and the entry."""
    verdict = row.get("verdict") or {}
    named = (verdict.get("doc", ""), verdict.get("section", "")) if verdict.get("stated") else None
    entry = (question["entry"]["doc"], question["entry"]["section"])
    chain = {entry} | {(item["doc"], item["section"]) for item in question.get("required", [])}
    return {"stated": named is not None, "entry": named == entry, "chain": named in chain,
            "lead_quotes_named": named is not None and cites_section(lead_citations, *named, pages),
            "lead_quotes_entry": cites_section(lead_citations, *entry, pages)}


def verdict_numbers(items: list[dict]) -> dict:
    """Verdict accuracy (named = entry; named on the chain), abstention, the precision of a stated verdict, the
    lead quoting the named provision (of stated verdicts) and the entry (of all answers)."""
    stated = [item for item in items if item["stated"]]

    def share(chosen: list[dict], key: str) -> float | None:
        return round(sum(item[key] for item in chosen) / len(chosen), 3) if chosen else None

    return {"verdict_entry": share(items, "entry"), "verdict_chain": share(items, "chain"),
            "abstention": round(1 - len(stated) / len(items), 3) if items else None,
            "verdict_precision_entry": share(stated, "entry"), "verdict_precision_chain": share(stated, "chain"),
            "lead_quotes_named": share(stated, "lead_quotes_named"),
            "lead_quotes_entry": share(items, "lead_quotes_entry")}


def auc(scores: list[float], labels: list[bool]) -> float | None:
    """The probability that a right case scores above a wrong one (ties half); None without both kinds."""
    right = [s for s, label in zip(scores, labels, strict=True) if label]
    wrong = [s for s, label in zip(scores, labels, strict=True) if not label]
    if not right or not wrong:
        return None
    wins = sum((r > w) + 0.5 * (r == w) for r in right for w in wrong)
    return round(wins / (len(right) * len(wrong)), 3)


def spearman(xs: list[float], ys: list[float]) -> float | None:
    """Spearman's rank correlation (average ranks for ties); None for fewer than three pairs or no spread."""
    if len(xs) < 3:
        return None

    def ranks(values: list[float]) -> list[float]:
        order = sorted(range(len(values)), key=lambda i: values[i])
        out = [0.0] * len(values)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
                j += 1
            for k in range(i, j + 1):
                out[order[k]] = (i + j) / 2
            i = j + 1
        return out

    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    spread = (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5
    return round(cov / spread, 3) if spread else None


def measure(questions: list[dict], rows: list[dict], out: Path) -> dict:
    by_id = {row["id"]: row for row in rows}
    answers = [by_id[q["id"]] for q in questions]
    leads = [row | {"answer": lead_of(row["answer"]), "citations": answer_citations(lead_of(row["answer"]))}
             for row in answers]
    whole, lead = score_each(questions, answers, out, "all"), score_each(questions, leads, out, "lead_all")
    lead_by_id = {row["id"]: row for row in leads}
    pages = section_pages()
    verdicts = {q["id"]: verdict_row(q, by_id[q["id"]], lead_by_id[q["id"]]["citations"], pages) for q in questions}
    numbers = {}
    for name, chosen in subsets(questions).items():
        of_lead = aggregate(chosen, lead)
        quality = [float(by_id[q["id"]].get("quality") or 0) for q in chosen]
        numbers[name] = {"n": len(chosen), **verdict_numbers([verdicts[q["id"]] for q in chosen]),
                         # the check against the verdict: does the quality score tell a right verdict (on the chain)
                         # from a wrong or missing one
                         "quality_verdict_auc": auc(quality, [verdicts[q["id"]]["chain"] for q in chosen]),
                         "verdict_dimension_auc": auc(
                             [float((by_id[q["id"]].get("quality_dimensions") or {}).get("verdict") or 0)
                              for q in chosen], [verdicts[q["id"]]["chain"] for q in chosen]),
                         **aggregate(chosen, whole), "lead_facts": of_lead["facts"],
                         "lead_cited": of_lead["cited"], "lead_cited_any": of_lead["cited_any"],
                         "answer_chars": statistics.median(len(by_id[q["id"]]["answer"]) for q in chosen),
                         "lead_chars": statistics.median(len(lead_by_id[q["id"]]["answer"]) for q in chosen),
                         "citation_precision": round(statistics.fmean(precision), 3) if (precision := [
                             value for q in chosen if (value := citation_precision(q, by_id[q["id"]], pages))
                             is not None]) else None,
                         "invented": sum(by_id[q["id"]].get("invented", 0) for q in chosen),
                         "quality_vs_facts": spearman(
                             [float(by_id[q["id"]].get("quality") or 0) for q in chosen],
                             [float(whole[q["id"]]["facts"]) for q in chosen]),
                         "quality_vs_facts_by_dimension": {dimension: spearman(
                             [float((by_id[q["id"]].get("quality_dimensions") or {}).get(dimension, 0))
                              for q in chosen], [float(whole[q["id"]]["facts"]) for q in chosen])
                             for dimension in QUALITY_DIMENSIONS}}
    return numbers


def bench(context: BenchContext, reuse_sessions: bool = False) -> dict:
    require(DEV_QUESTIONS, "The German law dev set (shared/corpus/de-strahlenschutz)")
    started = time.perf_counter()
    out = context.out("answers")
    questions = read_jsonl(DEV_QUESTIONS)
    db = context.index(CORPUS)
    services = open_services(context.settings, CORPUS, db, show_progress=False)
    recipe = sessions_recipe(context)
    key = hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:16]
    root = sessions_root()
    folder = root / key
    kept = [path for path in root.glob("*/kept.json")] if root.is_dir() else []
    if context.quick and not (folder / "kept.json").is_file() and reuse_sessions and kept:
        folder = max(kept, key=lambda path: path.stat().st_mtime).parent
        logger.warning("Re-synthesising on kept research whose key differs (%s): --reuse-sessions", folder.name)
    if context.quick and (folder / "kept.json").is_file():
        mode = "re-synthesis of kept research"
        rows = resynthesize_all(context, services, questions, folder)
    else:
        mode = "fresh research" + (" (the kept research was stale or missing)" if context.quick else "")
        if context.quick:
            logger.warning("No kept research for today's research code, index and settings (%s): researching all "
                           "%d questions first, about a minute each; --reuse-sessions re-synthesises the newest kept "
                           "research instead", folder, len(questions))
        rows = research_all(context, services, questions, folder)
        (folder / "kept.json").write_text(json.dumps({**recipe, "commit": context.code_commit, "date": time.strftime(
            "%Y-%m-%d")}, indent=1), encoding="utf-8")
    write_jsonl(out / "answers.jsonl", rows)
    numbers = measure(questions, rows, out)
    sessions = json.loads((folder / "kept.json").read_text(encoding="utf-8"))
    return {"numbers": numbers, "path": write_result(
        "answers", context, numbers, started, mode=mode,
        research_kept_at=sessions.get("commit"), research_stale=sessions_recipe(context) != {
            k: sessions.get(k) for k in recipe})}

