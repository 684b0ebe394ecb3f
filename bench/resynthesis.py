"""Answers re-written from kept research: the state a run had before `synthesize`, saved once and
synthesised again with today's code.

A change to how the answer is written (the sentence choice, the lead, the quality check) does not change
what research found. Re-running the research for every such change costs about a minute a question;
re-running only the steps from `synthesize` on (synthesis, quality check, remediation, attribution) on the
kept state costs seconds, and the answers are those a fresh run of the same research would give.

    state = state_before_synthesis(session)          # after a whole run, from its checkpoints
    status = resynthesize(services, state, folder)   # synthesise again (a thread of its own)
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import rabbithole_lab
from rabbithole_lab.agent.services import Services
from rabbithole_lab.agent.session import ResearchSession, RunStatus, new_thread_id

SYNTHESIS_NODE = "synthesize"
NODE_BEFORE_SYNTHESIS = "validate_relevance"  # the node whose state `synthesize` starts from


def state_before_synthesis(session: ResearchSession) -> dict | None:
    """The run's state when `synthesize` was first about to run (None when the run never got there)."""
    first = None
    for snapshot in session.graph.get_state_history(session.config):  # newest first
        if snapshot.next == (SYNTHESIS_NODE,):
            first = snapshot
    return dict(first.values) if first is not None else None


def resynthesize(services: Services, state: dict, sessions_path: Path) -> RunStatus:
    """Run `synthesize` and every step after it on `state` with the current code, in a new thread of
    `sessions_path`; the returned status holds the new report."""
    session = ResearchSession(services, sessions_path, thread_id=new_thread_id())
    try:
        values = {**state, "thread_id": session.thread_id}
        session.graph.update_state(session.config, values, as_node=NODE_BEFORE_SYNTHESIS)
        return session.run_from(SYNTHESIS_NODE)
    finally:
        session.close()


def save_state(path: Path, state: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(path.suffix + ".partial")
    partial.write_text(json.dumps(state, ensure_ascii=False), encoding="utf-8")
    partial.replace(path)


def load_state(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


# ---- when kept research is still today's research -------------------------------------------------
# Folders and modules whose code runs only from `synthesize` on (checked by tests/agent/test_resynthesis.py,
# which traces a research run): a change to them leaves the kept research valid. Front ends (the workbench, reports, the
# command line, the benchmarks' own code) never run inside a research run's steps.
SYNTHESIS_SIDE = (
    "reasoning/checks/", "reasoning/extractive/writer/",
    "agent/nodes/attribution.py", "agent/nodes/synthesis.py", "steps/synthesis_context.py",
    "reasoning/extractive/extractive_judging.py", "reasoning/extractive/question_parts.py",
    "reasoning/extractive/term_weights.py", "reasoning/passages.py",
    "evidence/reference_edges.py", "evidence/sources.py", "schemas.py",
)
FRONT_ENDS = ("cli/", "ui/", "batch/", "viz/", "report/", "eval/", "notebooks/", "messages/ui_catalogue.py",
              "usecase/input_files.py")
PACKAGE = Path(rabbithole_lab.__file__).resolve().parent


def research_modules() -> list[str]:
    """The package's modules whose code may run before `synthesize` (paths relative to the package)."""
    modules = sorted(str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py"))
    return [module for module in modules
            if not module.startswith(SYNTHESIS_SIDE + FRONT_ENDS)]


def research_code_hash() -> str:
    """One hash of the code that decides what research finds: kept research is stale once it changes."""
    digest = hashlib.sha256()
    for module in research_modules():
        digest.update(module.encode() + b"\0" + (PACKAGE / module).read_bytes() + b"\0")
    return digest.hexdigest()[:16]
