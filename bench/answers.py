"""End-to-end answers on the shared dev questions: the whole agent, unattended, scored by
shared/bench/score_answers.py (facts in the answer, entry and required sections cited, every quote on
its cited page). Extractive reasoner unless LLM_PROVIDER says otherwise.

    .venv/bin/python bench/answers.py [--db /tmp/corpus-db] [--out bench/out/answers] [--answers A.jsonl]

Runs `rabbithole eval --mode answer` over all 80 dev questions (or scores an existing answer file with
--answers), then prints one table row per generation (lines 1-40, 41-80) and for all 80, each whole and
with its German and English questions apart.
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

from rabbithole_lab.eval.answers import answer_citations

SHARED = Path(__file__).resolve().parents[2] / "shared"
CORPUS = SHARED / "corpus" / "de-strahlenschutz"
QUESTIONS = CORPUS / "questions.dev.jsonl"
GENERATIONS = {"gen 1 (lines 1-40)": slice(0, 40), "gen 2 (lines 41-80)": slice(40, 80), "all 80": slice(0, 80)}
SUMMARY = re.compile(r"answers: facts=(?P<facts>[\d.]+) facts_all=(?P<all>[\d.]+) cited_req=(?P<cited>[\d.]+) "
                     r"page_exact=(?P<exact>[\d.]+)")
WHERE = re.compile(r"citations=(?P<n>\d+) exact=(?P<exact>\d+) starts_there=(?P<starts>\d+) "
                   r"other_page=(?P<other>\d+) not_found=(?P<missing>\d+)")
SECONDS = re.compile(r"seconds/question: mean=(?P<mean>[\d.]+)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", default=None)
    parser.add_argument("--out", default="bench/out/answers")
    parser.add_argument("--answers", default=None, help="score this answer file instead of running the agent")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    answers = Path(args.answers) if args.answers else out / "answers.jsonl"
    if not args.answers:
        db = args.db or tempfile.mkdtemp(prefix="corpus-db-")
        subprocess.run([sys.executable, "-m", "rabbithole_lab.cli", "--env-file", "none", "eval", "--kb", str(CORPUS),
                        "--db", db, "--questions", str(QUESTIONS), "--mode", "answer", "--out", str(answers)],
                       check=True, env={**os.environ, "LLM_PROVIDER": os.environ.get(
                            "LLM_PROVIDER", "extractive")})
    score_table(answers, out, "")
    # the opening alone ("the findings first"), scored as an answer: what a researcher reads before any section
    opening = out / "answers_opening.jsonl"
    with opening.open("w", encoding="utf-8") as handle:
        for line in answers.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                text = opening_of(row["answer"])
                handle.write(json.dumps(row | {"answer": text, "citations": answer_citations(text)},
                                        ensure_ascii=False) + "\n")
    print("\nThe opening statement alone:\n")
    score_table(opening, out, "opening_")


def opening_of(answer: str) -> str:
    """The answer's findings: its lines up to the first section heading (a bold line after the first)."""
    lines = answer.splitlines()
    end = next((i for i, line in enumerate(lines) if i > 0 and line.startswith("**") and
                line.rstrip().endswith("**")), len(lines))
    return "\n".join(lines[:end]).strip()


def score_table(answers: Path, out: Path, prefix: str) -> None:
    lines = QUESTIONS.read_text(encoding="utf-8").splitlines()
    print("| questions | facts | facts_all | entry+required cited | page-exact | citations (other page / not found) "
          "| s/question |")
    print("|---|---|---|---|---|---|---|")
    for (name, part), language in itertools.product(GENERATIONS.items(), ("both", "de", "en")):
        chosen = [line for line in lines[part] if language == "both" or json.loads(line)["language"] == language]
        name = name if language == "both" else f"{name} {language}"
        tag = f"{part.start}_{part.stop}_{language}"
        questions = out / f"questions_{tag}.jsonl"
        questions.write_text("\n".join(chosen) + "\n", encoding="utf-8")
        ids = {json.loads(line)["id"] for line in chosen}
        subset = out / f"{prefix}answers_{tag}.jsonl"
        subset.write_text("".join(line + "\n" for line in answers.read_text(encoding="utf-8").splitlines()
                                  if line.strip() and json.loads(line)["id"] in ids), encoding="utf-8")
        result = subprocess.run([sys.executable, str(SHARED / "bench" / "score_answers.py"), str(questions),
                                 str(subset), "--corpus", str(CORPUS)], capture_output=True, text=True,
                                check=True).stdout
        s, w, t = SUMMARY.search(result), WHERE.search(result), SECONDS.search(result)
        print(f"| {name} | {float(s['facts']):.3f} | {float(s['all']):.3f} | {float(s['cited']):.3f} | "
              f"{float(s['exact']):.3f} | {w['n']} ({w['other']} / {w['missing']}) | "
              f"{float(t['mean']) if t else 0:.1f} |", flush=True)


if __name__ == "__main__":
    main()
