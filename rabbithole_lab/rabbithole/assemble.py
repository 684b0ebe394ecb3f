"""Admit: build the context from the candidate pool under a character budget.

One assembler serves every caller: `rabbithole eval` (flat gets the same assembler over a pool
without followed items and backlinks), the research tasks and the synthesis context. Items enter
by value per character, best first; an item whose parent (its citer, or the hit of its section)
is not in yet waits for it. The order of admission is the context's rank order, so any prefix of
the result is the best context of that size the pool allows.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from typing import TypeVar

Item = TypeVar("Item")


def assemble(
    items: Sequence[Item],
    budget_chars: int,
    value: Callable[[Item], float],
    size: Callable[[Item], int],
    key: Callable[[Item], str],
    parent: Callable[[Item], str] = lambda item: "",
    strict: bool = False,
) -> list[Item]:
    """Admit items by `value / size` until `budget_chars` is spent.

    Not strict (the benchmarks' rule): admission stops once the running size reaches the budget, so
    the last item may run over. Strict (a model's context window): an item that does not fit is
    passed over and smaller ones may still enter. Items worth nothing never enter; an item whose
    parent never enters never enters either."""
    waiting: dict[str, list[tuple[int, Item]]] = {}
    ready: list[tuple[float, int, Item]] = []
    known = {key(item) for item in items}
    for order, item in enumerate(items):
        if value(item) <= 0:
            continue
        up = parent(item)
        if up and up in known:
            waiting.setdefault(up, []).append((order, item))
        else:
            heapq.heappush(ready, (-value(item) / max(size(item), 1), order, item))
    admitted: list[Item] = []
    taken: set[str] = set()
    used = 0
    while ready and used < budget_chars:
        _, _, item = heapq.heappop(ready)
        if key(item) in taken:
            continue
        if strict and used + size(item) > budget_chars:
            continue
        admitted.append(item)
        taken.add(key(item))
        used += size(item)
        for order, child in waiting.pop(key(item), []):
            heapq.heappush(ready, (-value(child) / max(size(child), 1), order, child))
    return admitted
