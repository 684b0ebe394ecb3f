"""Running the graph with a SQLite checkpointer: start, answer interrupts, stop, retry, resume.

Used by the CLI, the notebook workbench and batch runs. A session is one LangGraph thread in one
SQLite file; a fresh `ResearchSession` on the same file and thread continues where the last one
stopped (kernel restarts, Ctrl-C, Ollama down).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from rabbithole_lab.agent.graph import build_graph
from rabbithole_lab.agent.nodes.node_common import STEP_LISTENER
from rabbithole_lab.agent.services import Services
from rabbithole_lab.reasoning.dialogue_terms import END_COMMAND

logger = logging.getLogger(__name__)

RECURSION_LIMIT = 500  # 5 HITL rounds x 5 nodes + 15 tasks + synthesis loops, with room to spare

RunKind = Literal["interrupt", "done", "error", "stopped"]


@dataclass
class RunStatus:
    kind: RunKind
    interrupt: dict | None = None
    error: str = ""
    state: dict = field(default_factory=dict)

    @property
    def report(self) -> dict | None:
        return self.state.get("final_report")


ProgressCallback = Callable[[str, dict], None]
# the "node" of a progress event from inside a node: {"step": "search" | "follow", "done", "total", ...}
STEP_EVENT = "step"


def new_thread_id() -> str:
    return uuid.uuid4().hex[:12]


def has_work_left(snapshot) -> bool:
    """Whether the graph has a step to run or to finish.

    Not `snapshot.next`: that leaves out tasks whose writes are saved. A process killed after a node's
    writes reached the checkpointer but before the next checkpoint leaves a snapshot with an empty `next`
    whose run is not finished; streaming from it applies the saved writes and goes on."""
    return bool(snapshot.tasks)


class ResearchSession:
    """One research run (a LangGraph thread) persisted in `checkpoint_path`."""

    def __init__(self, services: Services, checkpoint_path: Path, thread_id: str | None = None,
                 on_progress: ProgressCallback | None = None):
        self.services = services
        self.checkpoint_path = Path(checkpoint_path)
        self.checkpoint_path.parent.mkdir(parents=True, exist_ok=True)
        self.thread_id = thread_id or new_thread_id()
        self._connection = sqlite3.connect(str(self.checkpoint_path), check_same_thread=False)
        self.graph = build_graph(services.settings).compile(checkpointer=SqliteSaver(self._connection))
        self.config = {"configurable": {"thread_id": self.thread_id}, "recursion_limit": RECURSION_LIMIT}
        self.on_progress = on_progress
        self._stop = threading.Event()

    # ---- driving the graph --------------------------------------------------------------------
    def start(self, question: str, collection: str | None = None, extra: dict | None = None) -> RunStatus:
        """Start a new run; `extra` holds run facts kept in the state (e.g. kb_dir, db_path)."""
        if not question.strip():
            raise ValueError("The question is empty.")
        if collection:
            known = self.services.kb.collections()
            if collection not in known:
                from rabbithole_lab.kb.store.index import UnknownCollectionError

                raise UnknownCollectionError(f"Unknown collection '{collection}'; known: {', '.join(known) or 'none'}")
        return self._run({"query": question, "collection": collection, "thread_id": self.thread_id,
                          "warnings": [], "messages": [], **(extra or {})})

    def answer(self, value: Any) -> RunStatus:
        """Answer the pending interrupt (a HITL answer, "/end", or a to-do decision)."""
        return self._run(Command(resume=value))

    def resume(self) -> RunStatus:
        """Continue after a stop, a crash or an error; an answer is still needed if one is pending."""
        snapshot = self.graph.get_state(self.config)
        values = snapshot.values or {}
        if not values:
            raise ValueError(f"No saved session '{self.thread_id}' in {self.checkpoint_path}")
        if values.get("error") and values.get("failed_node"):
            logger.info("Retrying node %s of session %s", values["failed_node"], self.thread_id)
            return self._run(Command(goto=values["failed_node"], update={"error": "", "failed_node": ""}))
        pending = self.pending_interrupt(snapshot)
        if pending is not None:
            return RunStatus("interrupt", pending, state=values)
        if not has_work_left(snapshot):
            return RunStatus("done", state=values)
        return self._run(None)

    def run_from(self, node: str) -> RunStatus:
        """Run on from `node`, whatever the checkpoint says comes next (state written by `update_state`)."""
        return self._run(Command(goto=node))

    def stop(self) -> None:
        """Ask the run to stop at the next node boundary (the checkpoint keeps everything)."""
        self._stop.set()

    def _run(self, payload: Any) -> RunStatus:
        self._stop.clear()
        stopped = False
        # steps inside a node report through a context variable, not LangGraph's "custom" stream mode:
        # with that mode on, leaving the stream at a stop loses the checkpoint's next node
        token = STEP_LISTENER.set(self._on_step)
        try:
            for chunk in self.graph.stream(payload, self.config, stream_mode="updates", context=self.services):
                for node, update in chunk.items():
                    if self.on_progress and node != "__interrupt__":
                        self.on_progress(node, update or {})
                if self._stop.is_set():
                    stopped = True
                    break
        finally:
            STEP_LISTENER.reset(token)
        return self.status(stopped)

    def _on_step(self, event: dict) -> None:
        if self.on_progress:
            self.on_progress(STEP_EVENT, event)

    # ---- inspecting ---------------------------------------------------------------------------
    def pending_interrupt(self, snapshot=None) -> dict | None:
        snapshot = snapshot or self.graph.get_state(self.config)
        for task in snapshot.tasks:
            for item in task.interrupts:
                return item.value
        return None

    def state(self) -> dict:
        return dict(self.graph.get_state(self.config).values or {})

    def status(self, stopped: bool = False) -> RunStatus:
        snapshot = self.graph.get_state(self.config)
        values = dict(snapshot.values or {})
        pending = self.pending_interrupt(snapshot)
        if pending is not None:
            return RunStatus("interrupt", pending, state=values)
        if values.get("error"):
            return RunStatus("error", error=values["error"], state=values)
        if stopped or has_work_left(snapshot):
            return RunStatus("stopped", state=values)
        return RunStatus("done", state=values)

    def close(self) -> None:
        self._connection.close()


def saved_values(checkpoint_path: Path, thread_id: str) -> dict:
    """The latest saved state of one session without building a graph ({} when there is none)."""
    path = Path(checkpoint_path)
    if not path.is_file():
        return {}
    connection = sqlite3.connect(str(path), check_same_thread=False)
    try:
        item = SqliteSaver(connection).get_tuple({"configurable": {"thread_id": thread_id}})
        return dict(item.checkpoint.get("channel_values", {})) if item else {}
    finally:
        connection.close()


def list_sessions(checkpoint_path: Path) -> list[dict]:
    """Saved sessions in a checkpoint file, newest first: thread id, question, phase, error (a notice, or words
    in a run saved before), language."""
    path = Path(checkpoint_path)
    if not path.is_file():
        return []
    connection = sqlite3.connect(str(path), check_same_thread=False)
    try:
        saver = SqliteSaver(connection)
        latest: dict[str, dict] = {}
        for item in saver.list(None):
            thread = item.config["configurable"]["thread_id"]
            if thread in latest:
                continue
            values = item.checkpoint.get("channel_values", {})
            latest[thread] = {"thread_id": thread, "query": values.get("query", ""),
                              "phase": values.get("phase", ""), "error": values.get("error", ""),
                              "language": values.get("detected_language") or "de",
                              "updated_at": item.checkpoint.get("ts", "")}
        return sorted(latest.values(), key=lambda s: s["updated_at"], reverse=True)
    finally:
        connection.close()


# ---- answering interrupts without a person ----------------------------------------------------
class ScriptedAnswers:
    """Answers HITL questions from a list (then `/end`, or `/skip` for a run meant to be unattended) and
    approves the to-do list.

    `todo_decision` may be "approve" or a dict with removed_ids / edited_items / new_items.
    """

    def __init__(self, answers: list[str] | None = None, todo_decision: Any = "approve", end: str = END_COMMAND):
        self.answers = list(answers or [])
        self.todo_decision = todo_decision
        self.end = end  # what is said when the answers run out (SKIP_COMMAND: the run is unattended)
        self.asked: list[dict] = []

    def __call__(self, interrupt: dict) -> Any:
        self.asked.append(interrupt)
        if interrupt.get("type") == "todo_approval":
            return self.todo_decision
        return self.answers.pop(0) if self.answers else self.end


def run_to_end(session: ResearchSession, first: RunStatus, answer: Callable[[dict], Any]) -> RunStatus:
    """Answer interrupts until the run is done, stopped or failed."""
    status = first
    while status.kind == "interrupt":
        status = session.answer(answer(status.interrupt or {}))
    return status
