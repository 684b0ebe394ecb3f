"""The agentic reference gate: which detected references are worth following.

A `ReferenceDecider` judges one reference from the query anchor and a window of text
around it (±400 characters by default), optionally with the title of the cited target.
`ExtractiveDecider` needs no LLM; the LLM reasoner implements the same protocol with
REFERENCE_DECISION_PROMPT. Decisions for one chunk run concurrently; a decider that
fails makes the gate follow (seed behaviour) and log a warning.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from rabbithole_lab.kb.embedding.embedder import Embedder
from rabbithole_lab.language.detection import detect_language
from rabbithole_lab.rabbithole.relevance import keyword_overlap, lexical_anchor
from rabbithole_lab.records import GateInput, GateVerdict, ReferenceDecider, ReferenceDecision

logger = logging.getLogger(__name__)


GATE_EMBED_CHARS = 800
VECTOR_CACHE_SIZE = 10_000


def _core(window: str, chars: int = GATE_EMBED_CHARS) -> str:
    """The middle of a gate window: embedding cost grows with length, the reference sits in the middle."""
    if len(window) <= chars:
        return window
    start = (len(window) - chars) // 2
    return window[start : start + chars]


class ExtractiveDecider:
    """Follow when window and target title resemble the anchor (embedding + keyword overlap).

    score = 0.5 * band.score(max(cos(window core, anchor), cos(title, anchor)))
          + 0.5 * max(keyword overlap of window, of title)
    All references of one chunk are embedded in one batch.
    """

    def __init__(self, embedder: Embedder, threshold: float):
        self._embedder = embedder
        self.threshold = threshold
        self._vectors: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def scores(self, items: list[GateInput], anchor: str) -> list[float]:
        """One batch per chunk; identical texts are embedded once. The window is embedded only when
        the target has no title (titles are short, windows cost ~250 tokens each on the CPU)."""
        if not items:
            return []
        texts = []
        for item in items:
            if item.target_similarity is None:
                texts.append(_core(item.window))
            if item.target_title:
                texts.append(item.target_title)
        # the question and section titles recur across levels and tasks: each is embedded once
        with self._lock:
            vector_of = {text: self._vectors[text] for text in texts if text in self._vectors}
        unique = [text for text in dict.fromkeys(texts) if text not in vector_of]
        if unique:
            fresh = dict(zip(unique, self._embedder.embed_documents(unique), strict=True))
            vector_of |= fresh
            with self._lock:
                if len(self._vectors) > VECTOR_CACHE_SIZE:
                    self._vectors.clear()
                self._vectors.update(fresh)
        anchor_vector = self._embedder.embed_query(anchor)  # asked as a query, read as passages
        # English questions about German documents compare through the glossary's German terms;
        # about English documents they compare as they are
        anchor_language = detect_language(anchor)
        out = []
        for item in items:
            words, _ = lexical_anchor(anchor, anchor_language, detect_language(item.window))
            if item.target_similarity is None:
                similarity = float(vector_of[_core(item.window)] @ anchor_vector)
            else:
                similarity = item.target_similarity
            if item.target_title:
                similarity = max(similarity, float(vector_of[item.target_title] @ anchor_vector))
            overlap = max(
                keyword_overlap(words, item.window, "de"),
                keyword_overlap(words, item.target_title, "de") if item.target_title else 0.0,
                keyword_overlap(words, item.target_text, "de") if item.target_text else 0.0,
            )
            out.append(round(0.5 * self._embedder.band.score(similarity) + 0.5 * overlap, 4))
        return out

    def _reason(self, score: float) -> ReferenceDecision:
        follow = score >= self.threshold
        return ReferenceDecision(follow=follow, reason_key=f"gate_similarity_{'follow' if follow else 'skip'}",
                                 reason_values={"score": score, "threshold": self.threshold})

    def decide_reference(self, item: GateInput, anchor: str, language: str) -> ReferenceDecision:
        return self._reason(self.scores([item], anchor)[0])

    def decide_batch(self, items: list[GateInput], anchor: str, language: str) -> list[GateVerdict]:
        return [GateVerdict(self._reason(score), score) for score in self.scores(items, anchor)]


def gate_references(
    items: list[GateInput],
    anchor: str,
    decider: ReferenceDecider,
    language: str = "de",
    concurrency: int = 4,
) -> list[GateVerdict]:
    """Decide every reference of one chunk, concurrently; a failing decider means 'follow'."""
    batch = getattr(decider, "decide_batch", None)
    if batch is not None:
        return batch(items, anchor, language)

    def decide(item: GateInput) -> GateVerdict:
        try:
            decision = decider.decide_reference(item, anchor, language)
            return GateVerdict(decision, 1.0 if decision.follow else 0.0)
        except Exception as exc:
            logger.warning("Reference gate failed for %r (%s); following it", item.reference.original_text, exc)
            return GateVerdict(ReferenceDecision(follow=True, reason_key="gate_error",
                                                 reason_values={"error": type(exc).__name__}), 0.5)

    if len(items) <= 1 or concurrency <= 1:
        return [decide(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(concurrency, len(items))) as pool:
        return list(pool.map(decide, items))
