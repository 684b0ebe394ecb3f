"""English questions over German law: what brings their entry into the context, by ablation (issue 73 item 2).

The English questions of the German law dev set (both halves, each reported apart; gen 2 is the holdout and is
only measured) run through the installed command (`rabbithole eval`, as bench/xref.py does), flat and
rabbithole, under four first-stage configurations:

- `full`: as shipped (hybrid search, the glossary's German terms added to an English query in both legs);
- `no bridge`: the glossary's terms not added (SEARCH_GLOSSARY_BRIDGE=false);
- `bm25 only` / `dense only`: one leg of the hybrid search (SEARCH_MODE).

Scored by the shared scorer (entry@12k, entry@25k, both@12k, both@25k). Per question, `bench/out/english-entries/
causes.jsonl` says at which configurations the entry is in the 25k context of each mode, and names why an entry
the full run loses is lost: found by another configuration (that configuration's leg or bridge costs it), by flat
search only (following pushes it out), or by none (no leg reaches it: the words of the question and its glossary
terms do not meet the section's).
"""

from __future__ import annotations

import time

from bench.common import (
    DEV_QUESTIONS,
    GENERATIONS,
    BenchContext,
    read_jsonl,
    require,
    write_jsonl,
    write_result,
)
from bench.xref import BUDGET_CHARS, MODES, evaluate, score

CONFIGURATIONS: dict[str, dict[str, str]] = {
    "full": {},
    "no bridge": {"SEARCH_GLOSSARY_BRIDGE": "false"},
    "bm25 only": {"SEARCH_MODE": "bm25"},
    "dense only": {"SEARCH_MODE": "dense"},
}


def entry_within(row: dict, entry: dict, budget_chars: int) -> bool:
    """The question's entry is among the passages the context holds within `budget_chars`, in its order."""
    used = 0
    for passage in row.get("context", []):
        used += len(passage.get("text", ""))
        if used > budget_chars:
            return False
        if passage.get("doc") == entry["doc"] and passage.get("section") == entry["section"]:
            return True
    return False


def cause(found: dict[str, dict[str, bool]]) -> str:
    """Why the full rabbithole run lacks the entry at 25k, from where the other runs found it."""
    if found["full"]["rabbithole"]:
        return ""
    elsewhere = [name for name, modes in found.items() if name != "full" and modes["rabbithole"]]
    if elsewhere:
        return f"found with {', '.join(elsewhere)}: what the full run adds displaces it"
    if found["full"]["flat"]:
        return "found by flat search only: following's passages push it out of the budget"
    return "no configuration reaches it"


def bench(context: BenchContext) -> dict:
    require(DEV_QUESTIONS, "The German law dev set (shared/corpus/de-strahlenschutz)")
    started = time.perf_counter()
    out = context.out("english-entries")
    questions = read_jsonl(DEV_QUESTIONS)
    halves = {name: [q for q in questions[part] if q.get("language") == "en"] for name, part in GENERATIONS.items()}
    numbers: dict = {}
    found: dict[str, dict[str, dict[str, bool]]] = {}
    for name, settings in CONFIGURATIONS.items():
        numbers[name] = {}
        for mode in MODES:
            numbers[name][mode] = {}
            for half, chosen in halves.items():
                tag = f"{name.replace(' ', '_')}_{half.replace(' ', '_')}"
                folder = out / tag
                folder.mkdir(parents=True, exist_ok=True)
                write_jsonl(folder / "questions.jsonl", chosen)
                rows = {row["id"]: row for row in evaluate(context, mode, folder, folder / "questions.jsonl",
                                                           settings, show_progress=False)}
                numbers[name][mode][f"{half} en"] = {"n": len(chosen), **score(folder / "questions.jsonl",
                                                                                 folder / f"pred_{mode}.jsonl")}
                for question in chosen:
                    found.setdefault(question["id"], {}).setdefault(name, {})[mode] = entry_within(
                        rows[question["id"]], question["entry"], BUDGET_CHARS)
    half_of = {q["id"]: half for half, chosen in halves.items() for q in chosen}
    causes = [{"id": qid, "half": half_of[qid], "found": runs, "cause": cause(runs)} for qid, runs in found.items()]
    write_jsonl(out / "causes.jsonl", causes)
    numbers["lost_entries"] = {half: {row["id"]: row["cause"] for row in causes if row["half"] == half and row["cause"]}
                               for half in halves}
    return {"numbers": numbers, "path": write_result("english-entries", context, numbers, started,
                                                     budget_chars=BUDGET_CHARS)}
