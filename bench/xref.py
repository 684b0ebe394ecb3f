"""Cross-reference retrieval on the German law dev set: flat against rabbithole at equal budget, no LLM.

Both modes build the same candidate pool from the same first stage and admit from it with the same
assembler under the same character budget; flat follows no reference. Each runs through the installed
command (`rabbithole eval`) and is scored with the shared scorer (shared/bench/score_xref.py) on each dev
generation (gen 1 = lines 1-40, tuned on; gen 2 = lines 41-80, the holdout), whole and by language:
both@10, both@12k, both@25k, entry@12k, entry@25k, facts@25k.
"""

from __future__ import annotations

import os
import re
import sys
import time

from bench.common import (
    CORPUS,
    DEV_QUESTIONS,
    SHARED,
    BenchContext,
    read_jsonl,
    require,
    run,
    subsets,
    write_jsonl,
    write_result,
)

MODES = ("flat", "rabbithole")
NO_BACKLINKS = "rabbithole without backlinks"
MARGIN_CUTS = ("both@12k", "both@25k", "entry@12k")
BUDGET_CHARS = 25_000  # the largest budget the scorer reads; 12k is its prefix
LINE = re.compile(r"k=(?P<k>\w+): both=(?P<both>[\d.]+) req=[\d.]+ entry=(?P<entry>[\d.]+) facts=(?P<facts>[\d.]+)")


def score(questions_path, predictions_path) -> dict[str, float]:
    printed = run([sys.executable, str(SHARED / "bench" / "score_xref.py"), str(questions_path),
                   str(predictions_path)])
    scores = {m["k"]: m for m in LINE.finditer(printed)}
    return {"both@10": float(scores["10"]["both"]), "both@12k": float(scores["12k"]["both"]),
            "both@25k": float(scores["25k"]["both"]), "entry@12k": float(scores["12k"]["entry"]),
            "entry@25k": float(scores["25k"]["entry"]), "facts@25k": float(scores["25k"]["facts"])}


def evaluate(context: BenchContext, mode: str, out, questions=DEV_QUESTIONS, settings: dict | None = None,
             show_progress: bool | None = None) -> list[dict]:
    """One mode over the dev questions (all 80 unless `questions` names a file of some) through `rabbithole
    eval` (what a user runs), with `settings` as environment variables on top of the defaults."""
    prediction = out / f"pred_{mode}.jsonl"
    progress = context.show_progress if show_progress is None else show_progress
    run([sys.executable, "-m", "rabbithole_lab.cli.main", "--env-file", "none", "eval", "--kb", str(CORPUS),
         "--db", str(context.index(CORPUS)), "--questions", str(questions), "--mode", mode,
         "--budget-chars", str(BUDGET_CHARS), "--out", str(prediction)]
        + ([] if progress else ["--no-progress"]),
        env={**os.environ, "LLM_PROVIDER": "extractive", **(settings or {})})
    return read_jsonl(prediction)


def subset_scores(predictions: dict[str, dict], questions: list[dict], out, run: str) -> dict:
    """One run's scores on each reported subset (each half, whole and by language)."""
    numbers = {}
    for name, chosen in subsets(questions).items():
        tag = name.replace(" ", "_")
        write_jsonl(out / f"questions_{tag}.jsonl", chosen)
        write_jsonl(out / f"pred_{run}_{tag}.jsonl", [predictions[q["id"]] for q in chosen])
        numbers[name] = {"n": len(chosen), **score(out / f"questions_{tag}.jsonl", out / f"pred_{run}_{tag}.jsonl")}
    return numbers


def bench(context: BenchContext) -> dict:
    require(DEV_QUESTIONS, "The German law dev set (shared/corpus/de-strahlenschutz)")
    started = time.perf_counter()
    out = context.out("xref")
    questions = read_jsonl(DEV_QUESTIONS)
    numbers: dict = {}
    for mode in MODES:
        predictions = {row["id"]: row for row in evaluate(context, mode, out)}
        numbers[mode] = subset_scores(predictions, questions, out, mode)
        seconds = [row["seconds"] for row in predictions.values()]
        numbers[mode]["seconds_per_question"] = round(sum(seconds) / len(seconds), 3)
    # the backlink side's ablation (issue 73): following as shipped, no passage that cites a best hit
    ablated = {row["id"]: row for row in evaluate(context, "rabbithole", context.out("xref/no-backlinks"),
                                                  settings={"REFERENCE_MAX_CITED_BY": "0"})}
    numbers[NO_BACKLINKS] = subset_scores(ablated, questions, out, "no-backlinks")
    # what following adds over flat search of the same size, per half and language (issue 73: it must pay at 12k)
    numbers["margin"] = {name: {cut: round(numbers["rabbithole"][name][cut] - numbers["flat"][name][cut], 3)
                                for cut in MARGIN_CUTS} for name in subsets(questions)}
    return {"numbers": numbers, "path": write_result("xref", context, numbers, started, budget_chars=BUDGET_CHARS)}
