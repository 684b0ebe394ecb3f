"""Cross-reference retrieval on the shared dev questions (flat vs rabbithole at equal budget) and
reference detection on the refex court-decision set. No LLM.

    .venv/bin/python bench/xref.py [--db /tmp/corpus-db] [--budget-chars 25000]

Both modes build the same candidate pool from the same first stage and admit from it with the same
assembler under the same character budget; flat follows no reference. Each is scored with the shared
scorer on all 80 dev questions and on each generation alone (lines 1-40, 41-80), each also split into
its German and English questions: both@10 beside
both@12k and both@25k. Writes bench/out/xref/pred_{flat,rabbithole}.jsonl.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared"
CORPUS = SHARED / "corpus" / "de-strahlenschutz"
QUESTIONS = CORPUS / "questions.dev.jsonl"
REFEX = SHARED / "bench" / "refex"
LANGUAGES = ("both", "de", "en")  # every half whole, then its German and its English questions apart
GENERATIONS = {"gen 1 (lines 1-40)": slice(0, 40), "gen 2 (lines 41-80)": slice(40, 80), "all 80": slice(0, 80)}
LINE = re.compile(r"k=(?P<k>\w+): both=(?P<both>[\d.]+) req=[\d.]+ entry=(?P<entry>[\d.]+) facts=(?P<facts>[\d.]+)")


def run(command: list[str], env: dict[str, str] | None = None) -> str:
    return subprocess.run(command, capture_output=True, text=True, check=True, env=env).stdout


def score(questions: Path, predictions: Path) -> dict[str, dict[str, float]]:
    out = run([sys.executable, str(SHARED / "bench" / "score_xref.py"), str(questions), str(predictions)])
    scores = {m["k"]: {"both": float(m["both"]), "entry": float(m["entry"]), "facts": float(m["facts"])}
              for m in LINE.finditer(out)}
    seconds = re.search(r"seconds/question: mean=([\d.]+)", out)
    scores["seconds"] = {"mean": float(seconds.group(1)) if seconds else 0.0}
    return scores


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", default=None)
    parser.add_argument("--out", default="bench/out/xref")
    parser.add_argument("--budget-chars", type=int, default=25_000)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    db = args.db or tempfile.mkdtemp(prefix="corpus-db-")
    rabbithole = [sys.executable, "-m", "rabbithole_lab.cli", "--env-file", "none"]
    lines = QUESTIONS.read_text(encoding="utf-8").splitlines()
    print("| mode | questions | both@10 | both@12k | both@25k | entry@12k | entry@25k | facts@25k | s/question |")
    print("|---|---|---|---|---|---|---|---|---|")
    for mode in ("flat", "rabbithole"):
        prediction = out / f"pred_{mode}.jsonl"
        run(rabbithole + ["eval", "--kb", str(CORPUS), "--db", db, "--questions", str(QUESTIONS), "--mode", mode,
                          "--budget-chars", str(args.budget_chars), "--out", str(prediction), "--no-progress"],
            {**os.environ, "LLM_PROVIDER": "extractive"})
        rows = {json.loads(line)["id"]: line for line in prediction.read_text(encoding="utf-8").splitlines()}
        for (name, part), language in itertools.product(GENERATIONS.items(), LANGUAGES):
            subset = [line for line in lines[part] if language == "both" or json.loads(line)["language"] == language]
            if language != "both":
                name = f"{name} {language}"
            tag = f"{part.start}_{part.stop}_{language}"
            questions = out / f"questions_{tag}.jsonl"
            questions.write_text("\n".join(subset) + "\n", encoding="utf-8")
            predictions = out / f"pred_{mode}_{tag}.jsonl"
            predictions.write_text("\n".join(rows[json.loads(q)["id"]] for q in subset) + "\n", encoding="utf-8")
            s = score(questions, predictions)
            print(f"| {mode} | {name} | {s['10']['both']:.3f} | {s['12k']['both']:.3f} | {s['25k']['both']:.3f} | "
                  f"{s['12k']['entry']:.3f} | {s['25k']['entry']:.3f} | {s['25k']['facts']:.3f} | "
                  f"{s['seconds']['mean']:.2f} |", flush=True)

    refex_in = out / "refex_in.jsonl"
    with open(refex_in, "w", encoding="utf-8") as sink:
        for line in (REFEX / "refs.jsonl").read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            sink.write(json.dumps({"id": item["id"], "text": item["text"]}, ensure_ascii=False) + "\n")
    refex_out = out / "refex_pred.jsonl"
    run(
        rabbithole + ["refs", "--in", str(refex_in), "--out", str(refex_out)],
        {**os.environ, "LLM_PROVIDER": "extractive"},
    )
    for flag in ([], ["--lenient"]):
        result = run([sys.executable, str(REFEX / "score.py"), str(REFEX / "refs.jsonl"), str(refex_out), *flag])
        print(f"refex {'lenient' if flag else 'strict'}: {result.strip().splitlines()[-1]}")


if __name__ == "__main__":
    main()
