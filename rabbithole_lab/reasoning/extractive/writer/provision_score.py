"""The verdict: one fitted score per provision of the graded context, and the decisive provision chosen by it.

What a researcher reads first is the provision the answer calls decisive ("Maßgeblich ist § 73 StrlSchV").
It is chosen here, not by whichever sentence happens to open the lead: every provision of the context gets the
features below (each 0..1) and one logistic score from a fitted table, the probability that it is the
question's entry. `bench/provision_fit.py` fits the table on German dev gen 1 and UKFIN dev together (labels:
the gold entry, resp. the source passage), reports German gen 2 as the holdout and an ablation per feature,
and chooses the two thresholds below which no verdict is stated: the best provision's score, and its margin
over the next. Under them the answer says that several provisions come into question and quotes each one's
deciding sentence (`answer_selection.py`), instead of naming one it cannot tell from the others.

The writer (`answer_selection.py`) chooses by this table; the check (`extractive_judging.py`) judges the choice by a
second table fitted on the same questions for belief (a softmax over the context's provisions, `check_weights.json`):
the share it gives the named provision tells a right verdict from a wrong one better than the writer's own score
(decision 039).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Literal

import numpy as np

from rabbithole_lab.language import asks_for_definition, defines, is_definitions_heading
from rabbithole_lab.reasoning.extractive.writer.answer import Links, Provision, reached_from
from rabbithole_lab.reasoning.extractive.writer.sentence_ranker import Candidate, logistic, score_for_part

WEIGHTS_FILE = Path(__file__).with_name("provision_weights.json")
CHECK_WEIGHTS_FILE = Path(__file__).with_name("check_weights.json")
MAX_CONTENDERS = 3  # provisions an abstaining lead quotes
UNSURE_BELIEF = 0.5  # a named provision the check's table believes less than this has a rival worth naming

# name -> what it measures (each 0..1); the order is the weight table's
PROVISION_FEATURES: dict[str, str] = {
    "relevance": "its passages' best retrieval relevance (the score search and following gave them), relative to "
                 "the context's best",
    "relevance_rank": "1 / (1 + its rank among the context's provisions by that relevance; ties share the rank)",
    "searched": "search found it (a passage at depth 0), not only a followed reference",
    "followed": "a followed reference led to one of its passages",
    "backlink": "it was found because it cites a provision search found (a backlink)",
    "cites_context": "it cites another provision of the context",
    "cited_in_context": "another provision of the context cites it",
    "best_sentence": "its best sentence's ranker score, relative to the context's best sentence",
    "opening_sentence": "its best sentence's score for the question's first part, relative to the best such score",
    "parts": "the mean over question parts of its best share of that part's terms, relative to the best provision's",
    "asked_kinds": "the share of the kinds the question asks for (amount, deadline, body, ...) its sentences state",
    "terms": "its sentences' best share of the question's term weight",
    "definitions": "it defines terms (a definitions heading, else its share of sentences that define) and the "
                   "question does not ask what a term means",
}


@dataclass(frozen=True)
class ProvisionWeights:
    """The fitted table: weights (log-odds), bias and the thresholds under which no verdict is stated.

    `model` says how the weights read a context. "logistic": each provision's own probability of being the
    entry, whatever else the context holds. "softmax" (a conditional logit): the probability that it, of all the
    context's provisions, is the entry; the provisions' scores sum to 1, so the best one's score is the share of
    belief left to the others too, and a close second lowers it. The bias cancels in a softmax."""

    bias: float
    weights: dict[str, float]
    min_score: float = 0.0
    min_margin: float = 0.0
    fitted_on: str = ""
    model: Literal["logistic", "softmax"] = "logistic"

    def score(self, features: dict[str, float]) -> float:
        """One provision's logistic score read alone; a softmax table reads a context's provisions together
        (`scores`)."""
        return logistic(self.bias, self.weights, features)

    def scores(self, features: list[dict[str, float]]) -> list[float]:
        """The scores of a context's provisions, read together."""
        if self.model == "logistic":
            return [self.score(each) for each in features]
        if not features:
            return []
        logits = np.array([sum(self.weights.get(name, 0.0) * value for name, value in each.items())
                           for each in features])
        odds = np.exp(logits - logits.max())
        return [float(value) for value in odds / odds.sum()]

    def to_json(self) -> dict:
        return {"model": self.model, "bias": self.bias, "weights": self.weights, "min_score": self.min_score,
                "min_margin": self.min_margin, "fitted_on": self.fitted_on}


@lru_cache(maxsize=1)
def fitted_provision_weights() -> ProvisionWeights:
    """The writer's committed table (`bench/provision_fit.py` writes it): it chooses the decisive provision."""
    return _read_table(WEIGHTS_FILE)


@lru_cache(maxsize=1)
def fitted_check_weights() -> ProvisionWeights:
    """The quality check's committed table (`bench/provision_fit.py` writes it): a softmax over the context's
    provisions fitted for belief, so the share it gives the provision an answer names tells how likely that one is
    the entry (a close rival lowers it). The writer's table chooses; this one judges the choice."""
    return _read_table(CHECK_WEIGHTS_FILE)


def _read_table(path: Path) -> ProvisionWeights:
    data = json.loads(path.read_text(encoding="utf-8"))
    unknown = set(data["weights"]) - set(PROVISION_FEATURES)
    if unknown:
        raise ValueError(f"{path.name} weighs features the provision score does not compute: {sorted(unknown)}")
    model = data.get("model", "logistic")
    if model not in ("logistic", "softmax"):
        raise ValueError(f"{path.name}: unknown model {model!r} (logistic or softmax)")
    return ProvisionWeights(float(data.get("bias", 0.0)), {k: float(v) for k, v in data["weights"].items()},
                            float(data.get("min_score", 0.0)), float(data.get("min_margin", 0.0)),
                            data.get("fitted_on", ""), model)


@dataclass
class ScoredProvision:
    provision: Provision
    features: dict[str, float]
    score: float = 0.0
    cites: list[Provision] = field(default_factory=list)  # the context provisions it cites


@dataclass
class Verdict:
    """The decisive provision, or the contenders when none stands out. `stated`: the answer names `decisive`."""

    ranked: list[ScoredProvision] = field(default_factory=list)  # best first
    stated: bool = False
    min_score: float = 0.0
    min_margin: float = 0.0

    @property
    def decisive(self) -> Provision | None:
        return self.ranked[0].provision if self.ranked else None

    @property
    def score(self) -> float:
        return self.ranked[0].score if self.ranked else 0.0

    @property
    def margin(self) -> float:
        return self.ranked[0].score - (self.ranked[1].score if len(self.ranked) > 1 else 0.0) if self.ranked else 0.0

    def contenders(self) -> list[Provision]:
        """The provisions an abstaining lead quotes: the best and those scoring within its margin threshold, at
        most `MAX_CONTENDERS`; at least two when the context has two."""
        if not self.ranked:
            return []
        best = self.ranked[0].score
        close = [item.provision for item in self.ranked if best - item.score <= max(self.min_margin, 1e-9)]
        if len(close) < 2:
            close = [item.provision for item in self.ranked[:2]]
        return close[:MAX_CONTENDERS]

    def score_of(self, provision: Provision) -> float:
        return next((item.score for item in self.ranked if item.provision is provision), 0.0)

    def beliefs(self, table: ProvisionWeights) -> list[tuple[ScoredProvision, float]]:
        """Each provision with another table's score of it, read over the same context (the check's belief), best
        first."""
        values = table.scores([item.features for item in self.ranked])
        return sorted(zip(self.ranked, values, strict=True), key=lambda pair: -pair[1])

    def rival(self, table: ProvisionWeights) -> Provision | None:
        """The provision the check's table believes nearly as well as the stated one, when it believes the stated
        one less than even (`UNSURE_BELIEF`): the lead quotes it too, the verdict stays."""
        if not self.stated or len(self.ranked) < 2:
            return None
        beliefs = self.beliefs(table)
        named = next(belief for item, belief in beliefs if item.provision is self.decisive)
        if named >= UNSURE_BELIEF:
            return None
        return next(item.provision for item, _ in beliefs if item.provision is not self.decisive)


def decide(scored: list[ScoredProvision], weights: ProvisionWeights | None = None) -> Verdict:
    """Score each provision and state a verdict when the best is sure enough and clear of the next."""
    table = weights or fitted_provision_weights()
    for item, value in zip(scored, table.scores([item.features for item in scored]), strict=True):
        item.score = value
    ranked = sorted(scored, key=lambda item: -item.score)
    verdict = Verdict(ranked, min_score=table.min_score, min_margin=table.min_margin)
    verdict.stated = bool(ranked) and (len(ranked) == 1 or (verdict.score >= table.min_score
                                                          and verdict.margin >= table.min_margin))
    return verdict


def provision_features(provisions: list[Provision], candidates: list[Candidate], links: Links,
                       part_kinds: list[set[str]], asked: set[str], question: str = "") -> list[ScoredProvision]:
    """Each provision's features, measured on the context the answer is written from."""
    if not provisions:
        return []
    by_provision: dict[int, list[Candidate]] = {}
    for candidate in candidates:
        by_provision.setdefault(id(candidate.provision), []).append(candidate)
    relevance = {id(p): max((chunk.relevance_score for chunk in p.chunks), default=0.0) for p in provisions}
    best_relevance = max(relevance.values()) or 1.0
    # provisions of equal relevance share the better rank: the order they happen to stand in tells nothing
    rank = {id(p): sum(1 for q in provisions if relevance[id(q)] > relevance[id(p)]) for p in provisions}
    cites = {id(p): {id(q) for q in reached_from(provisions, p, links)} for p in provisions}
    cited = set().union(*cites.values())  # ids of the provisions some context provision cites
    best_sentence = max((c.score for c in candidates), default=0.0) or 1.0
    first_kinds = part_kinds[0] if part_kinds else set()
    opening = {id(c): score_for_part(c, 0, first_kinds) for c in candidates}
    best_opening = max(opening.values(), default=0.0) or 1.0
    parts = max((len(c.part_terms) for c in candidates), default=0)
    asks_definition = asks_for_definition(question)
    best_part = [max((c.part_terms[i] for c in candidates if i < len(c.part_terms)), default=0.0) or 1.0
                 for i in range(parts)]
    out = []
    for provision in provisions:
        own = by_provision.get(id(provision), [])
        if not own:
            continue
        stated = set().union(*(c.kinds for c in own)) if own else set()
        part_share = [max((c.part_terms[i] for c in own if i < len(c.part_terms)), default=0.0) / best_part[i]
                      for i in range(parts)]
        features = {
            "relevance": relevance[id(provision)] / best_relevance,
            "relevance_rank": 1.0 / (1.0 + rank[id(provision)]),
            "searched": float(any(chunk.depth == 0 for chunk in provision.chunks)),
            "followed": float(any(chunk.cited_by for chunk in provision.chunks)),
            "backlink": float(any(chunk.cites for chunk in provision.chunks)),
            "cites_context": float(bool(cites[id(provision)])),
            "cited_in_context": float(id(provision) in cited),
            "best_sentence": max(c.score for c in own) / best_sentence,
            "opening_sentence": max(opening[id(c)] for c in own) / best_opening,
            "parts": sum(part_share) / len(part_share) if part_share else 0.0,
            "asked_kinds": len(stated & asked) / len(asked) if asked else 0.0,
            "terms": max(c.features.get("terms", 0.0) for c in own),
            "definitions": 0.0 if asks_definition else _defines_terms(provision, own),
        }
        out.append(ScoredProvision(provision, features,
                                   cites=[q for q in provisions if id(q) in cites[id(provision)]]))
    return out


def _defines_terms(provision: Provision, own: list[Candidate]) -> float:
    """1 for a provision of definitions by its heading, else the share of its sentences that define a term."""
    if any(is_definitions_heading(chunk.heading) for chunk in provision.chunks):
        return 1.0
    return sum(1 for c in own if defines(c.text)) / len(own)


def verdict_record(verdict: Verdict | None, named: Provision | None, chain: list[Provision]) -> dict:
    """The verdict as the report keeps it: the provision the answer names as decisive (None: it names several),
    its score and margin over the best other, the chain it brought, and the best-scored provisions."""
    if verdict is None or not verdict.ranked:
        return {}
    stated = verdict.stated and named is not None
    score = verdict.score_of(named) if stated else verdict.score
    others = [item.score for item in verdict.ranked if item.provision is not named]
    return {"stated": stated, "label": named.label if stated else "", "doc": named.doc if stated else "",
            "section": named.section if stated else "", "score": round(score, 4),
            "margin": round(score - max(others, default=0.0), 4),
            "min_score": verdict.min_score, "min_margin": verdict.min_margin,
            "best": named is verdict.decisive if stated else False,
            "chain": [{"label": p.label, "doc": p.doc, "section": p.section} for p in chain],
            "candidates": [{"label": item.provision.label, "doc": item.provision.doc,
                            "section": item.provision.section, "score": round(item.score, 4)}
                           for item in verdict.ranked[:MAX_CONTENDERS + 2]]}
