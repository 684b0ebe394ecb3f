"""The smoke run for a researcher who has Ollama (`rabbithole doctor --smoke`): one short research question
end to end against the configured model, unattended, and what it shows about the model: how long each
node took, whether each step's JSON was usable (first time, after being told what was wrong, or not at
all), how large the prompts were against the window, and which citations of the answer name a page the
research never read (invented)."""

from __future__ import annotations

import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from rabbithole_lab.settings import Settings

DEMO_QUESTION = "Welche Grenzwerte gelten für beruflich exponierte Personen?"


@dataclass
class SmokeResult:
    model: str = ""
    window: str = ""  # the model window's description
    prompt_chars_limit: int = 0
    node_seconds: dict[str, float] = field(default_factory=dict)
    calls: list[dict] = field(default_factory=list)  # reasoning/llm_answers.CallLog
    answer_status: str = ""
    invented_citations: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error: str = ""

    @property
    def healthy(self) -> bool:
        """Done, every step answered by the model (repaired at most), no prompt past the window, and no
        citation of a page the research did not read."""
        return (not self.error and self.answer_status in ("cited", "nothing_found") and not self.invented_citations
                and all(call["outcome"] in ("valid", "repaired") for call in self.calls)
                and all(call["prompt_chars"] <= self.prompt_chars_limit for call in self.calls))


def smoke_run(settings: Settings, kb_dir: Path, db_path: Path | None, question: str) -> SmokeResult:
    """Run `question` unattended over `kb_dir` with the configured model; raises SmokeUnavailable when no
    model answers (the extractive reasoner is not what a smoke run is for)."""
    from rabbithole_lab.agent.session import STEP_EVENT, ScriptedAnswers
    from rabbithole_lab.messages.reasons import notice_text
    from rabbithole_lab.reasoning.dialogue_terms import SKIP_COMMAND
    from rabbithole_lab.usecase.research_case import Research

    result = SmokeResult()
    marks = {"last": time.monotonic()}

    def timed(node: str, update: dict) -> None:  # a node's update arrives when it is done
        if node == STEP_EVENT:  # progress from inside a node (a search, a reference followed), not a node's end
            return
        now = time.monotonic()
        result.node_seconds[node] = round(result.node_seconds.get(node, 0.0) + now - marks["last"], 2)
        marks["last"] = now

    with tempfile.TemporaryDirectory(prefix="rabbithole-smoke-") as scratch:
        research = Research.open(settings, kb_dir, db_path, Path(scratch) / "sessions.sqlite", show_progress=False,
                                 on_progress=timed)
        try:
            primary = getattr(research.services.reasoner, "primary", None)
            if primary is None or getattr(primary, "window", None) is None:
                raise SmokeUnavailable(f"no model answers: {research.services.reasoner.info.reason}")
            result.model, result.window = primary.info.model or "", primary.window.describe()
            result.prompt_chars_limit = primary.window.prompt_chars
            marks["last"] = time.monotonic()
            status = research.run_with(ScriptedAnswers([], end=SKIP_COMMAND), question)
        finally:
            research.close()
    result.calls = list(primary.call_log.calls)
    if status.kind != "done":
        result.error = status.error or status.kind
        return result
    meta = (status.report or {}).get("metadata", {})
    result.answer_status = meta.get("answer_status", "")
    result.invented_citations = list(meta.get("invented_citations", []))
    result.warnings = [notice_text(warning, meta.get("language", "de")) for warning in meta.get("warnings", [])]
    return result


class SmokeUnavailable(RuntimeError):
    """No model to smoke-test."""


def smoke_lines(result: SmokeResult) -> list[str]:
    """The smoke run as the terminal shows it."""
    lines = [f"model {result.model}: {result.window}", "", "node                     seconds"]
    lines += [f"{node:<24} {seconds:>7.1f}" for node, seconds in result.node_seconds.items()]
    steps: dict[str, list[dict]] = defaultdict(list)
    for call in result.calls:
        steps[call["step"]].append(call)
    lines += ["", "step                     calls  valid  repaired  unusable  wrong language  "
                  "largest prompt / limit (chars)  seconds"]
    for step, calls in steps.items():
        count = {outcome: sum(1 for call in calls if call["outcome"] == outcome)
                 for outcome in ("valid", "repaired", "unusable", "wrong_language")}
        largest = max(call["prompt_chars"] for call in calls)
        lines.append(f"{step:<24} {len(calls):>5}  {count['valid']:>5}  {count['repaired']:>8}  "
                     f"{count['unusable']:>8}  {count['wrong_language']:>14}  {largest:>14,} / "
                     f"{result.prompt_chars_limit:,}  "
                     f"{sum(c['seconds'] for c in calls):>7.1f}")
    invented = ", ".join(result.invented_citations) or "none"
    lines += ["", f"answer: {result.answer_status or result.error}; invented citations: {invented}"]
    lines += [f"warning: {warning}" for warning in result.warnings]
    lines.append("healthy" if result.healthy else "NOT healthy: see the rows with unusable answers or answers in the "
                 "wrong language, prompts past the limit, invented citations or the error above")
    return lines
