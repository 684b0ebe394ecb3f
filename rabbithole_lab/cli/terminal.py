"""The interactive terminal front end of a research run: HITL questions and to-do approval on stdin."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TextIO

from rabbithole_lab.messages.catalogue import terminal_text


class TerminalAnswers:
    """Answers interrupts by asking the person at the terminal; at end of input it ends / approves."""

    def __init__(self, read: Callable[[str], str] = input, out: TextIO | None = None):
        self.read = read
        self.out = out if out is not None else sys.stdout  # the stream of the call: the command's safe one

    def _ask(self, prompt: str, default: str, text: dict) -> str:
        try:
            return self.read(prompt)
        except EOFError:
            print(text["no_input"].format(d=default), file=self.out)
            return default

    def __call__(self, interrupt: dict) -> Any:
        text = terminal_text(interrupt.get("language", "de"))
        if interrupt.get("type") == "todo_approval":
            return self._todo(interrupt, text)
        print(f"\n== {text['round'].format(n=interrupt.get('iteration', 0) + 1)} ==", file=self.out)
        retrieval = interrupt.get("retrieval") or {}
        if retrieval:
            new = retrieval.get("new", 0)
            print(text["retrieved_one" if new == 1 else "retrieved"].format(
                q=" | ".join(retrieval.get("queries", [])), k=new, d=retrieval.get("dedup_ratio", 0.0)), file=self.out)
            for chunk in retrieval.get("chunks", [])[:9]:
                print(f"   - {chunk['doc']} {chunk.get('section', '')} p. {chunk['page']} ({chunk['score']:.2f})",
                      file=self.out)
        gaps = ", ".join(interrupt.get("knowledge_gaps", [])) or text["none"]
        print(text["coverage"].format(c=interrupt.get("coverage_score", 0.0), g=gaps), file=self.out)
        for number, question in enumerate(interrupt.get("questions", []), start=1):
            print(f"  {number}. {question}", file=self.out)
        return self._ask(text["prompt"], "/end", text).strip() or "/end"

    def _todo(self, interrupt: dict, text: dict) -> Any:
        items = interrupt["todo_list"]["items"]
        if interrupt.get("research_summary"):
            print(f"\n{text['summary']}", file=self.out)
            for line in interrupt["research_summary"].splitlines():
                print(f"  {line}", file=self.out)
        print(f"\n{text['todo']}", file=self.out)
        for item in items:
            print(f"  {item['id']}. {item['task']}", file=self.out)
        print(text["todo_help"], file=self.out)
        decision: dict = {"removed_ids": [], "edited_items": [], "new_items": [], "anchor_correction": ""}
        while True:
            line = self._ask(text["todo_prompt"], "approve", text).strip()
            if not line or line == "approve":
                break
            if line.startswith("-") and line[1:].strip().isdigit():
                decision["removed_ids"].append(int(line[1:]))
            elif line.startswith("e ") and len(line.split(maxsplit=2)) == 3 and line.split()[1].isdigit():
                _, number, task = line.split(maxsplit=2)
                decision["edited_items"].append({"id": int(number), "task": task})
            elif line.startswith("+"):
                decision["new_items"].append(line[1:].strip())
            elif line.startswith("="):
                decision["anchor_correction"] = f"{decision['anchor_correction']} {line[1:].strip()}".strip()
            else:
                print(text["todo_help"], file=self.out)
        return decision if any(decision.values()) else "approve"
