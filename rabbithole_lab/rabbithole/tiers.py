"""Graded context: primary / secondary / tertiary by depth, source and score (seed 002).

Tier 1, primary (weight 1.0): direct search results of a task with relevance >= 0.85.
Tier 2, secondary (weight 0.7): depth-1 references, and direct results of medium relevance (0.6-0.85).
Tier 3, tertiary (weight 0.4): depth-2 references, HITL retrieval, and direct results below 0.6.
"""

from __future__ import annotations

from typing import Literal

from rabbithole_lab.records import TIER_WEIGHTS, Tier

PRIMARY_SCORE = 0.85
SECONDARY_SCORE = 0.6


def classify_tier(depth: int, score: float, source: Literal["task", "hitl"] = "task") -> Tier:
    if source == "hitl" or depth >= 2:
        return "tertiary"
    if depth == 1:
        return "secondary"
    if score >= PRIMARY_SCORE:
        return "primary"
    return "secondary" if score >= SECONDARY_SCORE else "tertiary"


def tier_weight(tier: Tier) -> float:
    return TIER_WEIGHTS[tier]
