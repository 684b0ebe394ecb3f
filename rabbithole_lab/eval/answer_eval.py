"""`rabbithole eval --mode answer`: the whole agent, unattended, per question (DESIGN.md §6).

Each question runs through clarification (ended at once), the approved plan, research, synthesis,
quality check and attribution, exactly as `rabbithole research --no-hitl`. Output lines:
{"id", "answer", "citations": [{"doc", "page", "quote"}], "seconds", "llm_calls"} — every citation
the answer makes, with the verbatim text it relies on (the statement it ends, citation markers
removed), scored by `shared/bench/score_answers.py`.
"""

from __future__ import annotations

import logging
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from rabbithole_lab.agent.services import Services
from rabbithole_lab.reasoning.checks.quality import statements
from rabbithole_lab.support.progress_bars import progress
from rabbithole_lab.usecase.research_case import Research

logger = logging.getLogger(__name__)


def answer_citations(answer: str) -> list[dict]:
    """Every citation of the answer with the verbatim text it relies on (the quotation it ends)."""
    return [{"doc": doc, "page": page, "quote": statement.quote}
            for statement in statements(answer) for doc, page in statement.citations]


def answer_question(services: Services, question: dict, sessions: Path) -> dict:
    started = time.perf_counter()
    llm_before = getattr(services.reasoner, "llm_calls", 0)
    research = Research(services, sessions)
    try:
        status = research.run_unattended(question["question"])
    finally:
        research.close()
    report = status.report or {}
    answer = report.get("answer", "")
    row = {
        "id": question["id"],
        "answer": answer,
        "citations": answer_citations(answer),
        "seconds": round(time.perf_counter() - started, 3),
        "llm_calls": getattr(services.reasoner, "llm_calls", 0) - llm_before,
    }
    if status.kind != "done":
        row["error"] = status.error or status.kind
        logger.warning("Question %s ended %s: %s", question["id"], status.kind, status.error)
    return row


def run_answers(services: Services, questions: list[dict], show_progress: bool = True) -> Iterator[dict]:
    with tempfile.TemporaryDirectory(prefix="rabbithole-answers-") as folder:
        sessions = Path(folder) / "sessions.sqlite"
        for question in progress(questions, desc="eval answer", unit="q", show=show_progress):
            yield answer_question(services, question, sessions)
