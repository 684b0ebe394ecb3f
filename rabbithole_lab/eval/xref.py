"""`rabbithole eval`: flat vs rabbithole retrieval on cross-reference questions (DESIGN.md §6).

Each question runs without HITL and without an LLM unless one is configured. Output lines:
{"id", "mode", "seconds", "llm_calls", "context": [{"doc", "section", "page_start", "page_end",
"chunk_id", "depth", "tier", "text"}, ...]} in rank order, a followed chunk right after its citer.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

from tqdm.auto import tqdm

from rabbithole_lab.kb.search import KnowledgeBase
from rabbithole_lab.rabbithole.engine import follow_question
from rabbithole_lab.rabbithole.follow import RabbitholeFollower
from rabbithole_lab.records import VectorResult

logger = logging.getLogger(__name__)

Mode = Literal["flat", "rabbithole"]
CONTEXT_DEPTH = 20  # the scorer reads up to @20


def load_questions(path: Path) -> list[dict]:
    questions = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not JSON ({exc.msg})") from None
            if "id" not in item or "question" not in item:
                raise ValueError(f"{path}:{number}: a question needs 'id' and 'question'")
            questions.append(item)
    return questions


def _entry(result: VectorResult, depth: int, tier: str) -> dict:
    return {
        "doc": result.doc,
        "section": result.section,
        "page_start": result.page_start,
        "page_end": result.page_end,
        "chunk_id": result.chunk_id,
        "depth": depth,
        "tier": tier,
        "text": result.text,
    }


def flat_search(kb: KnowledgeBase, question: str, k: int) -> list[VectorResult]:
    """The baseline of DESIGN.md §6: plain hybrid top-k for the question, nothing else (no scoped
    search in named documents, no one-chunk-per-section, no following)."""
    return kb.search(question, k=k)


def run_question(
    kb: KnowledgeBase,
    question: dict,
    mode: Mode,
    k: int,
    follower: RabbitholeFollower | None,
    llm_calls: Callable[[], int] = lambda: 0,
    seed_count: int | None = None,
) -> dict:
    started = time.perf_counter()
    calls_before = llm_calls()
    language = question.get("language", "de")
    if mode == "flat":
        context = [_entry(hit, 0, "primary") for hit in flat_search(kb, question["question"], max(k, CONTEXT_DEPTH))]
    else:
        assert follower is not None
        trail = follow_question(kb, follower, question["question"], seed_count or k, language)
        # the rabbithole opens whole sections: each context item carries its section's text
        section_chars = kb.settings.section_context_max_chars
        context = [_entry(kb.whole_section(item.result, section_chars), item.depth, item.tier)
                   for item in trail.items[: max(k, CONTEXT_DEPTH)]]
    return {
        "id": question["id"],
        "mode": mode,
        "seconds": round(time.perf_counter() - started, 3),
        "llm_calls": llm_calls() - calls_before,
        "context": context,
    }


def run_eval(
    kb: KnowledgeBase,
    questions: list[dict],
    mode: Mode,
    k: int,
    follower: RabbitholeFollower | None = None,
    llm_calls: Callable[[], int] = lambda: 0,
    show_progress: bool = True,
) -> Iterator[dict]:
    for question in tqdm(questions, desc=f"eval {mode}", unit="q", disable=not show_progress):
        yield run_question(kb, question, mode, k, follower, llm_calls)
