"""Research-agent benchmark.

1. The extractive reasoner on the shared corpus: per task, reasoning steps, LLM calls and wall time
   for unattended runs (`--no-hitl` equivalent) of a few questions.
2. A scripted fake chat model that sleeps 200 ms per call (the LLM reasoner's code path): the whole
   run with LLM_CONCURRENCY=1 (sequential chunk extraction and gate decisions) against the default
   concurrency, to measure the speed-up of concurrent chunk processing and gate decisions.

Usage:

    .venv/bin/python bench/research.py [--corpus ../shared/corpus/de-strahlenschutz] [--db DIR]
"""

from __future__ import annotations

import argparse
import logging
import platform
import sys
import tempfile
import time
from pathlib import Path

from rabbithole_lab.agent.services import Services
from rabbithole_lab.kb.ingest.ingest import ingest
from rabbithole_lab.kb.kb_factory import open_index, open_knowledge_base
from rabbithole_lab.reasoning.extractive.extractive_reasoner import ExtractiveReasoner
from rabbithole_lab.reasoning.llm.llm_reasoner import LLMReasoner
from rabbithole_lab.settings import load_settings
from rabbithole_lab.usecase.research_case import Research

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the scripted fake chat model lives with the tests
from tests.scripted_fake import ScriptedFakeChatModel, default_script  # noqa: E402

QUESTIONS = [
    "Welche Dosisgrenzwerte gelten für beruflich exponierte Personen?",
    "Welche Pflichten hat der Strahlenschutzverantwortliche bei der Beschäftigung in fremden Anlagen?",
    "Which dose limits apply to members of the public?",
]
FAKE_DELAY_S = 0.2


def run(services: Services, question: str, folder: Path) -> tuple[dict, float]:
    research = Research(services, folder / "sessions.sqlite")
    started = time.perf_counter()
    try:
        status = research.run_unattended(question)
    finally:
        research.close()
    if status.kind != "done":
        raise RuntimeError(status.error or status.kind)
    return status.state, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--corpus", default=str(Path(__file__).resolve().parents[2] / "shared/corpus/de-strahlenschutz")
    )
    parser.add_argument("--db", help="index folder (built if missing)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    corpus = Path(args.corpus)
    settings = load_settings(env_file=None)
    db = Path(args.db) if args.db else Path(tempfile.mkdtemp()) / "db"
    ingest(corpus, open_index(settings, corpus, db), settings.kb, show_progress=False)
    kb = open_knowledge_base(settings, corpus, db)
    embed = kb.index.embedder
    embed.embed_documents(["warm up"])
    print(f"machine: {platform.machine()} {platform.processor() or ''}, python {platform.python_version()}")

    print("\n## Extractive reasoner, unattended runs on the shared corpus")
    print("| question | tasks | total s | s/task (mean) | reasoning steps/task | LLM calls | followed refs |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for question in QUESTIONS:
            reasoner = ExtractiveReasoner(embed)
            services = Services(settings, kb, reasoner, corpus)
            state, seconds = run(services, question, Path(tmp))
            stats = state["task_stats"]
            per_task_s = sum(s["seconds"] for s in stats) / len(stats)
            steps = sum(s["reasoner_calls"] for s in stats) / len(stats)
            followed = sum(s["followed"] for s in stats)
            print(
                f"| {question[:60]} | {len(stats)} | {seconds:.1f} | {per_task_s:.2f} | {steps:.1f} | "
                f"{state['final_report']['metadata']['llm_calls']} | {followed} |"
            )

    print(f"\n## Fake chat model ({FAKE_DELAY_S * 1000:.0f} ms per call): sequential vs concurrent")
    print("| LLM_CONCURRENCY | LLM calls | research phase s (tasks) | whole run s |")
    print("|---|---|---|---|")
    question = QUESTIONS[0]
    timings = {}
    for concurrency in (1, settings.llm.concurrency):
        tuned = load_settings(env_file=None, llm={"concurrency": concurrency})
        model = ScriptedFakeChatModel(script=default_script("de"), delay_s=FAKE_DELAY_S)
        services = Services(tuned, kb, LLMReasoner(model, max_retries=0), corpus)
        with tempfile.TemporaryDirectory() as tmp:
            state, seconds = run(services, question, Path(tmp))
        research_s = sum(s["seconds"] for s in state["task_stats"])
        timings[concurrency] = (research_s, seconds)
        print(f"| {concurrency} | {len(model.prompts_seen)} | {research_s:.1f} | {seconds:.1f} |")
    sequential, concurrent = timings[1], timings[settings.llm.concurrency]
    print(
        f"\nspeed-up: research phase x{sequential[0] / concurrent[0]:.2f}, "
        f"whole run x{sequential[1] / concurrent[1]:.2f}"
    )


if __name__ == "__main__":
    main()
