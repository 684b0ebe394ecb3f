"""Cross-reference retrieval on the shared dev questions (flat vs rabbithole) and reference
detection on the refex court-decision set. No LLM.

    .venv/bin/python bench/xref.py [--db /tmp/corpus-db]

Writes bench/out/xref/pred_{flat,first_stage_only,rabbithole}.jsonl and prints the scorers' summaries.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared"
CORPUS = SHARED / "corpus" / "de-strahlenschutz"
QUESTIONS = CORPUS / "questions.dev.jsonl"
REFEX = SHARED / "bench" / "refex"


def run(command: list[str], env: dict[str, str] | None = None) -> str:
    return subprocess.run(command, capture_output=True, text=True, check=True, env=env).stdout


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", default=None)
    parser.add_argument("--out", default="bench/out/xref")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    db = args.db or tempfile.mkdtemp(prefix="corpus-db-")
    rabbithole = [sys.executable, "-m", "rabbithole_lab.cli"]
    # flat is DESIGN §6's baseline (plain hybrid top-k); "first stage only" is the rabbithole's own
    # retrieval with following and backlinks off, to show what following adds on top of it
    runs = {
        "flat": ("flat", {}),
        "first_stage_only": ("rabbithole", {"REFERENCE_FOLLOW_DEPTH": "0", "REFERENCE_MAX_CITED_BY": "0"}),
        "rabbithole": ("rabbithole", {}),
    }
    for name, (mode, overrides) in runs.items():
        prediction = out / f"pred_{name}.jsonl"
        run(rabbithole + ["eval", "--kb", str(CORPUS), "--db", db, "--questions", str(QUESTIONS), "--mode", mode,
                          "--k", "10", "--out", str(prediction), "--no-progress"], {**os.environ, **overrides})
        rows = [json.loads(line) for line in prediction.read_text().splitlines()]
        chars10 = sum(sum(len(c["text"]) for c in r["context"][:10]) for r in rows) / len(rows)
        print(f"== {name} (context chars@10 mean {chars10:.0f})")
        print(run([sys.executable, str(SHARED / "bench" / "score_xref.py"), str(QUESTIONS), str(prediction)]))

    refex_in = out / "refex_in.jsonl"
    with open(refex_in, "w", encoding="utf-8") as sink:
        for line in (REFEX / "refs.jsonl").read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            sink.write(json.dumps({"id": item["id"], "text": item["text"]}, ensure_ascii=False) + "\n")
    refex_out = out / "refex_pred.jsonl"
    run(rabbithole + ["refs", "--in", str(refex_in), "--out", str(refex_out)])
    print("== refex (strict)")
    print(run([sys.executable, str(REFEX / "score.py"), str(REFEX / "refs.jsonl"), str(refex_out)]))
    print("== refex (--lenient)")
    print(run([sys.executable, str(REFEX / "score.py"), str(REFEX / "refs.jsonl"), str(refex_out), "--lenient"]))


if __name__ == "__main__":
    main()
