"""Reference detection on the refex court-decision set (355 German law references), no LLM.

Runs the installed command `rabbithole refs` on the decisions' text and scores it with the set's own scorer
(shared/bench/refex/score.py), strict and lenient: precision, recall and F1 of (book, section) units.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time

from bench.common import SHARED, BenchContext, read_jsonl, require, run, write_jsonl, write_result

REFEX = SHARED / "bench" / "refex"
LAST_LINE = re.compile(r"P=(?P<p>[\d.]+) R=(?P<r>[\d.]+) F1=(?P<f1>[\d.]+)")


def bench(context: BenchContext) -> dict:
    require(REFEX / "refs.jsonl", "The refex benchmark (shared/bench/refex)")
    started = time.perf_counter()
    out = context.out("refex")
    write_jsonl(out / "refex_in.jsonl", [{"id": item["id"], "text": item["text"]}
                                         for item in read_jsonl(REFEX / "refs.jsonl")])
    predictions = out / "refex_pred.jsonl"
    run([sys.executable, "-m", "rabbithole_lab.cli.main", "--env-file", "none", "refs", "--in",
         str(out / "refex_in.jsonl"), "--out", str(predictions)], env={**os.environ, "LLM_PROVIDER": "extractive"})
    numbers = {}
    for name, flags in (("strict", []), ("lenient", ["--lenient"])):
        printed = run([sys.executable, str(REFEX / "score.py"), str(REFEX / "refs.jsonl"), str(predictions),
                       *flags])
        found = LAST_LINE.search(printed.strip().splitlines()[-1])
        numbers[name] = {key: float(value) for key, value in found.groupdict().items()} if found else {}
    (out / "scores.json").write_text(json.dumps(numbers, indent=1), encoding="utf-8")
    return {"numbers": numbers, "path": write_result("refex", context, numbers, started)}
