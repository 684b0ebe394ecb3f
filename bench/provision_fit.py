"""Fit the verdict's provision score (`rabbithole_lab/reasoning/extractive/writer/provision_score.py`) and measure it.

    .venv/bin/python -m bench --only provision

1. **Data.** Every provision of the context the answer is written from, with its features measured by the
   writer's own code (`CandidateReader.answer_context`): for the German dev set from the kept research
   (`bench/answers.py` keeps each run's state before `synthesize`), for UKFIN dev from the rabbithole context of
   25,000 characters (`bench/answers_ukfin.py`). Labels: the gold entry (German: the question's entry; UKFIN: the
   provision holding the source passage) and, for "on the chain", the required sections (UKFIN: the target
   passage's provision). Written to bench/out/provision/provisions.jsonl.
2. **Fit** a logistic model in numpy (Newton's method, an L2 penalty) on German dev **gen 1** and UKFIN dev
   together; each corpus weighs the same, each question within it the same, half on its entry and half on its
   other provisions. A question whose context lacks its entry teaches nothing and is left out of the fit. The
   penalty is the one of `L2_GRID` whose table names the entry most often on the same questions (each corpus
   weighing the same; then the chain): the fit's log-loss is not what the verdict is judged by. Two refits are
   made: the logistic model and a conditional logit (a softmax over each question's provisions). The committed
   table stays unless a refit names the entry more often on those questions with the chain no less often (a
   verdict on the chain is half right); a feature it does not weigh yet is then fitted on top of it alone
   (`WEIGHT_GRID`, the others fixed). A refit on research renewed by a change elsewhere would otherwise move
   the verdict by noise (decisions 037, 039).
3. **Thresholds**: the best provision's score and its margin over the next under which no verdict is stated,
   chosen on the same questions: the most right verdicts (on the chain) less wrong ones, each corpus weighing the
   same, at most `MAX_ABSTENTION` of the answers abstaining on either corpus.
4. **Measure** on gen 1, the holdout gen 2 (never fitted on) per language, and UKFIN: verdict = entry, on the chain,
   abstention, precision of a stated verdict; the same for the graded context's order (its most relevant
   provision) as the anchor.
5. **Ablation**: each feature dropped and the model fitted again.
6. **The check's table**: a softmax fitted on the same questions for belief (labels: the entry), its penalty the
   one under which the belief it gives the writer's named provision best tells a named entry from another
   (AUC); written to `check_weights.json` and measured per subset against the writer's own score (decision 039).
"""

from __future__ import annotations

import json
import statistics
import time
from typing import Literal

import numpy as np
from tqdm.auto import tqdm

from bench.answers import auc
from bench.answers_ukfin import passage_ids, ukfin_request, ukfin_services
from bench.common import (
    CORPUS,
    DEV_QUESTIONS,
    GENERATIONS,
    BenchContext,
    read_jsonl,
    require,
    subsets,
    write_result,
)
from bench.ranker_fit import kept_states, matrix, newton_logistic
from bench.resynthesis import load_state
from rabbithole_lab.agent.nodes.synthesis import synthesis_request
from rabbithole_lab.reasoning.extractive.writer.provision_score import (
    CHECK_WEIGHTS_FILE,
    PROVISION_FEATURES,
    WEIGHTS_FILE,
    ProvisionWeights,
    fitted_provision_weights,
)
from rabbithole_lab.usecase.research_case import open_services

L2_GRID = [0.0001, 0.001, 0.01, 0.03, 0.1, 0.3, 1.0]  # the penalty is chosen on the fitted questions (step 2)
WEIGHT_GRID = [0.0, -0.25, -0.5, -1.0, -2.0, 0.25, 0.5, 1.0, 2.0]  # a new feature's weight on the committed table
MAX_ABSTENTION = 0.25
KEPT_NOTE = "; kept over refits that do not name the entry more often with the chain no less often"
SCORE_GRID = [round(0.05 * i, 2) for i in range(0, 20)]
MARGIN_GRID = [0.0, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3]


def _rows_of(question_id: str, corpus: str, scored, entry, chain) -> list[dict]:
    return [{"id": question_id, "corpus": corpus, "features": item.features, "entry": bool(entry(item.provision)),
             "chain": bool(chain(item.provision)), "provision": item.provision.label,
             "cites": [cited.label for cited in item.cites]} for item in scored]


def extract_german(context: BenchContext, questions: list[dict]) -> list[dict]:
    states = kept_states()
    services = open_services(context.settings, CORPUS, context.index(CORPUS), show_progress=False)
    rows: list[dict] = []
    for question in tqdm(questions, desc="provisions (German dev)", unit="q", disable=not context.show_progress):
        path = states / f"{question['id']}.json"
        if not path.is_file():
            continue
        request = synthesis_request(load_state(path), services)
        if not request.all_chunks():
            continue
        verdict = services.reasoner.answer_context(request).verdict
        entry = (question["entry"]["doc"], question["entry"]["section"])
        chain = {entry} | {(item["doc"], item["section"]) for item in question.get("required", [])}
        rows += _rows_of(question["id"], "de", verdict.ranked if verdict else [],
                         lambda p, entry=entry: (p.doc, p.section) == entry,
                         lambda p, chain=chain: (p.doc, p.section) in chain)
    return rows


def extract_ukfin(context: BenchContext, limit: int = 0) -> list[dict]:
    services, follower, questions = ukfin_services(context)
    questions = questions[:limit] if limit else questions
    rows: list[dict] = []
    for question in tqdm(questions, desc="provisions (UKFIN dev)", unit="q", disable=not context.show_progress):
        request = ukfin_request(context, services, follower, question)
        verdict = services.reasoner.answer_context(request).verdict

        def holds(provision, pids: set[str]) -> bool:
            return any(passage_ids(chunk) & pids for chunk in provision.chunks)

        rows += _rows_of(question["id"], "ukfin", verdict.ranked if verdict else [],
                         lambda p, q=question: holds(p, {q["source_pid"]}),
                         lambda p, q=question: holds(p, {q["source_pid"], q["target_pid"]}))
    return rows


def fit(rows: list[dict], names: list[str], l2: float | None = None,
        model: Literal["logistic", "softmax"] = "logistic") -> ProvisionWeights:
    """A logistic model (each provision alone) or a conditional logit (a softmax over each question's
    provisions), by Newton's method. Each corpus weighs 1 and each of its questions the same; in the logistic
    model half on its entry and half on its other provisions. `l2` None: the penalty of `L2_GRID` whose table
    names the entry most often on `rows`."""
    by_question: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        by_question.setdefault(row["id"], []).append(index)
    labels = np.array([1.0 if row["entry"] else 0.0 for row in rows])
    usable = {key: indices for key, indices in by_question.items()
              if any(labels[i] for i in indices) and not all(labels[i] for i in indices)}
    per_corpus: dict[str, int] = {}
    for indices in usable.values():
        per_corpus[rows[indices[0]]["corpus"]] = per_corpus.get(rows[indices[0]]["corpus"], 0) + 1
    if l2 is None:
        return max((fit(rows, names, penalty, model) for penalty in L2_GRID),
                   key=lambda table: _fitted_utility(rows, table))
    if model == "softmax":
        groups = [(indices, 1.0 / per_corpus[rows[indices[0]]["corpus"]]) for indices in usable.values()]
        beta = newton_softmax(matrix(rows, names), labels, groups, l2, 60)
        return ProvisionWeights(0.0, {name: round(float(b), 4) for name, b in zip(names, beta, strict=True)},
                                model="softmax")
    weights = np.zeros(len(rows))
    for indices in usable.values():
        share = 1.0 / per_corpus[rows[indices[0]]["corpus"]]
        positive = [i for i in indices if labels[i]]
        negative = [i for i in indices if not labels[i]]
        weights[positive] = 0.5 * share / len(positive)
        weights[negative] = 0.5 * share / len(negative)
    beta = newton_logistic(matrix(rows, names), labels, weights, l2, 60)
    return ProvisionWeights(round(float(beta[0]), 4), {name: round(float(b), 4)
                                                       for name, b in zip(names, beta[1:], strict=True)})


def newton_softmax(features: np.ndarray, labels: np.ndarray, groups: list[tuple[list[int], float]], l2: float,
                   max_steps: int) -> np.ndarray:
    """A conditional logit by Newton's method: per group (a question's provisions, with its weight) the softmax of
    the linear scores, the log-likelihood of its labelled rows (several share the group's one unit), an L2
    penalty on the weights. A step that does not lower the loss is halved (the features are nearly collinear,
    and a full Newton step from zero can overshoot)."""
    beta = np.zeros(features.shape[1])

    def loss_and_derivatives(at: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        loss, gradient, hessian = 0.5 * l2 * at @ at, l2 * at, l2 * np.eye(len(at))
        for indices, weight in groups:
            x = features[indices]
            logits = x @ at
            top = logits.max()
            p = np.exp(logits - top)
            total = p.sum()
            p /= total
            target = labels[indices] / labels[indices].sum()
            loss += weight * (top + np.log(total) - target @ logits)
            mean = p @ x
            gradient = gradient + weight * (mean - target @ x)
            hessian = hessian + weight * ((x * p[:, None]).T @ x - np.outer(mean, mean))
        return loss, gradient, hessian

    loss, gradient, hessian = loss_and_derivatives(beta)
    for _ in range(max_steps):
        step = np.linalg.solve(hessian, gradient)
        size = 1.0
        while size > 1e-6:
            trial = beta - size * step
            trial_loss, trial_gradient, trial_hessian = loss_and_derivatives(trial)
            if trial_loss <= loss:
                break
            size /= 2
        else:
            break
        done = np.abs(trial - beta).max() < 1e-8
        beta, loss, gradient, hessian = trial, trial_loss, trial_gradient, trial_hessian
        if done:
            break
    return beta


def extended(committed: ProvisionWeights, rows: list[dict], names: list[str]) -> ProvisionWeights:
    """The committed table with each feature it does not weigh yet added alone, at the weight of `WEIGHT_GRID`
    that names the entry most often on `rows` (then the chain; the first, smallest weight on a tie)."""
    weights = dict(committed.weights)
    for name in names:
        if name in weights:
            continue
        weights[name] = max(WEIGHT_GRID, key=lambda w, name=name: _fitted_utility(
            rows, ProvisionWeights(committed.bias, {**weights, name: w}, model=committed.model)))
    return ProvisionWeights(committed.bias, weights, model=committed.model)


def _dominates(new: tuple[float, float], old: tuple[float, float]) -> bool:
    return new[0] >= old[0] and new[1] >= old[1] and new != old


def fit_check(rows: list[dict], names: list[str], writer: ProvisionWeights) -> ProvisionWeights:
    """The check's table: a softmax over each question's provisions (labels: the entry), the penalty of `L2_GRID`
    under which the belief it gives the writer's named provision best tells a named entry from another provision
    (the AUC, each corpus weighing the same)."""
    return max((fit(rows, names, penalty, "softmax") for penalty in L2_GRID),
               key=lambda table: _check_utility(rows, writer, table))


def _check_utility(rows: list[dict], writer: ProvisionWeights, check: ProvisionWeights) -> float:
    by_corpus: dict[str, dict[str, None]] = {}  # each corpus's question ids, in order, once
    for row in rows:
        by_corpus.setdefault(row["corpus"], {})[row["id"]] = None
    values = [check_separation(rows, writer, check, list(ids))["entry"] for ids in by_corpus.values()]
    values = [value for value in values if value is not None]
    return sum(values) / len(values) if values else 0.0


def check_separation(rows: list[dict], writer: ProvisionWeights, check: ProvisionWeights | None,
                     ids: list[str]) -> dict:
    """How well the check's belief in the writer's named provision (None: the writer's own score of it) tells a
    right verdict from a wrong one on these questions: the AUC for the entry and for the chain."""
    by_question: dict[str, list[dict]] = {}
    for row in rows:
        by_question.setdefault(row["id"], []).append(row)
    beliefs, entry, chain = [], [], []
    for key in ids:
        items = by_question.get(key)
        if not items:
            continue
        features = [item["features"] for item in items]
        written = writer.scores(features)
        named = max(range(len(items)), key=lambda i: written[i])
        beliefs.append((check or writer).scores(features)[named])
        entry.append(bool(items[named]["entry"]))
        chain.append(bool(items[named]["chain"]))
    return {"entry": auc(beliefs, entry), "chain": auc(beliefs, chain), "n": len(beliefs)}


def _fitted_utility(rows: list[dict], table: ProvisionWeights) -> tuple[float, float]:
    """How often the table's best provision is the entry, then how often it is on the chain, on the fitted
    questions, each corpus weighing the same."""
    corpus_of = {row["id"]: row["corpus"] for row in rows}
    by_corpus: dict[str, list[dict]] = {}
    for key, item in decisions(rows, table).items():
        by_corpus.setdefault(corpus_of[key], []).append(item)
    shares = [(sum(item["entry"] for item in items) / len(items), sum(item["chain"] for item in items) / len(items))
              for items in by_corpus.values() if items]
    return (round(sum(entry for entry, _ in shares) / max(1, len(shares)), 6),
            round(sum(chain for _, chain in shares) / max(1, len(shares)), 6))


def decisions(rows: list[dict], table: ProvisionWeights | None) -> dict[str, dict]:
    """Per question: the best provision (by the table; None: by retrieval relevance, the anchor), its score and
    margin, and whether it is the entry and on the chain."""
    by_question: dict[str, list[dict]] = {}
    for row in rows:
        by_question.setdefault(row["id"], []).append(row)
    out = {}
    for key, items in by_question.items():
        if table is None:
            scores = [item["features"]["relevance"] for item in items]
        else:
            scores = table.scores([item["features"] for item in items])
        order = sorted(range(len(items)), key=lambda i: -scores[i])
        best = items[order[0]]
        margin = scores[order[0]] - (scores[order[1]] if len(order) > 1 else 0.0)
        out[key] = {"score": scores[order[0]], "margin": margin, "entry": best["entry"], "chain": best["chain"],
                    "single": len(order) == 1}
    return out


def stated(decision: dict, min_score: float, min_margin: float) -> bool:
    return decision["single"] or (decision["score"] >= min_score and decision["margin"] >= min_margin)


def verdict_measures(chosen: list[str], decided: dict[str, dict], min_score: float, min_margin: float) -> dict:
    items = [decided[key] for key in chosen if key in decided]
    if not chosen:
        return {}
    said = [item for item in items if stated(item, min_score, min_margin)]
    n = len(chosen)  # a question with no context names nothing: it counts as not stated
    return {"n": n, "best_is_entry": round(sum(item["entry"] for item in items) / n, 3),
            "best_on_chain": round(sum(item["chain"] for item in items) / n, 3),
            "verdict_entry": round(sum(item["entry"] for item in said) / n, 3),
            "verdict_chain": round(sum(item["chain"] for item in said) / n, 3),
            "abstention": round(1 - len(said) / n, 3),
            "precision_entry": round(sum(item["entry"] for item in said) / len(said), 3) if said else None,
            "precision_chain": round(sum(item["chain"] for item in said) / len(said), 3) if said else None}


def thresholds(decided: dict[str, dict], groups: list[list[str]]) -> tuple[float, float]:
    """The (score, margin) thresholds with the most right stated verdicts (on the chain) less wrong ones, each
    group weighing the same, at most `MAX_ABSTENTION` abstaining in any group."""
    best, chosen = -1e9, (0.0, 0.0)
    for min_score in SCORE_GRID:
        for min_margin in MARGIN_GRID:
            utility, allowed = 0.0, True
            for group in groups:
                items = [decided[key] for key in group if key in decided]
                said = [item for item in items if stated(item, min_score, min_margin)]
                if items and 1 - len(said) / len(items) > MAX_ABSTENTION:
                    allowed = False
                    break
                if items:
                    utility += sum(1 if item["chain"] else -1 for item in said) / len(items)
            if allowed and utility > best + 1e-9:
                best, chosen = utility, (min_score, min_margin)
    return chosen


def measure(rows: list[dict], questions: list[dict], ukfin_ids: list[str], table: ProvisionWeights | None,
            min_score: float, min_margin: float) -> dict:
    decided = decisions(rows, table)
    out = {name: verdict_measures([q["id"] for q in chosen], decided, min_score, min_margin)
           for name, chosen in subsets(questions).items()}
    out["ukfin"] = verdict_measures(ukfin_ids, decided, min_score, min_margin)
    return out


def bench(context: BenchContext, limit: int = 0) -> dict:
    require(DEV_QUESTIONS, "The German law dev set (shared/corpus/de-strahlenschutz)")
    started = time.perf_counter()
    out = context.out("provision")
    questions = read_jsonl(DEV_QUESTIONS)
    rows = extract_german(context, questions) + extract_ukfin(context, limit)
    with (out / "provisions.jsonl").open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    gen1 = [q["id"] for q in questions[GENERATIONS["gen 1"]]]
    ukfin_ids = list(dict.fromkeys(row["id"] for row in rows if row["corpus"] == "ukfin"))
    train = [row for row in rows if row["id"] in set(gen1) | set(ukfin_ids)]
    names = list(PROVISION_FEATURES)
    kept = extended(fitted_provision_weights(), train, names)
    refits = {model: fit(train, names, model=model) for model in ("logistic", "softmax")}
    utilities = {"kept": _fitted_utility(train, kept),
                 **{model: _fitted_utility(train, table) for model, table in refits.items()}}
    # the committed table stays unless a refit names the entry more often on the fitted questions and leaves the
    # chain no less often (a verdict on the chain is half right: trading it for the entry elsewhere is no gain)
    better = [table for model, table in refits.items() if _dominates(utilities[model], utilities["kept"])]
    table = max(better, key=lambda t: _fitted_utility(train, t)) if better else kept
    min_score, min_margin = thresholds(decisions(train, table), [gen1, ukfin_ids])
    full = measure(rows, questions, ukfin_ids, table, min_score, min_margin)
    ablation = {}
    unthresholded = measure(rows, questions, ukfin_ids, table, 0.0, 0.0)
    for name in tqdm(names, desc="ablation", unit="feature", disable=not context.show_progress):
        without = measure(rows, questions, ukfin_ids, fit(train, [n for n in names if n != name], model=table.model),
                          0.0, 0.0)
        ablation[name] = {subset: round(without[subset]["best_is_entry"] - unthresholded[subset]["best_is_entry"], 3)
                          for subset in ("gen 1", "gen 2", "ukfin")}
    fitted_on = (f"German dev gen 1 ({len(gen1)} questions) and UKFIN dev ({len(ukfin_ids)} questions), "
                 f"{len(train)} provisions, {time.strftime('%Y-%m-%d')}")
    if table is kept:  # where the committed table was fitted, and when it was last kept (not a growing history)
        committed = fitted_provision_weights()
        added = ", ".join(n for n in names if n not in committed.weights) or "none"
        fitted_on = (f"{committed.fitted_on.split(KEPT_NOTE)[0]}{KEPT_NOTE} ({time.strftime('%Y-%m-%d')}); new "
                     f"features fitted on it alone: {added}")
    fitted = ProvisionWeights(table.bias, table.weights, min_score, min_margin, fitted_on, table.model)
    WEIGHTS_FILE.write_text(json.dumps(fitted.to_json(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    check = fit_check(train, names, fitted)
    check = ProvisionWeights(0.0, check.weights, fitted_on=f"German dev gen 1 ({len(gen1)} questions) and UKFIN dev "
                             f"({len(ukfin_ids)} questions), {len(train)} provisions, {time.strftime('%Y-%m-%d')}; "
                             "labels: the entry", model="softmax")
    CHECK_WEIGHTS_FILE.write_text(json.dumps(check.to_json(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    subsets_ids = {**{name: [q["id"] for q in chosen] for name, chosen in subsets(questions).items()},
                   "ukfin": ukfin_ids}
    separation = {name: {"check": check_separation(rows, fitted, check, ids),
                         "writer": check_separation(rows, fitted, None, ids)} for name, ids in subsets_ids.items()}
    numbers = {"fitted": full, "relevance_anchor": measure(rows, questions, ukfin_ids, None, 0.0, 0.0),
               "weights": fitted.to_json(), "ablation": ablation, "provisions": len(rows),
               "fitted_utility": {name: list(value) for name, value in utilities.items()},
               "check": {"weights": check.to_json(), "separation": separation},
               "questions_with_entry_in_context": {
                   corpus: sum(1 for key in {r["id"] for r in rows if r["corpus"] == corpus}
                               if any(r["entry"] for r in rows if r["id"] == key)) for corpus in ("de", "ukfin")},
               "median_provisions_per_question": statistics.median(
                   [sum(1 for r in rows if r["id"] == key) for key in {r["id"] for r in rows}]) if rows else 0}
    return {"numbers": numbers, "path": write_result("provision", context, numbers, started)}
