"""One score per candidate sentence of the answer: named features, one fitted weight table.

Every sentence of the graded context is a candidate with the features below (each in 0..1). A logistic
model turns them into one score: the probability that the sentence holds what the question asks. The
weights are fitted, not set by hand: `bench/ranker_fit.py` fits them on the first half of the German dev
set (the labels: sentences that hold one of a question's answer facts), reports the second half as the
holdout and an ablation, and writes `ranker_weights.json` next to this module.

The answer's selection (`answer_selection.py`) reads only these scores: what it must cover, then the best
of the rest within the answer's budget.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from rabbithole_lab.reasoning.extractive.writer.answer import Provision, Sentence

WEIGHTS_FILE = Path(__file__).with_name("ranker_weights.json")

# name -> what it measures (each 0..1); the order is the weight table's
FEATURES: dict[str, str] = {
    "terms": "share of the question's term weight the sentence carries (terms weighed by how few sentences of "
             "the context hold them)",
    "meaning": "the embedder's similarity of sentence and question, read through the model's band (0 for text "
               "in a language the embedder was not trained on)",
    "part": "the best share of one question part's term weight the sentence carries (a question asking "
            "several things: each part by its own words)",
    "asked_kind": "share of the kinds the question asks for (amount, deadline, frequency, body, condition) "
                  "that the sentence states",
    "figure": "the sentence states a figure (a limit, a period, an amount)",
    "cited_paragraph": "it stands in a paragraph a followed reference names (\"§ 9g Absatz 5\" is answered by "
                       "paragraph (5))",
    "named_row": "a table row the question names by its label",
    "entry": "its provision is the question's entry: the searched provision whose sentences say most on the "
             "question",
    "reached_from_entry": "its provision is cited by the entry (a reference the entry makes)",
    "provision_strength": "its provision's best sentence relevance, relative to the best provision's",
    "completes": "it points back at the sentence before it (\"Satz 1 gilt nicht …\"): half of one statement",
    "tier": "the weight of the context tier its passage is in (primary 1, secondary, tertiary less)",
    "length": "its length, up to 600 characters (1 at 600 or more)",
}


@dataclass(frozen=True)
class RankerWeights:
    """The fitted table: one weight per feature and a bias (log-odds)."""

    bias: float
    weights: dict[str, float]
    fitted_on: str = ""

    def score(self, features: dict[str, float]) -> float:
        return logistic(self.bias, self.weights, features)

    def to_json(self) -> dict:
        return {"bias": self.bias, "weights": self.weights, "fitted_on": self.fitted_on}


def logistic(bias: float, weights: dict[str, float], features: dict[str, float]) -> float:
    """A fitted table's probability for the features (log-odds clipped to ±30)."""
    logit = bias + sum(weights.get(name, 0.0) * value for name, value in features.items())
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, logit))))


@lru_cache(maxsize=1)
def fitted_weights() -> RankerWeights:
    """The committed table (`bench/ranker_fit.py` writes it)."""
    data = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
    unknown = set(data["weights"]) - set(FEATURES)
    if unknown:
        raise ValueError(f"{WEIGHTS_FILE.name} weighs features the ranker does not compute: {sorted(unknown)}")
    return RankerWeights(float(data["bias"]), {k: float(v) for k, v in data["weights"].items()},
                         data.get("fitted_on", ""))


@dataclass
class Candidate:
    """One sentence the answer may quote, with its provision, its features and its score."""

    sentence: Sentence
    provision: Provision
    features: dict[str, float] = field(default_factory=dict)
    part_terms: list[float] = field(default_factory=list)  # its share of each question part's term weight
    task_terms: list[float] = field(default_factory=list)  # its share of each approved task's own term weight
    kinds: frozenset[str] = frozenset()  # the asked kinds it states
    score: float = 0.0

    @property
    def text(self) -> str:
        return self.sentence.text


def rank(candidates: list[Candidate], weights: RankerWeights | None = None) -> list[Candidate]:
    """Score every candidate with the table; best first."""
    table = weights or fitted_weights()
    for candidate in candidates:
        candidate.score = table.score(candidate.features)
    return sorted(candidates, key=lambda c: -c.score)


def score_for_part(candidate: Candidate, part: int, kinds: set[str] | frozenset[str] = frozenset(),
                   weights: RankerWeights | None = None) -> float:
    """The candidate's score when question part `part` is what is asked: its `part` feature read for that part,
    and its `asked_kind` for the kinds that part asks for."""
    if part >= len(candidate.part_terms):
        return candidate.score
    features = candidate.features | {"part": candidate.part_terms[part]}
    if kinds:
        features["asked_kind"] = len(candidate.kinds & kinds) / len(kinds)
    return (weights or fitted_weights()).score(features)
