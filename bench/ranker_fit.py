"""Fit the answer's sentence ranker (`rabbithole_lab/reasoning/extractive/writer/sentence_ranker.py`) and measure it.

    .venv/bin/python -m bench --only ranker

1. **Data.** For every dev question with kept research (`bench/answers.py` keeps each run's state before
   `synthesize`), the synthesis request is rebuilt as the agent builds it and every candidate sentence's
   features are measured by the extractive writer's own code (`CandidateReader.answer_context`). A
   candidate's label: it holds one of the question's `answer_facts` (compared as shared/bench's scorer
   compares: case-, whitespace- and hyphenation-insensitive). Written to bench/out/ranker/candidates.jsonl.
2. **Fit** a logistic model in numpy (Newton's method, a small L2 penalty) on dev **gen 1** (lines 1-40)
   only; each question weighs the same, its positives and its negatives half each. The table is written to
   `rabbithole_lab/reasoning/extractive/writer/ranker_weights.json`.
3. **Measure** on gen 1 and the holdout gen 2, per language: the share of a question's facts held by its
   best-ranked sentences within the lead's budget (1,200 characters) and the answer's (4,000), and the same
   for the order the sentences had before ranking (the context's reading order) as a floor.
4. **Ablation**: each feature dropped and the model fitted again; the change against the full model.
"""

from __future__ import annotations

import importlib.util
import json
import statistics
import time
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from bench.answers import sessions_root
from bench.common import (
    CORPUS,
    DEV_QUESTIONS,
    GENERATIONS,
    SHARED,
    BenchContext,
    read_jsonl,
    require,
    subsets,
    write_result,
)
from bench.resynthesis import load_state
from rabbithole_lab.agent.nodes.synthesis import synthesis_request
from rabbithole_lab.reasoning.extractive.writer.sentence_ranker import FEATURES, WEIGHTS_FILE, RankerWeights
from rabbithole_lab.usecase.research_case import open_services

L2 = 0.01
LEAD_CHARS, ANSWER_CHARS = 1_200, 4_000
CITATION_CHARS = 40  # a quote's marks, provision and citation around its text


def _scorer_module():
    spec = importlib.util.spec_from_file_location("score_answers", SHARED / "bench" / "score_answers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kept_states() -> Path:
    """The newest kept research's states (the ranker is fitted on whatever research was kept last)."""
    root = sessions_root()
    kept = sorted(root.glob("*/kept.json"), key=lambda path: path.stat().st_mtime) if root.is_dir() else []
    if not kept:
        raise RuntimeError("No kept research: run `python -m bench --only answers` once first (it keeps each run's "
                           "state before synthesis)")
    return kept[-1].parent / "states"


def extract(context: BenchContext, questions: list[dict], states: Path, out: Path) -> list[dict]:
    """One record per candidate: question id, features, label, characters."""
    squash = _scorer_module().squash
    services = open_services(context.settings, CORPUS, context.index(CORPUS), show_progress=False)
    reasoner = services.reasoner
    rows: list[dict] = []
    for question in tqdm(questions, desc="candidates", unit="q", disable=not context.show_progress):
        path = states / f"{question['id']}.json"
        if not path.is_file():
            continue
        request = synthesis_request(load_state(path), services)
        if not request.all_chunks():
            continue
        answer = reasoner.answer_context(request)
        facts = [squash(fact) for fact in question.get("answer_facts", [])]
        position = {id(provision): index for index, provision in enumerate(answer.provisions)}
        for rank_before, candidate in enumerate(sorted(answer.candidates, key=lambda c: (
                position[id(c.provision)], c.sentence.order))):
            held = [i for i, fact in enumerate(facts) if fact and fact in squash(candidate.text)]
            rows.append({"id": question["id"], "features": candidate.features, "facts": held,
                         "provision": f"{candidate.provision.doc} {candidate.provision.section}",
                         "n_facts": len(facts), "chars": len(candidate.text) + CITATION_CHARS,
                         "reading_order": rank_before})
    with (out / "candidates.jsonl").open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return rows


def matrix(rows: list[dict], names: list[str]) -> np.ndarray:
    return np.array([[row["features"][name] for name in names] for row in rows], dtype=np.float64)


def newton_logistic(features: np.ndarray, labels: np.ndarray, weights: np.ndarray, l2: float,
                    max_steps: int) -> np.ndarray:
    """Weighted logistic regression by Newton's method with an L2 penalty on the weights (not the bias): the
    coefficients, bias first."""
    x = np.hstack([np.ones((len(features), 1)), features])
    beta = np.zeros(x.shape[1])
    penalty = np.diag([0.0] + [l2] * features.shape[1])
    for _ in range(max_steps):
        p = 1 / (1 + np.exp(-np.clip(x @ beta, -30, 30)))
        gradient = x.T @ (weights * (p - labels)) + penalty @ beta
        hessian = (x * (weights * p * (1 - p))[:, None]).T @ x + penalty
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return beta


def fit(rows: list[dict], names: list[str]) -> RankerWeights:
    """Logistic regression by Newton's method; each question weighs 1, half on its positives, half on its
    negatives (a question with no positive candidate teaches nothing about which sentence answers)."""
    by_question: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        by_question.setdefault(row["id"], []).append(index)
    labels = np.array([1.0 if row["facts"] else 0.0 for row in rows])
    weights = np.zeros(len(rows))
    for indices in by_question.values():
        positive = [i for i in indices if labels[i]]
        negative = [i for i in indices if not labels[i]]
        if positive and negative:
            weights[positive] = 0.5 / len(positive)
            weights[negative] = 0.5 / len(negative)
    beta = newton_logistic(matrix(rows, names), labels, weights, L2, 50)
    return RankerWeights(round(float(beta[0]), 4), {name: round(float(b), 4) for name, b in zip(names, beta[1:],
                                                                                                  strict=True)})


def fact_share(rows: list[dict], order: list[int], budget: int) -> float:
    """The share of the question's facts its sentences hold, best first, within `budget` characters."""
    held: set[int] = set()
    used = 0
    for index in order:
        if used + rows[index]["chars"] > budget:
            continue
        used += rows[index]["chars"]
        held.update(rows[index]["facts"])
    total = rows[order[0]]["n_facts"] if order else 0
    return len(held) / total if total else 0.0


def measure(rows: list[dict], questions: list[dict], table: RankerWeights | None) -> dict:
    """Lead and answer fact shares per subset; `table` None: the reading order (no ranking)."""
    by_question: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        by_question.setdefault(row["id"], []).append(index)
    out = {}
    for name, chosen in subsets(questions).items():
        lead, whole = [], []
        for question in chosen:
            indices = by_question.get(question["id"], [])
            if table is None:
                order = sorted(indices, key=lambda i: rows[i]["reading_order"])
            else:
                order = sorted(indices, key=lambda i: -table.score(rows[i]["features"]))
            lead.append(fact_share(rows, order, LEAD_CHARS) if order else 0.0)
            whole.append(fact_share(rows, order, ANSWER_CHARS) if order else 0.0)
        out[name] = {"n": len(chosen), "lead_facts": round(statistics.fmean(lead), 3),
                     "answer_facts": round(statistics.fmean(whole), 3)}
    return out


def bench(context: BenchContext) -> dict:
    require(DEV_QUESTIONS, "The German law dev set (shared/corpus/de-strahlenschutz)")
    started = time.perf_counter()
    out = context.out("ranker")
    questions = read_jsonl(DEV_QUESTIONS)
    rows = extract(context, questions, kept_states(), out)
    gen1 = {q["id"] for q in questions[GENERATIONS["gen 1"]]}
    train = [row for row in rows if row["id"] in gen1]
    names = list(FEATURES)
    table = fit(train, names)
    full = measure(rows, questions, table)
    ablation = {}
    for name in tqdm(names, desc="ablation", unit="feature", disable=not context.show_progress):
        without = measure(rows, questions, fit(train, [n for n in names if n != name]))
        ablation[name] = {subset: {metric: round(without[subset][metric] - full[subset][metric], 3)
                                   for metric in ("lead_facts", "answer_facts")}
                          for subset in ("gen 1", "gen 2")}
    fitted = RankerWeights(table.bias, table.weights, f"dev gen 1 ({len(gen1)} questions, {len(train)} candidates), "
                                                      f"{time.strftime('%Y-%m-%d')}")
    WEIGHTS_FILE.write_text(json.dumps(fitted.to_json(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    numbers = {"ranked": full, "reading_order": measure(rows, questions, None), "weights": fitted.to_json(),
               "ablation": ablation, "candidates": len(rows),
               "positives": sum(1 for row in rows if row["facts"])}
    return {"numbers": numbers, "path": write_result("ranker", context, numbers, started)}
