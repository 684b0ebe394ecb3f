"""Rank: what each candidate is worth to the answer, as one value comparable across kinds.

The value estimates the chance that the answer needs the item. It is built from two facts about
retrieval and citation, not from thresholds:

- a first-stage hit at rank r is worth 1 / (r + 1): the chance that a ranking puts what matters
  at r falls with r (the assumption behind reciprocal-rank metrics);
- a citing passage passes its value on to what it cites, apportioned by the gate: a reference
  gets the share of its citer's value that its gate score has among all references the citer
  offered. A provision that cites one section hands it all of its weight; one that lists ten
  hands each what the question makes of it. A reference that lands on several passages (a range
  "paragraphs 4.29 - 4.47", a whole chapter) splits its part among them, so a range does not multiply it.

A backlink (a hit citing a better-ranked hit) adds the cited hit's value, split among all hits
that cite it, up to the cited hit's own value. Another chunk of a hit's section is worth the hit's value
times the share of the question's terms that only this chunk adds, so a section grows only when its other chunks say
something the first did not.
"""

from __future__ import annotations

from rabbithole_lab.kb.retrieval.lexical import content_terms


def hit_value(rank: int) -> float:
    """A first-stage hit at 0-based `rank`."""
    return 1.0 / (rank + 1)


def reference_shares(gate_scores: list[float]) -> list[float]:
    """Each reference's share of its citer's value: its gate score over the sum of all of them."""
    total = sum(max(score, 0.0) for score in gate_scores)
    if total <= 0:
        return [0.0 for _ in gate_scores]
    return [max(score, 0.0) / total for score in gate_scores]


def cited_value(citer_value: float, share: float) -> float:
    """What a followed target inherits from the passage that cites it."""
    return citer_value * share


def landed_value(reference_value: float, passages: int) -> float:
    """What each passage a reference lands on (new to the context or held by it already) gains."""
    return reference_value / max(passages, 1)


def backlink_value(own_value: float, cited_seed_value: float, citers_of_seed: int) -> float:
    """A hit that cites a better hit: its own value plus its part of the cited hit's value, never more
    than the cited hit is worth (the citer joins it, it does not overtake it)."""
    return max(own_value, min(cited_seed_value, own_value + cited_seed_value / max(citers_of_seed, 1)))


def new_terms_share(question: str, seen_text: str, text: str, language: str = "de") -> float:
    """Share of the question's content terms that `text` holds and `seen_text` does not."""
    wanted = content_terms(question, language)
    if not wanted:
        return 0.0
    added = (wanted & content_terms(text, language)) - content_terms(seen_text, language)
    return len(added) / len(wanted)
