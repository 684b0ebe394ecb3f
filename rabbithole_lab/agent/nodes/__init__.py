"""Graph nodes by phase: hitl (1), planning (2), research (3, 3.5), synthesis (4), attribution (5)."""
