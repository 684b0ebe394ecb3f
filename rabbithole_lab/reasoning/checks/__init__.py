"""The checks both reasoners' answers go through: the claim check and the quality score."""
