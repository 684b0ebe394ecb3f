"""Graded context: primary / secondary / tertiary by depth, source and score (seed 002)."""

from __future__ import annotations

from typing import Literal

from rabbithole_lab.records import TIER_WEIGHTS, Tier

SECONDARY_SCORE = 0.6


def classify_tier(depth: int, score: float, source: Literal["task", "hitl"] = "task") -> Tier:
    """Direct task hits are primary (weak ones secondary); depth-1 hops secondary; depth 2 and HITL tertiary."""
    if source == "hitl" or depth >= 2:
        return "tertiary"
    if depth == 1:
        return "secondary"
    if score >= SECONDARY_SCORE:
        return "primary"
    return "secondary"


def tier_weight(tier: Tier) -> float:
    return TIER_WEIGHTS[tier]
