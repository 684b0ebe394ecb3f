"""Scripted clarification dialogues on the shared dev questions: does what the researcher says reach the answer?

For every dev question two unattended runs, each with one clarification answer (then /end):

- **added aspect**: the researcher names a provision the question needs (its first `required` section, else
  its entry): "Bitte auch § 78 StrlSchG berücksichtigen." / "Please also cover § 78 StrlSchG." Measured: how
  often the answer quotes that provision (a quotation that stands in the provision's text).
- **excluded case**: the researcher leaves out a provision the plain answer quotes that is neither the entry nor
  a required section: "Bitte ohne § 13 StrlSchG." / "Please leave out § 13 StrlSchG." Measured: how often the
  answer still quotes it (presented as applicable).

The plain answers come from `bench/answers.py` (`--plain bench/out/answers/answers.jsonl`); the same rates on
them are the baseline. Targets (issue 26): added ≥ 0.80, excluded ≤ 0.10. Rows per generation (lines 1-40,
41-80), each whole and with its German and English questions apart.

    .venv/bin/python bench/hitl.py --db /tmp/corpus-db --plain bench/out/answers/answers.jsonl [--out DIR]
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import re
import tempfile
from pathlib import Path

from rabbithole_lab.agent.services import Services
from rabbithole_lab.evidence.pages import find_span
from rabbithole_lab.kb.kb_factory import open_knowledge_base
from rabbithole_lab.reasoning.checks.quality import statements
from rabbithole_lab.reasoning.extractive.extractive_reasoner import ExtractiveReasoner
from rabbithole_lab.settings import load_settings
from rabbithole_lab.usecase.research_case import Research

SHARED = Path(__file__).resolve().parents[2] / "shared"
CORPUS = SHARED / "corpus" / "de-strahlenschutz"
QUESTIONS = CORPUS / "questions.dev.jsonl"
GENERATIONS = {"gen 1 (lines 1-40)": slice(0, 40), "gen 2 (lines 41-80)": slice(40, 80), "all 80": slice(0, 80)}
# the answer's provision lines: "§ 5 QStrV: „…", "**§ 5 QStrV**: „…", "**A** verweist auf **B**: „…"
_LABELLED = re.compile(r"^(?:\*\*)?(?:[^*\n]+?\*\* (?:verweist auf|refers to) \*\*)?"
                       r"(?P<label>[^*:\n]+?)(?:\*\*)?: [„“]", re.MULTILINE)


def label(doc: str, section: str) -> str:
    return f"{section} {Path(doc).stem}".strip()


def section_texts(kb, doc: str, section: str) -> list[str]:
    return [hit.text for hit in kb.section_lookup(doc, section)]


def quotes_provision(answer: str, doc: str, texts: list[str]) -> bool:
    """A statement of the answer cites `doc` and quotes text that stands in the provision."""
    return any(cited_doc == doc and any(find_span(text, s.quote) for text in texts)
               for s in statements(answer) for cited_doc, _ in s.citations)


def side_provision(question: dict, plain_answer: str) -> tuple[str, str] | None:
    """A provision the plain answer quotes that is neither the question's entry nor a required section."""
    core = {label(question["entry"]["doc"], question["entry"]["section"])}
    core |= {label(r["doc"], r["section"]) for r in question.get("required", [])}
    for match in _LABELLED.finditer(plain_answer):
        name = match["label"].strip()
        if name in core or " " not in name:
            continue
        section, stem = name.rsplit(" ", 1)
        return f"{stem}.pdf", section
    return None


def run(services: Services, question: str, answer: str, folder: Path) -> str:
    research = Research(services, folder / "sessions.sqlite")
    try:
        status = research.run_unattended(question, answers=[answer])
    finally:
        research.close()
    return status.report.get("answer", "") if status.kind == "done" else ""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", required=True, help="the corpus index (bench/answers.py --db)")
    parser.add_argument("--plain", required=True, help="answers.jsonl of bench/answers.py: the plain answers")
    parser.add_argument("--out", default="bench/out/hitl")
    parser.add_argument("--limit", type=int, default=80)
    parser.add_argument("--table-only", action="store_true", help="print the table of the rows OUT holds")
    args = parser.parse_args()
    if args.table_only:
        table([json.loads(line) for line in (Path(args.out) / "rows.jsonl").read_text().splitlines() if line])
        return
    logging.basicConfig(level=logging.WARNING)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    settings = load_settings(env_file=None)
    kb = open_knowledge_base(settings, CORPUS, Path(args.db))
    plain = {row["id"]: row["answer"] for row in map(json.loads, Path(args.plain).read_text().splitlines())}
    lines = QUESTIONS.read_text(encoding="utf-8").splitlines()[: args.limit]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for index, line in enumerate(lines):
            question = json.loads(line)
            german = question["language"] == "de"
            services = Services(settings, kb, ExtractiveReasoner(kb.index.embedder), CORPUS)
            target = (question.get("required") or [question["entry"]])[0]
            name = label(target["doc"], target["section"])
            texts = section_texts(kb, target["doc"], target["section"])
            added = run(services, question["question"], f"Bitte auch {name} berücksichtigen." if german
                        else f"Please also cover {name}.", Path(tmp) / f"a{index}")
            row = {"id": question["id"], "language": question["language"], "line": index, "added": name,
                   "added_cited": quotes_provision(added, target["doc"], texts),
                   "added_cited_plain": quotes_provision(plain.get(question["id"], ""), target["doc"], texts)}
            side = side_provision(question, plain.get(question["id"], ""))
            if side is not None:
                doc, section = side
                name = label(doc, section)
                side_texts = section_texts(kb, doc, section)
                excluded = run(services, question["question"], f"Bitte ohne {name}." if german
                               else f"Please leave out {name}.", Path(tmp) / f"e{index}")
                row |= {"excluded": name, "excluded_presented": quotes_provision(excluded, doc, side_texts)}
            rows.append(row)
            (out / "rows.jsonl").open("a", encoding="utf-8").write(json.dumps(row, ensure_ascii=False) + "\n")
            print(json.dumps(row, ensure_ascii=False), flush=True)
    table(rows)


def table(rows: list[dict]) -> None:
    print("\n| questions | n | added aspect cited (plain) | excluded case presented (n) |\n|---|---|---|---|")
    for (name, part), language in itertools.product(GENERATIONS.items(), ("both", "de", "en")):
        chosen = [r for r in rows if part.start <= r["line"] < part.stop and language in ("both", r["language"])]
        if not chosen:
            continue
        excluded_rows = [r for r in chosen if "excluded" in r]
        added = sum(r["added_cited"] for r in chosen) / len(chosen)
        before = sum(r["added_cited_plain"] for r in chosen) / len(chosen)
        presented = (sum(r["excluded_presented"] for r in excluded_rows) / len(excluded_rows)) if excluded_rows else 0
        title = name if language == "both" else f"{name} {language}"
        print(f"| {title} | {len(chosen)} | {added:.3f} ({before:.3f}) | {presented:.3f} ({len(excluded_rows)}) |")


if __name__ == "__main__":
    main()
