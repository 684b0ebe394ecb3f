"""`rabbithole eval`: flat vs rabbithole retrieval on cross-reference questions (DESIGN.md §6).

Each question runs without HITL and without an LLM unless one is configured. Both modes build the
same candidate pool from the same first stage and admit from it with the same assembler under the
same character budget; flat follows no reference. Output lines:
{"id", "mode", "seconds", "llm_calls", "context": [{"doc", "section", "page_start", "page_end",
"chunk_id", "depth", "tier", "kind", "text"}, ...]} in rank (admission) order.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

from rabbithole_lab.kb.retrieval.search import KnowledgeBase
from rabbithole_lab.language.detection import question_language
from rabbithole_lab.rabbithole.candidates import Candidate
from rabbithole_lab.rabbithole.engine import admit, admit_items, follow_question
from rabbithole_lab.rabbithole.follow import RabbitholeFollower
from rabbithole_lab.settings import ReferenceSettings
from rabbithole_lab.support.progress_bars import progress
from rabbithole_lab.usecase.input_files import InputFileError, read_text_input

logger = logging.getLogger(__name__)

Mode = Literal["flat", "rabbithole"]
DEFAULT_BUDGET_CHARS = 25_000  # the largest budget the scorer reads (both@25k); smaller ones are prefixes


def load_questions(path: Path) -> list[dict]:
    questions = []
    for number, line in enumerate(read_text_input(path, "--questions").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{number}: not JSON ({exc.msg})") from None
        if not isinstance(item, dict) or "id" not in item or not isinstance(item.get("question"), str) \
                or not item["question"].strip():
            raise ValueError(f"{path}:{number}: expected a JSON object with 'id' and a non-empty 'question' text")
        questions.append(item)
    if not questions:
        raise InputFileError(f"--questions {path}: no questions (JSONL lines with 'id' and 'question')")
    return questions


def _entry(candidate: Candidate) -> dict:
    result = candidate.result
    return {
        "doc": result.doc,
        "section": result.section,
        "page_start": result.page_start,
        "page_end": result.page_end,
        "chunk_id": result.chunk_id,
        "depth": candidate.depth,
        "tier": candidate.tier,
        "kind": candidate.kind,
        "text": result.text,
    }


def without_following(references: ReferenceSettings) -> ReferenceSettings:
    """Flat: the same pool and assembler, with no reference followed and no backlink."""
    return references.model_copy(update={"follow_depth": 0, "max_cited_by": 0})


def run_question(
    kb: KnowledgeBase,
    question: dict,
    mode: Mode,
    follower: RabbitholeFollower,
    budget_chars: int = DEFAULT_BUDGET_CHARS,
    llm_calls: Callable[[], int] = lambda: 0,
    max_items: int | None = None,
    top_items: int = 0,
) -> dict:
    """One question through first stage, following (rabbithole) and the assembler. The context is
    what the assembler admits within `budget_chars`, in admission order; with `max_items` it is instead
    that many most valuable items (an item budget: a measure that counts items, such as ObliQA's Both@10,
    is given the ten best items, not the first ten of a context filled by value per character); with
    `top_items`, "top_items" holds that many most valuable items beside the character context."""
    started = time.perf_counter()
    calls_before = llm_calls()
    language = question.get("language") or question_language(question["question"])
    trail = follow_question(kb, follower, question["question"], language)
    admitted = admit_items(trail.candidates, max_items) if max_items else admit(trail.candidates, budget_chars)
    context = [_entry(candidate) for candidate in admitted]
    row = {
        "id": question["id"],
        "mode": mode,
        "seconds": round(time.perf_counter() - started, 3),
        "llm_calls": llm_calls() - calls_before,
        "context": context,
    }
    if top_items:
        row["top_items"] = [_entry(candidate) for candidate in admit_items(trail.candidates, top_items)]
    return row


def run_eval(
    kb: KnowledgeBase,
    questions: list[dict],
    mode: Mode,
    follower: RabbitholeFollower,
    budget_chars: int = DEFAULT_BUDGET_CHARS,
    llm_calls: Callable[[], int] = lambda: 0,
    show_progress: bool = True,
    max_items: int | None = None,
) -> Iterator[dict]:
    for question in progress(questions, desc=f"eval {mode}", unit="q", show=show_progress):
        yield run_question(kb, question, mode, follower, budget_chars, llm_calls, max_items)
