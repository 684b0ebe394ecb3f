"""Reference detection recall on UKFIN dev: does the grammar find the link of each source passage?

Each dev question's source passage S holds a hyperlink to the target T; the benchmark gives the link's text
("4.1", "Article 277(3)", "53", "Appendix 1"). A link counts as found when a reference the rules detect in S
covers the link text's place in S (its span overlaps the link text). No index, no model: seconds.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from bench.common import SHARED, BenchContext, require, write_result
from rabbithole_lab.rabbithole.references import detect_references_regex

UKFIN = SHARED / "bench" / "obliqa-xref-ukfin"
BLOCK = re.compile(r"^## \[PID ([^\]]+)\][^\n]*\n\n(.*?)(?=^## \[PID |\Z)", re.MULTILINE | re.DOTALL)


def source_passages(corpus: Path) -> dict[str, tuple[str, str]]:
    """passage id -> (document file, passage text)."""
    found = {}
    for path in sorted(corpus.glob("*.md")):
        for pid, body in BLOCK.findall(path.read_text(encoding="utf-8")):
            found[pid] = (path.name, body.strip())
    return found


def link_found(text: str, doc: str, link: str) -> bool:
    detected = detect_references_regex(text, doc)
    for place in re.finditer(re.escape(link), text):
        if any(ref.start < place.end() and place.start() < ref.end for ref in detected):
            return True
    return False


def bench(context: BenchContext) -> dict:
    require(UKFIN / "questions.dev.jsonl", "ObliQA-XRef UKFIN (shared/bench/obliqa-xref-ukfin)")
    started = time.perf_counter()
    passages = source_passages(UKFIN / "corpus")
    questions = [json.loads(line) for line in (UKFIN / "questions.dev.jsonl").read_text(encoding="utf-8").splitlines()]
    rows, missed = [], []
    for question in questions:
        doc, text = passages[question["source_pid"]]
        for link in question["references"]:
            hit = link_found(text, doc, link["text"])
            rows.append((link["type"], hit))
            if not hit:
                missed.append({"id": question["id"], "link": link["text"], "type": link["type"]})
    numbers = {"links": len(rows), "recall": round(sum(hit for _, hit in rows) / len(rows), 3)}
    for kind in sorted({kind for kind, _ in rows}):
        chosen = [hit for k, hit in rows if k == kind]
        numbers[f"recall {kind}"] = round(sum(chosen) / len(chosen), 3)
    out = context.out("refs-ukfin")
    (out / "missed.json").write_text(json.dumps(missed, indent=1, ensure_ascii=False), encoding="utf-8")
    return {"numbers": numbers, "path": write_result("refs-ukfin", context, numbers, started)}
